"""record_hash over a real Spark Connect server gives the same bytes as classic PySpark.

One server is started with hashexpr's jar (``--jars`` only: the jar registers its functions itself) and one
without it, where the Python API runs hashexpr's engine in Arrow UDFs and ``mapInArrow`` (the Arrow path) and
must give the jar's bytes (on PySpark before 4.1, which has no Arrow UDFs, the column functions run row by row),
while SQL's ``record_hash`` stays unknown.

Classic and Connect sessions share this Python process, which PySpark supports only partly:

- ``SparkSession.builder.remote(url).getOrCreate()`` refuses to run next to a classic SparkContext
  (``SESSION_ALREADY_EXIST``); ``.create()`` works.
- Creating a Connect session sets ``SPARK_CONNECT_MODE_ENABLED`` in ``os.environ``. From then on
  ``pyspark.sql.functions`` build Connect columns (a classic DataFrame rejects them: ``NOT_EXPECTED_TYPE``)
  and ``SparkSession.getActiveSession()`` returns the Connect session.

So the classic hashes are computed before any Connect session exists, each test gets its own Connect session
(the only one, hence the active one, which ``hx.record_hash`` checks for the function), and the environment
is restored after each test, for the classic tests that run after this module.
"""

from __future__ import annotations

import gc
import importlib
import json
import logging
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import mmh3
import pytest
from cluster_job import mixed_dataset
from nojar_job import KEYED, forced_engine, results
from pyspark.errors import AnalysisException
from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import BinaryType, IntegerType, StringType
from servers import ConnectServer, checkout_pythonpath, connect_servers
from spark_conf import CONNECT_SECRET, CONNECT_SERVER_CONF

import hashexpr as hx
from hashexpr import reference

#: The HMAC secret of the Connect server with the jar: its name and key.
SERVER_SECRET = CONNECT_SECRET
from hashexpr.spark.metadata import _commit_id, with_metadata

# Processes of its own (Spark Connect servers): make check leaves it out.
pytestmark = pytest.mark.slow

ROWS = 300
VIEW = "mixed"
CONNECT_MODE = "SPARK_CONNECT_MODE_ENABLED"

#: Each way of calling hx.record_hash, given the DataFrame: column names, Columns, expressions and "*".
VARIANTS: dict[str, Callable[[DataFrame], Column]] = {
    "names": lambda df: hx.record_hash("i", "s", "dec", "ts", "arr", "m", "st"),
    "columns": lambda df: hx.record_hash(df.i, df["s"], F.col("dec"), df.ts, F.col("arr"), df.m, df.st),
    "expressions": lambda df: hx.record_hash(F.col("big") + 1, F.upper(df.s), F.element_at(df.m, "k")),
    "star": lambda df: hx.record_hash("*"),
}
SQL = f"SELECT id, record_hash(*) AS h FROM {VIEW}"

#: Client-side rows: over Connect they travel as a local relation, evaluated by the interpreted path.
LOCAL_ROWS = [(1, "a"), (2, None), (3, "Ab "), (4, "")]
LOCAL_SCHEMA = "id INT, v STRING"

#: hashexpr calls nested in each other and by-name hashes of expressions and of names typed in another case.
NESTED: dict[str, Callable[[], Column]] = {
    "key_of_hash": lambda: hx.record_key("id", hx.record_hash("v")),
    "hash_of_key": lambda: hx.record_hash("id", hx.record_key(hx.record_hash("v"), "v", salt="s", case="upper")),
    "array": lambda: hx.record_hash(F.array(hx.record_hash("id"), hx.record_key("v"))),
    "by_name_expression": lambda: hx.record_hash(F.upper("v"), "id", by_name=True),
    "by_name_typed_case": lambda: hx.record_hash("V", "ID", by_name=True),
}
DESCRIBE = "DESCRIBE FUNCTION EXTENDED record_hash"


def _by_id(rows: list[Any]) -> dict[int, bytes]:
    """``{id: hash bytes}``; classic returns BINARY as bytearray, Connect as bytes."""
    return {row.id: bytes(row.h) for row in rows}


def _hashes(df: DataFrame) -> dict[str, dict[int, bytes]]:
    """The hash of every row of ``df`` for each variant, and for SQL ``record_hash(*)``."""
    out = {name: _by_id(df.select("id", make(df).alias("h")).collect()) for name, make in VARIANTS.items()}
    out["sql"] = _by_id(df.sparkSession.sql(SQL).collect())
    return out


def _diff(df: DataFrame, **kwargs: Any) -> list[tuple[Any, ...]]:
    """hx.diff of ``df`` against a copy with rows deleted, updated and inserted, as sorted tuples."""
    new = df.where("id % 10 <> 3").withColumn("s", F.expr("IF(id % 7 = 0, concat(s, '*'), s)"))
    new = new.unionByName(df.where("id < 5").withColumn("id", F.col("id") + 10_000))
    rows = hx.diff(df, new, "id", **kwargs).collect()
    return sorted((r.id, r.change, r.side, tuple(r.asDict().get("changed_columns") or ())) for r in rows)


def _nested(spark: SparkSession) -> dict[str, dict[int, bytes]]:
    """Each NESTED column over LOCAL_ROWS, created from this process's data."""
    df = spark.createDataFrame(LOCAL_ROWS, LOCAL_SCHEMA)
    return {name: _by_id(df.select("id", make().alias("h")).collect()) for name, make in NESTED.items()}


def _describe(spark: SparkSession) -> list[str]:
    return [row.function_desc for row in spark.sql(DESCRIBE).collect()]


@pytest.fixture(scope="module")
def classic(spark: SparkSession) -> dict[str, Any]:
    """The classic session's hashes and description, computed while no Connect session exists."""
    assert CONNECT_MODE not in os.environ, "a Connect session was left behind by an earlier test"
    df = mixed_dataset(spark, ROWS)
    df.createOrReplaceTempView(VIEW)
    try:
        return {"hashes": _hashes(df), "describe": _describe(spark), "diff": _diff(df), "nested": _nested(spark)}
    finally:
        spark.catalog.dropTempView(VIEW)


@pytest.fixture(scope="module")
def servers(
    connect_with_jar: ConnectServer, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[dict[str, ConnectServer]]:
    """Two Spark Connect servers: ``"jar"``, the run's server with hashexpr's jar (conftest.py), and ``"bare"``,
    one without it, for this module.

    Neither is waited for here: the classic session does its part meanwhile, and each Connect session waits
    for its server.
    """
    log_dir = tmp_path_factory.mktemp("connect")
    # An HMAC secret is the server's: clients name it, never hold it (CONNECT_SERVER_CONF). Python workers on
    # local time with a DST change: row-by-row UDFs (PySpark before 4.1) get timestamps in it.
    env = {"PYTHONPATH": checkout_pythonpath(), "TZ": "America/New_York"}
    with connect_servers(log_dir, [[]], conf=CONNECT_SERVER_CONF, wait=False, env=env) as (bare,):
        yield {"jar": connect_with_jar, "bare": bare}


@contextmanager
def _session(server: ConnectServer) -> Iterator[SparkSession]:
    """A new Connect session, the active one while the test runs; afterwards, the process's mode restored."""
    server.wait_ready()
    mode_before = os.environ.get(CONNECT_MODE)
    remote: SparkSession | None = None
    try:
        # create() switches the process to Connect mode first, so the mode is restored even if it fails.
        remote = SparkSession.builder.remote(server.url).create()
        assert SparkSession.getActiveSession() is remote, "another Connect session is active"
        yield remote
    finally:
        if remote is not None:
            remote.stop()
            del remote
            # pyspark 4.0's client shuts the release pool all its sessions share when a stopped client is
            # garbage-collected; collected now, that cannot happen in the middle of the next session's call.
            gc.collect()
        if mode_before is None:
            os.environ.pop(CONNECT_MODE, None)
        else:
            os.environ[CONNECT_MODE] = mode_before


@pytest.fixture
def remote(
    servers: dict[str, ConnectServer], spark: SparkSession, classic: dict[str, Any]
) -> Iterator[SparkSession]:
    """A Connect session on the server with the jar, with the test data as the view ``mixed``.

    It depends on ``spark`` and ``classic`` so that the classic session exists, and has done its work,
    before the first Connect session switches this process's ``pyspark.sql.functions`` to Connect; on
    ``servers`` first, so that the servers start before that work.
    """
    with _session(servers["jar"]) as session:
        mixed_dataset(session, ROWS).createOrReplaceTempView(VIEW)
        yield session


@pytest.fixture
def bare_remote(servers: dict[str, ConnectServer], spark: SparkSession) -> Iterator[SparkSession]:
    """A Connect session on the server without the jar."""
    with _session(servers["bare"]) as session:
        yield session


def test_connect_hashes_equal_classic_hashes(remote: SparkSession, classic: dict[str, Any]) -> None:
    """Column names, Columns, expressions, "*" and SQL give over Connect the bytes they give on classic."""
    got = _hashes(remote.table(VIEW))
    for name, expected in classic["hashes"].items():
        assert len(expected) == ROWS
        assert got[name] == expected, name
    # Different arguments give different hashes; "*" in Python and in SQL both mean every column.
    assert got["star"] == got["sql"]
    assert got["names"] != got["star"]
    assert len(set(got["star"].values())) == ROWS


def test_nested_calls_over_connect_local_data_equal_classic(remote: SparkSession, classic: dict[str, Any]) -> None:
    """Nested calls and by-name names over client-side data (interpreted on the server) give classic's bytes."""
    got = _nested(remote)
    assert got == classic["nested"]
    # The by-name hashes equal the reference's, under the names the user sees: `upper(v)`, and `id` typed `ID`.
    for row_id, v in LOCAL_ROWS:
        assert got["by_name_expression"][row_id] == reference.record_hash_by_name(
            {"upper(v)": None if v is None else v.upper(), "id": row_id}, {"upper(v)": StringType(), "id": IntegerType()}
        )
        assert got["by_name_typed_case"][row_id] == reference.record_hash_by_name(
            {"v": v, "id": row_id}, {"v": StringType(), "id": IntegerType()}
        )
        # record_key(id, record_hash(v)), built by hand from docs/FORMAT.md section 9.
        key = b"\x82" + reference.encode_value("", StringType()) + (2).to_bytes(4, "little")
        key += reference.encode_value(row_id, IntegerType())
        key += reference.encode_value(reference.record_hash([v], [StringType()]), BinaryType())
        assert got["key_of_hash"][row_id] == mmh3.mmh3_x64_128_digest(key, reference.SEED)


def test_describe_function_over_connect(remote: SparkSession, classic: dict[str, Any]) -> None:
    """DESCRIBE FUNCTION EXTENDED record_hash over Connect shows what it shows on classic."""
    described = _describe(remote)
    assert described == classic["describe"]
    assert described[:2] == ["Function: record_hash", "Class: io.hashexpr.RecordHash"]
    assert any("record_hash(expr1, expr2, ...)" in line for line in described), described


def test_diff_over_connect_equals_classic(remote: SparkSession, classic: dict[str, Any]) -> None:
    """hx.diff, whose first pass is the diff_buckets aggregate, finds over Connect what it finds on classic."""
    got = _diff(remote.table(VIEW))
    assert got == classic["diff"]
    assert {change for _, change, _, _ in got} == {"insert", "update", "delete"}


def test_change_types_over_connect_equal_classic(remote: SparkSession, classic: dict[str, Any]) -> None:
    """diff(changed_columns=False), one diff_rows aggregate per key, finds over Connect the changes of the full
    diff on classic."""
    got = _diff(remote.table(VIEW), changed_columns=False)
    assert got == sorted((i, change, side, ()) for i, change, side, _ in classic["diff"])


def test_diff_with_stored_hashes_over_connect(remote: SparkSession, classic: dict[str, Any]) -> None:
    """A side tagged by with_metadata lends diff its stored hashes over Connect too, on client-side rows."""
    table = remote.table(VIEW)
    local = remote.createDataFrame(table.collect(), table.schema)
    new = local.where("id % 10 <> 3").withColumn("s", F.expr("IF(id % 7 = 0, concat(s, '*'), s)"))
    new = new.unionByName(local.where("id < 5").withColumn("id", F.col("id") + 10_000))
    tagged = hx.with_metadata(local, "id", commit_time="2026-01-02T03:04:05")
    # The definitions with_metadata records reach the client's schema, and diff trusts them without a sample.
    assert tagged.schema["_hx_record_key"].metadata["hashexpr"]["columns"] == ["id"]
    spec = importlib.import_module("hashexpr.spark.diff.inputs").checked(tagged, new, "id", None, None, None, None)
    assert not spec.stored[0].verify_key and not spec.stored[0].verify_hash
    rows = hx.diff(tagged, new, "id").collect()
    got = sorted((r.id, r.change, r.side, tuple(r.changed_columns or ())) for r in rows)
    assert got == classic["diff"]


def test_collisions_under_key_options_over_connect(remote: SparkSession) -> None:
    """normalize_key compares business keys over Connect as in classic PySpark, on client-side rows."""
    raw = remote.createDataFrame([(" n10156",), ("N10156",), ("N20000",)], "tailnum STRING")
    hub = hx.with_metadata(raw, "tailnum", key_options={"trim": True, "case": "upper"})
    assert hx.find_collisions(hub, "TAILNUM", hash_col="_hx_record_key").count() == 0
    assert hx.find_collisions(hub, "tailnum", hash_col="_hx_record_key", trim=True, case="upper").count() == 0
    assert {r[0] for r in raw.select(hx.normalize_key("tailnum", trim=True, case="upper")).collect()} == {
        "N10156",
        "N20000",
    }


def test_diff_with_a_bucket_list_over_connect(
    remote: SparkSession, classic: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Beyond a few differing buckets the join is filtered by a semi-join with the bucket list, which the
    client sends as a row of data: over Connect, on client-side rows, it finds what classic finds."""
    monkeypatch.setattr(importlib.import_module("hashexpr.spark.diff.rows"), "MAX_IN_LIST", 2)
    table = remote.table(VIEW)
    local = remote.createDataFrame(table.collect(), table.schema)
    assert _diff(local) == classic["diff"]


def test_diff_with_a_key_filter_over_connect(
    remote: SparkSession, classic: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    """With every bucket differing, diff filters the join by a bitmap of changed keys, a scalar subquery built
    on the server: over Connect, on client-side rows, it finds what classic finds. A client without
    DataFrame.scalar (PySpark 3.5) joins every row instead, with the same result."""
    table = remote.table(VIEW)
    local = remote.createDataFrame(table.collect(), table.schema)
    new = local.where("id % 10 <> 3").withColumn("s", F.expr("IF(id % 7 = 0, concat(s, '*'), s)"))
    new = new.unionByName(local.where("id < 5").withColumn("id", F.col("id") + 10_000))
    result = hx.diff(local, new, "id", buckets=2)
    result.explain()
    assert ("diff_key_filter_contains(" in capsys.readouterr().out) == hasattr(type(local), "scalar")
    got = sorted((r.id, r.change, r.side, tuple(r.changed_columns or ())) for r in result.collect())
    assert got == classic["diff"]


def test_sha256_and_hmac_over_connect_on_client_side_rows(remote: SparkSession) -> None:
    """algorithm= over Connect: client-side rows hashed on the server with the server's secret equal the
    reference; a secret a client sets on its session is refused."""
    rows = [(1, "alice@example.com"), (2, None), (3, "bob@example.com")]
    df = remote.createDataFrame(rows, "id INT, email STRING")
    got = df.select(
        "id",
        hx.record_hash("id", "email", algorithm="sha256").alias("h"),
        hx.record_key("email", algorithm="hmac-sha256", secret=SERVER_SECRET[0]).alias("k"),
    ).collect()
    types = [IntegerType(), StringType()]
    for row, (row_id, email) in zip(sorted(got), rows):
        assert bytes(row.h) == reference.record_hash([row_id, email], types, algorithm="sha256")
        assert bytes(row.k) == reference.record_key(
            [email], types[1:], algorithm="hmac-sha256", key=SERVER_SECRET[1]
        )
    remote.conf.set("spark.hashexpr.secret.client", "a client's key")
    try:
        with pytest.raises(AnalysisException, match="the secret 'client' is set on the session"):
            df.select(hx.record_key("email", algorithm="hmac-sha256", secret="client")).collect()
    finally:
        remote.conf.unset("spark.hashexpr.secret.client")


def test_lthash16_fingerprint_over_connect_on_client_side_rows(remote: SparkSession) -> None:
    """The lthash16 fingerprint, plain and keyed with the server's secret, of client-side rows (and of each
    group) equals the reference's."""
    rows = [(i, None if i % 3 == 0 else f"user{i}@example.com") for i in range(40)]
    df = remote.createDataFrame(rows, "id INT, email STRING")
    types = [IntegerType(), StringType()]
    assert hx.dataset_fingerprint(df, algorithm="lthash16") == reference.dataset_fingerprint(
        rows, ["id", "email"], types, algorithm="lthash16"
    )
    keyed = hx.dataset_fingerprint(df, algorithm="lthash16", secret=SERVER_SECRET[0])
    assert keyed == reference.dataset_fingerprint(
        rows, ["id", "email"], types, algorithm="lthash16", key=SERVER_SECRET[1]
    )
    groups = hx.fingerprints_by(df.withColumn("g", F.col("id") % 2), "g", algorithm="lthash16").collect()
    for g in groups:
        subset = [(i, e, i % 2) for i, e in rows if i % 2 == g.g]
        assert g.fingerprint == reference.dataset_fingerprint(
            subset, ["id", "email", "g"], [*types, IntegerType()], algorithm="lthash16"
        )


def test_unknown_column_is_sparks_analysis_exception(remote: SparkSession) -> None:
    """A misspelt column is reported by Spark's analyzer, not mistaken for a missing jar."""
    df = remote.table(VIEW)
    with pytest.raises(AnalysisException) as raised:
        df.select(hx.record_hash("id", "no_such_column")).collect()
    assert _condition(raised.value) == "UNRESOLVED_COLUMN.WITH_SUGGESTION"
    assert "no_such_column" in str(raised.value)


@pytest.fixture(scope="module")
def classic_nojar(spark: SparkSession) -> dict[str, Any]:
    """tests/nojar_job.py's results with the jar in the classic session, before any Connect session exists."""
    assert CONNECT_MODE not in os.environ, "a Connect session was left behind by an earlier test"
    with forced_engine("jar"):
        return json.loads(json.dumps(results(spark)))


def test_python_api_without_the_jar_over_connect(
    classic_nojar: dict[str, Any], bare_remote: SparkSession, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without the jar, hx.engine says 'arrow' and every function gives the jar's results on data made by the
    server and by the client (before PySpark 4.1, its column functions row by row in plain Python UDFs). A server that hides its secret confs from clients (Spark redacts them) leaves
    the HMAC key out of the Arrow path's reach: those calls say so, and that the jar reads the key."""
    monkeypatch.delenv("HASHEXPR_ENGINE", raising=False)
    assert hx.engine(bare_remote) == "arrow"
    got = json.loads(json.dumps(results(bare_remote)))
    assert got.keys() == classic_nojar.keys() and len(got) == 15
    expected = dict(classic_nojar)
    if bare_remote.conf.get("spark.hashexpr.secret.pii", None) is None:
        for name in KEYED:
            assert got[name]["error"] == "ValueError", name
            assert "never shows its clients" in got[name]["message"] and "with the jar" in got[name]["message"]
            got.pop(name), expected.pop(name)
    columns = [name for name in expected if name.split(" ")[0] in ("server", "local")]
    assert len(columns) >= 7
    assert {k: v for k, v in got.items() if k not in columns} == {k: v for k, v in expected.items() if k not in columns}
    assert {k: got[k] for k in columns} == {k: expected[k] for k in columns}


def test_server_without_jar_sql_and_forced_jar(
    bare_remote: SparkSession, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without the jar, SQL's record_hash is Spark's unknown function; with HASHEXPR_ENGINE=jar, hx.record_hash
    says the jar is missing, and how to fix it, before any query runs."""
    with pytest.raises(AnalysisException) as sql_error:
        bare_remote.sql("SELECT record_hash(1)").collect()
    assert _condition(sql_error.value) == "UNRESOLVED_ROUTINE"
    monkeypatch.setenv("HASHEXPR_ENGINE", "jar")
    with pytest.raises(hx.HashExprNotInstalledError) as raised:
        hx.record_hash("id")
    message = str(raised.value)
    assert raised.value.function == "record_hash"
    assert "start Spark with hashexpr's jar" in message
    assert 'Spark Connect:   start the server with --jars "$(python -m hashexpr jar)"' in message


def _condition(error) -> str | None:
    """The error class of a PySpark exception (``getCondition`` from Spark 4.0, ``getErrorClass`` before).

    A Spark 3.5 Connect server sends only the message, which starts with the class in brackets.
    """
    condition = error.getCondition() if hasattr(error, "getCondition") else error.getErrorClass()
    if condition is None and str(error).startswith("["):
        condition = str(error)[1:].split("]", 1)[0]
    return condition


def _query_context_logger(name: str) -> logging.Logger:
    """PySpark's logger ``name`` (a ``PySparkLogger`` from Spark 4.0; Spark 3.5 has neither it nor these logs)."""
    try:
        from pyspark.logger import PySparkLogger
    except ImportError:
        return logging.getLogger(name)
    return PySparkLogger.getLogger(name)


class _ErrorRecords(logging.Handler):
    """The records PySpark logs at ERROR (it logs every failed analysis, with its stack trace)."""

    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


@contextmanager
def _pyspark_errors() -> Iterator[list[logging.LogRecord]]:
    handler = _ErrorRecords()
    loggers = [_query_context_logger(n) for n in ("DataFrameQueryContextLogger", "SQLQueryContextLogger")]
    for logger in loggers:
        logger.addHandler(handler)
    try:
        yield handler.records
    finally:
        for logger in loggers:
            logger.removeHandler(handler)


def _server_errors(log: str) -> list[str]:
    """The ERROR lines of a Connect server's log, without Spark's own logging of a finished stream's sender.

    Spark 4.2's server can log ``RPC error during: async-grpc-response-sender`` with
    ``INVALID_CURSOR.DISCONNECTED`` when a client releases an execution whose results it has all received while
    the sender thread is still waking up: a race inside Spark Connect that no query's result depends on.
    """
    lines = log.splitlines()
    return [
        line
        for line, after in zip(lines, [*lines[1:], ""])
        if " ERROR " in line
        and not ("async-grpc-response-sender" in line and "INVALID_CURSOR.DISCONNECTED" in after)
    ]


def test_with_metadata_over_connect(
    remote: SparkSession, servers: dict[str, ConnectServer], tmp_path: Path
) -> None:
    """The source-file probe fails no analysis on the client or the server; a stream commits per micro-batch."""
    server_log = servers["jar"].process.log
    files = tmp_path / "mixed"
    remote.table(VIEW).where("id < 20").write.parquet(str(files))
    logged = server_log.stat().st_size
    with _pyspark_errors() as errors:
        in_memory = with_metadata(remote.table(VIEW), "id", commit_seqno=False)
        from_files = with_metadata(remote.read.parquet(str(files)).where("id > 3"), "id", commit_seqno=False)
        assert {r[0] for r in in_memory.select("_hx_source_file").distinct().collect()} == {None}
        sources = {r[0] for r in from_files.select("_hx_source_file").distinct().collect()}
    assert sources and all(s.startswith("file:") and s.endswith(".parquet") for s in sources)
    assert [r.getMessage() for r in errors] == []
    assert _server_errors(server_log.read_bytes()[logged:].decode()) == []

    # A file-source stream, two micro-batches: each its own commit time, commit id and sequence numbers.
    landing = tmp_path / "landing"
    landing.mkdir()
    for batch in range(2):
        lines = (json.dumps({"id": batch * 10 + i, "s": f"s{i}"}) for i in range(3))
        (landing / f"part-{batch}.json").write_text("\n".join(lines) + "\n")
    stream = remote.readStream.schema("id BIGINT, s STRING").option("maxFilesPerTrigger", 1).json(str(landing))
    query = (
        with_metadata(stream, "id")
        .writeStream.format("parquet")
        .option("checkpointLocation", str(tmp_path / "checkpoint"))
        .trigger(availableNow=True)
        .start(str(tmp_path / "out"))
    )
    query.awaitTermination()
    written = remote.read.parquet(str(tmp_path / "out"))
    rows = written.select(F.unix_millis("_hx_commit_time").alias("millis"), "_hx_commit_seqno").collect()
    batches = {}
    for r in rows:
        commit, batch_id, _, _ = r._hx_commit_seqno.split("_")
        batches.setdefault(int(batch_id), set()).add((r.millis, commit))
    assert sorted(batches) == [0, 1]
    assert all(len(commits) == 1 for commits in batches.values())
    (first,), (second,) = batches[0], batches[1]
    assert first != second
    for millis, commit in (first, second):
        assert commit == _commit_id(datetime.fromtimestamp(millis / 1000, tz=timezone.utc))
    assert len({r._hx_commit_seqno for r in rows}) == len(rows) == 6
    batch_keys = with_metadata(remote.read.schema("id BIGINT, s STRING").json(str(landing)), "id")
    assert sorted(written.select("_hx_record_key", "_hx_record_hash").collect()) == sorted(
        batch_keys.select("_hx_record_key", "_hx_record_hash").collect()
    )
