"""A diff's arguments checked and resolved into a :class:`~hashexpr.diff_spec.Spec`, before any job runs."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from hashexpr.diff_spec import (
    DEFAULT_BUCKETS,
    MAX_BUCKETS,
    OUTPUT_COLUMNS,
    KeySpec,
    P,
    Side,
    Spec,
    check_compatible,
    default_columns,
    projected,
    raw_key_type,
    resolve_on_both,
)
from hashexpr.names import Resolver, case_sensitive
from hashexpr.options import algorithm_of
from hashexpr.spark.diff import hash_columns
from hashexpr.spark.diff import stored as hstored
from hashexpr.spark.functions import _require

if TYPE_CHECKING:
    from pyspark.sql import DataFrame


def checked(
    old: DataFrame,
    new: DataFrame,
    key: KeySpec,
    columns: Sequence[str] | None,
    buckets: int | None,
    old_hashes: hstored.HashesSpec = False,
    new_hashes: hstored.HashesSpec = False,
    algorithm: object = "murmur3",
    secret: object = None,
) -> Spec:
    """The diff of ``old`` and ``new`` as :class:`~hashexpr.diff_spec.Spec`: every name resolved on both sides,
    the schemas compared, the stored hashes found and checked."""
    algorithm, secret = algorithm_of(algorithm, secret, "diff")
    # Checked once here: with the jar, diff's queries call hashexpr's functions in SQL text; without it, the
    # Arrow path computes the hashes as columns (hashexpr.spark.diff.hash_columns).
    arrow = hash_columns.uses_arrow(old)
    if not arrow:
        _require("record_hash")
    keys = [key] if isinstance(key, str) else list(key)
    if not keys:
        raise ValueError("diff needs at least one key column")
    if buckets is None:
        buckets = DEFAULT_BUCKETS
    if isinstance(buckets, bool) or not isinstance(buckets, int) or not 1 <= buckets <= MAX_BUCKETS:
        raise ValueError(f"diff: buckets must be an int from 1 to {MAX_BUCKETS:,} (2^20), got {buckets!r}")

    @functools.cache
    def exact() -> bool:
        return case_sensitive(old.sparkSession)

    sides, names = [], []
    for df, name, hashes in ((old, "old", old_hashes), (new, "new", new_hashes)):
        everything = Resolver(df.columns, exact)
        found = hstored.stored_names(Side(df, name, df.columns, everything, everything), hashes)
        # Metadata columns are not data: neither compared nor part of the schema check.
        metadata = hstored.metadata_columns(df) | set(found or ())
        data = [c for c in df.columns if c not in metadata]
        sides.append(Side(df, name, data, Resolver(data, exact), everything))
        names.append(found)

    key_pairs = resolve_on_both(sides, keys, "key")
    clash = [o for o, _ in key_pairs if o.lower() in OUTPUT_COLUMNS or o.lower().startswith(P)]
    if clash:
        raise ValueError(
            f"diff: key columns may not be named {clash}: diff's output has columns {list(OUTPUT_COLUMNS)}"
        )
    check_compatible(key_pairs, "key", sides)
    if columns is None:
        column_pairs = default_columns(key_pairs, sides)
    else:
        column_pairs = resolve_on_both(
            sides, [columns] if isinstance(columns, str) else list(columns), "columns"
        )
        overlap = [o for o, _ in column_pairs if o in {k for k, _ in key_pairs}]
        if overlap:
            raise ValueError(f"diff: columns may not include key columns: {overlap}")
        check_compatible(column_pairs, "compared", sides)

    pairs = key_pairs + column_pairs
    # Every column goes by one name; a side whose stored hashes recorded its own spelling keeps it, since a
    # by-name hash hashes the name.
    if names[0] is not None and names[1] is not None and any(o != n for o, n in pairs):
        differ = [f"{o!r}/{n!r}" for o, n in pairs if o != n]
        raise ValueError(
            f"diff: old and new spell columns differently ({', '.join(differ)}), and both lend stored by-name "
            "hashes, which hash the names as spelt: pass new_hashes=False to hash new's values"
        )
    canonical = 1 if names[1] is not None and names[0] is None else 0
    own = [{pair[canonical]: pair[i] for pair in pairs} for i in (0, 1)]
    frames = [
        projected(
            s.df,
            [(pair[canonical], pair[i]) for pair in pairs] + [(n, n) for n in names[i] or ()],
        )
        for i, s in enumerate(sides)
    ]
    old_types, new_types = sides[0].types, sides[1].types
    spec = Spec(
        frames[0],
        frames[1],
        tuple(p[canonical] for p in key_pairs),
        tuple(p[canonical] for p in column_pairs),
        buckets,
        algorithm=algorithm,
        secret=secret,
        raw_keys=all(raw_key_type(old_types[o], new_types[n]) for o, n in key_pairs),
        arrow=arrow,
    )
    if not any(names):
        return hash_columns.attached(spec) if arrow else spec
    checked_sides = {i: hstored.check(spec, i, found, own[i]) for i, found in enumerate(names) if found}
    if len({s.with_key for s in checked_sides.values()}) > 1:
        raise ValueError(
            "diff: the stored record hashes of old and new cover different columns (one includes the key "
            "columns, the other does not); pass old_hashes=False or new_hashes=False to hash that side again"
        )
    spec = replace(spec, stored=(checked_sides.get(0), checked_sides.get(1)))
    return hash_columns.attached(spec) if arrow else spec
