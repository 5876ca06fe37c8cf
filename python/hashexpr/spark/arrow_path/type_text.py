"""Spark's catalog text of a type (what ``typeof`` returns) read back as a PySpark type, without a JVM.

A Python worker has no JVM to parse with, and a column function learns its arguments' types only from that text:
``struct<id:bigint,tags:array<string>,amount:decimal(18,2)>``. Field names are not quoted in it. A name holding
``<`` or ``>`` could move where a struct ends, so no reading with one is taken: such a type is not read. A name
may hold ``:`` and ``,``, which can only move names and types within one struct: the reader backtracks over where
a name can end, and the caller checks the names it read against the struct values that arrive
(:mod:`hashexpr.spark.arrow_path.rows`).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

from pyspark.sql import types as T

_ATOMIC: dict[str, T.DataType] = {
    "boolean": T.BooleanType(),
    "tinyint": T.ByteType(),
    "smallint": T.ShortType(),
    "int": T.IntegerType(),
    "bigint": T.LongType(),
    "float": T.FloatType(),
    "double": T.DoubleType(),
    "string": T.StringType(),
    "binary": T.BinaryType(),
    "date": T.DateType(),
    "timestamp": T.TimestampType(),
    "timestamp_ntz": T.TimestampNTZType(),
    "void": T.NullType(),
}
_DECIMAL = re.compile(r"decimal\((\d+),(\d+)\)")
# CHAR and VARCHAR values, and UTF8_BINARY strings, reach Python as the strings Spark hashes.
_STRING = re.compile(r"(?:var)?char\(\d+\)|string collate utf8_binary(?![\w])", re.IGNORECASE)
_WORD = re.compile(r"[a-z_]+")


def parse(text: str) -> T.DataType | None:
    """The type ``text`` names (its first reading), or None where it names a type this reader does not know.

    >>> parse("map<string,array<decimal(10,2)>>")
    MapType(StringType(), ArrayType(DecimalType(10,2), True), True)
    >>> parse("struct<b:c:int>")  # the field is named 'b:c'
    StructType([StructField('b:c', IntegerType(), True)])
    >>> parse("interval day") is None
    True
    """
    for dtype, end in _types(text, 0):
        if end == len(text):
            return dtype
    return None


def parse_fields(text: str, names: Sequence[str]) -> list[T.DataType] | None:
    """The field types of the struct type ``text``, read so that its fields are ``names``; None where no reading
    has them.

    >>> parse_fields("struct<a:int,b:int,c:string>", ["a", "b:int,c"])
    [IntegerType(), StringType()]
    """
    if not text.startswith("struct<"):
        return None
    for dtype, end in _types(text, 0):
        if end == len(text) and isinstance(dtype, T.StructType) and dtype.names == list(names):
            return [field.dataType for field in dtype.fields]
    return None


def _types(text: str, at: int) -> Iterator[tuple[T.DataType, int]]:
    """Every type that can start at ``at``, with where it ends, in the order a reader should prefer them."""
    for prefix, make in (("array<", _arrays), ("map<", _maps), ("struct<", _structs)):
        if text.startswith(prefix, at):
            yield from make(text, at + len(prefix))
            return
    decimal = _DECIMAL.match(text, at)
    if decimal:
        yield T.DecimalType(int(decimal.group(1)), int(decimal.group(2))), decimal.end()
        return
    string = _STRING.match(text, at)
    if string:
        yield T.StringType(), string.end()
        return
    word = _WORD.match(text, at)
    if word and word.group() in _ATOMIC:
        yield _ATOMIC[word.group()], word.end()


def _close(text: str, at: int) -> bool:
    return text.startswith(">", at)


def _arrays(text: str, at: int) -> Iterator[tuple[T.DataType, int]]:
    for element, end in _types(text, at):
        if _close(text, end):
            yield T.ArrayType(element), end + 1


def _maps(text: str, at: int) -> Iterator[tuple[T.DataType, int]]:
    for key, middle in _types(text, at):
        if not text.startswith(",", middle):
            continue
        for value, end in _types(text, middle + 1):
            if _close(text, end):
                yield T.MapType(key, value), end + 1


def _structs(text: str, at: int) -> Iterator[tuple[T.DataType, int]]:
    if _close(text, at):
        yield T.StructType([]), at + 1
        return
    for fields, end in _fields(text, at):
        yield T.StructType(fields), end + 1


def _fields(text: str, at: int) -> Iterator[tuple[list[T.StructField], int]]:
    """The fields from ``at`` to the struct's closing ``>`` (the position returned): a name ends at any ``:``
    after which a type follows, then ``,`` and more fields, or the end; it holds no ``<`` or ``>``."""
    colon = text.find(":", at)
    while colon != -1:
        name = text[at:colon]
        if "<" in name or ">" in name:
            return
        for dtype, end in _types(text, colon + 1):
            field = T.StructField(name, dtype)
            if _close(text, end):
                yield [field], end
            elif text.startswith(",", end):
                for rest, close in _fields(text, end + 1):
                    yield [field, *rest], close
        colon = text.find(":", colon + 1)
