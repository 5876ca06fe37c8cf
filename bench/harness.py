"""What every section of `make bench` shares: the data, the timing harness and the Spark session.

The data are SQL expressions over ``spark.range``'s ``id`` (a deterministic pseudo-random value per row): the ten
mixed columns of the hash, secure, fingerprint, arrow and sql sections and of the Parquet snapshots, the kinds the
wide data cycles through, and the nested columns. :class:`Bench` times candidates (wall time, the JVM's GC time and
bytes allocated), :class:`Result` holds one candidate's runs, and :class:`Context` is what a section's ``run`` gets.
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

#: The bench folder (bench/run.py, HmacCost.java, RESULTS.md).
HERE = Path(__file__).resolve().parent

# The ten mixed columns: name -> SQL expression over `id` (a deterministic pseudo-random value per row).
MIXED = {
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
WIDE_KINDS = (
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
NESTED = {
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


def mixed(spark, n: int):
    """``n`` rows of the ten mixed columns."""
    return spark.range(n).selectExpr(*[f"{e} as {q(c)}" for c, e in MIXED.items()])


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


@dataclass
class Context:
    """What a section's ``run`` gets: the parsed flags, the Spark session and its :class:`Bench` (both ``None``
    when no chosen section needs Spark), the log, the Data table's rows (``sizes``: what -> (rows, columns)) and,
    while it is cached, the shared 10-column data and its row count (``mixed``; ``(None, 0)`` when not cached)."""

    args: object
    spark: object
    bench: Bench | None
    log: Callable[[str], None]
    sizes: dict[str, tuple[int, str]] = field(default_factory=dict)
    mixed: tuple = (None, 0)
