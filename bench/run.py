"""`make bench`: hashexpr against the usual alternatives, side by side in one local Spark.

Every candidate runs on the same cached DataFrame, once as a warm-up and then ``--runs`` times (the row-hash and
fingerprint candidates in rounds, each once per round, so that they share the machine's slow spells); the report gives
the median wall time, rows per second, the ratio to hashexpr's own candidate and the JVM's GC time and bytes
allocated during the run (local mode: driver and executor share one JVM, so the JVM-wide counters are the
executor's). Sections: ``hash`` (10 mixed columns), ``wide`` (50/100/200 columns), ``nested`` (arrays, maps,
structs), ``fingerprint``, ``arrow`` (hashexpr.arrow, the Rust engine, against Spark and Python peers), ``diff``
and ``sql`` (hashexpr.sql in DuckDB and PostgreSQL, no Spark). See ``bench/README.md``. Benchmarks are not
tests: nothing here asserts.

    python bench/run.py [--rows N] [--wide-rows N] [--runs N] [--only hash,diff] [--out bench/RESULTS.md]
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import importlib
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

SECTIONS = ("hash", "secure", "wide", "nested", "fingerprint", "arrow", "diff", "cluster", "scale", "sql")
#: Sections that need no Spark (a run of these alone starts none).
SPARKLESS = ("sql",)
HERE = Path(__file__).resolve().parent

# The ten mixed columns: name -> SQL expression over `id` (a deterministic pseudo-random value per row).
_MIXED = {
    "id": "id",
    "i": "cast(pmod(hash(id, 1), 1000000) as int)",
    "l": "xxhash64(id, 2)",
    "d": "cast(hash(id, 3) as double) / 1000",
    "s": "concat('customer_', cast(pmod(hash(id, 4), 100000) as string))",
    "ns": "case when pmod(hash(id, 5), 10) = 0 then null else concat('note ', hex(hash(id, 5))) end",
    "dt": "date_add(date'2000-01-01', pmod(hash(id, 6), 10000))",
    "ts": "timestamp_seconds(946684800 + pmod(xxhash64(id, 7), 700000000))",
    "dec": "cast(pmod(hash(id, 8), 100000000) / 100 as decimal(18, 2))",
    "b": "pmod(hash(id, 9), 2) = 0",
}

# The column kinds the wide data cycles through; {s} is a per-column seed.
_WIDE_KINDS = (
    "cast(pmod(hash(id, {s}), 1000000) as int)",
    "xxhash64(id, {s})",
    "cast(hash(id, {s}) as double) / 1000",
    "concat('v', cast(pmod(hash(id, {s}), 100000) as string))",
    "case when pmod(hash(id, {s}), 10) = 0 then null else hex(hash(id, {s})) end",
    "date_add(date'2000-01-01', pmod(hash(id, {s}), 10000))",
    "timestamp_seconds(946684800 + pmod(xxhash64(id, {s}), 700000000))",
    "cast(pmod(hash(id, {s}), 100000000) / 100 as decimal(18, 2))",
    "pmod(hash(id, {s}), 2) = 0",
)

# Nested columns: arrays of 0-4 elements, maps of 0-3 entries, structs (one of them sometimes NULL).
_NESTED = {
    "id": "id",
    "tags": "transform(filter(sequence(0, 3), i -> i < pmod(hash(id, 11), 5)), i -> concat('tag', i * 7 + pmod(id, 13)))",
    "nums": "transform(filter(sequence(0, 3), i -> i < pmod(hash(id, 12), 5)), i -> cast(hash(id, i) as int))",
    "attrs": "map_from_arrays(transform(filter(sequence(0, 2), i -> i < pmod(hash(id, 13), 4)), i -> concat('k', i)),"
    " transform(filter(sequence(0, 2), i -> i < pmod(hash(id, 13), 4)), i -> pmod(hash(id, i, 14), 1000)))",
    "point": "named_struct('x', hash(id, 15) / 7.0, 'y', hash(id, 16) / 3.0, 'label', concat('p', pmod(id, 97)))",
    "items": "transform(filter(sequence(0, 2), i -> i < pmod(hash(id, 17), 4)), i -> named_struct("
    "'sku', concat('sku-', pmod(hash(id, i, 18), 5000)), 'qty', pmod(hash(id, i, 19), 9),"
    " 'price', cast(pmod(hash(id, i, 20), 100000) / 100 as decimal(10, 2))))",
    "props": "map_from_arrays(transform(filter(sequence(0, 1), i -> i < pmod(hash(id, 21), 3)), i -> concat('p', i)),"
    " transform(filter(sequence(0, 1), i -> i < pmod(hash(id, 21), 3)), i -> array(i, pmod(hash(id, 22), 100))))",
    "maybe": "case when pmod(hash(id, 23), 4) = 0 then null else named_struct('a', pmod(id, 10), 'b', 'x') end",
}


@dataclass
class Result:
    name: str
    rows: int
    times: list[float] = field(default_factory=list)
    gc: list[float] = field(default_factory=list)
    alloc: list[float] = field(default_factory=list)
    note: str = ""
    found: object = None  # what the warm-up run returned (e.g. a count), for a correctness glance

    @property
    def median(self) -> float:
        return statistics.median(self.times)

    @property
    def rows_per_s(self) -> float:
        return self.rows / self.median

    @property
    def gc_median(self) -> float:
        return statistics.median(self.gc) if self.gc else float("nan")

    @property
    def alloc_per_row(self) -> float:
        return statistics.median(self.alloc) / self.rows if self.alloc else float("nan")


class Bench:
    def __init__(self, spark, runs: int, warmup: int, log=print, rounds: int | None = None):
        self.spark = spark
        self.runs = runs
        self.rounds = rounds or runs
        self.warmup = warmup
        self.log = log
        jvm = spark.sparkContext._jvm
        mf = jvm.java.lang.management.ManagementFactory
        self._gc_beans = list(mf.getGarbageCollectorMXBeans())
        self._threads = mf.getThreadMXBean()
        try:  # com.sun.management.ThreadMXBean (HotSpot, JDK 14+): bytes allocated by every thread so far
            self._threads.getTotalThreadAllocatedBytes()
            self._alloc_ok = True
        except Exception:  # noqa: BLE001 - another JVM or no access: report no allocation figure
            self._alloc_ok = False

    def gc_seconds(self) -> float:
        return sum(max(b.getCollectionTime(), 0) for b in self._gc_beans) / 1000.0

    def allocated(self) -> float:
        return float(self._threads.getTotalThreadAllocatedBytes()) if self._alloc_ok else float("nan")

    def _timed(self, res: Result, action: Callable[[], object]) -> None:
        gc0, a0, t0 = self.gc_seconds(), self.allocated(), time.perf_counter()
        action()
        t1 = time.perf_counter()
        res.times.append(t1 - t0)
        res.gc.append(self.gc_seconds() - gc0)
        res.alloc.append(self.allocated() - a0)

    def _logged(self, res: Result) -> Result:
        self.log(
            f"  {res.name:<44} median {res.median:8.3f} s  {res.rows_per_s:14,.0f} rows/s  "
            f"GC {res.gc_median:6.3f} s  {res.alloc_per_row:9,.0f} B/row  runs {fmt_times(res.times)}"
        )
        return res

    def measure_rounds(
        self,
        candidates: list[tuple],
        rounds: int | None = None,
        warmup: int | None = None,
        after_run: Callable[[Result], None] | None = None,
    ) -> list[Result]:
        """Warm every candidate up, then run them in rounds, each once per round (``rounds`` rounds).

        A candidate is ``(name, rows, action)`` or ``(name, rows, action, warm-up action)``; what the last
        warm-up returns is kept as ``found``. Candidates whose ratios are compared run interleaved, so a slow
        spell of the machine (another process, a GC, the CPU clock) falls on all of them instead of on the one
        that happened to run then. ``after_run`` is called after each timed run.
        """
        results = [Result(c[0], c[1]) for c in candidates]
        for res, c in zip(results, candidates):
            for _ in range(self.warmup if warmup is None else warmup):
                res.found = (c[3] if len(c) > 3 else c[2])()
        for _ in range(self.rounds if rounds is None else rounds):
            for res, c in zip(results, candidates):
                self._timed(res, c[2])
                if after_run is not None:
                    after_run(res)
        return [self._logged(res) for res in results]

    def measure(
        self,
        name: str,
        rows: int,
        action: Callable[[], object],
        note: str = "",
        warmup_action: Callable[[], object] | None = None,
        runs: int | None = None,
    ) -> Result:
        """Run ``action`` after ``warmup`` warm-ups; record wall time, GC time and allocation of each run.

        With ``runs`` the candidate runs that often and without a warm-up (for peers that take minutes).
        """
        res = Result(name, rows, note=note)
        for _ in range(self.warmup if runs is None else 0):
            res.found = (warmup_action or action)()
        for _ in range(self.runs if runs is None else runs):
            self._timed(res, action)
        return self._logged(res)


def fmt_times(ts: list[float]) -> str:
    return "[" + ", ".join(f"{t:.2f}" for t in ts) + "]"


def noop(df) -> None:
    df.write.format("noop").mode("overwrite").save()


def cache(df, what: str, log=print):
    t0 = time.perf_counter()
    df = df.cache()
    n = df.count()
    log(f"  cached {what}: {n:,} rows x {len(df.columns)} columns in {time.perf_counter() - t0:.1f} s")
    return df, n


def q(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def cast_str(cols) -> list[str]:
    return [f"cast({q(c)} as string)" for c in cols]


def row_hash_candidates(cols: list[str]) -> dict[str, str]:
    """SQL expressions for the row hashes compared with record_hash, over the columns ``cols``."""
    qc = ", ".join(q(c) for c in cols)
    ws = ", ".join(cast_str(cols))
    loader = ", '||', ".join(f"coalesce({e}, '')" for e in cast_str(cols))
    return {
        "hash(...)  [Spark, 32-bit]": f"hash({qc})",
        "xxhash64(...)  [Spark, 64-bit]": f"xxhash64({qc})",
        "md5(concat_ws('||', ...))": f"md5(concat_ws('||', {ws}))",
        "md5(concat(coalesce(cast(c as string), ''), ...))": f"md5(concat({loader}))",
        "sha2(concat_ws('||', ...), 256)": f"sha2(concat_ws('||', {ws}), 256)",
    }


# ----------------------------------------------------------------------------------------------- sections


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


def section_secure(b: Bench, df, rows: int) -> dict:
    """record_hash under sha256 and hmac-sha256 against murmur3 and sha2(concat_ws(...), 256)."""
    import hashexpr as hx

    cols = df.columns
    sha2 = row_hash_candidates(cols)["sha2(concat_ws('||', ...), 256)"]
    out = b.measure_rounds(
        [
            ("hx.record_hash(*)  [murmur3]", rows, lambda: noop(df.select(hx.record_hash(*cols).alias("h")))),
            (
                "hx.record_hash(*, algorithm='sha256')",
                rows,
                lambda: noop(df.select(hx.record_hash(*cols, algorithm="sha256").alias("h"))),
            ),
            (
                "hx.record_hash(*, algorithm='hmac-sha256')",
                rows,
                lambda: noop(
                    df.select(hx.record_hash(*cols, algorithm="hmac-sha256", secret="bench").alias("h"))
                ),
            ),
            (
                "sha2(concat_ws('||', ...), 256)",
                rows,
                lambda: noop(df.selectExpr(f"{sha2} as h")),
            ),
        ]
    )
    fingerprints = b.measure_rounds(
        [
            ("hx.dataset_fingerprint(df)  [murmur3]", rows, lambda: hx.dataset_fingerprint(df)),
            (
                "hx.dataset_fingerprint(df, 'lthash16')",
                rows,
                lambda: hx.dataset_fingerprint(df, algorithm="lthash16"),
            ),
            (
                "hx.dataset_fingerprint(df, 'lthash16', secret=...)",
                rows,
                lambda: hx.dataset_fingerprint(df, algorithm="lthash16", secret="bench"),
            ),
        ]
    )
    return {
        "results": out,
        "murmur3": out[0],
        "sha256": out[1],
        "hmac": out[2],
        "sha2": out[3],
        "fingerprints": fingerprints,
        "hmac_cost": hmac_cost(b),
    }


#: The mean length of a 10-column row's canonical encoding in the bench data (hashexpr.reference.encode_record).
ROW_ENCODING_BYTES = 105
#: Timed rounds of bench/HmacCost.java (it reports their median).
HMAC_COST_ROUNDS = 5


def hmac_cost(b: Bench) -> list[tuple[str, float, str]] | None:
    """Nanoseconds per message of SHA-256 and of each way to compute HMAC-SHA-256 with the JDK's public API
    (``bench/HmacCost.java``, in a JVM of its own): the floor under the hmac-sha256/sha256 ratio."""
    import subprocess

    java = Path(os.environ["JAVA_HOME"], "bin", "java") if os.environ.get("JAVA_HOME") else "java"
    b.log(f"  HMAC-SHA-256 variants on {ROW_ENCODING_BYTES}-byte messages (bench/HmacCost.java)")
    try:
        done = subprocess.run(
            [str(java), str(HERE / "HmacCost.java"), str(ROW_ENCODING_BYTES), str(HMAC_COST_ROUNDS)],
            capture_output=True,
            text=True,
            check=True,
            timeout=600,
        )
    except (OSError, subprocess.SubprocessError) as e:
        b.log(f"  HmacCost.java did not run ({e}); left out")
        return None
    rows = []
    for line in done.stdout.splitlines():
        if line and not line.startswith("#"):
            name, median, runs = line.split("\t")
            rows.append((name, float(median), runs))
            b.log(f"    {name:32s} {float(median):7.1f} ns")
    return rows


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

    inputs = importlib.import_module("hashexpr.diff.inputs")
    buckets = importlib.import_module("hashexpr.diff.buckets")

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

    rows_module = importlib.import_module("hashexpr.diff.rows")

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
                    for i, lane in enumerate(rows_module.lanes("h"))
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
            str(Path(__file__).resolve()),
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
            spark, Path(args.data_dir), rows, fractions, _MIXED, make_new, log, stored=rows in args.diff_sizes
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
                str(Path(__file__).resolve()),
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
    ss = snapshot_set(spark, Path(args.data_dir), args.cluster_rows, args.fractions, _MIXED, make_new, log)
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


# ----------------------------------------------------------------------------------------------- report


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


def render(args, spark, sizes: dict, sections: dict, started: float) -> str:
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

    if "hash" in sections:
        s = sections["hash"]
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

    if "secure" in sections:
        s = sections["secure"]
        mm, sha, mac, sha2 = s["murmur3"], s["sha256"], s["hmac"], s["sha2"]
        lines += ["## Row hash with SHA-256 and HMAC-SHA-256, 10 mixed columns", ""] + table(
            s["results"], sha
        )
        lines += [""]
        targets.append(
            f"- sha256 record_hash ≤ 2× murmur3 record_hash: {verdict(sha.median <= 2 * mm.median)} "
            f"(sha256 {sha.median:.3f} s / murmur3 {mm.median:.3f} s = {sha.median / mm.median:.2f})"
        )
        targets.append(
            f"- sha256 record_hash ≥ 3× faster than sha2(concat_ws, 256): {verdict(sha2.median >= 3 * sha.median)} "
            f"(sha2 {sha2.median:.3f} s / sha256 {sha.median:.3f} s = {sha2.median / sha.median:.2f}×)"
        )
        targets.append(
            f"- hmac-sha256 ≤ 1.2× sha256: {verdict(mac.median <= 1.2 * sha.median)} "
            f"(hmac {mac.median:.3f} s / sha256 {sha.median:.3f} s = {mac.median / sha.median:.2f})"
        )
        if s.get("hmac_cost"):
            costs = {name: ns for name, ns, _ in s["hmac_cost"]}
            plain, cloned = costs["sha256"], costs["clone both"]
            # local[2]: both cores hash, so a row costs twice its share of the wall time in CPU.
            row_ns = sha.median / sha.rows * 2e9
            lines += [
                (
                    f"What HMAC adds per message, outside Spark (`bench/HmacCost.java`, {ROW_ENCODING_BYTES}-byte "
                    f"messages, the mean encoding of a row here; median of {HMAC_COST_ROUNDS} rounds of 2,000,000 calls; every "
                    "variant checked against `javax.crypto.Mac`):"
                ),
                "",
                "| variant | ns per message | over sha256 | runs (ns) |",
                "|---|---:|---:|---|",
            ]
            lines += [
                f"| {name} | {ns:.1f} | {ns - plain:+.1f} | {runs} |" for name, ns, runs in s["hmac_cost"]
            ]
            lines += [
                "",
                (
                    f"The encoder's way (clone both) is the cheapest: {cloned - plain:.0f} ns over SHA-256's "
                    f"{plain:.0f} ns. Spent on each row of the sha256 candidate above "
                    f"({row_ns:.0f} ns of CPU per row), it puts hmac-sha256/sha256 at "
                    f"{(row_ns + cloned - plain) / row_ns:.2f} at best."
                ),
                "",
            ]
        fp, lt, lt_mac = s["fingerprints"]
        lines += ["## Dataset fingerprint: murmur3 sum and lthash16, 10 mixed columns", ""]
        lines += table(s["fingerprints"], fp) + [""]
        cost = (
            f"lthash16 costs {lt.median / fp.median:.1f}× the default fingerprint "
            f"({(lt.median - fp.median) / lt.rows * 1e9:.0f} ns more per row, wall time on the run's cores); "
            f"keyed, {lt_mac.median / fp.median:.1f}×."
        )
        lines += [cost, ""]

    if "wide" in sections:
        s = sections["wide"]
        lines += (
            ["## Wide data (record_hash at 50, 100, 200 columns)", ""] + table(s["results"], s["hx"]) + [""]
        )
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
                f"| {k} | {rh.median:.3f} | {per[k][0]:.1f} | {scan.median:.3f} | {net:.3f} | "
                f"{per[k][1]:.1f} |"
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

    if "nested" in sections:
        s = sections["nested"]
        lines += ["## Nested data (arrays, maps, structs)", ""] + table(s["results"], s["hx"]) + [""]

    if "fingerprint" in sections:
        s = sections["fingerprint"]
        lines += ["## Dataset fingerprint", ""] + table(s["results"], s["hx"]) + [""]
        ratio = s["fp"].median / s["hx"].median
        targets.append(
            f"- dataset_fingerprint ≤ 1.3× a record_hash pass: {verdict(ratio <= 1.3)} "
            f"(fingerprint {s['fp'].median:.3f} s / record_hash pass {s['hx'].median:.3f} s = "
            f"{ratio:.2f}×)"
        )

    if "arrow" in sections:
        from arrow_section import report as arrow_report

        lines += arrow_report(sections["arrow"], args.rows, table, verdict, targets)

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

    if "diff" in sections:
        lines += [
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
        for (size, f), s in sections["diff"].items():
            lines += (
                [f"### {size:,} rows a side, {f:.3%} of the rows changed", ""]
                + table(s["results"], s["hx"])
                + ["", diff_profile(s), ""]
            )
            found = [f"{r.name}: {r.found}" for r in s["results"] if r.found is not None]
            if found:
                lines += ["Warm-up results (what each found): " + "; ".join(found), ""]
        for (size, f), s in sections["diff"].items():
            targets += diff_targets("diff", size, f, s)

    if "cluster" in sections:
        lines += cluster_report(args, sections["cluster"], targets)
    if "scale" in sections:
        lines += scale_report(args, sections["scale"], targets)
    if "sql" in sections:
        from sql_bench import report as sql_report

        lines += sql_report(sections["sql"], targets, table)

    if targets:
        lines += ["## Targets (from this one run)", ""] + targets + [""]
    if args.codegen_out and "hash" in sections:
        lines += [
            "## Appendix: generated code",
            "",
            (
                f"`EXPLAIN CODEGEN` of `SELECT record_hash(*) FROM` the 10-column data: "
                f"[{Path(args.codegen_out).name}]({Path(args.codegen_out).name})."
            ),
            "",
        ]
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


# ----------------------------------------------------------------------------------------------- main


def build_spark(args):
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    # Python UDF workers run this interpreter (with pyarrow), not whatever python3 is first on PATH.
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from pyspark.sql import SparkSession

    import hashexpr as hx

    builder = (
        SparkSession.builder.master(args.master)
        .appName("hashexpr-bench")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.driver.memory", args.driver_memory)
        .config("spark.sql.shuffle.partitions", str(args.shuffle_partitions))
        .config("spark.ui.showConsoleProgress", "false")
        # The key of the secure section's hmac-sha256 candidate (secrets come with the configuration).
        .config("spark.hashexpr.secret.bench", "a bench key, 32 bytes long....")
        # Debug information at every instruction, not only at safepoints, so that the JFR profile of the wide
        # section names the line a sample was taken in, also inside inlined code.
        .config("spark.driver.extraJavaOptions", "-XX:+UnlockDiagnosticVMOptions -XX:+DebugNonSafepoints")
    )
    if not args.master.startswith("local"):
        builder = builder.config("spark.executor.memory", args.cluster_executor_memory).config(
            "spark.executor.cores", "1"
        )
    spark = hx.configure(builder).getOrCreate()
    spark.sparkContext.setLogLevel("WARN")
    return spark


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

    if args.scale_worker:
        scale_worker(args, log)
        return 0
    if args.cluster_worker:
        cluster_worker(args, log)
        return 0
    if all(section in SPARKLESS for section in args.only):
        spark, b = None, None
        log(f"sections: {', '.join(args.only)} (no Spark)")
    else:
        spark = build_spark(args)
        log(f"Spark {spark.version} up, sections: {', '.join(args.only)}")
        b = Bench(spark, args.runs, args.warmup, log, rounds=args.rounds)
    mixed_cols = ", ".join(_MIXED)
    sections, sizes = {}, {}

    def mixed(n):
        return spark.range(n).selectExpr(*[f"{e} as {q(c)}" for c, e in _MIXED.items()])

    base, base_n = None, 0
    if (
        "hash" in args.only
        or "secure" in args.only
        or "arrow" in args.only
        or ("fingerprint" in args.only and args.fingerprint_rows == args.rows)
    ):
        log("section data: 10 mixed columns")
        base, base_n = cache(mixed(args.rows), "10-column data", log)
    if "hash" in args.only:
        log("section hash")
        sizes["hash (10 mixed columns)"] = (base_n, mixed_cols)
        sections["hash"] = section_hash(
            b, base, base_n, args.udf_rows, Path(args.codegen_out) if args.codegen_out else None
        )
    if "secure" in args.only:
        log("section secure")
        sizes["secure (the 10-column data)"] = (base_n, mixed_cols)
        sections["secure"] = section_secure(b, base, base_n)
    if "fingerprint" in args.only:
        log("section fingerprint")
        fdf, fn = (
            (base, base_n) if base is not None else cache(mixed(args.fingerprint_rows), "10-column data", log)
        )
        sizes["fingerprint (the 10-column data)"] = (fn, mixed_cols)
        sections["fingerprint"] = section_fingerprint(b, fdf, fn)
        if fdf is not base:
            fdf.unpersist()
    if "arrow" in args.only:
        from arrow_section import section_arrow

        log("section arrow")
        sizes["arrow (the 10-column data, and the nested data)"] = (base_n, mixed_cols)
        nested_arrow, nested_arrow_n = cache(
            spark.range(args.nested_rows).selectExpr(*[f"{e} as {q(c)}" for c, e in _NESTED.items()]),
            "nested data",
            log,
        )
        sections["arrow"] = section_arrow(
            b, base, base_n, nested_arrow, nested_arrow_n, args.stream_rows, noop, log
        )
        nested_arrow.unpersist()
    if base is not None:
        base.unpersist()
    if "wide" in args.only:
        log("section wide")
        exprs = [f"{_WIDE_KINDS[k % len(_WIDE_KINDS)].format(s=100 + k)} as c{k + 1:03d}" for k in range(200)]
        wide, wn = cache(spark.range(args.wide_rows).selectExpr(*exprs), "200-column data", log)
        sizes["wide"] = (
            wn,
            (
                "200 columns cycling int, bigint, double, string, nullable string, date, timestamp, "
                "decimal(18,2), boolean; the first 50/100/200 are hashed"
            ),
        )
        sections["wide"] = section_wide(b, wide, wn)
        wide.unpersist()
    if "nested" in args.only:
        log("section nested")
        nested, nn = cache(
            spark.range(args.nested_rows).selectExpr(*[f"{e} as {q(c)}" for c, e in _NESTED.items()]),
            "nested data",
            log,
        )
        sizes["nested"] = (
            nn,
            ", ".join(f"{f.name} {f.dataType.simpleString()}" for f in nested.schema.fields),
        )
        sections["nested"] = section_nested(b, nested, nn)
        nested.unpersist()
    if "diff" in args.only:
        from snapshots import MORE_COLUMNS, snapshot_set

        log("section diff")
        sets = {
            n: snapshot_set(spark, Path(args.data_dir), n, args.fractions, _MIXED, make_new, log)
            for n in args.diff_sizes
        }
        for n in args.diff_sizes:
            sizes[f"diff, Parquet files (each side; new = old with changes), {n:,} rows"] = (
                n,
                f"{mixed_cols}, {', '.join(MORE_COLUMNS)}",
            )
        sections["diff"] = section_diff(
            b, sets, args.fractions, not args.no_datacompy, args.peer_runs or None, args.diff_rounds
        )
    if "cluster" in args.only:
        from snapshots import MORE_COLUMNS

        log("section cluster")
        sizes[f"cluster, Parquet files (each side), {args.cluster_rows:,} rows"] = (
            args.cluster_rows,
            f"{mixed_cols}, {', '.join(MORE_COLUMNS)}",
        )
        sections["cluster"] = section_cluster(args, log)
    if "scale" in args.only:
        log("section scale")
        sections["scale"] = section_scale(args, log)
    if "sql" in args.only:
        from sql_bench import section_sql

        log("section sql")
        sizes["sql (DuckDB and PostgreSQL tables)"] = (args.sql_rows, mixed_cols)
        sections["sql"] = section_sql(args, log, Result)

    report = render(args, spark, sizes, sections, started)
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
