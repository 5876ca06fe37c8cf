"""The command line's outputs: written beside the target, moved into place only after the job succeeded.

A failed job leaves the previous output exactly as it was; a run that was killed leaves at most a hidden sibling,
which the next write to the same path removes (or, killed between its two renames, puts back as the output).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from cli_runner import env
from cli_runner import run as run_in_session

from hashexpr.cli import outputs as hio


def _dead_pid() -> int:
    process = subprocess.Popen([sys.executable, "-c", "pass"])
    process.wait()
    return process.pid


def _output(path: Path, marker: str) -> Path:
    path.mkdir()
    (path / "part-0").write_text(marker, encoding="utf-8")
    return path


def _siblings(target: Path) -> list[str]:
    return sorted(p.name for p in target.parent.iterdir() if p.name.startswith(f".{target.name}.hashexpr-"))


def test_overwrite_replaces_the_output_and_leaves_no_sibling(spark, tmp_path):
    target = _output(tmp_path / "out", "previous")
    hio.write(spark.range(3), str(target), "parquet", "overwrite")
    assert sorted(r.id for r in spark.read.parquet(str(target)).collect()) == [0, 1, 2]
    assert not (target / "part-0").exists()
    assert _siblings(target) == []


def test_a_failing_job_leaves_the_previous_output_intact(spark, tmp_path):
    target = _output(tmp_path / "out", "previous")
    failing = spark.range(100).selectExpr("id", "assert_true(id < 50) AS checked")
    with pytest.raises(Exception, match="assert_true|id < 50"):
        hio.write(failing, str(target), "parquet", "overwrite")
    assert [p.name for p in target.iterdir()] == ["part-0"]
    assert (target / "part-0").read_text(encoding="utf-8") == "previous"
    assert _siblings(target) == []
    fresh = tmp_path / "fresh"
    with pytest.raises(Exception, match="assert_true|id < 50"):
        hio.write(failing, str(fresh), "parquet", "error")
    assert not fresh.exists() and _siblings(fresh) == []


def test_error_mode_never_replaces_an_output_that_appeared_meanwhile(spark, tmp_path):
    target = tmp_path / "out"
    staging = tmp_path / "staged"
    staging.mkdir()
    _output(target, "someone else's")
    with pytest.raises(FileExistsError, match="output already exists"):
        hio._move_into_place(str(staging), str(target), "error")
    assert (target / "part-0").read_text(encoding="utf-8") == "someone else's"


def test_siblings_of_killed_runs_are_removed_or_put_back(spark, tmp_path):
    dead = _dead_pid()
    target = _output(tmp_path / "out", "current")
    stale = _output(tmp_path / f".out.hashexpr-tmp-{dead}", "partial")
    live = _output(tmp_path / f".out.hashexpr-tmp-{os.getppid()}", "another run's")
    hio._remove_stale_siblings(str(target))
    assert not stale.exists() and live.exists()
    assert (target / "part-0").read_text(encoding="utf-8") == "current"
    # Killed between moving the old output aside and moving the new one in: the old one comes back.
    moved_aside = tmp_path / "gone"
    _output(tmp_path / f".gone.hashexpr-old-{dead}", "previous")
    hio._remove_stale_siblings(str(moved_aside))
    assert (moved_aside / "part-0").read_text(encoding="utf-8") == "previous"
    assert _siblings(moved_aside) == []


@pytest.fixture(scope="module")
def source(spark, tmp_path_factory) -> Path:
    """4 million rows: enough for a run's write to be under way when the test stops it."""
    path = tmp_path_factory.mktemp("io-output") / "in.parquet"
    spark.range(4_000_000).selectExpr("id", "CAST(id AS STRING) s", "id * 0.5 d").write.parquet(str(path))
    return path


def _start_writing(source: Path, tmp_path: Path) -> tuple[subprocess.Popen, Path]:
    """A command-line run on Spark that overwrites ``out.parquet`` (holding "previous"), once its write has
    begun."""
    target = _output(tmp_path / "out.parquet", "previous")
    command = [sys.executable, "-m", "hashexpr", "hash", str(source), "--out", str(target), "--mode", "overwrite",
               "--engine", "spark"]  # fmt: skip
    run = subprocess.Popen(command, env=env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 300
    while not _siblings(target) and run.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _siblings(target), "the run ended before it began to write"
    return run, target


def _children(pid: int) -> list[int]:
    """The processes whose parent is ``pid`` (Spark's JVM, for the command line's Python)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            # The command name, in parentheses, can hold spaces: the parent's pid is the 2nd field after it.
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(entry.name))
    return found


def _previous_output_is_intact(target: Path) -> None:
    assert [p.name for p in target.iterdir()] == ["part-0"]
    assert (target / "part-0").read_text(encoding="utf-8") == "previous"


@pytest.mark.slow
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_signalled_run_leaves_the_previous_output_and_no_sibling(source, tmp_path, signum):
    run, target = _start_writing(source, tmp_path)
    run.send_signal(signum)
    _, stderr = run.communicate(timeout=300)
    assert run.returncode == {signal.SIGTERM: 143, signal.SIGINT: 130}[signum], stderr
    # One line, no py4j traceback.
    assert stderr.splitlines() == [f"hashexpr: error: {'terminated' if signum == signal.SIGTERM else 'interrupted'}"]
    _previous_output_is_intact(target)
    assert _siblings(target) == [], stderr


@pytest.mark.slow
def test_a_killed_driver_leaves_the_previous_output_and_the_next_run_cleans_up(spark, source, tmp_path):
    run, target = _start_writing(source, tmp_path)
    jvm = _children(run.pid)
    run.kill()
    run.communicate(timeout=300)
    # The JVM ends when its Python goes (its stdin closes); until then its tasks may still write.
    deadline = time.monotonic() + 120
    while any(Path(f"/proc/{pid}").exists() for pid in jvm) and time.monotonic() < deadline:
        time.sleep(0.1)
    _previous_output_is_intact(target)
    assert all(name.startswith(".out.parquet.hashexpr-tmp-") for name in _siblings(target))
    # The next run need not be a process of its own: it runs in the test session.
    rerun = run_in_session(spark, "hash", source, "--out", target, "--mode", "overwrite", "--columns", "id")
    assert rerun.returncode == 0, rerun.stderr
    assert _siblings(target) == []
    assert spark.read.parquet(str(target)).count() == 4_000_000


@pytest.mark.slow
def test_a_killed_jvm_ends_the_run_in_one_line_with_the_previous_output(source, tmp_path):
    run, target = _start_writing(source, tmp_path)
    (jvm,) = _children(run.pid)
    os.kill(jvm, signal.SIGKILL)
    _, stderr = run.communicate(timeout=300)
    assert run.returncode == 3, stderr
    (line,) = stderr.splitlines()
    assert line.startswith("hashexpr: error: Spark's JVM ended unexpectedly"), stderr
    _previous_output_is_intact(target)
    assert _siblings(target) == [], stderr