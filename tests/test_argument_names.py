"""By-name hashes and fingerprints name arguments as docs/FORMAT.md section 6.1 says, reproducibly by the reference.

A column goes by its schema's name whatever case was typed; an expression by its unqualified text; the same data
in two tables, under a DataFrame alias or in a subquery gives the same bytes.
"""

from __future__ import annotations

import pytest
from pyspark.sql import functions as F
from pyspark.sql.types import IntegerType, StringType

import hashexpr as hx
from hashexpr import reference

ROWS = [(1, "a"), (2, None), (3, "Ab")]


@pytest.fixture
def df(spark):
    return spark.createDataFrame(ROWS, "id INT, s STRING")


def _values(frame, column) -> list[bytes]:
    return [bytes(r[0]) for r in frame.orderBy("id").select(column).collect()]


def test_typed_case_does_not_change_by_name_hashes(df):
    expected = [
        reference.record_hash_by_name({"id": i, "s": s}, {"id": IntegerType(), "s": StringType()}) for i, s in ROWS
    ]
    assert _values(df, hx.record_hash("id", "s", by_name=True)) == expected
    assert _values(df, hx.record_hash("ID", "S", by_name=True)) == expected
    assert _values(df, hx.record_hash(df["ID"], F.col("S"), by_name=True)) == expected
    assert _values(df.alias("zz"), hx.record_hash("zz.ID", F.col("zz.s"), by_name=True)) == expected


def test_expressions_go_by_their_unqualified_text_in_every_table(spark, df):
    names = {"upper(s)": StringType(), "(id + 1)": IntegerType()}
    expected = [
        reference.record_hash_by_name({"upper(s)": None if s is None else s.upper(), "(id + 1)": i + 1}, names)
        for i, s in ROWS
    ]
    column = hx.record_hash(F.upper("S"), F.col("ID") + 1, by_name=True)
    assert _values(df, column) == expected
    assert _values(df.alias("zz"), hx.record_hash(F.upper("zz.s"), F.col("zz.id") + 1, by_name=True)) == expected
    # What the user sees as the expression's column name is the name hashed.
    assert df.select(F.upper("s"), F.col("id") + 1).columns == list(names)
    df.createOrReplaceTempView("names_a")
    df.createOrReplaceTempView("names_b")
    sql = "SELECT hex(record_hash_by_name(upper(s), id + 1)) FROM {} ORDER BY id"
    assert spark.sql(sql.format("names_a")).collect() == spark.sql(sql.format("names_b AS x")).collect()
    assert spark.sql(sql.format("names_a")).collect() == spark.sql(sql.format("(SELECT * FROM names_b)")).collect()


def test_fingerprint_schema_names_follow_the_same_rule(spark, df):
    expected = reference.dataset_fingerprint(
        [(None if s is None else s.upper(),) for _, s in ROWS], ["upper(s)"], [StringType()]
    )
    for frame, column in [(df, F.upper("s")), (df, F.upper("S")), (df.alias("t"), F.upper("t.s"))]:
        assert frame.agg(F.call_function("dataset_fingerprint", column)).first()[0] == expected
    assert hx.dataset_fingerprint(df.select("ID", "S")) == reference.dataset_fingerprint(
        ROWS, ["ID", "S"], [IntegerType(), StringType()]
    ), "df.select('ID') names its output column ID: the schema the fingerprint reads"
