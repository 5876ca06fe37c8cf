"""The comparison: segments of the key hash compared by count and row-hash sums, refined where they differ, and
only the rows of the segments that still differ moved (docs/RECONCILE.md).

1. **Aggregate** (one pass over every row of each side, both sides at once): each system computes every row's
   key hash and row hash and returns, per segment, its row count and the two lane sums.
2. **Refine** (when the differing segments hold many rows): each side computes again the key hash of every row
   and the row hash of the rows of the differing segments alone, and returns aggregates of finer segments
   within them. Repeated while it cuts the rows to fetch at least in half.
3. **Fetch**: each side returns the rows of the differing segments (and every NULL-key row): key values, key
   hash, row hash and the compared columns' hashes, which :mod:`.local` compares.

At a small change rate that is one full pass and one key-hash pass per side.
"""

from __future__ import annotations

import contextlib
import math
import threading
import time
from collections.abc import Callable
from concurrent.futures import FIRST_EXCEPTION, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from typing import Any, TypeVar

import numpy as np
import pyarrow as pa

from hashexpr.arrow.arrow_types import arrow_type
from hashexpr.reconcile import columns as hcolumns
from hashexpr.reconcile import common_texts
from hashexpr.reconcile.columns import SidePlan, Words
from hashexpr.reconcile.local import Found, changes_table, compare_rows, output_columns
from hashexpr.reconcile.result import Result
from hashexpr.reconcile.segments import MAX_BITS, NULL_SEGMENT, SEGMENT_BYTES, difference
from hashexpr.reconcile.sources import Source

#: Rows per segment of the first pass: its aggregates are about 28 bytes per 8 rows.
SEGMENT_ROWS = 8
#: The most segments of the first pass (a few MB of aggregates a side, and as many groups in the system).
MAX_FIRST_BITS = 18

#: Seconds between the cancels of a side whose other side failed.
CANCEL_EVERY = 0.2

#: The longest statement timeout, in seconds: PostgreSQL's (2^31 - 1 ms), the shortest of the systems' limits.
MAX_TIMEOUT = 2_147_483

T = TypeVar("T")


def first_bits(rows: int) -> int:
    """The segment bits of the first pass for a table of about ``rows`` rows: about :data:`SEGMENT_ROWS` rows a
    segment, at most 2^:data:`MAX_FIRST_BITS` segments.

    Examples
    --------
    >>> first_bits(0), first_bits(1_000_000), first_bits(10_000_000)
    (0, 17, 18)
    """
    if rows <= SEGMENT_ROWS:
        return 0
    return min(MAX_FIRST_BITS, math.ceil(math.log2(rows / SEGMENT_ROWS)))


def _both(
    pool: ThreadPoolExecutor, sides: tuple[Source, Source], work: Callable[[Source, int], T]
) -> tuple[T, T]:
    """``work`` on both sides at once; when one fails (or the wait is interrupted) the other is cancelled."""
    futures = [pool.submit(work, side, i) for i, side in enumerate(sides)]
    try:
        done, _ = wait(futures, return_when=FIRST_EXCEPTION)
        # The side that failed first, when one did; the other is cancelled below.
        for future in done:
            if future.exception() is not None:
                raise future.exception()
        return futures[0].result(), futures[1].result()
    except BaseException:
        # A cancel that reaches a side before its query starts is lost: it is repeated until the side has ended.
        for side, future in zip(sides, futures):
            while not future.done():
                _cancel(side)
                wait([future], timeout=CANCEL_EVERY)
            # The first failure is the one to report, not the cancelled side's own error.
            with contextlib.suppress(BaseException):
                future.result()
        raise


def _cancel(side: Source) -> None:
    cancel = getattr(side, "cancel", None)
    with contextlib.suppress(Exception):
        if cancel is not None:
            cancel()


@dataclass(frozen=True)
class Request:
    """What the caller asked for, besides the two sides."""

    key: Any
    columns: Any = None
    exclude: Any = None
    values: bool = False
    statement_timeout: float | None = None
    words: Words = field(default_factory=Words)


def check_timeout(seconds: Any, words: Words) -> None:
    """Refuse a statement timeout no system takes (not a number, 0 or less, infinite, beyond MAX_TIMEOUT)."""
    number = isinstance(seconds, (int, float)) and not isinstance(seconds, bool)
    if seconds is not None and not (number and 0 < seconds <= MAX_TIMEOUT):
        raise ValueError(
            f"{words.prefix}{words.timeout} must be a number of seconds above 0 and at most {MAX_TIMEOUT:,}, "
            f"got {seconds!r}"
        )


def run(
    source: Source,
    target: Source,
    request: Request,
    progress: Callable[[str], None] | None,
    ticks: float | None = None,
) -> Result:
    """Compare ``source`` and ``target``; ``progress`` is told each step, and with ``ticks`` (seconds) also what a
    running pass has done so far, at that interval."""
    check_timeout(request.statement_timeout, request.words)
    say = progress or (lambda message: None)
    sides = (source, target)
    started = time.perf_counter()
    ticker = _Ticker(sides, say, ticks) if progress is not None and ticks else None
    with ThreadPoolExecutor(max_workers=2, thread_name_prefix="hashexpr-reconcile") as pool:
        try:
            _both(pool, sides, lambda s, _: s.open(request.statement_timeout))
            found = _compare(pool, sides, request, say, ticker)
        finally:
            if ticker is not None:
                ticker.stop()
            for side in sides:
                side.close()
    found.stats["seconds"] = round(time.perf_counter() - started, 3)
    return found


class _Ticker:
    """A progress line every ``every`` seconds while a pass runs: what each side has done (rows read and their
    rate, where the system says) and for how long."""

    def __init__(self, sides: tuple[Source, Source], say: Callable[[str], None], every: float) -> None:
        self.sides, self.say, self.every = sides, say, every
        self._pass: str | None = None
        self._started = 0.0
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._run, name="hashexpr-reconcile-progress", daemon=True)
        self._thread.start()

    def begin(self, what: str) -> None:
        with self._lock:
            self._pass, self._started = what, time.perf_counter()

    def end(self) -> None:
        with self._lock:
            self._pass = None

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        while not self._stop.wait(self.every):
            with self._lock:
                what, started = self._pass, self._started
            if what is None:
                continue
            parts = []
            for side, name in zip(self.sides, ("source", "target")):
                done = side.progress()
                parts.append(f"{name} {done}" if done else f"{name} running")
            self.say(f"{what}: {'; '.join(parts)} ({time.perf_counter() - started:.0f} s)")


def _postgres_texts(
    sides: tuple[Source, Source], plans: tuple[SidePlan, SidePlan], say: Callable[[str], None]
) -> bool:
    """Where one side is PostgreSQL and the other prints its rows' texts as that server does (texts.py), both
    aggregate by those texts' digests."""
    for printer, imitator in ((0, 1), (1, 0)):
        kinds = sides[printer].postgres_text_kinds(plans[printer])
        if kinds is not None and sides[imitator].prints_postgres_texts(plans[imitator], kinds):
            sides[printer].use_text_digests()
            sides[imitator].use_postgres_texts(kinds)
            say(
                f"{sides[imitator].label} prints its rows as PostgreSQL does: the aggregate passes compare the rows' texts"
            )
            return True
    return False


def _common_texts(
    pool: ThreadPoolExecutor,
    sides: tuple[Source, Source],
    plans: tuple[SidePlan, SidePlan],
    say: Callable[[str], None],
) -> None:
    """Where both sides print common texts (common_texts.py) and one of them computes record hashes slowly (MySQL),
    both aggregate by those texts' digests."""
    if not any(s.prefers_common_texts for s in sides):
        return
    kinds = _both(pool, sides, lambda s, i: s.common_kinds(plans[i]))
    if kinds[0] is None or kinds[1] is None:
        return
    chosen = common_texts.merged(kinds[0], kinds[1])
    if chosen is None:
        return
    _both(pool, sides, lambda s, _: s.use_common_texts(list(chosen)))
    say("both sides print the rows' common texts: the aggregate passes compare their digests")


def _primary_key(
    pool: ThreadPoolExecutor, sides: tuple[Source, Source], words: Words, say: Callable[[str], None]
) -> list[str]:
    """The source's primary key, else the target's, where no key was given."""
    keys = _both(pool, sides, lambda s, _: s.primary_key())
    for side, found in zip(("source", "target"), keys):
        if found:
            say(f"key: the {side}'s primary key, {', '.join(found)}")
            return list(found)
    raise ValueError(
        f"{words.prefix}neither side declares a primary key: name the key column(s), e.g. {words.key_example}"
    )


def _compare(
    pool: ThreadPoolExecutor,
    sides: tuple[Source, Source],
    request: Request,
    say: Callable[[str], None],
    ticker: _Ticker | None,
) -> Result:
    source, target = sides
    listed = _both(pool, sides, lambda s, _: s.columns())
    key = request.key if request.key is not None else _primary_key(pool, sides, request.words, say)
    plan = hcolumns.plan(
        listed[0],
        listed[1],
        key,
        request.columns,
        (source.label, target.label),
        request.exclude,
        request.words,
    )
    side_plans = (plan.side("source"), plan.side("target"))
    signatures = _both(pool, sides, lambda s, i: s.digest_signature(side_plans[i]))
    if signatures[0] is not None and signatures[0] == signatures[1]:
        # Same system, same types: its own digest of a row's text stands in for the row hash until the fetch.
        _both(pool, sides, lambda s, _: s.use_text_digests())
        say(f"both sides are {signatures[0]}: the aggregate passes compare the rows' texts")
    elif not _postgres_texts(sides, side_plans, say):
        _common_texts(pool, sides, side_plans, say)
    estimates = _both(pool, sides, lambda s, _: s.row_estimate())
    bits = first_bits(max(estimates))
    compared = f"{plural(len(plan.compared), 'column')}" if plan.compared else "no column (the keys alone)"
    say(f"comparing {compared} by key {', '.join(p.name for p in plan.key)}: {source.label} and {target.label}")
    for c in plan.only:
        side = "source" if c.role == hcolumns.ONLY_IN_SOURCE else "target"
        say(f"column {c.name!r} is only in the {side}: the schemas differ")
    t0 = time.perf_counter()
    aggregates = _pass(ticker, "pass 1", lambda: _both(pool, sides, lambda s, i: s.aggregate(side_plans[i], bits, None)))
    diff = difference(*aggregates)
    rows = (aggregates[0].rows, aggregates[1].rows)
    nulls = (aggregates[0].null_rows(), aggregates[1].null_rows())
    unchanged = diff.equal_rows
    levels = [_level(bits, aggregates, diff, time.perf_counter() - t0)]
    say(
        f"pass 1: {rows[0]:,} and {rows[1]:,} rows in {1 << bits:,} segments; {len(diff.segments):,} differ, holding "
        f"{diff.source_rows:,} and {diff.target_rows:,} rows ({time.perf_counter() - t0:.1f} s)"
    )
    has_null = bool(nulls[0] or nulls[1])
    pending = diff.segments[diff.segments != NULL_SEGMENT]
    to_fetch = max(diff.source_rows - nulls[0], diff.target_rows - nulls[1])
    limit = min(side.fetch_limit(max(rows)) for side in sides)
    # Refining pays while the differing segments hold several rows each, and the rows they hold are many.
    while to_fetch > limit and to_fetch > 2 * len(pending) and bits < MAX_BITS:
        per_segment = to_fetch / len(pending)
        finer = min(MAX_BITS, bits + max(4, math.ceil(math.log2(max(per_segment, 1))) + 2))
        t0 = time.perf_counter()
        within = (bits, pending)
        refined = _pass(
            ticker,
            f"refining into 2^{finer}",
            lambda b=finer, w=within: _both(pool, sides, lambda s, i: s.aggregate(side_plans[i], b, w)),
        )
        sub = difference(*refined)
        unchanged += sub.equal_rows
        levels.append(_level(finer, refined, sub, time.perf_counter() - t0))
        say(
            f"refined {len(pending):,} segments into 2^{finer}: {len(sub.segments):,} differ, holding "
            f"{sub.source_rows:,} and {sub.target_rows:,} rows ({time.perf_counter() - t0:.1f} s)"
        )
        cut = sub.rows < to_fetch / 2
        bits, pending, to_fetch = finer, sub.segments, sub.rows
        if not cut:
            break
    wanted = np.concatenate([[NULL_SEGMENT], pending]).astype(np.int64) if has_null else pending
    t0 = time.perf_counter()
    values = request.values and bool(plan.compared)
    if len(wanted):
        fetched = _pass(
            ticker, "fetching", lambda: _both(pool, sides, lambda s, i: s.fetch(side_plans[i], bits, wanted, values))
        )
    else:
        fetched = None
    compared_names = [p.name for p in plan.compared]
    key_names = [p.name for p in plan.key]
    if fetched is None:
        found = Found()
        changes = _empty_changes(plan, values)
    else:
        found = compare_rows(fetched[0], fetched[1], compared_names)
        changes = changes_table(
            fetched[0], fetched[1], found, key_names, compared_names if values else None
        )
        say(
            f"fetched {fetched[0].num_rows:,} and {fetched[1].num_rows:,} rows of {len(wanted):,} segments "
            f"({time.perf_counter() - t0:.1f} s)"
        )
    counts = dict(found.counts)
    counts["unchanged"] += unchanged
    counts["columns_only_in_source"] = sum(c.role == hcolumns.ONLY_IN_SOURCE for c in plan.only)
    counts["columns_only_in_target"] = sum(c.role == hcolumns.ONLY_IN_TARGET for c in plan.only)
    stats = {
        "rows": {"source": rows[0], "target": rows[1]},
        "levels": levels,
        "source": source.stats.as_dict() | {"passes": list(source.stats.passes)},
        "target": target.stats.as_dict() | {"passes": list(target.stats.passes)},
    }
    return Result(counts, plan.schema, source.label, target.label, stats, changes, values)


def _level(bits: int, aggregates: tuple[Any, Any], diff: Any, seconds: float) -> dict[str, Any]:
    return {
        "bits": bits,
        "segments": [len(a.segment) for a in aggregates],
        "aggregate_bytes": [SEGMENT_BYTES * len(a.segment) for a in aggregates],
        "differing": len(diff.segments),
        "rows_in_differing": [diff.source_rows, diff.target_rows],
        "seconds": round(seconds, 3),
    }


def _pass(ticker: _Ticker | None, what: str, work: Callable[[], T]) -> T:
    """``work``, during which the ticker reports ``what``."""
    if ticker is None:
        return work()
    ticker.begin(what)
    try:
        return work()
    finally:
        ticker.end()


def plural(n: int, noun: str) -> str:
    """``1 column``, ``2 columns``, ``1 query``, ``3 queries``.

    Examples
    --------
    >>> plural(1, "query"), plural(2, "query"), plural(1_000, "row")
    ('1 query', '2 queries', '1,000 rows')
    """
    if n == 1:
        return f"1 {noun}"
    return f"{n:,} {noun[:-1] + 'ies' if noun.endswith('y') else noun + 's'}"


def _empty_changes(plan: hcolumns.Plan, values: bool) -> pa.Table:
    names = output_columns([p.name for p in plan.key])
    fields = [pa.field(p.name, arrow_type(p.source.dtype)) for p in plan.key]
    fields += [
        pa.field(names["change"], pa.string()),
        pa.field(names["side"], pa.string()),
        pa.field(names["changed_columns"], pa.list_(pa.string())),
    ]
    if values:
        for side in ("source", "target"):
            struct = [pa.field(p.name, arrow_type(getattr(p, side).dtype)) for p in plan.compared]
            fields.append(pa.field(names[side], pa.struct(struct)))
    return pa.schema(fields).empty_table()
