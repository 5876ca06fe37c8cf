"""The ``nested`` section: ``record_hash`` on arrays, maps and structs against md5 of their JSON or text and
Spark's hashes (under the legacy flag that lets them take maps)."""

from __future__ import annotations

from harness import NESTED, Bench, cache, cast_str, noop, q
from report import table


def run(ctx) -> dict:
    args, spark, log = ctx.args, ctx.spark, ctx.log
    nested, nn = cache(
        spark.range(args.nested_rows).selectExpr(*[f"{e} as {q(c)}" for c, e in NESTED.items()]),
        "nested data",
        log,
    )
    ctx.sizes["nested"] = (
        nn,
        ", ".join(f"{f.name} {f.dataType.simpleString()}" for f in nested.schema.fields),
    )
    out = section_nested(ctx.bench, nested, nn)
    nested.unpersist()
    return out


def section_nested(b: Bench, nested, rows: int) -> dict:
    import hashexpr as hx

    cols = nested.columns
    qc = ", ".join(q(c) for c in cols)
    ws = ", ".join(cast_str(cols))
    # hash()/xxhash64() refuse maps unless a legacy flag is set; with it, map entry order changes the hash.
    # The flag changes nothing for the other candidates, so all of them run interleaved under it.
    note = "needs spark.sql.legacy.allowHashOnMapType=true; map entry order changes the hash"
    b.spark.conf.set("spark.sql.legacy.allowHashOnMapType", "true")
    try:
        out = b.measure_rounds(
            [
                ("scan only (all columns to noop)", rows, lambda: noop(nested.select(*cols))),
                ("hx.record_hash(*)", rows, lambda: noop(nested.select(hx.record_hash(*cols).alias("h")))),
                (
                    "md5(to_json(struct(*)))",
                    rows,
                    lambda: noop(nested.selectExpr(f"md5(to_json(struct({qc}))) as h")),
                ),
                (
                    "md5(concat_ws('||', cast(c as string)...))",
                    rows,
                    lambda: noop(nested.selectExpr(f"md5(concat_ws('||', {ws})) as h")),
                ),
                (
                    "xxhash64(...)  [legacy map flag]",
                    rows,
                    lambda: noop(nested.selectExpr(f"xxhash64({qc}) as h")),
                ),
                ("hash(...)  [legacy map flag]", rows, lambda: noop(nested.selectExpr(f"hash({qc}) as h"))),
            ]
        )
    finally:
        b.spark.conf.unset("spark.sql.legacy.allowHashOnMapType")
    for r in out[-2:]:
        r.note = note
    return {"results": out, "hx": out[1], "xx": out[4]}


def render(args, s: dict, sections: dict, targets: list[str]) -> list[str]:
    lines = []
    lines += ["## Nested data (arrays, maps, structs)", ""] + table(s["results"], s["hx"]) + [""]
    return lines
