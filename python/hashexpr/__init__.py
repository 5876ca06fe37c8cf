"""hashexpr: deterministic record hashing for Apache Spark.

>>> import hashexpr as hx
>>> spark = hx.configure(SparkSession.builder).getOrCreate()      # doctest: +SKIP
>>> df.select("*", hx.record_hash("*").alias("row_hash"))         # doctest: +SKIP
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

from hashexpr.collisions import (
    collision_exceptions,
    collision_probability,
    find_collisions,
    resolve_collisions,
)
from hashexpr.delta import delta_fingerprint
from hashexpr.diff import diff, diff_plan, summarize
from hashexpr.errors import HashExprNotInstalledError
from hashexpr.fingerprint import dataset_fingerprint, fingerprint_state, fingerprints_by
from hashexpr.fingerprint_state import FingerprintState
from hashexpr.functions import normalize_key, record_hash, record_key
from hashexpr.jar import EXTENSION_CLASS, jar_path
from hashexpr.metadata import with_metadata
from hashexpr.reference import FORMAT_VERSION
from hashexpr.session import configure
from hashexpr.spark_arrow import engine

try:
    __version__ = version("hashexpr")
except PackageNotFoundError:  # a source tree on sys.path, not installed
    __version__ = "0+unknown"

__all__ = [
    "EXTENSION_CLASS",
    "FORMAT_VERSION",
    "FingerprintState",
    "HashExprNotInstalledError",
    "collision_exceptions",
    "collision_probability",
    "configure",
    "dataset_fingerprint",
    "delta_fingerprint",
    "diff",
    "diff_plan",
    "engine",
    "find_collisions",
    "fingerprint_state",
    "fingerprints_by",
    "jar_path",
    "normalize_key",
    "record_hash",
    "record_key",
    "resolve_collisions",
    "summarize",
    "with_metadata",
]
