"""hashexpr: deterministic record hashing for Apache Spark and beyond.

>>> import hashexpr as hx
>>> spark = hx.configure(SparkSession.builder).getOrCreate()      # doctest: +SKIP
>>> df.select("*", hx.record_hash("*").alias("row_hash"))         # doctest: +SKIP

Importing ``hashexpr`` imports no PySpark: the Spark functions below come from :mod:`hashexpr.spark` when they
are first used. Where no PySpark is installed they are still there, and calling one says what to install
(``pip install "hashexpr[spark]"``); the rest (:mod:`hashexpr.arrow`, :mod:`hashexpr.reference`,
:mod:`hashexpr.sql`, :mod:`hashexpr.reconcile`, the command line on files and databases) needs none.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

from hashexpr.errors import HashExprNotInstalledError, PySparkMissingError
from hashexpr.fingerprints import FingerprintState
from hashexpr.jar import EXTENSION_CLASS, jar_path
from hashexpr.reference.tags import FORMAT_VERSION

#: The Spark functions at the top of the package, and the module of :mod:`hashexpr.spark` each comes from.
_SPARK: dict[str, str] = {
    "collision_exceptions": "collisions",
    "collision_probability": "collisions",
    "find_collisions": "collisions",
    "resolve_collisions": "collisions",
    "configure": "session",
    "dataset_fingerprint": "fingerprint",
    "delta_fingerprint": "delta",
    "diff": "diff",
    "diff_plan": "diff",
    "engine": "arrow_path",
    "fingerprint_state": "fingerprint",
    "fingerprints_by": "fingerprint",
    "normalize_key": "functions",
    "record_hash": "functions",
    "record_key": "functions",
    "summarize": "diff",
    "with_metadata": "metadata",
}


def __getattr__(name: str) -> Any:
    """A Spark function, imported with :mod:`hashexpr.spark` when first asked for (PEP 562); ``__version__``,
    read from the installed distribution when first asked for (importlib.metadata costs a twentieth of a
    second)."""
    if name == "__version__":
        from importlib.metadata import PackageNotFoundError, version

        try:
            found = version("hashexpr")
        except PackageNotFoundError:  # a source tree on sys.path, not installed
            found = "0+unknown"
        globals()[name] = found
        return found
    module = _SPARK.get(name)
    if module is None:
        raise AttributeError(f"module 'hashexpr' has no attribute {name!r}")
    try:
        value = getattr(importlib.import_module(f"hashexpr.spark.{module}"), name)
    except PySparkMissingError:
        value = _needs_spark(name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    # The public names and the modules imported so far; not this module's own imports.
    own = {"annotations", "importlib", "Any", "Callable"}
    return sorted((set(globals()) - own) | set(_SPARK))


def _needs_spark(name: str) -> Callable[..., Any]:
    """A stand-in for the Spark function ``name`` where no PySpark is installed: calling it says what to install."""

    def missing(*args: Any, **kwargs: Any) -> Any:
        raise PySparkMissingError(f"hx.{name}") from None

    missing.__name__ = missing.__qualname__ = name
    missing.__doc__ = f"hx.{name} needs PySpark, which is not installed here."
    return missing


__all__ = [
    "EXTENSION_CLASS",
    "FORMAT_VERSION",
    "FingerprintState",
    "HashExprNotInstalledError",
    "PySparkMissingError",
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
