"""The ``diff`` section: ``hx.diff`` against the full outer joins a user writes by hand (and, at the smallest
size, ``exceptAll`` and datacompy) on Parquet snapshots (bench/snapshots.py); and the report of a diff case, which
the cluster section shares."""

from __future__ import annotations

import importlib
from pathlib import Path

from harness import MIXED, Bench, Result, cast_str, noop
from report import table, verdict


def run(ctx) -> dict:
    from snapshots import MORE_COLUMNS, snapshot_set

    args, spark, log = ctx.args, ctx.spark, ctx.log
    sets = {
        n: snapshot_set(spark, Path(args.data_dir), n, args.fractions, MIXED, make_new, log)
        for n in args.diff_sizes
    }
    for n in args.diff_sizes:
        ctx.sizes[f"diff, Parquet files (each side; new = old with changes), {n:,} rows"] = (
            n,
            f"{', '.join(MIXED)}, {', '.join(MORE_COLUMNS)}",
        )
    return section_diff(
        ctx.bench, sets, args.fractions, not args.no_datacompy, args.peer_runs or None, args.diff_rounds
    )


def make_new(old, n: int, fraction: float):
    """``old`` with about ``fraction`` of its rows changed: a third updated, a third deleted, a third inserted."""
    from pyspark.sql import functions as F

    changed = F.expr(f"pmod(xxhash64(id, 99), 10000000) < {round(fraction * 10_000_000)}")
    kind = F.expr("pmod(xxhash64(id, 98), 3)")
    kept = old.where(~(changed & (kind == 0)))
    upd = changed & (kind == 1)
    kept = kept.withColumn("s", F.when(upd, F.concat(F.col("s"), F.lit("*"))).otherwise(F.col("s")))
    kept = kept.withColumn("d", F.when(upd, F.col("d") + 1).otherwise(F.col("d")))
    inserted = old.where(changed & (kind == 2)).withColumn("id", F.col("id") + n)
    return kept.unionByName(inserted)


def section_diff(
    b: Bench,
    sets: dict,
    fractions: list[float],
    with_datacompy: bool,
    peer_runs: int | None,
    rounds: int,
    peers: bool = True,
) -> dict:
    """hx.diff and the hand-written diffs on Parquet snapshots, read from the files in every run.

    At every size and changed fraction: ``hx.diff`` (its whole output: keys, change, side, changed_columns,
    to ``noop``), the full outer joins a user would write (on ``md5(concat_ws)`` row hashes, and on
    ``record_key``/``record_hash``), counting the keys whose hashes differ; at the smallest size also both with
    the old side's stored hashes (written by ``with_metadata``), and, at its smallest fraction and with
    ``peers``, the slow peers (``exceptAll`` both ways, datacompy). Candidates run interleaved in ``rounds``
    rounds; the smallest size warms up first, the larger ones start from a warm JVM.
    """
    from pyspark.sql import functions as F

    import hashexpr as hx

    spark = b.spark
    read = spark.read.parquet
    compare_cls = None
    if with_datacompy:
        try:
            from datacompy.spark import SparkSQLCompare as compare_cls
        except ImportError as e:
            b.log(f"  datacompy's SparkSQLCompare is not importable ({e}); left out")

    def differing(ho, hn, on: str) -> int:
        """A full outer join of (key, row hash) per side, counting the keys whose hashes differ."""
        j = ho.join(hn, on, "full_outer").where(~F.col("h_old").eqNullSafe(F.col("h_new")))
        return j.count()

    def md5_join(o_path: str, n_path: str) -> int:
        o, n = read(o_path), read(n_path)
        md5 = f"md5(concat_ws('||', {', '.join(cast_str([c for c in o.columns if c != 'id']))}))"
        return differing(o.selectExpr("id", f"{md5} as h_old"), n.selectExpr("id", f"{md5} as h_new"), "id")

    def rh_join(o_path: str, n_path: str) -> int:
        o, n = read(o_path), read(n_path)
        values = [c for c in o.columns if c != "id"]
        return differing(
            o.select(hx.record_key("id").alias("k"), hx.record_hash(*values).alias("h_old")),
            n.select(hx.record_key("id").alias("k"), hx.record_hash(*values).alias("h_new")),
            "k",
        )

    def stored_join(o_path: str, n_path: str) -> int:
        o, n = read(o_path), read(n_path)
        return differing(
            o.select(F.col("_hx_record_key").alias("k"), F.col("_hx_record_hash").alias("h_old")),
            n.select(hx.record_key("id").alias("k"), hx.record_hash(*n.columns, by_name=True).alias("h_new")),
            "k",
        )

    inputs = importlib.import_module("hashexpr.spark.diff.inputs")
    buckets = importlib.import_module("hashexpr.spark.diff.buckets")

    def bucket_pass(o_path: str, n_path: str) -> int:
        """hx.diff's first query alone (what it runs before it reads any values): the differing buckets."""
        spec = inputs.checked(read(o_path), read(n_path), "id", None, None, None, None)
        return len(buckets.bucket_pass(spec).differing_buckets)

    def raw_join(o_path: str, n_path: str) -> int:
        """The join a user with a one-column key writes: on ``id`` itself, ``record_hash`` of the rest."""
        o, n = read(o_path), read(n_path)
        values = [c for c in o.columns if c != "id"]
        return differing(
            o.select("id", hx.record_hash(*values).alias("h_old")),
            n.select("id", hx.record_hash(*values).alias("h_new")),
            "id",
        )

    def raw_stored_join(o_path: str, n_path: str) -> int:
        """The same join on ``id`` with the old side's stored row hash (``with_metadata``'s, by name)."""
        o, n = read(o_path), read(n_path)
        return differing(
            o.select("id", F.col("_hx_record_hash").alias("h_old")),
            n.select("id", hx.record_hash(*n.columns, by_name=True).alias("h_new")),
            "id",
        )

    sums_module = importlib.import_module("hashexpr.spark.diff.sums")

    def windowed_join(o_path: str, n_path: str) -> int:
        """The join on id with what hx.diff adds to it for duplicate keys: per key, over its rows in row-hash
        order, the row count, the sums of the fingerprint lanes and the row number, joined on id and number."""
        o, n = read(o_path), read(n_path)
        values = [c for c in o.columns if c != "id"]
        whole = "PARTITION BY id ORDER BY h ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING"

        def side(df, tag: str):
            return df.select("id", hx.record_hash(*values).alias("h")).selectExpr(
                "id",
                f"h AS h_{tag}",
                f"count(1) OVER ({whole}) AS n_{tag}",
                *(
                    f"sum({lane}) OVER ({whole}) AS fp{i}_{tag}"
                    for i, lane in enumerate(sums_module.lanes("h"))
                ),
                f"row_number() OVER (PARTITION BY id ORDER BY h) AS rn_{tag}",
            )

        a, z = side(o, "old"), side(n, "new")
        j = a.join(z, (a["id"] == z["id"]) & (a["rn_old"] == z["rn_new"]), "full_outer")
        return j.where(~F.col("h_old").eqNullSafe(F.col("h_new"))).count()

    def change_types(o_path: str, n_path: str) -> object:
        return noop(hx.diff(read(o_path), read(n_path), "id", changed_columns=False))

    def change_types_found(o_path: str, n_path: str) -> object:
        return hx.summarize(hx.diff(read(o_path), read(n_path), "id", changed_columns=False))

    smallest = min(sets)
    per_case = {}
    for size, ss in sorted(sets.items()):
        for f in fractions:
            o, o_s, n = ss.old, ss.old_stored, ss.new[f]
            rows = size + ss.new_rows[f]
            b.log(f"  diff: {size:,} rows a side, {f:.3%} changed")
            # (key, candidate): the key names the result in the case and the report.
            keyed = [
                (
                    "hx",
                    (
                        "hx.diff(old, new, 'id')",
                        rows,
                        lambda o=o, n=n: noop(hx.diff(read(o), read(n), "id")),
                        lambda o=o, n=n: hx.summarize(hx.diff(read(o), read(n), "id")),
                    ),
                ),
                (
                    "hx_types",
                    (
                        "hx.diff(old, new, 'id', changed_columns=False)",
                        rows,
                        lambda o=o, n=n: change_types(o, n),
                        lambda o=o, n=n: change_types_found(o, n),
                    ),
                ),
                (
                    "raw",
                    ("full outer join on id, record_hash of the rest", rows, lambda o=o, n=n: raw_join(o, n)),
                ),
                (
                    "md5",
                    ("full outer join on md5(concat_ws) row hashes", rows, lambda o=o, n=n: md5_join(o, n)),
                ),
                ("rh", ("full outer join on record_key/record_hash", rows, lambda o=o, n=n: rh_join(o, n))),
            ]
            if size == smallest:
                keyed += [
                    (
                        "hx_stored",
                        (
                            "hx.diff, old side with stored hashes",
                            rows,
                            lambda o=o_s, n=n: noop(hx.diff(read(o), read(n), "id")),
                            lambda o=o_s, n=n: hx.summarize(hx.diff(read(o), read(n), "id")),
                        ),
                    ),
                    (
                        "hx_types_stored",
                        (
                            "hx.diff(changed_columns=False), old side with stored hashes",
                            rows,
                            lambda o=o_s, n=n: change_types(o, n),
                            lambda o=o_s, n=n: change_types_found(o, n),
                        ),
                    ),
                    (
                        "raw_stored",
                        (
                            "full outer join on id, the old side's stored row hash",
                            rows,
                            lambda o=o_s, n=n: raw_stored_join(o, n),
                        ),
                    ),
                    (
                        "stored",
                        (
                            "full outer join on the old side's stored hashes",
                            rows,
                            lambda o=o_s, n=n: stored_join(o, n),
                        ),
                    ),
                    (
                        "stored_bucket_pass",
                        (
                            "profile: the bucket pass alone, old side with stored hashes",
                            rows,
                            lambda o=o_s, n=n: bucket_pass(o, n),
                        ),
                    ),
                ]
            # What hx.diff's time is made of: its bucket pass, and the cost of reading both snapshots once; and
            # what changed_columns=False adds to the join on id.
            keyed += [
                (
                    "window",
                    (
                        "profile: the join on id with hx.diff's per-key window",
                        rows,
                        lambda o=o, n=n: windowed_join(o, n),
                    ),
                ),
                (
                    "bucket_pass",
                    ("profile: hx.diff's bucket pass alone", rows, lambda o=o, n=n: bucket_pass(o, n)),
                ),
                (
                    "read",
                    (
                        "profile: one read of both snapshots (every column, to noop)",
                        rows,
                        lambda o=o, n=n: noop(read(o).unionByName(read(n))),
                    ),
                ),
            ]
            res = b.measure_rounds(
                [c for _, c in keyed], rounds=rounds, warmup=b.warmup if size == smallest else 0
            )
            case = {"results": res, "rows": size, "fraction": f, **{k: r for (k, _), r in zip(keyed, res)}}
            if peers and size == smallest and f == min(fractions):
                slow_note = "" if peer_runs is None else f"{peer_runs} run(s), no warm-up (--peer-runs)"
                res.append(
                    b.measure(
                        "exceptAll, both ways",
                        rows,
                        lambda o=o, n=n: (
                            read(o).exceptAll(read(n)).count(),
                            read(n).exceptAll(read(o)).count(),
                        ),
                        runs=peer_runs,
                        note=slow_note,
                    )
                )
                if compare_cls is not None:
                    res.append(_datacompy(b, compare_cls, read(o), read(n), rows, peer_runs, slow_note))
            per_case[(size, f)] = case
    return per_case


def _datacompy(b: Bench, compare_cls, old, new, rows: int, peer_runs: int | None, slow_note: str) -> Result:
    from pyspark.sql import functions as F

    # datacompy 1.1.0 computes TRY_CAST(<column> AS DOUBLE) for every compared column, which Spark 4 refuses for
    # DATE at analysis (DATATYPE_MISMATCH.CAST_WITH_FUNC_SUGGESTION, ANSI on or off), so it gets the DATE
    # columns as their day numbers (unix_date, an INT).
    dates = [f.name for f in old.schema.fields if f.dataType.typeName() == "date"]

    def days(df):
        return df.withColumns({c: F.unix_date(c) for c in dates}) if dates else df

    def run_dc():
        cmp = compare_cls(b.spark, days(old), days(new), join_columns="id")
        found = (cmp.df1_unq_rows.count(), cmp.df2_unq_rows.count(), cmp.count_matching_rows())
        cmp.intersect_rows.unpersist()
        return found

    return b.measure(
        "datacompy SparkSQLCompare(old, new, 'id')",
        rows,
        run_dc,
        note="constructor (runs the comparison) + unique-row and matching-row counts"
        + (f"; DATE column(s) {', '.join(dates)} passed as unix_date (see README)" if dates else "")
        + (f"; {slow_note}" if slow_note else ""),
        runs=peer_runs,
    )


def render(args, per_case: dict, sections: dict, targets: list[str]) -> list[str]:
    lines = [
        "## Diff of Parquet snapshots (old vs new, keyed by id)",
        "",
        (
            "Both sides are Parquet files, read afresh in every run (nothing cached). `hx.diff` writes its "
            "whole output (keys, change, side, changed_columns) to `noop`, and with `changed_columns=False` "
            "its change types alone; each full outer join counts the keys whose row hashes differ. The join on "
            "`id` itself with `record_hash` of the other columns is the one a user with a one-column key writes, "
            "the baseline of both targets: `changed_columns=False` within 1.1× of it, the full diff within 1.1× "
            "of it plus one read of both snapshots (naming changed columns needs the values). Two profile candidates time the parts of hx.diff: its first query "
            "alone (the bucket pass), and one read of both snapshots with every column; at the smallest "
            "size a third times the bucket pass with the old side's stored hashes. Candidates run "
            f"interleaved, {args.diff_rounds} rounds; at the smallest size after {args.warmup} warm-up."
        ),
        "",
    ]
    for (size, f), s in per_case.items():
        lines += (
            [f"### {size:,} rows a side, {f:.3%} of the rows changed", ""]
            + table(s["results"], s["hx"])
            + ["", diff_profile(s), ""]
        )
        found = [f"{r.name}: {r.found}" for r in s["results"] if r.found is not None]
        if found:
            lines += ["Warm-up results (what each found): " + "; ".join(found), ""]
    for (size, f), s in per_case.items():
        targets += diff_targets("diff", size, f, s)
    return lines


def diff_profile(s: dict) -> str:
    """What one diff case's hx.diff time is made of, from the profile candidates."""
    hx_t, raw_t = s["hx"].median, s["raw"].median
    bp, rd = s["bucket_pass"].median, s["read"].median
    rest = hx_t - bp
    return (
        f"Profile: hx.diff's bucket pass alone takes {bp:.2f} s, {bp / raw_t:.2f}× the join on id; the rest of hx.diff (a second read of both sides, the join of the rows near changes, the output) "
        f"takes {rest:.2f} s, {rest / rd:.2f}× one read of both snapshots ({rd:.2f} s)." + stored_profile(s)
    )


def stored_profile(s: dict) -> str:
    """What hx.diff with the old side's stored hashes is made of, when the case timed its bucket pass."""
    if "stored_bucket_pass" not in s:
        return ""
    t, st, bp = s["hx_stored"].median, s["stored"].median, s["stored_bucket_pass"].median
    return (
        f" With the old side's stored hashes the bucket pass takes {bp:.2f} s, {bp / st:.2f}× the join on the "
        f"stored hashes, and the rest of hx.diff {t - bp:.2f} s: to name the changed columns it reads the old "
        "side's values, which that join never reads."
    )


def stored_split(s: dict) -> str:
    """The stored-hash diff's bucket pass against the join on the stored hashes, when timed."""
    if "stored_bucket_pass" not in s:
        return ""
    bp = s["stored_bucket_pass"].median
    return f"; its bucket pass alone {bp:.2f} s, the rest {s['hx_stored'].median - bp:.2f} s"


def diff_targets(what: str, size: int, f: float, s: dict) -> list[str]:
    """The target lines of one diff case: against the join on the raw key a user writes (and that join plus one
    read of both snapshots, the floor of a diff that names changed columns), the record_key/record_hash join
    and the md5 join; with the old side's stored hashes where the case timed them."""
    hx_t, types_t, raw_t, rd = s["hx"].median, s["hx_types"].median, s["raw"].median, s["read"].median
    rh_t, md5_t = s["rh"].median, s["md5"].median
    floor = raw_t + rd
    case = f"{what}, {size:,} rows, {f:.3%}"
    lines = [
        (
            f"- {case}: changed_columns=False ≤ 1.1× the join on id: {verdict(types_t <= 1.1 * raw_t)} "
            f"({types_t:.2f} s vs {raw_t:.2f} s, {types_t / raw_t:.2f}×); the full diff ≤ 1.1× (the join on id + one "
            f"read of both snapshots): {verdict(hx_t <= 1.1 * floor)} ({hx_t:.2f} s vs {floor:.2f} s, "
            f"{hx_t / floor:.2f}×); hx.diff ≤ the record_key/record_hash join: {verdict(hx_t <= rh_t)} "
            f"({rh_t / hx_t:.2f}×); ≥ 5× faster than the md5 join: {verdict(md5_t >= 5 * hx_t)} "
            f"({md5_t / hx_t:.2f}×{md5_floor(s)})"
        )
    ]
    if "hx_stored" in s:
        t, types_st, raw_st, st = (
            s["hx_stored"].median,
            s["hx_types_stored"].median,
            s["raw_stored"].median,
            s["stored"].median,
        )
        lines.append(
            f"- {case}, old side with stored hashes: changed_columns=False ≤ 1.1× the join on id with the stored "
            f"row hash: {verdict(types_st <= 1.1 * raw_st)} ({types_st:.2f} s vs {raw_st:.2f} s, "
            f"{types_st / raw_st:.2f}×); the full diff ≤ 1.1× (that join + one read of both snapshots): "
            f"{verdict(t <= 1.1 * (raw_st + rd))} ({t:.2f} s vs {raw_st + rd:.2f} s, {t / (raw_st + rd):.2f}×); "
            f"≤ the join on the stored hashes: {verdict(t <= st)} ({t:.2f} s vs {st:.2f} s{stored_split(s)})"
        )
    return lines


def md5_floor(s: dict) -> str:
    """Why 5× the md5 join is out of reach when it is: the time it leaves against one read of the inputs."""
    md5_t, hx_t, rd = s["md5"].median, s["hx"].median, s["read"].median
    if md5_t >= 5 * hx_t:
        return ""
    return f"; 5× would be {md5_t / 5:.2f} s, and one read of both snapshots alone took {rd:.2f} s"
