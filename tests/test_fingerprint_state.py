"""Fingerprint states: ``hx.fingerprint_state`` (Spark) and ``hxa.fingerprint_state`` (the Rust engine) give the
fingerprint ``dataset_fingerprint`` gives, add and subtract as multisets of rows, and write the same JSON, so that a
state from one engine is updated from rows hashed by the other. The sums are checked against the pure-Python
reference (``mmh3``, ``hashlib``), not against the code under test. One Spark session (conftest's ``spark``)."""

from __future__ import annotations

import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from spark_conf import TEST_SECRETS

import hashexpr as hx
from hashexpr import arrow as hxa
from hashexpr.fingerprints import FingerprintState
from hashexpr.reference.fingerprint import lthash16_lanes
from hashexpr.reference.record import record_hash

SECRET = "pii"
SCHEMA = "id BIGINT, name STRING, amount DECIMAL(10,2), tags ARRAY<STRING>"
# Duplicates and all-NULL rows count, as in a table.
ROWS = [
    (1, "a", "1.50", ["x"]),
    (2, "b", None, []),
    (3, None, "2.00", None),
    (3, None, "2.00", None),
    (None, None, None, None),
    (None, None, None, None),
    (5, "e", "-0.50", [None, "y"]),
]
ALGORITHMS = [("murmur3", None), ("lthash16", None), ("lthash16", SECRET)]
# Keyed or not, lthash16 states add and subtract alike: a key changes the rows' hashes alone, which the first
# test checks against the reference for each.
SUMS = [("murmur3", None), ("lthash16", SECRET)]


@pytest.fixture(scope="module")
def table(spark, tmp_path_factory):
    """The rows as Spark reads them from Parquet, and that Parquet's path (read by the Rust engine too)."""
    path = str(tmp_path_factory.mktemp("fingerprint-state") / "rows.parquet")
    sql_rows = ", ".join(
        "({}, {}, {}, {})".format(
            "CAST(NULL AS BIGINT)" if i is None else i,
            "NULL" if n is None else f"'{n}'",
            "NULL" if a is None else a,
            "NULL" if t is None else "array(" + ", ".join("NULL" if v is None else f"'{v}'" for v in t) + ")",
        )
        for i, n, a, t in ROWS
    )
    spark.sql(
        "SELECT CAST(id AS BIGINT) id, name, CAST(amount AS DECIMAL(10,2)) amount, CAST(tags AS ARRAY<STRING>) "
        f"tags FROM VALUES {sql_rows} AS t(id, name, amount, tags)"
    ).coalesce(1).write.parquet(path)
    return spark.read.parquet(path), path


def _spark_state(df, algorithm, secret):
    return hx.fingerprint_state(df, algorithm=algorithm, secret=secret)


def _arrow_state(data, algorithm, secret):
    key = TEST_SECRETS[secret] if secret else None
    return hxa.fingerprint_state(data, algorithm=algorithm, hmac_key=key, secret=secret)


@pytest.mark.parametrize(("algorithm", "secret"), ALGORITHMS)
def test_the_state_gives_dataset_fingerprint_and_the_reference_sums(table, algorithm, secret):
    df, path = table
    state = _spark_state(df, algorithm, secret)
    assert state.fingerprint == hx.dataset_fingerprint(df, algorithm=algorithm, secret=secret)
    assert state.count == len(ROWS) and state.secret == secret
    assert state.columns == (("id", "bigint"), ("name", "string"), ("amount", "decimal(10,2)"),
                             ("tags", "array<string>"))  # fmt: skip
    rows = [tuple(r) for r in df.collect()]
    types = [f.dataType for f in df.schema.fields]
    if algorithm == "murmur3":
        hashes = [record_hash(list(r), types) for r in rows]
        assert state.sum == sum(int.from_bytes(h, "little") for h in hashes) % 2**128
        assert state.lanes is None
    else:
        key = TEST_SECRETS[secret] if secret else None
        row_algorithm = "hmac-sha256" if secret else "sha256"
        lanes = [0] * 1024
        for r in rows:
            element = lthash16_lanes(record_hash(list(r), types, algorithm=row_algorithm, key=key))
            lanes = [(a + b) % 2**16 for a, b in zip(lanes, element)]
        assert state.lanes == tuple(lanes) and state.sum is None
    # The Rust engine over the Parquet file Spark wrote: the same state, the same JSON.
    arrow = _arrow_state(path, algorithm, secret)
    assert arrow == state and arrow.to_json() == state.to_json()


@pytest.mark.parametrize(("algorithm", "secret"), SUMS)
def test_states_add_and_subtract_as_multisets(table, algorithm, secret):
    df, _ = table
    whole = _spark_state(df, algorithm, secret)
    part = df.where("id = 3 OR id IS NULL").limit(3)  # one of each duplicate pair, and one more
    rest = df.exceptAll(part)
    part_state, rest_state = (_spark_state(d, algorithm, secret) for d in (part, rest))
    assert (part_state + rest_state) == whole
    assert (whole - part_state).fingerprint == hx.dataset_fingerprint(
        rest, algorithm=algorithm, secret=secret
    )
    assert (whole - part_state - rest_state) == whole.empty()
    assert whole.empty().fingerprint == hx.dataset_fingerprint(
        df.limit(0), algorithm=algorithm, secret=secret
    )
    doubled = whole + whole
    assert doubled.fingerprint == hx.dataset_fingerprint(df.unionAll(df), algorithm=algorithm, secret=secret)


@pytest.mark.parametrize(("algorithm", "secret"), SUMS)
def test_a_state_from_one_engine_is_updated_from_rows_hashed_by_the_other(spark, table, algorithm, secret):
    df, path = table
    before = pq.read_table(path)
    deleted = before.slice(2, 3)  # a duplicate pair's one row, and an all-NULL row
    inserted = pa.table(
        {"id": pa.array([7, None], pa.int64()), "name": ["g", None], "amount": pa.array([None, None], pa.decimal128(10, 2)),
         "tags": pa.array([["z"], None], pa.list_(pa.string()))}
    )  # fmt: skip
    after = spark.createDataFrame(inserted.to_pylist(), df.schema).unionAll(
        df.exceptAll(spark.createDataFrame(deleted.to_pylist(), df.schema))
    )
    expected = hx.dataset_fingerprint(after, algorithm=algorithm, secret=secret)
    # Spark's state, updated from Arrow batches of the changes.
    from_spark = _spark_state(df, algorithm, secret)
    updated = (
        from_spark + _arrow_state(inserted, algorithm, secret) - _arrow_state(deleted, algorithm, secret)
    )
    assert updated.fingerprint == expected
    # The Rust engine's state, read back from its JSON, updated from Spark's states of the changes.
    from_arrow = FingerprintState.from_json(_arrow_state(path, algorithm, secret).to_json())
    changes = [spark.createDataFrame(t.to_pylist(), df.schema) for t in (inserted, deleted)]
    updated = (
        from_arrow + _spark_state(changes[0], algorithm, secret) - _spark_state(changes[1], algorithm, secret)
    )
    assert updated.fingerprint == expected
    assert updated == _spark_state(after, algorithm, secret)


def test_json_round_trips_and_refuses_an_altered_state(table):
    df, _ = table
    for algorithm, secret in ALGORITHMS:
        state = _spark_state(df, algorithm, secret)
        text = state.to_json()
        assert FingerprintState.from_json(text) == state
        data = json.loads(text)
        assert data["fingerprint"] == state.fingerprint and data["count"] == len(ROWS)
        assert TEST_SECRETS[SECRET] not in text
    data = json.loads(_spark_state(df, "murmur3", None).to_json())
    altered = dict(data, count=data["count"] + 1)
    with pytest.raises(ValueError, match="the state was altered"):
        FingerprintState.from_json(json.dumps(altered))
    renamed = dict(data, columns=[{"name": "ID", "type": "bigint"}, *data["columns"][1:]])
    with pytest.raises(ValueError, match="schema digest is not that of the columns"):
        FingerprintState.from_json(json.dumps(renamed))
    with pytest.raises(ValueError, match="not a fingerprint state"):
        FingerprintState.from_json('{"count": 1}')
    with pytest.raises(ValueError, match="not JSON"):
        FingerprintState.from_json("{")
    lanes = json.loads(_spark_state(df, "lthash16", None).to_json())
    lanes["lanes"] = lanes["lanes"][:-4]
    with pytest.raises(ValueError, match="expected 2048 bytes"):
        FingerprintState.from_json(json.dumps(lanes))


def test_states_of_other_columns_algorithms_or_secrets_do_not_combine(table):
    df, _ = table
    murmur3 = _spark_state(df, "murmur3", None)
    with pytest.raises(ValueError, match="cannot add a murmur3 state and a lthash16 state"):
        murmur3 + _spark_state(df, "lthash16", None)
    with pytest.raises(ValueError, match="keyed with no secret and one keyed with secret 'pii'"):
        _spark_state(df, "lthash16", None) + _spark_state(df, "lthash16", SECRET)
    with pytest.raises(ValueError, match="cannot subtract states of different columns"):
        murmur3 - hx.fingerprint_state(df, "id")
    with pytest.raises(ValueError, match="cannot subtract a state of 14 rows from one of 7"):
        murmur3 - (murmur3 + murmur3)


def test_the_engine_refuses_a_key_without_its_secret_name():
    data = pa.table({"id": pa.array([1], pa.int64())})
    with pytest.raises(ValueError, match="pass hmac_key together with secret=NAME"):
        hxa.fingerprint_state(data, algorithm="lthash16", hmac_key="k")
    with pytest.raises(ValueError, match="pass hmac_key together with secret=NAME"):
        hxa.fingerprint_state(data, algorithm="lthash16", secret="pii")
    with pytest.raises(ValueError, match="secret must be a conf name"):
        hxa.fingerprint_state(data, algorithm="lthash16", hmac_key="k", secret="k e y")
    with pytest.raises(ValueError, match="hmac_key is only for algorithm='lthash16'"):
        hxa.fingerprint_state(data, hmac_key="k", secret="pii")


def test_a_state_of_sliced_and_chunked_arrow_data_is_that_of_the_rows():
    rows = pa.table({"id": pa.array(range(100), pa.int64()), "s": [str(i % 7) for i in range(100)]})
    chunked = pa.concat_tables([rows.slice(0, 40), rows.slice(40, 60)])
    whole = hxa.fingerprint_state(rows, "s", algorithm="lthash16")
    assert hxa.fingerprint_state(chunked, "s", algorithm="lthash16") == whole
    parts = hxa.fingerprint_state(rows.slice(10, 30), "s", algorithm="lthash16")
    assert whole - parts == hxa.fingerprint_state(pa.concat_tables([rows.slice(0, 10), rows.slice(40)]), "s",
                                                   algorithm="lthash16")  # fmt: skip
