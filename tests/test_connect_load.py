"""Eight Spark Connect clients at once against one server: each gets exactly what it gets alone.

Each client is a thread with its own ``SparkSession.builder.remote(...).create()`` session (its own gRPC
channel and server-side session). In every round all clients start together and each hashes
(``hx.record_hash``, ``hx.record_key`` with a salt of its own), fingerprints (``hx.dataset_fingerprint``) and
diffs (``hx.diff``) either data of its own or data all clients share: half the clients work on their own
data while the other half work on the shared data, and the halves swap from round to round. Client-side rows (``createDataFrame``) reach the server as a local relation, evaluated by the
interpreted path; ``spark.range`` rows go through generated code. The expected results are computed first
by one client alone, one call after the other.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from decimal import Decimal
from typing import Any

import pytest
from cluster_job import MIXED_COLUMNS
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from servers import ConnectServer, connect_mode

import hashexpr as hx

# Processes of its own (a Spark Connect server under load): make check leaves it out.
pytestmark = pytest.mark.slow

CLIENTS = 8
ROUNDS = 2
LOCAL_ROWS = 200
RANGE_ROWS = 2_000
#: The data's owner: a client (0 to CLIENTS - 1), or SHARED. Owner ``o``'s ids start at ``(o + 1) * ID_STEP``,
#: so the shared ids start at 0.
SHARED = -1
ID_STEP = 1_000_000
LOCAL_SCHEMA = "id BIGINT, name STRING, code STRING, amount DECIMAL(12, 2), tags ARRAY<STRING>"
#: Seconds the concurrent rounds may take in all; a hung call fails the test instead of stalling CI.
CONCURRENT_TIMEOUT_SECONDS = 300


def _local_rows(owner: int) -> list[tuple[Any, ...]]:
    """Client-side rows of ``owner`` (a client, or SHARED), different for every owner."""
    rows = []
    for i in range(LOCAL_ROWS):
        row_id = (owner + 1) * ID_STEP + i
        name = None if i % 7 == 0 else f"name {owner} {i}"
        tags = None if i % 5 == 0 else [f"t{i % 3}", None if i % 2 else f"u{owner}"]
        rows.append(
            (row_id, name, f"  c-{i % 11} ", None if i % 4 == 0 else Decimal(i * 37 % 10_000) / 100, tags)
        )
    return rows


def _range_rows(session: SparkSession, owner: int) -> DataFrame:
    """The mixed rows of tests/cluster_job.py over ``spark.range``: the owner's own ids, or the shared ones."""
    start = 0 if owner == SHARED else (owner + 1) * ID_STEP
    return session.range(start, start + RANGE_ROWS, 1, 2).selectExpr(*MIXED_COLUMNS)


def _salt(owner: int) -> str:
    return "shared" if owner == SHARED else f"client-{owner}"


def _hashes(df: DataFrame, owner: int, key: list[str]) -> dict[int, tuple[bytes, bytes]]:
    """``{id: (record_hash of every column, record_key of the key columns salted for the owner)}``."""
    rows = df.select(
        "id", hx.record_hash("*").alias("h"), hx.record_key(*key, salt=_salt(owner)).alias("k")
    ).collect()
    return {r.id: (bytes(r.h), bytes(r.k)) for r in rows}


def _diff(old: DataFrame) -> list[tuple[Any, ...]]:
    """hx.diff of ``old`` against a copy with rows deleted, updated and inserted, as sorted tuples."""
    # Few enough changed keys (28) for diff's IN-list filter: no broadcast job per diff.
    new = old.where("id % 20 <> 3").withColumn("name", F.expr("IF(id % 15 = 1, concat(name, '*'), name)"))
    new = new.unionByName(old.where("id % 50 = 0").withColumn("id", F.col("id") + 500_000))
    rows = hx.diff(old, new, "id").collect()
    return sorted((r.id, r.change, r.side, tuple(r.changed_columns or ())) for r in rows)


def _work(session: SparkSession, owner: int) -> dict[str, Any]:
    """Everything a client computes on one owner's data: hashes of both kinds of rows, a fingerprint, a diff."""
    local = session.createDataFrame(_local_rows(owner), LOCAL_SCHEMA)
    ranged = _range_rows(session, owner)
    return {
        "local_hashes": _hashes(local, owner, ["id", "code"]),
        "range_hashes": _hashes(ranged, owner, ["id", "s"]),
        "fingerprint": hx.dataset_fingerprint(ranged),
        "diff": _diff(local),
    }


def _owner(client: int, round_: int) -> int:
    """Whose data ``client`` works on in ``round_``: its own in every other round, the shared data else."""
    return client if (client + round_) % 2 == 0 else SHARED


@pytest.fixture(scope="module")
def server(connect_with_jar: ConnectServer) -> Iterator[ConnectServer]:
    """The run's Spark Connect server with hashexpr's jar (conftest.py); this process in Connect mode."""
    with connect_mode():
        yield connect_with_jar.wait_ready()


def _client(server: ConnectServer) -> SparkSession:
    """A client's own session; a few shuffle partitions over its small data."""
    return SparkSession.builder.remote(server.url).config("spark.sql.shuffle.partitions", "2").create()


@pytest.fixture(scope="module")
def alone(server: ConnectServer) -> dict[int, dict[str, Any]]:
    """Every owner's results as one client computes them alone, one call after the other."""
    session = _client(server)
    try:
        return {owner: _work(session, owner) for owner in [SHARED, *range(CLIENTS)]}
    finally:
        session.stop()


def test_alone_results_differ_by_owner(alone: dict[int, dict[str, Any]]) -> None:
    """The owners' data, salts and so results all differ: a client given another's results would be caught."""
    for name in ("local_hashes", "range_hashes", "fingerprint", "diff"):
        values = [alone[owner][name] for owner in alone]
        assert all(values), name
        assert len({repr(v) for v in values}) == len(values), name
    shared = alone[SHARED]
    assert len(shared["local_hashes"]) == LOCAL_ROWS and len(shared["range_hashes"]) == RANGE_ROWS
    assert {change for _, change, _, _ in shared["diff"]} == {"insert", "update", "delete"}


def test_concurrent_clients_get_what_one_client_gets(
    server: ConnectServer, alone: dict[int, dict[str, Any]]
) -> None:
    """Eight clients, each in its own session, computing at once in every round, get the results of one alone."""
    start = threading.Barrier(CLIENTS)
    results: dict[tuple[int, int], dict[str, Any]] = {}
    errors: dict[int, BaseException] = {}
    timings: dict[int, float] = {}

    def client(c: int) -> None:
        began = time.monotonic()
        try:
            session = _client(server)
            try:
                for r in range(ROUNDS):
                    # All clients begin each round together, so that their calls overlap on the server.
                    start.wait(timeout=CONCURRENT_TIMEOUT_SECONDS)
                    results[(c, r)] = _work(session, _owner(c, r))
            finally:
                session.stop()
        except BaseException as e:  # noqa: BLE001 - reported by the test's thread
            errors[c] = e
            start.abort()
        timings[c] = time.monotonic() - began

    threads = [
        threading.Thread(target=client, args=(c,), daemon=True, name=f"client-{c}") for c in range(CLIENTS)
    ]
    deadline = time.monotonic() + CONCURRENT_TIMEOUT_SECONDS
    for t in threads:
        t.start()
    for t in threads:
        t.join(max(deadline - time.monotonic(), 0))
    hung = [t.name for t in threads if t.is_alive()]
    assert not hung, f"clients still running after {CONCURRENT_TIMEOUT_SECONDS}s: {hung}"
    # A client's own error, not the BrokenBarrierError the others see once it aborted the barrier.
    first = {c: e for c, e in errors.items() if not isinstance(e, threading.BrokenBarrierError)}
    assert not errors, f"clients failed: {first or errors}"

    for c in range(CLIENTS):
        for r in range(ROUNDS):
            expected = alone[_owner(c, r)]
            got = results[(c, r)]
            for name, value in expected.items():
                assert got[name] == value, f"client {c}, round {r}: {name} differs from one client alone"
    print(f"{CLIENTS} clients x {ROUNDS} rounds: {max(timings.values()):.1f}s")
