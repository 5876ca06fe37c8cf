"""What :func:`hashexpr.reconcile.compare` returns: a :class:`Result`."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa

from hashexpr.reconcile.columns import ONLY_IN_SOURCE, ONLY_IN_TARGET, ColumnReport

#: The counts of rows, in the order results list them; the counts of columns follow them.
ROW_COUNTS = ("inserted", "deleted", "updated", "unchanged", "duplicate_key", "null_key")
COLUMN_COUNTS = ("columns_only_in_source", "columns_only_in_target")


@dataclass(frozen=True)
class Result:
    """The outcome of a comparison.

    Attributes
    ----------
    counts : dict of str to int
        Rows per kind: ``inserted`` (only in the target), ``deleted`` (only in the source), ``updated``,
        ``unchanged``, and the rows of ``duplicate_key`` and ``null_key`` (as :func:`hashexpr.spark.diff.diff` reports
        them); a changed row pair counts once. Then the columns one side alone has (unless left out by
        ``columns=`` or ``exclude=``): ``columns_only_in_source`` and ``columns_only_in_target``.
    schema : tuple of :class:`~hashexpr.reconcile.columns.ColumnReport`
        How each column was compared: its role (``key``, ``compared``, ``left out``, ``only in source`` or
        ``only in target``, with the reason), its type on each side as the system names it, and the Spark type
        it was hashed as.
    source, target : str
        The sides, as labels.
    stats : dict
        What each side cost (``scans``: passes that read every row; ``queries``; ``result_bytes``: bytes of
        aggregates and rows the system sent; ``rows_fetched``; ``seconds``), the passes, the segments.
    """

    counts: dict[str, int]
    schema: tuple[ColumnReport, ...]
    source: str
    target: str
    stats: dict[str, Any] = field(default_factory=dict)
    _changes: pa.Table | None = None
    has_values: bool = False

    def changes(self) -> pa.Table:
        """Every differing row: the key columns (the source's names), ``change`` (``insert``, ``delete``,
        ``update``, ``duplicate_key`` or ``null_key``), ``side`` (``source``, ``target`` or ``both``) and
        ``changed_columns`` (the compared columns whose values differ, for updates; NULL otherwise); with
        ``values=True``, the structs ``source`` and ``target`` of the compared columns' values on each side
        (NULL for a side the row is not on)."""
        assert self._changes is not None
        return self._changes

    @property
    def schema_differences(self) -> tuple[ColumnReport, ...]:
        """The columns one side alone has (``role`` ``only in source`` or ``only in target``)."""
        return tuple(c for c in self.schema if c.role in (ONLY_IN_SOURCE, ONLY_IN_TARGET))

    @property
    def compared(self) -> list[str]:
        """The compared columns (the source's names), besides the key."""
        return [c.name for c in self.schema if c.role == "compared"]

    @property
    def differences(self) -> int:
        """The rows :meth:`changes` reports, and the columns one side alone has."""
        return sum(v for k, v in self.counts.items() if k != "unchanged")

    @property
    def differing_rows(self) -> int:
        """The rows :meth:`changes` reports."""
        return sum(self.counts[k] for k in ROW_COUNTS if k != "unchanged")

    def __repr__(self) -> str:
        counts = ", ".join(f"{k}={v:,}" for k, v in self.counts.items())
        return f"<Result {self.source} -> {self.target}: {counts}>"
