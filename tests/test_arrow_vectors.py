"""Every frozen vector file of spec/ replayed through ``hashexpr.arrow`` (the Rust engine), from Arrow data of
the types Spark reads back as the vectors' types. Vectors of types no Arrow data is read as (intervals,
collated strings) are counted, and the counts pinned, so none is skipped silently; the lthash vectors, which
give no values, are replayed against Spark in test_arrow_spark.py."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pytest
from arrow_data import arrow_column, arrow_type
from test_golden_vectors import decode, parse_type

from hashexpr import arrow as hxa

SPEC = Path(__file__).resolve().parents[1] / "spec"


def _load(name: str) -> dict:
    return json.loads((SPEC / name).read_text(encoding="utf-8"))


def _table(args: list[dict]) -> pa.Table | None:
    """One row: each argument a column (named as the vector names it, else c0, c1, ...)."""
    columns = {}
    for i, arg in enumerate(args):
        dtype = parse_type(arg["type"])
        if arrow_type(dtype) is None:
            return None
        columns[arg.get("name", f"c{i}")] = arrow_column([decode(arg["value"], dtype)], dtype)
    return pa.table(columns)


def _split(vectors: list[dict]) -> tuple[list[dict], list[str]]:
    with_arrow = [v for v in vectors if _table(v["args"]) is not None]
    return with_arrow, [v["name"] for v in vectors if v not in with_arrow]


RECORDS, RECORDS_WITHOUT = _split(_load("vectors-v1.json")["vectors"])
BY_NAME, BY_NAME_WITHOUT = _split(_load("by-name-vectors-v1.json")["vectors"])
KEYS, KEYS_WITHOUT = _split(_load("key-vectors-v1.json")["vectors"])
SHA256 = _load("sha256-vectors-v1.json")
FINGERPRINTS = _load("fingerprint-vectors-v1.json")["vectors"]


def test_vectors_without_arrow_data_are_the_intervals_and_collations():
    # map_empty is `map()`, MAP<VOID, VOID>: pyarrow makes no map of null-type keys (cargo test replays it).
    assert (len(RECORDS), len(RECORDS_WITHOUT)) == (169, 25)
    assert (len(BY_NAME), len(BY_NAME_WITHOUT)) == (37, 1)
    assert (len(KEYS), len(KEYS_WITHOUT)) == (186, 1)
    for vectors, names in ((RECORDS, RECORDS_WITHOUT), (BY_NAME, BY_NAME_WITHOUT), (KEYS, KEYS_WITHOUT)):
        kinds = ("interval", "lcase", "every_kind", "map_empty")
        assert all(any(kind in name for kind in kinds) for name in names), names


@pytest.mark.parametrize("vector", RECORDS, ids=lambda v: v["name"])
def test_record_vectors(vector):
    table = _table(vector["args"])
    assert hxa.record_hash(table)[0].as_py().hex() == vector["hex"]


@pytest.mark.parametrize("vector", BY_NAME, ids=lambda v: v["name"])
def test_by_name_vectors(vector):
    table = _table(vector["args"])
    assert hxa.record_hash(table, by_name=True)[0].as_py().hex() == vector["hex"]


@pytest.mark.parametrize("vector", KEYS, ids=lambda v: v["name"])
def test_key_vectors(vector):
    table = _table(vector["args"])
    if vector.get("error"):
        with pytest.raises(ValueError, match="record_key: every key part is NULL"):
            hxa.record_key(table, table.column_names, **vector["options"])
        return
    key = hxa.record_key(table, table.column_names, **vector["options"])[0].as_py()
    assert (key.hex() if key is not None else None) == vector["hex"]


def _sha256_call(vector: dict) -> tuple[str, dict]:
    options = dict(item.strip().split("=", 1) for item in vector["options"].split(";") if "=" in item)
    flags = {item.strip() for item in vector["options"].split(";") if "=" not in item and item.strip()}
    keywords: dict = {"algorithm": options.pop("algorithm")}
    if vector["key"] is not None:
        keywords["hmac_key"] = SHA256["keys"][vector["key"]]
    options.pop("secret", None)
    keywords.update(options)
    keywords.update({flag: True for flag in flags})
    return vector["function"], keywords


@pytest.mark.parametrize("vector", SHA256["vectors"], ids=lambda v: v["name"])
def test_sha256_vectors(vector):
    table = _table(vector["args"])
    function, keywords = _sha256_call(vector)
    if function == "record_key_with":
        digest = hxa.record_key(table, table.column_names, **keywords)
    else:
        digest = hxa.record_hash(table, by_name=function == "record_hash_by_name_with", **keywords)
    assert digest[0].as_py().hex() == vector["hex"]


@pytest.mark.parametrize("vector", FINGERPRINTS, ids=lambda v: v["name"])
def test_fingerprint_vectors(vector):
    types = [parse_type(c["type"]) for c in vector["columns"]]
    if any(arrow_type(t) is None for t in types):
        # Its column c is STRING COLLATE UTF8_LCASE, which no Arrow data is read as.
        assert vector["name"] == "mixed_kinds"
        return
    table = pa.table(
        {
            c["name"]: arrow_column([decode(row[i], t) for row in vector["rows"]], t)
            for i, (c, t) in enumerate(zip(vector["columns"], types))
        }
    )
    assert hxa.dataset_fingerprint(table) == vector["fingerprint"]
    assert hxa.dataset_fingerprint(table, threads=1) == vector["fingerprint"]
