"""The ``sql`` section of ``make bench``: hashexpr.sql's keys and row hashes inside DuckDB and PostgreSQL.

On the same mixed columns as the Spark sections (``--sql-rows`` rows, a table in each engine), the generated
``record_hash`` over the ten columns and ``record_key`` over a business key (``id``, and ``s`` trimmed and
upper-cased) run in rounds against the patterns they replace: ``md5(concat_ws('||', ...))`` and SHA-256 of the
same text, over the same columns (the key's text trimmed and upper-cased too). Every candidate is timed as
``SELECT sum(<length of the hash>) FROM (SELECT <hash> AS h FROM t)``, so each engine computes every row's hash
and returns one number. Then what the time is made of: each column alone under ``record_hash`` against
``md5`` of its text (one run each, after the rounds), PostgreSQL's ``EXPLAIN (ANALYZE, VERBOSE)`` and DuckDB's
profiler for the row hash. PostgreSQL runs on a server of its own (tests/postgres_server.py) on loopback.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable

from harness import HERE, MIXED, Result
from report import table

#: No Spark: a run of this section alone starts none.
SPARK = False

# The ten mixed columns of harness.MIXED, computed by each engine from the row number n (0-based):
# name -> (Spark SQL type, DuckDB expression, PostgreSQL expression).
_COLUMNS = {
    "id": ("bigint", "n", "n"),
    "i": ("int", "CAST(hash(n, 1) % 1000000 AS INTEGER)", "CAST(abs(hashint8extended(n, 1)) % 1000000 AS integer)"),
    "l": ("bigint", "CAST(hash(n, 2) >> 1 AS BIGINT) * (1 - 2 * (n % 2))", "hashint8extended(n, 2)"),
    "d": ("double", "CAST(hash(n, 3) % 2000000000 AS DOUBLE) / 1000 - 1000000",
          "CAST(hashint8extended(n, 3) % 2000000000 AS double precision) / 1000"),
    "s": ("string", "'customer_' || CAST(hash(n, 4) % 100000 AS VARCHAR)",
          "'customer_' || CAST(abs(hashint8extended(n, 4)) % 100000 AS text)"),
    "ns": ("string", "CASE WHEN hash(n, 5) % 10 = 0 THEN NULL ELSE 'note ' || to_hex(hash(n, 5)) END",
           "CASE WHEN abs(hashint8extended(n, 5)) % 10 = 0 THEN NULL ELSE 'note ' || to_hex(hashint8extended(n, 5)) END"),
    "dt": ("date", "DATE '2000-01-01' + CAST(hash(n, 6) % 10000 AS INTEGER)",
           "DATE '2000-01-01' + CAST(abs(hashint8extended(n, 6)) % 10000 AS integer)"),
    "ts": ("timestamp", "to_timestamp(946684800 + CAST(hash(n, 7) % 700000000 AS BIGINT))",
           "to_timestamp(946684800 + abs(hashint8extended(n, 7)) % 700000000)"),
    "dec": ("decimal(18,2)", "CAST(CAST(hash(n, 8) % 100000000 AS DECIMAL(18, 0)) / 100 AS DECIMAL(18, 2))",
            "CAST(abs(hashint8extended(n, 8)) % 100000000 / 100.0 AS numeric(18, 2))"),
    "b": ("boolean", "hash(n, 9) % 2 = 0", "hashint8extended(n, 9) % 2 = 0"),
}  # fmt: skip
KEY = {"salt": "customer", "trim": True, "case": "upper"}


def candidates(dialect: str) -> dict[str, tuple[str, str]]:
    """name -> (SQL of the hash, its kind: 'text' or 'bytes'), the generated ones first."""
    from hashexpr.sql import record_hash, record_key

    cols = list(_COLUMNS)
    text = "VARCHAR" if dialect == "duckdb" else "text"
    cast = [f"CAST({c} AS {text})" for c in cols]
    joined = f"concat_ws('||', {', '.join(cast)})"
    key_text = f"concat_ws('||', CAST(id AS {text}), upper(trim(s)))"
    as_bytes = (lambda t: t) if dialect == "duckdb" else (lambda t: f"convert_to({t}, 'UTF8')")
    return {
        "hashexpr.sql record_hash (10 columns)": (
            record_hash([(c, _COLUMNS[c][0]) for c in cols], dialect=dialect), "bytes"),
        "md5(concat_ws('||', ...)) (10 columns)": (f"md5({joined})", "text"),
        "sha256(concat_ws('||', ...)) (10 columns)": (f"sha256({as_bytes(joined)})", "text" if dialect == "duckdb" else "bytes"),
        "hashexpr.sql record_key (id, s; trim, upper, salt)": (
            record_key([("id", "bigint"), ("s", "string")], dialect=dialect, **KEY), "bytes"),
        "md5(concat_ws('||', id, upper(trim(s))))": (f"md5({key_text})", "text"),
        "sha256(concat_ws('||', id, upper(trim(s))))": (f"sha256({as_bytes(key_text)})",
                                                       "text" if dialect == "duckdb" else "bytes"),
    }  # fmt: skip


def _timed_query(dialect: str, expression: str, kind: str) -> str:
    length = "length" if dialect == "duckdb" and kind == "text" else "octet_length"
    return f"SELECT sum({length}(h)) FROM (SELECT {expression} AS h FROM t) AS hashed"


class _Engine:
    """One engine's connection, its table, and how it runs a query and explains one."""

    def __init__(self, dialect: str, run: Callable[[str], object], explain: Callable[[str], str]) -> None:
        self.dialect = dialect
        self.run = run
        self.explain = explain


def _duckdb(rows: int) -> tuple[_Engine, Callable[[], None]]:
    import duckdb

    connection = duckdb.connect()
    connection.execute("SET TimeZone = 'America/New_York'")
    columns = ", ".join(f"{e} AS {name}" for name, (_, e, _) in _COLUMNS.items())
    connection.execute(f"CREATE TABLE t AS SELECT {columns} FROM (SELECT range AS n FROM range({rows}))")

    def explain(query: str) -> str:
        # EXPLAIN ANALYZE runs the query under DuckDB's profiler and returns its tree with each operator's time.
        return "\n".join(str(row[-1]) for row in connection.execute(f"EXPLAIN ANALYZE {query}").fetchall())

    return _Engine("duckdb", lambda q: connection.execute(q).fetchall(), explain), connection.close


def _postgres(rows: int, server) -> tuple[_Engine, Callable[[], None]]:
    import psycopg

    connection = psycopg.connect(server.dsn, autocommit=True)
    connection.execute("SET TimeZone = 'America/New_York'")
    columns = ", ".join(f"{e} AS {name}" for name, (_, _, e) in _COLUMNS.items())
    connection.execute("DROP TABLE IF EXISTS t")
    connection.execute(
        f"CREATE UNLOGGED TABLE t AS SELECT {columns} FROM generate_series(0, {rows - 1}) AS n"
    )
    connection.execute("VACUUM ANALYZE t")

    def explain(query: str) -> str:
        plan = connection.execute(f"EXPLAIN (ANALYZE, VERBOSE, COSTS OFF) {query}").fetchall()
        return "\n".join(row[0] for row in plan)

    return _Engine("postgres", lambda q: connection.execute(q).fetchall(), explain), connection.close


def run(ctx) -> dict:
    ctx.sizes["sql (DuckDB and PostgreSQL tables)"] = (ctx.args.sql_rows, ", ".join(MIXED))
    return section_sql(ctx.args, ctx.log, Result)


def section_sql(args, log, result_cls) -> dict:
    """Time every candidate in DuckDB and in PostgreSQL; what each engine's row hash time is made of."""
    sys.path.insert(0, str(HERE.parent / "tests"))
    from postgres_server import postgres_server

    out: dict = {"rows": args.sql_rows, "engines": {}}
    with postgres_server() as server:
        for dialect in ("duckdb", "postgres"):
            t0 = time.perf_counter()
            engine, close = (
                _duckdb(args.sql_rows) if dialect == "duckdb" else _postgres(args.sql_rows, server)
            )
            log(f"  {dialect}: {args.sql_rows:,} rows loaded in {time.perf_counter() - t0:.1f} s")
            try:
                out["engines"][dialect] = _measure(engine, args, log, result_cls)
                if dialect == "postgres":
                    out["engines"][dialect]["version"] = engine.run("SHOW server_version")[0][0]
                else:
                    import duckdb

                    out["engines"][dialect]["version"] = duckdb.__version__
            finally:
                close()
    return out


def _measure(engine: _Engine, args, log, result_cls) -> dict:
    queries = {
        name: _timed_query(engine.dialect, sql, kind)
        for name, (sql, kind) in candidates(engine.dialect).items()
    }
    results = [result_cls(name, args.sql_rows) for name in queries]
    for res in results:
        for _ in range(args.warmup):
            res.found = engine.run(queries[res.name])[0][0]
    for _ in range(args.rounds):
        for res in results:
            t0 = time.perf_counter()
            engine.run(queries[res.name])
            res.times.append(time.perf_counter() - t0)
    for res in results:
        log(
            f"  {engine.dialect:<8} {res.name:<52} median {res.median:7.3f} s  runs {[round(t, 2) for t in res.times]}"
        )
    from hashexpr.sql import record_hash

    per_column = []
    text = "VARCHAR" if engine.dialect == "duckdb" else "text"
    for name, (dtype, _, _) in _COLUMNS.items():
        generated = _timed_query(
            engine.dialect, record_hash([(name, dtype)], dialect=engine.dialect), "bytes"
        )
        md5 = _timed_query(engine.dialect, f"md5(CAST({name} AS {text}))", "text")
        times = []
        for query in (generated, md5):
            t0 = time.perf_counter()
            engine.run(query)
            times.append(time.perf_counter() - t0)
        per_column.append((name, dtype, *times))
    log(f"  {engine.dialect}: per column " + ", ".join(f"{n} {g:.2f}/{m:.2f} s" for n, _, g, m in per_column))
    first = next(iter(queries.values()))
    return {"results": results, "per_column": per_column, "explain": engine.explain(first)}


def report(s: dict, targets: list[str], table: Callable) -> list[str]:
    """The section of RESULTS.md, and the target lines."""
    lines = [
        "## Portable SQL: hashexpr.sql in DuckDB and PostgreSQL",
        "",
        (
            f"{s['rows']:,} rows of the ten mixed columns in a table of each engine (DuckDB in process, PostgreSQL "
            "15 on loopback with its default settings; both on the machine's 2 cores). Each candidate is "
            "`SELECT sum(length(h)) FROM (SELECT <hash> AS h FROM t)`; candidates run in rounds after a warm-up. "
            "The md5/sha256 candidates cast every value to text and join with `concat_ws('||', ...)`, the pattern "
            "`record_hash` replaces (and the key's, `upper(trim(s))`, the usual Data Vault key). Ratio vs hx: above "
            "1 is slower than hashexpr.sql's candidate."
        ),
        "",
    ]
    for dialect, e in s["engines"].items():
        results = e["results"]
        engine = "DuckDB" if dialect == "duckdb" else "PostgreSQL"
        lines += [f"### {engine} {e['version']}", ""]
        lines += table(results[:3], results[0]) + [""] + table(results[3:], results[3]) + [""]
        row_hash, md5, sha = results[0], results[1], results[2]
        key, key_md5, key_sha = results[3], results[4], results[5]
        targets.append(
            f"- hashexpr.sql row hash within 3× of md5(concat_ws) in {engine}: "
            f"{'met' if row_hash.median <= 3 * md5.median else '**not met**'} "
            f"(record_hash {row_hash.median:.3f} s / md5 {md5.median:.3f} s = {row_hash.median / md5.median:.2f}×; "
            f"/ sha256 of the text {row_hash.median / sha.median:.2f}×)"
        )
        targets.append(
            f"- hashexpr.sql key within 3× of md5(concat_ws) in {engine}: "
            f"{'met' if key.median <= 3 * key_md5.median else '**not met**'} "
            f"(record_key {key.median:.3f} s / md5 {key_md5.median:.3f} s = {key.median / key_md5.median:.2f}×; "
            f"/ sha256 of the text {key.median / key_sha.median:.2f}×)"
        )
        lines += [
            f"Each column alone in {engine} (one run each): `record_hash` of it against `md5` of its text.",
            "",
            "| column | type | record_hash s | md5(text) s | ratio |",
            "|---|---|---:|---:|---:|",
        ]
        lines += [f"| {n} | {t} | {g:.3f} | {m:.3f} | {g / m:.2f} |" for n, t, g, m in e["per_column"]]
        lines += [
            "",
            f"<details><summary>{engine}: the row hash's plan with its timings</summary>",
            "",
            "```",
        ]
        lines += [_short(e["explain"]), "```", "", "</details>", ""]
    return lines


def _short(plan: str) -> str:
    """A plan without the expression texts, which run to kilobytes per column."""
    kept = []
    for line in plan.splitlines():
        if len(line) > 200:
            line = line[:200] + " …"
        kept.append(line)
    return "\n".join(kept[:60])


def render(args, s: dict, sections: dict, targets: list[str]) -> list[str]:
    return report(s, targets, table)
