"""The ``imports`` section of ``make bench``: how long a new Python process takes to import hashexpr, and the
command line to start.

Each candidate is a process of its own (``python -c "import ..."``, or ``hashexpr --version``), run ``--runs``
times warm, and once cold where the machine lets the bench drop the page cache first (``/proc/sys/vm/drop_caches``,
as root): the first import of a day reads every file from disk. Side by side: pyarrow alone (the floor: hashexpr's
Arrow engine needs it), PySpark's ``pyspark.sql`` (which ``import hashexpr`` loaded before PySpark became an
extra), and what ``import hashexpr`` loaded then (PySpark's SQL, pyarrow's datasets, the package) against what it
loads now.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

#: No Spark: a run of this section alone starts none.
SPARK = False

PYTHON = sys.executable
CANDIDATES: dict[str, list[str]] = {
    "import pyarrow (the floor)": [PYTHON, "-c", "import pyarrow"],
    "import pyspark.sql": [PYTHON, "-c", "import pyspark.sql"],
    "before: pyspark.sql, pyarrow.dataset, hashexpr, hashexpr.arrow": [
        PYTHON, "-c", "import pyspark.sql, pyarrow.dataset, hashexpr, hashexpr.arrow",
    ],
    "import hashexpr": [PYTHON, "-c", "import hashexpr"],
    "import hashexpr, hashexpr.arrow": [PYTHON, "-c", "import hashexpr, hashexpr.arrow"],
    "import hashexpr.sql": [PYTHON, "-c", "import hashexpr.sql"],
    "import hashexpr.reconcile": [PYTHON, "-c", "import hashexpr.reconcile"],
    "hashexpr --version": [str(Path(PYTHON).parent / "hashexpr"), "--version"],
}  # fmt: skip


def fmt_seconds(seconds: float) -> str:
    return f"{seconds:.2f} s"


def _seconds(command: list[str]) -> float:
    started = time.perf_counter()
    subprocess.run(command, check=True, capture_output=True, env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"})
    return time.perf_counter() - started


def _drop_caches() -> bool:
    """Empty the page cache (as root); False where the machine does not let the bench."""
    try:
        os.sync()
        with open("/proc/sys/vm/drop_caches", "w") as f:
            f.write("3\n")
    except OSError:
        return False
    return True


def run(ctx) -> dict:
    runs = max(ctx.args.runs, 5)
    found = {}
    for name, command in CANDIDATES.items():
        cold = _seconds(command) if _drop_caches() else None
        _seconds(command)  # warms the cache and the bytecode
        warm = [_seconds(command) for _ in range(runs)]
        found[name] = {"cold": cold, "warm": warm}
        ctx.log(f"  {name}: cold {cold if cold is None else round(cold, 3)} s, warm {statistics.median(warm):.3f} s")
    return {"runs": runs, "found": found}


def render(args, s: dict, sections: dict, targets: list[str]) -> list[str]:
    floor = statistics.median(s["found"]["import pyarrow (the floor)"]["warm"])
    lines = [
        "## Imports",
        "",
        (
            f"A new process each, {s['runs']} warm runs (median, min-max) and one cold run after the page cache "
            "was dropped (— where the bench may not drop it); the ratio is the warm median over pyarrow's."
        ),
        "",
        "| candidate | cold | warm | × pyarrow |",
        "|---|---:|---:|---:|",
    ]
    for name, m in s["found"].items():
        warm = statistics.median(m["warm"])
        cold = "—" if m["cold"] is None else fmt_seconds(m["cold"])
        spread = f"{fmt_seconds(warm)} ({fmt_seconds(min(m['warm']))}-{fmt_seconds(max(m['warm']))})"
        lines.append(f"| `{name}` | {cold} | {spread} | {warm / floor:.2f} |")
    now = s["found"]["import hashexpr, hashexpr.arrow"]
    if now["cold"] is not None:
        ok = now["cold"] <= 1.0
        targets.append(
            f"- `import hashexpr, hashexpr.arrow` within 1.0 s cold: {'met' if ok else 'NOT met'} "
            f"({now['cold']:.2f} s)"
        )
    return [*lines, ""]
