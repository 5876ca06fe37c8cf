"""The lthash16 fingerprint (docs/FORMAT.md, section 11): frozen vectors, the reference, the Python API."""

from __future__ import annotations

import hashlib
import json
import struct
import subprocess
import sys
from pathlib import Path

import pytest
from cluster_job import MIXED_COLUMNS
from pyspark.sql import functions as F
from spark_conf import FOLDING_RULES, TEST_SECRETS, spark_conf

import hashexpr as hx
from hashexpr import reference

ROOT = Path(__file__).resolve().parents[1]
DOCUMENT = json.loads((ROOT / "spec" / "lthash-vectors-v1.json").read_text(encoding="utf-8"))
VECTORS = {v["name"]: v for v in DOCUMENT["vectors"]}


def test_file_is_frozen_and_keys_are_the_sessions():
    """The file holds the vectors the generator derives by hand, and the test session has their keys."""
    assert DOCUMENT["format_version"] == 1 and len(VECTORS) == 9
    assert all(TEST_SECRETS[name] == value for name, value in DOCUMENT["keys"].items())
    fingerprints = [v["fingerprint"] for v in VECTORS.values()]
    # two_rows, hmac and hmac_long_key hash the same rows: only the key tells them apart.
    assert len(set(fingerprints)) == len(fingerprints)


def test_generator_rederives_the_frozen_file():
    """The generator builds every row stream by hand and hashes with hashlib: the file is what it derives."""
    run = subprocess.run(
        [sys.executable, "generate_lthash_vectors.py", "--check"],
        cwd=ROOT / "spec",
        capture_output=True,
        text=True,
        check=False,
    )
    assert run.returncode == 0, run.stderr
    assert "9 vectors verified" in run.stdout


@pytest.mark.parametrize("name", sorted(VECTORS))
def test_spark_reproduces_vector(spark, name):
    """SQL over the vector's query, optimized as usual and with its rows kept out of constant folding."""
    v = VECTORS[name]
    query = f"SELECT dataset_fingerprint_with('{v['options']}', *) FROM ({v['sql']})"
    assert spark.sql(query).first()[0] == v["fingerprint"]
    with spark_conf(spark, {"spark.sql.optimizer.excludedRules": FOLDING_RULES}):
        assert spark.sql(query).first()[0] == v["fingerprint"]


@pytest.mark.parametrize("name", sorted(VECTORS))
def test_reference_reproduces_vector_from_the_values(spark, name):
    v = VECTORS[name]
    df = spark.sql(v["sql"])
    rows = [tuple(r.asDict().values()) for r in df.collect()]
    key = DOCUMENT["keys"][v["key"]] if v["key"] else None
    types = [f.dataType for f in df.schema.fields]
    got = reference.dataset_fingerprint(rows, df.columns, types, algorithm="lthash16", key=key)
    assert got == v["fingerprint"]


def _from_row_hashes(row_hashes: list[bytes], schema: bytes, prefix: str) -> str:
    """Section 11 over given row hashes: lanes from the reference's expansion, the rest with hashlib."""
    state = [0] * 1024
    for h in row_hashes:
        state = [(a + b) & 0xFFFF for a, b in zip(state, reference.lthash16_lanes(h))]
    body = struct.pack("<q", len(row_hashes)) + struct.pack("<1024H", *state)
    return prefix + hashlib.sha256(b"hashexpr-fingerprint-lthash16\x01" + schema + body).hexdigest()


@pytest.mark.parametrize("secret", [None, "pii"])
def test_every_type_is_the_lthash_of_the_rows_sha256_hashes(spark, secret):
    """Over columns of every kind, in 5 partitions: the fingerprint is section 11 applied to Spark's own
    record_hash_with of each row, whatever the partitioning."""
    df = spark.range(0, 1500, 1, 5).selectExpr(*MIXED_COLUMNS)
    options = {"algorithm": "sha256"} if secret is None else {"algorithm": "hmac-sha256", "secret": secret}
    row_hashes = [bytes(r[0]) for r in df.select(hx.record_hash("*", **options)).collect()]
    names = [
        f"'{c}', '{reference.spark_type_string(f.dataType)}'" for c, f in zip(df.columns, df.schema.fields)
    ]
    schema = bytes(spark.sql(f"SELECT record_hash_with('algorithm=sha256', {', '.join(names)})").first()[0])
    prefix = "hx1-lthash16:" if secret is None else "hx1-lthash16-hmac:"
    expected = _from_row_hashes(row_hashes, schema, prefix)
    assert hx.dataset_fingerprint(df, "lthash16", secret=secret) == expected
    assert hx.dataset_fingerprint(df.repartition(3).orderBy(F.rand(2)), "lthash16", secret=secret) == expected


def test_fingerprints_by_lthash16_equals_each_group_alone(spark):
    df = spark.range(0, 600).selectExpr("id", "id % 4 AS g", "CAST(id * 7 AS STRING) AS s")
    groups = {r.g: r.fingerprint for r in hx.fingerprints_by(df, "g", algorithm="lthash16").collect()}
    assert sorted(groups) == [0, 1, 2, 3]
    for g, fingerprint in groups.items():
        assert fingerprint == hx.dataset_fingerprint(df.where(F.col("g") == g), algorithm="lthash16")
    assert hx.fingerprints_by(df, "g").first().fingerprint.startswith("hx1:")


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"algorithm": "sha256"}, "algorithm must be one of 'murmur3', 'lthash16', got 'sha256'"),
        ({"secret": "pii"}, "secret is only for algorithm='lthash16'"),
        ({"algorithm": "lthash16", "secret": "the key itself!"}, "secret must be a conf name"),
    ],
)
def test_bad_arguments_name_the_fix(spark, kwargs, message):
    df = spark.range(3)
    with pytest.raises(ValueError, match=message):
        hx.dataset_fingerprint(df, **kwargs)
    with pytest.raises(ValueError, match=message):
        hx.fingerprints_by(df, "id", **kwargs)


def test_a_missing_secret_names_the_conf(spark):
    with pytest.raises(Exception, match=r"the secret 'absent' is not set.*spark\.hashexpr\.secret\.absent"):
        hx.dataset_fingerprint(spark.range(3), "lthash16", secret="absent")
