"""A Delta table read without Spark: its Parquet files at one version, through delta-rs (the ``deltalake``
package), hashed by the Rust engine as Spark reads them.

The version is the table's newest when the comparison opens it (or the one asked for), so every pass reads the
same files. The files are read as :mod:`hashexpr.arrow.parquet` reads Parquet for Spark (INT96 timestamps in
microseconds, every year Spark holds), with the partition values of the table's log, typed by its schema. A
FLOAT column comes as a double, which format v1 hashes alike. What delta-rs cannot read at all (column mapping,
deletion vectors) is refused, naming the feature, rather than read without it.
"""

from __future__ import annotations

import os
from typing import Any

from hashexpr.errors import require
from hashexpr.reconcile.arrow import FUNCTION, ParquetSource


class DeltaSource(ParquetSource):
    """A Delta table's directory (see :func:`hashexpr.reconcile.delta`)."""

    system = "Delta"

    def __init__(self, path: Any, version: int | None = None) -> None:
        require("deltalake", "a Delta side without Spark", "delta")
        location = os.fspath(path)
        if not os.path.isdir(os.path.join(location, "_delta_log")):
            raise FileNotFoundError(f"{FUNCTION}: {location} is no Delta table (it has no _delta_log)")
        if version is not None and (not isinstance(version, int) or version < 0):
            raise ValueError(f"{FUNCTION}: a Delta version is 0 or more, got {version!r}")
        super().__init__(location)
        self._version = version
        self._read_version: int | None = None

    @property
    def label(self) -> str:
        version = self._read_version if self._read_version is not None else self._version
        return f"Delta table {self.path}" + (f" (version {version})" if version is not None else "")

    def _open(self, statement_timeout: float | None) -> None:
        from deltalake import DeltaTable
        from deltalake.exceptions import DeltaError

        from hashexpr.arrow.parquet import from_dataset

        try:
            table = DeltaTable(self.path, version=self._version)
            dataset = table.to_pyarrow_dataset()
        except DeltaError as error:
            raise ValueError(
                f"{FUNCTION}: {self.path}: {str(error).splitlines()[0].rstrip('.')}; compare it through Spark (rc.spark, or "
                "--engine spark on the command line)"
            ) from None
        metadata = table.metadata()
        mapping = metadata.configuration.get("delta.columnMapping.mode")
        if mapping not in (None, "none"):
            # A table that turned column mapping on under an older protocol passes delta-rs' reader check, and
            # it would read the files' physical names as the columns.
            raise ValueError(
                f"{FUNCTION}: {self.path}: the table maps its columns to other names in its files "
                f"(delta.columnMapping.mode = {mapping}), which delta-rs does not read; compare it through Spark "
                "(rc.spark, or --engine spark on the command line)"
            )
        self._read_version = table.version()
        # The log names each version's files: a file of it that changes or goes (VACUUM) fails the pass.
        self._stamps = {}
        self._found = from_dataset(dataset, FUNCTION, table_partitions=list(metadata.partition_columns))
        self._rows = dataset.count_rows()

    def _check_unchanged(self) -> None:
        """A version's files never change; one removed by a VACUUM fails the read itself."""
