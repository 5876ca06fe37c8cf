"""The ``scale`` section: ``record_hash``, ``dataset_fingerprint`` and ``hx.diff`` at growing sizes in a Spark of
its own with ``--scale-driver-memory``, run as ``bench/run.py --scale-worker``; their spills, and a plot."""

from __future__ import annotations

import statistics
import sys
from collections.abc import Callable
from pathlib import Path

from harness import HERE, MIXED, Bench, Result, build_spark, noop
from report import verdict

from sections.diff import make_new

#: The hidden flag of bench/run.py (an attribute of its args) that makes it this section's Spark process, and the
#: function that process runs.
WORKER = "scale_worker"


def run(ctx) -> dict:
    return section_scale(ctx.args, ctx.log)


def section_scale(args, log) -> dict:
    """record_hash, dataset_fingerprint and hx.diff at growing sizes, in a Spark of its own with
    ``--scale-driver-memory`` (local mode: the driver's heap is the executors'), run as a subprocess."""
    import json
    import subprocess
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "scale.json"
        cmd = [
            sys.executable,
            str(HERE / "run.py"),
            "--scale-worker",
            str(out),
            "--driver-memory",
            args.scale_driver_memory,
            "--data-dir",
            args.data_dir,
            "--scale-rows",
            ",".join(map(str, args.scale_rows)),
            "--diff-fractions",
            args.diff_fractions,
            "--diff-sizes",
            ",".join(map(str, args.diff_sizes)),
            "--shuffle-partitions",
            str(args.shuffle_partitions),
        ]
        log(f"  starting a Spark with driver memory {args.scale_driver_memory} for the scaling runs")
        errors = Path(tmp) / "stderr.log"
        with errors.open("w") as err:
            code = subprocess.run(cmd, check=False, stderr=err).returncode
        if code == 0:
            return json.loads(out.read_text())
        # A failed run (e.g. an executor out of memory) is reported with the sizes done before it.
        lines = errors.read_text(errors="replace").splitlines()
        print("\n".join(lines[-60:]), file=sys.stderr)
        result = json.loads(out.read_text()) if out.exists() else {"driver_memory": args.scale_driver_memory}
        result.setdefault("sizes", {})
        failed = result.setdefault("failed", {"rows": None, "kind": None, "error": f"exit code {code}"})
        cause = next((ln.strip() for ln in lines if "OutOfMemoryError" in ln), None) or next(
            (ln.strip() for ln in reversed(lines) if "Error" in ln or "Exception" in ln), None
        )
        if cause:
            failed["cause"] = cause
        log(f"  the scaling runs failed: {failed}")
        return result


def scale_worker(args, log) -> None:
    """The scaling runs (see :func:`section_scale`); results go to the JSON file ``args.scale_worker``."""
    import json

    from snapshots import StageSpills, snapshot_set

    import hashexpr as hx

    spark = build_spark(args)
    read = spark.read.parquet
    b = Bench(spark, runs=2, warmup=1, log=log, rounds=2)
    spills = StageSpills(spark)
    per_run: dict[str, list] = {}

    def record(res: Result) -> None:
        per_run.setdefault(res.name, []).append(spills.since_last())

    out = {"driver_memory": args.driver_memory, "sizes": {}}
    running = {}

    def save() -> None:
        # Written after every size, so the sizes done are reported should a later one fail.
        part = Path(args.scale_worker + ".part")
        part.write_text(json.dumps(out))
        part.replace(args.scale_worker)

    def tracked(kind: str, action: Callable[[], object]) -> Callable[[], object]:
        def run() -> object:
            running["kind"] = kind
            return action()

        return run

    for i, rows in enumerate(args.scale_rows):
        # The diff section's sets are reused (same fractions); other sizes get a set with 1 % changes only.
        fractions = args.fractions if rows in args.diff_sizes else [0.01]
        ss = snapshot_set(
            spark, Path(args.data_dir), rows, fractions, MIXED, make_new, log, stored=rows in args.diff_sizes
        )
        o, n = ss.old, ss.new[0.01]
        cols = read(o).columns
        per_run.clear()
        spills.since_last()
        try:
            res = b.measure_rounds(
                [
                    (
                        f"record_hash pass, {rows:,} rows",
                        rows,
                        tracked(
                            "record_hash",
                            lambda o=o, c=cols: noop(read(o).select(hx.record_hash(*c).alias("h"))),
                        ),
                    ),
                    (
                        f"dataset_fingerprint, {rows:,} rows",
                        rows,
                        tracked("fingerprint", lambda o=o: hx.dataset_fingerprint(read(o))),
                    ),
                    (
                        f"hx.diff at 1 %, {rows:,} rows a side",
                        rows + ss.new_rows[0.01],
                        tracked("diff", lambda o=o, n=n: noop(hx.diff(read(o), read(n), "id"))),
                    ),
                ],
                warmup=1 if i == 0 else 0,
                after_run=record,
            )
        except Exception as e:  # a failed run is a result: reported, with the sizes done before it
            out["failed"] = {
                "rows": rows,
                "kind": running.get("kind"),
                "error": (str(e).strip().splitlines() or [type(e).__name__])[0],
            }
            save()
            raise
        out["sizes"][str(rows)] = {
            kind: {"name": r.name, "rows": r.rows, "times": r.times, "spills": per_run.get(r.name, [])}
            for kind, r in zip(("record_hash", "fingerprint", "diff"), res)
        }
        save()
    spark.stop()


def render(args, scale: dict, sections: dict, targets: list[str]) -> list[str]:
    return scale_report(args, scale, targets)


def scale_report(args, scale: dict, targets: list[str]) -> list[str]:
    """The scaling table (and plot): seconds and time per row at each size, and the spills of every run."""
    sizes = sorted(scale["sizes"], key=int)
    kinds = (
        ("record_hash", "record_hash pass"),
        ("fingerprint", "dataset_fingerprint"),
        ("diff", "hx.diff, 1 %"),
    )
    lines = [
        "## Scaling (Parquet, 20 columns)",
        "",
        (
            f"A Spark of its own, `local[2]` with driver memory {scale['driver_memory']} (in local mode the "
            "driver's heap is the executors'; 1g is Spark's default executor memory). Median of 2 rounds; the "
            "smallest size after a warm-up. `record_hash pass` writes the hashes of the old snapshot to `noop`, "
            "`dataset_fingerprint` fingerprints it, `hx.diff` diffs it against the 1 % snapshot (rows: both sides). "
            "Spilled bytes and failed stages come from Spark's monitoring API, summed over the runs' stages."
        ),
        "",
        "| candidate | rows | median s | ns per row | per row vs smallest | spilled (memory / disk) | failed stages |",
        "|---|---:|---:|---:|---:|---|---:|",
    ]
    per_row = {}
    failure = scale.get("failed")
    largest = max(args.scale_rows)
    for kind, label in kinds:
        if not sizes:
            targets.append(f"- {label}: scaling **not met** (the scaling runs failed: {failure})")
            continue
        for size in sizes:
            r = scale["sizes"][size][kind]
            med = statistics.median(r["times"])
            ns = med / r["rows"] * 1e9
            per_row.setdefault(kind, []).append((int(size), r["rows"], med, ns))
            base = per_row[kind][0][3]
            spilled_mem = sum(x["spilled_memory_bytes"] for x in r["spills"])
            spilled_disk = sum(x["spilled_disk_bytes"] for x in r["spills"])
            failed = sum(x["failed_stages"] for x in r["spills"])
            lines.append(
                f"| {label} | {r['rows']:,} | {med:.2f} | {ns:.0f} | {ns / base:.2f}x | "
                f"{spilled_mem:,} B / {spilled_disk:,} B | {failed} |"
            )
        if failure and failure["rows"] is not None and failure["kind"] in (kind, None):
            lines.append(f"| {label} | {failure['rows']:,} a side | failed | | | | |")
        last = per_row[kind][-1]
        first = per_row[kind][0]
        if last[0] != largest:
            what = f"{failure['kind']} failed" if failure and failure.get("kind") else "the run failed"
            targets.append(
                f"- {label}: time per row at {largest:,}: **not met** (not measured: at {largest:,} rows {what})"
            )
            continue
        r_all = [scale["sizes"][z][kind] for z in sizes]
        spills = sum(x["spilled_memory_bytes"] + x["spilled_disk_bytes"] for r in r_all for x in r["spills"])
        fails = sum(x["failed_stages"] for r in r_all for x in r["spills"])
        targets.append(
            f"- {label}: time per row at {last[0]:,} within 1.2× of that at {first[0]:,}: "
            f"{verdict(last[3] <= 1.2 * first[3])} ({first[3]:.0f} → {last[3]:.0f} ns per row, "
            f"{last[3] / first[3]:.2f}×); no spill and no failed stage with {scale['driver_memory']}: "
            f"{verdict(spills == 0 and fails == 0)} ({spills:,} B spilled, {fails} failed)"
        )
    lines.append("")
    if failure:
        cause = f" In Spark's log: `{failure['cause'][:300]}`." if failure.get("cause") else ""
        where = (
            f"at {failure['rows']:,} rows a side ({failure['kind'] or 'before its first run'})"
            if failure["rows"] is not None
            else "before their first run"
        )
        lines += [
            (
                f"**The scaling runs failed** {where}: `{failure['error']}`.{cause} The sizes before it are "
                "reported; the larger ones were not run."
            ),
            "",
        ]
    if args.plot_out and per_row:
        try:
            plot_scaling(per_row, kinds, Path(args.plot_out), scale["driver_memory"])
            lines += [f"![seconds vs rows]({Path(args.plot_out).name})", ""]
        except ImportError:
            lines += ["(no plot: matplotlib is not installed)", ""]
    return lines


def plot_scaling(per_row: dict, kinds, out: Path, memory: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.5), dpi=120)
    for kind, label in kinds:
        pts = per_row[kind]
        ax.plot([p[0] / 1e6 for p in pts], [p[2] for p in pts], marker="o", label=label)
    ax.set_xlabel("rows a side (millions)")
    ax.set_ylabel("seconds (median)")
    ax.set_title(f"hashexpr on Parquet, 20 columns, local[2], driver memory {memory}")
    ax.grid(True, alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(out)
    plt.close(fig)
