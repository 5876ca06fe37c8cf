"""`make bench`: hashexpr against the usual alternatives, side by side in one local Spark.

Every candidate runs on the same cached DataFrame, once as a warm-up and then ``--runs`` times (the row-hash and
fingerprint candidates in rounds, each once per round, so that they share the machine's slow spells); the report gives
the median wall time, rows per second, the ratio to hashexpr's own candidate and the JVM's GC time and bytes
allocated during the run (local mode: driver and executor share one JVM, so the JVM-wide counters are the
executor's). Sections: ``hash`` (10 mixed columns), ``wide`` (50/100/200 columns), ``nested`` (arrays, maps,
structs), ``fingerprint``, ``arrow`` (hashexpr.arrow, the Rust engine, against Spark and Python peers), ``nojar``
(the Python API without the jar, the Arrow path, against the jar: classic, Spark Connect, Spark 3.5), ``diff``
and ``sql`` (hashexpr.sql in DuckDB and PostgreSQL, no Spark). See ``bench/README.md``. Benchmarks are not
tests: nothing here asserts.

    python bench/run.py [--rows N] [--wide-rows N] [--runs N] [--only hash,diff] [--out bench/RESULTS.md]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import sections
from harness import HERE, Bench, Context, build_spark, cache, mixed
from report import merge_report, render
from sections import SECTIONS


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rows", type=int, default=2_000_000, help="rows of the 10-column data (hash section)")
    p.add_argument("--wide-rows", type=int, default=300_000, help="rows of the 200-column data")
    p.add_argument(
        "--nested-rows", type=int, default=None, help="rows of the nested data (default: --rows / 2)"
    )
    p.add_argument(
        "--fingerprint-rows", type=int, default=None, help="rows for the fingerprint (default: --rows)"
    )
    p.add_argument(
        "--diff-sizes", default="2000000,8000000", help="rows a side of the diff snapshots, comma-separated"
    )
    p.add_argument("--diff-rounds", type=int, default=3, help="rounds of the interleaved diff candidates")
    p.add_argument(
        "--data-dir",
        default=str(HERE.parent / "target" / "bench-data"),
        help="where the Parquet snapshots are written once and reused",
    )
    p.add_argument(
        "--scale-rows", default="2000000,8000000,20000000", help="rows of the scaling runs, comma-separated"
    )
    p.add_argument(
        "--scale-driver-memory",
        default="1g",
        help="driver memory of the Spark that runs the scaling section (local mode: the executors' heap)",
    )
    p.add_argument(
        "--plot-out", default=str(HERE / "scaling.png"), help="the scaling plot (PNG; '' for none)"
    )
    p.add_argument("--scale-worker", default=None, help=argparse.SUPPRESS)
    p.add_argument(
        "--cluster-rows",
        type=int,
        default=2_000_000,
        help="rows a side of the snapshots the cluster section diffs",
    )
    p.add_argument(
        "--cluster-workers", type=int, default=2, help="one-core workers of the standalone cluster"
    )
    p.add_argument(
        "--cluster-executor-memory", default="2g", help="memory of each executor (and worker) of the cluster"
    )
    p.add_argument("--cluster-worker", default=None, help=argparse.SUPPRESS)
    p.add_argument("--master", default="local[2]", help=argparse.SUPPRESS)
    p.add_argument("--diff-fractions", default="0.00001,0.01,0.1", help="changed fractions, comma-separated")
    p.add_argument("--udf-rows", type=int, default=100_000, help="sample rows for the Python UDF")
    p.add_argument(
        "--stream-rows",
        type=int,
        default=20_000_000,
        help="rows of the Parquet file the arrow section streams",
    )
    p.add_argument(
        "--sql-rows",
        type=int,
        default=1_000_000,
        help="rows of the sql section's table in DuckDB and PostgreSQL",
    )
    p.add_argument("--runs", type=int, default=3, help="timed runs per candidate (median reported)")
    p.add_argument(
        "--rounds",
        type=int,
        default=7,
        help="rounds of the interleaved row-hash and fingerprint candidates (one timed run of each per round)",
    )
    p.add_argument("--warmup", type=int, default=1, help="untimed warm-up runs per candidate")
    p.add_argument(
        "--only",
        action="append",
        default=None,
        help=f"sections to run (repeat or comma-separate): {', '.join(SECTIONS)}",
    )
    p.add_argument("--no-datacompy", action="store_true", help="leave datacompy out of the diff section")
    p.add_argument(
        "--peer-runs",
        type=int,
        default=1,
        help="timed runs, without warm-up, of the slowest diff peers (exceptAll, datacompy); 0: as --runs",
    )
    p.add_argument("--out", default=str(HERE / "RESULTS.md"), help="the Markdown report ('' for none)")
    p.add_argument(
        "--codegen-out",
        default=str(HERE / "codegen-record_hash.txt"),
        help="where EXPLAIN CODEGEN of the record_hash query goes ('' for nowhere)",
    )
    p.add_argument("--driver-memory", default="6g")
    p.add_argument("--shuffle-partitions", type=int, default=8)
    for name in SECTIONS:
        if hasattr(sections.load(name), "add_arguments"):
            sections.load(name).add_arguments(p)
    args = p.parse_args(argv)
    only = {s.strip() for o in (args.only or [",".join(SECTIONS)]) for s in o.split(",") if s.strip()}
    unknown = only - set(SECTIONS)
    if unknown:
        p.error(f"unknown section(s) {sorted(unknown)}; choose from {', '.join(SECTIONS)}")
    args.only = [s for s in SECTIONS if s in only]
    args.nested_rows = args.nested_rows or max(args.rows // 2, 1)
    args.fingerprint_rows = args.fingerprint_rows or args.rows
    args.fractions = [float(x) for x in args.diff_fractions.split(",") if x.strip()]
    args.diff_sizes = [int(x) for x in args.diff_sizes.split(",") if x.strip()]
    args.scale_rows = [int(x) for x in args.scale_rows.split(",") if x.strip()]
    return args


def main(argv=None) -> int:
    args = parse_args(argv)
    started = time.perf_counter()

    def log(msg: str) -> None:
        print(f"[{time.perf_counter() - started:6.0f} s] {msg}", flush=True)

    for name in SECTIONS:
        # bench/run.py as a section's child process (scale_worker, cluster_worker).
        worker = getattr(sections.load(name), "WORKER", None)
        if worker and getattr(args, worker):
            getattr(sections.load(name), worker)(args, log)
            return 0
    if not sections.needs_spark(args.only):
        spark, b = None, None
        log(f"sections: {', '.join(args.only)} (no Spark)")
    else:
        spark = build_spark(args)
        log(f"Spark {spark.version} up, sections: {', '.join(args.only)}")
        b = Bench(spark, args.runs, args.warmup, log, rounds=args.rounds)
    ctx = Context(args, spark, b, log)
    results = {}
    shared, rest, cached = sections.run_order(args.only, args)
    if cached:
        log("section data: 10 mixed columns")
        ctx.mixed = cache(mixed(spark, args.rows), "10-column data", log)
    for name in shared:
        log(f"section {name}")
        results[name] = sections.load(name).run(ctx)
    if ctx.mixed[0] is not None:
        ctx.mixed[0].unpersist()
        ctx.mixed = (None, 0)
    for name in rest:
        log(f"section {name}")
        results[name] = sections.load(name).run(ctx)

    report = render(
        args,
        spark,
        ctx.sizes,
        started,
        lambda targets: sections.render(args, results, targets),
        lambda: sections.appendix(args, results),
    )
    out = Path(args.out) if args.out else None
    if out is not None and set(args.only) != set(SECTIONS) and out.exists():
        # A run of some sections updates their part of the report, keeping the rest.
        report = merge_report(out.read_text(), report)
    if out is not None:
        out.write_text(report + "\n")
        log(f"wrote {args.out}")
    else:
        print(report)
    if spark is not None:
        spark.stop()
    log("done")
    return 0


if __name__ == "__main__":
    sys.exit(main())
