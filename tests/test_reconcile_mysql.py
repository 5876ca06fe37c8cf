"""MySQL and MariaDB as a side of a comparison, on a real MariaDB server (tests/mariadb_server.py).

One table of every type the side maps, with the values at their types' ends, is compared with the same rows
built independently: as Arrow data (hashed by the Rust engine: the record hashes of format v1 against
MariaDB's SQL), in PostgreSQL (both sides' common texts, then the record hashes of the rows fetched), DuckDB and
Parquet. A copy with planted changes (case and trailing spaces under a case-insensitive, PAD SPACE collation,
one ulp, one microsecond, a float's last bit) differs by exactly those. Values no Spark type holds are refused
by column and key; the comparison reads in a read-only snapshot, stops at its statement timeout and leaves a
given connection as it was.
"""

from __future__ import annotations

import datetime
import decimal
import math
import struct

import duckdb
import psycopg
import pyarrow as pa
import pytest
from pyspark.sql.types import (
    BinaryType,
    BooleanType,
    DateType,
    DecimalType,
    DoubleType,
    FloatType,
    IntegerType,
    LongType,
    ShortType,
    StringType,
    TimestampNTZType,
    TimestampType,
)
from reconcile_data import arrow_table, duckdb_table, postgres_table, write_parquet
from sql_engines import MYSQL_TIME_ZONE, literal

from hashexpr import reconcile as rc

pytest.importorskip("pymysql")

#: (name, Spark type, MySQL type): every mapping of hashexpr.reconcile.mysql_types.
COLUMNS = [
    ("id", LongType(), "BIGINT PRIMARY KEY"),
    ("name", StringType(), "VARCHAR(40) CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci"),
    ("code", StringType(), "CHAR(6)"),
    ("latin", StringType(), "VARCHAR(20) CHARACTER SET latin1"),
    ("amount", DecimalType(12, 2), "DECIMAL(12,2)"),
    ("wide", DecimalType(38, 10), "DECIMAL(38,10)"),
    ("ratio", DoubleType(), "DOUBLE"),
    ("f", FloatType(), "FLOAT"),
    ("flag", BooleanType(), "TINYINT(1)"),
    ("bit1", BooleanType(), "BIT(1)"),
    ("small_u", ShortType(), "TINYINT UNSIGNED"),
    ("int_u", LongType(), "INT UNSIGNED"),
    ("big_u", DecimalType(20, 0), "BIGINT UNSIGNED"),
    ("yr", IntegerType(), "YEAR"),
    ("d", DateType(), "DATE"),
    ("dt", TimestampNTZType(), "DATETIME(6)"),
    ("ts", TimestampType(), "TIMESTAMP(6) NULL"),
    ("bin", BinaryType(), "VARBINARY(16)"),
    ("fixed", BinaryType(), "BINARY(4)"),
    ("blob", BinaryType(), "BLOB"),
    ("kind", StringType(), "ENUM('a','b','Ü')"),
]
SPARK = [(n, t) for n, t, _ in COLUMNS]
_EPOCH = datetime.date(1970, 1, 1)


def _days(text: str) -> int:
    return (datetime.date.fromisoformat(text) - _EPOCH).days


def _micros(text: str) -> int:
    clock = datetime.datetime.fromisoformat(text)
    return (clock - datetime.datetime(1970, 1, 1)) // datetime.timedelta(microseconds=1)


def _float32(x: float) -> float:
    return struct.unpack("<f", struct.pack("<f", x))[0]


ROWS = [
    [1, "Alpha", "ab    ", "café", decimal.Decimal("1.50"), decimal.Decimal("1234567890123456789012345678.0123456789"),
     0.1, _float32(1.1), True, True, 255, 4294967295, decimal.Decimal(18446744073709551615), 2024,
     _days("2024-02-29"), _micros("2024-02-29 23:59:59.999999"), _micros("2024-03-01 00:00:00.000001"),
     b"\x00\xff", b"ab\x00\x00", b"blob", "Ü"],
    [2, "beta", "      ", "", decimal.Decimal("-0.01"), decimal.Decimal("-0.0000000001"), -0.0, -0.0, False, False, 0, 0,
     decimal.Decimal(0), 1901, _days("0001-01-01"), _micros("0001-01-01 00:00:00"), _micros("1970-01-01 00:00:01"),
     b"", b"\x00\x00\x00\x00", b"", "a"],
    [3, "Ǆ 🎉 ‍", "x     ", "ÿ", decimal.Decimal("9999999999.99"), decimal.Decimal("-9999999999999999999999999999.9999999999"),
     1.7976931348623157e308, _float32(3.4028234663852886e38), True, False, 7, 1, decimal.Decimal(9223372036854775808),
     2155, _days("9999-12-31"), _micros("9999-12-31 23:59:59.999999"), _micros("2038-01-19 03:14:07.999999"),
     b"\x80", b"\xff\xff\xff\xff", bytes(range(256)), "b"],
    [4, None, None, None, None, None, 5e-324, _float32(1e-45), None, None, None, None, None, None, None, None, None,
     None, None, None, None],
    [5, "gamma", "g     ", "g", decimal.Decimal("0.00"), decimal.Decimal("0E-10"), -2.5, 1.5, True, True, 1, 2,
     decimal.Decimal(1), 2000, _days("1969-12-31"), _micros("1969-12-31 23:59:59.999999"),
     _micros("2001-09-09 01:46:40"), b"g", b"g\x00\x00\x00", b"g", "a"],
]  # fmt: skip


def mysql_table(server, name: str, rows) -> None:
    with server.connect() as conn, conn.cursor() as cursor:
        cursor.execute(f"SET time_zone = '{MYSQL_TIME_ZONE}'")
        cursor.execute(f"DROP TABLE IF EXISTS `{name}`")
        cursor.execute(f"CREATE TABLE `{name}` ({', '.join(f'`{n}` {m}' for n, _, m in COLUMNS)})")
        for row in rows:
            values = ", ".join(literal(v, t, "mysql") for v, (_, t) in zip(row, SPARK))
            cursor.execute(f"INSERT INTO `{name}` VALUES ({values})")


def _changed(rows):
    """Planted changes: what each one is, as (key, changed columns)."""
    out = [list(r) for r in rows]
    out[0][1] = "ALPHA"  # case alone: equal under utf8mb4_general_ci
    out[1][1] = "beta "  # a trailing space: equal under PAD SPACE
    out[0][6] = math.nextafter(0.1, 1.0)  # one ulp
    out[2][7] = struct.unpack("<f", struct.pack("<I", struct.unpack("<I", struct.pack("<f", out[2][7]))[0] - 1))[0]
    out[4][16] += 1  # one microsecond
    out[4][3] = "G"
    del out[3]  # deleted
    out.append([6, *[None] * (len(COLUMNS) - 1)])  # inserted
    return out


EXPECTED = {(1, ("name", "ratio")), (2, ("name",)), (3, ("f",)), (5, ("latin", "ts"))}


@pytest.fixture(scope="module")
def tables(mariadb, postgres, tmp_path_factory):
    mysql_table(mariadb, "every_type", ROWS)
    mysql_table(mariadb, "changed", _changed(ROWS))
    where = tmp_path_factory.mktemp("reconcile-mysql")
    arrow = arrow_table(SPARK, ROWS)
    write_parquet(arrow, str(where / "every_type.parquet"))
    con = duckdb.connect(str(where / "every.duckdb"))
    duckdb_table(con, "every_type", arrow)
    con.close()
    with psycopg.connect(postgres.dsn, autocommit=True) as pg:
        postgres_table(pg, "every_type", SPARK, ROWS)
    return {"arrow": arrow, "dir": where, "pg": postgres.dsn}


def _found(result: rc.Result) -> set[tuple]:
    return {
        (row["id"], tuple(row["changed_columns"] or ()))
        for row in result.changes().to_pylist()
        if row["change"] == "update"
    }


def test_every_type_equals_the_same_rows_in_arrow_postgresql_duckdb_and_parquet(mariadb, tables):
    """Exact both ways: the record hashes (against the Rust engine) and the common texts (against PostgreSQL)."""
    said = []
    others = {
        "arrow": rc.arrow(tables["arrow"]),
        "postgres": rc.postgres(tables["pg"], "every_type"),
        "duckdb": rc.duckdb(str(tables["dir"] / "every.duckdb"), "every_type"),
        "parquet": rc.parquet(tables["dir"] / "every_type.parquet"),
    }
    for kind, other in others.items():
        result = rc.compare(rc.mysql(mariadb.url(), "every_type"), other, progress=said.append)
        assert result.counts["unchanged"] == len(ROWS) and not result.differences, (kind, result.counts)
        assert result.compared == [n for n, _ in SPARK[1:]]
    assert sum("common texts" in line for line in said) == 1  # against PostgreSQL alone
    assert said[0] == "key: the source's primary key, id"


@pytest.mark.parametrize("other", ["postgres", "duckdb", "parquet"])
def test_planted_changes_are_found_exactly(mariadb, tables, other):
    """Case-only and trailing-space changes, which MariaDB's collation holds equal, are changes."""
    target = {
        "postgres": lambda: rc.postgres(tables["pg"], "every_type"),
        "duckdb": lambda: rc.duckdb(str(tables["dir"] / "every.duckdb"), "every_type"),
        "parquet": lambda: rc.parquet(tables["dir"] / "every_type.parquet"),
    }[other]()
    result = rc.compare(target, rc.mysql(mariadb.url(), "changed"), key="id", values=True)
    counts = result.counts
    assert (counts["inserted"], counts["deleted"], counts["updated"], counts["unchanged"]) == (1, 1, 4, 0), (counts, _found(result))
    assert _found(result) == EXPECTED
    first = next(r for r in result.changes().to_pylist() if r["id"] == 1)
    assert (first["source"]["name"], first["target"]["name"]) == ("Alpha", "ALPHA")
    assert first["target"]["ratio"] == math.nextafter(0.1, 1.0)


def test_keys_that_a_collation_holds_equal_are_different_keys(mariadb, tables):
    with mariadb.connect() as conn, conn.cursor() as cursor:
        cursor.execute("DROP TABLE IF EXISTS ci_keys")
        cursor.execute("CREATE TABLE ci_keys (k VARCHAR(10) COLLATE utf8mb4_general_ci PRIMARY KEY, v INT)")
        cursor.execute("INSERT INTO ci_keys VALUES ('a', 1), ('b ', 2)")
    with psycopg.connect(tables["pg"], autocommit=True) as pg:
        pg.execute("DROP TABLE IF EXISTS ci_keys")
        pg.execute("CREATE TABLE ci_keys (k text PRIMARY KEY, v int)")
        pg.execute("INSERT INTO ci_keys VALUES ('A', 1), ('b', 2)")
    result = rc.compare(rc.postgres(tables["pg"], "ci_keys"), rc.mysql(mariadb.url(), "ci_keys"))
    assert (result.counts["inserted"], result.counts["deleted"], result.counts["unchanged"]) == (2, 2, 0)


def test_values_no_spark_type_holds_are_refused_naming_the_column_and_a_key(mariadb, tables):
    with mariadb.connect() as conn, conn.cursor() as cursor:
        cursor.execute("SET SESSION sql_mode = 'ALLOW_INVALID_DATES'")
        for name, column, value in (("zero_date", "d DATE", "'2024-00-10'"), ("two", "b TINYINT(1)", "2"),
                                    ("zero_ts", "t TIMESTAMP NULL", "'0000-00-00 00:00:00'"),
                                    ("bad_day", "d DATE", "'2024-02-30'"),
                                    ("year_zero", "d DATETIME", "'0000-03-01 00:00:00'")):  # fmt: skip
            cursor.execute(f"DROP TABLE IF EXISTS {name}")
            cursor.execute(f"CREATE TABLE {name} (id INT PRIMARY KEY, {column})")
            cursor.execute(f"INSERT INTO {name} VALUES (1, NULL), (7, {value})")
        cursor.execute("DROP TABLE IF EXISTS no_type")
        cursor.execute("CREATE TABLE no_type (id INT PRIMARY KEY, t TIME, w DECIMAL(50,2))")
    arrow = {
        "zero_date": pa.table({"id": pa.array([1, 7], pa.int32()), "d": pa.array([None, 0], pa.date32())}),
        "two": pa.table({"id": pa.array([1, 7], pa.int32()), "b": pa.array([None, True])}),
        "zero_ts": pa.table({"id": pa.array([1, 7], pa.int32()), "t": pa.array([None, 0], pa.timestamp("us", "UTC"))}),
        "bad_day": pa.table({"id": pa.array([1, 7], pa.int32()), "d": pa.array([None, 0], pa.date32())}),
        "year_zero": pa.table({"id": pa.array([1, 7], pa.int32()), "d": pa.array([None, 0], pa.timestamp("us"))}),
    }
    no_day = r"a zero or invalid date \(a year, month or day of 0, or a day past its month's end\)"
    for table, found in (("zero_date", f"column 'd', key id=7: {no_day}"), ("bad_day", f"column 'd', key id=7: {no_day}"),
                         ("year_zero", f"column 'd', key id=7: {no_day}"),
                         ("two", r"column 'b', key id=7: a boolean \(TINYINT\(1\) or BIT\(1\)\) neither 0 nor 1"),
                         ("zero_ts", "column 't', key id=7: a zero TIMESTAMP")):  # fmt: skip
        # Against Arrow data (the record hashes) and MariaDB itself (the common texts): the same refusal.
        for other in (rc.arrow(arrow[table]), rc.mysql(mariadb.url(), table)):
            with pytest.raises(ValueError, match=f"MariaDB: MariaDB table {table} .*: {found}"):
                rc.compare(rc.mysql(mariadb.url(), table), other, key="id")
    with pytest.raises(ValueError, match=r"'t'.*TIME is a duration.*\n?.*'w'.*DECIMAL\(50,2\)"):
        rc.compare(rc.mysql(mariadb.url(), "no_type"), rc.mysql(mariadb.url(), "no_type"), key="id")


def test_read_only_snapshot_timeout_and_a_given_connection_left_as_it_was(mariadb, tables):
    import pymysql

    given = pymysql.connect(host="127.0.0.1", port=mariadb.port, user="hx", password=__import__("mariadb_server").PASSWORD,
                            database="hx", autocommit=True)  # fmt: skip
    with given.cursor() as cursor:
        cursor.execute("SET SESSION time_zone = '-03:00'")
        cursor.execute("SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED")
    result = rc.compare(rc.mysql(given, "every_type"), rc.arrow(tables["arrow"]))
    assert result.counts["unchanged"] == len(ROWS)
    with given.cursor() as cursor:
        cursor.execute("SELECT @@SESSION.time_zone, @@SESSION.max_statement_time, @@in_transaction, @@SESSION.tx_isolation")
        assert cursor.fetchone() == ("-03:00", 0.0, 0, "READ-COMMITTED")
    given.close()
    # A pass over its statement timeout is cancelled by the server: a cross join of the table with itself.
    with mariadb.connect() as conn, conn.cursor() as cursor:
        cursor.execute("CREATE OR REPLACE VIEW slow AS SELECT CAST(a.id * 1000000 + b.seq AS SIGNED) AS id FROM every_type AS a "
                       "CROSS JOIN seq_1_to_2000000 AS b")  # fmt: skip
    with pytest.raises(TimeoutError, match="MariaDB table slow"):
        rc.compare(rc.mysql(mariadb.url(), "slow"), rc.arrow(tables["arrow"].select(["id"])), key="id",
                   statement_timeout=0.5)  # fmt: skip


def test_urls_and_table_names(mariadb, tmp_path):
    from hashexpr.reconcile.mysql_connection import settings

    found = settings(mariadb.url())
    assert found["password"] == __import__("mariadb_server").PASSWORD and found["database"] == "hx"
    with pytest.raises(ValueError, match="unknown URL option 'sslmode'"):
        settings("mysql://u@h/db?sslmode=require")
    for option in ("ssl-ca", "ssl-cert", "ssl-key"):
        with pytest.raises(ValueError, match=f"mysql: the URL's {option} names no file: {tmp_path}/none.pem"):
            settings(f"mysql://u@h/db?ssl-mode=VERIFY_CA&{option}={tmp_path}/none.pem")
    # DISABLED is no TLS at all, where PyMySQL would otherwise try it; PREFERRED is PyMySQL's own default.
    assert settings("mysql://u@h/db?ssl-mode=DISABLED")["ssl_disabled"] is True
    assert "ssl" not in settings("mysql://u@h/db?ssl-mode=PREFERRED")
    with pytest.raises(ValueError, match="does not exist"):
        rc.compare(rc.mysql(mariadb.url(), "nope"), rc.mysql(mariadb.url(), "hx.every_type"), key="id")
    with pytest.raises(ConnectionError, match="cannot connect to MySQL at hx@127.0.0.1:1/hx"):
        rc.compare(rc.mysql("mysql://hx:secret@127.0.0.1:1/hx", "t"), rc.mysql(mariadb.url(), "every_type"))


def test_names_with_backquotes_dots_spaces_and_percent_signs(mariadb):
    with mariadb.connect() as conn, conn.cursor() as cursor:
        cursor.execute("DROP TABLE IF EXISTS `we``ird.t%ble`")
        cursor.execute("CREATE TABLE `we``ird.t%ble` (`Id%` INT PRIMARY KEY, `a``b` VARCHAR(5), `C d` INT, `e.f` DOUBLE)")
        cursor.execute("INSERT INTO `we``ird.t%ble` VALUES (1, 'x', 2, 0.5), (2, NULL, NULL, NULL)")
    lake = pa.table({"Id%": pa.array([1, 2], pa.int32()), "a`b": ["x", "y"], "C d": pa.array([2, None], pa.int32()),
                     "e.f": [0.5, None]})  # fmt: skip
    for name in ("`we``ird.t%ble`", "hx.`we``ird.t%ble`", '"we`ird.t%ble"'):
        result = rc.compare(rc.mysql(mariadb.url(), name), rc.arrow(lake), values=True)
        (change,) = result.changes().to_pylist()
        assert (change["Id%"], change["changed_columns"], change["target"]["a`b"]) == (2, ["a`b"], "y"), name
        assert result.counts["unchanged"] == 1
    for bad in ("t.", ".t", "a.b.c", "`x"):
        with pytest.raises(ValueError, match="cannot read the table name"):
            rc.mysql(mariadb.url(), bad)
    with pytest.raises(ValueError, match="cannot read the table name"):
        rc.postgres("postgresql://u@h/d", "t.")


def test_zerofill_integers_print_as_their_values(mariadb):
    """A ZEROFILL column's text is zero-padded; its common text is the number's, so equal tables pass in one
    aggregate query a side, with no segment fetched."""
    with mariadb.connect() as conn, conn.cursor() as cursor:
        for name, column in (("padded", "INT(6) ZEROFILL"), ("plain", "INT UNSIGNED")):
            cursor.execute(f"CREATE OR REPLACE TABLE {name} (id INT PRIMARY KEY, n {column})")
            cursor.execute(f"INSERT INTO {name} VALUES (1, 42), (2, NULL), (3, 123456)")
    result = rc.compare(rc.mysql(mariadb.url(), "padded"), rc.mysql(mariadb.url(), "plain"))
    assert result.counts["unchanged"] == 3
    assert [result.stats[side]["queries"] for side in ("source", "target")] == [1, 1], result.stats


def test_a_value_beyond_max_allowed_packet_fails_instead_of_hashing_as_null(mariadb, tables):
    """CONCAT, HEX and CAST give NULL for a result longer than max_allowed_packet: the passes fail naming the
    setting, by the common texts (against MariaDB) and by the record hashes (against Arrow), for a value that
    is too long and for a row whose values fit one by one."""
    long_text, half = "x" * 100_000, "y" * 40_000
    with mariadb.connect() as conn, conn.cursor() as cursor:
        cursor.execute("CREATE OR REPLACE TABLE long_value (id INT PRIMARY KEY, t LONGTEXT)")
        cursor.execute("INSERT INTO long_value VALUES (1, %s), (2, NULL)", [long_text])
        cursor.execute("CREATE OR REPLACE TABLE long_row (id INT PRIMARY KEY, a LONGTEXT, b LONGTEXT)")
        cursor.execute("INSERT INTO long_row VALUES (1, %s, %s), (2, NULL, NULL)", [half, half])
        cursor.execute("SELECT @@GLOBAL.max_allowed_packet")
        (saved,) = cursor.fetchone()
        cursor.execute("SET GLOBAL max_allowed_packet = 65536")
    try:
        lakes = {
            "long_value": pa.table({"id": pa.array([1, 2], pa.int32()), "t": [long_text, None]}),
            "long_row": pa.table({"id": pa.array([1, 2], pa.int32()), "a": [half, None], "b": [half, None]}),
        }
        for table, lake in lakes.items():
            for other in (rc.arrow(lake), rc.mysql(mariadb.url(), table)):
                with pytest.raises(ValueError, match=f"MariaDB table {table} .*longer than the server's max_allowed_packet"):
                    rc.compare(rc.mysql(mariadb.url(), table), other, key="id")
    finally:
        with mariadb.connect() as conn, conn.cursor() as cursor:
            cursor.execute("SET GLOBAL max_allowed_packet = %s", [saved])
