"""Generates the frozen golden vectors of ``algorithm=sha256`` and ``hmac-sha256``, ``spec/sha256-vectors-v1.json``.

Every vector is one call (``docs/FORMAT.md``, section 10): the function (``record_hash_with``,
``record_hash_by_name_with`` or ``record_key_with``), its options string, for ``hmac-sha256`` the name of its secret
(``key``; the file's ``keys`` give the value of ``spark.hashexpr.secret.<name>``), the arguments (a
Spark SQL expression, its Spark type and its value, rendered in JSON as in ``spec/vectors-v1.json``, with
a ``name`` for by-name records), ``bytes``, the hashed byte stream, and ``hex``, its SHA-256 or
HMAC-SHA-256. The byte streams are written out here by hand from the format text, with :mod:`struct`, and
hashed with :mod:`hashlib` and :mod:`hmac`; neither hashexpr's reference nor its jar computes them. The JVM
side evaluates::

    SELECT hex(<function>('<options>', <sql1>, ..., <sqln>))

(by-name arguments aliased to their names), with the secrets in the session's configuration; the Python reference recomputes ``hex``.
The file is frozen once written, so this script refuses to overwrite it; ``--check`` re-verifies it.

Usage::

    PYTHONPATH=python python spec/generate_sha256_vectors.py          # create the file
    PYTHONPATH=python python spec/generate_sha256_vectors.py --check  # verify it, write nothing
"""

from __future__ import annotations

import hashlib
import hmac
import json
import struct
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from generate_vectors import INT, LONG, STRING, arr, mp, render, st
from pyspark.sql.types import DataType, NullType

ROOT = Path(__file__).resolve().parents[1]
OUTPUT = ROOT / "spec" / "sha256-vectors-v1.json"
#: The HMAC keys by the name of their secret (``secret=<name>`` in the options).
KEYS = {
    "vectors_short": "k3y",
    "vectors_long": "a key longer than the 64-byte block of SHA-256, so HMAC hashes it first. 0123",
}


def u32(n: int) -> bytes:
    return struct.pack("<I", n)


def integral(n: int) -> bytes:
    return b"\x02" + struct.pack("<q", n)


def string(text: str) -> bytes:
    data = text.encode("utf-8")
    return b"\x05" + u32(len(data)) + data


NULL = b"\x00"


def sorted_map(entries: list[bytes]) -> bytes:
    """Section 10: tag, entry count, then the entries' SHA-256 digests in ascending byte order."""
    digests = sorted(hashlib.sha256(entry).digest() for entry in entries)
    return b"\x11" + u32(len(entries)) + b"".join(digests)


def record(*values: bytes) -> bytes:
    return b"\x01" + u32(len(values)) + b"".join(values)


def key(salt: str, *parts: bytes) -> bytes:
    return b"\x82" + string(salt) + u32(len(parts)) + b"".join(parts)


def by_name(*fields: tuple[str, bytes]) -> bytes:
    """Section 6: the non-NULL fields as (name, value), sorted by the names' UTF-8 bytes, then a NULL tag."""
    ordered = sorted(fields, key=lambda field: field[0].encode("utf-8"))
    return b"\x81" + b"".join(string(name) + value for name, value in ordered) + NULL


@dataclass(frozen=True)
class Arg:
    sql: str
    dtype: DataType
    value: Any
    name: str | None = None


@dataclass(frozen=True)
class Vector:
    name: str
    function: str
    options: str
    key: str | None
    args: tuple[Arg, ...]
    stream: bytes


MAP_SI = mp(STRING, INT)
LONG_MAP = mp(LONG, STRING)


def vectors() -> list[Vector]:
    a1, b2 = string("a") + integral(1), string("b") + integral(2)
    nested_k = string("k") + sorted_map([integral(1) + string("x")])
    nested_b = string("b") + sorted_map([integral(2) + string("y")])
    nested_type = mp(STRING, LONG_MAP)
    long_text = "a string of more than thirty-two bytes, so it spans blocks"
    sha = "algorithm=sha256"
    return [
        Vector(
            "worked_example",
            "record_hash_with",
            sha,
            None,
            (Arg("1", INT, 1), Arg("'a'", STRING, "a"), Arg("CAST(NULL AS STRING)", STRING, None)),
            record(integral(1), string("a"), NULL),
        ),
        Vector("null", "record_hash_with", sha, None, (Arg("NULL", NullType(), None),), record(NULL)),
        Vector("empty_string", "record_hash_with", sha, None, (Arg("''", STRING, ""),), record(string(""))),
        Vector(
            "long_string",
            "record_hash_with",
            sha,
            None,
            (Arg(f"'{long_text}'", STRING, long_text),),
            record(string(long_text)),
        ),
        Vector(
            "map",
            "record_hash_with",
            sha,
            None,
            (Arg("map('a', 1, 'b', 2)", MAP_SI, {"a": 1, "b": 2}),),
            record(sorted_map([a1, b2])),
        ),
        Vector(
            "map_reordered",
            "record_hash_with",
            sha,
            None,
            (Arg("map('b', 2, 'a', 1)", MAP_SI, {"b": 2, "a": 1}),),
            record(sorted_map([b2, a1])),
        ),
        Vector(
            "map_empty",
            "record_hash_with",
            sha,
            None,
            (Arg("CAST(map() AS MAP<STRING, INT>)", MAP_SI, {}),),
            record(sorted_map([])),
        ),
        Vector(
            "map_nested",
            "record_hash_with",
            sha,
            None,
            (Arg("map('k', map(1L, 'x'), 'b', map(2L, 'y'))", nested_type, {"k": {1: "x"}, "b": {2: "y"}}),),
            record(sorted_map([nested_k, nested_b])),
        ),
        Vector(
            "map_in_array_and_struct",
            "record_hash_with",
            sha,
            None,
            (
                Arg("array(map('a', 1))", arr(MAP_SI), [{"a": 1}]),
                Arg("named_struct('m', map('b', 2))", st(("m", MAP_SI, False)), ({"b": 2},)),
            ),
            record(b"\x10" + u32(1) + sorted_map([a1]), b"\x12" + u32(1) + sorted_map([b2])),
        ),
        Vector(
            "by_name",
            "record_hash_by_name_with",
            sha,
            None,
            (Arg("'x'", STRING, "x", "b"), Arg("1", INT, 1, "a"), Arg("CAST(NULL AS INT)", INT, None, "c")),
            by_name(("a", integral(1)), ("b", string("x"))),
        ),
        Vector(
            "key",
            "record_key_with",
            f"salt=hub; {sha}",
            None,
            (Arg("'C-042'", STRING, "C-042"), Arg("7", INT, 7)),
            key("hub", string("C-042"), integral(7)),
        ),
        Vector(
            "key_normalised",
            "record_key_with",
            f"trim; case=upper; {sha}",
            None,
            (Arg("' c-042 '", STRING, " c-042 "),),
            key("", string("C-042")),
        ),
        Vector(
            "hmac_key",
            "record_key_with",
            "algorithm=hmac-sha256; secret=vectors_short; salt=hub",
            "vectors_short",
            (Arg("'C-042'", STRING, "C-042"),),
            key("hub", string("C-042")),
        ),
        Vector(
            "hmac_key_long_secret",
            "record_key_with",
            "algorithm=hmac-sha256; secret=vectors_long",
            "vectors_long",
            (Arg("'alice@example.com'", STRING, "alice@example.com"),),
            key("", string("alice@example.com")),
        ),
        Vector(
            "hmac_record_map",
            "record_hash_with",
            "algorithm=hmac-sha256; secret=vectors_short",
            "vectors_short",
            (Arg("map('a', 1, 'b', 2)", MAP_SI, {"a": 1, "b": 2}),),
            record(sorted_map([a1, b2])),
        ),
    ]


def digest(vector: Vector) -> str:
    if vector.key is None:
        return hashlib.sha256(vector.stream).hexdigest()
    return hmac.new(KEYS[vector.key].encode("utf-8"), vector.stream, hashlib.sha256).hexdigest()


def to_json(all_vectors: list[Vector]) -> dict[str, Any]:
    def arg(a: Arg) -> dict[str, Any]:
        rendered = {"sql": a.sql, "type": a.dtype.jsonValue(), "value": render(a.value, a.dtype)}
        return rendered if a.name is None else {"name": a.name, **rendered}

    return {
        "format_version": 1,
        "keys": KEYS,
        "vectors": [
            {
                "name": v.name,
                "function": v.function,
                "options": v.options,
                "key": v.key,
                "args": [arg(a) for a in v.args],
                "bytes": v.stream.hex(),
                "hex": digest(v),
            }
            for v in all_vectors
        ],
    }


def write_or_check(output: Path, document: dict[str, Any], argv: list[str], usage: str) -> None:
    """Write ``document`` to the frozen file ``output`` once, or with ``--check`` verify that it holds it."""
    if argv[1:] == ["--check"]:
        if json.loads(output.read_text(encoding="utf-8")) != document:
            raise SystemExit(f"{output} differs from the vectors this script builds")
        print(f"{output}: {len(document['vectors'])} vectors verified")
        return
    if argv[1:]:
        raise SystemExit(usage)
    if output.exists():
        raise SystemExit(f"{output} exists and is frozen; use --check to verify it")
    output.write_text(json.dumps(document, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {len(document['vectors'])} vectors to {output}")


def main(argv: list[str]) -> None:
    write_or_check(OUTPUT, to_json(vectors()), argv, __doc__)


if __name__ == "__main__":
    main(sys.argv)
