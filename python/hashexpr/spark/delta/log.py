"""What incremental fingerprints read from a Delta table's log (the ``_delta_log`` directory), through Spark.

A fingerprint is kept up to date from the change data feed only where the feed is the whole change: for that,
every commit since the state's version is read for its operation and its ``metaData`` action (the table's id,
schema and configuration, in full wherever they change), and the metadata in effect at a version comes from
Delta's checksum file of that version (``N.crc``), or else from the commits and checkpoints up to it.
"""

from __future__ import annotations

import json
import posixpath
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pyspark.errors import AnalysisException
from pyspark.sql import functions as F

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

_COMMIT = re.compile(r"(\d{20})\.json")
# Classic (N.checkpoint.parquet), multi-part (N.checkpoint.i.n.parquet) and V2 (N.checkpoint.<uuid>.json|parquet).
_CHECKPOINT = re.compile(r"(\d{20})\.checkpoint(\.[^/]+)?\.(parquet|json)")


@dataclass(frozen=True)
class Metadata:
    """A ``metaData`` action: the table's id, its schema (as Delta's JSON) and its configuration."""

    table_id: str
    schema: Mapping[str, Any]
    configuration: Mapping[str, str]

    @classmethod
    def of(cls, action: Mapping[str, Any]) -> Metadata:
        return cls(
            table_id=str(action["id"]),
            schema=json.loads(action["schemaString"]),
            configuration=dict(action.get("configuration") or {}),
        )

    @property
    def change_data_feed(self) -> bool:
        """Whether commits record their change data (``delta.enableChangeDataFeed``)."""
        return str(self.configuration.get("delta.enableChangeDataFeed", "false")).strip().lower() == "true"

    @property
    def column_names(self) -> list[str]:
        """The top-level columns, in order."""
        return [field["name"] for field in self.schema["fields"]]

    def fields(self, names: Sequence[str]) -> dict[str, Any]:
        """What decides the values read from each column of ``names`` (absent when the table has none such):
        its name, its type and, under column mapping, its physical name and id, at every depth. Nullability,
        comments and other metadata do not change a value and are left out."""
        found = {field["name"]: field for field in self.schema["fields"]}
        return {name: _field_spec(found[name]) for name in names if name in found}


@dataclass(frozen=True)
class Commit:
    """One commit of the log: its version, operation and ``metaData`` action, if it has one."""

    version: int
    operation: str | None
    metadata: Metadata | None


def log_directory(location: str) -> str:
    """The ``_delta_log`` directory of the table at ``location`` (a path or a URI)."""
    return posixpath.join(location.rstrip("/"), "_delta_log")


def commit_path(log: str, version: int) -> str:
    return posixpath.join(log, f"{version:020d}.json")


def read_commits(spark: SparkSession, log: str, first: int, last: int) -> list[Commit]:
    """The commits ``first`` to ``last`` (inclusive), in order.

    Raises
    ------
    ValueError
        When one of them is no longer in the log (Delta removes commits older than
        ``delta.logRetentionDuration`` once a later checkpoint holds the table's state).
    """
    if first > last:
        return []
    paths = [commit_path(log, v) for v in range(first, last + 1)]
    try:
        lines = _action_lines(spark, paths, ("commitInfo", "metaData"))
    except AnalysisException as error:
        if "PATH_NOT_FOUND" not in str(error) and "does not exist" not in str(error).lower():
            raise
        raise ValueError(
            f"the Delta log no longer holds every commit from version {first} to {last} (Delta removes commits "
            "older than delta.logRetentionDuration, 30 days by default)"
        ) from None
    found: dict[int, dict[str, Any]] = {v: {} for v in range(first, last + 1)}
    for version, action in lines:
        found[version].update(action)
    return [
        Commit(
            version=version,
            operation=(actions.get("commitInfo") or {}).get("operation"),
            metadata=Metadata.of(actions["metaData"]) if "metaData" in actions else None,
        )
        for version, actions in sorted(found.items())
    ]


def metadata_at(spark: SparkSession, log: str, version: int) -> Metadata:
    """The table's metadata in effect at ``version``: from Delta's checksum file of that version, or else the
    last ``metaData`` action of the commits and checkpoints up to it."""
    try:
        row = spark.read.text(posixpath.join(log, f"{version:020d}.crc")).first()
    except AnalysisException:
        row = None
    if row is not None:
        checksum = json.loads(row[0])
        if checksum.get("metadata"):
            return Metadata.of(checksum["metadata"])
    best: tuple[int, Mapping[str, Any]] | None = None
    try:
        for found, action in _action_lines(spark, [posixpath.join(log, "*.json")], ("metaData",)):
            if found <= version and (best is None or found > best[0]):
                best = (found, action["metaData"])
    except AnalysisException:
        pass
    try:
        checkpoints = (
            spark.read.parquet(posixpath.join(log, "*.checkpoint*.parquet"))
            .where(F.col("metaData").isNotNull())
            .select(F.to_json("metaData").alias("m"), F.col("_metadata.file_path").alias("f"))
            .collect()
        )
    except AnalysisException:
        checkpoints = []
    for row in checkpoints:
        match = _CHECKPOINT.fullmatch(posixpath.basename(row["f"]))
        found = int(match.group(1)) if match else None
        if found is not None and found <= version and (best is None or found > best[0]):
            best = (found, json.loads(row["m"]))
    if best is None:
        raise ValueError(f"the Delta log holds no metadata of version {version}")
    return Metadata.of(best[1])


def _action_lines(
    spark: SparkSession, paths: Sequence[str], kinds: Sequence[str]
) -> list[tuple[int, dict[str, Any]]]:
    """The actions of ``kinds`` in the log files ``paths`` (commits, and V2 checkpoints' JSON), with the version
    each file is of; a file of another name (a compacted log file) is skipped."""
    condition = None
    for kind in kinds:
        test = F.col("value").contains(f'"{kind}"')
        condition = test if condition is None else condition | test
    rows = (
        spark.read.text(list(paths))
        .where(condition)
        .select("value", F.col("_metadata.file_path").alias("file"))
        .collect()
    )
    found = []
    for row in rows:
        name = posixpath.basename(row["file"])
        match = _COMMIT.fullmatch(name) or _CHECKPOINT.fullmatch(name)
        if match is None:
            continue
        action = json.loads(row["value"])
        # One action a line; the kind is its only key (the text may also appear inside another action).
        if len(action) == 1 and next(iter(action)) in kinds:
            found.append((int(match.group(1)), action))
    return found


def _field_spec(field: Mapping[str, Any]) -> dict[str, Any]:
    spec: dict[str, Any] = {"name": field["name"], "type": _type_spec(field["type"])}
    mapping = {k: v for k, v in (field.get("metadata") or {}).items() if k.startswith("delta.columnMapping.")}
    if mapping:
        spec["mapping"] = mapping
    return spec


def _type_spec(kind: Any) -> Any:
    if not isinstance(kind, Mapping):
        return kind
    if kind.get("type") == "struct":
        return {"type": "struct", "fields": [_field_spec(f) for f in kind["fields"]]}
    if kind.get("type") == "array":
        return {"type": "array", "elementType": _type_spec(kind["elementType"])}
    if kind.get("type") == "map":
        return {
            "type": "map",
            "keyType": _type_spec(kind["keyType"]),
            "valueType": _type_spec(kind["valueType"]),
        }
    return dict(kind)
