"""Incremental fingerprints of Delta tables, run in one Delta Lake session (``.venv-4.2``) by
``tests/test_delta_fingerprint.py`` through ``cli_batch``'s ``prepare`` step.

``run(spark, folder)`` makes Delta tables with the change data feed, changes them with INSERT, UPDATE, DELETE,
MERGE and OPTIMIZE (duplicates and all-NULL rows included), and after every commit keeps states up to date with
``hx.delta_fingerprint(table, since=...)``; it records each incremental state beside a full recompute of the same
version (``dataset_fingerprint`` of every row of the table as it is then, one aggregate), and the message of every refusal. The test
compares them; nothing is asserted here, so that every result reaches the test.
"""

from __future__ import annotations

import json
import os
import shutil
from typing import Any

import hashexpr as hx
from hashexpr.fingerprints import FingerprintState

#: The algorithm followed on every commit, and the one (lthash16, keyed by the secret `pii` of the session's
#: configuration) updated over every commit at once; the command lines follow both across commits too.
STEP_ALGORITHMS = [("murmur3", None)]
RANGE_ALGORITHM = ("lthash16", "pii")

ROWS = """SELECT CAST(id AS BIGINT) AS id, name, CAST(amount AS DECIMAL(10,2)) AS amount,
  CAST(tags AS ARRAY<STRING>) AS tags FROM VALUES
  (1, 'a', 1.50, array('x')), (2, 'b', NULL, array()), (3, NULL, 2.00, NULL),
  (3, NULL, 2.00, NULL), (4, 'd', -0.50, array(NULL, 'y')), (CAST(NULL AS BIGINT), NULL, NULL, NULL),
  (CAST(NULL AS BIGINT), NULL, NULL, NULL)
  AS t(id, name, amount, tags)"""

#: Each commit, as SQL on the table `{t}`.
STEPS = [
    (
        "insert, with a duplicate and a NULL row",
        "INSERT INTO {t} SELECT id, name, amount, tags FROM range_rows WHERE id > 100",
    ),
    (
        "update, to NULL too",
        "UPDATE {t} SET name = IF(id % 5 = 1, NULL, upper(name)), amount = amount + 1 WHERE id % 3 = 0 OR id % 5 = 1",
    ),
    ("delete, duplicates too", "DELETE FROM {t} WHERE id % 7 = 3 OR id IS NULL"),
    (
        "merge: update, delete and insert",
        (
            "MERGE INTO {t} t USING merge_source s ON t.id = s.id "
            "WHEN MATCHED AND s.name = 'drop' THEN DELETE "
            "WHEN MATCHED THEN UPDATE SET t.name = s.name, t.tags = s.tags "
            "WHEN NOT MATCHED THEN INSERT (id, name, amount, tags) VALUES (s.id, s.name, s.amount, s.tags)"
        ),
    ),
    ("optimize (no data change)", "OPTIMIZE {t}"),
    ("insert of rows equal to existing ones", "INSERT INTO {t} SELECT * FROM {t} WHERE id < 20"),
]


def _table(path: str) -> str:
    return "delta.`" + path.replace("`", "``") + "`"


def _full(spark, path: str, algorithms, columns=None) -> dict[str, Any]:
    """The fingerprints of every algorithm and the row count of the table as it is now: one job."""
    df = spark.read.format("delta").load(path)
    if columns:
        df = df.select(*columns)
    functions = [
        "dataset_fingerprint(*)"
        if a == "murmur3"
        else f"dataset_fingerprint_with('algorithm=lthash16{f'; secret={s}' if s else ''}', *)"
        for a, s in algorithms
    ]
    row = df.selectExpr(*functions, "count(1)").first()
    return {f"{a}:{s}": row[i] for i, (a, s) in enumerate(algorithms)} | {"rows": row[len(algorithms)]}


def _refusal(call) -> str:
    try:
        call()
    except ValueError as error:
        return str(error)
    return "no refusal"


def run(spark, folder: str) -> dict[str, Any]:
    out: dict[str, Any] = {"steps": [], "refusals": {}}
    path = os.path.join(folder, "orders")
    t = _table(path)
    options = {"delta.enableChangeDataFeed": "true", "delta.enableDeletionVectors": "true"}
    spark.sql(ROWS).write.format("delta").options(**options).save(path)
    spark.range(101, 161).selectExpr(
        "IF(id % 13 = 0, NULL, id) AS id",
        "IF(id % 4 = 0, NULL, CAST(id AS STRING)) AS name",
        "CAST(id / 8 AS DECIMAL(10,2)) AS amount",
        "array(CAST(id % 3 AS STRING)) AS tags",
    ).union(spark.sql("SELECT 1L, 'a', CAST(1.50 AS DECIMAL(10,2)), array('x')")).createOrReplaceTempView(
        "range_rows"
    )
    spark.sql(
        "SELECT * FROM VALUES (1L, 'drop', NULL, NULL), (2L, 'B2', NULL, array('m')), (104L, 'n104', NULL, "
        "NULL), (500L, 'new', CAST(5 AS DECIMAL(10,2)), array('z')) AS s(id, name, amount, tags)"
    ).createOrReplaceTempView("merge_source")

    everything = [*STEP_ALGORITHMS, RANGE_ALGORITHM]
    states = {f"{a}:{s}": hx.delta_fingerprint(path, algorithm=a, secret=s) for a, s in everything}
    first = dict(states)
    out["initial"] = {
        "states": {k: v.fingerprint for k, v in states.items()},
        "full": _full(spark, path, everything),
        "json": {k: json.loads(v.to_json()) for k, v in states.items()},
    }
    for name, sql in STEPS:
        spark.sql(sql.format(t=t))
        record: dict[str, Any] = {"name": name, "states": {}, "counts": {}}
        for a, s in STEP_ALGORITHMS:
            key = f"{a}:{s}"
            states[key] = hx.delta_fingerprint(path, since=states[key])
            record["states"][key] = states[key].fingerprint
            record["counts"][key] = states[key].count
            record.setdefault("versions", []).append(states[key].source["version"])
            record.setdefault("round_trip", []).append(
                FingerprintState.from_json(states[key].to_json()) == states[key]
            )
        record["full"] = _full(spark, path, STEP_ALGORITHMS)
        out["steps"].append(record)
    key = "{}:{}".format(*RANGE_ALGORITHM)
    jumped = hx.delta_fingerprint(path, since=first[key])
    out["range"] = {
        "from": first[key].source["version"],
        "to": jumped.source["version"],
        "state": jumped.fingerprint,
        "full": _full(spark, path, [RANGE_ALGORITHM])[key],
    }
    latest = states["murmur3:None"]

    # The same table by its catalog name: the same state, and an update from a state made by its path.
    spark.sql(f"CREATE TABLE hx_orders USING delta LOCATION '{path}'")
    named = hx.delta_fingerprint("hx_orders")
    spark.sql("INSERT INTO hx_orders VALUES (900L, 'by name', CAST(9 AS DECIMAL(10,2)), array('n'))")
    named_update = hx.delta_fingerprint("hx_orders", since=latest)
    out["named"] = {
        "state": named.fingerprint,
        "path_state": latest.fingerprint,
        "version": named.source["version"],
        "path_version": latest.source["version"],
        "update": named_update.fingerprint,
        "update_version": named_update.source["version"],
        "full": _full(spark, path, [("murmur3", None)])["murmur3:None"],
    }
    latest = hx.delta_fingerprint(path, since=latest)
    spark.range(3).write.format("parquet").saveAsTable("hx_plain")

    # A state of some columns: a column added to the table does not change their fingerprint.
    subset = hx.delta_fingerprint(path, columns=["ID", "name"])
    spark.sql(f"ALTER TABLE {t} ADD COLUMNS (note STRING)")
    spark.sql(f"UPDATE {t} SET note = 'n', name = 'renamed' WHERE id = 4")
    subset_after = hx.delta_fingerprint(path, since=subset)
    out["subset"] = {
        "columns": subset.column_names,
        "state": subset_after.fingerprint,
        "full": _full(spark, path, [("murmur3", None)], ["id", "name"])["murmur3:None"],
    }
    refusals = out["refusals"]
    refusals["a column added to a table whose every column is fingerprinted"] = _refusal(
        lambda: hx.delta_fingerprint(path, since=latest)
    )
    refusals["another column list"] = _refusal(
        lambda: hx.delta_fingerprint(path, since=subset, columns=["id"])
    )
    refusals["another algorithm"] = _refusal(
        lambda: hx.delta_fingerprint(path, since=latest, algorithm="lthash16")
    )
    refusals["a version before the state's"] = _refusal(
        lambda: hx.delta_fingerprint(path, since=latest, version=1)
    )
    refusals["a catalog table of another format"] = _refusal(lambda: hx.delta_fingerprint("hx_plain"))
    refusals["a state of no Delta table"] = _refusal(
        lambda: hx.delta_fingerprint(path, since=hx.fingerprint_state(spark.read.format("delta").load(path)))
    )

    # Another table; then the same path recreated: another table id.
    other = os.path.join(folder, "other")
    spark.sql(ROWS).write.format("delta").option("delta.enableChangeDataFeed", "true").save(other)
    other_state = hx.delta_fingerprint(other)
    refusals["a state of another table"] = _refusal(lambda: hx.delta_fingerprint(path, since=other_state))
    shutil.rmtree(other)
    spark.sql(ROWS).write.format("delta").option("delta.enableChangeDataFeed", "true").save(other)
    spark.sql(f"INSERT INTO {_table(other)} {ROWS}")
    refusals["a table recreated at the same path"] = _refusal(
        lambda: hx.delta_fingerprint(other, since=other_state)
    )

    # The feed switched off for a while, a restore, removed change files, column mapping: one after the other on
    # one table, each refused from a state of the version just before it.
    where = os.path.join(folder, "history")
    spark.sql(ROWS).write.format("delta").option("delta.enableChangeDataFeed", "true").save(where)
    spark.sql(f"UPDATE {_table(where)} SET name = 'u' WHERE id = 1")  # version 1
    since = hx.delta_fingerprint(where)
    spark.sql(f"ALTER TABLE {_table(where)} SET TBLPROPERTIES (delta.enableChangeDataFeed = false)")
    spark.sql(f"DELETE FROM {_table(where)} WHERE id = 2")
    # Version 4: the feed is on again, but version 3 has no change data.
    spark.sql(f"ALTER TABLE {_table(where)} SET TBLPROPERTIES (delta.enableChangeDataFeed = true)")
    refusals["the feed off for a version"] = _refusal(lambda: hx.delta_fingerprint(where, since=since))
    since = hx.delta_fingerprint(where)
    spark.sql(f"RESTORE TABLE {_table(where)} TO VERSION AS OF 1")  # version 5
    refusals["a restore"] = _refusal(lambda: hx.delta_fingerprint(where, since=since))
    since = hx.delta_fingerprint(where)
    spark.sql(f"UPDATE {_table(where)} SET name = 'v' WHERE id = 4")  # version 6
    # What VACUUM does to change files past its retention: they are deleted.
    shutil.rmtree(os.path.join(where, "_change_data"))
    refusals["change files removed"] = _refusal(lambda: hx.delta_fingerprint(where, since=since))
    since = hx.delta_fingerprint(where)
    spark.sql(
        f"ALTER TABLE {_table(where)} SET TBLPROPERTIES ('delta.columnMapping.mode' = 'name', "
        "'delta.minReaderVersion' = '2', 'delta.minWriterVersion' = '5')"
    )  # version 7
    refusals["column mapping switched on"] = _refusal(lambda: hx.delta_fingerprint(where, since=since))
    out["latest_json"] = latest.to_json()
    return out
