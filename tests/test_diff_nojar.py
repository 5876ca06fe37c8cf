"""hx.diff without hashexpr's jar (``HASHEXPR_ENGINE=arrow``): the hashes computed by the Rust engine in PySpark's
Arrow routes, compared in plain SQL. Each case runs on both paths in the shared session: the Arrow path's rows,
plans and errors must be the jar path's, and its changes those of test_diff's plain-Python reference."""

from __future__ import annotations

import importlib
import re
from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest
import test_diff
from pyspark.sql import DataFrame
from test_diff import FILLER, NEW, OLD, SCHEMA, _changing_most_buckets, check, norm

from hashexpr.spark.arrow_path.engine import ENGINE_VARIABLE
from hashexpr.spark.diff import diff, diff_plan, summarize
from hashexpr.spark.diff.inputs import checked
from hashexpr.spark.diff.rows import hashed_sides


def jar_calls(df: DataFrame) -> list[str]:
    """The jar's expressions (classes of ``io.hashexpr``) in the optimized plan of ``df``, whose inputs have none."""
    plan = df._jdf.queryExecution().optimizedPlan().toJSON()
    return sorted(set(re.findall(r'"class":"(io\.hashexpr\.[\w.$]+)"', plan)))


def both(monkeypatch, run: Callable[[], Any]) -> tuple[Any, Any]:
    """``run()`` with the jar, then on the Arrow path (a DataFrame result checked to call no jar function)."""
    monkeypatch.setenv(ENGINE_VARIABLE, "jar")
    jar = run()
    monkeypatch.setenv(ENGINE_VARIABLE, "arrow")
    arrow = run()
    if isinstance(arrow, DataFrame):
        assert not jar_calls(arrow), jar_calls(arrow)
    return jar, arrow


def rows(df: DataFrame) -> tuple[list[str], Counter]:
    """The columns and the multiset of the rows of ``df`` (values as their hashes compare them)."""
    return df.columns, Counter(norm(tuple(r)) for r in df.collect())


def same_diffs(
    monkeypatch, old: DataFrame, new: DataFrame, key: Any, variants: list[dict], **common: Any
) -> None:
    """diff's output on the Arrow path is the jar path's, with each of ``variants`` of its options."""
    for options in variants:
        jar, arrow = (
            rows(df) for df in both(monkeypatch, lambda o=options: diff(old, new, key, **common, **o))
        )
        assert arrow == jar, f"{options}: missing {jar[1] - arrow[1]}, extra {arrow[1] - jar[1]}"


def same_plans(monkeypatch, old: DataFrame, new: DataFrame, key: Any, **options: Any) -> None:
    """diff_plan on the Arrow path is the jar path's (its hash passes call no jar function)."""
    jar, arrow = both(monkeypatch, lambda: diff_plan(old, new, key, **options))
    assert arrow == jar and arrow.counts == jar.counts
    spec = checked(old, new, key, None, options.get("buckets"))
    assert spec.arrow and not jar_calls(hashed_sides(spec))


# Every output column of every row: with values and unchanged rows, and the change types alone.
EVERY_OUTPUT = [
    {"include_values": True, "include_unchanged": True},
    {"changed_columns": False, "include_unchanged": True},
]


@pytest.fixture
def arrow(monkeypatch):
    """The Arrow path, forced; test_diff's check() then asserts that every diff it runs calls no jar function."""
    monkeypatch.setenv(ENGINE_VARIABLE, "arrow")

    def diff_without_the_jar(*args: Any, **kwargs: Any) -> DataFrame:
        result = diff(*args, **kwargs)
        assert not jar_calls(result), jar_calls(result)
        return result

    monkeypatch.setattr(test_diff, "diff", diff_without_the_jar)


@pytest.fixture(scope="module")
def crafted(spark):
    return spark.createDataFrame(OLD + FILLER, SCHEMA), spark.createDataFrame(NEW + FILLER, SCHEMA)


def test_crafted_changes(crafted, monkeypatch, arrow):
    # NULLs, NaN, -0.0, map entry order, arrays: the reference's changes, and the jar's rows, values and plan.
    old, new = crafted
    check(old, new, ["id"])
    same_diffs(monkeypatch, old, new, "id", EVERY_OUTPUT)
    same_plans(monkeypatch, old, new, "id")


def test_duplicate_and_null_keys(spark, monkeypatch, arrow):
    schema = "k1 INT, k2 STRING, v INT"
    old = spark.createDataFrame(
        [(1, "a", 1), (1, "a", 1), (2, "b", 2), (3, "c", 3), (None, "x", 4), (5, None, 5), (6, "f", 6)],
        schema,
    )
    new = spark.createDataFrame(
        [(1, "a", 1), (2, "b", 2), (2, "b", 20), (2, "b", 2), (None, "x", 4), (None, None, 7), (6, "f", 60)],
        schema,
    )
    check(old, new, ["k1", "k2"])
    same_plans(monkeypatch, old, new, ["k1", "k2"])


def test_duplicated_keys_with_the_same_rows(spark, monkeypatch, arrow):
    # One bucket: the unchanged duplicated keys share it with the changed ones.
    buckets = 1
    schema = "id INT, s STRING"
    old = spark.createDataFrame(
        [(1, "a"), (1, "b"), (2, "x"), (2, "x"), (3, "p"), (3, "q"), (4, "u"), (None, "n")], schema
    )
    new = spark.createDataFrame(
        [(1, "b"), (1, "a"), (2, "x"), (2, "x"), (2, "x"), (3, "p"), (3, "Q"), (4, "U")], schema
    )
    check(old, new, ["id"], buckets=buckets)
    same_plans(monkeypatch, old, new, "id", buckets=buckets)


def test_empty_inputs_and_no_compared_columns(spark, monkeypatch, arrow):
    empty = spark.createDataFrame([], "id INT, s STRING")
    some = spark.createDataFrame([(1, "a"), (2, None)], "id INT, s STRING")
    check(empty, some, ["id"], with_unchanged=False)
    check(some, empty, ["id"], with_unchanged=False)
    same_plans(monkeypatch, empty, empty, "id")
    keys_only = spark.createDataFrame([(1,), (2,)], "id INT"), spark.createDataFrame([(2,), (3,)], "id INT")
    check(*keys_only, ["id"])


@pytest.mark.parametrize(
    ("old_type", "new_type"),
    [
        ("INT", "BIGINT"),  # widened: matched by the key hash
        ("TIMESTAMP", "TIMESTAMP"),  # matched by the key columns themselves
        ("ARRAY<INT>", "ARRAY<INT>"),
    ],
)
def test_keys_raw_and_hashed(spark, arrow, old_type, new_type):
    def snapshot(key_type: str, last: str) -> DataFrame:
        key = {"ARRAY<INT>": "IF(k IS NULL, NULL, array(k))", "TIMESTAMP": "timestamp_seconds(k)"}.get(
            key_type, f"CAST(k AS {key_type})"
        )
        values = f"(1, 'a'), (2, 'b'), (2, 'c'), (NULL, 'n'), (3, '{last}'), (4, 'e')"
        return spark.sql(f"SELECT {key} AS k, s FROM VALUES {values} AS t(k, s)")

    old, new = snapshot(old_type, "d"), snapshot(new_type, "D").where("s <> 'e'")
    check(old, new, ["k"])


def test_when_most_buckets_differ_every_row_is_joined(spark, monkeypatch, arrow):
    # Without the jar there is no filter of changed keys: the join reads every row, with the same answer.
    old, new = _changing_most_buckets(spark)
    spec = checked(old, new, "id", None, 4)
    from hashexpr.spark.diff.buckets import bucket_pass, key_filter

    found = bucket_pass(spec)
    assert found.joins_everything and key_filter(spec, found) is None
    check(old, new, ["id"], buckets=4, with_unchanged=False)
    same_plans(monkeypatch, old, new, "id", buckets=4)


def test_algorithms(crafted, monkeypatch, arrow):
    old, new = crafted
    variants = [{}, {"changed_columns": False, "include_unchanged": True}]
    same_diffs(monkeypatch, old, new, "id", variants, algorithm="sha256")
    same_diffs(monkeypatch, old, new, "id", [{}], algorithm="hmac-sha256", secret="diff")


def test_names_resolve_as_on_the_jar_path(spark, monkeypatch, arrow):
    old = spark.createDataFrame(
        [("1", "a", 1.0), ("2", "b", 2.0)], "TailNum STRING, `Seats.n` STRING, x DOUBLE"
    )
    new = spark.createDataFrame(
        [("1", "a", 1.5), ("3", "c", 3.0)], "tailnum STRING, `SEATS.n` STRING, X DOUBLE"
    )
    same_diffs(monkeypatch, old, new, ["TAILNUM"], [{"include_values": True}], columns=["x", "seats.n"])
    assert summarize(diff(old, new, "TAILNUM")) == {
        "insert": 1, "update": 1, "delete": 1, "duplicate_key": 0, "null_key": 0,
    }  # fmt: skip


# ----------------------------------------------------------------------------------------- stored hashes


@pytest.fixture(scope="module")
def stored(spark, tmp_path_factory, crafted):
    """The crafted snapshots, with a duplicated and a NULL key, written by with_metadata with the jar."""
    import os

    from hashexpr.spark.metadata import with_metadata

    old, new = crafted
    old = old.unionByName(
        spark.createDataFrame([(2, "dup", 0.0, None, None), (None, "null key", 1.0, None, None)], SCHEMA)
    )
    base = tmp_path_factory.mktemp("stored_nojar")
    before = os.environ.pop(ENGINE_VARIABLE, None)
    try:
        for name, df in (("old", old), ("new", new)):
            with_metadata(df, "id", commit_time="2026-01-02T03:04:05").write.parquet(str(base / name))
    finally:
        if before is not None:
            os.environ[ENGINE_VARIABLE] = before
    return old, new, spark.read.parquet(str(base / "old")), spark.read.parquet(str(base / "new"))


def test_stored_hashes(stored, monkeypatch, arrow):
    # Recorded definitions (read as they are) and none (every row verified): the jar's rows and plans.
    _, new, old_stored, new_stored = stored
    unrecorded = old_stored.withMetadata("_hx_record_key", {}).withMetadata("_hx_record_hash", {})
    assert checked(unrecorded, new, "id", None, None, None, None).stored[0].verify_hash
    same_diffs(monkeypatch, old_stored, new, "id", EVERY_OUTPUT)
    same_diffs(monkeypatch, unrecorded, new_stored, "id", [{}])
    same_plans(monkeypatch, unrecorded, new_stored, "id")


def test_stored_hashes_that_do_not_match_are_refused_alike(spark, monkeypatch, arrow):
    from pyspark.sql import functions as F

    from hashexpr.spark.metadata import with_metadata

    monkeypatch.setenv(ENGINE_VARIABLE, "jar")
    old = spark.createDataFrame([(i, f"s{i}") for i in range(40)], "id INT, s STRING")
    new = spark.createDataFrame([(i, f"s{i}") for i in range(1, 41)], "id INT, s STRING")
    salted = with_metadata(old, "id", key_options={"salt": "s1"})
    unrecorded = salted.withMetadata("_hx_record_key", {}).withMetadata("_hx_record_hash", {})
    missing = with_metadata(old, "id").withColumn(
        "_hx_record_hash", F.when(F.col("id") == 30, None).otherwise(F.col("_hx_record_hash"))
    )
    for refused, options in (
        (salted, {}),  # the recorded definition differs: refused before any job
        (unrecorded, {}),  # the sample of the first rows is hashed again
        (missing, {}),  # a NULL stored hash among the sampled rows
    ):
        errors = []
        for engine in ("jar", "arrow"):
            monkeypatch.setenv(ENGINE_VARIABLE, engine)
            with pytest.raises(ValueError) as info:
                diff(refused, new, "id", **options)
            errors.append(str(info.value))
        assert errors[0] == errors[1]
    # Beyond the sampled rows, the query itself refuses a row, with the message of the jar's path.
    monkeypatch.setattr(importlib.import_module("hashexpr.spark.diff.stored"), "CHECKED_ROWS", 10)
    errors = []
    for engine in ("jar", "arrow"):
        monkeypatch.setenv(ENGINE_VARIABLE, engine)
        with pytest.raises(ValueError, match="a row has a NULL _hx_record_key or _hx_record_hash") as info:
            diff(missing, new, "id")
        errors.append(str(info.value))
    assert errors[0] == errors[1]
    assert checked(missing, new, "id", None, None, False).arrow  # the Arrow path refused, not the jar's twice


def test_bad_input_gets_the_jar_paths_errors(spark, monkeypatch):
    old = spark.createDataFrame([(1, "a", 1, 1)], "id INT, s STRING, gone INT, n INT")
    new = spark.createDataFrame([(1, "a", 1, 1)], "id INT, s STRING, added INT, n BIGINT")
    for call in (
        lambda: diff(old, new, "id"),
        lambda: diff(old, new, "id", columns=["gone"]),
        lambda: diff(old, new, "nope"),
        lambda: diff(old, new.selectExpr("CAST(id AS STRING) AS id", "s"), "id", columns=["s"]),
        lambda: diff(old, new, "id", buckets=0),
        lambda: diff(old, new, "id", columns=["s"], algorithm="hmac-sha256"),
        lambda: diff(old, new, "id", old_hashes=True),
    ):
        errors = []
        for engine in ("jar", "arrow"):
            monkeypatch.setenv(ENGINE_VARIABLE, engine)
            with pytest.raises(ValueError) as info:
                call()
            errors.append(str(info.value))
        assert errors[0] == errors[1]
    assert checked(old, new, "id", ["s"], None).arrow  # the Arrow path refused, not the jar's twice


def test_types_the_arrow_path_cannot_hash_are_refused_before_any_job(spark, arrow):
    # A collated string reaches Python as a plain string: hashed there, it would hash as one; so it is refused,
    # naming the column (the jar's path compares it by its collation key).
    old = spark.sql("SELECT 1 AS id, 'a' COLLATE UTF8_LCASE AS s")
    with pytest.raises(
        ValueError, match=r"^diff: column 's' of type string collate UTF8_LCASE: .*load the jar"
    ):
        diff(old, old, "id")
    with pytest.raises(ValueError, match=r"^diff: column 'k' of type string collate UTF8_LCASE"):
        diff(old.selectExpr("s AS k", "id"), old.selectExpr("s AS k", "id"), "k", changed_columns=False)


def test_an_empty_offsets_buffer_from_arrow_java_is_read():
    # Spark 3.5's Arrow Java sends the keys of a map column whose values are all NULL as an empty string array
    # with an empty offsets buffer (mapInArrow, as a diff's side on 3.5 and 4.0); read as it is, the engine took
    # its first offset from the bytes after that buffer and refused the batch.
    import struct

    import pyarrow as pa

    from hashexpr.spark.arrow_path.worker import hash_batch

    behind = pa.py_buffer(b"\xa8\x3c\xb9\xf4")  # what an empty buffer's address points at
    keys = pa.Array.from_buffers(pa.string(), 0, [None, behind.slice(0, 0), behind.slice(0, 0)])
    values = pa.Array.from_buffers(pa.int32(), 0, [None, behind.slice(0, 0)])
    entries = pa.StructArray.from_arrays(
        [keys, values], fields=[pa.field("key", pa.string(), False), pa.field("value", pa.int32())]
    )
    kind = pa.map_(pa.string(), pa.int32())
    sent = pa.Array.from_buffers(
        kind, 2, [pa.py_buffer(b"\x00"), pa.py_buffer(struct.pack("<3i", 0, 0, 0))], children=[entries]
    )
    sent.validate(full=True)
    options = ("", False, None, False, "hash")
    hashes = [
        hash_batch(
            "diff",
            pa.record_batch([column], names=["m"]),
            [0],
            ["map<string,int>"],
            "positional",
            "murmur3",
            None,
            options,
        )
        for column in (sent, pa.array([None, None], kind))
    ]
    assert hashes[0].equals(hashes[1])
