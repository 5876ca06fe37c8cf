"""The Spark schema a Parquet file written by Spark carries, and what else its footer says about its values.

Spark writes its own schema into the footer of every Parquet file (key ``org.apache.spark.sql.parquet.row.metadata``,
a JSON ``StructType``), and ``spark.read.parquet`` takes the columns' types from it rather than from the Parquet
types. pyarrow keeps the footer's key-value metadata as the Arrow schema's metadata, also for a table read with
``pyarrow.parquet.read_table``. It says what the Arrow types lose: whether an ``INT96`` or naive timestamp is a
``TIMESTAMP`` or a ``TIMESTAMP_NTZ``, ``CHAR(n)`` (which Spark pads on read), collations, ``VARIANT`` (stored as a
struct), intervals (stored as integers), user-defined types. The version and legacy keys say whether Spark rebases
old dates and timestamps from the hybrid Julian calendar as it reads them.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass

#: The footer key of Spark's schema.
SCHEMA_KEY = b"org.apache.spark.sql.parquet.row.metadata"
#: The footer key of the Spark version that wrote the file.
VERSION_KEY = b"org.apache.spark.version"
#: Present when Spark wrote INT96 timestamps in the hybrid calendar (``int96RebaseModeInWrite=LEGACY``).
LEGACY_INT96_KEY = b"org.apache.spark.legacyINT96"
#: Present when Spark wrote dates and timestamps in the hybrid calendar (``datetimeRebaseModeInWrite=LEGACY``).
LEGACY_DATETIME_KEY = b"org.apache.spark.legacyDateTime"

_ATOMIC = {
    "boolean": "boolean",
    "byte": "tinyint",
    "short": "smallint",
    "integer": "int",
    "long": "bigint",
    "float": "float",
    "double": "double",
    "string": "string",
    "binary": "binary",
    "date": "date",
    "timestamp": "timestamp",
    "timestamp_ntz": "timestamp_ntz",
}
_DECIMAL = re.compile(r"decimal\((\d+),\s*(-?\d+)\)")
_CHAR = re.compile(r"(char|varchar)\((\d+)\)")


@dataclass(frozen=True)
class SparkType:
    """A Spark type as this engine's schema text writes it (``text()``), or one it cannot hash (``unknown``).

    ``kind`` is ``"atomic"`` (``name`` its text), ``"array"``, ``"map"``, ``"struct"`` (``children`` and, for
    structs, ``names``) or ``"unknown"`` (``name`` is Spark's JSON for it). ``char`` is ``n`` of a ``CHAR(n)``.
    """

    kind: str
    name: str = ""
    children: tuple[SparkType, ...] = ()
    names: tuple[str, ...] = ()
    char: int | None = None

    def text(self) -> str:
        if self.kind == "array":
            return f"array<{self.children[0].text()}>"
        if self.kind == "map":
            return f"map<{self.children[0].text()},{self.children[1].text()}>"
        if self.kind == "struct":
            fields = [f"`{n.replace('`', '``')}`:{c.text()}" for n, c in zip(self.names, self.children)]
            return f"struct<{','.join(fields)}>"
        return self.name

    def unknown(self, top: bool = True) -> str | None:
        """Spark's text of the first type in this one the engine cannot hash as Spark reads it, if any: a
        ``CHAR(n)`` is one below the top level, where the engine does not pad it."""
        if self.kind == "unknown":
            return self.name
        if self.char is not None and not top:
            return f"char({self.char}) in a nested type"
        for child in self.children:
            found = child.unknown(top=False)
            if found is not None:
                return found
        return None


@dataclass(frozen=True)
class Footer:
    """What a Parquet file's key-value metadata (or an Arrow schema's, which pyarrow copies from it) says."""

    columns: dict[str, SparkType] | None
    version: str | None
    legacy_int96: bool
    legacy_datetime: bool

    @property
    def rebases_int96(self) -> bool:
        """Whether Spark 4 rebases the file's INT96 timestamps from the hybrid calendar as it reads them."""
        return self.version is not None and (self.legacy_int96 or _older(self.version, (3, 1)))

    @property
    def rebases_datetime(self) -> bool:
        """Whether Spark 4 rebases the file's dates and INT64 timestamps from the hybrid calendar."""
        return self.version is not None and (self.legacy_datetime or _older(self.version, (3, 0)))


def footer(metadata: Mapping[bytes, bytes] | None) -> Footer:
    """Read Spark's keys from a file's (or an Arrow schema's) key-value metadata.

    Examples
    --------
    >>> meta = {SCHEMA_KEY: b'{"type":"struct","fields":[{"name":"t","type":"timestamp","nullable":true,'
    ...         b'"metadata":{}}]}', VERSION_KEY: b"2.4.8"}
    >>> found = footer(meta)
    >>> found.columns["t"].text(), found.rebases_int96, found.rebases_datetime
    ('timestamp', True, True)
    >>> footer(None).columns is None
    True
    """
    metadata = metadata or {}
    version = metadata.get(VERSION_KEY)
    text = metadata.get(SCHEMA_KEY)
    columns = None
    if text is not None:
        try:
            fields = json.loads(text)["fields"]
            columns = {f["name"]: _field_type(f) for f in fields}
        except (ValueError, KeyError, TypeError):
            columns = {}
    return Footer(
        columns,
        None if version is None else version.decode("utf-8", "replace"),
        LEGACY_INT96_KEY in metadata,
        LEGACY_DATETIME_KEY in metadata,
    )


def _older(version: str, than: tuple[int, int]) -> bool:
    numbers = re.match(r"(\d+)\.(\d+)", version)
    return numbers is None or (int(numbers.group(1)), int(numbers.group(2))) < than


def _field_type(field: dict) -> SparkType:
    metadata = field.get("metadata") or {}
    collations = metadata.get("__COLLATIONS") or {}
    odd = [c for c in collations.values() if str(c).rsplit(".", 1)[-1].upper() != "UTF8_BINARY"]
    if odd:
        return SparkType("unknown", f"string collate {str(odd[0]).rsplit('.', 1)[-1]}")
    spark_type = _type(field["type"])
    declared = metadata.get("__CHAR_VARCHAR_TYPE_STRING")
    if isinstance(declared, str):
        found = _CHAR.fullmatch(declared)
        if found is None:
            if "char(" in declared:
                return SparkType("unknown", declared)
        elif found.group(1) == "char" and spark_type.kind == "atomic":
            return SparkType("atomic", "string", char=int(found.group(2)))
    return spark_type


def _type(value: object) -> SparkType:
    if isinstance(value, str):
        if value in _ATOMIC:
            return SparkType("atomic", _ATOMIC[value])
        if value == "decimal":
            return SparkType("atomic", "decimal(10,0)")
        decimal = _DECIMAL.fullmatch(value)
        if decimal:
            return SparkType("atomic", f"decimal({decimal.group(1)},{decimal.group(2)})")
        char = _CHAR.fullmatch(value)
        if char:
            return SparkType("atomic", "string", char=int(char.group(2)) if char.group(1) == "char" else None)
        return SparkType("unknown", value)
    if isinstance(value, dict):
        kind = value.get("type")
        if kind == "array":
            return SparkType("array", children=(_type(value["elementType"]),))
        if kind == "map":
            return SparkType("map", children=(_type(value["keyType"]), _type(value["valueType"])))
        if kind == "struct":
            fields = value["fields"]
            return SparkType(
                "struct",
                children=tuple(_field_type(f) for f in fields),
                names=tuple(f["name"] for f in fields),
            )
        if kind == "udt":
            return SparkType("unknown", f"a user-defined type ({value.get('class') or value.get('pyClass')})")
    return SparkType("unknown", json.dumps(value))
