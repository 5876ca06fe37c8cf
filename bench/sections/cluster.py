"""The ``cluster`` section: the diff section's candidates on a standalone cluster on loopback (a master and
one-core workers, tests/servers.py), with the driver in a process of its own: ``bench/run.py --cluster-worker``."""

from __future__ import annotations

import sys
from pathlib import Path

from harness import HERE, MIXED, Bench, Result, build_spark
from report import table

from sections.diff import diff_profile, diff_targets, make_new, section_diff

#: The hidden flag of bench/run.py (an attribute of its args) that makes it this section's driver, and the function
#: that process runs.
WORKER = "cluster_worker"


def run(ctx) -> dict:
    from snapshots import MORE_COLUMNS

    args, log = ctx.args, ctx.log
    ctx.sizes[f"cluster, Parquet files (each side), {args.cluster_rows:,} rows"] = (
        args.cluster_rows,
        f"{', '.join(MIXED)}, {', '.join(MORE_COLUMNS)}",
    )
    return section_cluster(args, log)


def section_cluster(args, log) -> dict:
    """The diff candidates on a standalone cluster: a master and ``--cluster-workers`` one-core workers on
    loopback, each with an executor of ``--cluster-executor-memory``, so every shuffle crosses processes.

    The application's driver runs as a subprocess (this process already has a local SparkContext); the cluster is
    stopped, executors included, when the section ends or fails.
    """
    import json
    import subprocess
    import tempfile

    sys.path.insert(0, str(HERE.parent / "tests"))
    from servers import spark_env, standalone_cluster

    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        log(
            f"  starting a standalone master and {args.cluster_workers} one-core workers on loopback "
            f"(executor memory {args.cluster_executor_memory})"
        )
        with standalone_cluster(
            work / "cluster", workers=args.cluster_workers, worker_memory=args.cluster_executor_memory
        ) as cluster:
            out = work / "cluster.json"
            cmd = [
                sys.executable,
                str(HERE / "run.py"),
                "--cluster-worker",
                str(out),
                "--master",
                cluster.master_url,
                "--driver-memory",
                "2g",
                "--cluster-executor-memory",
                args.cluster_executor_memory,
                "--data-dir",
                args.data_dir,
                "--cluster-rows",
                str(args.cluster_rows),
                "--diff-fractions",
                args.diff_fractions,
                "--diff-rounds",
                str(args.diff_rounds),
                "--warmup",
                str(args.warmup),
                "--shuffle-partitions",
                str(args.shuffle_partitions),
            ]
            code = subprocess.run(cmd, check=False, env=spark_env()).returncode
            if code != 0:
                # Reported as such; the other sections' results are kept.
                log(f"  the cluster runs failed with exit code {code} (their log is above)")
                return {"failed": f"the driver exited with code {code}"}
            result = json.loads(out.read_text())
    result["cases"] = {
        (c["rows"], c["fraction"]): {
            **c,
            "results": [Result(r["name"], r["rows"], r["times"], found=r["found"]) for r in c["results"]],
        }
        for c in result["cases"]
    }
    for case in result["cases"].values():
        for key, i in case.pop("index").items():
            case[key] = case["results"][i]
    return result


def cluster_worker(args, log) -> None:
    """The driver of the cluster section (see :func:`section_cluster`); results go to ``args.cluster_worker``."""
    import json

    from snapshots import snapshot_set

    spark = build_spark(args)
    b = Bench(spark, runs=args.diff_rounds, warmup=args.warmup, log=log, rounds=args.diff_rounds)
    ss = snapshot_set(spark, Path(args.data_dir), args.cluster_rows, args.fractions, MIXED, make_new, log)
    per_case = section_diff(
        b, {args.cluster_rows: ss}, args.fractions, False, None, args.diff_rounds, peers=False
    )
    cases = []
    for (rows, f), case in per_case.items():
        results = case["results"]
        cases.append(
            {
                "rows": rows,
                "fraction": f,
                # The driver's JVM counters say nothing of the executors' GC and allocation: times only.
                "results": [
                    {"name": r.name, "rows": r.rows, "times": r.times, "found": repr(r.found)}
                    for r in results
                ],
                "index": {k: results.index(v) for k, v in case.items() if isinstance(v, Result)},
            }
        )
    # Executors register with the driver after it starts; by now every run has used them. Less the driver.
    executors = len(spark.sparkContext.statusTracker().getExecutorInfos()) - 1
    report = {"master": args.master, "executors": executors, "spark": spark.version, "cases": cases}
    spark.stop()
    Path(args.cluster_worker).write_text(json.dumps(report))


def render(args, cluster: dict, sections: dict, targets: list[str]) -> list[str]:
    return cluster_report(args, cluster, targets)


def cluster_report(args, cluster: dict, targets: list[str]) -> list[str]:
    """The diff tables of the standalone cluster, and how hx.diff stands against the hand-written joins there."""
    if "failed" in cluster:
        targets.append(f"- diff on the cluster: **not measured** ({cluster['failed']}; see the bench's log)")
        return [
            "## Diff of Parquet snapshots on a standalone cluster",
            "",
            f"**Failed**: {cluster['failed']}.",
            "",
        ]
    lines = [
        "## Diff of Parquet snapshots on a standalone cluster",
        "",
        (
            f"The diff candidates above, on a standalone master with {cluster['executors']} one-core workers "
            f"(Spark {cluster['spark']}), all on loopback, each worker running one executor with "
            f"{args.cluster_executor_memory}: every shuffle block goes from one executor process to another "
            "through Spark's block transfer service, as on a real cluster. The driver runs in its own process; "
            f"`spark.sql.shuffle.partitions={args.shuffle_partitions}`. Candidates run interleaved, "
            f"{args.diff_rounds} rounds after {args.warmup} warm-up. GC and allocation are the executors' and "
            "are not measured here (–)."
        ),
        "",
    ]
    for (size, f), s in cluster["cases"].items():
        lines += [f"### {size:,} rows a side, {f:.3%} of the rows changed (cluster)", ""]
        lines += table(s["results"], s["hx"]) + ["", diff_profile(s), ""]
        found = [f"{r.name}: {r.found}" for r in s["results"] if r.found not in (None, "None")]
        if found:
            lines += ["Warm-up results (what each found): " + "; ".join(found), ""]
    for (size, f), s in cluster["cases"].items():
        targets += diff_targets("diff on the cluster", size, f, s)
    return lines
