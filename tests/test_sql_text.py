"""hashexpr.sql without an engine: type names, columns, refusals (naming column, type and dialect), the CLI."""

from __future__ import annotations

import json

import pytest

from hashexpr.cli import main
from hashexpr.sql import column, expression, record_hash, record_key
from hashexpr.sql.types import parse_type, type_name


@pytest.mark.parametrize(
    "text",
    ["bigint", "decimal(38,38)", "array<map<string,array<int>>>", "struct<`a b`:int,`c``d`:string>", "timestamp_ntz"],
)
def test_type_names_read_back(text):
    assert type_name(parse_type(type_name(parse_type(text)))) == type_name(parse_type(text))


@pytest.mark.parametrize(
    "text, problem",
    [("decimal(39,0)", "no Spark decimal"), ("array<int", "ends too soon"), ("interval", "unknown type"),
     ("map<int>", "expected ','"), ("int int", "unexpected 'int'")],
)
def test_bad_type_names(text, problem):
    with pytest.raises(ValueError, match=problem):
        parse_type(text)


@pytest.mark.parametrize(
    "dialect, dtype, reason",
    [
        ("postgres", "map<string,int>", "no map type"),
        ("postgres", "array<array<int>>", "rectangular"),
        ("duckdb", "char(3)", "CHAR"),
        ("spark", "varchar(3)", None),
    ],
)
def test_refusals_name_column_type_and_dialect(dialect, dtype, reason):
    if reason is None:
        record_hash([("c", dtype)], dialect=dialect)
        return
    with pytest.raises(ValueError) as raised:
        record_hash([("Amount", dtype)], dialect=dialect)
    message = str(raised.value)
    assert "record_hash: column 'Amount'" in message and dialect in message and reason in message
    assert type_name(parse_type(dtype)) in message


def test_collated_strings_are_refused():
    from pyspark.sql.types import StringType

    with pytest.raises(ValueError, match="collation UTF8_LCASE"):
        record_key([("k", StringType("UTF8_LCASE"))], dialect="duckdb")


def test_names_are_quoted_and_expressions_checked():
    sql = record_hash([(column('we"ird.na me'), "int"), ("Plain", "int")], dialect="postgres")
    assert '"we""ird.na me"' in sql and '"Plain"' in sql
    assert "`a``b`" in record_hash([(column("a`b"), "int")], dialect="spark")
    assert "(lower(email))" in record_hash([("lower(email)", "string")], dialect="duckdb")
    # The last two look balanced when a quote is only escaped by doubling it, but close the parenthesis in
    # Spark (whose literals read backslash escapes) and in PostgreSQL (dollar quoting).
    for bad in ["a); DROP TABLE t; --", "x -- y", "f(a", "'open", "a /* b */", "'\\'' ) || secret || ('", "$$)$$"]:
        with pytest.raises(ValueError, match="expression"):
            record_hash([(bad, "int")], dialect="duckdb")
    with pytest.raises(ValueError, match="expression"):
        expression("a)")


def test_options_are_checked_like_record_key_with():
    with pytest.raises(ValueError, match="salt"):
        record_key([("k", "string")], dialect="duckdb", salt="a;b")
    with pytest.raises(ValueError, match="case"):
        record_key([("k", "string")], dialect="duckdb", case="title")
    with pytest.raises(ValueError, match="null_key"):
        record_key([("k", "string")], dialect="duckdb", null_key="drop")
    with pytest.raises(ValueError, match="dialect must be one of postgres, duckdb, spark"):
        record_key([("k", "string")], dialect="snowflake")
    with pytest.raises(ValueError, match="columns is empty"):
        record_hash([], dialect="spark")


def test_cli_prints_the_expression(capsys):
    assert main(["sql", "--dialect", "postgres", "--key", "customer_id:bigint,email:string", "--salt", "crm"]) == 0
    printed = capsys.readouterr().out.strip()
    assert printed == record_key([("customer_id", "bigint"), ("email", "string")], dialect="postgres", salt="crm")


def test_cli_reads_types_with_commas_and_names_with_colons(capsys):
    spec = "amount:decimal(10,2),tags:map<string,int>,a:b:struct<x:int,y:string>,unit price:double"
    assert main(["sql", "--dialect", "duckdb", "--hash", spec, "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["columns"] == [
        ["amount", "decimal(10,2)"], ["tags", "map<string,int>"], ["a:b", "struct<x:int,y:string>"],
        ["unit price", "double"],
    ]
    assert report["exit_status"] == 0 and '"unit price"' in report["sql"]


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--dialect", "postgres", "--key", "m:map<string,int>"], "cannot be hashed in postgres SQL"),
        (["--dialect", "duckdb", "--hash", "a:bigint", "--trim"], "--trim: key options apply to --key"),
        (["--dialect", "duckdb", "--key", "a"], "is not NAME:TYPE"),
        (["--dialect", "duckdb", "--key", "a:integr"], "is not NAME:TYPE"),
    ],
)
def test_cli_errors(argv, message, capsys):
    assert main(["sql", *argv]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and message in captured.err and captured.err.count("\n") == 1
