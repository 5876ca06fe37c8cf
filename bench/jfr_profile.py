"""Where a query's CPU time goes: JFR execution samples of the local Spark JVM, sorted by what the code does.

The JVM's own profiler (JDK Flight Recorder) is started on the running driver with ``jcmd`` while candidates run
in turns, then the execution samples of Spark's task threads are given to the candidate that was running and put
in categories by their stack. Each sample stands for about the same slice of one thread's time, so the counts of
two candidates compare.
"""

from __future__ import annotations

import datetime
import json
import os
import shutil
import subprocess
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

# Checked in this order; the first that matches the sample's stack (innermost frame first) names it.
HASH = "hash function"
READ = "reading the values the hash takes (row getters, UTF8String, Decimal)"
SCAN = "scan of the cached columns"
REST = "rest of the task (writing the result, iterators)"
CATEGORIES = (HASH, READ, SCAN, REST)


def _tool(name: str) -> str | None:
    home = os.environ.get("JAVA_HOME")
    if home and (Path(home) / "bin" / name).is_file():
        return str(Path(home) / "bin" / name)
    return shutil.which(name)


def available() -> bool:
    """Whether ``jcmd`` and ``jfr`` (JDK 11+) are at hand."""
    return _tool("jcmd") is not None and _tool("jfr") is not None


def _frame(f: dict) -> str:
    return f["method"]["type"]["name"].replace("/", ".") + "." + f["method"]["name"]


# Code that the JIT inlines into its callers (rotations, Unsafe loads): a sample there belongs to its caller.
_LIBRARY = ("java.", "jdk.", "sun.", "scala.runtime.", "org.apache.spark.unsafe.Platform.")


def _category(frames: list[str], hash_prefixes: tuple[str, ...]) -> str | None:
    """The category of a sample, or None for threads that run no task (driver, GC, JIT, Py4J)."""
    if not any("WritingSparkTask" in f or "Executor$TaskRunner" in f for f in frames):
        return None
    own = next((f for f in frames if not f.startswith(_LIBRARY)), "")
    if own.startswith(hash_prefixes):
        return HASH
    if any("SpecificUnsafeProjection" in f for f in frames):
        return READ
    if any("ColumnAccessor" in f or "ColumnarIterator" in f or "columnar." in f for f in frames):
        return SCAN
    return REST


def _instant(text: str) -> float:
    """Seconds since the epoch of a JFR time stamp such as ``2026-11-24T08:30:44.004771521Z``."""
    whole, _, fraction = text.rstrip("Z").partition(".")
    seconds = datetime.datetime.fromisoformat(whole).replace(tzinfo=datetime.timezone.utc).timestamp()
    return seconds + float("0." + (fraction or "0"))


def profile(
    spark, candidates: dict[str, tuple[Callable[[], object], tuple[str, ...]]], rounds: int
) -> dict[str, dict[str, int]]:
    """Run the candidates in rounds under one JFR recording; return each one's task-thread samples per category.

    ``candidates`` maps a name to its action and the class-name prefixes of its hash function's own code. The
    candidates take turns, as in the timed rounds, and the first round is left out: starting a recording
    makes the JIT recompile some code, which would fall on whichever candidate ran first.
    """
    jcmd, jfr = _tool("jcmd"), _tool("jfr")
    pid = str(spark.sparkContext._jvm.java.lang.ProcessHandle.current().pid())
    name = f"hashexpr-bench-{os.getpid()}"
    windows: list[tuple[float, float, str]] = []
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "samples.jfr"
        start = [jcmd, pid, "JFR.start", f"name={name}", "settings=profile", f"filename={out}"]
        subprocess.run(start, check=True, capture_output=True)
        try:
            order = list(candidates.items())
            for round_ in range(rounds + 1):
                # Each round in the other order, so that no candidate always follows the same one.
                for candidate, (action, _) in order if round_ % 2 == 0 else order[::-1]:
                    t0 = time.time()
                    action()
                    if round_:
                        windows.append((t0, time.time(), candidate))
        finally:
            subprocess.run([jcmd, pid, "JFR.stop", f"name={name}"], check=True, capture_output=True)
        printed = subprocess.run(
            [jfr, "print", "--json", "--stack-depth", "64", "--events", "jdk.ExecutionSample", str(out)],
            check=True,
            capture_output=True,
        ).stdout
    counts = {c: Counter({category: 0 for category in CATEGORIES}) for c in candidates}
    for event in json.loads(printed)["recording"]["events"]:
        at = _instant(event["values"]["startTime"])
        candidate = next((c for t0, t1, c in windows if t0 <= at <= t1), None)
        if candidate is None:
            continue
        trace = event["values"].get("stackTrace") or {}
        category = _category([_frame(f) for f in trace.get("frames", [])], candidates[candidate][1])
        if category is not None:
            counts[candidate][category] += 1
    return {c: dict(n) for c, n in counts.items()}
