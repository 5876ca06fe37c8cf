"""What :func:`hashexpr.reconcile.compare` asks of each system: a :class:`Source`.

A source answers three kinds of question about its table, always inside its own system and always from one
snapshot: its columns and their types (:meth:`Source.columns`), the count and row-hash sums per segment of the
key hash (:meth:`Source.aggregate`, over every row or over the rows of chosen segments), and the rows of chosen
segments with their key values and hashes (:meth:`Source.fetch`). The systems: :mod:`.postgres`, :mod:`.duckdb`,
:mod:`.arrow` (Parquet and Arrow data, through the Rust engine) and :mod:`.spark`.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa

from hashexpr.reconcile.catalog import SideColumn
from hashexpr.reconcile.columns import SidePlan
from hashexpr.reconcile.segments import Aggregates

#: The columns of a fetched table besides the key columns (named ``key0``, ``key1``, ... in key order).
KEY_HASH, ROW_HASH, COLUMN_HASHES, NULL_KEY = "hx_k", "hx_h", "hx_c", "hx_z"

#: The bytes of each compared column's hash that :meth:`Source.fetch` returns (its first 16 of 32).
COLUMN_HASH_BYTES = 16

#: Rows of differing segments a side fetches without refining them first; more when the table is large: an
#: extra pass costs a key hash of every row, about what fetching a sixteenth of the rows costs.
FETCH_ROWS = 50_000
FETCH_SHARE = 16


def key_column(i: int) -> str:
    return f"key{i}"


def value_column(i: int) -> str:
    """The name of the ``i``-th compared column's values in a fetched table (only when values are asked for)."""
    return f"value{i}"


@dataclass
class Stats:
    """What a side cost: passes over every row, queries, bytes of results sent to the comparison, seconds."""

    scans: int = 0
    queries: int = 0
    result_bytes: int = 0
    rows_fetched: int = 0
    seconds: float = 0.0
    passes: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, object]:
        return {
            "scans": self.scans,
            "queries": self.queries,
            "result_bytes": self.result_bytes,
            "rows_fetched": self.rows_fetched,
            "seconds": round(self.seconds, 3),
        }


class Source:
    """One side of a comparison: a table in a system. Subclasses implement the ``_``-methods."""

    #: The system's name, for messages: ``PostgreSQL``, ``DuckDB``, ``Parquet``, ``Arrow``, ``Spark``.
    system = ""
    #: Whether the system computes record hashes so slowly that its rows' common texts are worth comparing
    #: instead wherever the other side prints them too (MySQL).
    prefers_common_texts = False

    def __init__(self) -> None:
        self.stats = Stats()
        self._opened = False

    @property
    def label(self) -> str:
        """How messages and summaries name the table (never with a password)."""
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.label}>"

    # --- lifecycle ----------------------------------------------------------------------------------------

    def open(self, statement_timeout: float | None = None) -> None:
        """Connect, and begin the read-only snapshot that every later question is answered from."""
        if self._opened:
            raise ValueError(
                f"compare: {self.label} is already being compared; a source serves one comparison at a time"
            )
        self.stats = Stats()
        self._open(statement_timeout)
        self._opened = True

    def close(self) -> None:
        """End the snapshot; close what :meth:`open` opened (a connection the caller gave stays open)."""
        if self._opened:
            self._opened = False
            self._close()

    # --- questions ----------------------------------------------------------------------------------------

    def columns(self) -> list[SideColumn]:
        """Every column, in order, with its type and the Spark type it hashes as."""
        raise NotImplementedError

    def row_estimate(self) -> int:
        """About how many rows the table has (a catalog's estimate where it has one)."""
        raise NotImplementedError

    def primary_key(self) -> list[str] | None:
        """The columns of the table's primary key, in its order, where the system declares one."""
        return None

    def aggregate(self, plan: SidePlan, bits: int, within: tuple[int, np.ndarray] | None) -> Aggregates:
        """Count and lane sums per segment at ``bits``; with ``within = (bits0, segments)``, only over the rows
        whose segment at ``bits0`` is among ``segments`` (never NULL-key rows)."""
        with self._timed("aggregate" if within is None else "refine", full=within is None):
            result = self._aggregate(plan, bits, within)
        return result

    def fetch_limit(self, rows: int) -> int:
        """How many rows of differing segments this side fetches before a refining pass pays (of ``rows``)."""
        return max(FETCH_ROWS, rows // FETCH_SHARE)

    def digest_signature(self, plan: SidePlan) -> str | None:
        """What must be equal on both sides for them to aggregate by a cheaper digest of their own than the row
        hash (:meth:`use_text_digests`); None where the system has none."""
        return None

    def use_text_digests(self) -> None:
        """Aggregate by the system's own digest of each row (only after equal :meth:`digest_signature`)."""
        raise NotImplementedError

    def postgres_text_kinds(self, plan: SidePlan) -> list[str] | None:
        """How each hashed column prints, where this system's rows' texts can stand in for the row hashes against
        a system that prints them alike (:mod:`hashexpr.reconcile.texts`); None elsewhere."""
        return None

    def prints_postgres_texts(self, plan: SidePlan, kinds: list[str]) -> bool:
        """Whether this side can print its hashed columns as PostgreSQL prints ``kinds``."""
        return False

    def use_postgres_texts(self, kinds: list[str]) -> None:
        """Aggregate by the digests of PostgreSQL's row texts, printed from this side's data (only after
        :meth:`prints_postgres_texts`)."""
        raise NotImplementedError

    def common_kinds(self, plan: SidePlan) -> list[str] | None:
        """The kinds of the hashed columns' common texts (:mod:`.common_texts`), where this system prints them;
        None elsewhere."""
        return None

    def use_common_texts(self, kinds: list[str]) -> None:
        """Aggregate by the digests of the rows' common texts, printed as ``kinds`` (both sides' kinds merged)."""
        raise NotImplementedError

    def fetch(self, plan: SidePlan, bits: int, segments: np.ndarray, values: bool = False) -> pa.Table:
        """The rows whose segment at ``bits`` is among ``segments`` (segment -1: the NULL-key rows): the key
        columns as ``key0``, ``key1``, ..., the key hash, the row hash, the compared columns' hashes (their first
        :data:`COLUMN_HASH_BYTES` bytes each, in plan order) and whether a key column is NULL; with ``values``,
        the compared columns' values as ``value0``, ``value1``, ... (in the Arrow type of their Spark type)."""
        with self._timed("fetch", full=False):
            table = self._fetch(plan, bits, segments, values)
        self.stats.rows_fetched += table.num_rows
        return table

    @contextmanager
    def _timed(self, what: str, full: bool) -> Iterator[None]:
        started = time.perf_counter()
        try:
            yield
        finally:
            self.stats.seconds += time.perf_counter() - started
            self.stats.queries += 1
            self.stats.passes.append(what)
            if full:
                self.stats.scans += 1

    def _open(self, statement_timeout: float | None) -> None:
        raise NotImplementedError

    def _close(self) -> None:
        raise NotImplementedError

    def _aggregate(self, plan: SidePlan, bits: int, within: tuple[int, np.ndarray] | None) -> Aggregates:
        raise NotImplementedError

    def _fetch(self, plan: SidePlan, bits: int, segments: np.ndarray, values: bool) -> pa.Table:
        raise NotImplementedError

    def progress(self) -> str | None:
        """What the running pass has done so far (rows read, their rate), for a progress line; None when the
        system does not say."""
        return None


# --- SQL table names ----------------------------------------------------------------------------------------

_PART = re.compile(r'"((?:[^"]|"")+)"|([A-Za-z_][A-Za-z0-9_$]*)')


def table_sql(text: str, function: str) -> str:
    """A table name as SQL: dot-separated identifiers, each plain (``orders``, which the system folds as it
    folds unquoted names) or double-quoted (``"Order Lines"``). Anything else is refused: the name is written
    into the queries."""
    if not isinstance(text, str) or not text.strip():
        raise ValueError(f"{function}: table must be a non-empty name like schema.table, got {text!r}")
    parts, position, rest = [], 0, text.strip()
    dangling = False
    while True:
        match = _PART.match(rest, position)
        if match is None:
            break
        dangling = False
        quoted, plain = match.groups()
        parts.append('"' + quoted + '"' if quoted is not None else plain)
        position = match.end()
        if position < len(rest) and rest[position] == ".":
            position += 1
            dangling = True
            continue
        break
    if dangling or position != len(rest) or not parts or len(parts) > 3:
        raise ValueError(
            f"{function}: cannot read the table name {text!r}: give [catalog.][schema.]table, each part a plain "
            'identifier or in double quotes ("My Table", with "" for a quote)'
        )
    return ".".join(parts)


def sql_array(values: np.ndarray) -> str:
    """An integer array as the text of an SQL array literal (``{1,2,3}``), for a query parameter."""
    return "{" + ",".join(map(str, np.asarray(values, np.int64).tolist())) + "}"


def segment_clause(segments: np.ndarray) -> tuple[list[int], bool]:
    """The non-NULL segments of a list, and whether the NULL-key segment is among them."""
    values = np.asarray(segments, np.int64)
    return values[values >= 0].tolist(), bool((values < 0).any())


def empty_fetch(key_types: list[pa.DataType], value_types: list[pa.DataType] | None = None) -> pa.Table:
    """A fetched table with no rows (with ``value_types``, its value columns too)."""
    fields = [pa.field(key_column(i), t) for i, t in enumerate(key_types)]
    fields += [
        pa.field(KEY_HASH, pa.binary()),
        pa.field(ROW_HASH, pa.binary()),
        pa.field(COLUMN_HASHES, pa.binary()),
        pa.field(NULL_KEY, pa.bool_()),
    ]
    fields += [pa.field(value_column(i), t) for i, t in enumerate(value_types or [])]
    return pa.schema(fields).empty_table()
