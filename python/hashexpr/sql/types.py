"""Spark SQL type names, read without a JVM.

:func:`parse_type` reads the type names that Spark's ``simpleString`` and DDL write (``bigint``, ``int``,
``decimal(10,2)``, ``array<string>``, ``map<string,int>``, ``struct<a:int,`b c`:string>``, ``timestamp_ntz``)
into :mod:`hashexpr.types` objects. pyspark's own ``_parse_datatype_string`` needs a running Spark for
such names; the writers of :mod:`hashexpr.sql` must answer before any engine is reached.
"""

from __future__ import annotations

import re

from hashexpr.types import (
    ArrayType,
    BinaryType,
    BooleanType,
    ByteType,
    CharType,
    DataType,
    DateType,
    DecimalType,
    DoubleType,
    FloatType,
    IntegerType,
    LongType,
    MapType,
    NullType,
    ShortType,
    StringType,
    StructField,
    StructType,
    TimestampNTZType,
    TimestampType,
    VarcharType,
)

__all__ = ["parse_type", "type_name"]

ATOMIC: dict[str, DataType] = {
    "boolean": BooleanType(),
    "tinyint": ByteType(),
    "byte": ByteType(),
    "smallint": ShortType(),
    "short": ShortType(),
    "int": IntegerType(),
    "integer": IntegerType(),
    "bigint": LongType(),
    "long": LongType(),
    "float": FloatType(),
    "real": FloatType(),
    "double": DoubleType(),
    "string": StringType(),
    "binary": BinaryType(),
    "date": DateType(),
    "timestamp": TimestampType(),
    "timestamp_ltz": TimestampType(),
    "timestamp_ntz": TimestampNTZType(),
    "void": NullType(),
}

_TOKEN = re.compile(r"\s*(`(?:[^`]|``)*`|[A-Za-z_][A-Za-z0-9_]*|-?\d+|[<>(),:])")


class _Reader:
    """A recursive-descent reader over the tokens of one type name."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens: list[str] = []
        position = 0
        while position < len(text):
            if text[position:].strip() == "":
                break
            match = _TOKEN.match(text, position)
            if match is None:
                raise self.error(f"unexpected {text[position:].strip()[:10]!r}")
            self.tokens.append(match.group(1))
            position = match.end()
        self.index = 0

    def error(self, problem: str) -> ValueError:
        return ValueError(f"cannot read the Spark SQL type {self.text!r}: {problem}")

    def peek(self) -> str | None:
        return self.tokens[self.index] if self.index < len(self.tokens) else None

    def take(self, expected: str | None = None) -> str:
        token = self.peek()
        if token is None:
            raise self.error("it ends too soon")
        if expected is not None and token.lower() != expected:
            raise self.error(f"expected {expected!r}, found {token!r}")
        self.index += 1
        return token

    def number(self) -> int:
        token = self.take()
        if not re.fullmatch(r"-?\d+", token):
            raise self.error(f"expected a number, found {token!r}")
        return int(token)

    def read(self) -> DataType:
        word = self.take().lower()
        if word == "array":
            self.take("<")
            element = self.read()
            self.take(">")
            return ArrayType(element, True)
        if word == "map":
            self.take("<")
            key = self.read()
            self.take(",")
            value = self.read()
            self.take(">")
            return MapType(key, value, True)
        if word == "struct":
            return self.struct()
        if word in ("decimal", "dec", "numeric"):
            precision, scale = 10, 0
            if self.peek() == "(":
                self.take("(")
                precision = self.number()
                if self.peek() == ",":
                    self.take(",")
                    scale = self.number()
                self.take(")")
            if not 1 <= precision <= 38 or not 0 <= scale <= precision:
                raise self.error(f"decimal({precision},{scale}) is no Spark decimal: 1 <= p <= 38, 0 <= s <= p")
            return DecimalType(precision, scale)
        if word in ("char", "varchar", "character"):
            self.take("(")
            length = self.number()
            self.take(")")
            return CharType(length) if word in ("char", "character") else VarcharType(length)
        if word in ATOMIC:
            return ATOMIC[word]
        raise self.error(f"unknown type {word!r}")

    def struct(self) -> StructType:
        self.take("<")
        fields: list[StructField] = []
        while self.peek() != ">":
            if fields:
                self.take(",")
            token = self.take()
            name = token[1:-1].replace("``", "`") if token.startswith("`") else token
            if self.peek() == ":":
                self.take(":")
            fields.append(StructField(name, self.read(), True))
        self.take(">")
        if not fields:
            raise self.error("a struct needs at least one field")
        return StructType(fields)


def parse_type(text: str) -> DataType:
    """Return the Spark SQL type named ``text``.

    Parameters
    ----------
    text : str
        A Spark SQL type name, in any case: ``bigint``, ``decimal(10,2)``, ``array<struct<a:int,b:string>>``,
        ``map<string,int>``, ``timestamp_ntz``, ``void``; field names may be quoted in backticks.

    Returns
    -------
    :class:`hashexpr.types.DataType`
        The type; arrays, maps and fields allow NULLs.

    Raises
    ------
    ValueError
        If ``text`` is no Spark SQL type name this module reads, naming the problem.

    Examples
    --------
    >>> from hashexpr.sql.types import parse_type
    >>> parse_type("Decimal(10, 2)")
    DecimalType(10,2)
    >>> parse_type("map<string,array<struct<a:int,`b c`:string>>>").simpleString()
    'map<string,array<struct<a:int,b c:string>>>'
    >>> parse_type("array<int")
    Traceback (most recent call last):
        ...
    ValueError: cannot read the Spark SQL type 'array<int': it ends too soon
    """
    if not isinstance(text, str):
        raise TypeError(f"a type name must be a str, got {type(text).__name__}")
    reader = _Reader(text)
    dtype = reader.read()
    if reader.peek() is not None:
        raise reader.error(f"unexpected {reader.peek()!r} after the type")
    return dtype


def type_name(dtype: DataType) -> str:
    """Return the name :func:`parse_type` reads back as ``dtype``: Spark's ``simpleString``, field names quoted.

    Examples
    --------
    >>> from hashexpr.sql.types import parse_type, type_name
    >>> type_name(parse_type("struct<`a b`:int,c:array<bigint>>"))
    'struct<`a b`:int,`c`:array<bigint>>'
    """
    if isinstance(dtype, ArrayType):
        return f"array<{type_name(dtype.elementType)}>"
    if isinstance(dtype, MapType):
        return f"map<{type_name(dtype.keyType)},{type_name(dtype.valueType)}>"
    if isinstance(dtype, StructType):
        fields = ",".join(f"`{f.name.replace('`', '``')}`:{type_name(f.dataType)}" for f in dtype.fields)
        return f"struct<{fields}>"
    return dtype.simpleString()
