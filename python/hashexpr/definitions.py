"""What a stored hash column holds, recorded in the column's metadata by :func:`~hashexpr.spark.metadata.with_metadata`.

A stored ``_hx_record_key`` is only useful to a later reader (:func:`~hashexpr.spark.diff.diff`,
:func:`~hashexpr.spark.collisions.find_collisions`) that knows it is the hash it would compute itself: the same
function, columns, key options, algorithm and format version. ``with_metadata`` writes that definition into the
column's metadata (Spark keeps field metadata in Parquet, Delta and catalog tables), under the key
``hashexpr``; secrets appear by their conf name only, never their value, and a salt only as a digest. Every other
metadata column carries its field name there, so that readers leave it out of the data whatever it is called.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from hashexpr.options import KeyOptions, salt_digest

#: The default name of each metadata column, by field; ``names`` in :func:`with_metadata` overrides them.
DEFAULT_NAMES: Mapping[str, str] = {
    "record_key": "_hx_record_key",
    "record_hash": "_hx_record_hash",
    "commit_time": "_hx_commit_time",
    "commit_seqno": "_hx_commit_seqno",
    "source_file": "_hx_source_file",
    "format_version": "_hx_format_version",
}

#: The key of hashexpr's entry in a column's metadata.
METADATA_KEY = "hashexpr"


@dataclass(frozen=True)
class Definition:
    """The definition of a stored hash column: ``record_key`` or ``record_hash_by_name`` of ``columns``.

    ``key_options`` are :meth:`~hashexpr.options.KeyOptions.described` (the salt as a digest); empty for a
    record hash.
    """

    function: str
    columns: tuple[str, ...]
    algorithm: str = "murmur3"
    secret: str | None = None
    key_options: Mapping[str, Any] = field(default_factory=dict)
    format_version: int = 1

    def metadata(self, field_name: str) -> dict[str, Any]:
        """The column metadata that records this definition for the metadata field ``field_name``."""
        entry: dict[str, Any] = {
            "field": field_name,
            "function": self.function,
            "columns": list(self.columns),
            "algorithm": self.algorithm,
            "format_version": self.format_version,
        }
        if self.secret is not None:
            entry["secret"] = self.secret
        if self.key_options:
            # Spark's Metadata holds no NULL values: an absent salt is an absent entry.
            entry["key_options"] = {k: v for k, v in self.key_options.items() if v is not None}
        return {METADATA_KEY: entry}

    @classmethod
    def of(cls, metadata: Mapping[str, Any] | None) -> Definition | None:
        """The definition recorded in a column's metadata, or None when the column records none."""
        entry = (metadata or {}).get(METADATA_KEY)
        if not isinstance(entry, Mapping) or "function" not in entry:
            return None
        options = dict(entry.get("key_options") or {})
        if options:
            options = {**KeyOptions().described(), **options}
        return cls(
            function=str(entry["function"]),
            columns=tuple(entry.get("columns") or ()),
            algorithm=str(entry.get("algorithm", "murmur3")),
            secret=entry.get("secret"),
            key_options=options,
            format_version=int(entry.get("format_version", 0)),
        )


def field_metadata(field_name: str) -> dict[str, Any]:
    """The column metadata of a metadata column that holds no hash (commit time, source file, ...)."""
    return {METADATA_KEY: {"field": field_name}}


def is_metadata_column(metadata: Mapping[str, Any] | None) -> bool:
    """Whether a column's metadata marks it as one of hashexpr's metadata columns."""
    entry = (metadata or {}).get(METADATA_KEY)
    return isinstance(entry, Mapping) and "field" in entry


def key_definition(
    columns: Sequence[str], options: KeyOptions, algorithm: str, secret: str | None, version: int
) -> Definition:
    """The definition of a ``record_key`` column over ``columns`` under ``options``."""
    return Definition("record_key", tuple(columns), algorithm, secret, options.described(), version)


def hash_definition(columns: Sequence[str], algorithm: str, secret: str | None, version: int) -> Definition:
    """The definition of a ``record_hash_by_name`` column over ``columns``."""
    return Definition("record_hash_by_name", tuple(columns), algorithm, secret, {}, version)


def differences(recorded: Definition, wanted: Definition) -> list[str]:
    """What differs between a recorded definition and the one a reader would compute, in words.

    Key options are compared as recorded (a salt by its digest); columns of a by-name record hash as a set,
    since their order does not change that hash.
    """
    found = []
    if recorded.format_version != wanted.format_version:
        found.append(f"format version {recorded.format_version}, not {wanted.format_version}")
    if recorded.function != wanted.function:
        found.append(f"{recorded.function}, not {wanted.function}")
    same_columns = (
        set(recorded.columns) == set(wanted.columns)
        if wanted.function == "record_hash_by_name"
        else list(recorded.columns) == list(wanted.columns)
    )
    if not same_columns:
        found.append(f"over the columns {list(recorded.columns)}, not {list(wanted.columns)}")
    if (recorded.algorithm, recorded.secret) != (wanted.algorithm, wanted.secret):
        found.append(f"with {_algorithm(recorded)}, not {_algorithm(wanted)}")
    if wanted.function == "record_key" and dict(recorded.key_options) != dict(wanted.key_options):
        found.append(f"with key options {_options(recorded)}, not {_options(wanted)}")
    return found


def _algorithm(definition: Definition) -> str:
    secret = f" (secret {definition.secret})" if definition.secret else ""
    return f"algorithm={definition.algorithm}{secret}"


def _options(definition: Definition) -> str:
    options = definition.key_options
    items = []
    if options.get("salt_sha256"):
        items.append("a salt")
    items += ["trim"] if options.get("trim") else []
    items += [f"case={options['case']}"] if options.get("case") else []
    items += ["empty_as_null"] if options.get("empty_as_null") else []
    items += [f"null_key={options['null_key']}"] if options.get("null_key", "hash") != "hash" else []
    return repr("; ".join(items)) if items else "none"


def salt_matches(definition: Definition, salt: str) -> bool:
    """Whether ``definition`` was recorded with ``salt`` (compared by digest)."""
    recorded = definition.key_options.get("salt_sha256")
    return recorded == (salt_digest(salt) if salt else None)
