"""algorithm=sha256 and hmac-sha256 (docs/FORMAT.md, section 10) in Spark, in the reference, and in the
Python API: the frozen vectors of spec/sha256-vectors-v1.json (byte streams written by hand, hashed with
hashlib), every vector of format v1 re-hashed with SHA-256, and the secret's handling."""

from __future__ import annotations

import hashlib
import hmac
import json
from pathlib import Path
from typing import Any

import pytest
from pyspark.errors import AnalysisException
from pyspark.sql import functions as F
from pyspark.sql.types import IntegerType, MapType, StringType, StructType
from spark_conf import TEST_SECRETS, spark_conf
from test_golden_vectors import decode, parse_type
from test_spark_key_parity import MODES, execution_mode

import hashexpr as hx
from hashexpr import reference
from hashexpr.spark.collisions import find_collisions
from hashexpr.spark.diff import diff
from hashexpr.spark.metadata import with_metadata

SPEC = Path(__file__).resolve().parents[1] / "spec"
DOCUMENT = json.loads((SPEC / "sha256-vectors-v1.json").read_text(encoding="utf-8"))
VECTORS = DOCUMENT["vectors"]
V1_VECTORS = json.loads((SPEC / "vectors-v1.json").read_text(encoding="utf-8"))["vectors"]


def _key_kwargs(options: str) -> dict[str, Any]:
    """The reference's ``record_key`` keywords for an options string of the vector file."""
    kwargs: dict[str, Any] = {}
    for item in filter(None, (part.strip() for part in options.split(";"))):
        name, _, value = item.partition("=")
        if name in ("salt", "case", "algorithm"):
            kwargs[name] = value
        elif name in ("trim", "empty_as_null"):
            kwargs[name] = True
    return kwargs


def _algorithm(options: str) -> str:
    return _key_kwargs(options).get("algorithm", "murmur3")


def _reference(vector: dict[str, Any]) -> bytes:
    types = [parse_type(a["type"]) for a in vector["args"]]
    values = [decode(a["value"], t) for a, t in zip(vector["args"], types)]
    key = DOCUMENT["keys"][vector["key"]] if vector["key"] else None
    algorithm = _algorithm(vector["options"])
    if vector["function"] == "record_key_with":
        return reference.record_key(values, types, **{**_key_kwargs(vector["options"]), "key": key})
    if vector["function"] == "record_hash_by_name_with":
        names = [a["name"] for a in vector["args"]]
        return reference.record_hash_by_name(
            list(zip(names, values)), dict(zip(names, types)), algorithm=algorithm, key=key
        )
    return reference.record_hash(values, types, algorithm=algorithm, key=key)


def _query(vector: dict[str, Any]) -> str:
    args = ", ".join(f"{a['sql']} AS `{a['name']}`" if "name" in a else a["sql"] for a in vector["args"])
    if vector["function"] == "record_hash_by_name_with":
        names = ", ".join(f"`{a['name']}`" for a in vector["args"])
        return f"SELECT hex(record_hash_by_name_with('{vector['options']}', {names})) FROM (SELECT {args})"
    return f"SELECT hex({vector['function']}('{vector['options']}', {args}))"


def test_vector_file_hashes_its_hand_built_streams():
    """Each expectation is hashlib's SHA-256 (or HMAC) of the vector's own byte stream."""
    assert len(VECTORS) >= 15
    for vector in VECTORS:
        stream = bytes.fromhex(vector["bytes"])
        if vector["key"] is None:
            expected = hashlib.sha256(stream).hexdigest()
        else:
            expected = hmac.new(DOCUMENT["keys"][vector["key"]].encode(), stream, hashlib.sha256).hexdigest()
        assert vector["hex"] == expected, vector["name"]


@pytest.mark.parametrize("vector", VECTORS, ids=lambda v: v["name"])
def test_reference_reproduces_vector(vector):
    assert _reference(vector).hex() == vector["hex"]


@pytest.mark.parametrize("mode", list(MODES))
def test_spark_reproduces_every_vector(spark, mode):
    """Spark's result, in each execution mode, is the frozen hex (the session has the vectors' secrets)."""
    assert {k: TEST_SECRETS[k] for k in DOCUMENT["keys"]} == DOCUMENT["keys"]
    with execution_mode(spark, mode):
        for vector in VECTORS:
            assert spark.sql(_query(vector)).first()[0].lower() == vector["hex"], vector["name"]


def _has_map(dtype) -> bool:
    if isinstance(dtype, MapType):
        return True
    if isinstance(dtype, StructType):
        return any(_has_map(f.dataType) for f in dtype.fields)
    return any(_has_map(child) for child in (getattr(dtype, "elementType", None),) if child is not None)


def test_every_format_v1_vector_under_sha256(spark):
    """Every value of spec/vectors-v1.json (all types) hashed with SHA-256 in Spark: hashlib over the
    reference's encoding (checked against the frozen MurmurHash3 vectors), maps by section 10."""
    columns, expected = [], []
    for vector in V1_VECTORS:
        types = [parse_type(a["type"]) for a in vector["args"]]
        values = [decode(a["value"], t) for a, t in zip(vector["args"], types)]
        assert reference.record_hash(values, types).hex() == vector["hex"], vector["name"]
        sha = reference.record_hash(values, types, algorithm="sha256")
        if not any(_has_map(t) for t in types):
            assert sha == hashlib.sha256(reference.encode_record(values, types)).digest(), vector["name"]
        sqls = ", ".join(a["sql"] for a in vector["args"])
        columns.append(f"hex(record_hash_with('algorithm=sha256', {sqls}))")
        expected.append(sha.hex())
    row = spark.sql("SELECT " + ", ".join(columns)).first()
    mismatched = [v["name"] for v, got, want in zip(V1_VECTORS, row, expected) if got.lower() != want]
    assert not mismatched


def test_python_api(spark):
    """hx.record_hash and hx.record_key choose the algorithm; results match the reference."""
    df = spark.createDataFrame([("C-042", 7, {"a": 1})], "k STRING, n INT, m MAP<STRING, INT>")
    types = [StringType(), IntegerType(), MapType(StringType(), IntegerType())]
    values = ["C-042", 7, {"a": 1}]
    row = df.select(
        hx.record_hash("*", algorithm="sha256").alias("h"),
        hx.record_hash("k", "n", by_name=True, algorithm="sha256").alias("b"),
        hx.record_key("k", salt="hub", algorithm="sha256").alias("k1"),
        hx.record_key("k", trim=True, algorithm="hmac-sha256", secret="api").alias("k2"),
        hx.record_hash("*", algorithm="murmur3").alias("m"),
    ).first()
    assert bytes(row.h) == reference.record_hash(values, types, algorithm="sha256")
    assert bytes(row.b) == reference.record_hash_by_name(
        {"k": "C-042", "n": 7}, {"k": types[0], "n": types[1]}, algorithm="sha256"
    )
    assert bytes(row.k1) == reference.record_key(["C-042"], types[:1], salt="hub", algorithm="sha256")
    assert bytes(row.k2) == reference.record_key(
        ["C-042"], types[:1], trim=True, algorithm="hmac-sha256", key=TEST_SECRETS["api"]
    )
    assert bytes(row.m) == reference.record_hash(values, types)
    assert len(row.h) == len(row.k2) == 32 and len(row.m) == 16


def test_python_api_refuses_bad_arguments():
    cases = {
        "algorithm must be": lambda: hx.record_hash("a", algorithm="md5"),
        "needs secret=<name>": lambda: hx.record_key("a", algorithm="hmac-sha256"),
        "secret is only for": lambda: hx.record_hash("a", secret="pii"),
        "conf name made of letters": lambda: hx.record_key("a", algorithm="hmac-sha256", secret="my key!"),
        "algorithm cannot apply": lambda: hx.record_key("a", hash_single_field=False, algorithm="sha256"),
    }
    for message, call in cases.items():
        with pytest.raises(ValueError, match=message):
            call()
    with pytest.raises(ValueError, match="key is needed"):
        reference.record_hash([1], [parse_type("integer")], algorithm="hmac-sha256")


def test_missing_secret_is_an_analysis_error_naming_the_conf(spark):
    with pytest.raises(AnalysisException, match=r"spark\.hashexpr\.secret\.nowhere"):
        spark.range(1).select(hx.record_key("id", algorithm="hmac-sha256", secret="nowhere")).collect()


def test_a_secret_set_on_the_session_is_refused(spark):
    """Spark copies session confs into every job's properties, unredacted in the event log: refused."""
    with (
        spark_conf(spark, {"spark.hashexpr.secret.late": "set at run time"}),
        pytest.raises(AnalysisException, match="the secret 'late' is set on the session"),
    ):
        spark.range(1).select(hx.record_key("id", algorithm="hmac-sha256", secret="late")).collect()


def test_key_rotation_changes_every_key(spark):
    """The same keys under two secrets share nothing; the same secret gives the same keys."""
    df = spark.range(1000).select(F.col("id").cast("string").alias("email"))

    def keys(secret: str) -> list[bytes]:
        column = hx.record_key("email", algorithm="hmac-sha256", secret=secret)
        return [bytes(r[0]) for r in df.select(column).orderBy("email").collect()]

    old, new, again = keys("rot1"), keys("rot2"), keys("rot1")
    assert old == again
    assert not set(old) & set(new)


def _diff_rows(df) -> list[tuple]:
    return sorted(((r.id, r.change, r.side, tuple(r.asDict().get("changed_columns") or ())) for r in df.collect()), key=repr)


def test_diff_with_sha256_finds_the_same_changes(spark, tmp_path):
    """diff(algorithm=...) reports what the default diff reports, also from stored sha256 hashes."""
    old = spark.createDataFrame(
        [(1, "a", {"x": 1}), (2, "b", None), (3, "c", {}), (3, "c2", {}), (None, "n", None), (5, "e", None)],
        "id INT, s STRING, m MAP<STRING, INT>",
    )
    new = spark.createDataFrame(
        [(1, "a", {"x": 1}), (2, "B", None), (3, "c", {}), (4, "d", None), (5, "e", {"y": 2})],
        "id INT, s STRING, m MAP<STRING, INT>",
    )
    expected = _diff_rows(diff(old, new, "id"))
    assert len(expected) == 7
    assert _diff_rows(diff(old, new, "id", algorithm="sha256")) == expected
    assert _diff_rows(diff(old, new, "id", algorithm="hmac-sha256", secret="diff")) == expected
    with_metadata(old, "id", algorithm="sha256").write.parquet(str(tmp_path / "old"))
    stored = spark.read.parquet(str(tmp_path / "old"))
    assert len(stored.first()._hx_record_hash) == 32
    assert _diff_rows(diff(stored, new, "id", old_hashes=True, algorithm="sha256")) == expected
    # Without changed columns, per key sums of the 32-byte row hashes: the same change types.
    types = sorted(((i, change, side, ()) for i, change, side, _ in expected), key=repr)
    assert _diff_rows(diff(stored, new, "id", old_hashes=True, algorithm="sha256", changed_columns=False)) == types
    refused = "is record_key with algorithm=sha256, not algorithm=murmur3.*pass algorithm='sha256'"
    with pytest.raises(ValueError, match=refused):
        diff(stored, new, "id", old_hashes=True)
    with pytest.raises(ValueError, match="not in key_options"):
        with_metadata(old, "id", key_options={"algorithm": "sha256"})


def test_find_collisions_with_sha256(spark):
    hub = spark.createDataFrame([(" a",), ("A",), ("b",)], "id STRING")
    found = find_collisions(hub, "id", trim=True, case="upper", algorithm="sha256").collect()
    assert found == []
    with_keys = hub.select("id", hx.record_key("id", algorithm="sha256").alias("hk"))
    assert find_collisions(with_keys, "id", hash_col="hk").collect() == []
