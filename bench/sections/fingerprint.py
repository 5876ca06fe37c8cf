"""The ``fingerprint`` section: ``dataset_fingerprint`` against a ``record_hash`` pass alone and a sum of
``xxhash64``."""

from __future__ import annotations

from harness import MIXED, Bench, cache, mixed, noop, q
from report import table, verdict


def uses_mixed(args) -> bool:
    """Whether the shared 10-column data is to be cached for it: with ``--fingerprint-rows`` = ``--rows``. When
    another section has that data cached, this one takes it too (whatever ``--fingerprint-rows``)."""
    return args.fingerprint_rows == args.rows


def run(ctx) -> dict:
    args, log, base, base_n = ctx.args, ctx.log, *ctx.mixed
    fdf, fn = (
        (base, base_n)
        if base is not None
        else cache(mixed(ctx.spark, args.fingerprint_rows), "10-column data", log)
    )
    ctx.sizes["fingerprint (the 10-column data)"] = (fn, ", ".join(MIXED))
    out = section_fingerprint(ctx.bench, fdf, fn)
    if fdf is not base:
        fdf.unpersist()
    return out


def section_fingerprint(b: Bench, df, rows: int) -> dict:
    from pyspark.sql import functions as F

    import hashexpr as hx

    cols = df.columns
    qc = ", ".join(q(c) for c in cols)
    rh, fp, xx = b.measure_rounds(
        [
            (
                "hx.record_hash pass alone (to noop)",
                rows,
                lambda: noop(df.select(hx.record_hash(*cols).alias("h"))),
            ),
            ("hx.dataset_fingerprint(df)", rows, lambda: hx.dataset_fingerprint(df)),
            (
                "sum(cast(xxhash64(*) as decimal(38,0)))",
                rows,
                lambda: df.agg(F.expr(f"sum(cast(xxhash64({qc}) as decimal(38, 0)))")).collect()[0][0],
            ),
        ]
    )
    return {"results": [rh, fp, xx], "hx": rh, "fp": fp}


def render(args, s: dict, sections: dict, targets: list[str]) -> list[str]:
    lines = []
    lines += ["## Dataset fingerprint", ""] + table(s["results"], s["hx"]) + [""]
    ratio = s["fp"].median / s["hx"].median
    targets.append(
        f"- dataset_fingerprint ≤ 1.3× a record_hash pass: {verdict(ratio <= 1.3)} "
        f"(fingerprint {s['fp'].median:.3f} s / record_hash pass {s['hx'].median:.3f} s = "
        f"{ratio:.2f}×)"
    )
    return lines
