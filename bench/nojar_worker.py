"""The candidates of the nojar section of ``make bench`` (bench/sections/nojar.py), and its runs in processes of
their own.

A candidate is one of hashexpr's functions with the engine chosen for it: ``jar`` (hashexpr's Catalyst
functions) or ``arrow`` (the Rust engine in PySpark's Arrow UDFs and ``mapInArrow``). Both run in one session
with ``HASHEXPR_ENGINE`` set around each call (read at each call), or, over Spark Connect, each in a session of
a server started with the jar or without it. Each candidate's warm-up returns what it computed (a sum over every
hash, the fingerprint, the diff's counts), so the report can say that both engines gave the same result.

Run as a script, this module is the section's child process: ``python bench/nojar_worker.py SPEC.json OUT.json``,
where the spec says ``connect`` (a client of the two servers the section started) or ``classic`` (a local
session of the interpreter's Spark line, with the jar loaded: ``.venv-3.5`` for Spark 3.5, whose PySpark has no
Arrow UDFs).
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from harness import MIXED, Result, fmt_times, noop, q

#: The functions the section times, in the order of its tables. ``record_hash``, ``record_key`` and the
#: profile ``udf_floor`` are columns: without the jar, Arrow UDFs (PySpark 4.1 and later), or row by row in plain
#: Python UDFs before 4.1, timed there on fewer rows (``row_rows``).
FUNCTIONS = (
    "record_hash",
    "record_key",
    "dataset_fingerprint",
    "with_metadata",
    "diff",
)
COLUMN_FUNCTIONS = ("record_hash", "record_key")
#: What each function's candidate does, for the report.
LABELS = {
    "record_hash": "hx.record_hash(*) to noop",
    "record_key": "hx.record_key('id') to noop",
    "dataset_fingerprint": "hx.dataset_fingerprint(df)",
    "with_metadata": "hx.with_metadata(df, 'id') to noop",
    "diff": "hx.diff(old, new, 'id') to noop",
}
#: Profiles of the Arrow path: what moving the rows to Python workers and back costs with no hashing.
PROFILES = {
    "udf_floor": "profile: arrow_udf round trip, nothing hashed",
    "map_floor": "profile: mapInArrow transfer, nothing hashed",
}
#: The changed fraction of the diff's new side (bench/sections/diff.py's make_new).
DIFF_FRACTION = 0.01
#: Rows a partition of the cached data: enough partitions that no cached block is large.
ROWS_PER_PARTITION = 2_500_000
#: The fixed commit time of with_metadata's candidates (the same for both engines).
COMMIT_TIME = "2026-01-01T00:00:00Z"
ENGINE_VARIABLE = "HASHEXPR_ENGINE"


def has_arrow_udf() -> bool:
    from pyspark.sql import functions as F

    return hasattr(F, "arrow_udf")


@contextmanager
def engine(name: str | None) -> Iterator[None]:
    """``HASHEXPR_ENGINE=name`` for the block (``None``: unset, hashexpr's own choice)."""
    before = os.environ.get(ENGINE_VARIABLE)
    if name is None:
        os.environ.pop(ENGINE_VARIABLE, None)
    else:
        os.environ[ENGINE_VARIABLE] = name
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(ENGINE_VARIABLE, None)
        else:
            os.environ[ENGINE_VARIABLE] = before


def data(spark, rows: int):
    """``rows`` rows of the ten mixed columns (harness.MIXED, the hash section's), in partitions of at most
    :data:`ROWS_PER_PARTITION` rows; not cached."""
    parts = max(2, -(-rows // ROWS_PER_PARTITION))
    return spark.range(0, rows, 1, parts).selectExpr(*[f"{e} AS {q(c)}" for c, e in MIXED.items()])


def diff_sides(spark, rows: int):
    """The diff's old side (``rows`` rows of the ten mixed columns) and new side (:data:`DIFF_FRACTION` of the
    keys changed: a third updated, a third deleted, a third inserted); not cached."""
    from sections.diff import make_new

    old = data(spark, rows)
    return old, make_new(old, rows, DIFF_FRACTION)


def digest(df, cols: list[str]) -> str:
    """An order-free digest of every value of ``cols``: the sum of each row's xxhash64 of them."""
    total = df.selectExpr(f"sum(cast(xxhash64({', '.join(map(q, cols))}) as decimal(38, 0))) AS d").first()[0]
    return str(total)


def candidate(
    function: str, name: str, df, rows: int, sides=None
) -> tuple[str, int, Callable[[], object], Callable[[], object]]:
    """``(name, rows, action, warm-up action)`` of ``function`` on the engine ``name`` (``'jar'`` or
    ``'arrow'``, set as HASHEXPR_ENGINE around each call) over ``df`` (``sides``: the diff's old and new)."""
    import hashexpr as hx

    cols = df.columns if df is not None else []

    def forced(action: Callable[[], object]) -> Callable[[], object]:
        def run() -> object:
            with engine(name):
                return action()

        return run

    label = f"{LABELS[function]}  [{name}]"
    if function == "record_hash":

        def hashed():
            return df.select(hx.record_hash(*cols).alias("h"))

        return label, rows, forced(lambda: noop(hashed())), forced(lambda: digest(hashed(), ["h"]))
    if function == "record_key":

        def keyed():
            return df.select(hx.record_key("id").alias("h"))

        return label, rows, forced(lambda: noop(keyed())), forced(lambda: digest(keyed(), ["h"]))
    if function == "dataset_fingerprint":
        return (
            label,
            rows,
            forced(lambda: hx.dataset_fingerprint(df)),
            forced(lambda: hx.dataset_fingerprint(df)),
        )
    if function == "with_metadata":

        def stamped():
            return hx.with_metadata(df, "id", commit_time=COMMIT_TIME, commit_seqno=False, source_file=False)

        return (
            label,
            rows,
            forced(lambda: noop(stamped())),
            forced(lambda: digest(stamped(), ["_hx_record_key", "_hx_record_hash"])),
        )
    if function == "diff":
        old, new = sides
        return (
            label,
            rows,
            forced(lambda: noop(hx.diff(old, new, "id"))),
            forced(lambda: hx.summarize(hx.diff(old, new, "id"))),
        )
    raise ValueError(f"no candidate {function!r}")


def profile(kind: str, df, rows: int) -> tuple[str, int, Callable[[], object], Callable[[], object]]:
    """A profile candidate of the Arrow path (:data:`PROFILES`): the same route to the Python workers as
    hashexpr's, with nothing hashed."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import BinaryType, LongType, StructField, StructType

    if kind == "udf_floor":

        def zeros(*arrays):  # runs in the workers: pyarrow only, no name of this module
            import pyarrow as pa

            n = len(arrays[0])
            offsets = pa.array(range(0, 16 * n + 1, 16), pa.int32()).buffers()[1]
            return pa.Array.from_buffers(pa.binary(), n, [None, offsets, pa.py_buffer(bytes(16 * n))])

        # What hx.record_hash sends: each column, and the type text of their struct (a literal).
        udf = F.arrow_udf(zeros, BinaryType())
        arguments = [F.col(q(c)) for c in df.columns]
        catalog = F.call_function("typeof", F.struct(*arguments))

        def run() -> object:
            return noop(df.select(udf(*arguments, catalog).alias("h")))

        return PROFILES[kind], rows, run, run
    if kind == "map_floor":

        def counts(batches):  # runs in the workers
            import pyarrow as pa

            n = sum(batch.num_rows for batch in batches)
            yield pa.RecordBatch.from_pylist([{"n": n}], schema=pa.schema([("n", pa.int64())]))

        schema = StructType([StructField("n", LongType(), False)])

        def run() -> object:
            from hashexpr.spark.arrow_path.batches import unchecked_batch_bytes

            # As dataset_fingerprint runs its job: Spark 4's check of each batch's bytes off.
            with unchecked_batch_bytes(df.sparkSession):
                return sum(r["n"] for r in df.mapInArrow(counts, schema).collect())

        return PROFILES[kind], rows, run, run
    raise ValueError(f"no profile {kind!r}")


def candidates(functions: list[str], frames: dict[str, dict], profiles: bool) -> list[tuple[str, str, tuple]]:
    """``(function, engine, candidate)`` of every function on both engines, the jar's first, and the profiles.

    ``frames[engine]`` is the cached data of the engine's session (:func:`prepare`); each engine is forced by
    name in its candidates.
    """
    out = []
    for function in functions:
        for eng, f in frames.items():
            df, rows = (None, f["diff_input"]) if function == "diff" else (f["data"], f["rows"])
            out.append((function, eng, candidate(function, eng, df, rows, f["sides"])))
    if profiles:
        f = frames["arrow"]
        kinds = [k for k in PROFILES if has_arrow_udf() or k != "udf_floor"]
        out += [(kind, "arrow", profile(kind, f["data"], f["rows"])) for kind in kinds]
    return out


def engine_alone(df, batch_rows: int, sample_rows: int) -> dict:
    """What a Python worker does for ``record_hash(*)`` (``hashexpr.spark.arrow_path.worker.hash_rows``: the type
    check, the engine, the result's cast), on a sample of ``df`` in this process, one thread, in batches of
    ``batch_rows`` rows as the Arrow UDF gets them: the median of 3 passes."""
    import pyarrow as pa
    from pyspark.sql import functions as F

    from hashexpr.spark.arrow_path.worker import hash_rows

    cols = [q(c) for c in df.columns]
    text = df.select(F.call_function("typeof", F.struct(*cols))).first()[0]
    table = df.select(*cols).limit(sample_rows).toArrow().combine_chunks()
    batches = [
        (pa.StructArray.from_arrays(b.columns, names=b.schema.names), pa.array([text] * b.num_rows))
        for b in table.to_batches(max_chunksize=batch_rows)
    ]
    key = ("", False, None, False, "hash")
    times = []
    for _ in range(3):
        t0 = time.perf_counter()
        for values, catalog in batches:
            hash_rows("record_hash", values, catalog, "positional", "murmur3", None, key)
        times.append(time.perf_counter() - t0)
    return {"rows": table.num_rows, "batch_rows": batch_rows, "times": times}


class CpuMeter:
    """CPU seconds (user + system) of a Spark JVM (``pid``: a local-mode application or a Connect server, whose
    executors are its threads) and, apart, of every process it started: the Python workers and their daemon,
    with the workers that exited (reaped into the daemon's children's time). Read from /proc (Linux)."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.tick = os.sysconf("SC_CLK_TCK")

    @staticmethod
    def _stat(pid: int) -> list[str] | None:
        try:
            text = Path(f"/proc/{pid}/stat").read_text()
        except OSError:
            return None
        # The fields after the command, which is in parentheses and may hold spaces: state, ppid, ...
        return text[text.rindex(")") + 2 :].split()

    def snapshot(self) -> tuple[float, float]:
        stats = {}
        for entry in os.scandir("/proc"):
            if entry.name.isdigit():
                fields = self._stat(int(entry.name))
                if fields is not None:
                    stats[int(entry.name)] = fields
        if self.pid not in stats:
            return float("nan"), float("nan")
        children: dict[int, list[int]] = {}
        for pid, fields in stats.items():
            children.setdefault(int(fields[1]), []).append(pid)
        # utime, stime, cutime, cstime are fields 14-17 of stat(5); here 11-14, counted from the state.
        jvm = sum(int(x) for x in stats[self.pid][11:13])
        python, todo = 0, list(children.get(self.pid, []))
        while todo:
            pid = todo.pop()
            python += sum(int(x) for x in stats[pid][11:15])
            todo += children.get(pid, [])
        return jvm / self.tick, python / self.tick


def metered(cands: list[tuple], meters: dict[str, CpuMeter]) -> tuple[list[tuple], dict[str, list]]:
    """The candidates of ``cands`` (``(function, engine, candidate)``, from :func:`candidates`), each timed
    action also measuring the CPU seconds its engine's meter sees during it; and ``{name: [[jvm s, python s],
    ...]}``, which their runs fill."""
    cpu: dict[str, list] = {c[0]: [] for _, _, c in cands}

    def wrap(name, meter, action):
        def run():
            j0, p0 = meter.snapshot()
            try:
                return action()
            finally:
                j1, p1 = meter.snapshot()
                cpu[name].append([j1 - j0, p1 - p0])

        return run

    return [(c[0], c[1], wrap(c[0], meters[e], c[2]), *c[3:]) for _, e, c in cands], cpu


def jvm_pid(spark) -> int:
    """The process id of a classic session's JVM."""
    return int(spark.sparkContext._jvm.java.lang.ProcessHandle.current().pid())


def timed_rounds(cands: list[tuple], rounds: int, warmup: int, log) -> list[Result]:
    """harness.Bench.measure_rounds without the JVM's counters (a Connect client has no JVM): every candidate
    warmed up, then ``rounds`` rounds of one timed run each. Times only."""
    results = [Result(c[0], c[1]) for c in cands]
    for res, c in zip(results, cands):
        for _ in range(warmup):
            res.found = c[3]()
    for _ in range(rounds):
        for res, c in zip(results, cands):
            t0 = time.perf_counter()
            c[2]()
            res.times.append(time.perf_counter() - t0)
    for res in results:
        log(f"  {res.name:<60} median {res.median:8.3f} s  runs {fmt_times(res.times)}")
    return results


def cached(df, what: str, log):
    t0 = time.perf_counter()
    df = df.cache()
    n = df.count()
    log(f"  cached {what}: {n:,} rows in {time.perf_counter() - t0:.1f} s")
    return df, n


def prepare(spark, rows: int, diff_rows: int, functions: list[str], log) -> dict:
    """The cached data of one session for ``functions``: the ten columns, or the diff's two sides
    (``diff_input``: the rows of both)."""
    frame = {"rows": rows, "diff_input": 2 * diff_rows, "data": None, "sides": None}
    if any(f != "diff" for f in functions):
        frame["data"], frame["rows"] = cached(data(spark, rows), "the 10-column data", log)
    if "diff" in functions:
        old, new = diff_sides(spark, diff_rows)
        (old, n_old), (new, n_new) = cached(old, "diff old", log), cached(new, "diff new", log)
        frame["sides"], frame["diff_input"] = (old, new), n_old + n_new
    return frame


def release(frame: dict) -> None:
    for df in [frame["data"], *(frame["sides"] or ())]:
        if df is not None:
            df.unpersist()


def measure(
    sessions: dict[str, object],
    meters: dict[str, CpuMeter],
    functions: list[str],
    rows: int,
    diff_rows: int,
    rounds: Callable[[list[tuple]], list[Result]],
    log,
    row_rows: int,
) -> tuple[list[tuple[str, str, Result]], dict[str, list], dict[str, str]]:
    """Every function of ``functions`` on both engines (``sessions``: each engine's session, one session for
    both in classic Spark), interleaved by ``rounds``; the diff apart, after the others' data is released, so
    that a session holds one data set at a time, and so the column functions where PySpark has no Arrow UDFs,
    on ``row_rows`` rows (they hash row by row in Python). Returns ``(function, engine, result)`` of every
    candidate, the CPU seconds of each run (:func:`metered`) and the error of each group of functions that
    failed (the others are still measured and reported)."""
    pairs, cpu, failed = [], {}, {}
    by_row = [] if has_arrow_udf() else [f for f in functions if f in COLUMN_FUNCTIONS]
    others = [f for f in functions if f != "diff" and f not in by_row]
    groups = (
        (others, True, rows),
        (by_row, False, row_rows),
        (["diff"] if "diff" in functions else [], False, rows),
    )
    for group, profiles, size in groups:
        if not group:
            continue
        frames, made = {}, {}
        try:
            for eng, session in sessions.items():
                if id(session) not in made:
                    made[id(session)] = prepare(session, size, diff_rows, group, log)
                frames[eng] = made[id(session)]
            cands = candidates(group, frames, profiles)
            timed, used = metered(cands, meters)
            pairs += [(f, e, r) for (f, e, _), r in zip(cands, rounds(timed))]
            cpu.update(used)
        except Exception as error:  # noqa: BLE001 - reported in the section, the other functions kept
            text = (
                f"{type(error).__name__}: {str(error).strip().splitlines()[0] if str(error).strip() else ''}"
            )
            log(f"  {', '.join(group)} failed: {text}")
            failed[", ".join(group)] = text
        finally:
            for frame in made.values():
                release(frame)
    return pairs, cpu, failed


def serialised(pairs: list[tuple[str, str, Result]], cpu: dict[str, list]) -> list[dict]:
    return [
        {
            "function": f,
            "engine": e,
            "name": r.name,
            "rows": r.rows,
            "times": r.times,
            "found": repr(r.found),
            "cpu": cpu[r.name],
        }
        for f, e, r in pairs
    ]


def connect_run(spec: dict, log) -> dict:
    """A client of the two Connect servers: the same functions on each, interleaved in rounds."""
    import gc

    from pyspark.sql import SparkSession

    import hashexpr as hx

    sessions, detected = {}, {}
    functions = spec["functions"]
    try:
        for eng in ("jar", "arrow"):
            session = SparkSession.builder.remote(spec["urls"][eng]).create()
            sessions[eng] = session
            # Unforced, hashexpr tells the two servers apart by itself: the jar's functions, or none. Forced
            # afterwards, in each candidate: two Connect sessions live in this process, and the column functions
            # ask the active one.
            with engine(None):
                detected[eng] = hx.engine(session)
            log(
                f"  Connect server {'with' if eng == 'jar' else 'without'} the jar: hx.engine = {detected[eng]}"
            )
        meters = {eng: CpuMeter(pid) for eng, pid in spec["pids"].items()}
        pairs, cpu, failed = measure(
            sessions,
            meters,
            functions,
            spec["rows"],
            spec["diff_rows"],
            lambda cands: timed_rounds(cands, spec["rounds"], spec["warmup"], log),
            log,
            spec["row_rows"],
        )
        version = sessions["jar"].version
    finally:
        for session in sessions.values():
            session.stop()
        sessions.clear()
        gc.collect()
    return {"spark": version, "detected": detected, "results": serialised(pairs, cpu), "failed": failed}


def classic_run(spec: dict, log) -> dict:
    """A local session of this interpreter's Spark line with the jar: both engines, forced in turn."""
    from pyspark.sql import SparkSession

    import hashexpr as hx

    builder = (
        SparkSession.builder.master("local[2]")
        .appName("hashexpr-bench-nojar")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.driver.memory", spec["driver_memory"])
        .config("spark.sql.shuffle.partitions", str(spec["shuffle_partitions"]))
        .config("spark.ui.showConsoleProgress", "false")
    )
    spark = hx.configure(builder).getOrCreate()
    spark.sparkContext.setLogLevel("WARN")
    try:
        meter = CpuMeter(jvm_pid(spark))
        pairs, cpu, failed = measure(
            {"jar": spark, "arrow": spark},
            {"jar": meter, "arrow": meter},
            spec["functions"],
            spec["rows"],
            spec["diff_rows"],
            lambda cands: timed_rounds(cands, spec["rounds"], spec["warmup"], log),
            log,
            spec["row_rows"],
        )
        version = spark.version
    finally:
        spark.stop()
    return {"spark": version, "results": serialised(pairs, cpu), "failed": failed}


def main(spec_path: str, out: str) -> None:
    spec = json.loads(Path(spec_path).read_text())
    started = time.perf_counter()

    def log(message: str) -> None:
        print(f"[{time.perf_counter() - started:6.0f} s] {message}", flush=True)

    result = connect_run(spec, log) if spec["mode"] == "connect" else classic_run(spec, log)
    result["load"] = os.getloadavg()
    Path(out + ".part").write_text(json.dumps(result))
    Path(out + ".part").replace(out)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
