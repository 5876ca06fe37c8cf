"""The data files of the ``hashexpr`` command line: their formats and their paths.

A file's format comes from an explicit name (``parquet``, ``csv``, ``json``, ``orc``) or from its extension.
Spark writes a *directory* of part files for every output, so a directory named without an extension is
recognised by the part files inside it. CSV is read with ``header=true`` and ``inferSchema=true``. A local
input's files are checked to be what their format says before Spark reads them. How outputs are written is in
:mod:`hashexpr.cli.outputs`.
"""

from __future__ import annotations

import glob
import os
from collections.abc import Iterator, Mapping, Sequence
from urllib.parse import urlparse

#: The file formats the command line reads and writes, as Spark's data source names.
FORMATS: tuple[str, ...] = ("parquet", "csv", "json", "orc")

#: The formats an output may have: the file formats and Delta Lake tables.
OUTPUT_FORMATS: tuple[str, ...] = (*FORMATS, "delta")

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


def skipped(name: str) -> bool:
    """Whether Spark leaves a file or directory of this name out of an input, as its file index does: names
    starting with ``.`` (``.part-00000.crc``) or with ``_`` (``_SUCCESS``, ``_delta_log``) unless they hold a
    ``=`` (a partition directory ``_k=v`` is read), and files being copied (``._COPYING_``).

    Examples
    --------
    >>> skipped("_SUCCESS"), skipped(".part-0.crc"), skipped("_k=1"), skipped("part-0.parquet")
    (True, True, False, False)
    """
    return name.startswith(".") or (name.startswith("_") and "=" not in name) or name.endswith("._COPYING_")


def _format_of_directory(path: str) -> str | None:
    """The format of the data files in a directory Spark wrote (``part-*.snappy.parquet``, ...), at any depth
    (a Hive-partitioned table's ``key=value/`` directories); a ValueError when it holds no data file, or files
    of several formats."""
    found: dict[str, list[str]] = {}
    names = list(data_files(path))
    for name in names:
        fmt = format_of_name(name)
        if fmt is not None:
            found.setdefault(fmt, []).append(os.path.relpath(name, path))
    if not names:
        raise ValueError(
            f"{path} holds no data files: nothing to read (files starting with _ or . are not data)"
        )
    if len(found) > 1:
        listed = " and ".join(
            f"{fmt} files ({files[0]}{', ...' if len(files) > 1 else ''})" for fmt, files in found.items()
        )
        raise ValueError(
            f"cannot tell the format of {path}: it holds {listed}; name the one to read with --format, or "
            "keep each format in a directory of its own"
        )
    return next(iter(found), None)


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
    for name in data_files(local):
        problem = _content_problem(name, fmt, encoded)
        if problem is not None:
            shown = path if os.path.abspath(name) == os.path.abspath(local) else name
            raise ValueError(f"{shown} is not {fmt.upper() if fmt != 'parquet' else 'Parquet'}: {problem}")


def check_has_columns(path: str, fmt: str, options: Mapping[str, str] | None = None) -> None:
    """Raise :class:`ValueError` when a local input has no columns for Spark to read, before Spark starts.

    Spark reads such an input as a table without columns (or fails to infer its schema), and the command
    would fail later, after Spark started, with a message about its own query. An input has no columns when
    it holds no data file; when every data file of a CSV or JSON input is empty or holds only whitespace
    (Spark skips lines of spaces: not even a header); when every Parquet file has a schema without columns.
    Compressed text, text in another encoding (``--option encoding=...``) and remote paths are left to Spark.
    Call it only when no schema is given: with one, Spark reads such an input as a table without rows.

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
    >>> empty = pathlib.Path(tempfile.mkdtemp()) / "airports.csv"
    >>> _ = empty.write_text("\\n")
    >>> check_has_columns(str(empty), "csv")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
        ...
    ValueError: .../airports.csv is empty: it has no columns (not even a header line); ...
    """
    local = local_path(path)
    if local is None or "{" in local or fmt not in FORMATS:
        return
    names = list(data_files(local))
    if not names:
        raise ValueError(
            f"{path} holds no data files: nothing to read (files starting with _ or . are not data)"
        )
    if fmt in ("csv", "json"):
        encoded = any(k.lower() in ("encoding", "charset") for k in (options or {}))
        if encoded or any(_compressed(n) for n in names) or not all(map(_blank, names)):
            return
        what = "not even a header line" if fmt == "csv" else "not one JSON object"
        raise ValueError(
            f"{path} is empty: it has no columns ({what}); with --schema DDL it is read as a table without rows"
        )
    if fmt == "parquet" and all(map(_no_columns, names)):
        raise ValueError(
            f"{path} has no columns: its Parquet schema is empty; with --schema DDL it is read as a table "
            "without rows"
        )


def _blank(name: str) -> bool:
    """Whether a text file holds nothing but spaces and line breaks, which Spark skips."""
    try:
        with open(name, "rb") as f:
            while chunk := f.read(_TEXT_SAMPLE):
                if chunk.translate(None, _WHITESPACE):
                    return False
    except OSError:
        return False
    return True


# Spark skips lines of spaces alone (a tab is a value to it: a CSV header of one column named "\t").
_WHITESPACE = b" \r\n"


def _no_columns(name: str) -> bool:
    """Whether a Parquet file's schema has no columns (False when it cannot be read: Spark says why)."""
    import pyarrow.parquet as pq

    try:
        return len(pq.read_schema(name)) == 0
    except Exception:  # noqa: BLE001 - an unreadable footer is Spark's to report
        return False


def data_files(local: str) -> Iterator[str]:
    """The data files a local input reads: itself, a glob's matches, and the files under directories at any
    depth, leaving out what Spark leaves out (:func:`skipped`: _SUCCESS, .crc files, _delta_log)."""
    matches = sorted(glob.glob(local)) if any(c in local for c in "*?[") else [local]
    for match in matches:
        if not os.path.isdir(match):
            yield match
            continue
        for folder, dirs, files in os.walk(match):
            dirs[:] = sorted(d for d in dirs if not skipped(d))
            yield from (os.path.join(folder, f) for f in sorted(files) if not skipped(f))


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
    if magic is not None and not head:
        return "it is empty (0 bytes)"
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


def fixed_prefix(path: str) -> str:
    """The part of a path before its first glob component (``data/2026-*/x.csv`` -> ``data``)."""
    parts = path.split(os.sep)
    for i, part in enumerate(parts):
        if any(c in part for c in "*?[{"):
            return os.sep.join(parts[:i]) or "."
    return path
