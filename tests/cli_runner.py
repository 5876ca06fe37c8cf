"""Running the ``hashexpr`` command line in tests.

Most runs are in-process (:func:`run`): ``hashexpr.cli.main(argv, spark)`` in the test session, its stdout and
stderr captured, its exit status returned as a subprocess's would be; they check results, messages, exit statuses
and ``--json`` without a JVM start each. A real process (:func:`cli`, ``python -m hashexpr`` on this checkout's
sources) is kept where the process is the point: what its own JVM prints, the console entry point, signals, a
killed driver, a Spark that does not start, options only a new Spark takes (docs/TESTING.md).
"""

from __future__ import annotations

import contextlib
import dataclasses
import io
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# The one line the JVM itself prints when Spark enables the Vector API. The command line shows what the JVM
# prints only with --verbose (or when it fails to start), so under --verbose this line shows that Spark ran.
JVM_NOTICE = "WARNING: Using incubator modules"


def env(extra: dict[str, str] | None = None) -> dict[str, str]:
    env = dict(os.environ, SPARK_LOCAL_IP="127.0.0.1", **(extra or {}))
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT / "python"), env.get("PYTHONPATH")) if p)
    return env


def run(spark, *args: str | Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """Run ``hashexpr ARGS`` in this process, in the session ``spark``; captured like a process's run.

    ``env`` holds environment variables for the run (a secret's), removed again afterwards.
    """
    from hashexpr.cli import main

    argv = [str(a) for a in args]
    out, err = io.StringIO(), io.StringIO()
    with _environment(env or {}), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            status = main(argv, spark=spark)
        except SystemExit as exc:  # argparse's usage errors
            status = exc.code if isinstance(exc.code, int) else 2
    return subprocess.CompletedProcess(["hashexpr", *argv], status, out.getvalue(), err.getvalue())


class SparkAsked(BaseException):
    """A run asked for Spark where it should have ended before: a BaseException, which main does not report."""


def run_without_spark(*args: str | Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """Run ``hashexpr ARGS`` in this process, asserting that it ends before it asks for a Spark session."""
    from hashexpr.cli import session as cli_session

    def refused(*_: object, **__: object) -> None:
        raise SparkAsked(f"hashexpr {' '.join(map(str, args))} asked for a Spark session")

    started = cli_session.spark_session
    cli_session.spark_session = refused  # type: ignore[assignment]
    try:
        return run(None, *args, env=env)
    finally:
        cli_session.spark_session = started  # type: ignore[assignment]


@contextlib.contextmanager
def _environment(variables: dict[str, str]) -> Iterator[None]:
    saved = {k: os.environ.get(k) for k in variables}
    os.environ.update(variables)
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


@dataclasses.dataclass
class Batch:
    """What ``cli_batch`` ran: each command's outcome, and what its ``prepare`` step left in ``prepared``."""

    runs: dict[str, subprocess.CompletedProcess]
    prepared: dict[str, str]


def cli_batch(
    commands: dict[str, list[str | Path]],
    cwd: Path,
    python: str | Path = sys.executable,
    conf: dict[str, str] | None = None,
    delta: bool = False,
    prepare: str = "",
) -> Batch:
    """Run several commands in one process of ``python`` and one Spark session of its own (``cli_batch.py``):
    for another virtualenv's Spark, or a session with settings of its own, at the cost of one JVM start.
    ``prepare``, Python source run first in that session (``spark`` in scope), makes the data they read."""
    request = cwd / ".cli-batch-request.json"
    request.write_text(
        json.dumps(
            {
                "commands": {n: [str(a) for a in c] for n, c in commands.items()},
                "conf": conf or {},
                "delta": delta,
                "prepare": prepare,
            }
        ),
        encoding="utf-8",
    )
    try:
        done = subprocess.run(
            [str(python), str(ROOT / "tests" / "cli_batch.py"), str(request)],
            capture_output=True, text=True, env=env(), cwd=cwd, timeout=1800, check=False,
        )  # fmt: skip
    finally:
        request.unlink()
    assert done.returncode == 0, done.stderr[-4000:]
    output = json.loads(done.stdout.strip().splitlines()[-1])
    runs = {
        name: subprocess.CompletedProcess(["hashexpr", *map(str, commands[name])], r["status"], r["stdout"], r["stderr"])
        for name, r in output["runs"].items()
    }
    return Batch(runs, output["prepared"])


def cli(
    *args: str | Path,
    cwd: Path | None = None,
    extra_env: dict[str, str] | None = None,
    python: str | Path = sys.executable,
) -> subprocess.CompletedProcess:
    """Run ``python -m hashexpr ARGS`` on this checkout's sources."""
    command = [str(python), "-m", "hashexpr", *map(str, args)]
    return subprocess.run(
        command, capture_output=True, text=True, env=env(extra_env), cwd=cwd, timeout=900, check=False
    )


# For runs this short, the JVM's optimising compiler costs more CPU than it saves; passing the option also
# checks that --conf adds to the command line's own JVM options (its quiet logging stays on).
QUICK_JVM = ["--conf", "spark.driver.extraJavaOptions=-XX:TieredStopAtLevel=1"]


def cli_all(
    commands: dict[str, list[str | Path]],
    logs: Path,
    cwd: Path | None = None,
    python: str | Path = sys.executable,
    at_once: int = 6,
    extra_env: dict[str, str] | None = None,
) -> dict[str, subprocess.CompletedProcess]:
    """Run several command lines that start Spark, ``at_once`` at a time, so that their JVM starts overlap."""
    names = list(commands)
    done = {}
    for start in range(0, len(names), at_once):
        batch = {n: commands[n] for n in names[start : start + at_once]}
        done.update(_run_together(batch, logs, cwd, python, extra_env))
    return done


def _run_together(
    commands: dict[str, list[str | Path]],
    logs: Path,
    cwd: Path | None,
    python: str | Path,
    extra_env: dict[str, str] | None = None,
) -> dict[str, subprocess.CompletedProcess]:
    with contextlib.ExitStack() as stack:
        started = {}
        for name, args in commands.items():
            args = [*args, *QUICK_JVM]
            # Files, not pipes: a process never blocks on output nobody reads until it is done.
            out, err = (
                stack.enter_context(open(logs / f"{name}.{s}", "w+", encoding="utf-8"))
                for s in ("out", "err")
            )
            command = [str(python), "-m", "hashexpr", *map(str, args)]
            started[name] = (
                subprocess.Popen(command, stdout=out, stderr=err, text=True, env=env(extra_env), cwd=cwd),
                out,
                err,
            )
        done = {}
        for name, (process, out, err) in started.items():
            returncode = process.wait(timeout=900)
            out.seek(0)
            err.seek(0)
            done[name] = subprocess.CompletedProcess(process.args, returncode, out.read(), err.read())
        return done


def ok(run: subprocess.CompletedProcess) -> str:
    assert run.returncode == 0, f"exit {run.returncode}\nstdout:\n{run.stdout}\nstderr:\n{run.stderr}"
    return run.stdout


def one_error_line(run: subprocess.CompletedProcess, status: int = 2) -> str:
    """The error message of a failed run, checked to be a single line with no stack trace."""
    assert run.returncode == status, f"exit {run.returncode}\nstdout:\n{run.stdout}\nstderr:\n{run.stderr}"
    lines = [line for line in run.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, run.stderr
    assert lines[0].startswith("hashexpr: error: "), run.stderr
    assert run.stdout == ""
    return lines[0].removeprefix("hashexpr: error: ")


def summary(stdout: str) -> dict[str, str]:
    """The summary's ``label  value`` lines as a dict."""
    pairs = (line.split("  ", 1) for line in stdout.splitlines() if "  " in line)
    return {label.strip(): value.strip() for label, value in pairs}


