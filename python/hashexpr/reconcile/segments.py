"""Segments of the key hash, and the count and sums of row hashes per segment (docs/RECONCILE.md).

Every row has a key hash ``K`` (SHA-256 ``record_key`` of the key columns) and a row hash ``H`` (SHA-256
``record_hash`` of the key columns and the compared columns), computed inside its system. Its segment at ``bits``
bits is the first 32 bits of ``K`` read big-endian, shifted right by ``32 - bits``; a row with a NULL key column
is in segment -1. Per segment a system returns the row count and two 64-bit *lanes*: the first 16 bytes of each
``H`` are four big-endian signed 32-bit integers, each summed exactly over the segment's rows (``S0`` .. ``S3``,
64-bit integers: no overflow below 2^31 rows a segment), and ``lane1 = (S0 << 32) XOR S1``, ``lane2 = (S2 << 32)
XOR S3`` in 64-bit two's complement. Two segments hold the same rows (as a multiset) when their counts and lanes
agree, but for a chance of about 2^-128. Every system computes these with its own integer arithmetic (PostgreSQL's
``sum(integer)`` is a 64-bit sum, Spark's too); :class:`Aggregates` holds them as numpy arrays.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

#: The segment of the rows whose key has a NULL column: never compared, always reported.
NULL_SEGMENT = -1

#: The most bits a segment has: the first 32 bits of the key hash.
MAX_BITS = 32

#: Bytes a system sends per segment: segment (8), count (4) and the two lanes (8 each).
SEGMENT_BYTES = 28


def segment_of(prefix: np.ndarray, bits: int) -> np.ndarray:
    """The segments (int64) of key hashes whose first 4 bytes, big-endian, are ``prefix`` (uint32)."""
    return (prefix.astype(np.int64) >> (MAX_BITS - bits)) if bits else np.zeros(len(prefix), np.int64)


def key_prefix(key_hashes: np.ndarray) -> np.ndarray:
    """The first 4 bytes of 32-byte key hashes (an ``(n, 32)`` uint8 array), as big-endian uint32."""
    return np.ascontiguousarray(key_hashes[:, :4]).view(">u4").ravel().astype(np.uint32)


def lanes(row_hashes: np.ndarray) -> np.ndarray:
    """The four 32-bit lanes of 32-byte row hashes (an ``(n, 32)`` uint8 array): bytes 0-3, 4-7, 8-11 and 12-15
    read as big-endian signed integers, as an ``(n, 4)`` int64 array."""
    return np.ascontiguousarray(row_hashes[:, :16]).view(">i4").astype(np.int64)


def fold(sums: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The two 64-bit lanes of a segment from its four exact sums (an ``(n, 4)`` int64 array):
    ``(S0 << 32) XOR S1`` and ``(S2 << 32) XOR S3``, as uint64."""
    bits = sums.astype(np.uint64)
    shift = np.uint64(32)
    return (bits[:, 0] << shift) ^ bits[:, 1], (bits[:, 2] << shift) ^ bits[:, 3]


@dataclass
class Aggregates:
    """Per segment (ascending, each once): the row count and the two lanes."""

    segment: np.ndarray  # int64
    count: np.ndarray  # int64
    lane1: np.ndarray  # uint64
    lane2: np.ndarray  # uint64

    @classmethod
    def empty(cls) -> Aggregates:
        return cls(
            np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.uint64), np.zeros(0, np.uint64)
        )

    @classmethod
    def of_sums(cls, segment: np.ndarray, count: np.ndarray, sums: np.ndarray) -> Aggregates:
        """The aggregates of segments given once each, with their counts and four exact lane sums."""
        order = np.argsort(segment, kind="stable")
        first, second = fold(sums[order])
        return cls(segment[order].astype(np.int64), count[order].astype(np.int64), first, second)

    @classmethod
    def decode(cls, data: bytes) -> Aggregates:
        """Aggregates sent as :data:`SEGMENT_BYTES`-byte records, one per segment: big-endian int64 segment, int32
        count, and the two lanes (their 64 bits)."""
        record = np.dtype([("segment", ">i8"), ("count", ">i4"), ("lane1", ">u8"), ("lane2", ">u8")])
        rows = np.frombuffer(data or b"", dtype=record)
        order = np.argsort(rows["segment"], kind="stable")
        rows = rows[order]
        return cls(
            rows["segment"].astype(np.int64),
            rows["count"].astype(np.int64),
            rows["lane1"].astype(np.uint64),
            rows["lane2"].astype(np.uint64),
        )

    @property
    def rows(self) -> int:
        return int(self.count.sum())

    def null_rows(self) -> int:
        """The rows with a NULL key column."""
        at = np.searchsorted(self.segment, NULL_SEGMENT)
        return int(self.count[at]) if at < len(self.segment) and self.segment[at] == NULL_SEGMENT else 0


def _grouped(segment: np.ndarray, count: np.ndarray, sums: np.ndarray) -> tuple[np.ndarray, ...]:
    """Counts and exact lane sums added up per segment (a segment may appear several times)."""
    keys, inverse = np.unique(segment, return_inverse=True)
    counts = np.zeros(len(keys), np.int64)
    total = np.zeros((len(keys), 4), np.int64)
    np.add.at(counts, inverse, count)
    np.add.at(total, inverse, sums)
    return keys.astype(np.int64), counts, total


#: Up to this many bits an :class:`Accumulator` adds into arrays indexed by segment (2^20 segments: 24 MB).
DENSE_BITS = 20


class Accumulator:
    """Aggregates added up batch by batch, as exact lane sums: into arrays indexed by segment when there are few
    segments, else as partial sums merged as they grow."""

    def __init__(self, bits: int) -> None:
        self.dense = bits <= DENSE_BITS
        if self.dense:
            size = (1 << bits) + 1  # index 0: the NULL segment
            self.count = np.zeros(size, np.int64)
            self.sums = np.zeros((size, 4), np.int64)
        else:
            self.parts: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
            self.pending = 0

    def add(self, segment: np.ndarray, lanes: np.ndarray) -> None:
        """Rows, given each one's segment and four lanes (an ``(n, 4)`` int64 array)."""
        if len(segment) == 0:
            return
        if self.dense:
            at = segment + 1
            self.count += np.bincount(at, minlength=len(self.count))
            np.add.at(self.sums, at, lanes)
            return
        self.parts.append(_grouped(segment, np.ones(len(segment), np.int64), lanes))
        self.pending += len(segment)
        if self.pending > 4 * 1024 * 1024:
            self.parts = [self._merged()]
            self.pending = len(self.parts[0][0])

    def _merged(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        if not self.parts:
            return np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros((0, 4), np.int64)
        return _grouped(
            np.concatenate([p[0] for p in self.parts]),
            np.concatenate([p[1] for p in self.parts]),
            np.concatenate([p[2] for p in self.parts]),
        )

    def result(self) -> Aggregates:
        if not self.dense:
            return Aggregates.of_sums(*self._merged())
        present = np.flatnonzero(self.count)
        return Aggregates.of_sums(present.astype(np.int64) - 1, self.count[present], self.sums[present])


@dataclass(frozen=True)
class Difference:
    """The segments where two sides' aggregates differ (ascending; the NULL segment whenever a side has NULL
    keys), the rows each side holds in them, and the rows of the segments that agree."""

    segments: np.ndarray
    source_rows: int
    target_rows: int
    equal_rows: int

    @property
    def rows(self) -> int:
        return max(self.source_rows, self.target_rows)


def difference(source: Aggregates, target: Aggregates) -> Difference:
    """Compare two sides' aggregates at the same bits."""
    segments = np.union1d(source.segment, target.segment)

    def aligned(a: Aggregates) -> tuple[np.ndarray, ...]:
        at = np.searchsorted(a.segment, segments)
        found = np.zeros(len(segments), bool)
        inside = at < len(a.segment)
        found[inside] = a.segment[at[inside]] == segments[inside]
        take = np.where(found, at, 0)
        pick = (
            (lambda v, zero: np.where(found, v[take], zero))
            if len(a.segment)
            else (lambda v, zero: np.full(len(segments), zero, v.dtype))
        )
        return pick(a.count, 0), pick(a.lane1, np.uint64(0)), pick(a.lane2, np.uint64(0))

    sc, s1, s2 = aligned(source)
    tc, t1, t2 = aligned(target)
    differs = (sc != tc) | (s1 != t1) | (s2 != t2) | (segments == NULL_SEGMENT)
    return Difference(
        segments[differs],
        int(sc[differs].sum()),
        int(tc[differs].sum()),
        int(sc[~differs].sum()),
    )
