"""What the Arrow path can hash exactly as the jar does, checked before a value is hashed.

Spark sends a column to Python as the Arrow type ``ArrowUtils.toArrowType`` gives it, and the engine hashes an
Arrow type as the Spark type Spark reads it as from Parquet (``docs/ARROW.md``). The two agree for every type
but a few whose Arrow form loses what the format hashes: a collated string arrives as a plain string, a
day-time interval as a ``duration``, ``VARIANT`` as a struct, ``VOID`` as Arrow's null type. A column is hashed
only when the engine's type text for its Arrow type is the Spark type's own text (``docs/FORMAT.md``,
section 5); anything else is refused with an error naming the function, the column and the type.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

import pyarrow as pa
from pyspark.errors import PySparkException
from pyspark.sql.types import DataType, StructType

from hashexpr.arrow.engine import native
from hashexpr.reference.types import spark_type_string

# In Spark's catalog text of a type (typeof), a type name the Arrow path cannot hash: preceded by the start, '<',
# ':' or ',' and followed by neither a word character nor ':' (which would make it a struct field's name).
_REFUSED_NAME = re.compile(r"(?:^|[<:,])(interval|variant|void|time|geometry|geography)(?![\w:])")
_COLLATED = re.compile(r"\bstring collate (\w+)")
_BINARY_COLLATION = "UTF8_BINARY"
# Types Spark sends as plain strings and the jar hashes as STRING: CHAR(n), VARCHAR(n), STRING COLLATE UTF8_BINARY.
_CHAR = re.compile(r"^(?:(?:var)?char\(\d+\)|string collate utf8_binary)$", re.IGNORECASE)


ARROW_ROUTE = "hashexpr hashes in Arrow UDFs with its Rust engine"


def refusal(function: str, column: str, type_text: str, why: str, route: str = ARROW_ROUTE) -> ValueError:
    """The error of a column the path without the jar (``route`` says which) cannot hash as the jar does."""
    return ValueError(
        f"{function}: column {column!r} of type {type_text}: {why}. This Spark session has no hashexpr jar, so "
        f"{route}, which cannot give this type the jar's bytes: load the jar (docs/PYTHON.md), or cast the "
        "column to a type both engines hash (docs/FORMAT.md, section 4)"
    )


def refused_text(text: str, lost: str) -> str | None:
    """Why a value of the Spark type ``text`` (catalog text) cannot be hashed without the jar, or None; ``lost``
    says how the route loses an interval's or a newer type's values.

    A top-level ``void`` is hashable (every value is NULL); it is refused nested, and so are intervals, strings
    of a collation other than UTF8_BINARY, and the types newer than the format."""
    collated = [name for name in _COLLATED.findall(text) if name.upper() != _BINARY_COLLATION]
    if collated:
        return f"a string of collation {collated[0]} hashes by its collation key"
    if text != "void" and _REFUSED_NAME.search(text):
        return lost
    return None


def check_schema(function: str, schema: StructType, names: Sequence[str] | None = None) -> list[str]:
    """Refuse the first column of ``schema`` (or of ``names``) the Arrow path cannot hash as the jar does.

    Returns each checked column's type text (``docs/FORMAT.md``, section 5), which the worker checks again
    against the Arrow data it receives.
    """
    wanted = set(names) if names is not None else None
    texts = []
    for field in schema.fields:
        if wanted is not None and field.name not in wanted:
            continue
        text = spark_type_string(field.dataType)
        try:
            arrow = arrow_type(field.dataType)
        except (PySparkException, TypeError, ValueError) as error:  # PySpark or pyarrow refuses the type
            why = f"PySpark cannot send it as Arrow ({type(error).__name__}: {error})"
            raise refusal(function, field.name, text, why) from None
        engine_text = engine_type(arrow)
        if engine_text != text:
            why = (
                f"it reaches Python as the Arrow type {arrow}, which the engine hashes as {engine_text}"
                if engine_text is not None
                else f"it reaches Python as the Arrow type {arrow}, which the engine cannot hash"
            )
            raise refusal(function, field.name, text, why)
        texts.append(text)
    return texts


def arrow_type(dtype: DataType) -> pa.DataType:
    """The Arrow type Spark sends a column of ``dtype`` to Python as (a time zone for timestamps: any
    zone gives the same UTC microseconds)."""
    from pyspark.sql.pandas.types import to_arrow_type

    try:
        return to_arrow_type(dtype, timezone="UTC")
    except TypeError:  # pyspark 3.5's has no time zone parameter
        return to_arrow_type(dtype)


def arrow_schema(schema: StructType) -> pa.Schema:
    """The Arrow schema Spark sends rows of ``schema`` to Python as."""
    return pa.schema([pa.field(f.name, arrow_type(f.dataType), f.nullable) for f in schema.fields])


def engine_type(arrow: pa.DataType) -> str | None:
    """The Spark type text the engine hashes ``arrow`` as, or None where it refuses it."""
    try:
        return native().spark_types(pa.schema([pa.field("c", arrow)]))[0][1]
    except ValueError:
        return None


def check_batch(function: str, schema: pa.Schema, expected: Sequence[str]) -> None:
    """In the worker: refuse a batch whose columns the engine would hash as other types than ``expected``."""
    for field, text in zip(schema, expected):
        found = engine_type(field.type)
        if found != text:
            raise refusal(
                function,
                field.name,
                text,
                f"it reached Python as the Arrow type {field.type}, which the engine hashes as {found or 'nothing'}",
            )


def check_catalog_text(
    function: str, schema: pa.Schema, catalog: str, labels: Mapping[str, str] | None = None
) -> None:
    """In the worker: refuse a column function's argument whose Spark type the Arrow path cannot hash.

    No schema reaches a column function, so its arguments' types come as Spark's ``typeof`` of their struct
    (``struct<name:type,...>``, names unquoted), judged together with the Arrow types that arrived. ``labels``
    gives the name an error shows for a field the struct names by position (the column as the caller gave it).
    """
    shown = labels or {}
    texts = split_struct_text(catalog, schema.names)
    for i, field in enumerate(schema):
        # Where the text does not split, every argument is judged by the whole of it.
        text = texts[i] if texts is not None else catalog
        column = (
            shown.get(field.name, field.name)
            if texts is not None
            else ", ".join(shown.get(n, n) for n in schema.names)
        )
        lost = f"its Arrow form ({field.type}) loses what the format hashes"
        why = refused_text(text, lost)
        if why is None and text == "void" and not pa.types.is_null(field.type):
            why = lost
        if why is not None:
            raise refusal(function, column, text, why)
        found = engine_type(field.type)
        if found is None:
            raise refusal(function, column, text, f"the engine cannot hash its Arrow type {field.type}")
        if texts is not None and "<" not in text and _CHAR.sub("string", text) not in ("void", found):
            raise refusal(function, column, text, f"the engine would hash its Arrow type as {found}")


def split_struct_text(text: str, names: Sequence[str]) -> list[str] | None:
    """The field types of a struct's catalog text ``struct<a:int,b:map<string,int>>``, given its field names
    (which the text does not quote), or None where the text does not split unambiguously."""
    if not (text.startswith("struct<") and text.endswith(">")) or not names:
        return None
    body, types, at = text[len("struct<") : -1], [], 0
    for i, name in enumerate(names):
        if not body.startswith(name + ":", at):
            return None
        at += len(name) + 1
        if i == len(names) - 1:
            types.append(body[at:])
            break
        following, depth, end = "," + names[i + 1] + ":", 0, None
        for q in range(at, len(body)):
            if body[q] == "<":
                depth += 1
            elif body[q] == ">":
                depth -= 1
            elif depth == 0 and body.startswith(following, q):
                end = q
                break
        if end is None:
            return None
        types.append(body[at:end])
        at = end + 1
    return types
