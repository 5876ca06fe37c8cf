"""hashexpr on Spark: everything that needs PySpark, behind the names ``hashexpr`` gives at its top.

The column functions (:mod:`.functions`), fingerprints (:mod:`.fingerprint`, :mod:`.delta`), the diff
(:mod:`.diff`), collisions (:mod:`.collisions`), metadata columns (:mod:`.metadata`), the session set-up
(:mod:`.session`), the Python API on a Spark without the jar (:mod:`.arrow_path`) and PySpark's types
(:mod:`.types`). The rest of the package (the format's reference, the Arrow engine, the SQL dialects, reconcile,
the command line on files and databases) imports none of this, and runs where no PySpark is installed.

PySpark comes from wherever the interpreter finds it: the ``pyspark`` distribution (``pip install
"hashexpr[spark]"``), Spark Connect's client (``pyspark-client``), ``databricks-connect``, or a runtime's own files
on the path (Databricks, EMR, Glue, Dataproc, Fabric).
"""

from __future__ import annotations

from hashexpr.errors import PySparkMissingError

try:
    import pyspark  # noqa: F401 - the check that PySpark is there at all
except ModuleNotFoundError as error:
    if error.name not in ("pyspark", "py4j"):
        raise
    raise PySparkMissingError("hashexpr's Spark API") from None
