#!/usr/bin/env python3
"""``make test``, phase by phase, and where its time went.

Runs the phases of ``make test`` (each a ``make`` target, docs/TESTING.md) in order, the other Spark lines'
virtualenvs in the background from the start, since they are mostly downloads. Each phase's wall time is printed
when it ends, and a table of them all at the end, also when a phase fails or the run is interrupted, so that
every log says where the time went; ``target/test-times.tsv`` keeps the table.

Usage: ``build/test.py [--python PYTHON]``; ``make test`` runs it.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TIMES = ROOT / "target" / "test-times.tsv"
LINE_VENVS_LOG = ROOT / "target" / "line-venvs.log"


@dataclass
class Phase:
    name: str
    target: list[str]
    seconds: float | None = None
    status: str = "not run"
    started: float | None = field(default=None, repr=False)


def make(*targets: str) -> list[str]:
    return ["make", "--no-print-directory", *targets]


def lines() -> list[str]:
    """The other Spark lines whose smoke suites run last (the Makefile's LINE_VENVS)."""
    out = subprocess.run(make("-s", "print-line-venvs"), cwd=ROOT, capture_output=True, text=True, check=True)
    return out.stdout.split()


def run(phase: Phase, log: Path | None = None) -> bool:
    """Run one phase in the foreground (or into ``log``); record its wall time and status."""
    print(f"\n== {phase.name}: {' '.join(phase.target)}", flush=True)
    phase.started = time.monotonic()
    phase.status = "running"
    if log is None:
        code = subprocess.call(phase.target, cwd=ROOT)
    else:
        with open(log, "w", encoding="utf-8") as out:
            code = subprocess.call(phase.target, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT)
    phase.seconds = time.monotonic() - phase.started
    phase.status = "ok" if code == 0 else f"failed ({code})"
    print(f"== {phase.name}: {phase.status} in {phase.seconds:,.0f} s", flush=True)
    return code == 0


def report(phases: list[Phase], started: float) -> None:
    total = time.monotonic() - started
    for phase in phases:
        if phase.status == "running" and phase.started is not None:
            phase.seconds = time.monotonic() - phase.started
            phase.status = "interrupted"
    width = max(len(p.name) for p in phases)
    print("\n== make test: where the time went (wall clock; the line virtualenvs overlap the phases after them)")
    print(f"{'phase':<{width}}  {'seconds':>8}  status")
    for p in phases:
        seconds = f"{p.seconds:,.0f}" if p.seconds is not None else "-"
        print(f"{p.name:<{width}}  {seconds:>8}  {p.status}")
    print(f"{'total':<{width}}  {total:>8,.0f}", flush=True)
    TIMES.parent.mkdir(parents=True, exist_ok=True)
    with open(TIMES, "w", encoding="utf-8") as f:
        f.write("phase\tseconds\tstatus\n")
        for p in phases:
            f.write(f"{p.name}\t{'' if p.seconds is None else round(p.seconds, 1)}\t{p.status}\n")
        f.write(f"total\t{round(total, 1)}\t\n")


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def main() -> int:
    argparse.ArgumentParser(description=__doc__.splitlines()[0]).parse_args()
    started = time.monotonic()
    venv = Phase("venv (.venv, the pinned pyspark)", make("venv"))
    line_venvs = Phase("line virtualenvs (background)", make("line-venvs"))
    phases = [
        venv,
        Phase("lint", make("lint")),
        line_venvs,
        Phase("sbt: every line's jar and ScalaTest", make("test-jvm-lines")),
        Phase("wheel", make("wheel")),
        Phase("pytest, pinned Spark", make("test-pytest")),
    ]
    # SIGTERM (a CI timeout) unwinds like Ctrl-C, so the table still prints.
    signal.signal(signal.SIGTERM, _interrupt)
    background: threading.Thread | None = None
    ok = True
    try:
        ok = run(venv)
        if ok:
            background = threading.Thread(target=run, args=(line_venvs, LINE_VENVS_LOG), daemon=True)
            background.start()
        for phase in phases[1:]:
            if not ok:
                break
            if phase is line_venvs:
                continue
            if phase.name.startswith("pytest"):
                # pytest runs the other lines' virtualenvs too (the wheel in each, Delta in 4.2).
                assert background is not None
                background.join()
                if line_venvs.status != "ok":
                    print(LINE_VENVS_LOG.read_text(encoding="utf-8")[-8000:])
                    ok = False
                    break
            ok = run(phase)
        if ok:
            for line in lines():
                phase = Phase(f"smoke, Spark {line}", make(f"test-line-{line}"))
                phases.append(phase)
                if not run(phase):
                    ok = False
                    break
    except KeyboardInterrupt:
        ok = False
    finally:
        if background is not None and background.is_alive():
            line_venvs.status = "running"
        report(phases, started)
    return 0 if ok else 1


if __name__ == "__main__":
    os.chdir(ROOT)
    sys.exit(main())
