"""What the ``hashexpr`` command line writes: outputs checked before Spark starts and never left half-written.

:func:`check_output` refuses an output that would replace an input or the current directory. :func:`write`
writes a local output to a hidden sibling directory and moves it into place only once the job has succeeded,
so that a failed, interrupted or killed run leaves no partial output; :func:`read` reads an output back.
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from hashexpr.cli.formats import READ_OPTIONS, fixed_prefix, local_path, spark_path

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql.types import StructType

#: How an existing output is treated: fail, or replace it.
MODES: tuple[str, ...] = ("error", "overwrite")

_WRITE_OPTIONS: dict[str, dict[str, str]] = {"csv": {"header": "true"}}


def check_output(path: str, mode: str, inputs: Sequence[str] = ()) -> str:
    """Check that ``mode`` may write to ``path``, before Spark starts; return the mode, lower-cased.

    Nothing the user did not name is ever replaced: a local output may not be an input, hold one or lie inside
    one, and may not be the current directory, one of its ancestors or a file system root.

    Parameters
    ----------
    path : str
        The output.
    mode : str
        One of :data:`MODES`, in any case.
    inputs : sequence of str
        The paths the command reads.

    Returns
    -------
    str
        The mode, lower-cased.

    Raises
    ------
    ValueError
        For a mode that is not one of :data:`MODES`, or an output that would replace what it must not.
    FileExistsError
        When ``path`` exists locally and ``mode`` is ``"error"``.

    Examples
    --------
    >>> check_output("out.parquet", "Overwrite", ["in.parquet"])
    'overwrite'
    >>> check_output("data", "overwrite", ["data/in.parquet"])
    Traceback (most recent call last):
        ...
    ValueError: OUTPUT data holds INPUT data/in.parquet: overwriting it would delete the input; write elsewhere
    """
    chosen = mode.lower()
    if chosen not in MODES:
        raise ValueError(f"unknown mode {mode!r}: use one of {', '.join(MODES)}")
    local = local_path(path)
    if local is None:
        return chosen
    out = os.path.realpath(local)
    if out == os.path.dirname(out):
        raise ValueError(f"OUTPUT {path} is a file system root: write to a new directory")
    if _contains(out, os.path.realpath(os.getcwd())):
        raise ValueError(f"OUTPUT {path} is or holds the current directory: write to a new directory")
    for given in inputs:
        source = local_path(given)
        if source is None:
            continue
        source = os.path.realpath(fixed_prefix(source))
        if out == source:
            raise ValueError(f"OUTPUT is INPUT: {path} (write the output elsewhere)")
        if _contains(out, source):
            raise ValueError(
                f"OUTPUT {path} holds INPUT {given}: overwriting it would delete the input; write elsewhere"
            )
        if _contains(source, out):
            raise ValueError(f"OUTPUT {path} is inside INPUT {given}: write elsewhere")
    if chosen == "error" and os.path.lexists(local):
        raise FileExistsError(f"output already exists: {path} (pass --mode overwrite to replace it)")
    return chosen


def _contains(directory: str, path: str) -> bool:
    """Whether ``path`` is ``directory`` or lies inside it (both real paths)."""
    return os.path.commonpath([directory, path]) == directory


def read(spark: SparkSession, path: str, fmt: str, schema: StructType | None = None) -> DataFrame:
    """Return a DataFrame reading ``path`` as ``fmt``; CSV with ``header`` and ``inferSchema``.

    Parameters
    ----------
    spark : :class:`pyspark.sql.SparkSession`
        The session that reads.
    path : str
        A file, a directory of part files, or a glob.
    fmt : str
        One of :data:`~hashexpr.cli.formats.FORMATS`.
    schema : :class:`pyspark.sql.types.StructType`, optional
        The schema to read with, instead of the one stored in or inferred from the files.

    Returns
    -------
    :class:`pyspark.sql.DataFrame`
    """
    reader = spark.read.format(fmt).options(**READ_OPTIONS.get(fmt, {}))
    # A Delta table has its own schema in its log, and Delta refuses another one.
    if schema is not None and fmt != "delta":
        reader = reader.schema(schema)
    return reader.load(spark_path(path))


def write(df: DataFrame, path: str, fmt: str, mode: str = "error") -> None:
    """Write ``df`` to ``path`` as ``fmt`` (a directory of part files); CSV with a header line.

    A local output is written to a hidden sibling directory and moved into place only once the job has
    succeeded, so a failed or interrupted run leaves no partial output, and ``overwrite`` keeps the previous
    output intact until the new one is complete. A sibling left by a run that was killed is removed by the
    next write to the same path.

    Parameters
    ----------
    df : :class:`pyspark.sql.DataFrame`
        The data to write.
    path : str
        The output directory.
    fmt : str
        One of :data:`~hashexpr.cli.formats.FORMATS`.
    mode : str
        ``"error"`` fails when ``path`` exists, ``"overwrite"`` replaces it.
    """
    writer = df.write.format(fmt).options(**_WRITE_OPTIONS.get(fmt, {}))
    local = local_path(path)
    if local is None:
        # Remote file systems have no atomic rename this process can do: Spark writes in place.
        writer.mode(mode).save(path)
        return
    target = os.path.abspath(local)
    if fmt == "delta" and mode == "overwrite" and os.path.isdir(os.path.join(target, "_delta_log")):
        # Replacing a Delta table is one commit to its log: the previous version stays readable (time
        # travel) and an unfinished run leaves only files no version refers to.
        writer.mode("overwrite").option("overwriteSchema", "true").save(target)
        return
    write_staged(target, mode, lambda staging: writer.mode("error").save(staging))


def write_staged(target: str, mode: str, write_into: Callable[[str], None]) -> None:
    """Write the local output ``target`` with ``write_into(staging)``, a hidden sibling directory it creates,
    then move it into place: a failed or interrupted write leaves no partial output, and ``overwrite`` keeps
    the previous output until the new one is complete (see :func:`write`).
    """
    _remove_stale_siblings(target)
    staging = _sibling(target, "tmp")
    _unfinished.add(staging)
    try:
        write_into(staging)
        _move_into_place(staging, target, mode)
        _unfinished.discard(staging)
    finally:
        # After an interrupt Spark's tasks can still be writing here, so the path stays listed for
        # discard_unfinished(), which runs again once Spark has stopped.
        _remove(staging)


def _remove(path: str) -> None:
    """Remove a staged output, a directory or a file, if it is there."""
    if os.path.isdir(path) and not os.path.islink(path):
        shutil.rmtree(path, ignore_errors=True)
    else:
        try:
            os.remove(path)
        except FileNotFoundError:
            pass


#: Hidden siblings being written by this process.
_unfinished: set[str] = set()


def discard_unfinished() -> None:
    """Remove the outputs this process began and did not finish (call it once Spark has stopped)."""
    for staging in list(_unfinished):
        # A task that was still finishing can add a file while the tree is removed: try again.
        for _ in range(20):
            _remove(staging)
            if not os.path.lexists(staging):
                break
            time.sleep(0.1)
        _unfinished.discard(staging)


_SIBLING = "{name}.hashexpr-{kind}-{pid}"


def _sibling(target: str, kind: str) -> str:
    parent, name = os.path.split(target)
    return os.path.join(parent, "." + _SIBLING.format(name=name, kind=kind, pid=os.getpid()))


def _move_into_place(staging: str, target: str, mode: str) -> None:
    if not os.path.lexists(target):
        os.rename(staging, target)
        return
    if mode != "overwrite":
        raise FileExistsError(f"output already exists: {target} (pass --mode overwrite to replace it)")
    # Two renames: the old output is moved aside, never deleted, until the new one is in place.
    previous = _sibling(target, "old")
    os.rename(target, previous)
    try:
        os.rename(staging, target)
    except BaseException:
        os.rename(previous, target)
        raise
    if os.path.isdir(previous) and not os.path.islink(previous):
        shutil.rmtree(previous)
    else:
        os.remove(previous)


def _remove_stale_siblings(target: str) -> None:
    """Remove the hidden siblings of ``target`` that runs which no longer exist left behind (killed runs)."""
    parent, name = os.path.split(target)
    prefix = f".{name}.hashexpr-"
    try:
        entries = os.listdir(parent or ".")
    except FileNotFoundError:
        return
    for entry in entries:
        if not entry.startswith(prefix):
            continue
        kind, _, pid = entry[len(prefix) :].partition("-")
        if kind not in ("tmp", "old") or not pid.isdigit() or _alive(int(pid)):
            continue
        stale = os.path.join(parent, entry)
        if kind == "old" and not os.path.lexists(target):
            # Killed between the two renames: the previous output is the only one; put it back.
            os.rename(stale, target)
        else:
            _remove(stale)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
