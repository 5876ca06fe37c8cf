"""The ``reconcile_mysql`` section of ``make bench``: ``hashexpr reconcile`` between PostgreSQL and MariaDB against
reladiff 0.6.0 (its PostgreSQL ↔ MySQL mode) and the naive floor (pull both tables, join locally), and a
configuration of many tables against the sum of their single runs.

The data: bench/reconcile_tools.py's ten columns, ``--reconcile-mysql-rows`` rows, the source in a PostgreSQL
server and each changed copy (``--reconcile-fractions``: a quarter of the changes a string edited, a quarter a
double moved by one ulp, a quarter deleted, a quarter inserted) in a database of a MariaDB server
(tests/mariadb_server.py), both on loopback. Every candidate runs as a process of its own (``/usr/bin/time``
gives its peak RSS) and reports how many rows differ; the truth is known from the generation. The configuration:
``--reconcile-mysql-tables`` pairs of tables of ``--reconcile-mysql-table-rows`` rows each, 0.01 % changed,
compared by one ``--config`` run (two pairs at a time) and by one run per pair.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import reconcile_mariadb as maria
import reconcile_tools as tools
from harness import HERE

#: No Spark: a run of this section alone starts none.
SPARK = False

CANDIDATES = ("hashexpr reconcile", "reladiff", "naive")


def add_arguments(p) -> None:
    p.add_argument("--reconcile-mysql-rows", type=int, default=1_000_000, help="rows of the PostgreSQL ↔ MariaDB tables")
    p.add_argument("--reconcile-mysql-tables", type=int, default=20, help="pairs of tables of the --config run")
    p.add_argument("--reconcile-mysql-table-rows", type=int, default=50_000, help="rows of each of those tables")


def run(ctx) -> dict:
    args, log = ctx.args, ctx.log
    sys.path.insert(0, str(HERE.parent / "tests"))
    from mariadb_server import PASSWORD, USER, mariadb_server
    from postgres_server import postgres_server

    rows, fractions = args.reconcile_mysql_rows, [float(x) for x in args.reconcile_fractions.split(",") if x.strip()]
    ctx.sizes["reconcile (PostgreSQL ↔ MariaDB)"] = (rows, "id + " + ", ".join(tools.COLUMNS))
    root = Path(args.data_dir).resolve() / "reconcile" / str(rows)
    tools.make_data(root, rows, fractions, log)
    small = Path(args.data_dir).resolve() / "reconcile" / str(args.reconcile_mysql_table_rows)
    tools.make_data(small, args.reconcile_mysql_table_rows, [0.0001], log)
    log_dir = root.parent / "logs"
    log_dir.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, PYTHONPATH=str(HERE.parent / "python"), HX_TIME_FILE=str(log_dir / "time.txt"))
    reladiff = str(HERE.parent / ".venv-bench-reladiff" / "bin" / "reladiff")
    out: dict = {"cases": [], "drivers": {}, "config": {}}
    with postgres_server() as pg, mariadb_server() as maria_server:
        sources = tools.load_postgres(pg, root, rows, [], log)
        targets = maria.load(maria_server, root, [f"target-{f}" for f in fractions], log)
        settings = {"host": "127.0.0.1", "port": maria_server.port, "user": USER, "password": PASSWORD}
        pg_url = f"postgresql://{pg.user}@127.0.0.1:{pg.port}/{sources['source']}"
        maria_url = maria_server.url().rsplit("/", 1)[0]
        for fraction in fractions:
            database = targets[f"target-{fraction}"]
            case = {"rows": rows, "fraction": fraction, "truth": tools.truth(rows, fraction), "results": {}}
            commands = {
                "hashexpr reconcile": [sys.executable, "-m", "hashexpr", "reconcile", f"{pg_url}?table=t",
                                       f"{maria_url}/{database}?table=t", "--key", "id", "--json", "--quiet"],
                "reladiff": [reladiff, f"postgresql://{pg.user}:x@127.0.0.1:{pg.port}/{sources['source']}", "t",
                             f"mysql://{maria.PEER_USER}:{maria.PEER_PASSWORD}@127.0.0.1:{maria_server.port}/{database}", "t",
                             "-k", "id", *[a for c in tools.COLUMNS for a in ("-c", c)], "--threads", "2", "-s",
                             "-a", "hashdiff"],
                "naive": [sys.executable, str(HERE / "run.py"), "--reconcile-worker", json.dumps(
                    {"kind": "naive", "source": pg.dsn.replace("dbname=postgres", f"dbname={sources['source']}"),
                     "target": "mysql", "mysql": settings, "database": database})],
            }  # fmt: skip
            for candidate in CANDIDATES:
                if candidate == "reladiff" and not os.path.exists(reladiff):
                    continue
                result = _run(commands[candidate], args.reconcile_timeout, env)
                result["reported"] = _reported(candidate, result.pop("stdout", ""))
                case["results"][candidate] = result
                shown = "stopped" if result.get("seconds") is None else f"{result['seconds']:.1f} s"
                log(f"  reconcile_mysql {rows:,} rows {fraction:.2%}: {candidate} {shown}, reported "
                    f"{result['reported']} (truth {sum(case['truth'].values())}), {result.get('peak') or 0:,} B peak")  # fmt: skip
            out["cases"].append(case)
        found = maria.drivers(settings, targets[f"target-{fractions[0]}"], 100_000)
        out["drivers"] = {k: round(v, 3) if isinstance(v, float) else v for k, v in found.items()}
        log(f"  reconcile_mysql drivers, 100,000 rows: {out['drivers']}")
        out["config"] = _config(pg, maria_server, small, args, env, log)
    return out


def _run(command: list[str], timeout: float, env: dict) -> dict:
    import subprocess

    timing = Path(env["HX_TIME_FILE"])
    started = time.perf_counter()
    try:
        done = subprocess.run(["/usr/bin/time", "-f", "%M", "-o", str(timing), *command], capture_output=True,
                              text=True, timeout=timeout, env=env, stdin=subprocess.DEVNULL, check=False)  # fmt: skip
    except subprocess.TimeoutExpired:
        return {"seconds": None, "stopped": True, "stdout": ""}
    seconds = time.perf_counter() - started
    try:
        peak = int(timing.read_text().strip().splitlines()[-1]) * 1024
    except (OSError, ValueError, IndexError):
        peak = None
    return {"seconds": seconds if done.returncode == 0 else None, "peak": peak, "status": done.returncode,
            "stdout": done.stdout, "stderr": done.stderr[-500:]}  # fmt: skip


def _reported(candidate: str, stdout: str) -> int | None:
    if not stdout.strip():
        return None
    if candidate in ("hashexpr reconcile", "naive"):
        counts = json.loads(stdout.strip().splitlines()[-1])["counts"]
        return sum(v for k, v in counts.items() if k not in ("unchanged", "columns_only_in_source", "columns_only_in_target"))
    found = None
    for line in stdout.splitlines():
        words = line.split()
        if len(words) > 2 and words[1] == "rows" and words[2] in ("exclusive", "updated"):
            found = (found or 0) + int(words[0])
    return found


def _config(pg, maria_server, root: Path, args, env: dict, log) -> dict:
    """The same pair of tables ``--reconcile-mysql-tables`` times over: one --config run against single runs."""
    count = args.reconcile_mysql_tables
    sources = tools.load_postgres(pg, root, args.reconcile_mysql_table_rows, [], log, prefix="many_")
    targets = maria.load(maria_server, root, ["target-0.0001"], log, prefix="many_")
    pg_base = f"postgresql://{pg.user}@127.0.0.1:{pg.port}/{sources['source']}"
    maria_base = f"{maria_server.url().rsplit('/', 1)[0]}/{targets['target-0.0001']}"
    import psycopg

    # The tables t0 .. t{count-1}: views of the one loaded table, one each side.
    with psycopg.connect(pg.dsn.replace("dbname=postgres", f"dbname={sources['source']}"), autocommit=True) as conn:
        for i in range(count):
            conn.execute(f"CREATE OR REPLACE VIEW t{i} AS SELECT * FROM t")
    with maria_server.connect(targets["target-0.0001"]) as conn, conn.cursor() as cursor:
        for i in range(count):
            cursor.execute(f"CREATE OR REPLACE VIEW t{i} AS SELECT * FROM t")
    config = root / "tables.toml"
    config.write_text(f'[defaults]\nsource = "{pg_base}"\ntarget = "{maria_base}"\njobs = 2\n\n'
                      + "".join(f'[[tables]]\ntable = "t{i}"\nkey = "id"\n\n' for i in range(count)))  # fmt: skip
    many = _run([sys.executable, "-m", "hashexpr", "reconcile", "--config", str(config), "--json", "--quiet"],
                args.reconcile_timeout, env)  # fmt: skip
    singles = []
    for i in range(count):
        one = _run([sys.executable, "-m", "hashexpr", "reconcile", f"{pg_base}?table=t{i}", f"{maria_base}?table=t{i}",
                    "--key", "id", "--json", "--quiet"], args.reconcile_timeout, env)  # fmt: skip
        singles.append(one.get("seconds"))
    found = {"tables": count, "rows": args.reconcile_mysql_table_rows, "config": many.get("seconds"),
             "singles": None if None in singles else sum(singles), "peak": many.get("peak")}  # fmt: skip
    log(f"  reconcile_mysql --config of {count} pairs: {found['config']} s; {count} single runs: {found['singles']} s")
    return found


def render(args, result: dict, results: dict, targets: list[str]) -> list[str]:
    lines = ["## Reconcile: PostgreSQL ↔ MariaDB, against reladiff and the naive floor", "",
             __doc__.split("\n\n", 1)[1].replace("\n", " ").strip(), ""]  # fmt: skip
    for case in result["cases"]:
        truth = sum(case["truth"].values())
        lines += [f"### {case['rows']:,} rows, {case['fraction']:.2%} changed ({truth:,} rows differ)", "",
                  "| candidate | seconds | ratio vs hashexpr | peak RSS MB | differences |", "|---|---:|---:|---:|---:|"]  # fmt: skip
        ours = case["results"]["hashexpr reconcile"].get("seconds")
        for candidate, r in case["results"].items():
            seconds = r.get("seconds")
            shown = "stopped" if r.get("stopped") else ("failed" if seconds is None else f"{seconds:.1f}")
            ratio = f"{seconds / ours:.2f}×" if seconds and ours else "–"
            reported = r.get("reported")
            diff = "–" if reported is None else f"{reported:,}" + ("" if reported == truth else " ✗")
            peak = "–" if r.get("peak") is None else f"{r['peak'] / 1e6:,.0f}"
            name = f"**{candidate}**" if candidate == "hashexpr reconcile" else candidate
            lines.append(f"| {name} | {shown} | {ratio} | {peak} | {diff} |")
        lines.append("")
        peer = case["results"].get("reladiff", {}).get("seconds")
        if ours and peer:
            targets.append(
                f"- reconcile PostgreSQL ↔ MariaDB, {case['rows']:,} rows, {case['fraction']:.2%}: at most half "
                f"reladiff's time: {'met' if ours <= peer / 2 else '**not met**'} ({ours:.1f} s against {peer:.1f} s, "
                f"{ours / peer:.2f}×)"
            )
    drivers = result.get("drivers") or {}
    if drivers:
        lines += ["Reading 100,000 rows of the ten columns from MariaDB, the driver alone:", "",
                  "| driver | seconds |", "|---|---:|"]  # fmt: skip
        lines += [f"| {k} | {v:.2f} |" if isinstance(v, float) else f"| {k} | {v} |" for k, v in drivers.items()] + [""]
    config = result.get("config") or {}
    if config.get("config"):
        lines += [
            (f"A `--config` of {config['tables']} pairs of {config['rows']:,}-row tables (PostgreSQL ↔ MariaDB, 0.01 % "
            f"changed, two pairs at a time): {config['config']:.1f} s in one run, against {config['singles']:.1f} s for "
            f"the {config['tables']} single runs one after another ({config['config'] / config['singles']:.2f}×); "
            f"peak RSS {config['peak'] / 1e6:,.0f} MB."),
            "",
        ]
    return lines
