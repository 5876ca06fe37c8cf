"""The ``hash`` section: ``record_hash`` against Spark's hashes, the md5/sha2 patterns and a Python UDF on the
10 mixed columns; and ``EXPLAIN CODEGEN`` of the record_hash query."""

from __future__ import annotations

import hashlib
from pathlib import Path

from harness import MIXED, Bench, cache, noop, row_hash_candidates
from report import by_name, table, verdict


def uses_mixed(args) -> bool:
    return True


def run(ctx) -> dict:
    args, base, base_n = ctx.args, *ctx.mixed
    ctx.sizes["hash (10 mixed columns)"] = (base_n, ", ".join(MIXED))
    return section_hash(
        ctx.bench, base, base_n, args.udf_rows, Path(args.codegen_out) if args.codegen_out else None
    )


def section_hash(b: Bench, df, rows: int, udf_rows: int, codegen_out: Path | None) -> dict:
    from pyspark.sql import functions as F

    import hashexpr as hx

    cols = df.columns
    out = b.measure_rounds(
        [
            ("scan only (all columns to noop)", rows, lambda: noop(df.select(*cols))),
            ("hx.record_hash(*)", rows, lambda: noop(df.select(hx.record_hash(*cols).alias("h")))),
        ]
        + [
            (name, rows, lambda e=expr: noop(df.selectExpr(f"{e} as h")))
            for name, expr in row_hash_candidates(cols).items()
        ]
    )
    hx_res = out[1]

    # The Python UDF on a sample (it is two orders of magnitude slower); compared by rows per second.
    def py_md5(*vals):
        return hashlib.md5("||".join("" if v is None else str(v) for v in vals).encode()).digest()

    sample, n = cache(df.where(F.col("id") < udf_rows), f"Python UDF sample ({udf_rows:,} rows)", b.log)
    udf = F.udf(py_md5, "binary")
    out.append(
        b.measure(
            "Python UDF (hashlib.md5 of '||'-joined str)",
            n,
            lambda: noop(sample.select(udf(*cols).alias("h"))),
            note=f"on a {n:,}-row sample; ratio from rows/s",
        )
    )
    sample.unpersist()

    if codegen_out is not None:
        df.createOrReplaceTempView("bench_mixed")
        plan = b.spark.sql("EXPLAIN CODEGEN SELECT record_hash(*) AS h FROM bench_mixed").first()[0]
        codegen_out.write_text(
            "-- EXPLAIN CODEGEN SELECT record_hash(*) AS h FROM bench_mixed\n"
            f"-- bench_mixed: the cached 10-column data of bench/run.py ({', '.join(cols)})\n\n" + plan
        )
        b.log(f"  wrote {codegen_out}")
    return {"results": out, "hx": hx_res}


def render(args, s: dict, sections: dict, targets: list[str]) -> list[str]:
    lines = []
    hx_r = s["hx"]
    xx = by_name(s["results"], "xxhash64")
    md5 = by_name(s["results"], "md5(concat_ws")
    lines += ["## Row hash, 10 mixed columns", ""] + table(s["results"], hx_r) + [""]
    targets.append(
        f"- record_hash ≤ xxhash64() on the 10-column data: {verdict(hx_r.median <= xx.median)} "
        f"(record_hash {hx_r.median:.3f} s, xxhash64 {xx.median:.3f} s, "
        f"record_hash/xxhash64 = {hx_r.median / xx.median:.2f})"
    )
    targets.append(
        f"- record_hash ≥ 5× faster than md5(concat_ws): {verdict(md5.median >= 5 * hx_r.median)} "
        f"(md5 {md5.median:.3f} s / record_hash {hx_r.median:.3f} s = {md5.median / hx_r.median:.2f}×)"
    )
    return lines


def appendix(args, s: dict) -> list[str]:
    if not args.codegen_out:
        return []
    return [
        "## Appendix: generated code",
        "",
        (
            f"`EXPLAIN CODEGEN` of `SELECT record_hash(*) FROM` the 10-column data: "
            f"[{Path(args.codegen_out).name}]({Path(args.codegen_out).name})."
        ),
        "",
    ]
