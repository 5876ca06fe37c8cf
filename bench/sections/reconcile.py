"""The ``reconcile`` section of ``make bench``: ``hashexpr reconcile`` against reladiff 0.6.0, data-diff 0.11.2 and
the naive floor (pull both tables, join locally), PostgreSQL against PostgreSQL, DuckDB and Parquet.

The data: ``--reconcile-rows`` rows of the ten mixed columns (bench/sections/sql.py's kinds: bigint key, int,
bigint, double, two strings, date, timestamp with time zone, decimal(18,2), boolean), generated once in DuckDB
and loaded into a PostgreSQL server of its own on loopback (tests/postgres_server.py; the source in one database,
each changed copy in another, ``PRIMARY KEY (id)``), a DuckDB file and a Parquet file. A copy at each of
``--reconcile-fractions`` has that fraction of the keys changed: a quarter of the changes a string edited, a
quarter a double moved by one ulp, a quarter deleted, a quarter inserted.

Every candidate runs as a process of its own (``/usr/bin/time`` gives its peak RSS), once per case, its
PostgreSQL connections through a byte-counting proxy on loopback (bytes transferred both ways), and PostgreSQL's
``pg_stat_user_tables`` gives the rows each side read (as table scans: rows read / table rows). The peers get
their best settings: two threads, the hash algorithm (cross-database), a DuckDB view for a Parquet file. Each
reports how many rows differ; the truth is known from the generation.
"""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import reconcile_tools as tools
from harness import HERE

#: No Spark: a run of this section alone starts none.
SPARK = False
WORKER = "reconcile_worker"

PAIRS = {
    "pg-pg": "PostgreSQL ↔ PostgreSQL",
    "pg-duckdb": "PostgreSQL ↔ DuckDB",
    "pg-parquet": "PostgreSQL ↔ Parquet",
}
PEERS = ("reladiff", "data-diff", "naive")


def add_arguments(p) -> None:
    p.add_argument(
        "--reconcile-rows", default="1000000,10000000", help="rows of the reconcile tables, comma-separated"
    )
    p.add_argument("--reconcile-fractions", default="0,0.0001,0.01", help="changed fractions of the keys")
    p.add_argument("--reconcile-pairs", default=",".join(PAIRS), help=f"pairs: {', '.join(PAIRS)}")
    p.add_argument(
        "--reconcile-peers", default=",".join(PEERS), help=f"peers besides hashexpr: {', '.join(PEERS)}"
    )
    p.add_argument(
        "--reconcile-timeout", type=float, default=1200, help="seconds before a candidate is stopped"
    )
    p.add_argument(
        "--reconcile-worker", dest="reconcile_worker", default=None, help=__import__("argparse").SUPPRESS
    )


def _fractions(args) -> list[float]:
    return [float(x) for x in args.reconcile_fractions.split(",") if x.strip()]


# --- candidates ---------------------------------------------------------------------------------------------


class _Proxy:
    """A byte-counting TCP proxy to the PostgreSQL server, in a process of its own (bench/run.py's worker)."""

    def __init__(self, target_port: int, log_dir: Path) -> None:
        self.port = _free_port()
        self.counts = log_dir / f"proxy-{self.port}.json"
        spec = json.dumps(
            {"kind": "proxy", "listen": self.port, "target": target_port, "counts": str(self.counts)}
        )
        self.process = subprocess.Popen(
            [sys.executable, str(HERE / "run.py"), "--reconcile-worker", spec], stdin=subprocess.DEVNULL
        )
        deadline = time.time() + 30
        while time.time() < deadline:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return
            except OSError:
                time.sleep(0.1)
        raise RuntimeError("the reconcile proxy did not start")

    def read(self) -> int:
        """Bytes forwarded both ways since the last read."""
        self.process.send_signal(signal.SIGUSR1)
        time.sleep(0.3)
        return int(json.loads(self.counts.read_text())["bytes"]) if self.counts.exists() else 0

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=30)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _scans(server, database: str) -> int:
    """Rows PostgreSQL read from table t so far (sequential and index reads)."""
    import psycopg

    with psycopg.connect(
        server.dsn.replace("dbname=postgres", f"dbname={database}"), autocommit=True
    ) as conn:
        row = conn.execute(
            "SELECT coalesce(seq_tup_read, 0) + coalesce(idx_tup_fetch, 0) FROM pg_stat_user_tables WHERE relname = 't'"
        ).fetchone()
    return int(row[0])


def _commands(
    candidate: str, pair: str, urls: dict, files: dict, venvs: dict, columns: list[str]
) -> list[str]:
    target_kind = pair.split("-")[1]
    cols = [a for c in columns for a in ("-c", c)]
    if candidate == "hashexpr reconcile":
        target = {
            "pg": urls["target_hx"],
            "duckdb": f"duckdb:{files['duckdb']}?table=t",
            "parquet": files["parquet"],
        }
        return [sys.executable, "-m", "hashexpr", "reconcile", urls["source_hx"], target[target_kind], "--key", "id",
                "--json", "--quiet"]  # fmt: skip
    if candidate == "naive":
        spec = {"kind": "naive", "source": urls["source_dsn"], "target": target_kind,
                "target_dsn": urls["target_dsn"], "duckdb": files["duckdb"], "parquet": files["parquet"]}  # fmt: skip
        return [sys.executable, str(HERE / "run.py"), "--reconcile-worker", json.dumps(spec)]
    db = {"pg": (urls["target_peer"], "t"), "duckdb": (f"duckdb://{files['duckdb']}", "t"),
          "parquet": (f"duckdb://{files['duckdb']}", "t_parquet")}[target_kind]  # fmt: skip
    if candidate == "reladiff":
        return [venvs["reladiff"], urls["source_peer"], "t", *db, "-k", "id", *cols, "--threads", "2", "-s",
                "-a", "hashdiff"]  # fmt: skip
    return [venvs["data-diff"], urls["source_peer"], "t", *db, "-k", "id", *cols, "-j", "2", "--stats",
            "-a", "hashdiff", "--no-tracking"]  # fmt: skip


def _reported(candidate: str, stdout: str) -> int | None:
    """The rows a candidate reports as different."""
    if candidate in ("hashexpr reconcile", "naive"):
        report = json.loads(stdout.strip().splitlines()[-1])
        counts = report["counts"]
        return sum(v for k, v in counts.items() if k != "unchanged")
    found = 0
    seen = False
    for line in stdout.splitlines():
        words = line.split()
        if len(words) > 2 and words[1] == "rows" and words[2] in ("exclusive", "updated"):
            found += int(words[0])
            seen = True
    return found if seen else None


def _server_cpu(server) -> float:
    """CPU seconds the PostgreSQL server has spent: its postmaster's and every ended backend's (a backend's time
    reaches its parent's when it ends)."""
    pid = int((Path(server.socket_dir) / "data" / "postmaster.pid").read_text().split()[0])
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return sum(int(f) for f in fields[11:15]) / os.sysconf("SC_CLK_TCK")


def _run_candidate(command: list[str], timeout: float, env: dict) -> dict:
    timing = Path(env["HX_TIME_FILE"])
    started = time.perf_counter()
    try:
        done = subprocess.run(
            ["/usr/bin/time", "-f", "%M %U %S", "-o", str(timing), *command],
            capture_output=True, text=True, timeout=timeout, env=env, stdin=subprocess.DEVNULL, check=False,
        )  # fmt: skip
    except subprocess.TimeoutExpired:
        return {"seconds": None, "stopped": True}
    seconds = time.perf_counter() - started
    peak = cpu = None
    try:
        kilobytes, user, system = timing.read_text().strip().splitlines()[-1].split()
        peak, cpu = int(kilobytes) * 1024, float(user) + float(system)
    except (OSError, ValueError, IndexError):
        pass
    return {"seconds": seconds, "peak": peak, "cpu": cpu, "status": done.returncode, "stdout": done.stdout,
            "stderr": done.stderr[-2000:]}  # fmt: skip


def run(ctx) -> dict:
    args, log = ctx.args, ctx.log
    sizes = [int(x) for x in args.reconcile_rows.split(",") if x.strip()]
    fractions = _fractions(args)
    pairs = [p for p in args.reconcile_pairs.split(",") if p.strip()]
    peers = [p for p in args.reconcile_peers.split(",") if p.strip()]
    venvs = {
        "reladiff": str(HERE.parent / ".venv-bench-reladiff" / "bin" / "reladiff"),
        "data-diff": str(HERE.parent / ".venv-bench-datadiff" / "bin" / "data-diff"),
    }
    peers = [p for p in peers if p == "naive" or os.path.exists(venvs[p])]
    ctx.sizes["reconcile (PostgreSQL, DuckDB, Parquet)"] = (max(sizes), "id + " + ", ".join(tools.COLUMNS))
    out: dict = {"cases": [], "peers": peers, "duckdb_engines": None}
    data_root = Path(args.data_dir).resolve() / "reconcile"
    log_dir = data_root / "logs"
    log_dir.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, PYTHONPATH=str(HERE.parent / "python"), HX_TIME_FILE=str(log_dir / "time.txt"))
    # A terminated bench stops its PostgreSQL server and proxy on the way out.
    previous = signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    try:
        _run_sizes(sizes, fractions, pairs, peers, venvs, data_root, log_dir, env, out, args, log)
    finally:
        signal.signal(signal.SIGTERM, previous)
    return out


def _run_sizes(sizes, fractions, pairs, peers, venvs, data_root, log_dir, env, out, args, log) -> None:
    sys.path.insert(0, str(HERE.parent / "tests"))
    from postgres_server import postgres_server

    for rows in sizes:
        root = data_root / str(rows)
        tools.make_data(root, rows, fractions, log)
        with postgres_server() as server:
            databases = tools.load_postgres(server, root, rows, fractions, log)
            proxy = _Proxy(server.port, log_dir)
            try:
                if out["duckdb_engines"] is None:
                    out["duckdb_engines"] = _duckdb_engines(root, log)
                for fraction in fractions:
                    for pair in pairs:
                        out["cases"].append(
                            _case(
                                server,
                                proxy,
                                databases,
                                root,
                                rows,
                                fraction,
                                pair,
                                peers,
                                venvs,
                                args,
                                env,
                                log,
                            )
                        )
            finally:
                proxy.stop()


def _case(server, proxy, databases, root, rows, fraction, pair, peers, venvs, args, env, log) -> dict:
    target_db = databases[f"target-{fraction}"]
    base = f"127.0.0.1:{proxy.port}"
    urls = {
        "source_hx": f"postgresql://{server.user}@{base}/{databases['source']}?table=t",
        "target_hx": f"postgresql://{server.user}@{base}/{target_db}?table=t",
        # data-diff wants a password in the URL; the server trusts loopback and ignores it.
        "source_peer": f"postgresql://{server.user}:x@{base}/{databases['source']}",
        "target_peer": f"postgresql://{server.user}:x@{base}/{target_db}",
        "source_dsn": f"host=127.0.0.1 port={proxy.port} user={server.user} dbname={databases['source']}",
        "target_dsn": f"host=127.0.0.1 port={proxy.port} user={server.user} dbname={target_db}",
    }
    stem = root / f"target-{fraction}"
    files = {"duckdb": f"{stem}.duckdb", "parquet": f"{stem}.parquet"}
    case = {
        "rows": rows,
        "fraction": fraction,
        "pair": pair,
        "truth": tools.truth(rows, fraction),
        "results": {},
    }
    for candidate in ["hashexpr reconcile", *peers]:
        columns, dropped = list(tools.COLUMNS), []
        while True:
            proxy.read()
            before = (
                _scans(server, databases["source"]),
                _scans(server, target_db) if pair == "pg-pg" else 0,
            )
            command = _commands(candidate, pair, urls, files, venvs, columns)
            server_cpu = _server_cpu(server)
            load = os.getloadavg()[0]
            result = _run_candidate(command, args.reconcile_timeout, env)
            # The machine is shared: the 1-minute load average before and after says how busy it was.
            result["load"] = (load, os.getloadavg()[0])
            # reladiff and data-diff refuse some column pairs (a DuckDB DATE): compared again without them.
            refused = re.search(
                r"Incompatible types for column '(\w+)'", result.get("stdout", "") + result.get("stderr", "")
            )
            if refused is None or refused.group(1) not in columns:
                break
            columns.remove(refused.group(1))
            dropped.append(refused.group(1))
        result["without"] = dropped
        time.sleep(1)  # the backends' statistics reach pg_stat when they end
        result["server_cpu"] = _server_cpu(server) - server_cpu
        after = (_scans(server, databases["source"]), _scans(server, target_db) if pair == "pg-pg" else 0)
        result["bytes"] = proxy.read()
        result["scans"] = [(a - b) / rows for a, b in zip(after, before)]
        if result.get("seconds") is not None and result.get("status") == 0:
            try:
                result["reported"] = _reported(candidate, result["stdout"])
            except (ValueError, KeyError, IndexError):
                result["reported"] = None
            if candidate == "hashexpr reconcile":
                result["stats"] = json.loads(result["stdout"].strip().splitlines()[-1])["stats"]
        result.pop("stdout", None)
        if result.get("status") not in (0, None):
            log(f"    {candidate} failed ({result['status']}): {result.get('stderr', '')[-300:]}")
        case["results"][candidate] = result
        shown = "stopped" if result.get("seconds") is None else f"{result['seconds']:.1f} s"
        log(
            f"  reconcile {rows:,} rows {fraction:.2%} {pair}: {candidate} {shown}, reported {result.get('reported')}"
            f" (truth {sum(case['truth'].values())}), {result.get('peak', 0) or 0:,} B peak, {result['bytes']:,} B moved"
        )
    return case


def _duckdb_engines(root: Path, log) -> dict:
    """One pass over the DuckDB file's source table three ways: hashexpr.sql's duckdb dialect, the Rust engine's
    functions registered in DuckDB, and DuckDB's rows as Arrow through the engine (what reconcile does)."""
    import duckdb

    from hashexpr import arrow as hxa
    from hashexpr import reconcile as rc
    from hashexpr import sql as hsql
    from hashexpr.reconcile.columns import plan

    path = str(root / "source.duckdb")
    types = [("id", "bigint"), ("i", "int"), ("l", "bigint"), ("d", "double"), ("s", "string"), ("ns", "string"),
             ("dt", "date"), ("ts", "timestamp"), ("dec", "decimal(18,2)"), ("b", "boolean")]  # fmt: skip
    names = [n for n, _ in types]
    found = {}
    con = duckdb.connect(path, read_only=True)
    key, row = (
        hsql.record_key([("id", "bigint")], dialect="duckdb"),
        hsql.record_hash(types, dialect="duckdb"),
    )
    queries = {"hashexpr.sql duckdb dialect": f"SELECT sum(octet_length(k) + octet_length(h)) FROM "
                                              f"(SELECT {key} AS k, {row} AS h FROM t)"}  # fmt: skip
    hxa.register(con, "hx_key", ["BIGINT"], function="record_key", algorithm="sha256")
    hxa.register(con, "hx_row", con.sql("SELECT * FROM t").types, algorithm="sha256")
    queries["Rust engine registered in DuckDB"] = (
        f"SELECT sum(octet_length(hx_key(id)) + octet_length(hx_row({', '.join(names)}))) FROM t"
    )
    for name, query in queries.items():
        t0 = time.perf_counter()
        con.execute(query).fetchall()
        found[name] = time.perf_counter() - t0
    con.close()
    source = rc.duckdb(path, "t")
    source.open()
    try:
        side = plan(source.columns(), source.columns(), ["id"], None, ("a", "b")).side("source")
        t0 = time.perf_counter()
        source.aggregate(side, 17, None)
        found["DuckDB → Arrow → Rust engine (reconcile's first pass, with its aggregates)"] = (
            time.perf_counter() - t0
        )
    finally:
        source.close()
    for name, seconds in found.items():
        log(f"  reconcile DuckDB engines: {name} {seconds:.2f} s")
    return found


# --- the worker: the proxy and the naive floor --------------------------------------------------------------


def reconcile_worker(args, log) -> None:
    spec = json.loads(args.reconcile_worker)
    if spec["kind"] == "proxy":
        tools.serve_proxy(spec)
    else:
        tools.naive(spec)


# --- the report ---------------------------------------------------------------------------------------------


def _mb(value) -> str:
    return "–" if value is None else f"{value / 1e6:,.1f}"


def render(args, result: dict, results: dict, targets: list[str]) -> list[str]:
    lines = [
        "## Reconcile: hashexpr reconcile against reladiff, data-diff and the naive floor",
        "",
        __doc__.split("\n\n", 1)[1].replace("\n", " ").strip(),
        "",
        (
            "Scans: rows PostgreSQL read from each side's table divided by its rows (index and sequential reads; "
            "`pg_stat_user_tables`), source / target. Differences: rows the tool reports as inserted, deleted or "
            "updated, against the truth."
        ),
        "",
    ]
    cases = result["cases"]
    for rows in sorted({c["rows"] for c in cases}):
        for fraction in sorted({c["fraction"] for c in cases if c["rows"] == rows}):
            block = [c for c in cases if c["rows"] == rows and c["fraction"] == fraction]
            truth_total = sum(block[0]["truth"].values())
            lines += [f"### {rows:,} rows, {fraction:.2%} changed ({truth_total:,} rows differ)", "",
                      ("| pair | candidate | seconds | ratio vs hashexpr | CPU s: tool + PostgreSQL | peak RSS MB | "
                       "MB moved | PostgreSQL scans | differences | load avg |"),
                      "|---|---|---:|---:|---:|---:|---:|---|---:|---|"]  # fmt: skip
            for case in block:
                ours = case["results"]["hashexpr reconcile"].get("seconds")
                for candidate, r in case["results"].items():
                    seconds = r.get("seconds")
                    shown = f"> {args.reconcile_timeout:.0f} (stopped)" if r.get("stopped") else (
                        "failed" if r.get("status") else f"{seconds:.1f}")  # fmt: skip
                    ratio = f"{seconds / ours:.2f}x" if seconds and ours and not r.get("status") else "–"
                    scans = " / ".join(
                        f"{s:.2f}" for s in r.get("scans", [])[: 2 if case["pair"] == "pg-pg" else 1]
                    )
                    reported = r.get("reported")
                    diff = (
                        "–"
                        if reported is None
                        else f"{reported:,}" + ("" if reported == truth_total else " ✗")
                    )
                    name = f"**{candidate}**" if candidate == "hashexpr reconcile" else candidate
                    if r.get("without"):
                        name += f" (refuses {', '.join(r['without'])}: compared without it)"
                    cpu = "–" if r.get("cpu") is None else f"{r['cpu']:.1f} + {r.get('server_cpu', 0):.1f}"
                    lines.append(f"| {PAIRS[case['pair']]} | {name} | {shown} | {ratio} | {cpu} | {_mb(r.get('peak'))} | "
                                 f"{_mb(r.get('bytes'))} | {scans} | {diff} | {_load(r.get('load'))} |")  # fmt: skip
            lines.append("")
    engines = result.get("duckdb_engines") or {}
    if engines:
        lines += ["DuckDB, one pass over the source table (hashing the key and the ten columns with SHA-256):", "",
                  "| how | seconds |", "|---|---:|"] + [f"| {k} | {v:.2f} |" for k, v in engines.items()] + [""]  # fmt: skip
    _targets(result, targets)
    return lines


def _load(load) -> str:
    return "–" if not load else f"{load[0]:.1f}–{load[1]:.1f}"


def _seconds(cases, rows, fraction, pair, candidate):
    for c in cases:
        if (c["rows"], c["fraction"], c["pair"]) == (rows, fraction, pair):
            r = c["results"].get(candidate, {})
            return r.get("seconds") if not r.get("status") else None
    return None


def _targets(result: dict, targets: list[str]) -> None:
    cases = result["cases"]
    sizes = sorted({c["rows"] for c in cases})
    if 1_000_000 in sizes:
        ours = _seconds(cases, 1_000_000, 0.0001, "pg-pg", "hashexpr reconcile")
        peer = _seconds(cases, 1_000_000, 0.0001, "pg-pg", "reladiff")
        if ours and peer:
            targets.append(
                f"- reconcile PostgreSQL ↔ PostgreSQL, 1M rows, 0.01 %: at most half reladiff's time: "
                f"{'met' if ours <= peer / 2 else '**not met**'} ({ours:.1f} s against {peer:.1f} s, {ours / peer:.2f}×)"
            )
        duck = _seconds(cases, 1_000_000, 0.0001, "pg-duckdb", "hashexpr reconcile")
        if ours and duck:
            targets.append(
                f"- reconcile PostgreSQL ↔ DuckDB within 1.2× of PostgreSQL ↔ PostgreSQL (1M rows, 0.01 %): "
                f"{'met' if duck <= 1.2 * ours else '**not met**'} ({duck:.1f} s against {ours:.1f} s)"
            )
    for c in cases:
        if c["rows"] >= 10_000_000 and c["fraction"] == 0.0001:
            peak = c["results"]["hashexpr reconcile"].get("peak")
            if peak:
                targets.append(
                    f"- reconcile peak memory under 500 MB at {c['rows']:,} rows, 0.01 %, {PAIRS[c['pair']]}: "
                    f"{'met' if peak < 500e6 else '**not met**'} ({peak / 1e6:.0f} MB)"
                )
