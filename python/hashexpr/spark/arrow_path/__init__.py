"""hashexpr's Python API on a Spark without hashexpr's jar: the Rust engine inside PySpark's Arrow routes.

Databricks serverless, Unity Catalog standard access mode and other Spark Connect services cannot load a jar, but
they install wheels, and hashexpr's wheel carries an engine that computes the same bytes over Arrow data. Where the
session has no hashexpr functions, the Python API runs that engine in the executors instead:

- column functions (:func:`~hashexpr.record_hash`, :func:`~hashexpr.record_key`, :func:`~hashexpr.normalize_key`)
  become Arrow UDFs (``pyspark.sql.functions.arrow_udf``, PySpark 4.1 and later), ordinary columns; before 4.1,
  plain Python UDFs that hash row by row (:mod:`~hashexpr.spark.arrow_path.rows`);
- DataFrame-level work (:func:`~hashexpr.dataset_fingerprint`, :func:`~hashexpr.fingerprint_state`,
  :func:`~hashexpr.fingerprints_by`) runs in ``DataFrame.mapInArrow``, on every supported line.

:func:`engine` says which a session uses; ``HASHEXPR_ENGINE=jar|arrow`` forces one (``docs/PYTHON.md``).
"""

from __future__ import annotations

from hashexpr.spark.arrow_path.engine import engine

__all__ = ["engine"]
