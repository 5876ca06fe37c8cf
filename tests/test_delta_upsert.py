"""The Delta Lake SCD2 upsert of ``examples/delta_upsert.py``, on Spark 3.5 (Delta 3.3) and Spark 4.2 (Delta 4.4).

Delta Lake does not run on the Spark in ``spark-version`` yet, so the example runs in a subprocess with the
Python of a Spark line's virtualenv (``.venv-3.5``, ``.venv-4.2``; ``make`` creates them from ``spark-lines/``). The expected
changes come from the two snapshots compared with pandas, value by value, without Spark or hashexpr; the
stored record hashes are recomputed with the pure-Python reference. One run takes about a minute; the first
on a machine also downloads Delta's jars (87 MB) from Maven Central into the Ivy cache.
"""

from __future__ import annotations

import datetime
import importlib.util
import json
import os
import subprocess
from pathlib import Path

import pandas as pd
import pytest
from pyspark.sql.types import IntegerType, StringType
from spark_lines import pyspark_version

from hashexpr import reference

# Processes of its own (Delta Lake in other lines' virtualenvs): make check leaves it out.
pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "delta_upsert.py"
#: The Spark lines with a Delta Lake release (a delta-spark in their spark-lines/ files).
DELTA_LINES = ["3.5", "4.2"]
T1, T2 = datetime.datetime(2024, 1, 1), datetime.datetime(2024, 2, 1)


def _example():
    spec = importlib.util.spec_from_file_location("delta_upsert", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


EX = _example()
KEY, COLUMNS, NON_KEY = EX.KEY, EX.COLUMNS, EX.NON_KEY
TYPES = {c: IntegerType() if c in EX.INTEGERS else StringType() for c in COLUMNS}


def _plain(value):
    """NULL (None, pd.NA, NaN) as None, any other value unchanged."""
    return None if value is None or (pd.api.types.is_scalar(value) and pd.isna(value)) else value


def _same(x, y) -> bool:
    """Equal values, or both NULL."""
    x, y = _plain(x), _plain(y)
    return x is None and y is None if x is None or y is None else bool(x == y)


def _records(frame: pd.DataFrame) -> list[tuple]:
    """Rows as tuples of Python values (NULL as None, integers as int), in key order."""
    rows = frame[COLUMNS].sort_values(KEY).astype(object).itertuples(index=False, name=None)
    return [
        tuple(int(v) if c in EX.INTEGERS and _plain(v) is not None else _plain(v) for c, v in zip(COLUMNS, r))
        for r in rows
    ]


@pytest.fixture(scope="module")
def expected():
    """The changes between the snapshots, found by comparing values with pandas (NULL equals NULL)."""
    s1, s2 = EX.snapshots()
    k1, k2 = set(s1[KEY]), set(s2[KEY])
    both = s1.merge(s2, on=KEY, suffixes=("_1", "_2"))
    differs = pd.Series(False, index=both.index)
    for c in NON_KEY:
        pairs = zip(both[f"{c}_1"].astype(object), both[f"{c}_2"].astype(object))
        differs |= pd.Series([not _same(x, y) for x, y in pairs], index=both.index, dtype=bool)
    updated = set(both.loc[differs, KEY])
    return {
        "s1": s1,
        "s2": s2,
        "updated": updated,
        "inserted": k2 - k1,
        "deleted": k1 - k2,
        "unchanged": set(both.loc[~differs, KEY]),
    }


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[str, tuple[dict, pd.DataFrame]]:
    """One run of the example in each Delta line's virtualenv, started together (each is a JVM of its own):
    its JSON result and the final table it dumped."""
    started = {}
    for line in DELTA_LINES:
        python = ROOT / f".venv-{line}" / "bin" / "python"
        if not python.exists():
            pytest.fail(
                f"{python} is missing: `make venv-{line}` (a prerequisite of `make test`) creates it from "
                f"spark-lines/{line}.txt"
            )
        dump = tmp_path_factory.mktemp("delta") / "final.parquet"
        env = dict(os.environ, PYTHONPATH=str(ROOT / "python"), SPARK_LOCAL_IP="127.0.0.1")
        process = subprocess.Popen(
            [str(python), str(EXAMPLE), "--json", "--dump", str(dump)],
            cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        started[line] = (process, dump)
    done = {}
    for line, (process, dump) in started.items():
        stdout, stderr = process.communicate(timeout=900)
        assert process.returncode in (0, 1), f"the example crashed ({process.returncode}):\n{stderr[-4000:]}"
        # Spark 3.5's Ivy prints ":: loading settings ::" on the JVM's stdout, which the Python process shares.
        result = json.loads(stdout[stdout.index("{\n") :])
        result["line"] = line
        done[line] = (result, pd.read_parquet(dump))
    return done


@pytest.fixture(params=DELTA_LINES)
def run(request, runs):
    """The run on one line."""
    return runs[request.param]


def test_every_check_of_the_example_passes(run):
    result, _ = run
    assert result["spark_version"] == pyspark_version(result["line"])
    assert result["delta_packages"].startswith("io.delta:delta-spark_")
    assert result["checks"] and [name for name, ok in result["checks"].items() if not ok] == []
    assert result["ok"] is True


def test_changes_found_by_hash_are_the_changes_in_the_data(run, expected):
    result, _ = run
    assert result["snapshot_1_rows"] == len(expected["s1"])
    assert result["snapshot_2_rows"] == len(expected["s2"])
    assert result["changes"] == {k: len(expected[k]) for k in ("unchanged", "updated", "inserted", "deleted")}
    assert min(len(expected[k]) for k in ("updated", "inserted", "deleted")) >= 20


def test_merge_metrics_show_only_changed_rows_written(run, expected):
    result, _ = run
    u, i, d = (len(expected[k]) for k in ("updated", "inserted", "deleted"))
    first, second = (m["metrics"] for m in result["merges"])
    assert first["numTargetRowsInserted"] == len(expected["s1"]) and first["numTargetRowsUpdated"] == 0
    # Snapshot 2: the current versions of changed keys are closed (matched), those of vanished keys too
    # (not matched by source); new versions and new keys are inserted; nothing is deleted, and with deletion
    # vectors no unchanged row is copied into a rewritten file.
    assert second["numTargetRowsMatchedUpdated"] == u
    assert second["numTargetRowsNotMatchedBySourceUpdated"] == d
    assert second["numTargetRowsUpdated"] == u + d
    assert second["numTargetRowsInserted"] == u + i
    assert second["numTargetRowsDeleted"] == 0
    assert second["numTargetRowsCopied"] == 0
    assert second["numTargetDeletionVectorsAdded"] >= 1
    assert second["numTargetFilesRemoved"] == 0
    # Replaying snapshot 2 changes nothing, so Delta commits nothing.
    assert result["replay_commits"] == []


def test_final_table_is_the_scd2_history(run, expected):
    result, table = run
    s1, s2 = expected["s1"], expected["s2"]
    u, i, d = (expected[k] for k in ("updated", "inserted", "deleted"))
    assert len(table) == result["table"]["rows"] == len(s1) + len(u) + len(i)

    current = table[table["is_current"]]
    assert _records(current) == _records(s2)
    assert current[KEY].is_unique and current["valid_to"].isna().all()
    assert (current["valid_from"] == current[KEY].map(lambda k: T2 if k in u or k in i else T1)).all()

    closed = table[~table["is_current"]]
    assert set(closed[KEY]) == u | d and closed[KEY].is_unique
    assert _records(closed) == _records(s1[s1[KEY].isin(u | d)])
    assert (closed["valid_from"] == T1).all() and (closed["valid_to"] == T2).all()

    # Every version of a key carries the same record key; the record hash is that of its non-key columns.
    assert (table.groupby(KEY)["_hx_record_key"].nunique() == 1).all()
    assert table["_hx_record_key"].nunique() == table[KEY].nunique()
    types = {c: TYPES[c] for c in NON_KEY}
    for *data, stored in (
        table[NON_KEY + ["_hx_record_hash"]].astype(object).itertuples(index=False, name=None)
    ):
        values = {
            c: int(v) if c in EX.INTEGERS and _plain(v) is not None else _plain(v)
            for c, v in zip(NON_KEY, data)
        }
        assert bytes(stored) == reference.record_hash_by_name(values, types), values
