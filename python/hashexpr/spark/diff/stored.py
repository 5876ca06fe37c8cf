"""The stored hashes a side lends to a diff: found, checked against their recorded definition, or verified.

A side written by :func:`~hashexpr.spark.metadata.with_metadata` carries each row's record key and record hash. diff
reads them instead of hashing the side again only when they are the hashes it would compute: ``record_key``
of the key columns without key options, and ``record_hash_by_name`` of the compared columns (with or without
the key columns), under diff's algorithm and format version. ``with_metadata`` records that definition in each
column's metadata (:mod:`hashexpr.definitions`), and a definition that differs is refused before any job runs.
A column that records none (written by an older hashexpr, or by other code) is checked row by row: every row's
hash is computed again in every query that reads it, and the first row whose stored hash differs fails the
query with the fix in its message. A sample of the first rows is checked first, so that a side written over
other columns fails at once and says so.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING

from pyspark.sql.types import BinaryType

from hashexpr.definitions import (
    DEFAULT_NAMES,
    Definition,
    differences,
    hash_definition,
    is_metadata_column,
    key_definition,
)
from hashexpr.diff_spec import Side, Spec, Stored
from hashexpr.jar_sql import record_hash_sql, record_key_sql, string
from hashexpr.names import quote
from hashexpr.options import KeyOptions
from hashexpr.reference import FORMAT_VERSION
from hashexpr.spark.diff import hash_columns

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

HashesSpec = bool | Sequence[str] | None

# Rows of a side whose stored hashes record no definition that are hashed again before the diff runs, so that
# hashes written over other columns fail at once, with a message that says how they differ.
CHECKED_ROWS = 100

# What every refusal to use stored hashes starts with, also when a query raises it from a row.
REFUSAL = "diff cannot use the stored hashes of"


def metadata_columns(df: DataFrame) -> set[str]:
    """The columns of ``df`` that are hashexpr metadata, not data: marked so in their metadata by
    ``with_metadata``, or named as its default names are (snapshots written before the marks)."""
    defaults = {n.lower() for n in DEFAULT_NAMES.values()}
    return {f.name for f in df.schema.fields if is_metadata_column(f.metadata) or f.name.lower() in defaults}


def stored_names(side: Side, hashes: HashesSpec) -> tuple[str, str] | None:
    """The (record key, record hash) columns to read on one side, or None to hash the side's values.

    By default (``None``) and with ``True``, the columns ``with_metadata`` marked as its record key and record
    hash, whatever their names, or else the columns of its default names.
    """
    if hashes is False:
        return None
    if hashes is None or hashes is True:
        names = tuple(
            _marked(side.df, field) or side.resolver.find(DEFAULT_NAMES[field]) for field in _FIELDS
        )
        if all(names):
            return (names[0], names[1])  # type: ignore[return-value]
        if hashes is None:
            return None
        lacking = [DEFAULT_NAMES[f] for f, n in zip(_FIELDS, names) if n is None]
        raise ValueError(
            f"diff: {side.name}_hashes=True, but {side.name} lacks {lacking}: write it with "
            f"hashexpr.with_metadata, or name the columns as {side.name}_hashes=('<record key column>', "
            "'<record hash column>')"
        )
    if isinstance(hashes, str) or not isinstance(hashes, Sequence) or len(hashes) != 2:
        raise ValueError(
            f"diff: {side.name}_hashes must be True, False, None or a pair of column names "
            f"(record key, record hash), got {hashes!r}"
        )
    found = [side.resolver.find(n) if isinstance(n, str) else None for n in hashes]
    missing = [n for n, f in zip(hashes, found) if f is None]
    if missing:
        hints = "".join(side.resolver.hint(n) for n in missing if isinstance(n, str))
        raise ValueError(
            f"diff: {side.name}_hashes names columns that {side.name} does not have: {missing}{hints}"
        )
    return (found[0], found[1])  # type: ignore[return-value]


_FIELDS = ("record_key", "record_hash")


def _marked(df: DataFrame, field: str) -> str | None:
    """The one column ``with_metadata`` marked as its ``field`` column, if there is exactly one."""
    marked = [
        f.name for f in df.schema.fields if (f.metadata or {}).get("hashexpr", {}).get("field") == field
    ]
    return marked[0] if len(marked) == 1 else None


def check(spec: Spec, i: int, names: tuple[str, str], own: dict[str, str]) -> Stored:
    """Check that side ``i``'s stored hashes are those diff compares; ``own`` maps canonical names to the
    side's spelling (the names its recorded definitions use).

    A recorded definition is compared with diff's; a column without one is sampled now and verified row by
    row later (:class:`~hashexpr.diff_spec.Stored`).
    """
    side, (key_col, hash_col) = ("old", "new")[i], names
    df = spec.side(i)
    fields = {f.name: f for f in df.schema.fields}
    bad = [n for n in names if not isinstance(fields[n].dataType, BinaryType)]
    if bad:
        raise ValueError(f"diff: {side}'s stored hash columns must be BINARY: {bad}")
    key_names = [own[k] for k in spec.key]
    data_names = [own[c] for c in spec.columns]
    wanted_key = key_definition(key_names, KeyOptions(), spec.algorithm, spec.secret, FORMAT_VERSION)
    wanted_hash = {
        with_key: hash_definition(
            (key_names if with_key else []) + data_names, spec.algorithm, spec.secret, FORMAT_VERSION
        )
        for with_key in (True, False)
    }
    problems, recorded = [], []
    recorded_key = Definition.of(fields[key_col].metadata)
    if recorded_key is not None:
        found = differences(recorded_key, wanted_key)
        if found:
            problems.append(f"{quote(key_col)} is {recorded_key.function} {', '.join(found)}")
            recorded.append(recorded_key)
    recorded_hash = Definition.of(fields[hash_col].metadata)
    with_key = True
    if recorded_hash is not None:
        found_with = differences(recorded_hash, wanted_hash[True])
        found_without = differences(recorded_hash, wanted_hash[False])
        with_key = not found_with
        if found_with and found_without:
            closer = found_with if len(recorded_hash.columns) > len(data_names) else found_without
            problems.append(
                f"{quote(hash_col)} is {recorded_hash.function} {', '.join(closer)} (the compared columns, with "
                "or without the key columns)"
            )
            recorded.append(recorded_hash)
    if problems:
        raise ValueError(_refusal(side, problems, _fix(spec, recorded, key_names, data_names)))
    stored = Stored(
        key_col, hash_col, with_key, verify_key=recorded_key is None, verify_hash=recorded_hash is None
    )
    return _sampled(spec, i, stored) if stored.verify_key or stored.verify_hash else stored


def _fix(
    spec: Spec, recorded: Sequence[Definition], key_names: Sequence[str], data_names: Sequence[str]
) -> str:
    """What makes diff compute the hashes that ``recorded`` describe, where an argument can."""
    fixes = []
    algorithms = {(d.algorithm, d.secret) for d in recorded} - {(spec.algorithm, spec.secret)}
    if len(algorithms) == 1:
        algorithm, secret = algorithms.pop()
        fixes.append(f"pass algorithm={algorithm!r}" + (f", secret={secret!r}" if secret else ""))
    covered = (set(data_names), set(key_names) | set(data_names))
    if any(d.function == "record_hash_by_name" and set(d.columns) not in covered for d in recorded):
        fixes.append("pass columns= naming the columns the stored hash covers")
    return (
        "; or ".join(fixes) if fixes else "write the side again with with_metadata(..., key) as diff keys it"
    )


def _refusal(side: str, problems: Sequence[str], fix: str) -> str:
    return f"{REFUSAL} {side}: {'; '.join(problems)}; {fix}, or pass {side}_hashes=False to hash its values instead"


def _sampled(spec: Spec, i: int, stored: Stored) -> Stored:
    """Hash the first rows of a side again: refuse at once when they differ, and tell from them whether the
    stored row hash covers the key columns."""
    side = ("old", "new")[i]
    null_key = null_key_sql(spec)
    stored_key, stored_hash = quote(stored.record_key), quote(stored.record_hash)
    rows = spec.side(i).limit(CHECKED_ROWS)
    if spec.arrow:
        rows, key_hash, by_name = hash_columns.sampled(spec, stored, rows)
    else:
        key_hash = key_hash_sql(spec)
        by_name = {with_key: row_hash_sql(spec, with_key) for with_key in (True, False)}
    row = rows.selectExpr(
        "count(1) AS n",
        f"count_if({stored_hash} IS NULL OR (NOT {null_key} AND {stored_key} IS NULL)) AS n_null",
        f"count_if(NOT {null_key} AND NOT ({stored_key} <=> {key_hash})) AS k",
        *(f"count_if(NOT ({stored_hash} <=> {h})) AS h{int(w)}" for w, h in by_name.items()),
    ).first()
    problems = []
    if row["n_null"]:
        problems.append(f"{row['n_null']} of the first {row['n']} rows have no stored hash (NULL)")
    elif stored.verify_key and row["k"]:
        problems.append(
            f"{quote(stored.record_key)} is not record_key({', '.join(spec.key)}) in {row['k']} of the first "
            f"{row['n']} rows (written with other key columns, key options such as salt, trim or case, or an "
            f"algorithm other than {spec.algorithm}?)"
        )
    with_key = stored.with_key if not stored.verify_hash else row["h1"] == 0
    if stored.verify_hash and not with_key and row["h0"] and not row["n_null"]:
        problems.append(
            f"{quote(stored.record_hash)} is not record_hash_by_name of the compared columns "
            f"{list(spec.columns)}, with or without the key columns, in {min(row['h0'], row['h1'])} of the first "
            f"{row['n']} rows (written over other columns, e.g. with hash_columns=, or in another mode?)"
        )
    if problems:
        raise ValueError(_refusal(side, problems, "pass columns= naming the columns it covers"))
    return Stored(stored.record_key, stored.record_hash, with_key, stored.verify_key, stored.verify_hash)


def null_key_sql(spec: Spec) -> str:
    """SQL: true when a key part is NULL (a NULL nested inside a key value does not count)."""
    return "(" + " OR ".join(f"{quote(k)} IS NULL" for k in spec.key) + ")"


def key_hash_sql(spec: Spec) -> str:
    """SQL: ``record_key`` of the key columns, as diff computes it and ``with_metadata`` stores it (without the
    jar, the column the Arrow path computed it into)."""
    if spec.arrow:
        return hash_columns.key_hash_sql(spec)
    return record_key_sql([quote(k) for k in spec.key], **spec.hashing)


def row_hash_sql(spec: Spec, with_key: bool) -> str:
    """SQL: ``record_hash_by_name`` of the compared columns, and of the key columns ``with_key`` (without the
    jar, the column the Arrow path computed it into: a side's stored row hashes cover the key columns as the
    diff's do)."""
    if spec.arrow:
        return hash_columns.row_hash_sql(spec)
    hashed = (spec.key if with_key else ()) + spec.columns
    return record_hash_sql([quote(c) for c in hashed], by_name=True, **spec.hashing) if hashed else "X''"


def read_sql(spec: Spec, i: int, stored: Stored) -> tuple[str, str]:
    """SQL of side ``i``'s key hash (NULL when a key part is NULL) and row hash, read from its stored
    columns: every row's checked against a hash computed again where the column records no definition."""
    side = ("old", "new")[i]
    unrecorded = "in a row (the column records no definition, so every row is checked)"
    # A stored hash must be there for every row: a NULL would compare as a change that is not one.
    missing = _refused(side, f"a row has a NULL {stored.record_key} or {stored.record_hash}", "fill it in")
    key_hash = _checked(
        quote(stored.record_key),
        key_hash_sql(spec) if stored.verify_key else None,
        missing,
        _refused(
            side,
            f"{quote(stored.record_key)} is not record_key({', '.join(spec.key)}) {unrecorded}",
            "write it again with with_metadata",
        ),
    )
    covered = " and the key columns" if stored.with_key else ""
    row_hash = _checked(
        quote(stored.record_hash),
        row_hash_sql(spec, stored.with_key) if stored.verify_hash else None,
        missing,
        _refused(
            side,
            f"{quote(stored.record_hash)} is not record_hash_by_name of the compared columns "
            f"{list(spec.columns)}{covered} {unrecorded}",
            "pass columns= naming the columns it covers",
        ),
    )
    return f"CASE WHEN {null_key_sql(spec)} THEN CAST(NULL AS BINARY) ELSE {key_hash} END", row_hash


def _refused(side: str, problem: str, fix: str) -> str:
    """SQL that fails the query with the refusal of ``problem``."""
    return f"CAST(raise_error({string(_refusal(side, [problem], fix))}) AS BINARY)"


def _checked(stored: str, computed: str | None, missing: str, mismatch: str) -> str:
    """SQL of a stored hash: an error when NULL, and when ``computed`` is given and differs."""
    if computed is None:
        return f"coalesce({stored}, {missing})"
    return f"CASE WHEN {stored} IS NULL THEN {missing} WHEN {stored} = {computed} THEN {stored} ELSE {mismatch} END"


@contextmanager
def refusals() -> Iterator[None]:
    """Turn a stored-hash refusal that a query raised from a row into the ValueError diff raises for it."""
    try:
        yield
    except ValueError:
        raise
    except Exception as exc:
        found = re.search(re.escape(REFUSAL) + r"[^\n]*", str(exc))
        if found is None:
            raise
        message = re.sub(r"\s*SQLSTATE: \w+\s*$", "", found.group(0)).rstrip(". ")
        raise ValueError(message) from None
