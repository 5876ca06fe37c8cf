"""Every Python API that takes column names takes them literally: dots, spaces, backticks; case as Spark does.

The frame has a column named ``a.b`` and a struct ``a`` with a field ``b``: a name parsed as a path would reach
the struct's field, whose value is the same on every row, and the tests would see no difference.
"""

from __future__ import annotations

import pytest
from pyspark.errors import AnalysisException
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

import hashexpr as hx
from hashexpr.names import column, quote, resolve
from hashexpr.spark.metadata import with_metadata

COMMIT = "2026-03-04T05:06:07"


@pytest.fixture(scope="module")
def tricky(spark) -> DataFrame:
    return spark.sql(
        """SELECT * FROM VALUES
             (1, 'x', named_struct('b', 'same'), 1.5D, 'p', 'K1', X'01'),
             (2, 'y', named_struct('b', 'same'), 2.5D, 'q', 'K2', X'01'),
             (3, 'z', named_struct('b', 'same'), 2.5D, 'q', 'K3', X'02')
           AS t(id, `a.b`, a, `unit price`, `x``y`, Code, hk)"""
    )


def _set_dotted(df: DataFrame, value: str) -> DataFrame:
    """``df`` with the column ``a.b`` of row 1 changed and the struct ``a`` untouched."""
    changed = F.when(F.col("id") == 1, F.lit(value)).otherwise(column("a.b"))
    return df.withColumn("a.b", changed)


def test_quote_and_column():
    assert quote("a.b") == "`a.b`"
    assert quote("x`y") == "`x``y`"
    assert quote("`") == "````"


def test_resolve_matches_as_spark_does(spark, tricky):
    assert resolve(tricky, ["A.B", "code", "Unit Price", "X`Y"], "f") == ["a.b", "Code", "unit price", "x`y"]
    with pytest.raises(ValueError, match=r"^f: df has no column 'b'; its columns are \['id', 'a.b'"):
        resolve(tricky, ["b"], "f")
    with pytest.raises(ValueError, match="non-empty"):
        resolve(tricky, [""], "f")
    # A name that matches no column names the nearest one, ignoring case.
    with pytest.raises(ValueError, match=r"^f: df has no column 'unit_price' \(did you mean 'unit price'\?\)"):
        resolve(tricky, ["unit_price"], "f")
    with pytest.raises(ValueError, match=r"fingerprints_by: df has no column 'CDE' \(did you mean 'Code'\?\)"):
        hx.fingerprints_by(tricky, "CDE")
    spark.conf.set("spark.sql.caseSensitive", "true")
    try:
        with pytest.raises(ValueError, match="no column 'code'"):
            resolve(tricky, ["code"], "f")
    finally:
        spark.conf.unset("spark.sql.caseSensitive")


def test_column_functions_follow_f_col(tricky):
    """hx.record_hash("a.b") is F.col("a.b"), the struct's field; column("a.b") is the column."""
    row = tricky.select(
        (hx.record_hash("a.b") == hx.record_hash(F.col("a.b"))).alias("path"),
        (hx.record_hash("a.b") == hx.record_hash(F.lit("same"))).alias("field"),
        (hx.record_hash(column("a.b")) == hx.record_hash(F.lit("x"))).alias("literal"),
    ).where("id = 1").first()
    assert row.path and row.field and row.literal


NAME_FORMS = [
    ("a.b",),
    ("`a.b`",),
    ("a.`b`",),
    ("`x``y`", "Code", "unit price"),
    ("code",),
    ("*",),
    ("t.*",),
    ("a.*",),
    ("id", "`a.b`", "a"),
]


@pytest.mark.parametrize("names", NAME_FORMS, ids=lambda names: "|".join(names))
def test_names_mean_what_f_col_means(tricky, names):
    """Names go to Spark as SQL text; each must reach what F.col(name) reaches, output name included."""
    t = tricky.alias("t")
    as_cols = [F.col(n) for n in names]
    pairs = [
        (hx.record_hash(*names), F.call_function("record_hash", *as_cols)),
        (hx.record_hash(*names, by_name=True), F.call_function("record_hash_by_name", *as_cols)),
        (hx.record_key(*names, salt="s'\\x"), F.call_function("record_key_with", F.lit("salt=s'\\x"), *as_cols)),
        (hx.record_hash(*names[:-1], F.col(names[-1])), F.call_function("record_hash", *as_cols)),
    ]
    for ours, theirs in pairs:
        got, want = t.select("id", ours), t.select("id", theirs)
        assert got.columns == want.columns
        assert got.orderBy("id").collect() == want.orderBy("id").collect()


@pytest.mark.parametrize("name", ["a..b", "`a", "a.", ".a", "a`b", "nope"])
def test_names_f_col_refuses_fail_as_f_col_fails(tricky, name):
    with pytest.raises(AnalysisException) as ours:
        tricky.select(hx.record_hash(name)).collect()
    with pytest.raises(AnalysisException) as theirs:
        tricky.select(F.call_function("record_hash", F.col(name))).collect()
    assert ours.value.getCondition() == theirs.value.getCondition()


def test_with_metadata_takes_names_literally(tricky):
    def tag(df: DataFrame, **kw) -> dict[int, tuple[bytes, bytes]]:
        rows = with_metadata(df, commit_time=COMMIT, commit_seqno=False, source_file=False, **kw).collect()
        return {r.id: (bytes(r._hx_record_key), bytes(r._hx_record_hash)) for r in rows}

    # Every column (the default): a change of the column `a.b`, not of the struct `a`, changes the record hash.
    plain = tricky.select("id", column("a.b"), "a")
    before, after = tag(plain, key="id"), tag(_set_dotted(plain, "w"), key="id")
    assert before[1][1] != after[1][1] and before[2] == after[2]
    changed = _set_dotted(tricky, "w")
    before, after = tag(tricky, key="id"), tag(changed, key="id")
    assert before[1][1] != after[1][1] and before[2] == after[2]

    # key= and hash_columns= with a dot, a space, a backtick and another case.
    names = ["a.b", "unit price", "x`y", "code"]
    before, after = tag(tricky, key="a.b", hash_columns=names), tag(changed, key="A.B", hash_columns=names)
    assert before[1] != after[1] and before[1][0] != after[1][0] and before[1][1] != after[1][1]
    assert before[2] == after[2]
    expected = tricky.select(
        "id",
        hx.record_key(column("a.b")).alias("k"),
        hx.record_hash(*map(column, ["a.b", "unit price", "x`y", "Code"]), by_name=True).alias("h"),
    )
    assert before == {r.id: (bytes(r.k), bytes(r.h)) for r in expected.collect()}
    # The record hash hashes the names as the frame spells them, whatever the caller's case.
    spelt = tag(tricky, key="A.b", hash_columns=["A.B", "UNIT PRICE", "X`Y", "CODE"])
    assert spelt == before

    multi = tag(tricky, key=["unit price", "x`y"], hash_columns=["id"])
    assert multi[2][0] == multi[3][0] != multi[1][0]
    with pytest.raises(ValueError, match="with_metadata: df has no column 'b'"):
        with_metadata(tricky, "b")


def test_fingerprints_by_takes_names_literally(tricky):
    groups = hx.fingerprints_by(tricky, "a.b")
    assert groups.columns == ["a.b", "fingerprint"]
    got = {r["a.b"]: r.fingerprint for r in groups.collect()}
    assert sorted(got) == ["x", "y", "z"]
    assert got["x"] == hx.dataset_fingerprint(tricky.where(column("a.b") == "x"))

    by_name = {r["x`y"]: r.fingerprint for r in hx.fingerprints_by(tricky, "X`Y", F.col("id") > 1).collect()}
    assert sorted(by_name) == ["p", "q"]
    other_case = hx.fingerprints_by(tricky, "CODE")
    assert other_case.columns == ["Code", "fingerprint"]
    # The fingerprint covers the column `a.b`, not the struct's field.
    changed = {r["Code"]: r.fingerprint for r in hx.fingerprints_by(_set_dotted(tricky, "w"), "code").collect()}
    original = {r["Code"]: r.fingerprint for r in other_case.collect()}
    assert changed["K1"] != original["K1"] and changed["K2"] == original["K2"]


def test_collisions_take_names_literally(tricky):
    found = hx.find_collisions(tricky, "a.b", hash_col="hk").collect()
    assert [(r.kind, [b["a.b"] for b in r.business_keys], r.rows) for r in found] == [
        ("collision", ["x", "y"], 2)
    ]
    problems = hx.find_collisions(tricky, ["unit price", "x`y"], hash_col="HK").collect()
    assert [(r.kind, [tuple(b) for b in r.business_keys]) for r in problems] == [
        ("collision", [(1.5, "p"), (2.5, "q")]),
        ("inconsistent", [(2.5, "q")]),
    ]
    assert hx.find_collisions(tricky, ["A.B", "unit price"]).count() == 0
    # Normalised key parts (trim, case) are named literally too.
    assert hx.find_collisions(tricky, ["a.b", "x`y"], trim=True, case="upper").count() == 0

    exceptions = hx.collision_exceptions(hx.find_collisions(tricky, "a.b", hash_col="hk"), salt="c1")
    assert exceptions.columns == ["a.b", "replacement_key", "normalization"]
    (row,) = exceptions.collect()
    replacement = tricky.select(hx.record_key(F.lit("y"), salt="c1")).first()[0]
    assert (row["a.b"], row.replacement_key) == ("y", replacement)

    resolved = hx.resolve_collisions(tricky, "A.B", exceptions, hash_col="HK")
    assert resolved.columns == tricky.columns
    keys = {r.id: bytes(r.hk) for r in resolved.collect()}
    assert keys == {1: b"\x01", 2: bytes(replacement), 3: b"\x02"}


def test_diff_takes_names_literally(tricky):
    changed = _set_dotted(tricky, "w")
    rows = hx.diff(tricky, changed, "id").collect()
    assert [(r.id, r.change, r.changed_columns) for r in rows] == [(1, "update", ["a.b"])]
    by_dotted = hx.diff(tricky, changed, ["a.b", "x`y"], columns=["unit price"]).collect()
    assert sorted((r["a.b"], r.change) for r in by_dotted) == [("w", "insert"), ("x", "delete")]


@pytest.mark.parametrize("escaped_literals", ["false", "true"])
def test_diff_reports_names_with_quotes_and_backslashes(spark, escaped_literals):
    # diff writes column names into SQL text: a quote or a backslash must come back as it was, whichever way
    # the parser reads backslashes.
    name, key = "it's a \\ path", "k'ey\\"
    old = spark.range(3).select(F.col("id").alias(key), F.lit("a").alias(name), F.lit(1).alias("n"))
    new = old.withColumn(name, F.when(column(key) == 1, F.lit("b")).otherwise(column(name)))
    spark.conf.set("spark.sql.parser.escapedStringLiterals", escaped_literals)
    try:
        rows = hx.diff(old, new, key, include_values=True).collect()
    finally:
        spark.conf.unset("spark.sql.parser.escapedStringLiterals")
    assert [(r[key], r.change, r.changed_columns, r.old[name], r.new[name]) for r in rows] == [
        (1, "update", [name], "a", "b")
    ]
