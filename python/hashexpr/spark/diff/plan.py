"""What the bucket pass of a diff found (:class:`BucketPass`): read by the passes that follow it."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class BucketPass:
    """What the first pass found: per-side row counts and the buckets whose multisets of hashes differ."""

    differing_buckets: tuple[int, ...]
    old_rows: int
    new_rows: int
    rows_to_compare: int
    null_key_rows: tuple[int, int]
    # Rows of the buckets that are the same on both sides: each is an unchanged (old, new) pair.
    unchanged_rows: int

    @property
    def joins_everything(self) -> bool:
        """True when the differing buckets hold half the rows or more: then filtering costs more than it saves."""
        return self.rows_to_compare * 2 >= self.old_rows + self.new_rows

    @property
    def rows_joined(self) -> int:
        """The keyed rows of both sides that the values join reads: every one when it joins everything."""
        return self.old_rows + self.new_rows if self.joins_everything else self.rows_to_compare
