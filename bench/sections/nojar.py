"""The ``nojar`` section: hashexpr's Python API without the jar (the Arrow path: the Rust engine in PySpark's Arrow
UDFs and ``mapInArrow``) against the jar, on the ten mixed columns of the hash section.

Three runs, each candidate pair interleaved in rounds (bench/nojar_worker.py holds the candidates):

- classic: this bench's session (it has the jar), the engine forced per call with ``HASHEXPR_ENGINE``;
- Spark Connect: a server started with the jar and one started without (tests/servers.py), each ``local[2]``
  with ``--nojar-server-memory``, and a client in a process of its own;
- other Spark lines (``--nojar-lines``, Spark 3.5 by default): a classic session in the line's virtualenv
  (``.venv-3.5``, this checkout's hashexpr on ``PYTHONPATH``), a process of its own. PySpark 3.5 and 4.0 have no
  Arrow UDFs, so there the column functions hash row by row in plain Python UDFs (timed on ``--nojar-row-rows``
  rows, both engines) and ``with_metadata`` runs in ``mapInArrow``.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import nojar_worker as nw
from harness import HERE, MIXED, Result, fmt_times
from report import verdict

ROOT = HERE.parent
#: Arrow UDFs' rows per batch (spark.sql.execution.arrow.maxRecordsPerBatch's default): the batches the engine
#: is timed on alone.
UDF_BATCH_ROWS = 10_000
#: Rows of the sample the worker's hash_rows is timed on alone, in this process.
ENGINE_SAMPLE_ROWS = 1_000_000
#: The runs of the section (--nojar-runs).
RUNS = ("classic", "connect", "lines")
#: The target: record_hash through Arrow UDFs within this many times the jar's time, on Spark 4.1 and later.
TARGET = 3.0


def add_arguments(parser) -> None:
    parser.add_argument(
        "--nojar-rows",
        type=int,
        default=20_000_000,
        help="rows of the 10-column data the nojar section hashes and fingerprints",
    )
    parser.add_argument(
        "--nojar-row-rows",
        type=int,
        default=1_000_000,
        help="rows the nojar section's column functions hash where PySpark has no Arrow UDFs (row by row)",
    )
    parser.add_argument(
        "--nojar-diff-rows", type=int, default=2_000_000, help="rows a side of the nojar section's diff"
    )
    parser.add_argument(
        "--nojar-rounds", type=int, default=3, help="rounds of the nojar section's interleaved candidates"
    )
    parser.add_argument(
        "--nojar-runs",
        default=",".join(RUNS),
        help=f"which of the nojar section's runs ({', '.join(RUNS)}), comma-separated",
    )
    parser.add_argument(
        "--nojar-lines",
        default="3.5",
        help="other Spark lines the nojar section runs in (.venv-X.Y), comma-separated",
    )
    parser.add_argument(
        "--nojar-server-memory",
        default="4g",
        help="the heap of each of the nojar section's two Spark Connect servers",
    )
    parser.add_argument(
        "--nojar-functions",
        default=",".join(nw.FUNCTIONS),
        help=f"the nojar section's functions: {', '.join(nw.FUNCTIONS)}",
    )


def run(ctx) -> dict:
    args, log = ctx.args, ctx.log
    runs = {r.strip() for r in args.nojar_runs.split(",") if r.strip()}
    functions = [f.strip() for f in args.nojar_functions.split(",") if f.strip()]
    unknown = set(functions) - set(nw.FUNCTIONS)
    if unknown:
        raise SystemExit(
            f"--nojar-functions: unknown {sorted(unknown)}; choose from {', '.join(nw.FUNCTIONS)}"
        )
    if runs - set(RUNS):
        raise SystemExit(f"--nojar-runs: unknown {sorted(runs - set(RUNS))}; choose from {', '.join(RUNS)}")
    ctx.sizes["nojar (the 10-column data)"] = (args.nojar_rows, ", ".join(MIXED))
    if "diff" in functions:
        ctx.sizes["nojar diff (each side; new = old with 1 % changed)"] = (
            args.nojar_diff_rows,
            ", ".join(MIXED),
        )
    out = {"functions": functions, "parts": []}
    if "classic" in runs:
        out["parts"].append(classic(ctx, functions))
    if "connect" in runs:
        out["parts"].append(connect(args, log, [f for f in functions if f != "with_metadata"]))
    if "lines" in runs:
        for line in (x.strip() for x in args.nojar_lines.split(",") if x.strip()):
            out["parts"].append(other_line(args, log, line, [f for f in functions if f != "diff"]))
    return out


def classic(ctx, functions: list[str]) -> dict:
    """Both engines in this bench's session, interleaved; and the worker's hash_rows alone on a sample, here."""
    args, b, log = ctx.args, ctx.bench, ctx.log
    load = os.getloadavg()
    log(f"  classic: the jar against HASHEXPR_ENGINE=arrow in this session (Spark {ctx.spark.version})")
    meter = nw.CpuMeter(nw.jvm_pid(ctx.spark))
    pairs, cpu, failed = nw.measure(
        {"jar": ctx.spark, "arrow": ctx.spark},
        {"jar": meter, "arrow": meter},
        functions,
        args.nojar_rows,
        args.nojar_diff_rows,
        lambda cands: b.measure_rounds(cands, rounds=args.nojar_rounds),
        log,
        args.nojar_row_rows,
    )
    alone = None
    if any(f != "diff" for f in functions):
        sample = nw.data(ctx.spark, min(args.nojar_rows, ENGINE_SAMPLE_ROWS))
        alone = nw.engine_alone(sample, UDF_BATCH_ROWS, ENGINE_SAMPLE_ROWS)
        per_s = alone["rows"] / statistics.median(alone["times"])
        log(
            f"  the worker's hash_rows alone, 1 thread, batches of {UDF_BATCH_ROWS:,} rows: {per_s:,.0f} rows/s"
        )
    return {
        "title": f"classic, Spark {ctx.spark.version}, one session, HASHEXPR_ENGINE per call",
        "kind": "classic",
        "spark": ctx.spark.version,
        "load": [load, os.getloadavg()],
        "pairs": pairs,
        "cpu": cpu,
        "failed_functions": failed,
        "alone": alone,
    }


def _child(cmd: list[str], spec: dict, env: dict, log) -> dict | None:
    """Run a child process of the section on ``spec``; its result, or None (logged) when it fails."""
    with tempfile.TemporaryDirectory() as tmp:
        spec_path, out = Path(tmp) / "spec.json", Path(tmp) / "out.json"
        spec_path.write_text(json.dumps(spec))
        code = subprocess.run([*cmd, str(spec_path), str(out)], check=False, env=env, cwd=tmp).returncode
        if code != 0:
            log(f"  the run failed with exit code {code} (its log is above)")
            return None
        return json.loads(out.read_text())


def _from_child(title: str, kind: str, load, found: dict | None) -> dict:
    if found is None:
        return {"title": title, "kind": kind, "failed": True, "load": [load, os.getloadavg()]}
    pairs = [
        (r["function"], r["engine"], Result(r["name"], r["rows"], r["times"], found=r["found"]))
        for r in found["results"]
    ]
    cpu = {r["name"]: r["cpu"] for r in found["results"]}
    return {
        "title": title,
        "kind": kind,
        "spark": found["spark"],
        "load": [load, os.getloadavg()],
        "pairs": pairs,
        "cpu": cpu,
        "failed_functions": found["failed"],
        **({"detected": found["detected"]} if "detected" in found else {}),
    }


def connect(args, log, functions: list[str]) -> dict:
    """The jar's Connect server against a server without it, both started here, timed by a client of both."""
    sys.path.insert(0, str(ROOT / "tests"))
    from servers import connect_servers, spark_env

    import hashexpr as hx

    load = os.getloadavg()
    conf = {"spark.sql.shuffle.partitions": str(args.shuffle_partitions)}
    memory = args.nojar_server_memory
    env = {
        # The servers' Python workers run this interpreter, which has hashexpr and its engine.
        "PYSPARK_PYTHON": sys.executable,
        # Spark 4's launcher gives a Connect server the daemons' heap, not its --driver-memory.
        "SPARK_DAEMON_MEMORY": memory,
    }
    log(f"  Spark Connect: starting a server with the jar and one without (heap {memory} each)")
    with (
        tempfile.TemporaryDirectory() as logs,
        connect_servers(Path(logs), [[hx.jar_path()], []], conf=conf, env=env) as (with_jar, bare),
    ):
        spec = {
            "mode": "connect",
            "urls": {"jar": with_jar.url, "arrow": bare.url},
            # Each server's JVM, whose CPU time (and its Python workers') the client reads from /proc.
            "pids": {"jar": with_jar.process.popen.pid, "arrow": bare.process.popen.pid},
            "rows": args.nojar_rows,
            "row_rows": args.nojar_row_rows,
            "diff_rows": args.nojar_diff_rows,
            "functions": functions,
            "rounds": args.nojar_rounds,
            "warmup": args.warmup,
            "profiles": True,
        }
        found = _child(
            [sys.executable, str(HERE / "nojar_worker.py")],
            spec,
            spark_env({"PYTHONPATH": os.pathsep.join([str(ROOT / "python"), str(HERE)])}),
            log,
        )
    return _from_child(
        f"Spark Connect, a server with the jar against one without, {args.nojar_server_memory} each",
        "connect",
        load,
        found,
    )


def other_line(args, log, line: str, functions: list[str]) -> dict:
    """A classic session of another Spark line, in its virtualenv, both engines forced in turn."""
    python = ROOT / f".venv-{line}" / "bin" / "python"
    title = f"classic, Spark {line} (.venv-{line}), one session, HASHEXPR_ENGINE per call"
    load = os.getloadavg()
    if not python.exists():
        log(f"  Spark {line}: {python} is missing (`make venv-{line}` creates it); left out")
        return {
            "title": title,
            "kind": "line",
            "failed": True,
            "why": f"no .venv-{line}",
            "load": [load, load],
        }
    log(f"  Spark {line}: a classic session in .venv-{line}, this checkout's hashexpr")
    spec = {
        "mode": "classic",
        "rows": args.nojar_rows,
        "row_rows": args.nojar_row_rows,
        "diff_rows": args.nojar_diff_rows,
        "functions": functions,
        "rounds": args.nojar_rounds,
        "warmup": args.warmup,
        "driver_memory": args.driver_memory,
        "shuffle_partitions": args.shuffle_partitions,
    }
    env = dict(
        os.environ,
        PYTHONPATH=os.pathsep.join([str(ROOT / "python"), str(HERE)]),
        PYSPARK_PYTHON=str(python),
        SPARK_LOCAL_IP="127.0.0.1",
    )
    env.pop("SPARK_HOME", None)  # the line's own pyspark, not this one's
    found = _child([str(python), str(HERE / "nojar_worker.py")], spec, env, log)
    return _from_child(title, "line", load, found)


def _pairs(part: dict) -> dict[str, dict[str, Result]]:
    by: dict[str, dict[str, Result]] = {}
    for function, eng, res in part["pairs"]:
        by.setdefault(function, {})[eng] = res
    return by


def _cpu(part: dict, res: Result) -> tuple[float, float]:
    """The median CPU seconds of a candidate's runs: its JVM's and its Python workers'."""
    runs = part["cpu"].get(res.name) or [[float("nan"), float("nan")]]
    return statistics.median(r[0] for r in runs), statistics.median(r[1] for r in runs)


def _cpu_text(cpu: tuple[float, float]) -> str:
    return f"{sum(cpu):.1f} ({cpu[0]:.1f} + {cpu[1]:.1f})"


def render(args, s: dict, sections: dict, targets: list[str]) -> list[str]:
    diff = (
        f"; the diff: {args.nojar_diff_rows:,} rows a side, 1 % of the keys changed"
        if "diff" in s["functions"]
        else ""
    )
    lines = [
        "## Without the jar: the Arrow path against the jar",
        "",
        (
            "Each of hashexpr's functions once with the jar and once through the Arrow path (the Rust engine in "
            "PySpark's `arrow_udf` columns, PySpark 4.1 and later, and `mapInArrow`; before 4.1, column functions "
            "row by row in plain Python UDFs), over the same cached "
            f"10-column data ({args.nojar_rows:,} rows{diff}), interleaved in {args.nojar_rounds} round(s) after "
            f"{args.warmup} warm-up. Arrow / jar "
            "is the ratio of the medians (above 1: the Arrow path is slower). CPU s: the median CPU seconds of a "
            "run, the Spark JVM's (driver and executors) + its Python workers' (from /proc), whose ratio a busy "
            "machine disturbs less than wall time's. Same result: the warm-up's digest of every hash (the sum of "
            "their xxhash64), the fingerprint or the diff's counts, equal on both engines. The profiles move the "
            "same rows to the Python workers and back with nothing hashed: an `arrow_udf` of every column and "
            "the `typeof` of their struct (what `record_hash(*)` sends) that returns 16 zero bytes a row, and a "
            "`mapInArrow` over every column that counts the rows (what `dataset_fingerprint` sends, and as it "
            "does with Spark 4's check of each batch's bytes turned off for the job)."
        ),
        "",
    ]
    ok_all, record_hash = True, []
    for part in s["parts"]:
        lines += [f"### {part['title']}", ""]
        load = part["load"]
        if part.get("failed"):
            ok_all = False
            lines += [f"Not measured: {part.get('why', 'the run failed (see the bench log)')}.", ""]
            continue
        lines += [
            (
                "| function | rows | jar (s) | Arrow path (s) | Arrow / jar | Arrow rows/s | jar CPU s (JVM + Python) "
                "| Arrow CPU s (JVM + Python) | Arrow / jar, CPU | same result | runs jar; Arrow (s) |"
            ),
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|:---:|---|",
        ]
        by = _pairs(part)
        for function in nw.FUNCTIONS:
            pair = by.get(function)
            if not pair:
                continue
            jar, arrow = pair["jar"], pair["arrow"]
            same = jar.found == arrow.found
            ok_all &= same
            ratio = arrow.median / jar.median
            jar_cpu, arrow_cpu = _cpu(part, jar), _cpu(part, arrow)
            if function == "record_hash":
                record_hash.append((part, ratio, sum(arrow_cpu) / sum(jar_cpu)))
            lines.append(
                f"| {nw.LABELS[function]} | {jar.rows:,} | {jar.median:.3f} | {arrow.median:.3f} | **{ratio:.2f}×** | "
                f"{arrow.rows_per_s:,.0f} | {_cpu_text(jar_cpu)} | {_cpu_text(arrow_cpu)} | "
                f"{sum(arrow_cpu) / sum(jar_cpu):.2f}× | {'yes' if same else '**no**'} | "
                f"{fmt_times(jar.times)}; {fmt_times(arrow.times)} |"
            )
        for kind in nw.PROFILES:
            if kind in by:
                r = by[kind]["arrow"]
                base = _base(by, r.rows)
                cpu = _cpu(part, r)
                vs = f"{r.median / base.median:.2f}×" if base else "–"
                vs_cpu = f"{sum(cpu) / sum(_cpu(part, base)):.2f}×" if base else "–"
                lines.append(
                    f"| {nw.PROFILES[kind]} | {r.rows:,} | – | {r.median:.3f} | {vs} | {r.rows_per_s:,.0f} | – | "
                    f"{_cpu_text(cpu)} | {vs_cpu} | – | {fmt_times(r.times)} |"
                )
        lines.append("")
        notes = [f"Load average (1 min) {load[0][0]:.2f} at the start, {load[1][0]:.2f} at the end."]
        bases = [_base(by, by[kind]["arrow"].rows) for kind in nw.PROFILES if kind in by]
        named = sorted({b.name.split("  ")[0] for b in bases if b is not None})
        if named:
            notes.append(f"The profiles' ratios are to the jar's {' and '.join(named)}.")
        if part.get("detected"):
            chosen = ", ".join(
                f"{v} on the server {'with' if k == 'jar' else 'without'} the jar"
                for k, v in part["detected"].items()
            )
            notes.append(f"Unforced, `hx.engine` chose {chosen}.")
        if part.get("alone"):
            a = part["alone"]
            per_s = a["rows"] / statistics.median(a["times"])
            notes.append(
                f"What a Python worker does for record_hash(*), alone (`hashexpr.spark.arrow_path.worker.hash_rows`: the type "
                f"check, the engine, the cast; in the bench's process, 1 thread, batches of {a['batch_rows']:,} rows "
                f"as the Arrow UDF gets them, a {a['rows']:,}-row sample): {per_s:,.0f} rows/s a core, "
                f"{1e9 / per_s:.0f} ns a row."
            )
        for group, error in part.get("failed_functions", {}).items():
            ok_all = False
            notes.append(f"**Failed**, so not timed: {group} ({error}).")
        if not _at_least(part["spark"], (4, 1)) and any(f in by for f in nw.COLUMN_FUNCTIONS):
            notes.append(
                f"PySpark {part['spark']} has no arrow_udf: without the jar, its column functions hash row by row "
                f"in plain Python UDFs, timed on {args.nojar_row_rows:,} rows."
            )
        lines += [" ".join(notes), ""]
    for part, ratio, cpu_ratio in record_hash:
        if _at_least(part["spark"], (4, 1)):
            where = "over Spark Connect" if part["kind"] == "connect" else "classic"
            targets.append(
                f"- without the jar, record_hash ≤ {TARGET:.0f}× the jar's time ({where}, Spark {part['spark']}): "
                f"{verdict(ratio <= TARGET)} ({ratio:.2f}×; in CPU seconds {cpu_ratio:.2f}×)"
            )
    if s["parts"]:
        unmeasured = [p["title"] for p in s["parts"] if p.get("failed") or p.get("failed_functions")]
        targets.append(
            f"- without the jar, every function gives the jar's result: {verdict(ok_all)}"
            + (f" (not measured in: {'; '.join(unmeasured)})" if unmeasured else "")
        )
    return lines


def _base(by: dict[str, dict[str, Result]], rows: int) -> Result | None:
    """The jar's candidate a profile of ``rows`` rows is compared with: record_hash's, or dataset_fingerprint's
    where record_hash ran on other rows (row by row, before PySpark 4.1)."""
    for function in ("record_hash", "dataset_fingerprint"):
        jar = by.get(function, {}).get("jar")
        if jar is not None and jar.rows == rows:
            return jar
    return None


def _at_least(version: str, line: tuple[int, int]) -> bool:
    return tuple(int(x) for x in version.split(".")[:2]) >= line
