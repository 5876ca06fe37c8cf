"""The ``wide`` section: ``record_hash`` against ``xxhash64`` and a scan alone at 50, 100 and 200 columns, and a
JFR profile of where the time goes at 200 (bench/jfr_profile.py); and the target line that compares
``record_hash`` with ``xxhash64`` across the hash, wide and nested sections."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable

from harness import WIDE_KINDS, Bench, cache, noop, row_hash_candidates
from report import by_name, table, verdict


def run(ctx) -> dict:
    args, spark, log = ctx.args, ctx.spark, ctx.log
    exprs = [f"{WIDE_KINDS[k % len(WIDE_KINDS)].format(s=100 + k)} as c{k + 1:03d}" for k in range(200)]
    wide, wn = cache(spark.range(args.wide_rows).selectExpr(*exprs), "200-column data", log)
    ctx.sizes["wide"] = (
        wn,
        (
            "200 columns cycling int, bigint, double, string, nullable string, date, timestamp, "
            "decimal(18,2), boolean; the first 50/100/200 are hashed"
        ),
    )
    out = section_wide(ctx.bench, wide, wn)
    wide.unpersist()
    return out


def section_wide(b: Bench, wide, rows: int) -> dict:
    import hashexpr as hx

    cols = wide.columns
    out, per_k = [], {}
    for k in (50, 100, 200):
        sub = cols[:k]
        exprs = row_hash_candidates(sub)
        scan, rh, xx = b.measure_rounds(
            [
                (f"scan only, {k} columns", rows, lambda s=sub: noop(wide.select(*s))),
                (
                    f"hx.record_hash, {k} columns",
                    rows,
                    lambda s=sub: noop(wide.select(hx.record_hash(*s).alias("h"))),
                ),
                (
                    f"xxhash64(...), {k} columns",
                    rows,
                    lambda e=exprs["xxhash64(...)  [Spark, 64-bit]"]: noop(wide.selectExpr(f"{e} as h")),
                ),
            ]
        )
        out += [scan, rh, xx]
        per_k[k] = (rh, scan, xx)
    md5 = row_hash_candidates(cols)["md5(concat_ws('||', ...))"]
    out.append(
        b.measure(
            "md5(concat_ws('||', ...)), 200 columns", rows, lambda: noop(wide.selectExpr(f"{md5} as h"))
        )
    )
    return {"results": out, "hx": per_k[200][0], "per_k": per_k, "profile": profile_wide(b, wide, cols)}


def profile_wide(b: Bench, wide, cols: list[str]) -> dict | None:
    """JFR samples of record_hash and xxhash64 over the 200 columns, and the Python time to build each column."""
    import jfr_profile

    import hashexpr as hx

    if not jfr_profile.available():
        b.log("  no jcmd/jfr on this JDK: no profile")
        return None
    xx = row_hash_candidates(cols)["xxhash64(...)  [Spark, 64-bit]"]

    def hashed():
        return wide.select(hx.record_hash(*cols).alias("h"))

    def xxhashed():
        return wide.selectExpr(f"{xx} as h")

    def built(make: Callable[[], object]) -> float:
        times = []
        for _ in range(5):
            t0 = time.perf_counter()
            make()
            times.append(time.perf_counter() - t0)
        return statistics.median(times)

    runs = max(b.runs, 10)
    samples = jfr_profile.profile(
        b.spark,
        {
            "hx": (lambda: noop(hashed()), ("io.hashexpr.",)),
            "xx": (lambda: noop(xxhashed()), ("org.apache.spark.sql.catalyst.expressions.XXH64",)),
        },
        runs,
    )
    prof = {
        "runs": runs,
        **samples,
        "hx_build": built(hashed),
        "xx_build": built(xxhashed),
    }
    b.log(f"  profile, 200 columns: record_hash {prof['hx']}; xxhash64 {prof['xx']}")
    return prof


def render(args, s: dict, sections: dict, targets: list[str]) -> list[str]:
    lines = []
    lines += ["## Wide data (record_hash at 50, 100, 200 columns)", ""] + table(s["results"], s["hx"]) + [""]
    lines += [
        (
            "| columns | record_hash s | ns per value | scan-only s | record_hash − scan s | "
            "ns per value, net of scan |"
        ),
        "|---:|---:|---:|---:|---:|---:|",
    ]
    per = {}
    for k, (rh, scan, _) in s["per_k"].items():
        net = rh.median - scan.median
        per[k] = (rh.median / (rh.rows * k) * 1e9, net / (rh.rows * k) * 1e9)
        lines.append(
            f"| {k} | {rh.median:.3f} | {per[k][0]:.1f} | {scan.median:.3f} | {net:.3f} | {per[k][1]:.1f} |"
        )
    lines.append("")
    if s.get("profile"):
        lines += wide_profile(s["profile"])
    growth = per[200][0] / per[50][0]
    targets.append(
        f"- record_hash linear in columns (time per column at 200 columns ≤ 1.2× that at 50): "
        f"{verdict(growth <= 1.2)} ({per[50][0]:.1f} → {per[100][0]:.1f} → {per[200][0]:.1f} ns "
        f"per value at 50 → 100 → 200 columns; 200/50 = {growth:.2f}; net of the scan "
        f"{per[50][1]:.1f} → {per[100][1]:.1f} → {per[200][1]:.1f})"
    )
    return lines


def wide_profile(p: dict) -> list[str]:
    """The table of where the task threads spend their time at 200 columns, record_hash against xxhash64."""
    import jfr_profile

    hx, xx = p["hx"], p["xx"]
    lines = [
        (
            f"Where the time goes at 200 columns: JFR execution samples of Spark's task threads over {p['runs']} "
            "runs of each, the two taking turns (one sample is about the same slice of a thread's time in both), "
            "by what the sampled "
            "code does. With more than 100 columns Spark does not fuse the query into one generated method, so "
            "the scan, the reading of each value and the hash show apart."
        ),
        "",
        "| part of the work | record_hash samples | share | xxhash64 samples | share | record_hash / xxhash64 |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    total_hx, total_xx = sum(hx.values()) or 1, sum(xx.values()) or 1
    for c in jfr_profile.CATEGORIES + ("all",):
        h = total_hx if c == "all" else hx[c]
        x = total_xx if c == "all" else xx[c]
        ratio = f"{h / x:.2f}" if x else "–"
        lines.append(f"| {c} | {h} | {h / total_hx:.0%} | {x} | {x / total_xx:.0%} | {ratio} |")
    lines += [
        "",
        (
            f"Building the column in Python (classic PySpark, before the query runs): "
            f"`hx.record_hash(*200 names)` {p['hx_build'] * 1e3:.1f} ms, the xxhash64 SQL text "
            f"{p['xx_build'] * 1e3:.1f} ms."
        ),
        "",
    ]
    return lines


def xxhash64_target(args, sections: dict, targets: list[str]) -> list[str]:
    """The target line of record_hash against xxhash64 on the hash, wide and nested sections of the run."""
    if "wide" in sections or "nested" in sections:
        pairs = [
            (f"{k} columns", rh, xx) for k, (rh, _, xx) in sections.get("wide", {}).get("per_k", {}).items()
        ]
        if "nested" in sections:
            pairs.append(("nested data", sections["nested"]["hx"], sections["nested"]["xx"]))
        if "hash" in sections:
            hs = sections["hash"]
            pairs.insert(0, ("10 columns", hs["hx"], by_name(hs["results"], "xxhash64")))
        worst = max(rh.median / xx.median for _, rh, xx in pairs)
        profiled = " (where the time goes: the JFR profile under Wide data)" if worst > 1.0 else ""
        targets.append(
            f"- record_hash at or below xxhash64 time on 10/50/100/200 columns and nested data: "
            f"{verdict(worst <= 1.0)}{profiled} ("
            + "; ".join(
                f"{what}: {rh.median:.3f} s / {xx.median:.3f} s = {rh.median / xx.median:.2f}"
                for what, rh, xx in pairs
            )
            + ")"
        )
    return []
