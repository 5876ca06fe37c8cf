#!/usr/bin/env python3
"""``make test``, phase by phase, and where its time went.

Runs the phases of ``make test`` (each a ``make`` target; docs/TESTING.md) in four streams: the main one
(``.venv``, every line's jar, the wheel, pytest on the pinned Spark); in the background once ``.venv`` exists,
lint, the other Spark lines' virtualenvs (downloads, mostly) and the Arrow engine's Rust tests; once every jar is
built, ScalaTest on every line beside the Python suites; and after it, each other line's
smoke suite, then the pinned line's modules that the Makefile's ``BESIDE_PYTEST`` takes out of the main pytest,
still beside it. The streams other than the main one write logs of their own, printed once pytest ends. Each
phase's wall time is printed when it ends, and a table of them all at the end, also when a phase fails or the
run is interrupted, so that every log says where the time went; ``target/test-times.tsv`` keeps the table.

Usage: ``build/test.py``; ``make test`` runs it.
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
TARGET = ROOT / "target"
TIMES = TARGET / "test-times.tsv"


@dataclass
class Phase:
    name: str
    target: str
    stream: str = "main"
    log: Path | None = None
    jobs: int = 1
    seconds: float | None = None
    status: str = "not run"
    started: float | None = field(default=None, repr=False)

    def run(self) -> bool:
        """Run ``make <target>`` (into ``log`` when given); record its wall time and status."""
        command = ["make", "--no-print-directory", f"-j{self.jobs}", self.target]
        self.started = time.monotonic()
        self.status = "running"
        where = f" (output in {self.log.relative_to(ROOT)})" if self.log else ""
        print(f"\n== {self.name}: make {self.target}{where}", flush=True)
        if self.log is None:
            code = subprocess.call(command, cwd=ROOT)
        else:
            with open(self.log, "a", encoding="utf-8") as out:
                code = subprocess.call(command, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT)
        self.seconds = time.monotonic() - self.started
        self.status = "ok" if code == 0 else f"failed ({code})"
        print(f"== {self.name}: {self.status} in {self.seconds:,.0f} s", flush=True)
        return code == 0


class Stream(threading.Thread):
    """Phases run one after another in a thread of their own, once the streams in ``after`` have ended (and
    only if they passed); stops at the first phase that fails unless ``keep_going``."""

    def __init__(self, phases: list[Phase], after: tuple[Stream, ...] = (), keep_going: bool = False) -> None:
        super().__init__(daemon=True)
        self.phases = phases
        self.after = after
        self.keep_going = keep_going
        self.ok = True

    def run(self) -> None:
        for stream in self.after:
            stream.join()
            if not stream.ok:
                self.ok = False
                return
        for phase in self.phases:
            if not phase.run():
                self.ok = False
                if not self.keep_going:
                    return


def lines() -> list[str]:
    """The other Spark lines whose smoke suites run (the Makefile's LINE_VENVS)."""
    out = subprocess.run(
        ["make", "-s", "--no-print-directory", "print-line-venvs"],
        cwd=ROOT, capture_output=True, text=True, check=True,
    )  # fmt: skip
    return out.stdout.split()


def report(phases: list[Phase], started: float) -> None:
    total = time.monotonic() - started
    for phase in phases:
        if phase.status == "running" and phase.started is not None:
            phase.seconds = time.monotonic() - phase.started
            phase.status = "interrupted"
    width = max(len(p.name) for p in phases)
    print("\n== make test: where the time went (wall clock; the phases of the other streams overlap the main")
    print("   stream's)")
    print(f"{'phase':<{width}}  {'stream':<10}  {'seconds':>8}  status")
    for p in phases:
        seconds = f"{p.seconds:,.0f}" if p.seconds is not None else "-"
        print(f"{p.name:<{width}}  {p.stream:<10}  {seconds:>8}  {p.status}")
    print(f"{'total':<{width}}  {'':<10}  {total:>8,.0f}", flush=True)
    TARGET.mkdir(parents=True, exist_ok=True)
    with open(TIMES, "w", encoding="utf-8") as f:
        f.write("phase\tstream\tseconds\tstatus\n")
        for p in phases:
            f.write(f"{p.name}\t{p.stream}\t{'' if p.seconds is None else round(p.seconds, 1)}\t{p.status}\n")
        f.write(f"total\t\t{round(total, 1)}\t\n")


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def main() -> int:
    argparse.ArgumentParser(description=__doc__.splitlines()[0]).parse_args()
    started = time.monotonic()
    TARGET.mkdir(parents=True, exist_ok=True)
    venvs_log, jvm_log = TARGET / "test-background.log", TARGET / "test-jvm.log"
    venv = Phase("venv (.venv: the pinned pyspark, the Arrow engine)", "venv")
    # Three at a time: each waits on downloads and on unpacking pyspark more than on a core.
    line_venvs = Phase("line and dbt virtualenvs", "test-venvs", "background", venvs_log, jobs=3)
    # Lint and the engine's Rust tests beside sbt and the wheel, where the virtualenvs' downloads leave a core
    # idle: off the main stream, and off the jvm stream before the smoke suites.
    lint = Phase("lint (ruff, cargo fmt, clippy)", "lint", "background", venvs_log)
    native = Phase("cargo test (the Arrow engine)", "test-native", "background", venvs_log)
    main_phases = [Phase("sbt: every line's jar and Maven artifact", "jvm-packages")]
    jvm = Stream([Phase("sbt: ScalaTest on every line", "test-jvm-lines", "jvm", jvm_log)])
    wheel = Phase("the distributions: two wheels, the sdist", "wheel")
    pytest = Phase("pytest, pinned Spark", "test-pytest")
    background = Stream([lint, line_venvs, native])
    # Each other line's smoke suite, after the jvm stream (so that ScalaTest and the smoke suites do not share
    # the cores with pytest at the same time) and the virtualenvs it runs in; each into a log of its own,
    # printed once pytest ends.
    smoke = Stream(
        [*(Phase(f"smoke, Spark {line}", f"test-line-{line}", "smoke", TARGET / f"test-smoke-{line}.log")
           for line in lines()),
         # The pinned line's modules that the main pytest leaves to this stream (the Makefile's BESIDE_PYTEST).
         Phase("pytest, pinned Spark: the Delta and wheel modules", "test-pytest-beside", "smoke",
               TARGET / "test-pytest-beside.log")],
        after=(background, jvm),
        keep_going=True,
    )  # fmt: skip
    for log in (venvs_log, jvm_log, *(p.log for p in smoke.phases)):
        log.write_text("", encoding="utf-8")
    phases = [venv, lint, line_venvs, native, *main_phases, *jvm.phases, wheel, pytest, *smoke.phases]
    # SIGTERM (a CI timeout) unwinds like Ctrl-C, so the table still prints.
    signal.signal(signal.SIGTERM, _interrupt)
    ok = False
    try:
        if venv.run():
            background.start()
            if all(p.run() for p in main_phases):
                jvm.start()
                smoke.start()
                ok = wheel.run()
                if ok:
                    # pytest runs the other virtualenvs too (the wheel in each line's, Delta in 4.2's, dbt's);
                    # lint and the Rust tests must have passed.
                    background.join()
                    ok = background.ok
                    print(f"\n== the background stream's output ({venvs_log.relative_to(ROOT)})")
                    print(venvs_log.read_text(encoding="utf-8")[-(8000 if ok else 60_000):], flush=True)
                ok = ok and pytest.run()
                jvm.join()
                print(f"\n== the jvm stream's output ({jvm_log.relative_to(ROOT)})")
                print(jvm_log.read_text(encoding="utf-8")[-200_000:], flush=True)
                smoke.join()
                for phase in smoke.phases:
                    if phase.status != "not run":
                        print(f"\n== {phase.name}: its output ({phase.log.relative_to(ROOT)})")
                        print(phase.log.read_text(encoding="utf-8")[-100_000:], flush=True)
                ok = ok and jvm.ok and smoke.ok
    except KeyboardInterrupt:
        ok = False
    finally:
        report(phases, started)
    return 0 if ok else 1


if __name__ == "__main__":
    os.chdir(ROOT)
    sys.exit(main())
