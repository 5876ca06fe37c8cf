"""What :func:`hashexpr.reconcile.compare` returns: a :class:`Result`."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa

from hashexpr.reconcile.columns import ColumnReport


@dataclass(frozen=True)
class Result:
    """The outcome of a comparison.

    Attributes
    ----------
    counts : dict of str to int
        Rows per kind: ``inserted`` (only in the target), ``deleted`` (only in the source), ``updated``,
        ``unchanged``, and the rows of ``duplicate_key`` and ``null_key`` (as :func:`hashexpr.diff.diff` reports
        them). A changed row pair counts once.
    schema : tuple of :class:`~hashexpr.reconcile.columns.ColumnReport`
        How each column was compared: its role (``key``, ``compared`` or ``left out``, with the reason), its
        type on each side as the system names it, and the Spark type it was hashed as.
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

    def changes(self) -> pa.Table:
        """Every difference: the key columns (the source's names), ``change`` (``insert``, ``delete``,
        ``update``, ``duplicate_key`` or ``null_key``), ``side`` (``source``, ``target`` or ``both``) and
        ``changed_columns`` (the compared columns whose values differ, for updates; NULL otherwise)."""
        assert self._changes is not None
        return self._changes

    @property
    def differences(self) -> int:
        """The rows reported by :meth:`changes`."""
        return sum(v for k, v in self.counts.items() if k != "unchanged")

    def __repr__(self) -> str:
        counts = ", ".join(f"{k}={v:,}" for k, v in self.counts.items())
        return f"<Result {self.source} -> {self.target}: {counts}>"
