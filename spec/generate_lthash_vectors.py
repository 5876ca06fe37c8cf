"""Generates the frozen golden vectors of the secure fingerprint, ``spec/lthash-vectors-v1.json``.

Every vector is one table and one call of ``dataset_fingerprint_with(<options>, *)`` (``docs/FORMAT.md``, section
11): ``columns`` (name and Spark type), ``sql`` (a query that yields exactly those columns and rows), ``rows``
(each row's hashed byte stream, in hex: format v1 records written out here by hand with :mod:`struct`),
``key`` (for ``secret=``, the name of the secret: the file's ``keys`` give the value of
``spark.hashexpr.secret.<name>``) and ``fingerprint``. Every row stream is hashed with :mod:`hashlib` (or
:mod:`hmac`), expanded into 1024 lanes with :mod:`hashlib`, summed lane by lane, and digested with the count and
the schema digest; neither hashexpr's reference nor its jar computes any of it. The JVM side evaluates::

    SELECT dataset_fingerprint_with('<options>', *) FROM (<sql>)

and the Python reference recomputes ``fingerprint`` from the rows' values. The file is frozen once written, so
this script refuses to overwrite it; ``--check`` re-verifies it.

Usage::

    PYTHONPATH=python python spec/generate_lthash_vectors.py          # create the file
    PYTHONPATH=python python spec/generate_lthash_vectors.py --check  # verify it, write nothing
"""

from __future__ import annotations

import hashlib
import hmac
import struct
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from generate_sha256_vectors import KEYS, NULL, integral, record, sorted_map, string, u32, write_or_check

ROOT = Path(__file__).resolve().parents[1]
OUTPUT = ROOT / "spec" / "lthash-vectors-v1.json"

LANES = 1024
ELEMENT_LABEL = b"hashexpr-lthash16"
DIGEST_LABEL = b"hashexpr-fingerprint-lthash16"
FORMAT_VERSION = 1


@dataclass(frozen=True)
class Table:
    name: str
    options: str
    key: str | None
    columns: tuple[tuple[str, str], ...]
    sql: str
    rows: tuple[bytes, ...]


def element(stream: bytes, key: str | None) -> bytes:
    """A row's 32-byte record hash: SHA-256, or HMAC-SHA-256 under the named key."""
    if key is None:
        return hashlib.sha256(stream).digest()
    return hmac.new(KEYS[key].encode("utf-8"), stream, hashlib.sha256).digest()


def lanes(digest: bytes) -> list[int]:
    """Section 11: 64 SHA-256 blocks of (label, element, u32 counter), read as 1024 little-endian u16 lanes."""
    expanded = b"".join(hashlib.sha256(ELEMENT_LABEL + digest + u32(i)).digest() for i in range(64))
    return list(struct.unpack(f"<{LANES}H", expanded))


def fingerprint(table: Table) -> str:
    state = [0] * LANES
    for stream in table.rows:
        state = [(a + b) % 2**16 for a, b in zip(state, lanes(element(stream, table.key)))]
    names_and_types = [
        part for name, type_text in table.columns for part in (string(name), string(type_text))
    ]
    schema = hashlib.sha256(record(*names_and_types)).digest()
    body = struct.pack("<q", len(table.rows)) + struct.pack(f"<{LANES}H", *state)
    digest = hashlib.sha256(DIGEST_LABEL + bytes([FORMAT_VERSION]) + schema + body).hexdigest()
    prefix = "hx1-lthash16-hmac:" if table.key else "hx1-lthash16:"
    return prefix + digest


ID_S = (("id", "int"), ("s", "string"))


def tables() -> list[Table]:
    lthash = "algorithm=lthash16"
    return [
        Table("empty", lthash, None, (("id", "bigint"),), "SELECT id FROM range(0)", ()),
        Table(
            "one_row",
            lthash,
            None,
            ID_S,
            "SELECT * FROM VALUES (1, 'a') AS t(id, s)",
            (record(integral(1), string("a")),),
        ),
        Table(
            "two_rows",
            lthash,
            None,
            ID_S,
            "SELECT * FROM VALUES (1, 'a'), (2, 'b') AS t(id, s)",
            (record(integral(1), string("a")), record(integral(2), string("b"))),
        ),
        Table(
            "duplicate_row",
            lthash,
            None,
            ID_S,
            "SELECT * FROM VALUES (1, 'a'), (1, 'a') AS t(id, s)",
            (record(integral(1), string("a")),) * 2,
        ),
        Table(
            "nulls",
            lthash,
            None,
            ID_S,
            "SELECT * FROM VALUES (1, CAST(NULL AS STRING)), (CAST(NULL AS INT), 'x') AS t(id, s)",
            (record(integral(1), NULL), record(NULL, string("x"))),
        ),
        Table(
            # Options are case-insensitive and spaced freely; a map's entries are sorted digests (section 10).
            "map",
            " Algorithm = LTHASH16 ",
            None,
            (("id", "int"), ("m", "map<string,int>")),
            "SELECT 1 AS id, map('b', 2, 'a', 1) AS m",
            (record(integral(1), sorted_map([string("a") + integral(1), string("b") + integral(2)])),),
        ),
        Table(
            # 300 rows: every lane's sum wraps around 2^16.
            "wraps",
            lthash,
            None,
            (("id", "bigint"),),
            "SELECT id FROM range(300)",
            tuple(record(integral(i)) for i in range(300)),
        ),
        Table(
            "hmac",
            "algorithm=lthash16; secret=vectors_short",
            "vectors_short",
            ID_S,
            "SELECT * FROM VALUES (1, 'a'), (2, 'b') AS t(id, s)",
            (record(integral(1), string("a")), record(integral(2), string("b"))),
        ),
        Table(
            "hmac_long_key",
            "secret=vectors_long;algorithm=lthash16",
            "vectors_long",
            ID_S,
            "SELECT * FROM VALUES (1, 'a'), (2, 'b') AS t(id, s)",
            (record(integral(1), string("a")), record(integral(2), string("b"))),
        ),
    ]


def to_json(all_tables: list[Table]) -> dict[str, Any]:
    used = {t.key for t in all_tables if t.key}
    return {
        "format_version": FORMAT_VERSION,
        "keys": {name: value for name, value in KEYS.items() if name in used},
        "vectors": [
            {
                "name": t.name,
                "options": t.options,
                "key": t.key,
                "columns": [{"name": name, "type": type_text} for name, type_text in t.columns],
                "sql": t.sql,
                "rows": [stream.hex() for stream in t.rows],
                "fingerprint": fingerprint(t),
            }
            for t in all_tables
        ],
    }


def main(argv: list[str]) -> None:
    write_or_check(OUTPUT, to_json(tables()), argv, __doc__)

if __name__ == "__main__":
    main(sys.argv)
