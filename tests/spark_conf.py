"""Session settings for a block of a test: set on entry, restored (or unset) on exit."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping

#: The optimizer rules that evaluate constant expressions and local relations on the driver; excluded, a
#: projection runs in the execution mode under test.
FOLDING_RULES = ",".join(
    "org.apache.spark.sql.catalyst.optimizer." + rule
    for rule in ("ConstantFolding", "ConvertToLocalRelation", "FoldablePropagation")
)

#: Execution modes: interpreted (as Spark evaluates local rows, and as Spark Connect's client-side data runs),
#: and generated code with constant folding and local-relation conversion off, so that the projection runs
#: as generated code.
EXECUTION_MODES = {
    "interpreted": {"spark.sql.codegen.factoryMode": "NO_CODEGEN", "spark.sql.codegen.wholeStage": "false"},
    "codegen": {
        "spark.sql.codegen.factoryMode": "CODEGEN_ONLY",
        "spark.sql.codegen.wholeStage": "true",
        "spark.sql.optimizer.excludedRules": FOLDING_RULES,
    },
}


#: The HMAC secret a Spark Connect server holds (conftest.py's ``connect_with_jar``): clients name it, never hold it.
CONNECT_SECRET = ("connect", "server-side-key-3c81")

#: HMAC secrets by name, given to the test session with its configuration (as ``spark.hashexpr.secret.<name>``):
#: hashexpr refuses secrets set on a running session, which Spark would write unredacted into the event log.
TEST_SECRETS = {
    "vectors_short": "k3y",
    "vectors_long": "a key longer than the 64-byte block of SHA-256, so HMAC hashes it first. 0123",
    "pii": "k3y-for-pii-\u00fcnits",
    "api": "s3cret",
    "diff": "d1ff",
    "rot1": "first-key",
    "rot2": "second-key",
    "cli.pii": "cli-secret-7d3e9a",
}

#: The Spark Connect servers' settings (conftest.py's ``connect_with_jar``, test_connect.py's server without the
#: jar): UTC, the server's HMAC secret, and the test session's pii key for the Arrow path's results.
CONNECT_SERVER_CONF = {
    "spark.sql.session.timeZone": "UTC",
    f"spark.hashexpr.secret.{CONNECT_SECRET[0]}": CONNECT_SECRET[1],
    "spark.hashexpr.secret.pii": TEST_SECRETS["pii"],
}


@contextlib.contextmanager
def spark_conf(spark, confs: Mapping[str, str]) -> Iterator[None]:
    """Run the block with ``confs`` set on ``spark``, restoring the previous values afterwards."""
    previous = {key: spark.conf.get(key, None) for key in confs}
    try:
        for key, value in confs.items():
            spark.conf.set(key, value)
        yield
    finally:
        for key, value in previous.items():
            if value is None:
                spark.conf.unset(key)
            else:
                spark.conf.set(key, value)
