"""Incremental fingerprints of Delta tables: ``hx.delta_fingerprint(table, since=...)`` and ``hashexpr fingerprint
TABLE --state FILE``, against a full recompute of every version.

Delta Lake runs in ``.venv-4.2`` (it has no release for the Spark in ``spark-version``), so the whole scenario runs
in one process and one Delta session: ``tests/delta_fingerprint_job.py`` (the tables, their commits, the states and
refusals) as ``cli_batch``'s ``prepare`` step, then the command lines. The expected fingerprints are full
recomputes: ``dataset_fingerprint`` of the table read at the same version, whose own correctness the golden
vectors hold.
"""

from __future__ import annotations

import json

import pytest
from cli_runner import ROOT, cli_batch

DELTA_PYTHON = ROOT / ".venv-4.2" / "bin" / "python"

# A process of its own (Delta Lake in .venv-4.2): make check leaves it out.
pytestmark = pytest.mark.slow

_PREPARE = f"""
import json, os, sys
sys.path.insert(0, {str(ROOT / "tests")!r})
from delta_fingerprint_job import run
prepared["job"] = json.dumps(run(spark, os.getcwd()))
# The command line takes a secret's key from the environment (the session's configuration has the same one).
os.environ["HASHEXPR_SECRET_PII"] = "k3y-for-pii"
# The command lines' tables: three versions, a table of its own, a Parquet file, a state file altered by hand.
cli = os.path.abspath("cli_table")
spark.range(40).selectExpr("id", "CAST(id % 4 AS STRING) AS s").write.format("delta").option(
    "delta.enableChangeDataFeed", "true").save(cli)
spark.sql(f"UPDATE delta.`{{cli}}` SET s = NULL WHERE id % 6 = 0")
spark.sql(f"DELETE FROM delta.`{{cli}}` WHERE id > 30")
spark.sql(f"INSERT INTO delta.`{{cli}}` VALUES (7, '3'), (7, '3'), (NULL, NULL)")
spark.range(5).write.format("delta").option("delta.enableChangeDataFeed", "true").save("cli_other")
spark.range(5).write.parquet("plain.parquet")
"""


@pytest.fixture(scope="module")
def batch(tmp_path_factory):
    folder = tmp_path_factory.mktemp("delta-fingerprint")
    if not DELTA_PYTHON.exists():
        pytest.fail(f"{DELTA_PYTHON} is missing: `make venv-4.2` (a prerequisite of `make test`) creates it")
    state = ["--state", "st.json", "--json"]
    done = cli_batch(
        {
            "state new": ["fingerprint", "cli_table", "--version", "1", *state],
            "state update": ["fingerprint", "cli_table", *state],
            "state again": ["fingerprint", "cli_table", *state],
            "full": ["fingerprint", "cli_table", "--json"],
            "lthash new": ["fingerprint", "cli_table", "--version", "0", "--state", "lt.json", "--algorithm",
                           "lthash16", "--secret", "pii", "--json"],
            "lthash update": ["fingerprint", "cli_table", "--state", "lt.json", "--algorithm", "lthash16",
                              "--secret", "pii", "--json"],
            "lthash full": ["fingerprint", "cli_table", "--algorithm", "lthash16", "--secret", "pii", "--json"],
            "another table": ["fingerprint", "cli_other", "--state", "st.json"],
            "another algorithm": ["fingerprint", "cli_table", "--state", "st.json", "--algorithm", "lthash16"],
            "not delta": ["fingerprint", "plain.parquet", "--state", "p.json"],
            "with --by": ["fingerprint", "cli_table", "--state", "st.json", "--by", "s"],
        },
        folder,
        python=DELTA_PYTHON,
        conf={"spark.hashexpr.secret.pii": "k3y-for-pii"},
        delta=True,
        prepare=_PREPARE,
    )  # fmt: skip
    return {"folder": folder, "job": json.loads(done.prepared["job"]), "runs": done.runs}


@pytest.fixture(scope="module")
def job(batch):
    return batch["job"]


def test_the_initial_states_are_the_full_fingerprints(job):
    initial = job["initial"]
    assert initial["states"] == {k: initial["full"][k] for k in initial["states"]}
    assert initial["states"]["lthash16:pii"].startswith("hx1-lthash16-hmac:")
    assert initial["json"]["murmur3:None"]["source"]["version"] == 0
    keyed = initial["json"]["lthash16:pii"]
    assert keyed["secret"] == "pii" and "k3y-for-pii" not in json.dumps(keyed)


def test_every_commit_updates_the_state_to_the_full_recompute(job):
    assert [s["name"] for s in job["steps"]][:4] == [
        "insert, with a duplicate and a NULL row",
        "update, to NULL too",
        "delete, duplicates too",
        "merge: update, delete and insert",
    ]
    for step in job["steps"]:
        for key, fingerprint in step["states"].items():
            assert fingerprint == step["full"][key], step["name"]
            assert step["counts"][key] == step["full"]["rows"], step["name"]
        assert all(step["round_trip"]), step["name"]
    versions = [s["versions"][0] for s in job["steps"]]
    assert versions == list(range(1, len(job["steps"]) + 1))
    # The data changed: every fingerprint differs from the one before, but the OPTIMIZE's.
    fingerprints = [
        job["initial"]["states"]["murmur3:None"],
        *(s["states"]["murmur3:None"] for s in job["steps"]),
    ]
    unchanged = [s["name"] for s, a, b in zip(job["steps"], fingerprints, fingerprints[1:]) if a == b]
    assert unchanged == ["optimize (no data change)"]


def test_one_update_over_every_commit_at_once(job):
    assert job["range"]["from"] == 0 and job["range"]["to"] == len(job["steps"])
    assert job["range"]["state"] == job["range"]["full"]


def test_a_state_of_some_columns_ignores_a_new_column(job):
    assert job["subset"]["columns"] == ["id", "name"]
    assert job["subset"]["state"] == job["subset"]["full"]


def test_a_catalog_name_gives_the_state_of_its_path(job):
    named = job["named"]
    assert (named["state"], named["version"]) == (named["path_state"], named["path_version"])
    assert named["update_version"] == named["path_version"] + 1
    assert named["update"] == named["full"] != named["state"]


@pytest.mark.parametrize(
    ("case", "message"),
    [
        (
            "a column added to a table whose every column is fingerprinted",
            "the table's columns changed at version",
        ),
        ("another column list", "the state is of the columns ['id', 'name'], not ['id']"),
        ("another algorithm", "the state is a murmur3 state, not lthash16"),
        ("a version before the state's", "a state only moves forward"),
        ("a state of no Delta table", "the state is not one of a Delta table"),
        ("a catalog table of another format", "hx_plain is not a Delta table (its provider is parquet)"),
        ("a state of another table", "the state is of another table"),
        ("a table recreated at the same path", "the state is of another table"),
        ("the feed off for a version", "the change data feed is not recorded at version 2"),
        ("a restore", "is a RESTORE"),
        ("column mapping switched on", "changed (its type, name or column mapping)"),
        ("change files removed", "is no longer readable"),
    ],
)
def test_what_breaks_the_equality_is_refused(job, case, message):
    refusal = job["refusals"][case]
    assert message in refusal, refusal
    assert refusal.startswith("delta_fingerprint: ")
    assert any(
        hint in refusal
        for hint in (
            "delta_fingerprint(table) without since",
            "not a Delta table",
            "not one of a Delta table",
        )
    )


def _report(run, status=0):
    assert run.returncode == status, f"exit {run.returncode}\nstdout:\n{run.stdout}\nstderr:\n{run.stderr}"
    return json.loads(run.stdout)


def test_the_command_line_keeps_a_state_file(batch):
    runs = batch["runs"]
    new, update, again, full = (
        _report(runs[n]) for n in ("state new", "state update", "state again", "full")
    )
    assert new["state"]["since_version"] is None and new["state"]["version"] == 1
    assert update["state"]["since_version"] == 1 and update["state"]["version"] == 3
    assert (update["state"]["rows_added"], update["state"]["rows_removed"]) == (3, 9)
    assert update["fingerprint"] == full["fingerprint"] != new["fingerprint"]
    assert update["rows"] == full["rows"] == 34
    assert again["fingerprint"] == full["fingerprint"] and again["state"]["rows_added"] == 0
    saved = json.loads((batch["folder"] / "st.json").read_text())
    assert saved["fingerprint"] == full["fingerprint"] and saved["source"]["version"] == 3
    lthash = (_report(runs[n]) for n in ("lthash new", "lthash update", "lthash full"))
    first, updated, recomputed = lthash
    assert updated["state"]["since_version"] == 0
    assert updated["fingerprint"] == recomputed["fingerprint"] != first["fingerprint"]
    assert updated["fingerprint"].startswith("hx1-lthash16-hmac:")
    assert [p.name for p in batch["folder"].glob(".*hashexpr-tmp*")] == []


@pytest.mark.parametrize(
    ("run", "message"),
    [
        ("another table", "the state is of another table"),
        ("another algorithm", "the state is a murmur3 state, not lthash16"),
        ("not delta", "--state keeps a Delta table's fingerprint up to date from its change data feed"),
        ("with --by", "it cannot go with --by"),
    ],
)
def test_the_command_line_refuses_a_state_it_cannot_update(batch, run, message):
    done = batch["runs"][run]
    assert done.returncode == 2, done.stderr
    assert message in done.stderr
    # The state file is as the last good run left it.
    saved = json.loads((batch["folder"] / "st.json").read_text())
    assert saved["source"]["version"] == 3
