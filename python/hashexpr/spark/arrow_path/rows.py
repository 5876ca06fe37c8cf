"""hashexpr's column functions as row-at-a-time Python UDFs, for PySpark without Arrow UDFs (3.5 and 4.0).

Before 4.1, PySpark's vectorised UDFs hand Python pandas objects, which lose what the format hashes (an integer
column with a NULL becomes floats, timestamps become nanoseconds); its plain Python UDFs hand it exact values:
``int``, ``float``, ``Decimal``, ``bytearray``, ``date``, ``datetime``, lists, dicts and ``Row``\\ s. Each row is
hashed by :mod:`hashexpr.reference`, the format's pure-Python oracle, with the types read from Spark's ``typeof`` of
the arguments (:mod:`hashexpr.spark.arrow_path.type_text`). The same bytes as the jar, at some 10,000 rows of ten
columns a second a core: for volume, hash with :func:`~hashexpr.with_metadata` (``mapInArrow``) or load the jar.

What a plain UDF cannot be handed exactly is refused, never hashed differently: a string holding U+FFFD (Spark
decodes strings for Python with U+FFFD in place of bytes that are not UTF-8, so the bytes it hashes are unknown),
maps keyed by floating-point numbers or timestamps (a ``dict`` makes one key of 0.0 and -0.0, or of two instants
of one local wall time), struct field names holding ``<`` or ``>`` (which the type text cannot be read back
with), values of another Python class than the type text says (user-defined types), and the types the Arrow
path refuses too (:func:`~hashexpr.spark.arrow_path.checks.refused_text`).
"""

from __future__ import annotations

import datetime
import decimal
import functools
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from pyspark.sql import Column
from pyspark.sql import functions as F
from pyspark.sql import types as T

from hashexpr.spark.arrow_path.checks import refusal, refused_text, split_struct_text
from hashexpr.spark.arrow_path.type_text import parse, parse_fields

ROUTE = "hashexpr hashes row by row in Python UDFs (this PySpark has no Arrow UDFs)"
#: Why the route refuses intervals and the types newer than the format.
_LOST = "PySpark's Python UDFs do not receive its values as the format hashes them"
_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)
#: ``record_key``'s options as the column functions pass them: salt, trim, case, empty as NULL, NULL-key policy.
Key = tuple[str, bool, "str | None", bool, str]


def udf(function: Callable[..., Any], returns: T.DataType) -> Callable[..., Column]:
    """``function`` as a plain (pickled, not Arrow) Python UDF, whatever the session's Arrow setting."""
    return F.udf(function, returns, useArrow=False)


def struct_hashes(
    function: str, kind: str, algorithm: str, hmac_key: bytes | None, key: Key, labels: Mapping[str, str]
) -> Callable[[Any, str], bytes | None]:
    """The UDF body of a hash over one struct of the arguments (stars, by-name hashes) and its ``typeof``."""

    def hashes(values: Any, catalog: str) -> bytes | None:
        names = tuple(values.__fields__)
        return hash_row(function, kind, algorithm, hmac_key, key, names, tuple(values), catalog, labels)

    return hashes


def argument_hashes(
    function: str, kind: str, algorithm: str, hmac_key: bytes | None, key: Key, labels: Mapping[str, str]
) -> Callable[..., bytes | None]:
    """The UDF body of a hash over the arguments ``_0``, ``_1``, ... and, last, ``typeof`` of their struct."""

    def hashes(*arguments: Any) -> bytes | None:
        names = tuple(f"_{i}" for i in range(len(arguments) - 1))
        return hash_row(
            function, kind, algorithm, hmac_key, key, names, arguments[:-1], arguments[-1], labels
        )

    return hashes


def normalized(column: str, trim: bool, case: str | None, empty_as_null: bool) -> Callable[[Any, str], Any]:
    """The UDF body of ``normalize_key`` over a string key part and its ``typeof``."""
    from hashexpr.reference.keys import _normalise_key_string

    def normalize(value: Any, catalog: str) -> str | None:
        refused = refused_text(catalog, _LOST)
        dtype = parse(catalog) if refused is None else None
        if not isinstance(dtype, T.StringType):
            why = refused or (
                "without the jar it normalises string key parts only (a part of another type is already what "
                "record_key hashes: pass it as it is)"
            )
            raise refusal("normalize_key", column, catalog, why, ROUTE)
        text = plain("normalize_key", column, catalog, value, dtype)
        if text is None:
            return None
        data = _normalise_key_string(text.encode("utf-8"), trim, case, empty_as_null)
        return None if data is None else data.decode("utf-8")

    return normalize


@functools.lru_cache(maxsize=256)
def argument_types(
    function: str, catalog: str, names: tuple[str, ...], labels: tuple[tuple[str, str], ...]
) -> list[tuple[str, T.DataType]]:
    """The catalog text and Spark type of each field ``names`` of the struct whose ``typeof`` is ``catalog``,
    each checked hashable; an error names the function and the column (``labels`` maps a field to its name)."""
    shown = dict(labels)
    if not names:
        return []
    texts = split_struct_text(catalog, names) or [catalog] * len(names)  # what errors show
    types = parse_fields(catalog, names)
    if types is None:
        for name, text in zip(names, texts):
            why = refused_text(text, _LOST)
            if why is not None or parse(text) is None:
                why = why or "hashexpr cannot read its type text (a field name with '<' or '>' is not read)"
                raise refusal(function, shown.get(name, name), text, why, ROUTE)
        columns = ", ".join(shown.get(n, n) for n in names)
        raise refusal(function, columns, catalog, "its type text does not read back as the arguments", ROUTE)
    typed = []
    for name, text, dtype in zip(names, texts, types):
        why = refused_text(dtype.simpleString(), _LOST) or _merged_keys(dtype)
        if why is not None:
            raise refusal(function, shown.get(name, name), text, why, ROUTE)
        typed.append((text, dtype))
    return typed


def _merged_keys(dtype: T.DataType) -> str | None:
    """Why a map in ``dtype`` cannot reach a Python UDF whole, or None. PySpark hands a map over as a ``dict``,
    where keys Spark holds apart become one: 0.0 and -0.0, and the two instants of one local wall time."""
    if isinstance(dtype, T.ArrayType):
        return _merged_keys(dtype.elementType)
    if isinstance(dtype, T.StructType):
        return next(filter(None, (_merged_keys(f.dataType) for f in dtype.fields)), None)
    if isinstance(dtype, T.MapType):
        if _holds(dtype.keyType, (T.FloatType, T.DoubleType, T.TimestampType)):
            return (
                f"a map keyed by {dtype.keyType.simpleString()} reaches a Python UDF as a dict, which makes one "
                "key of keys Spark holds apart (0.0 and -0.0, or two instants of one local wall time)"
            )
        return _merged_keys(dtype.keyType) or _merged_keys(dtype.valueType)
    return None


def _holds(dtype: T.DataType, kinds: tuple[type, ...]) -> bool:
    if isinstance(dtype, kinds):
        return True
    if isinstance(dtype, T.ArrayType):
        return _holds(dtype.elementType, kinds)
    if isinstance(dtype, T.MapType):
        return _holds(dtype.keyType, kinds) or _holds(dtype.valueType, kinds)
    if isinstance(dtype, T.StructType):
        return any(_holds(f.dataType, kinds) for f in dtype.fields)
    return False


#: The Python classes a plain UDF receives each type's values as (PySpark's ``fromInternal``, Pyrolite).
_CLASSES: dict[type, tuple[type, ...]] = {
    T.BooleanType: (bool,),
    T.ByteType: (int,),
    T.ShortType: (int,),
    T.IntegerType: (int,),
    T.LongType: (int,),
    T.FloatType: (float,),
    T.DoubleType: (float,),
    T.DecimalType: (decimal.Decimal,),
    T.StringType: (str,),
    T.BinaryType: (bytearray, bytes),
    T.DateType: (datetime.date,),
    T.TimestampType: (datetime.datetime,),
    T.TimestampNTZType: (datetime.datetime,),
    T.ArrayType: (list,),
    T.MapType: (dict,),
    T.StructType: (T.Row,),
}


def plain(function: str, column: str, text: str, value: Any, dtype: T.DataType) -> Any:
    """``value`` as a plain PySpark UDF receives it, in the form :mod:`hashexpr.reference` hashes as ``dtype``;
    a value of another Python class than PySpark gives ``dtype`` is refused (a user-defined type's values arrive
    as its Python class, and the type text can be misread)."""
    if value is None:
        return None
    classes = _CLASSES.get(type(dtype), ())
    wrong = not isinstance(value, classes) or (
        isinstance(value, bool) != isinstance(dtype, T.BooleanType)
        or (isinstance(value, datetime.datetime) and isinstance(dtype, T.DateType))
    )
    if wrong:
        why = (
            f"a value reached Python as {type(value).__name__}, not as the {dtype.simpleString()} Spark's type "
            "text says (a user-defined type, or a type text that does not read back)"
        )
        raise refusal(function, column, text, why, ROUTE)
    if isinstance(dtype, T.StringType):
        if "\ufffd" in value:
            raise _replaced(function, column, text)
        return value
    if isinstance(dtype, T.TimestampType):
        return _micros(value)
    if isinstance(dtype, T.BinaryType):
        return bytes(value)
    if isinstance(dtype, T.ArrayType):
        return [plain(function, column, text, v, dtype.elementType) for v in value]
    if isinstance(dtype, T.MapType):
        return [
            (
                plain(function, column, text, k, dtype.keyType),
                plain(function, column, text, v, dtype.valueType),
            )
            for k, v in value.items()
        ]
    if isinstance(dtype, T.StructType):
        if list(getattr(value, "__fields__", None) or []) != dtype.names:
            # The type text was read with other field names than the row has: trust neither.
            raise refusal(
                function, column, text, "its field names cannot be read from Spark's type text", ROUTE
            )
        return tuple(plain(function, column, text, v, f.dataType) for v, f in zip(value, dtype.fields))
    return value


def _replaced(function: str, column: str, text: str) -> ValueError:
    """The error of a string holding U+FFFD, which may stand for bytes that are not UTF-8."""
    return ValueError(
        f"{function}: column {column!r} of type {text}: a value holds U+FFFD, which is what Spark hands Python "
        "UDFs in place of bytes that are not UTF-8, so the bytes the jar hashes cannot be known here. This Spark "
        f"session has no hashexpr jar, so {ROUTE}: load the jar (docs/PYTHON.md), or add the hash with "
        "hx.with_metadata, which hashes the bytes Spark holds (mapInArrow)"
    )


def _micros(value: datetime.datetime) -> int:
    """A TIMESTAMP as UTC microseconds. PySpark hands it over as a naive local time (``fromtimestamp``, which
    sets ``fold`` on the second of two equal wall times), which ``timestamp()`` reads back the same way."""
    if value.tzinfo is not None:
        delta = value - _EPOCH
        return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds
    return int(value.replace(microsecond=0).timestamp()) * 1_000_000 + value.microsecond


def hash_row(
    function: str,
    kind: str,
    algorithm: str,
    hmac_key: bytes | None,
    key: Key,
    names: tuple[str, ...],
    values: Sequence[Any],
    catalog: str,
    labels: Mapping[str, str],
) -> bytes | None:
    """One row's record hash (or key, or by-name hash): ``values`` of the struct fields ``names``, whose types
    ``catalog`` gives."""
    from hashexpr import reference

    typed = argument_types(function, catalog, names, tuple(labels.items()))
    row = [
        plain(function, labels.get(n, n), text, v, dtype) for n, v, (text, dtype) in zip(names, values, typed)
    ]
    types = [dtype for _, dtype in typed]
    if kind == "by_name":
        if len(set(names)) != len(names):
            twice = next(n for n in names if names.count(n) > 1)
            raise ValueError(
                f"{function}: two columns are named {twice!r}; hashing by name needs unique names"
            )
        return reference.record_hash_by_name(
            list(zip(names, row)), dict(zip(names, types)), algorithm=algorithm, key=hmac_key
        )
    if kind == "key":
        salt, trim, case, empty_as_null, null_key = key
        return reference.record_key(
            row, types, salt=salt, trim=trim, case=case, empty_as_null=empty_as_null, null_key=null_key,
            algorithm=algorithm, key=hmac_key,
        )  # fmt: skip
    return reference.record_hash(row, types, algorithm=algorithm, key=hmac_key)
