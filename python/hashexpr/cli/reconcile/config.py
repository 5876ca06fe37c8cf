"""``hashexpr reconcile --config FILE.toml``: many pairs of tables in one file.

.. code-block:: toml

    [defaults]                                    # optional: what every entry gets unless it says otherwise
    source = "postgresql://app@db:5432/shop"      # a database (a URL without ?table=, duckdb:PATH) or a directory
    target = "mysql://app:${MYSQL_PASSWORD}@replica:3306/shop"
    jobs = 4                                      # pairs compared at once (default 2)

    [[tables]]
    table = "orders"                              # the same table on both sides
    exclude = ["updated_at"]

    [[tables]]
    name = "customers"                            # how the summary names it (default: the source's table)
    source_table = "public.customers"
    target_table = "customers"
    key = ["id"]                                  # default: the source's primary key, else the target's

    [[tables]]
    source = "lake/products"                      # a whole side, as on the command line
    target = "mysql://app@replica:3306/shop?table=products"

A ``${NAME}`` in a string is the environment variable ``NAME`` (a password kept out of the file); an unset one
is an error. A table of a database default goes into its URL (``?table=``); of a directory, below it.
"""

from __future__ import annotations

import os
import re
import sys
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from hashexpr.cli.reconcile.sides import Side, parse_side

#: Pairs compared at once, unless the file says.
DEFAULT_JOBS = 2

_ENTRY_KEYS = {"name", "table", "source", "target", "source_table", "target_table", "key", "columns", "exclude", "values"}
_DEFAULT_KEYS = {"source", "target", "jobs", "key", "values"}
#: What a table name keeps unquoted in a URL: its dots and quotes.
_TABLE_SAFE = ".`\""
_VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


@dataclass(frozen=True)
class Entry:
    """One pair of tables."""

    name: str
    source: Side
    target: Side
    key: list[str] | None
    columns: list[str] | None
    exclude: list[str] | None
    values: bool


@dataclass(frozen=True)
class Config:
    entries: list[Entry]
    jobs: int


def load(path: str) -> Config:
    """Read and check a configuration file; a ValueError names the file, the entry and the problem."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - Python 3.10, whose standard library reads no TOML
        try:
            import tomli as tomllib
        except ModuleNotFoundError:
            raise ValueError("--config needs Python 3.11 or later, or the tomli package (pip install tomli)") from None

    try:
        with open(path, "rb") as f:
            data = tomllib.load(f)
    except FileNotFoundError:
        raise FileNotFoundError(f"--config: no such file: {path}") from None
    except tomllib.TOMLDecodeError as error:
        raise ValueError(f"--config {path}: not TOML: {error}") from None
    unknown = sorted(set(data) - {"defaults", "tables"})
    if unknown:
        raise ValueError(f"--config {path}: unknown section {unknown[0]!r}; the sections are [defaults] and [[tables]]")
    defaults = data.get("defaults", {})
    _known(defaults, _DEFAULT_KEYS, f"--config {path}: [defaults]")
    tables = data.get("tables")
    if not isinstance(tables, list) or not tables:
        raise ValueError(f"--config {path}: no [[tables]] entry; add one per pair of tables")
    jobs = defaults.get("jobs", DEFAULT_JOBS)
    if not isinstance(jobs, int) or isinstance(jobs, bool) or jobs < 1:
        raise ValueError(f"--config {path}: [defaults] jobs must be a whole number of 1 or more, got {jobs!r}")
    entries, names = [], set()
    for i, raw in enumerate(tables, 1):
        where = f"--config {path}: [[tables]] entry {i}"
        if not isinstance(raw, dict):
            raise ValueError(f"{where}: must be a table of settings")  # noqa: TRY004 - a file's content, as ValueError
        _known(raw, _ENTRY_KEYS, where)
        entry = _entry(raw, defaults, where)
        if entry.name in names:
            raise ValueError(f"{where}: another entry is named {entry.name!r}; give each a name of its own")
        names.add(entry.name)
        entries.append(entry)
    return Config(entries, jobs)


def _known(section: dict[str, Any], allowed: set[str], where: str) -> None:
    unknown = sorted(set(section) - allowed)
    if unknown:
        raise ValueError(f"{where}: unknown setting {unknown[0]!r}; the settings are {', '.join(sorted(allowed))}")


def _entry(raw: dict[str, Any], defaults: dict[str, Any], where: str) -> Entry:
    table = _text(raw.get("table"), "table", where)
    sides = []
    for which in ("source", "target"):
        own = _text(raw.get(which), which, where)
        named = _text(raw.get(f"{which}_table"), f"{which}_table", where) or table
        if own is not None:
            if named is not None:
                raise ValueError(f"{where}: give {which} with its table in it, or {which}_table/table, not both")
            text = _expanded(own, where)
        else:
            base = _text(defaults.get(which), which, f"{where} ([defaults])")
            if base is None or named is None:
                raise ValueError(
                    f"{where}: no {which}: give {which} = \"...\", or table (or {which}_table) with a {which} in "
                    "[defaults]"
                )
            # Each expanded once, before the table is quoted into the URL: a value is never read for ${...}.
            text = _placed(_expanded(base, where), _expanded(named, where))
        sides.append(parse_side(text, f"{where} {which}"))
    name = _text(raw.get("name"), "name", where) or table or sides[0].table or os.path.basename(
        sides[0].location.rstrip("/")
    )
    values = raw.get("values", defaults.get("values", False))
    if not isinstance(values, bool):
        raise ValueError(f"{where}: values must be true or false, got {values!r}")  # noqa: TRY004 - the file's error
    return Entry(
        name,
        sides[0],
        sides[1],
        _names(raw.get("key", defaults.get("key")), "key", where),
        _names(raw.get("columns"), "columns", where),
        _names(raw.get("exclude"), "exclude", where),
        values,
    )


def _text(value: Any, what: str, where: str) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"{where}: {what} must be a non-empty string, got {value!r}")
    return value


def _names(value: Any, what: str, where: str) -> list[str] | None:
    if value is None:
        return None
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not value or not all(isinstance(v, str) and v for v in value):
        raise ValueError(f"{where}: {what} must be a column name or a list of them, got {value!r}")
    return list(value)


def _placed(base: str, table: str) -> str:
    """A table in a database default (its URL's ``table`` option) or below a directory default."""
    if base.startswith(("postgresql://", "postgres://", "mysql://", "mariadb://", "duckdb:")):
        joiner = "&" if "?" in base else "?"
        return f"{base}{joiner}table={quote(table, safe=_TABLE_SAFE)}"
    return os.path.join(base, table)


def _expanded(text: str, where: str) -> str:
    def variable(match: re.Match[str]) -> str:
        value = os.environ.get(match.group(1))
        if value is None:
            raise ValueError(f"{where}: the environment variable {match.group(1)} is not set")
        return value

    return _VARIABLE.sub(variable, text)
