"""Hive partition directories (``day=2024-01-01/``) as Spark reads them: their columns, types and values.

Spark appends a column for each ``name=value`` directory level to the data columns, and infers its type from
the values of every directory (``spark.sql.sources.partitionColumnTypeInference.enabled``, on by default): an
``INT`` if every value is one, a ``BIGINT``, a ``DOUBLE``, a ``DATE``, or else a ``STRING``; Java's number parsers
accept more than that (``1e3`` is a ``DECIMAL``, `` 5`` and ``NaN`` are ``DOUBLE``s, ``٣`` is the ``INT`` 3), and
a value that could be a timestamp depends on the session time zone. Those are refused with the value named,
rather than guessed; so are layouts Spark reads in surprising ways (files beside partition directories,
directories that are not partitions).
"""

from __future__ import annotations

import datetime
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

#: The directory value Spark writes for a NULL partition value.
NULL_VALUE = "__HIVE_DEFAULT_PARTITION__"

_INT = re.compile(r"[+-]?[0-9]+")
_DOUBLE = re.compile(r"[+-]?([0-9]+\.[0-9]+|\.[0-9]+)")
_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
# What Java's Double.parseDouble and BigDecimal accept (after trimming characters up to U+0020): strings the
# forms above do not cover but Spark would read as numbers.
_JAVA_NUMBER = re.compile(
    r"[+-]?(NaN|Infinity|([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?[fFdD]?"
    r"|0[xX]([0-9a-fA-F]+\.?|[0-9a-fA-F]*\.[0-9a-fA-F]+)[pP][+-]?[0-9]+[fFdD]?)"
)
# A date followed by a blank: Spark may read it as a timestamp, in the session time zone.
_TIMESTAMP_LIKE = re.compile(r"[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}[ ]")
_INT32 = (-(2**31), 2**31 - 1)
_INT64 = (-(2**63), 2**63 - 1)

#: The Arrow type of each inferred Spark type.
ARROW_TYPES = {
    "int": pa.int32(),
    "bigint": pa.int64(),
    "double": pa.float64(),
    "date": pa.date32(),
    "string": pa.string(),
}


class PartitionError(ValueError):
    """The directories are not partitions the engine reads exactly as Spark does; the message says why."""


@dataclass(frozen=True)
class Partitions:
    """The partition columns of a directory's files: names in directory order, Spark types, and each file's
    values (``None`` for NULL)."""

    names: tuple[str, ...]
    types: tuple[str, ...]
    values: dict[str, tuple[Any, ...]]

    def schema(self) -> pa.Schema:
        return pa.schema([pa.field(n, ARROW_TYPES[t]) for n, t in zip(self.names, self.types)])


def unescape(text: str) -> str:
    """Spark's ``unescapePathName``: each ``%XX`` (two hex digits) is the character of that code."""
    return re.sub(r"%([0-9a-fA-F]{2})", lambda m: chr(int(m.group(1), 16)), text)


def infer(segments: dict[str, Sequence[str]], where: str) -> Partitions:
    """The partition columns of files, given each file's directory names below the base (``['k=1', 'd=x']``).

    Raises
    ------
    PartitionError
        When the layout or a value is one Spark reads otherwise than this function can say, naming it.
    """
    layouts: dict[tuple[str, ...], str] = {}
    raw: dict[str, list[str]] = {}
    for file, dirs in segments.items():
        pairs = []
        for d in dirs:
            if "=" not in d:
                raise PartitionError(
                    f"{where}: the directory {d!r} (of {file}) is not a partition directory (name=value), and "
                    "Spark reads such directories otherwise or not at all; pass the files or a directory of "
                    "partition directories"
                )
            key, value = d.split("=", 1)
            if not key or not value:
                raise PartitionError(
                    f"{where}: the partition directory {d!r} (of {file}) has an empty name or value"
                )
            pairs.append((unescape(key), value))
        names = tuple(k for k, _ in pairs)
        layouts.setdefault(names, file)
        raw[file] = [v for _, v in pairs]
    if len(layouts) > 1:
        shown = "; ".join(f"{'/'.join(n) or '(none)'} in {f}" for n, f in list(layouts.items())[:3])
        raise PartitionError(
            f"{where}: the files are at different partition levels or under different partition names ({shown}),"
            " which Spark refuses or reads in part; give one layout"
        )
    (names,) = layouts
    if len({n.lower() for n in names}) != len(names):
        raise PartitionError(f"{where}: the partition names {list(names)} repeat (Spark ignores case)")
    files = list(segments)
    types = []
    values: dict[str, list[Any]] = {f: [] for f in files}
    for level, name in enumerate(names):
        column = [raw[f][level] for f in files]
        kinds = [_kind(v, name, where) for v in column]
        spark_type = _merge([k for k in kinds if k is not None], name, where)
        types.append(spark_type)
        for f, v, k in zip(files, column, kinds):
            values[f].append(None if k is None else _value(v, spark_type))
    return Partitions(tuple(names), tuple(types), {f: tuple(v) for f, v in values.items()})


def _kind(raw: str, name: str, where: str) -> str | None:
    """The Spark type Spark infers from one directory value (``None`` for NULL), or a PartitionError."""
    if raw == NULL_VALUE:
        return None
    if _INT.fullmatch(raw):
        number = int(raw)
        if _INT32[0] <= number <= _INT32[1]:
            return "int"
        if _INT64[0] <= number <= _INT64[1]:
            return "bigint"
        return _refuse(raw, name, where, "an integer beyond BIGINT, which Spark reads as a DECIMAL")
    if _DOUBLE.fullmatch(raw):
        return "double"
    text = unescape(raw)
    if _DATE.fullmatch(raw):
        if raw.startswith("0000"):
            return _refuse(raw, name, where, "a date in year 0, which Spark reads and Python has not")
        try:
            datetime.date.fromisoformat(raw)
        except ValueError:
            return "string"
        return "date"
    if any(unicodedata.category(c) == "Nd" and not c.isascii() for c in raw):
        return _refuse(raw, name, where, "digits Java reads as a number")
    if _JAVA_NUMBER.fullmatch(raw.strip("".join(chr(c) for c in range(33)))):
        return _refuse(raw, name, where, "a number in a form Spark reads as a DOUBLE or DECIMAL")
    if _TIMESTAMP_LIKE.match(text):
        return _refuse(raw, name, where, "a timestamp, which Spark reads in the session time zone")
    return "string"


def _refuse(raw: str, name: str, where: str, what: str) -> str:
    raise PartitionError(
        f"{where}: the partition value {raw!r} of {name!r} is {what}; the engine does not guess Spark's type "
        "for it: hash this data with Spark"
    )


def _merge(kinds: list[str], name: str, where: str) -> str:
    """The type of a partition column from its values' types, as Spark widens them."""
    found = set(kinds)
    if not found:
        raise PartitionError(
            f"{where}: every value of the partition column {name!r} is NULL ({NULL_VALUE}), which Spark reads "
            "as the type VOID, which the engine has no type for; hash this data with Spark"
        )
    if len(found) == 1:
        return kinds[0]
    if found <= {"int", "bigint"}:
        return "bigint"
    if found <= {"int", "bigint", "double"}:
        return "double"
    return "string"


def _value(raw: str, spark_type: str) -> Any:
    if spark_type in ("int", "bigint"):
        return int(raw)
    if spark_type == "double":
        return float(raw)
    if spark_type == "date":
        return datetime.date.fromisoformat(raw)
    return unescape(raw)
