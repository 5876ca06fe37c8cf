"""Parquet snapshots for the diff and scaling sections of ``bench/run.py``: yesterday's and today's table as files.

A snapshot pair is ``old`` (20 mixed columns, keyed by ``id``), ``old`` again written with
``hashexpr.with_metadata`` (stored ``_hx_record_key`` and ``_hx_record_hash``), and one ``new`` per changed fraction.
Each set is written once into its own directory under ``--data-dir`` and reused while its manifest matches; a set
is written to a temporary directory first and renamed into place, so an interrupted run leaves no half-written set.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

# The 20 mixed columns: the 10 of the row-hash section (``harness.MIXED``) and 10 more kinds.
MORE_COLUMNS = {
    "i2": "cast(pmod(hash(id, 31), 1000000) as int)",
    "l2": "xxhash64(id, 32)",
    "d2": "cast(hash(id, 33) as double) / 1000",
    "s2": "concat('product_', cast(pmod(hash(id, 34), 50000) as string))",
    "ns2": "case when pmod(hash(id, 35), 4) = 0 then null else concat('comment ', hex(hash(id, 35))) end",
    "dt2": "date_add(date'2010-01-01', pmod(hash(id, 36), 5000))",
    "ts2": "timestamp_seconds(1262304000 + pmod(xxhash64(id, 37), 400000000))",
    "dec2": "cast(pmod(hash(id, 38), 1000000) / 1000 as decimal(12, 3))",
    "sh": "cast(pmod(hash(id, 39), 30000) as smallint)",
    "f": "cast(hash(id, 40) as float) / 7",
}

# Bumped whenever the generated data changes, so that sets written by an older bench are written again.
GENERATOR = 1


@dataclass(frozen=True)
class SnapshotSet:
    """The Parquet directories of one size: ``old``, ``old_stored`` (with metadata, if written) and
    ``new[fraction]``."""

    rows: int
    old: str
    old_stored: str
    new: dict[float, str]
    new_rows: dict[float, int]


def mixed20(spark, n: int, mixed: dict[str, str]):
    exprs = {**mixed, **MORE_COLUMNS}
    return spark.range(n).selectExpr(*[f"{e} as `{c}`" for c, e in exprs.items()])


def snapshot_set(
    spark, data_dir: Path, rows: int, fractions: list[float], mixed: dict, make_new, log, stored: bool = True
) -> SnapshotSet:
    """The snapshots of ``rows`` rows a side, written now unless a matching set is already in ``data_dir``.

    ``stored`` adds ``old_stored``, the old side written with ``with_metadata``.
    """
    import hashexpr as hx

    target = data_dir / f"diff-{rows}"
    manifest = {
        "generator": GENERATOR,
        "rows": rows,
        "fractions": sorted(fractions),
        "stored": stored,
        "hashexpr": hx.__version__,
    }
    done = target / "manifest.json"
    if done.is_file() and json.loads(done.read_text()).get("key") == manifest:
        info = json.loads(done.read_text())
        log(f"  reusing the Parquet snapshots in {target}")
    else:
        if target.exists() and not done.is_file():
            raise SystemExit(f"{target} exists and was not written by the bench; pass another --data-dir")
        info = {"key": manifest, "new_rows": {}}
        tmp = data_dir / f".diff-{rows}.tmp-{os.getpid()}"
        shutil.rmtree(tmp, ignore_errors=True)
        t0 = time.perf_counter()
        mixed20(spark, rows, mixed).write.parquet(str(tmp / "old"))
        old = spark.read.parquet(str(tmp / "old"))
        if stored:
            meta = hx.with_metadata(old, "id", commit_time="2026-01-01T00:00:00")
            meta.write.parquet(str(tmp / "old_stored"))
        for f in fractions:
            make_new(old, rows, f).write.parquet(str(tmp / f"new-{f}"))
            info["new_rows"][str(f)] = spark.read.parquet(str(tmp / f"new-{f}")).count()
        (tmp / "manifest.json").write_text(json.dumps(info))
        if target.exists():  # the bench's own earlier set (its manifest says so), of another generator
            shutil.rmtree(target)
        os.replace(tmp, target)
        log(
            f"  wrote the Parquet snapshots of {rows:,} rows a side to {target} in {time.perf_counter() - t0:.0f} s"
        )
    return SnapshotSet(
        rows=rows,
        old=str(target / "old"),
        old_stored=str(target / "old_stored"),
        new={f: str(target / f"new-{f}") for f in fractions},
        new_rows={f: int(info["new_rows"][str(f)]) for f in fractions},
    )


class StageSpills:
    """Spill and failure totals of the application's stages, read from Spark's monitoring REST API."""

    def __init__(self, spark):
        self.url = spark.sparkContext.uiWebUrl
        self.app = spark.sparkContext.applicationId
        self.seen: set[tuple[int, int]] = set(self._stages())

    def _stages(self) -> dict[tuple[int, int], dict]:
        import urllib.request

        if not self.url:
            return {}
        out = {}
        for status in ("complete", "failed"):
            with urllib.request.urlopen(
                f"{self.url}/api/v1/applications/{self.app}/stages?status={status}"
            ) as r:
                for s in json.load(r):
                    out[(s["stageId"], s["attemptId"])] = s
        return out

    def since_last(self) -> dict[str, int]:
        """Memory and disk bytes spilled, and failed stages, since the previous call."""
        stages = self._stages()
        new = [s for k, s in stages.items() if k not in self.seen]
        self.seen |= set(stages)
        return {
            "stages": len(new),
            "spilled_memory_bytes": sum(s.get("memoryBytesSpilled", 0) for s in new),
            "spilled_disk_bytes": sum(s.get("diskBytesSpilled", 0) for s in new),
            "failed_stages": sum(1 for s in new if s.get("status") == "FAILED"),
        }
