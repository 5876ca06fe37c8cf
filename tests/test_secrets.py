"""An HMAC secret never shows where Spark shows a query: plans, generated code, ``SET``, error messages, the
UI's environment page and SQL tab (through its REST API), and the event log (docs/SECURITY.md, "Secrets").

The application runs in its own process (tests/secret_job.py) with the event log and the UI on; one secret comes
with its configuration, the other is set on the session while it runs, and refused.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql.types import StringType
from servers import free_port, spark_env

from hashexpr import reference

# Processes of its own (a Spark of its own): make check leaves it out.
pytestmark = pytest.mark.slow

PYTHON_SOURCES = Path(__file__).resolve().parents[1] / "python"
SECRETS = ("startup-secret-4b1f0c77", "runtime-secret-9e2d51aa")


@pytest.fixture(scope="module")
def job(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], Path, str]:
    """Run tests/secret_job.py; return its report, its output folder and its console output."""
    out = tmp_path_factory.mktemp("secret-job") / "run"
    env = spark_env({"PYTHONPATH": str(PYTHON_SOURCES), "HASHEXPR_TEST_SECRETS": ",".join(SECRETS)})
    run = subprocess.run(
        [sys.executable, str(Path(__file__).with_name("secret_job.py")), "--out", str(out), "--port",
         str(free_port())],
        env=env, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr[-4000:]
    return json.loads((out / "report.json").read_text(encoding="utf-8")), out, run.stdout + run.stderr


def test_the_secrets_key_the_hashes(job):
    """The configured secret was read: the hashes are HMAC-SHA-256 under it (the checks below are not vacuous)."""
    report, _, _ = job
    assert len(report["rows"]) == 20
    for email, key, row_hash in report["rows"]:
        assert (
            key
            == reference.record_key([email], [StringType()], algorithm="hmac-sha256", key=SECRETS[0]).hex()
        )
        assert (
            row_hash
            == reference.record_hash([email], [StringType()], algorithm="hmac-sha256", key=SECRETS[0]).hex()
        )


def test_plans_set_and_errors_name_the_secret_only(job):
    report, _, _ = job
    assert "secret=startup" in report["explain"] and "secret=startup" in report["codegen"]
    assert ["spark.hashexpr.secret.runtime", "*********(redacted)"] in report["set_one"]
    assert "spark.hashexpr.secret.absent" in report["missing_secret_error"]
    assert "the secret 'runtime' is set on the session" in report["session_secret_error"]
    text = json.dumps({k: v for k, v in report.items() if k != "rest"})
    assert not [s for s in SECRETS if s in text]


def test_the_ui_shows_neither_secret(job):
    report, _, _ = job
    environment = json.dumps(report["rest"]["environment"])
    assert "spark.hashexpr.secret.startup" in environment  # listed, with its value redacted
    sql = report["rest"]["sql?details=true&planDescription=true"]
    assert any("secret=startup" in json.dumps(execution) for execution in sql)
    text = json.dumps(report["rest"])
    assert not [s for s in SECRETS if s in text]


def test_the_event_log_and_the_console_hold_neither_secret(job):
    _, out, console = job
    logs = [p for p in (out / "events").rglob("*") if p.is_file()]
    assert logs
    text = "".join(p.read_text(encoding="utf-8", errors="replace") for p in logs)
    assert "SparkListenerSQLExecutionStart" in text and "spark.hashexpr.secret.startup" in text
    assert not [s for s in SECRETS if s in text + console]
