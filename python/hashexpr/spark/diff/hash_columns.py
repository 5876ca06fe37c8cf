"""The hashes of a diff without hashexpr's jar: columns of each side, computed by the Arrow path.

Without the jar no SQL text can call ``record_key`` or ``record_hash``. Each side is read instead with the hashes
the diff compares appended as columns (:func:`~hashexpr.spark.arrow_path.frames.with_hashes`: Arrow UDF columns on
PySpark 4.1 and later, which Spark computes only in the queries that read them and after the filters it pushes
below them; ``mapInArrow`` on 3.5 and 4.0), and the SQL of every pass names those columns where the jar's path
calls a function:

- ``HK``, the record key of the key columns, where keys are matched by their hash, or a stored key is verified;
- ``HR``, the row hash: ``record_hash`` of the compared columns, or ``record_hash_by_name`` (with the key columns
  where the stored hashes cover them) when a side lends stored hashes, or to verify a side's stored row hash;
- in the values join, each compared column's hash of the rows joined (``HC`` and its position), for
  ``changed_columns``.

Every column hashed is checked in the driver first: a type the Arrow path cannot hash as the jar does is refused,
with an error naming ``diff``, the column and its type.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from hashexpr.diff_spec import HC, HK, HR, Spec, Stored
from hashexpr.names import quote
from hashexpr.spark.arrow_path.engine import engine

# The Arrow path's modules load pyarrow and numpy, which ``import hashexpr`` does not: they are imported where used.
if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from hashexpr.spark.arrow_path.frames import HashSpec

FUNCTION = "diff"
# The row hash over the key columns too, next to HR, in the sample of a side whose stored row hash records no
# definition: which of the two it is tells whether the stored hash covers the key columns.
HR_WITH_KEY = f"{HR}_with_key"


def uses_arrow(df: DataFrame) -> bool:
    """Whether a diff of ``df`` hashes through the Arrow path: its session has no jar, or
    ``HASHEXPR_ENGINE=arrow`` (read at each call)."""
    return engine(df.sparkSession) == "arrow"


def _key(spec: Spec, name: str = HK) -> HashSpec:
    from hashexpr.spark.arrow_path.frames import HashSpec

    return HashSpec(name, spec.key, "key", spec.algorithm, spec.secret)


def _row(spec: Spec, name: str, with_key: bool, by_name: bool) -> list[HashSpec]:
    """The row hash of the compared columns (and of the key columns ``with_key``), if there is any column."""
    from hashexpr.spark.arrow_path.frames import HashSpec

    hashed = (spec.key if with_key else ()) + spec.columns
    kind = "by_name" if by_name else "positional"
    return [HashSpec(name, hashed, kind, spec.algorithm, spec.secret)] if hashed else []


def _read(spec: Spec, stored: Stored | None, df: DataFrame) -> DataFrame:
    """The columns of a side that a diff reads (with its ``stored`` hashes), and no other: ``mapInArrow`` sends
    every column it is given."""
    names = spec.key + spec.columns + ((stored.record_key, stored.record_hash) if stored else ())
    return df.select(*map(quote, names))


def _wanted(spec: Spec, i: int) -> list[HashSpec]:
    """Side ``i``'s hash columns: ``HK`` where keys are matched by their hash (or a stored key is verified),
    ``HR`` where the side's row hash is computed (or a stored one verified)."""
    stored = spec.stored[i]
    wanted = []
    if (stored is None and not spec.buckets_by_key) or (stored is not None and stored.verify_key):
        wanted.append(_key(spec))
    if stored is None or stored.verify_hash:
        wanted += _row(spec, HR, spec.by_name and spec.with_key, spec.by_name)
    return wanted


def attached(spec: Spec) -> Spec:
    """``spec`` with each side's hash columns appended (one Arrow pass per side, wherever a query reads it)."""
    from hashexpr.spark.arrow_path.frames import with_hashes

    frames = []
    for i in (0, 1):
        wanted, side = _wanted(spec, i), spec.side(i)
        frames.append(with_hashes(_read(spec, spec.stored[i], side), wanted, FUNCTION) if wanted else side)
    return replace(spec, old=frames[0], new=frames[1])


def carried(spec: Spec, i: int) -> tuple[str, ...]:
    """The names of the hash columns :func:`attached` appended to side ``i``."""
    return tuple(h.name for h in _wanted(spec, i))


def key_hash_sql(spec: Spec) -> str:
    """SQL of the record key of the key columns, on a side with its hash columns."""
    return quote(HK)


def row_hash_sql(spec: Spec) -> str:
    """SQL of the row hash, on a side with its hash columns: ``X''`` when nothing is hashed."""
    hashed = (spec.key if spec.by_name and spec.with_key else ()) + spec.columns
    return quote(HR) if hashed else "X''"


def sampled(spec: Spec, stored: Stored, rows: DataFrame) -> tuple[DataFrame, str, dict[bool, str]]:
    """The first ``rows`` of a side whose ``stored`` hashes record no definition, with what they are checked
    against: the record key, and ``record_hash_by_name`` with and without the key columns. Returns the rows
    and the SQL of the key hash and of the row hash with (True) and without (False) the key columns."""
    from hashexpr.spark.arrow_path.frames import with_hashes

    wanted = [_key(spec), *_row(spec, HR_WITH_KEY, True, True), *_row(spec, HR, False, True)]
    hashed = with_hashes(_read(spec, stored, rows), wanted, FUNCTION)
    return hashed, quote(HK), {True: quote(HR_WITH_KEY), False: quote(HR) if spec.columns else "X''"}


def check_columns(spec: Spec) -> None:
    """Refuse, before any job, a compared column whose per-column hash (``changed_columns``) the Arrow path
    cannot compute as the jar does."""
    from hashexpr.spark.arrow_path.checks import check_schema

    for i in (0, 1):
        check_schema(FUNCTION, spec.side(i).schema, spec.columns)


def column_hashes(spec: Spec, rows: DataFrame) -> DataFrame:
    """``rows`` (a side's rows to join, the compared columns by their names) with each compared column's
    record hash, ``HC0``, ``HC1``, ... in the order of ``spec.columns``."""
    from hashexpr.spark.arrow_path.frames import HashSpec, with_hashes

    wanted = [
        HashSpec(f"{HC}{j}", (c,), "positional", spec.algorithm, spec.secret)
        for j, c in enumerate(spec.columns)
    ]
    return with_hashes(rows, wanted, FUNCTION) if wanted else rows


def column_hashes_sql(spec: Spec) -> str:
    """SQL of the array of the compared columns' hashes on rows from :func:`column_hashes`."""
    return f"array({', '.join(quote(f'{HC}{j}') for j in range(len(spec.columns)))})"
