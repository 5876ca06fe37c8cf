"""The types PostgreSQL tables hold, compared exactly against the other systems: uuid by its canonical text,
character(n) with its padding, numeric without a scale by value, json and jsonb by their text, infinite dates and
timestamps as DuckDB holds them; values no Spark type holds refused naming the column and a key; Arrow data of
every physical form (views, large, dictionary, nested, a column of NULLs alone) through every pass, the fetch of
values included.
"""

from __future__ import annotations

import decimal
import uuid

import duckdb
import polars as pl
import psycopg
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from hashexpr import reconcile as rc
from hashexpr.cli.changes import displayable

U1, U2 = "A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11", "b0eebc99-9c0b-4ef8-bb6d-6bb9bd380a12"


@pytest.fixture(scope="module")
def pg(postgres):
    """A database of its own, with a table of the types other systems have no twin for, and its copies."""
    with psycopg.connect(postgres.dsn, autocommit=True) as admin:
        admin.execute("DROP DATABASE IF EXISTS hx_reconcile_types")
        admin.execute("CREATE DATABASE hx_reconcile_types")
    dsn = postgres.dsn.replace("dbname=postgres", "dbname=hx_reconcile_types")
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(
            "CREATE TABLE odd (id bigint PRIMARY KEY, u uuid, c character(4), j jsonb, js json, n numeric, "
            "d date, ts timestamp, tz timestamptz, days date[])"
        )
        conn.execute(
            f"""INSERT INTO odd VALUES
            (1, '{U1}', 'ab', '{{"b": 1, "a": [1, 2]}}', '{{"b":1}}', 1.50, 'infinity', '-infinity', 'infinity',
             ARRAY['infinity'::date, '2020-01-01']),
            (2, NULL, NULL, NULL, NULL, 12345678901234567890.123456789, '2020-01-01', '2020-01-01 10:00',
             '2020-01-01 10:00+00', NULL),
            (3, '{U2}', 'x   ', '[]', '[ ]', 1e-30, '-infinity', 'infinity', '-infinity', '{{}}'),
            (4, '{U2}', '', 'null', 'null', -1e30, '0001-01-01', '0001-01-01', '0001-01-01 00:00+00', NULL)"""
        )
        conn.execute("CREATE TABLE copied AS SELECT * FROM odd")
        # The same values written differently (a scale, an order of keys): no change.
        conn.execute("""UPDATE copied SET n = 1.5000, j = '{"a": [1, 2], "b": 1}' WHERE id = 1""")
        # Case and padding are values.
        conn.execute("UPDATE copied SET c = 'AB' WHERE id = 1")
        conn.execute("UPDATE copied SET d = '2020-01-02', js = '[]' WHERE id = 3")
        conn.execute("CREATE TABLE texts (id bigint, u text, c text, j text, n numeric(38, 30))")
        conn.execute(
            f"""INSERT INTO texts VALUES (1, lower('{U1}'), 'ab  ', '{{"a": [1, 2], "b": 1}}', 1.5),
            (2, NULL, NULL, NULL, NULL), (3, '{U2.upper()}', 'x', '[]', 0.000000000000000000000000000001),
            (4, '{U2}', '    ', 'null', NULL)"""
        )
        conn.execute("CREATE TABLE bad (id bigint, k text, n numeric, m numeric(6,2), a int[])")
        conn.execute(
            "INSERT INTO bad VALUES (1, 'x', 1, 1, '{1}'), (2, 'y', 'NaN', 'NaN', '{{1,2},{3,4}}'), "
            "(3, 'z', 1e40, 2, '{1}'), (4, 'w', 'Infinity', 3, '{1}')"
        )
    return dsn


def _rows(result: rc.Result) -> list[dict]:
    """The changes as Python values: infinite dates as text, as the command line shows them (no Python date
    holds them)."""
    return displayable(result.changes()).to_pylist()


def _found(result: rc.Result) -> list[tuple]:
    return sorted((r["id"], r["change"], tuple(r["changed_columns"] or ())) for r in _rows(result))


def test_postgres_types_between_two_postgresql_tables(pg):
    """uuid, character(n), jsonb and json, numeric without a scale, infinite dates and timestamps and arrays of
    them, between two tables of the same types (the rows' texts) and through the record hashes (the copy's
    numeric given a scale)."""
    result = rc.compare(rc.postgres(pg, "odd"), rc.postgres(pg, "copied"), key="id", values=True)
    assert _found(result) == [(1, "update", ("c",)), (3, "update", ("js", "d"))]
    update = next(r for r in _rows(result) if r["id"] == 1)
    assert (update["source"]["d"], update["source"]["tz"], update["source"]["days"]) == (
        "infinity", "infinity", ["infinity", "2020-01-01"],
    )  # fmt: skip
    assert (update["source"]["c"], update["target"]["c"]) == ("ab  ", "AB  ")
    assert (update["source"]["u"], update["source"]["n"]) == (U1.lower(), decimal.Decimal("1.50"))
    types = {c.name: (c.source_type, c.source_spark_type) for c in result.schema}
    assert types["u"] == ("uuid", "string") and types["c"] == ("character(4)", "string")
    assert types["n"] == ("numeric", "decimal(38,*)") and types["j"] == ("jsonb", "string")


def test_postgres_types_against_their_text_and_a_fixed_scale(pg):
    """Against text copies, a uuid is its canonical lower-case text, a character(n) is padded to n, a jsonb its
    normal form; a numeric without a scale equals any decimal of the same value."""
    result = rc.compare(
        rc.postgres(pg, "odd"), rc.postgres(pg, "texts"), key="id", columns=["u", "c", "j", "n"], values=True
    )
    # 3: the uuid in capitals, a trimmed character(4); 2 and 4: numerics the copy lost.
    assert _found(result) == [(2, "update", ("n",)), (3, "update", ("u", "c")), (4, "update", ("n",))]


def test_postgres_types_against_duckdb_parquet_and_arrow(pg, tmp_path):
    """DuckDB's UUID (as it hands it over, and in a connection that hands over Arrow's UUID type), its infinite
    dates and timestamps, the Parquet files DuckDB writes, and Arrow's UUID type in memory and in Parquet."""
    database = tmp_path / "copy.duckdb"
    with duckdb.connect(str(database)) as con:
        con.execute(
            "CREATE TABLE t (id BIGINT, u UUID, c VARCHAR, j VARCHAR, js VARCHAR, n DECIMAL(38, 30), d DATE, "
            "ts TIMESTAMP, tz TIMESTAMPTZ, days DATE[])"
        )
        con.execute(
            f"""SET TimeZone = 'UTC'; INSERT INTO t VALUES
            (1, '{U1}', 'ab  ', '{{"a": [1, 2], "b": 1}}', '{{"b":1}}', 1.5, 'infinity', '-infinity', 'infinity',
             ['infinity'::DATE, '2020-01-01']),
            (2, NULL, NULL, NULL, NULL, NULL, '2020-01-01', '2020-01-01 10:00', '2020-01-01 10:00+00', NULL),
            (3, '{U2}', 'x   ', '[]', '[ ]', 1e-30, '-infinity', 'infinity', '-infinity', []),
            (4, '{U2}', '    ', 'null', 'null', NULL, '0001-01-01', '0001-01-01', '0001-01-01 00:00+00', NULL)"""
        )
        con.execute(f"COPY t TO '{tmp_path / 'duck.parquet'}' (FORMAT parquet)")
    expected = [(2, "update", ("n",)), (4, "update", ("n",))]
    source = rc.postgres(pg, "odd")
    assert _found(rc.compare(source, rc.duckdb(database, "t"), key="id")) == expected
    with duckdb.connect(str(database), read_only=True) as con:
        con.execute("SET arrow_lossless_conversion = true")
        assert con.sql("SELECT u FROM t").to_arrow_table().schema.field("u").type.extension_name == "arrow.uuid"
        assert _found(rc.compare(rc.postgres(pg, "odd"), rc.duckdb(con, "t"), key="id", values=True)) == expected
    assert _found(rc.compare(rc.postgres(pg, "odd"), rc.parquet(tmp_path / "duck.parquet"), key="id")) == expected
    # Arrow's UUID type (pyarrow writes it as Parquet's UUID, which Spark cannot read): compared by its text.
    ids = pa.array([1, 2, 3, 4], pa.int64())
    raw = [uuid.UUID(U1).bytes, None, uuid.UUID(U2).bytes, uuid.UUID(U2).bytes]
    lake = pa.table({"id": ids, "u": pa.ExtensionArray.from_storage(pa.uuid(), pa.array(raw, pa.binary(16)))})
    pq.write_table(lake, tmp_path / "uuid.parquet")
    for side in (rc.arrow(lake), rc.parquet(tmp_path / "uuid.parquet"), rc.arrow(lake.to_reader())):
        result = rc.compare(rc.postgres(pg, "odd"), side, key="id", columns=["u"], values=True)
        assert result.differences == 0, side
    wrong = lake.set_column(1, "u", pa.ExtensionArray.from_storage(pa.uuid(), pa.array(raw[::-1], pa.binary(16))))
    result = rc.compare(rc.postgres(pg, "odd"), rc.arrow(wrong), key="id", columns=["u"], values=True)
    assert _found(result) == [(k, "update", ("u",)) for k in (1, 2, 3, 4)]
    first = next(r for r in _rows(result) if r["id"] == 1)
    assert (first["source"], first["target"]) == ({"u": U1.lower()}, {"u": U2})


def test_values_no_spark_type_holds_are_refused_naming_the_column_and_a_key(pg):
    """A numeric NaN or Infinity, a numeric of more than 38 digits, a multi-dimensional array: the comparison
    fails with a ValueError naming the system, the column and the first key that holds one."""
    lake = pa.table({"id": pa.array([1, 2, 3, 4], pa.int64())})
    cases = [
        (["m"], pa.decimal128(6, 2), r"column 'm', key id=2: a numeric NaN has no Spark decimal value"),
        (["a"], pa.list_(pa.int32()), r"column 'a', key id=2: a multi-dimensional array, which no Spark array is"),
    ]
    for columns, arrow, message in cases:
        target = lake.append_column(columns[0], pa.array([None] * 4, arrow))
        with pytest.raises(ValueError, match=r"^PostgreSQL: PostgreSQL table bad .*: " + message):
            rc.compare(rc.postgres(pg, "bad"), rc.arrow(target), key="id", columns=columns)
    wide = lake.append_column("n", pa.array([None] * 4, pa.decimal128(38, 0)))
    with pytest.raises(ValueError, match=r"column 'n', key id=2: a numeric NaN"):
        rc.compare(rc.postgres(pg, "bad"), rc.arrow(wide), key="id", columns=["n"])
    # Without the NaN, the next problems of the column: a value of 41 digits, an Infinity.
    without_nan = "(SELECT * FROM bad WHERE id <> 2) AS b"
    with psycopg.connect(pg, autocommit=True) as conn:
        conn.execute(f"CREATE OR REPLACE VIEW bad_wide AS SELECT * FROM {without_nan}")
    with pytest.raises(ValueError, match=r"column 'n', key id=4: a numeric Infinity has no Spark decimal value"):
        rc.compare(rc.postgres(pg, "bad_wide"), rc.arrow(wide), key="id", columns=["n"])
    with psycopg.connect(pg, autocommit=True) as conn:
        conn.execute("CREATE OR REPLACE VIEW bad_wide AS SELECT * FROM bad WHERE id = 3")
    with pytest.raises(ValueError, match=r"column 'n', key id=3: a value of more than 38 digits"):
        rc.compare(rc.postgres(pg, "bad_wide"), rc.arrow(wide), key="id", columns=["n"])
    # Between two tables of the same types (their rows' texts), alike; the key named by its text.
    with pytest.raises(ValueError, match=r"column 'n', key k='z': a value of more than 38 digits"):
        rc.compare(rc.postgres(pg, "bad_wide"), rc.postgres(pg, "bad_wide"), key="k", columns=["n"])


def _every_physical_form() -> tuple[pa.Table, pa.Table]:
    """A key and columns of every physical form the engine takes, and a copy with three rows changed."""
    n = 200
    keys = [f"k{i:03d}" for i in range(n)]
    table = pa.table(
        {
            "k": pa.array(keys, pa.string_view()),
            "large": pa.array([f"v{i}" for i in range(n)], pa.large_string()),
            "dict": pa.array([f"d{i % 7}" for i in range(n)]).dictionary_encode(),
            "bin": pa.array([bytes([i % 256]) for i in range(n)], pa.binary_view()),
            "lst": pa.array([[f"x{i}", None] for i in range(n)], pa.list_(pa.string_view())),
            "st": pa.array([{"a": f"s{i}", "b": i} for i in range(n)], pa.struct([("a", pa.string_view()), ("b", pa.int64())])),
            "mp": pa.array([[("m", [bytes([i % 256])])] for i in range(n)], pa.map_(pa.string(), pa.list_(pa.binary_view()))),
            "fixed": pa.array([[i, i + 1] for i in range(n)], pa.list_(pa.int32(), 2)),
            "lview": pa.array([[f"w{i}"] for i in range(n)], pa.list_view(pa.string_view())),
            "nothing": pa.nulls(n),
        }
    )  # fmt: skip
    changed = table.to_pylist()
    changed[5]["lst"] = ["x5", "y"]
    changed[6]["st"] = {"a": "S6", "b": 6}
    changed[7]["mp"] = [("m", [b"\xff"])]
    changed[8]["lview"] = ["W8"]
    return table, pa.Table.from_pylist(changed, schema=table.schema)


def test_arrow_data_of_every_physical_form_passes_through_every_pass(pg):
    """View, large, dictionary, nested and fixed-size types as keys and values, sliced and in small chunks, from
    pyarrow, Polars and a DuckDB relation, with the values of the changed rows fetched."""
    table, changed = _every_physical_form()
    chunked = pa.Table.from_batches(changed.slice(1).to_batches(max_chunksize=7))
    chunked = pa.concat_tables([changed.slice(0, 1), chunked])
    result = rc.compare(rc.arrow(table), rc.arrow(chunked), key="k", values=True)
    assert _found_by(result, "k") == [("k005", "update", ("lst",)), ("k006", "update", ("st",)),
                                      ("k007", "update", ("mp",)), ("k008", "update", ("lview",))]  # fmt: skip
    update = next(r for r in result.changes().to_pylist() if r["k"] == "k006")
    assert update["source"]["st"] == {"a": "s6", "b": 6} and update["target"]["st"] == {"a": "S6", "b": 6}
    # Polars hands its strings over as views, at every depth; the key itself is a view type here.
    polars = pl.from_arrow(changed.drop_columns(["nothing", "fixed", "bin", "mp", "lview"]))
    result = rc.compare(rc.arrow(table.drop_columns(["nothing", "fixed", "bin", "mp", "lview"])), rc.arrow(polars),
                        key="k", values=True)  # fmt: skip
    assert _found_by(result, "k") == [("k005", "update", ("lst",)), ("k006", "update", ("st",))]
    relation = duckdb.connect().sql("SELECT k::VARCHAR AS k, large, lst FROM changed")
    result = rc.compare(rc.arrow(table.select(["k", "large", "lst"])), rc.arrow(relation), key="k", values=True)
    assert _found_by(result, "k") == [("k005", "update", ("lst",))]


def _found_by(result: rc.Result, key: str) -> list[tuple]:
    return sorted((r[key], r["change"], tuple(r["changed_columns"] or ())) for r in result.changes().to_pylist())


def test_a_column_of_nulls_alone_compares_as_nulls_of_any_type(pg, tmp_path):
    """pyarrow gives a column without a value type null; it compares as NULLs against a typed column."""
    with psycopg.connect(pg, autocommit=True) as conn:
        conn.execute("DROP TABLE IF EXISTS empties")
        conn.execute("CREATE TABLE empties (id bigint, d date, ts timestamp, v text)")
        conn.execute("INSERT INTO empties VALUES (1, NULL, NULL, NULL), (2, NULL, NULL, 'x')")
    lake = pa.table({"id": pa.array([1, 2], pa.int64()), "d": pa.nulls(2), "ts": pa.nulls(2), "v": pa.nulls(2)})
    pq.write_table(lake, tmp_path / "nulls.parquet")
    for side in (rc.arrow(lake), rc.parquet(tmp_path / "nulls.parquet")):
        result = rc.compare(rc.postgres(pg, "empties"), side, key="id")
        assert _found(result) == [(2, "update", ("v",))]
        assert {c.name: c.target_spark_type for c in result.schema}["d"] == "void"


def test_names_with_percent_signs_far_timestamps_and_duckdbs_null_columns(pg, tmp_path):
    """A column named with % (psycopg's placeholder sign); a timestamp PostgreSQL holds after Spark's last one,
    refused naming the column and key; DuckDB's type of a column of NULLs alone; numerics without a scale
    written with other scales compare by their record hashes, not their texts, in one pass."""
    with psycopg.connect(pg, autocommit=True) as conn:
        conn.execute('DROP TABLE IF EXISTS "odd %s", far, scales, scales_copy')
        conn.execute('CREATE TABLE "odd %s" (id bigint, "growth %" numeric(5,2), "x%s" text)')
        conn.execute("""INSERT INTO "odd %s" VALUES (1, 1.5, 'a'), (2, 2, 'b')""")
        conn.execute("CREATE TABLE far (id bigint, ts timestamp, tz timestamptz)")
        conn.execute("INSERT INTO far VALUES (1, '2020-01-01', '2020-01-01+00'), (2, '294276-12-31 23:59:59', NULL)")
        conn.execute("CREATE TABLE scales (id bigint, n numeric)")
        conn.execute("INSERT INTO scales SELECT i, i / 10.0 FROM generate_series(1, 500) AS i")
        conn.execute("CREATE TABLE scales_copy AS SELECT id, round(n, 5) AS n FROM scales")
    lake = pa.table({"id": pa.array([1, 2], pa.int64()), "growth %": pa.array([1.5, 2], pa.float64())})
    with pytest.raises(ValueError, match=r"'growth %': numeric\(5,2\) \(decimal\(5,2\)\) in the source"):
        rc.compare(rc.postgres(pg, '"odd %s"'), rc.arrow(lake), key="id", columns=["growth %"])
    lake = pa.table({"id": pa.array([1, 2], pa.int64()), "x%s": ["a", "B"]})
    result = rc.compare(rc.postgres(pg, '"odd %s"'), rc.arrow(lake), key="id", columns=["x%s"], values=True)
    assert _found(result) == [(2, "update", ("x%s",))]
    copy = pa.table({"id": pa.array([1, 2], pa.int64()), "ts": pa.array([None, None], pa.timestamp("us"))})
    with pytest.raises(ValueError, match=r"column 'ts', key id=2: a timestamp after 294247-01-10"):
        rc.compare(rc.postgres(pg, "far"), rc.arrow(copy), key="id", columns=["ts"])
    database = tmp_path / "nulls.duckdb"
    with duckdb.connect(str(database)) as con:
        con.register("rows", pa.table({"id": pa.array([1, 2], pa.int64()), "tz": pa.nulls(2)}))
        con.execute("CREATE TABLE t AS SELECT * FROM rows")
    result = rc.compare(rc.postgres(pg, "far"), rc.duckdb(database, "t"), key="id", columns=["tz"])
    assert _found(result) == [(1, "update", ("tz",))]
    said = []
    result = rc.compare(rc.postgres(pg, "scales"), rc.postgres(pg, "scales_copy"), key="id", progress=said.append)
    assert result.differences == 0 and result.stats["source"]["rows_fetched"] == 0
    assert not any("rows' texts" in line for line in said)
