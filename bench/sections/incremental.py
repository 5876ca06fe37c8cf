"""The ``incremental`` section: a Delta table's fingerprint recomputed from every row against
``hx.delta_fingerprint(table, since=state)``, which reads the change data feed alone, after a MERGE that changes
0.01 %, 0.1 % and 1 % of the rows (``--incremental-rows``, 20M by default).

Delta Lake has no release for the pinned Spark, so the runs are a process of their own in ``.venv-4.2`` (Spark
4.2 and Delta 4), this module run as a script: ``python bench/sections/incremental.py OUT.json ROWS FRACTIONS``.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from report import verdict

SPARK = False

ROOT = Path(__file__).resolve().parents[2]
DELTA_PYTHON = ROOT / ".venv-4.2" / "bin" / "python"

#: The table: a key, a string, a decimal and a nullable int, pseudo-random per row.
COLUMNS = {
    "id": "id",
    "name": "concat('customer_', cast(pmod(hash(id, 4), 100000) as string))",
    "amount": "cast(pmod(hash(id, 3), 1000000) / 100 as decimal(12,2))",
    "score": "case when pmod(hash(id, 5), 10) = 0 then null else cast(pmod(hash(id, 6), 1000) as int) end",
}


def add_arguments(parser) -> None:
    parser.add_argument(
        "--incremental-rows",
        type=int,
        default=20_000_000,
        help="rows of the Delta table (incremental section)",
    )
    parser.add_argument(
        "--incremental-fractions",
        default="0.0001,0.001,0.01",
        help="fractions of the rows each MERGE changes (incremental section), comma-separated",
    )


def run(ctx) -> dict:
    args, log = ctx.args, ctx.log
    if not DELTA_PYTHON.exists():
        raise SystemExit(f"the incremental section runs in {DELTA_PYTHON}: `make venv-4.2` creates it")
    ctx.sizes["incremental (a Delta table)"] = (args.incremental_rows, ", ".join(COLUMNS))
    with tempfile.TemporaryDirectory(dir=args.data_dir if os.path.isdir(args.data_dir) else None) as tmp:
        out = Path(tmp) / "incremental.json"
        cmd = [str(DELTA_PYTHON), __file__, str(out), str(args.incremental_rows), args.incremental_fractions]
        env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT / "python"), str(ROOT / "bench")]))
        log(
            f"  a Delta table of {args.incremental_rows:,} rows in Spark 4.2 ({DELTA_PYTHON.parent.parent.name})"
        )
        code = subprocess.run(cmd, check=False, env=env, cwd=tmp).returncode
        if code != 0:
            raise SystemExit(f"the incremental section's process failed (exit {code})")
        return json.loads(out.read_text())


def worker(out: str, rows: int, fractions: list[float]) -> None:
    """Make the table, then per fraction: a MERGE, the incremental update and the full recompute (two timed runs
    each, interleaved), and whether they agree."""
    from delta import configure_spark_with_delta_pip
    from pyspark.sql import SparkSession

    import hashexpr as hx

    started = time.perf_counter()

    def log(message: str) -> None:
        print(f"[{time.perf_counter() - started:6.0f} s]   {message}", flush=True)

    builder = (
        SparkSession.builder.master("local[2]")
        .appName("hashexpr-bench-incremental")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.driver.memory", "4g")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "8")
        # Delta reads a snapshot's log in 50 tasks by default; a log of a few commits needs no more than the cores.
        .config("spark.databricks.delta.snapshotPartitions", "8")
        .config("spark.sql.extensions", "io.delta.sql.DeltaSparkSessionExtension")
        .config("spark.sql.catalog.spark_catalog", "org.apache.spark.sql.delta.catalog.DeltaCatalog")
    )
    spark = hx.configure(configure_spark_with_delta_pip(builder)).getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    path = os.path.abspath("table")
    table = f"delta.`{path}`"
    t0 = time.perf_counter()
    spark.range(0, rows, 1, 16).selectExpr(*[f"{e} AS {c}" for c, e in COLUMNS.items()]).write.format(
        "delta"
    ).option("delta.enableChangeDataFeed", "true").option("delta.enableDeletionVectors", "true").save(path)
    log(f"wrote {rows:,} rows in {time.perf_counter() - t0:.1f} s")
    state = hx.delta_fingerprint(path, spark=spark)
    result = {"rows": rows, "spark": spark.version, "load": os.getloadavg(), "fractions": []}
    for i, fraction in enumerate(fractions):
        every = round(1 / fraction)
        # A MERGE over `fraction` of the keys: a third deleted, the rest updated, and as many new rows inserted.
        spark.range(0, rows, every).selectExpr(f"id + {i} AS id").union(
            spark.range(rows + i * rows, rows + i * rows + rows // every)
        ).createOrReplaceTempView("changes")
        t0 = time.perf_counter()
        spark.sql(
            f"MERGE INTO {table} t USING changes s ON t.id = s.id "
            "WHEN MATCHED AND pmod(t.id, 3) = 0 THEN DELETE "
            "WHEN MATCHED THEN UPDATE SET t.amount = t.amount + 1, t.score = NULL "
            "WHEN NOT MATCHED THEN INSERT (id, name, amount, score) VALUES (s.id, 'new', 0, 1)"
        )
        merge_s = time.perf_counter() - t0
        incremental, full = [], []
        updated = recomputed = None
        for _ in range(2):
            t0 = time.perf_counter()
            updated = hx.delta_fingerprint(path, since=state, spark=spark)
            incremental.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            recomputed = hx.delta_fingerprint(path, spark=spark)
            full.append(time.perf_counter() - t0)
        assert updated is not None and recomputed is not None
        changed = updated.count - state.count
        entry = {
            "fraction": fraction,
            "changed_keys": rows // every * 2,
            "rows_after": updated.count,
            "row_delta": changed,
            "merge_s": merge_s,
            "incremental": incremental,
            "full": full,
            "equal": updated.fingerprint == recomputed.fingerprint,
            "load": os.getloadavg(),
        }
        log(
            f"{fraction:.2%}: MERGE {merge_s:.1f} s; incremental {statistics.median(incremental):.2f} s, full "
            f"{statistics.median(full):.2f} s, equal: {entry['equal']}"
        )
        result["fractions"].append(entry)
        state = updated
    spark.stop()
    Path(out + ".part").write_text(json.dumps(result))
    Path(out + ".part").replace(out)


def render(args, s: dict, sections: dict, targets: list[str]) -> list[str]:
    lines = [
        "## Incremental fingerprints (Delta change data feed)",
        "",
        (
            f"A Delta table of {s['rows']:,} rows ({', '.join(COLUMNS)}; Spark {s['spark']}, Delta, local[2]); after "
            "each MERGE (a third of the matched keys deleted, the rest updated, as many keys inserted), "
            "`hx.delta_fingerprint(path, since=state)` against `hx.delta_fingerprint(path)` (every row). Median of 2."
        ),
        "",
        "| changed | keys in the MERGE | incremental (s) | full (s) | full / incremental | equal | load (1 min) |",
        "|---:|---:|---:|---:|---:|:---:|---:|",
    ]
    for f in s["fractions"]:
        inc, full = statistics.median(f["incremental"]), statistics.median(f["full"])
        lines.append(
            f"| {f['fraction']:.2%} | {f['changed_keys']:,} | {inc:.2f} | {full:.2f} | {full / inc:.1f}× | "
            f"{'yes' if f['equal'] else '**no**'} | {f['load'][0]:.1f} |"
        )
    lines.append("")
    ok = all(f["equal"] for f in s["fractions"])
    targets.append(f"- incremental fingerprints equal the full recompute at every fraction: {verdict(ok)}")
    return lines


if __name__ == "__main__":
    worker(sys.argv[1], int(sys.argv[2]), [float(x) for x in sys.argv[3].split(",") if x.strip()])
