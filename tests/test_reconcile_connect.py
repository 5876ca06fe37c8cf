"""hashexpr.reconcile against a Spark Connect server: a DataFrame of a Connect session is a side like any other,
hashed with the jar's functions on the server, or with the ``spark`` dialect's SQL (what a server without the jar
runs). One server; the planted changes of tests/test_reconcile.py, which must all be found, with their values."""

from __future__ import annotations

import gc

import pytest
from pyspark.sql import SparkSession
from reconcile_data import arrow_table, write_parquet
from servers import connect_mode
from test_reconcile import NEW, OLD, check_truth, found_rows, planted_rows

from hashexpr import reconcile as rc

pytestmark = pytest.mark.slow


def test_planted_changes_against_a_connect_dataframe(tmp_path, connect_with_jar):
    old_rows, new_rows, truth = planted_rows()
    old_path, new_path = tmp_path / "old.parquet", tmp_path / "new.parquet"
    write_parquet(arrow_table(OLD, old_rows), str(old_path))
    write_parquet(arrow_table(NEW, new_rows), str(new_path))
    server = connect_with_jar.wait_ready()
    with connect_mode():
        remote = SparkSession.builder.remote(server.url).create()
        try:
            lake = remote.read.parquet(str(new_path))
            for engine in ("jar", "sql"):
                result = rc.compare(rc.parquet(old_path), rc.spark(lake, engine=engine), key="id", values=True)
                check_truth(found_rows(result), truth)
                assert result.counts["updated"] == len(truth["update"]), engine
            # The values of the changed rows come back from the server too: the case-only change of key 22.
            update = next(r for r in result.changes().to_pylist() if r["id"] == 22)
            assert (update["source"]["name"], update["target"]["name"]) == ("abc", "Abc")
        finally:
            remote.stop()
            del remote
            gc.collect()
