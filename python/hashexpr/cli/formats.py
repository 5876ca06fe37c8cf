"""Reading and writing the data files of the ``hashexpr`` command line.

A file's format comes from an explicit name (``parquet``, ``csv``, ``json``, ``orc``) or from its extension.
Spark writes a *directory* of part files for every output, so a directory named without an extension is
recognised by the part files inside it. CSV is read with ``header=true`` and ``inferSchema=true``.
"""

from __future__ import annotations

import glob
import os
import shutil
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING
from urllib.parse import urlparse

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql.types import StructType

#: The file formats the command line reads and writes, as Spark's data source names.
FORMATS: tuple[str, ...] = ("parquet", "csv", "json", "orc")

#: The formats an output may have: the file formats and Delta Lake tables.
OUTPUT_FORMATS: tuple[str, ...] = (*FORMATS, "delta")

#: How an existing output is treated: fail, or replace it.
MODES: tuple[str, ...] = ("error", "overwrite")

_BY_EXTENSION = {
    ".parquet": "parquet",
    ".pq": "parquet",
    ".csv": "csv",
    ".json": "json",
    ".jsonl": "json",
    ".ndjson": "json",
    ".orc": "orc",
}

# Spark decompresses text inputs by these suffixes, so `data.csv.gz` is a CSV file.
_COMPRESSION = frozenset({".gz", ".bz2", ".deflate", ".lz4", ".snappy", ".zst"})

#: The reader options every CSV input and output is read with; other options are PySpark's defaults.
# CSV carries no types and no header by default; reading it with both makes `a,b` usable as column names and
# hashes typed values (the number 7, not the string '7').
READ_OPTIONS: dict[str, dict[str, str]] = {"csv": {"header": "true", "inferSchema": "true"}}
_WRITE_OPTIONS: dict[str, dict[str, str]] = {"csv": {"header": "true"}}

# CSV has no binary type: Spark refuses to write a BINARY column to it.
_TEXT_ONLY = frozenset({"csv"})


def format_of_name(name: str) -> str | None:
    """Return the format a file name's extension stands for, or ``None``.

    A compression suffix (``.gz``, ``.bz2``, ``.zst``, ...) after the extension is skipped.

    Parameters
    ----------
    name : str
        A file or directory name, or a path.

    Returns
    -------
    str or None
        One of :data:`FORMATS`, or ``None`` for an unknown extension.

    Examples
    --------
    >>> format_of_name("flights.parquet")
    'parquet'
    >>> format_of_name("part-00000-5e1f.c000.csv.gz")
    'csv'
    >>> format_of_name("events.JSONL")
    'json'
    >>> format_of_name("notes.txt") is None
    True
    """
    root, ext = os.path.splitext(os.path.basename(name.rstrip("/\\")).lower())
    if ext in _COMPRESSION:
        ext = os.path.splitext(root)[1]
    return _BY_EXTENSION.get(ext)


def _format_of_directory(path: str) -> str | None:
    """The format of the data files in a directory Spark wrote (``part-*.snappy.parquet``, ...)."""
    # Spark's own markers (_SUCCESS, .part-00000.crc) say nothing about the format.
    names = sorted(e.name for e in os.scandir(path) if e.is_file() and not e.name.startswith(("_", ".")))
    found = {format_of_name(name) for name in names} - {None}
    return found.pop() if len(found) == 1 else None


def spark_path(path: str) -> str:
    """``path`` as Spark should read or write it: a relative local path made absolute from this process's
    current directory, which the command's checks use too (Spark would resolve it from its JVM's, which differs
    in a process that changed its directory after Spark started); anything else as it is.

    Examples
    --------
    >>> import os
    >>> spark_path("data/flights.parquet") == os.path.join(os.getcwd(), "data", "flights.parquet")
    True
    >>> spark_path("s3a://bucket/flights.parquet")
    's3a://bucket/flights.parquet'
    """
    local = local_path(path)
    if local is None or local != path or os.path.isabs(path):
        return path
    return os.path.abspath(path)


def local_path(path: str) -> str | None:
    """Return the local file system path behind ``path``, or ``None`` for a remote one (``s3a://``, ...).

    Parameters
    ----------
    path : str
        A path as Spark takes it: plain, or a URI.

    Returns
    -------
    str or None
        The path on this machine, or ``None`` when it names another file system.

    Examples
    --------
    >>> local_path("data/flights.parquet")
    'data/flights.parquet'
    >>> local_path("file:///tmp/flights.parquet")
    '/tmp/flights.parquet'
    >>> local_path("s3a://bucket/flights.parquet") is None
    True
    """
    scheme = urlparse(path).scheme
    # A one-letter scheme is a Windows drive (C:\data), not a URI.
    if len(scheme) <= 1:
        return path
    if scheme == "file":
        return urlparse(path).path
    return None


def check_format_name(given: str, known: Sequence[str] = FORMATS) -> str:
    """Return ``given`` lower-cased when it is one of ``known``; otherwise a ValueError listing them."""
    name = given.lower()
    if name not in known:
        raise ValueError(f"unknown format {given!r}: use one of {', '.join(known)}")
    return name


def input_format(path: str, given: str | None = None) -> str:
    """Return the format to read ``path`` as: ``given`` when set, else the one its name or content shows.

    A local directory without a known extension (``out/hashed``) takes the format of the part files in it.

    Parameters
    ----------
    path : str
        The input file, directory or glob.
    given : str, optional
        A format named by the user (``--format``); checked against :data:`FORMATS`.

    Returns
    -------
    str
        One of :data:`FORMATS`.

    Raises
    ------
    ValueError
        For an unknown format name, or a path whose format cannot be told.

    Examples
    --------
    >>> input_format("flights.csv")
    'csv'
    >>> input_format("flights.txt", "CSV")
    'csv'
    >>> input_format("flights.txt")
    Traceback (most recent call last):
        ...
    ValueError: cannot tell the format of flights.txt: name one with --format (parquet, csv, json, orc)
    """
    if given is not None:
        return check_format_name(given)
    found = format_of_name(path)
    local = local_path(path)
    if found is None and local is not None and os.path.isdir(local):
        found = _format_of_directory(local)
    if found is None:
        raise ValueError(f"cannot tell the format of {path}: name one with --format ({', '.join(FORMATS)})")
    return found


def output_format(path: str, given: str | None = None, default: str = "parquet") -> str:
    """Return the format to write ``path`` as: ``given`` when set, else its extension's, else ``default``; an
    extension that names no format is an error.

    What an existing directory holds does not count: the output replaces it.

    Parameters
    ----------
    path : str
        The output directory.
    given : str, optional
        A format named by the user (``--out-format``); checked against :data:`OUTPUT_FORMATS`.
    default : str
        The format of an output whose name has no known extension.

    Returns
    -------
    str
        One of :data:`OUTPUT_FORMATS`.

    Raises
    ------
    ValueError
        For an unknown format name.

    Examples
    --------
    >>> output_format("hashed.orc")
    'orc'
    >>> output_format("out/hashed")
    'parquet'
    >>> output_format("out/hashed", "json")
    'json'
    >>> output_format("out/hashed.prquet")
    Traceback (most recent call last):
        ...
    ValueError: cannot tell the format of out/hashed.prquet from its extension '.prquet': name it with --out-format (parquet, csv, json, orc, delta), or drop the extension to write parquet
    """
    if given is not None:
        return check_format_name(given, OUTPUT_FORMATS)
    found = format_of_name(path)
    if found is not None:
        return found
    extension = os.path.splitext(os.path.basename(path.rstrip("/\\")))[1]
    if extension:
        # A typo (.prquet) or a format the command does not write must not silently become Parquet.
        raise ValueError(
            f"cannot tell the format of {path} from its extension {extension!r}: name it with --out-format "
            f"({', '.join(OUTPUT_FORMATS)}), or drop the extension to write {default}"
        )
    return check_format_name(default, OUTPUT_FORMATS)


def holds_binary(fmt: str) -> bool:
    """Return whether files of format ``fmt`` can hold a ``BINARY`` column.

    Examples
    --------
    >>> holds_binary("parquet"), holds_binary("csv")
    (True, False)
    """
    return fmt not in _TEXT_ONLY


def check_input(path: str) -> None:
    """Raise :class:`FileNotFoundError` when a local input (a file, directory or glob) matches nothing.

    Remote paths are left to Spark, which reports them when it reads.

    Examples
    --------
    >>> check_input("no/such/flights.parquet")
    Traceback (most recent call last):
        ...
    FileNotFoundError: input not found: no/such/flights.parquet
    """
    local = local_path(path)
    # Hadoop globs also have {a,b}, which Python's glob lacks: such inputs are left to Spark as well.
    if local is None or "{" in local:
        return
    exists = bool(glob.glob(local)) if any(c in local for c in "*?[") else os.path.exists(local)
    if not exists:
        raise FileNotFoundError(f"input not found: {path}")


# The bytes every file of a binary format starts with (Parquet also ends with its magic), and formats that a
# text input must not be: read as CSV or JSON, such a file becomes one column of garbage, not an error.
_MAGIC = {"parquet": b"PAR1", "orc": b"ORC"}
_BINARY_MAGIC = {
    b"PAR1": ("Parquet", "read it with --format parquet"),
    b"ORC": ("ORC", "read it with --format orc"),
    b"Obj\x01": ("Avro", "hashexpr does not read Avro"),
    b"PK\x03\x04": ("a zip archive", "unzip it first"),
    b"\x1f\x8b": ("gzip-compressed", "name it .gz so that Spark decompresses it"),
    b"BZh": ("bzip2-compressed", "name it .bz2 so that Spark decompresses it"),
    b"\x28\xb5\x2f\xfd": ("zstd-compressed", "name it .zst so that Spark decompresses it"),
}
# How much of a text file is looked at for NUL bytes, which no CSV or JSON in a byte-oriented encoding holds.
_TEXT_SAMPLE = 65536


def check_content(path: str, fmt: str, options: Mapping[str, str] | None = None) -> None:
    """Raise :class:`ValueError` when a local input's files are not what ``fmt`` says, before Spark reads them.

    Every data file of the input (a file, the part files of a directory at any depth, a glob's matches) is
    checked: Parquet and ORC files by their magic bytes; CSV and JSON files for the magic bytes of a binary
    format or compression, and, unless the reader is given an ``encoding`` (UTF-16 holds NUL bytes), for NUL
    bytes in their first 64 KiB. Compressed text (``.csv.gz``) is left to Spark, which decompresses it by its
    name. Remote paths are left to Spark.

    Parameters
    ----------
    path : str
        The input: a file, a directory or a glob.
    fmt : str
        The format it is read as, one of :data:`FORMATS`.
    options : mapping of str to str, optional
        The reader's options.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> parquet = pathlib.Path(tempfile.mkdtemp()) / "planes.csv"
    >>> _ = parquet.write_bytes(b"PAR1" + bytes(8) + b"PAR1")
    >>> check_content(str(parquet), "csv")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
        ...
    ValueError: .../planes.csv is not CSV: it is Parquet data; read it with --format parquet
    """
    local = local_path(path)
    if local is None or "{" in local or fmt not in FORMATS:
        return
    encoded = any(k.lower() in ("encoding", "charset") for k in (options or {}))
    for name in _data_files(local):
        problem = _content_problem(name, fmt, encoded)
        if problem is not None:
            shown = path if os.path.abspath(name) == os.path.abspath(local) else name
            raise ValueError(f"{shown} is not {fmt.upper() if fmt != 'parquet' else 'Parquet'}: {problem}")


def _data_files(local: str) -> Iterator[str]:
    """The data files a local input reads: itself, a glob's matches, and the files under directories, leaving
    out what Spark leaves out (names starting with ``_`` or ``.``: _SUCCESS, .crc files, _delta_log)."""
    matches = sorted(glob.glob(local)) if any(c in local for c in "*?[") else [local]
    for match in matches:
        if not os.path.isdir(match):
            yield match
            continue
        for folder, dirs, files in os.walk(match):
            dirs[:] = sorted(d for d in dirs if not d.startswith(("_", ".")))
            yield from (os.path.join(folder, f) for f in sorted(files) if not f.startswith(("_", ".")))


def _content_problem(name: str, fmt: str, encoded: bool) -> str | None:
    """What is wrong with one file read as ``fmt``, or None."""
    try:
        with open(name, "rb") as f:
            head = f.read(_TEXT_SAMPLE)
            if fmt == "parquet" and len(head) >= 8:
                f.seek(-4, os.SEEK_END)
                tail = f.read(4)
            else:
                tail = b""
    except OSError as error:
        return f"it cannot be read ({error.strerror})"
    magic = _MAGIC.get(fmt)
    if magic is not None:
        if fmt == "parquet" and not (head.startswith(magic) and tail == magic):
            return f"it does not start and end with PAR1, Parquet's magic bytes{_known(head)}"
        if fmt == "orc" and not head.startswith(magic):
            return f"it does not start with ORC, ORC's magic bytes{_known(head)}"
        return None
    if _compressed(name):
        return None
    found = _binary(head)
    if found is not None:
        what, fix = found
        return f"it is {what} data; {fix}"
    if not encoded and b"\x00" in head:
        return (
            "it holds NUL bytes, which no text file in a byte-oriented encoding does: name its format with "
            "--format, or its encoding with --option encoding=..."
        )
    return None


def _binary(head: bytes) -> tuple[str, str] | None:
    """What binary format or compression a file's first bytes show, and the fix; None for anything else."""
    return next((found for prefix, found in _BINARY_MAGIC.items() if head.startswith(prefix)), None)


def _known(head: bytes) -> str:
    """`` (it is ORC data)``, when a file's first bytes tell what it is instead."""
    found = _binary(head)
    return f" (it is {found[0]} data)" if found else ""


def _compressed(name: str) -> bool:
    return os.path.splitext(name)[1].lower() in _COMPRESSION


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


def fixed_prefix(path: str) -> str:
    """The part of a path before its first glob component (``data/2026-*/x.csv`` -> ``data``)."""
    parts = path.split(os.sep)
    for i, part in enumerate(parts):
        if any(c in part for c in "*?[{"):
            return os.sep.join(parts[:i]) or "."
    return path


def read(spark: SparkSession, path: str, fmt: str, schema: StructType | None = None) -> DataFrame:
    """Return a DataFrame reading ``path`` as ``fmt``; CSV with ``header`` and ``inferSchema``.

    Parameters
    ----------
    spark : :class:`pyspark.sql.SparkSession`
        The session that reads.
    path : str
        A file, a directory of part files, or a glob.
    fmt : str
        One of :data:`FORMATS`.
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
        One of :data:`FORMATS`.
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
        shutil.rmtree(staging, ignore_errors=True)


#: Hidden siblings being written by this process.
_unfinished: set[str] = set()


def discard_unfinished() -> None:
    """Remove the outputs this process began and did not finish (call it once Spark has stopped)."""
    for staging in list(_unfinished):
        # A task that was still finishing can add a file while the tree is removed: try again.
        for _ in range(20):
            shutil.rmtree(staging, ignore_errors=True)
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
            shutil.rmtree(stale, ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
