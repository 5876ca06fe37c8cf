"""The report of `make bench`, bench/RESULTS.md: its header and Data table, the tables and verdicts every section's
part uses, and the merge of a run of some sections into a whole run's report."""

from __future__ import annotations

import datetime as dt
import os
import platform
import time
from collections.abc import Callable
from pathlib import Path

from harness import Result, fmt_times


def table(results: list[Result], hx: Result) -> list[str]:
    lines = [
        "| candidate | median s | rows | rows/s | ratio vs hx | GC s | alloc B/row | runs (s) |",
        "|---|---:|---:|---:|---:|---:|---:|---|",
    ]
    for r in results:
        ratio = hx.rows_per_s / r.rows_per_s  # time per row relative to hx; > 1: slower than hx
        name = f"**{r.name}**" if r is hx else r.name
        note = f" ({r.note})" if r.note else ""
        gc = f"{r.gc_median:.3f}" if r.gc else "–"
        alloc = f"{r.alloc_per_row:,.0f}" if r.alloc else "–"
        lines.append(
            f"| {name}{note} | {r.median:.3f} | {r.rows:,} | {r.rows_per_s:,.0f} | {ratio:.2f}x | "
            f"{gc} | {alloc} | {fmt_times(r.times)} |"
        )
    return lines


def verdict(ok: bool) -> str:
    return "**met**" if ok else "**not met**"


def by_name(results: list[Result], prefix: str) -> Result:
    return next(r for r in results if r.name.startswith(prefix))


def machine(spark) -> list[str]:
    cpu = "?"
    try:
        cpu = next(
            ln.split(":", 1)[1].strip()
            for ln in Path("/proc/cpuinfo").read_text().splitlines()
            if ln.startswith("model name")
        )
    except (OSError, StopIteration):
        pass
    mem = "?"
    try:
        kb = next(
            int(ln.split()[1])
            for ln in Path("/proc/meminfo").read_text().splitlines()
            if ln.startswith("MemTotal")
        )
        mem = f"{kb / 1024 / 1024:.1f} GiB"
    except (OSError, StopIteration):
        pass
    try:
        load = " / ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        load = "?"
    try:
        import datacompy

        dcv = datacompy.__version__
    except ImportError:
        dcv = "not installed"
    import hashexpr as hx

    lines = [
        (
            f"- machine: {platform.node()}, {cpu}, {os.cpu_count()} cores, {mem} RAM, {platform.system()} "
            f"{platform.release()}; load average at the end (1/5/15 min): {load}"
        )
    ]
    if spark is None:
        return lines
    jvm = spark.sparkContext._jvm
    conf = spark.sparkContext.getConf()
    return lines + [
        (
            f"- Spark {spark.version} (`{conf.get('spark.master')}`, driver memory {conf.get('spark.driver.memory')}, "
            f"spark.sql.shuffle.partitions={spark.conf.get('spark.sql.shuffle.partitions')}, AQE on), "
            f"Java {jvm.java.lang.System.getProperty('java.version')}, Python {platform.python_version()}, "
            f"hashexpr {hx.__version__}, datacompy {dcv}"
        ),
    ]


def render(
    args,
    spark,
    sizes: dict,
    started: float,
    parts: Callable[[list[str]], list[str]],
    appendix: Callable[[], list[str]],
) -> str:
    """The whole report: its header and Data table, the sections' ``parts`` (a function of the list to which
    they append their target lines), the Targets and the ``appendix``."""
    now = dt.datetime.now().strftime("%Y-%m-%d %H:%M")
    lines = [
        "# hashexpr benchmark results",
        "",
        (
            f"Written by `make bench` (`bench/run.py`, {now}, {time.perf_counter() - started:.0f} s for the "
            f"whole run). How to read and rerun it: [README.md](README.md)."
        ),
        "",
    ]
    lines += machine(spark)
    lines += (
        []
        if spark is None
        else [
            (
                f"- timing: median of {args.runs} runs after {args.warmup} warm-up; the row-hash and fingerprint "
                f"candidates: median of {args.rounds} rounds after the warm-up, each round one run of each candidate; "
                "every row-hash candidate is "
                "`df.select(<hash>).write.format('noop')` over the same cached DataFrame; GC s = JVM GC time "
                "(all collectors) during a run, alloc B/row = bytes allocated by all JVM threads during a run "
                "per input row (median)"
            ),
            (
                "- ratio vs hx = (time per row of the candidate) / (time per row of hashexpr's candidate): "
                "above 1 is slower than hashexpr"
            ),
            "",
        ]
    )
    lines += ["## Data", "", "| section | rows | columns |", "|---|---:|---|"]
    for k, v in sizes.items():
        lines.append(f"| {k} | {v[0]:,} | {v[1]} |")
    lines.append("")
    targets = []
    lines += parts(targets)

    if targets:
        lines += ["## Targets (from this one run)", ""] + targets + [""]
    lines += appendix()
    return "\n".join(lines)


def merge_report(existing: str, partial: str) -> str:
    """``existing`` (a whole run's report) with the sections and target lines of ``partial`` (a run of some
    sections alone) in place of its own: each ``## `` section of ``partial`` after Data replaces the one of
    that title, or goes before Targets; each of its target lines replaces the one that starts alike (up to the
    colon), or is added."""

    def split(text: str) -> list[list[str]]:
        blocks: list[list[str]] = [[]]
        for line in text.splitlines():
            if line.startswith("## "):
                blocks.append([])
            blocks[-1].append(line)
        return blocks

    old, new = split(existing), split(partial)
    titles = [b[0] for b in old[1:]]
    new_targets = next((b[2:] for b in new[1:] if b[0] == "## Targets (from this one run)"), [])
    for block in new[1:]:
        if block[0] in ("## Data", "## Targets (from this one run)"):
            continue
        if block[0] in titles:
            old[1 + titles.index(block[0])] = block
        else:
            at = (
                titles.index("## Targets (from this one run)")
                if "## Targets (from this one run)" in titles
                else len(titles)
            )
            old.insert(1 + at, block)
            titles.insert(at, block[0])
    for block in old[1:]:
        if block[0] != "## Targets (from this one run)":
            continue
        for line in (t for t in new_targets if t.startswith("- ")):
            head = line.split(":", 1)[0]
            same = [k for k, t in enumerate(block) if t.split(":", 1)[0] == head]
            if same:
                block[same[0]] = line
            else:
                last = max(k for k, t in enumerate(block) if t.startswith("- "))
                block.insert(last + 1, line)
    return "\n".join(line for b in old for line in b).rstrip("\n")
