"""PostgreSQL's row texts printed by the Rust engine (``hashexpr.reconcile.texts``), checked against a real
PostgreSQL server, the oracle: thousands of values of every printable type (random float and real bit patterns,
the limits of fixed-point output, BC dates and years past 9999, fractional seconds, strings that need quotes,
empty and NULL values) are loaded into the server, which prints each row's text under reconcile's settings; the
engine prints the same values from Arrow data, and the SHA-256 and ``hashtextextended`` of both texts must
agree.
Then a comparison of PostgreSQL against DuckDB, Parquet and Arrow data of those values aggregates by the texts
and finds exactly the planted changes, with no segment differing for any other row.
"""

from __future__ import annotations

import decimal
import math
import random
import struct

import duckdb
import numpy as np
import psycopg
import pyarrow as pa
import pytest
from reconcile_data import duckdb_table, write_parquet

from hashexpr import reconcile as rc
from hashexpr._native import postgres_row_digests
from hashexpr.reconcile.postgres import _TEXT_SETTINGS

ROWS = 3000
DAY_MICROS = 86_400_000_000


def _doubles(rng: random.Random) -> list[float | None]:
    edges = [0.0, -0.0, 1.0, -1.5, 0.1, 1e-4, 9.999e-5, 1e-5, 1e15, 1e15 - 1, 999_999_999_999_999.9,
             123_456_789_012_345.0, 1e16, 2.0**53, 1e100, 1.25e-300, 5e-324, 2.2250738585072014e-308,
             1.7976931348623157e308, math.inf, -math.inf, math.nan, 100.0, 0.30000000000000004]  # fmt: skip
    values: list[float | None] = [*edges, None]
    while len(values) < ROWS:
        bits = rng.getrandbits(64)
        value = struct.unpack("<d", bits.to_bytes(8, "little"))[0]
        if math.isfinite(value):
            values.append(value)
        values.append(round(rng.uniform(-1e6, 1e6), rng.randint(0, 6)))
    return values[:ROWS]


def _reals(rng: random.Random) -> list[float | None]:
    edges = [0.0, -0.0, 0.1, 123_456.0, 999_999.0, 1e6, 1_234_567.0, 1e-4, 1e-5, 3.4028234663852886e38,
             1.401298464324817e-45, math.inf, math.nan]  # fmt: skip
    values: list[float | None] = [float(np.float32(v)) for v in edges] + [None]
    while len(values) < ROWS:
        value = float(np.frombuffer(rng.getrandbits(32).to_bytes(4, "little"), np.float32)[0])
        if math.isfinite(value):
            values.append(value)
    return values[:ROWS]


def _strings(rng: random.Random) -> list[str | None]:
    alphabet = 'ab Z,()"\\\t\n\r\x0b\x0c{}é日本🙂;-'
    edges = ["", " ", "NULL", "a,b", '"', "\\", "(x)", "tab\there", "plain", "ÉCOLE"]
    values: list[str | None] = [*edges, None]
    while len(values) < ROWS:
        values.append("".join(rng.choice(alphabet) for _ in range(rng.randint(0, 12))))
    return values


def _micros(rng: random.Random) -> list[int | None]:
    edges = [0, -1, 1, 999_999, -DAY_MICROS, -62_135_596_800_000_000, -62_135_596_800_000_001,
             253_402_300_799_999_999, 253_402_300_800_000_000, -210_000_000_000_000_000,
             9_000_000_000_000_000_000]  # fmt: skip
    values: list[int | None] = [*edges, None]
    while len(values) < ROWS:
        values.append(
            rng.choice(
                [
                    rng.randint(-2_208_988_800_000_000, 4_102_444_800_000_000),  # 1900 to 2100
                    rng.randint(-62_135_596_800_000_000, 253_402_300_799_999_999),  # years 1 to 9999
                    rng.randint(-210_000_000_000_000_000, 9_200_000_000_000_000_000),  # all PostgreSQL holds
                ]
            )
        )
    return values


def _columns() -> dict[str, tuple[str, str, pa.Array, list]]:
    """name -> (PostgreSQL type, kind, Arrow values, the values as PostgreSQL is given them)."""
    rng = random.Random(20261127)
    doubles, reals, strings, micros = _doubles(rng), _reals(rng), _strings(rng), _micros(rng)
    days = [None, 0, -1, -719_528, -719_529, -719_162, 2_932_896, 2_932_897, -2_440_000, 2_000_000_000]
    days += [rng.randint(-2_440_000, 2_000_000_000) for _ in range(ROWS - len(days))]
    ints = [None, 0, -1, 2**63 - 1, -(2**63)] + [rng.randint(-(2**63), 2**63 - 1) for _ in range(ROWS - 5)]
    unsigned = [None, 0, 2**64 - 1] + [rng.randint(0, 2**64 - 1) for _ in range(ROWS - 3)]
    wide = [None, decimal.Decimal(0), decimal.Decimal("-0.0000000001")]
    wide += [decimal.Decimal(rng.randint(-(10**28), 10**28)).scaleb(-10) for _ in range(ROWS - 3)]
    cents = [None, decimal.Decimal("0.00"), decimal.Decimal("-0.05"), decimal.Decimal("1.50")]
    cents += [decimal.Decimal(rng.randint(-(10**16), 10**16)).scaleb(-2) for _ in range(ROWS - 4)]
    blobs = [None, b"", b"\x00", b"\\x"] + [rng.randbytes(rng.randint(0, 9)) for _ in range(ROWS - 4)]
    flags = [None, True, False] + [rng.random() < 0.5 for _ in range(ROWS - 3)]
    return {
        "d": ("double precision", "double", pa.array(doubles, pa.float64()), doubles),
        "f_as_d": ("double precision", "double", pa.array(reals, pa.float32()), reals),
        "r": ("real", "real", pa.array(reals, pa.float32()), reals),
        "r_as_d": ("real", "real", pa.array(reals, pa.float64()), reals),
        "i": ("bigint", "integer", pa.array(ints, pa.int64()), ints),
        "u": ("numeric(20,0)", "numeric:0", pa.array(unsigned, pa.uint64()), unsigned),
        "n": ("numeric(38,10)", "numeric:10", pa.array(wide, pa.decimal128(38, 10)), wide),
        "n4": ("numeric(20,4)", "numeric:4", pa.array(cents, pa.decimal128(18, 2)), cents),
        "s": ("text", "text", pa.array(strings, pa.string()), strings),
        "s_large": ("varchar", "text", pa.array(strings, pa.large_string()), strings),
        "b": ("bytea", "bytea", pa.array(blobs, pa.binary()), blobs),
        "flag": ("boolean", "boolean", pa.array(flags, pa.bool_()), flags),
        "day": ("date", "date", pa.array(days, pa.date32()), days),
        "ts": ("timestamp", "timestamp", pa.array(micros, pa.timestamp("us")), micros),
        "tstz": ("timestamptz", "timestamptz", pa.array(micros, pa.timestamp("us", tz="UTC")), micros),
        "tstz_ms": (
            "timestamptz",
            "timestamptz",
            pa.array(
                [None if m is None else m // 1000 for m in micros], pa.timestamp("ms", tz="Europe/Paris")
            ),
            [None if m is None else m // 1000 * 1000 for m in micros],
        ),
    }


def _load(conn: psycopg.Connection, table: str, columns: dict, ids: list[int]) -> None:
    """The values into ``table``, each converted exactly in the server: floats as float8, decimals and
    unsigned integers as text, dates as day numbers, timestamps as microseconds (whole days, then the rest)."""
    conn.execute(f"DROP TABLE IF EXISTS {table}")
    conn.execute(
        f"CREATE TABLE {table} (id bigint, " + ", ".join(f"{n} {t}" for n, (t, *_) in columns.items()) + ")"
    )
    conn.execute("SET TimeZone = 'UTC'")
    given, converted, params = ["id"], ["u.id"], [ids]
    for name, (pg_type, kind, _, values) in columns.items():
        given.append(name)
        if kind in ("double", "real"):
            params.append(values)
            converted.append(f"CAST(u.{name} AS {pg_type})")
            given[-1] += " float8"
        elif kind.startswith("numeric"):
            params.append([None if v is None else str(v) for v in values])
            converted.append(f"CAST(u.{name} AS {pg_type})")
            given[-1] += " text"
        elif kind == "date":
            params.append(values)
            converted.append(f"DATE '1970-01-01' + u.{name}")
            given[-1] += " integer"
        elif kind.startswith("timestamp"):
            params.append(values)
            zero = (
                "TIMESTAMPTZ '1970-01-01 00:00:00+00'" if kind == "timestamptz" else "TIMESTAMP '1970-01-01'"
            )
            converted.append(
                f"{zero} + (u.{name} / {DAY_MICROS}) * INTERVAL '1 day' + (u.{name} %% {DAY_MICROS}) * INTERVAL '1 microsecond'"
            )
            given[-1] += " bigint"
        else:
            params.append(values)
            converted.append(f"u.{name}")
            given[-1] += " " + pg_type
    types = [g.split(" ", 1)[1] if " " in g else "bigint" for g in given]
    unnest = ", ".join(f"CAST(%s AS {t}[])" for t in types)
    names = ", ".join(g.split(" ", 1)[0] for g in given)
    conn.execute(
        f"INSERT INTO {table} SELECT {', '.join(converted)} FROM unnest({unnest}) AS u({names})", params
    )


@pytest.fixture(scope="module")
def printed(postgres):
    columns = _columns()
    ids = list(range(ROWS))
    conn = psycopg.connect(postgres.dsn, autocommit=True)
    _load(conn, "hx_texts", columns, ids)
    for name, value in _TEXT_SETTINGS:
        conn.execute(f"SET {name} = '{value}'")
    yield conn, columns
    conn.close()


COLUMNS = list(_columns())


def _digest(columns: str) -> str:
    """The server's digest of a row's text: the first 16 bytes of its SHA-256."""
    return f"substring(sha256(convert_to(CAST(ROW({columns}) AS text), 'UTF8')) from 1 for 16)"


@pytest.mark.parametrize("name", COLUMNS)
def test_the_engine_prints_each_value_as_postgresql_does(printed, name):
    """Per value: the SHA-256 and hashtextextended of ``(value)`` as the server prints it and as the engine does."""
    conn, columns = printed
    _, kind, array, values = columns[name]
    rows = conn.execute(
        f"SELECT CAST(ROW({name}) AS text), {_digest(name)}, "
        f"hashtextextended(CAST(ROW({name}) AS text), 0) FROM hx_texts ORDER BY id"
    ).fetchall()
    keys, digests = postgres_row_digests(pa.record_batch([array], names=[name]), [0], [kind], 1)
    keys = np.frombuffer(keys, "<i8")
    digests = np.frombuffer(digests, np.uint8).reshape(-1, 16)
    wrong = [
        (i, text, values[i])
        for i, (text, digest, key) in enumerate(rows)
        if digests[i].tobytes() != digest or int(keys[i]) != key
    ]
    assert not wrong, (
        f"{len(wrong)} of {ROWS} printed otherwise, e.g. (row, server's text, value): {wrong[:5]}"
    )


def test_a_row_of_every_column_and_its_key_print_alike(printed):
    """Whole rows: the key's text (two columns) and the row's text (every column, NULLs between commas)."""
    conn, columns = printed
    names = list(columns)
    rows = conn.execute(
        f"SELECT {_digest(', '.join(names))}, "
        f"hashtextextended(CAST(ROW({names[0]}, {names[8]}) AS text), 0) FROM hx_texts ORDER BY id"
    ).fetchall()
    order = [names[0], names[8], *[n for n in names if n not in (names[0], names[8])]]
    batch = pa.record_batch([columns[n][2] for n in order], names=order)
    at = {n: i for i, n in enumerate(order)}
    keys, digests = postgres_row_digests(
        batch,
        [at[names[0]], at[names[8]], *[at[n] for n in names[1:8]]],
        [columns[n][1] for n in [names[0], names[8], *names[1:8]]],
        2,
    )
    # The row's text lists the columns in the table's order: print it that way, the key's from its own call.
    _, row_digests = postgres_row_digests(batch, [at[n] for n in names], [columns[n][1] for n in names], 1)
    keys = np.frombuffer(keys, "<i8")
    digests = np.frombuffer(row_digests, np.uint8).reshape(-1, 16)
    assert [int(k) for k in keys] == [key for _, key in rows]
    assert [d.tobytes() for d in digests] == [digest for digest, _ in rows]


def _planted(columns: dict) -> tuple[pa.Table, pa.Table, dict]:
    """The values as an Arrow table with a key, and a copy with planted changes; the truth."""
    table = pa.table({"id": pa.array(range(ROWS), pa.int64()), **{n: c[2] for n, c in columns.items()}})
    changed = {n: list(c[3]) for n, c in columns.items() if n in ("d", "tstz", "s", "s_large")}
    d = changed["d"].index(1.0)
    changed["d"][d] = math.nextafter(1.0, 2.0)  # one ulp
    t = next(i for i, m in enumerate(changed["tstz"]) if i > 100 and m is not None)
    changed["tstz"][t] += 1  # one microsecond
    s = changed["s"].index("plain")
    changed["s"][s] = "Plain"  # case only
    changed["s_large"][200] = "" if changed["s_large"][200] is None else None  # NULL is not ''
    changed["d"][0] = -0.0  # no change: -0.0 is 0.0 (row 0 holds 0.0)
    new = table
    for name, values in changed.items():
        new = new.set_column(
            new.schema.get_field_index(name), name, pa.array(values, table.schema.field(name).type)
        )
    new = new.filter(pa.array([i != 300 for i in range(ROWS)]))
    truth = {"deleted": {300}, "updated": {d: ["d"], t: ["tstz"], s: ["s"], 200: ["s_large"]}}
    return table, new, truth


@pytest.fixture(scope="module")
def planted(printed, tmp_path_factory):
    _, columns = printed
    old, new, truth = _planted(columns)
    root = tmp_path_factory.mktemp("texts")
    write_parquet(new, str(root / "new.parquet"))
    database = str(root / "new.duckdb")
    with duckdb.connect(database) as con:
        duckdb_table(con, "t", new)
    return {"old": old, "new": new, "truth": truth, "parquet": root / "new.parquet", "duckdb": database}


@pytest.mark.parametrize("system", ["duckdb", "parquet", "arrow"])
def test_postgresql_against_arrow_data_compares_row_texts(postgres, planted, system):
    """Every planted change found, by the rows' texts, and no other segment differs: the two systems printed
    every other row of the 3,000 alike."""
    other = {
        "duckdb": lambda: rc.duckdb(planted["duckdb"], "t"),
        "parquet": lambda: rc.parquet(planted["parquet"]),
        "arrow": lambda: rc.arrow(planted["new"]),
    }[system]()
    said: list[str] = []
    result = rc.compare(rc.postgres(postgres.dsn, "hx_texts"), other, key="id", progress=said.append)
    assert any("prints its rows as PostgreSQL does" in s for s in said), said
    changes = result.changes().to_pylist()
    updated = {r["id"]: r["changed_columns"] for r in changes if r["change"] == "update"}
    assert updated == planted["truth"]["updated"]
    assert {r["id"] for r in changes if r["change"] == "delete"} == planted["truth"]["deleted"]
    assert result.counts["inserted"] == 0
    # The planted rows' segments and the -0.0 row's (its text differs, its encoding does not).
    assert result.stats["levels"][0]["differing"] <= len(planted["truth"]["updated"]) + 2


def test_postgresql_as_the_target_of_arrow_data(postgres, planted):
    """The other way round: the Arrow data is the source."""
    result = rc.compare(rc.arrow(planted["new"]), rc.postgres(postgres.dsn, "hx_texts"), key="id")
    assert result.counts["inserted"] == 1 and result.counts["updated"] == len(planted["truth"]["updated"])
