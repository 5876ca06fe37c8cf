"""``hx.delta_fingerprint``: the fingerprint state of a Delta table, computed in full or kept up to date from its
change data feed, and refused wherever the feed is not the whole change."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pyspark.errors import AnalysisException
from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from hashexpr.fingerprints import FingerprintState
from hashexpr.names import column, quote, resolve
from hashexpr.options import FingerprintAlgorithm, check_fingerprint_options
from hashexpr.reference.types import spark_type_string
from hashexpr.spark.delta.log import Commit, Metadata, log_directory, metadata_at, read_commits
from hashexpr.spark.fingerprint import fingerprint_state
from hashexpr.spark.functions import _call

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

_FUNCTION = "delta_fingerprint"

#: The change data feed's row kinds: rows that enter the table, and rows that leave it.
ADDED = ("insert", "update_postimage")
REMOVED = ("delete", "update_preimage")

#: Operations whose commits the change data feed does not describe as the change they make (RESTORE puts
#: back files and metadata of an earlier version; a replace or clone makes a new table in the same log).
_REFUSED_OPERATIONS = ("RESTORE", "REPLACE", "CLONE", "FSCK")

_RECOMPUTE = "compute a new state from the whole table: delta_fingerprint(table) without since"


@dataclass(frozen=True)
class DeltaFingerprint:
    """What :func:`delta_state` did: the new state, and how it was reached."""

    state: FingerprintState
    #: The version of the state it started from (None: the whole table was read).
    since_version: int | None
    #: The rows the change data feed added (inserts, update post-images) and removed (deletes, pre-images).
    added: int
    removed: int


@dataclass(frozen=True)
class _Table:
    """A Delta table named by its path or by its catalog name."""

    path: str | None
    name: str | None

    @classmethod
    def of(cls, table: str) -> _Table:
        if not isinstance(table, str) or not table:
            raise TypeError(f"{_FUNCTION}: table is a path or a catalog table name, got {table!r}")
        if "://" in table or "/" in table or os.sep in table or os.path.isdir(table):
            return cls(table if "://" in table else os.path.abspath(table), None)
        return cls(None, table)

    @property
    def sql(self) -> str:
        if self.path is not None:
            return "delta." + quote(self.path)
        assert self.name is not None
        return self.name

    @property
    def label(self) -> str:
        return self.path if self.path is not None else f"table {self.name}"


def delta_fingerprint(
    table: str,
    since: FingerprintState | None = None,
    *,
    algorithm: FingerprintAlgorithm | None = None,
    secret: str | None = None,
    columns: Sequence[str] | None = None,
    version: int | None = None,
    spark: SparkSession | None = None,
) -> FingerprintState:
    """Return the fingerprint state of a Delta table at its latest version (or ``version``): from every row, or,
    given ``since`` (a state of an earlier version of the same table), from the table's change data feed since
    that version alone.

    The feed lists the rows each commit inserted and deleted, and an update's rows before and after: the new
    state is ``since`` plus the inserted rows and post-images, minus the deleted rows and pre-images, equal byte
    for byte to the state of the whole table (``docs/FINGERPRINTS.md``). It costs what the changes cost, not the
    table. Wherever the feed is not the whole change, the update is refused with a ``ValueError`` saying why,
    never computed: the feed not recorded for every version since (``delta.enableChangeDataFeed``), a changed
    schema of the columns (a type, a rename, a dropped and re-added column, column mapping), another table (its
    id in the Delta log: a table recreated at the same path is another table), a RESTORE, replace or clone, a
    version older than the state's, commits no longer in the log, or change files removed by VACUUM.

    Parameters
    ----------
    table : str
        The table's path (anything with a ``/``, or an existing directory) or its catalog name.
    since : :class:`FingerprintState`, optional
        A state that :func:`delta_fingerprint` made of this table and these columns.
    algorithm, secret : str, optional
        As for :func:`dataset_fingerprint` (default: ``since``'s, else ``'murmur3'``).
    columns : sequence of str, optional
        The columns, taken literally (default: ``since``'s, else every column).
    version : int, optional
        The version to fingerprint (default: the latest).
    spark : :class:`~pyspark.sql.SparkSession`, optional
        The session (default: the active one), with Delta Lake and hashexpr's jar.

    Returns
    -------
    :class:`FingerprintState`
        With ``source`` recording the table's id, location and version; ``to_json()`` keeps it for the next run.

    Examples
    --------
    >>> import hashexpr as hx
    >>> state = hx.delta_fingerprint("/lake/orders")                            # doctest: +SKIP
    >>> spark.sql("DELETE FROM delta.`/lake/orders` WHERE status = 'void'")     # doctest: +SKIP
    >>> state = hx.delta_fingerprint("/lake/orders", since=state)               # doctest: +SKIP
    >>> state.fingerprint == hx.dataset_fingerprint(spark.read.format("delta").load("/lake/orders"))  # doctest: +SKIP
    True
    """
    return delta_state(
        table, since, algorithm=algorithm, secret=secret, columns=columns, version=version, spark=spark
    ).state


def delta_state(
    table: str,
    since: FingerprintState | None = None,
    *,
    algorithm: FingerprintAlgorithm | None = None,
    secret: str | None = None,
    columns: Sequence[str] | None = None,
    version: int | None = None,
    spark: SparkSession | None = None,
) -> DeltaFingerprint:
    """:func:`delta_fingerprint`, with how the state was reached (for the command line's report)."""
    spark = spark or SparkSession.getActiveSession()
    if spark is None:
        raise ValueError(f"{_FUNCTION}: no active Spark session; pass spark= or start one with Delta Lake")
    target = _Table.of(table)
    if since is not None and not isinstance(since, FingerprintState):
        raise TypeError(
            f"{_FUNCTION}: since is a FingerprintState (FingerprintState.from_json(text)), not {type(since).__name__}"
        )
    if version is not None and (not isinstance(version, int) or isinstance(version, bool) or version < 0):
        raise ValueError(f"{_FUNCTION}: version must be 0 or more, not {version!r}")
    algorithm, secret, columns = _options(since, algorithm, secret, columns)
    location, latest = _describe(spark, target)
    chosen = latest if version is None else version
    if chosen > latest:
        raise ValueError(f"{_FUNCTION}: {target.label} has no version {chosen}; its latest is {latest}")
    log = log_directory(location)
    metadata = metadata_at(spark, log, chosen)
    if since is None:
        return DeltaFingerprint(
            _full(spark, target, location, chosen, metadata, algorithm, secret, columns), None, 0, 0
        )
    source = _source_of(since)
    begun = int(source["version"])
    if source.get("table_id") != metadata.table_id:
        raise ValueError(
            f"{_FUNCTION}: the state is of another table (Delta table id {source.get('table_id')}, at "
            f"{source.get('location')}), and {target.label} is table {metadata.table_id} at version {chosen}: a "
            f"state follows one table; {_RECOMPUTE}"
        )
    if begun > chosen:
        raise ValueError(
            f"{_FUNCTION}: the state is of version {begun}, later than version {chosen} of {target.label}: a state "
            f"only moves forward; {_RECOMPUTE}"
        )
    commits = read_commits(spark, log, begun + 1, chosen)
    _check_commits(since, source, commits, metadata, target)
    if begun == chosen:
        return DeltaFingerprint(since, begun, 0, 0)
    added, removed = _feed_states(spark, target, location, since, begun + 1, chosen)
    updated = since.with_source(None) + added
    if removed.count > updated.count:
        raise ValueError(
            f"{_FUNCTION}: the change data feed removes {removed.count:,} rows from a state of {updated.count:,}: the "
            f"state is not that of version {begun} of {target.label}; {_RECOMPUTE}"
        )
    new = (updated - removed).with_source(
        _source(target, location, chosen, metadata, source["all_columns"], since)
    )
    return DeltaFingerprint(new, begun, added.count, removed.count)


def _options(
    since: FingerprintState | None,
    algorithm: str | None,
    secret: str | None,
    columns: Sequence[str] | None,
) -> tuple[str, str | None, list[str] | None]:
    if isinstance(columns, str):
        columns = [columns]
    if since is None:
        chosen, secret = check_fingerprint_options(algorithm or "murmur3", secret, _FUNCTION)
        return chosen, secret, list(columns) if columns is not None else None
    chosen, _ = check_fingerprint_options(algorithm or since.algorithm, None, _FUNCTION)
    if chosen != since.algorithm:
        raise ValueError(
            f"{_FUNCTION}: the state is a {since.algorithm} state, not {chosen}: pass algorithm="
            f"{since.algorithm!r} (or {_RECOMPUTE})"
        )
    if secret is not None and secret != since.secret:
        keyed = f"the secret {since.secret!r}" if since.secret else "no secret"
        raise ValueError(
            f"{_FUNCTION}: the state's rows were hashed with {keyed}, not with the secret {secret!r}"
        )
    if columns is not None and list(columns) != since.column_names:
        raise ValueError(
            f"{_FUNCTION}: the state is of the columns {since.column_names}, not {list(columns)}: a state follows "
            f"one column list; {_RECOMPUTE}"
        )
    return chosen, since.secret, since.column_names


def _describe(spark: SparkSession, target: _Table) -> tuple[str, int]:
    """The table's location and latest version, or a ValueError when it is no Delta table.

    Not ``DESCRIBE DETAIL``: its file count and size make Delta rebuild the whole snapshot's state, a job that
    costs more than a small update's feed. A path is its own location; a catalog table's comes from the
    catalog."""
    location = target.path
    try:
        if target.name is not None:
            rows = spark.sql(f"DESCRIBE TABLE EXTENDED {target.sql}").collect()
            info = {str(row[0]).strip(): row[1] for row in rows}
            provider = str(info.get("Provider") or "").strip().lower()
            if provider != "delta":
                raise ValueError(
                    f"{_FUNCTION}: {target.label} is not a Delta table (its provider is {provider or 'unknown'})"
                )
            location = str(info.get("Location") or "").strip() or None
        history = spark.sql(f"DESCRIBE HISTORY {target.sql} LIMIT 1").select("version").first()
    except AnalysisException as error:
        raise ValueError(
            f"{_FUNCTION}: {target.label} is not a Delta table Spark can read: {error}"
        ) from None
    if location is None or history is None:
        raise ValueError(f"{_FUNCTION}: {target.label} is not a Delta table")
    return location, int(history["version"])


def _read(spark: SparkSession, target: _Table, location: str, options: dict[str, str]) -> DataFrame:
    reader = spark.read.format("delta").options(**options)
    return reader.table(target.name) if target.name is not None else reader.load(location)


def _full(
    spark: SparkSession,
    target: _Table,
    location: str,
    version: int,
    metadata: Metadata,
    algorithm: str,
    secret: str | None,
    columns: list[str] | None,
) -> FingerprintState:
    df = _read(spark, target, location, {"versionAsOf": str(version)})
    names = df.columns if columns is None else resolve(df, columns, _FUNCTION, target.label)
    if len(set(names)) != len(names):
        raise ValueError(f"{_FUNCTION}: columns names a column twice: {names}")
    state = fingerprint_state(df, *map(column, names), algorithm=algorithm, secret=secret)  # type: ignore[arg-type]
    return state.with_source(_source(target, location, version, metadata, columns is None, state))


def _source(
    target: _Table,
    location: str,
    version: int,
    metadata: Metadata,
    all_columns: bool,
    state: FingerprintState,
) -> dict[str, Any]:
    return {
        "format": "delta",
        "table_id": metadata.table_id,
        "location": location,
        "table": target.name,
        "version": version,
        "change_data_feed": metadata.change_data_feed,
        "all_columns": all_columns,
        "fields": metadata.fields(state.column_names),
    }


def _source_of(since: FingerprintState) -> dict[str, Any]:
    source = since.source
    keys = ("table_id", "version", "change_data_feed", "all_columns", "fields")
    if not source or source.get("format") != "delta" or not all(k in source for k in keys):
        raise ValueError(
            f"{_FUNCTION}: the state is not one of a Delta table (delta_fingerprint makes those); {_RECOMPUTE}"
        )
    return dict(source)


def _check_commits(
    since: FingerprintState,
    source: dict[str, Any],
    commits: list[Commit],
    final: Metadata,
    target: _Table,
) -> None:
    """Refuse the update unless the change data feed of ``commits`` is the whole change of the state's rows."""
    feed = bool(source["change_data_feed"])
    for commit in commits:
        at = f"version {commit.version} of {target.label}"
        operation = (commit.operation or "").upper()
        if any(word in operation for word in _REFUSED_OPERATIONS):
            raise ValueError(
                f"{_FUNCTION}: {at} is a {commit.operation}, whose change data feed does not give the rows it "
                f"changes; {_RECOMPUTE}"
            )
        if commit.metadata is not None:
            _check_metadata(commit.metadata, since, source, at)
            feed = commit.metadata.change_data_feed
        if not feed:
            raise ValueError(
                f"{_FUNCTION}: the change data feed is not recorded at {at} (delta.enableChangeDataFeed is not "
                f"true there), so the rows it changed are not known; {_RECOMPUTE}, and keep "
                "delta.enableChangeDataFeed=true on the table"
            )
    # What the log says is in effect at the last version must be what the state recorded, changed only by the
    # commits above: anything else means the state's record does not describe this table.
    _check_metadata(final, since, source, f"version {commits[-1].version if commits else source['version']}")


def _check_metadata(metadata: Metadata, since: FingerprintState, source: dict[str, Any], at: str) -> None:
    names = since.column_names
    if metadata.table_id != source["table_id"]:
        raise ValueError(
            f"{_FUNCTION}: {at} belongs to another table (Delta table id {metadata.table_id}, not "
            f"{source['table_id']}): the table was replaced; {_RECOMPUTE}"
        )
    if source["all_columns"] and metadata.column_names != names:
        raise ValueError(
            f"{_FUNCTION}: the table's columns changed at {at} ({metadata.column_names}, not {names}), so the "
            f"fingerprint of every column is no longer that of the state's columns; {_RECOMPUTE}"
        )
    fields = metadata.fields(names)
    for name in names:
        if fields.get(name) != source["fields"].get(name):
            what = "is gone" if name not in fields else "changed (its type, name or column mapping)"
            raise ValueError(f"{_FUNCTION}: the column {name!r} {what} at {at}; {_RECOMPUTE}")


def _feed_states(
    spark: SparkSession, target: _Table, location: str, since: FingerprintState, first: int, last: int
) -> tuple[FingerprintState, FingerprintState]:
    """The states of the rows the feed of versions ``first`` to ``last`` adds and removes, in one job."""
    options = {"readChangeFeed": "true", "startingVersion": str(first), "endingVersion": str(last)}
    names = since.column_names
    hashing = (
        ""
        if since.algorithm == "murmur3"
        else "algorithm=lthash16" + (f"; secret={since.secret}" if since.secret else "")
    )
    try:
        feed = _read(spark, target, location, options)
        chosen = feed.select(*map(column, names), F.col("_change_type"))
        columns = [(f.name, spark_type_string(f.dataType)) for f in chosen.schema.fields[:-1]]
        state = _call("dataset_fingerprint_state", hashing, list(map(quote, names))).alias("state")
        rows = chosen.groupBy("_change_type").agg(state).collect()
    except Exception as error:  # noqa: BLE001 (Spark's errors differ by line and mode; the message decides)
        raise _feed_error(error, first, last, target) from None
    if tuple(columns) != since.columns:
        raise ValueError(
            f"{_FUNCTION}: the change data feed's columns {columns} are not the state's {list(since.columns)}; "
            f"{_RECOMPUTE}"
        )
    added, removed = since.empty(), since.empty()
    for row in rows:
        kind, part = row["_change_type"], row["state"]
        if kind not in ADDED + REMOVED:
            raise ValueError(
                f"{_FUNCTION}: the change data feed has rows of an unknown kind {kind!r}; {_RECOMPUTE}"
            )
        state = FingerprintState.from_parts(
            part["algorithm"],
            columns,
            part["schema"],
            part["count"],
            part["sum"],
            part["lanes"],
            part["secret"],
        )
        if state.fingerprint != part["fingerprint"]:
            raise ValueError(f"{_FUNCTION}: the feed's columns do not give the schema digest Spark computed")
        if kind in ADDED:
            added = added + state
        else:
            removed = removed + state
    return added, removed


def _feed_error(error: Exception, first: int, last: int, target: _Table) -> Exception:
    text = str(error)
    if "DELTA_MISSING_CHANGE_DATA" in text:
        return ValueError(
            f"{_FUNCTION}: Delta has no change data for some version from {first} to {last} of {target.label} "
            f"(the feed was not enabled); {_RECOMPUTE}"
        )
    if "FILE_NOT_EXIST" in text or "FileNotFoundException" in text or "does not exist" in text:
        return ValueError(
            f"{_FUNCTION}: the change data of versions {first} to {last} of {target.label} is no longer readable: "
            f"a file it needs was removed (VACUUM removes change files older than its retention); {_RECOMPUTE}"
        )
    return error
