"""A Spark application without hashexpr's jar, for tests/test_nojar.py: hashexpr's Python API on the Arrow path.

Any line's Python runs it (the pinned ``.venv``'s, ``.venv-3.5``'s) with this checkout's ``python/`` on
``PYTHONPATH``. It starts a plain local session (no jar, no extension, an HMAC key in its conf) and writes as JSON
what every function gives there: the engine and the warnings hashexpr logged, the error of SQL's
``record_hash``, a refusal, and :func:`results`, which the tests also compute with the jar in their own session
(and test_connect.py over a Spark Connect server without the jar) to compare.

Usage: ``python nojar_job.py OUT.json``
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import sys
from collections.abc import Callable, Iterator
from typing import Any

from cluster_job import mixed_dataset
from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F
from spark_conf import TEST_SECRETS

import hashexpr as hx

#: The HMAC key's name; the session's conf holds its key (tests' sessions: spark_conf.TEST_SECRETS).
SECRET = "pii"
ROWS = 300
#: Rows made in this process (over Spark Connect, a local relation the client sends).
LOCAL_ROWS = [
    (1, " c-042 ", 1.5),
    (2, "C-042", -0.0),
    (3, None, None),
    (4, "stra\u00dfe", float("nan")),
    (4, "stra\u00dfe", float("nan")),
    (5, "", 0.0),
]
LOCAL_SCHEMA = "id INT, k STRING, x DOUBLE"

#: Column functions, by the frame they run on: every kind of column the session hashes.
COLUMNS: dict[str, dict[str, Callable[[], Column]]] = {
    "server": {
        "record_hash": lambda: hx.record_hash("*"),
        "by_name": lambda: hx.record_hash("s", "i", "m", "st", by_name=True),
        "sha256": lambda: hx.record_hash("i", "s", "arr", "nested", algorithm="sha256"),
        "hmac": lambda: hx.record_hash("*", algorithm="hmac-sha256", secret=SECRET),
        "record_key": lambda: hx.record_key(
            "s", "dt", salt="hub", trim=True, case="upper", empty_as_null=True, null_key="null"
        ),
    },
    "local": {
        "record_key": lambda: hx.record_key("k", trim=True, case="upper"),
        "key_hmac": lambda: hx.record_key("k", "id", algorithm="hmac-sha256", secret=SECRET),
        "normalize_key": lambda: hx.normalize_key("k", trim=True, case="upper", empty_as_null=True),
        "nested": lambda: hx.record_key("id", hx.record_hash("k")),
    },
}


@contextlib.contextmanager
def forced_engine(engine: str) -> Iterator[None]:
    """Run the block with ``HASHEXPR_ENGINE=engine`` (``jar`` or ``arrow``); the variable is restored after it."""
    before = os.environ.get("HASHEXPR_ENGINE")
    os.environ["HASHEXPR_ENGINE"] = engine
    try:
        yield
    finally:
        if before is None:
            os.environ.pop("HASHEXPR_ENGINE", None)
        else:
            os.environ["HASHEXPR_ENGINE"] = before


def _rows(df: DataFrame) -> list[str]:
    return sorted(map(repr, df.collect()))


#: DataFrame-level functions over the frames.
DATAFRAMES: dict[str, Callable[[dict[str, DataFrame]], Any]] = {
    "dataset_fingerprint": lambda f: hx.dataset_fingerprint(f["server"]),
    "lthash16": lambda f: hx.dataset_fingerprint(f["local"], algorithm="lthash16"),
    "lthash16 keyed": lambda f: hx.dataset_fingerprint(f["server"], algorithm="lthash16", secret=SECRET),
    "fingerprint_state": lambda f: hx.fingerprint_state(f["local"], "k", F.col("x").alias("y")).to_json(),
    "fingerprints_by name": lambda f: _rows(hx.fingerprints_by(f["server"], "flag")),
    "fingerprints_by a Column": lambda f: _rows(
        hx.fingerprints_by(f["local"], F.upper("k"), algorithm="lthash16", secret=SECRET)
    ),
}


def frames(spark: SparkSession) -> dict[str, DataFrame]:
    """The data: ``server``, made by Spark (every kind of column but the interval), and ``local``."""
    # Both 01:30 of 2021-11-07 in New York (EDT, then EST): the jobs' Python workers run in that zone, where a
    # row-by-row UDF receives them as the same local wall time, told apart only by its fold.
    twice = F.timestamp_seconds(F.lit(1636263000) + (F.col("id") % 2) * 3600)
    return {
        "server": mixed_dataset(spark, ROWS).drop("ival").withColumn("dst", twice),
        "local": spark.createDataFrame(LOCAL_ROWS, LOCAL_SCHEMA),
    }


def _value(v: Any) -> Any:
    return bytes(v).hex() if isinstance(v, (bytes, bytearray)) else v


#: The calls that need the HMAC key.
KEYED = ("server hmac", "local key_hmac", "lthash16 keyed", "fingerprints_by a Column")


def results(spark: SparkSession) -> dict[str, Any]:
    """Every function of :data:`COLUMNS` and :data:`DATAFRAMES` in ``spark``: a column's values as sorted
    ``[id, value]`` pairs (binary as hex), a DataFrame-level result, or the error raised before any query ran
    (``{"error": class, "message"}``)."""
    data = frames(spark)
    out: dict[str, Any] = {}
    for frame, makers in COLUMNS.items():
        built = {}
        for name, make in makers.items():
            try:
                built[name] = make().alias(name)
            except (RuntimeError, ValueError) as error:
                out[f"{frame} {name}"] = {"error": type(error).__name__, "message": str(error)}
        if built:
            rows = data[frame].select("id", *built.values()).collect()
            for name in built:
                out[f"{frame} {name}"] = sorted([r["id"], _value(r[name])] for r in rows)
    for name, call in DATAFRAMES.items():
        try:
            out[name] = call(data)
        except ValueError as error:
            out[name] = {"error": type(error).__name__, "message": str(error)}
    return out


class _Records(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


def main(target: str) -> None:
    import pyspark

    builder = (
        SparkSession.builder.master("local[2]")
        .appName("hashexpr-nojar")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.sql.shuffle.partitions", "4")
        .config("spark.ui.enabled", "false")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config(f"spark.hashexpr.secret.{SECRET}", TEST_SECRETS[SECRET])
    )
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    records = _Records()
    logging.getLogger("hashexpr").addHandler(records)
    try:
        report: dict[str, Any] = {"pyspark": pyspark.__version__, "jars": spark.conf.get("spark.jars", "")}
        report["engine"] = [hx.engine(spark), hx.engine()]
        try:
            spark.sql("SELECT record_hash(1)").collect()
            report["sql"] = "record_hash resolved"
        except Exception as error:  # noqa: BLE001 - the message is the result
            report["sql"] = str(error).splitlines()[0]
        try:
            hx.dataset_fingerprint(mixed_dataset(spark, 10))
            report["refused"] = "no error"
        except ValueError as error:
            report["refused"] = str(error)
        report["results"] = results(spark)
        report["warnings"] = records.messages
    finally:
        spark.stop()
    with open(target, "w", encoding="utf-8") as f:
        json.dump(report, f)


if __name__ == "__main__":
    main(sys.argv[1])
