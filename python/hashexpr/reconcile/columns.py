"""Which columns a comparison keys on and compares: names paired exactly first, types checked to hash alike.

A :class:`Plan` pairs each column of the source with the target's column of the same name: exactly, or else
the one column of the target, not already paired exactly, whose name is equal ignoring case (and only when no
other column of the source is equal to it ignoring case). Two paired columns are compared when their Spark
types hash alike (format v1: integers of any width, FLOAT and DOUBLE, decimals of any precision and scale, and
arrays, maps and structs of such); any other pair never compares equal and is refused, as a type no system can
reproduce is. A column that one side alone has is a difference of the schemas (:attr:`Plan.only`), unless the
caller left it out. ``Plan.schema`` says how each column was compared, or why it was not.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from hashexpr.names import Resolver
from hashexpr.reconcile.catalog import SideColumn
from hashexpr.sql.types import type_name
from hashexpr.types import (
    ArrayType,
    BinaryType,
    BooleanType,
    ByteType,
    DataType,
    DateType,
    DecimalType,
    DoubleType,
    FloatType,
    IntegerType,
    LongType,
    MapType,
    NullType,
    ShortType,
    StringType,
    StructType,
    TimestampNTZType,
    TimestampType,
    VarcharType,
)

#: The two sides, as results and messages name them.
SIDES = ("source", "target")

#: The roles of :class:`ColumnReport`: a column paired on both sides is a ``key`` or ``compared`` column, or was
#: ``left out`` by the caller; a column of one side alone is ``only in source`` or ``only in target``.
KEY, COMPARED, LEFT_OUT, ONLY_IN_SOURCE, ONLY_IN_TARGET = (
    "key",
    "compared",
    "left out",
    "only in source",
    "only in target",
)

#: How many columns, and how many reasons, a refusal lists before it counts the rest.
_LISTED = 6


@dataclass(frozen=True)
class Words:
    """How messages name the caller's options: the Python API's ``key=``, or the command line's ``--key``."""

    key: str = "key="
    columns: str = "columns="
    exclude: str = "exclude="
    #: What the caller's messages start with: the function's name, or nothing where the caller says who it is.
    prefix: str = "compare: "
    #: A key given, for messages that show how.
    key_example: str = "key='id'"
    timeout: str = "statement_timeout"


#: The command line's words.
CLI_WORDS = Words("--key", "--columns", "--exclude", "", "--key id", "--statement-timeout")


def hash_kind(dtype: DataType) -> Any:
    """What a type's values hash as (format v1, section 4): two columns compare when their kinds are equal."""
    if isinstance(dtype, (ByteType, ShortType, IntegerType, LongType)):
        return "integral"
    if isinstance(dtype, (FloatType, DoubleType)):
        return "floating"
    if isinstance(dtype, DecimalType):
        return "decimal"
    if isinstance(dtype, (StringType, VarcharType)):
        collation = getattr(dtype, "collation", "UTF8_BINARY")
        return "string" if collation == "UTF8_BINARY" else ("string", collation)
    if isinstance(dtype, ArrayType):
        return ("array", hash_kind(dtype.elementType))
    if isinstance(dtype, MapType):
        return ("map", hash_kind(dtype.keyType), hash_kind(dtype.valueType))
    if isinstance(dtype, StructType):
        # Field names do not count (format v1, section 4.7): struct<a:int> and struct<b:int> hash alike.
        return ("struct", tuple(hash_kind(f.dataType) for f in dtype.fields))
    for atomic, kind in (
        (BinaryType, "binary"),
        (BooleanType, "boolean"),
        (DateType, "date"),
        (TimestampType, "timestamp"),
        (TimestampNTZType, "timestamp_ntz"),
        (NullType, "null"),
    ):
        if isinstance(dtype, atomic):
            return kind
    return ("other", type_name(dtype))


def hash_alike(a: DataType, b: DataType) -> bool:
    """Whether values of ``a`` and of ``b`` hash alike when equal. A column of NULLs alone (VOID) hashes as NULLs
    of any type."""
    if isinstance(a, NullType) or isinstance(b, NullType):
        return True
    return hash_kind(a) == hash_kind(b)


@dataclass(frozen=True)
class Pair:
    """A column on both sides: ``name`` is the source's spelling (the output's)."""

    name: str
    source: SideColumn
    target: SideColumn


@dataclass(frozen=True)
class ColumnReport:
    """How one column was compared: ``role`` is ``key``, ``compared``, ``left out`` (by the caller), ``only in
    source`` or ``only in target`` (a difference of the schemas); ``reason`` says why where it was not compared."""

    name: str
    role: str
    source_type: str | None
    target_type: str | None
    source_spark_type: str | None
    target_spark_type: str | None
    reason: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if v is not None}


@dataclass(frozen=True)
class SidePlan:
    """What one side hashes: its own column names with the Spark types they hash as."""

    key: tuple[tuple[str, DataType], ...]
    compared: tuple[tuple[str, DataType], ...]

    @property
    def hashed(self) -> tuple[tuple[str, DataType], ...]:
        """The row hash's columns: the key's, then the compared ones (two rows under one key with swapped values
        differ)."""
        return self.key + self.compared


@dataclass(frozen=True)
class Plan:
    key: tuple[Pair, ...]
    compared: tuple[Pair, ...]
    schema: tuple[ColumnReport, ...]

    def side(self, which: str) -> SidePlan:
        def of(pairs: Sequence[Pair]) -> tuple[tuple[str, DataType], ...]:
            return tuple((getattr(p, which).name, getattr(p, which).dtype) for p in pairs)

        return SidePlan(of(self.key), of(self.compared))

    @property
    def only(self) -> tuple[ColumnReport, ...]:
        """The columns one side alone has, which the caller did not leave out: differences of the schemas."""
        return tuple(c for c in self.schema if c.role in (ONLY_IN_SOURCE, ONLY_IN_TARGET))


def pair_names(source: Sequence[str], target: Sequence[str]) -> tuple[dict[str, str], dict[str, str]]:
    """Pair the columns of two sides by name: exactly first, then ignoring case where exactly one column of each
    side, among those not paired exactly, has the name. Returns the pairs (source name to target name) and, for
    each column left unpaired that equals another ignoring case, why it was not paired.

    Examples
    --------
    >>> pair_names(["id", "Val", "val"], ["id", "val"])
    ({'id': 'id', 'val': 'val'}, {'Val': "the target's 'val' is paired with the source's 'val'"})
    >>> pair_names(["ID", "Amount"], ["id", "amount"])[0]
    {'ID': 'id', 'Amount': 'amount'}
    >>> pair_names(["A", "a"], ["X", "x"])[0]
    {}
    """
    target_set = set(target)
    pairs = {name: name for name in source if name in target_set}
    paired_target = set(pairs.values())
    free_source = [n for n in source if n not in pairs]
    free_target = [n for n in target if n not in paired_target]
    by_lower: dict[str, tuple[list[str], list[str]]] = {}
    for n in free_source:
        by_lower.setdefault(n.lower(), ([], []))[0].append(n)
    for n in free_target:
        by_lower.setdefault(n.lower(), ([], []))[1].append(n)
    exact_by_lower: dict[str, list[str]] = {}
    for n in pairs:
        exact_by_lower.setdefault(n.lower(), []).append(n)
    why: dict[str, str] = {}
    for lower, (ours, theirs) in by_lower.items():
        if len(ours) == 1 and len(theirs) == 1:
            pairs[ours[0]] = theirs[0]
            continue
        for side, names, others in (("source", ours, theirs), ("target", theirs, ours)):
            other_side = "target" if side == "source" else "source"
            for n in names:
                if len(others) > 1 or len(names) > 1:
                    why[n] = (
                        f"it equals {_names([*names, *others], n)} ignoring case, and which is its pair is ambiguous"
                    )
                elif lower in exact_by_lower:
                    taken = exact_by_lower[lower][0]
                    why[n] = f"the {other_side}'s {taken!r} is paired with the {side}'s {taken!r}"
    return pairs, why


def _names(names: Sequence[str], but: str) -> str:
    others = [repr(n) for n in names if n != but]
    return others[0] if len(others) == 1 else ", ".join(others[:-1]) + f" and {others[-1]}"


def plan(
    source: Sequence[SideColumn],
    target: Sequence[SideColumn],
    key: Sequence[str],
    columns: Sequence[str] | None,
    labels: tuple[str, str],
    exclude: Sequence[str] | None = None,
    words: Words = Words(),
) -> Plan:
    """Pair the key columns and the compared columns of both sides; a :class:`ValueError` for anything that
    cannot be compared exactly, naming every such column at once."""
    if isinstance(key, str):
        key = [key]
    if not key:
        raise ValueError(f"{words.prefix}{words.key} names no column; give the key column(s), e.g. {words.key_example}")
    if isinstance(columns, str):
        columns = [columns]
    if isinstance(exclude, str):
        exclude = [exclude]
    if columns is not None and exclude:
        raise ValueError(f"{words.prefix}give {words.columns} or {words.exclude}, not both")
    sides = {"source": list(source), "target": list(target)}
    by_name = {s: {c.name: c for c in cols} for s, cols in sides.items()}
    resolvers = {s: Resolver([c.name for c in cols], lambda: False) for s, cols in sides.items()}
    pairs, unpaired_why = pair_names([c.name for c in source], [c.name for c in target])
    label = dict(zip(SIDES, labels))

    def own(name: str, side: str, what: str) -> SideColumn | None:
        """The column of ``side`` that a name the caller gave means: itself, else the one equal ignoring case."""
        if not isinstance(name, str) or not name:
            raise ValueError(f"{words.prefix}{what} names must be non-empty strings, got {name!r}")
        found = resolvers[side].matches(name)
        if len(found) > 1:
            raise ValueError(f"{words.prefix}{what} {name!r} matches several columns of the {side}, {found}: rename them")
        return by_name[side][found[0]] if found else None

    def require(name: str, what: str) -> Pair:
        mine = own(name, "source", what)
        theirs = by_name["target"].get(pairs[mine.name]) if mine is not None and mine.name in pairs else None
        if mine is not None and theirs is not None:
            return Pair(mine.name, mine, theirs)
        missing = "source" if mine is None else "target"
        asked = name if mine is None else mine.name
        why = unpaired_why.get(asked) if mine is not None else None
        detail = why or (
            f"it has no column {asked!r}{resolvers[missing].hint(asked)}; its columns are "
            f"{_listed([c.name for c in sides[missing]])}"
        )
        raise ValueError(
            f"{words.prefix}{what} {name!r} is not a column of both sides: the {missing} ({label[missing]}) does not "
            f"pair it: {detail}"
        )

    keys = [require(name, "key column") for name in key]
    if len({k.name for k in keys}) != len(keys):
        raise ValueError(f"{words.prefix}{words.key} names a column twice: {list(key)}")
    key_names = {k.source.name for k in keys}
    target_keys = {k.target.name for k in keys}
    reports: list[ColumnReport] = []
    if columns is not None:
        compared = [p for p in (require(name, "compared column") for name in columns) if p.source.name not in key_names]
        if len({p.source.name for p in compared}) != len(compared):
            raise ValueError(f"{words.prefix}{words.columns} names a column twice: {list(columns)}")
        chosen = key_names | {p.source.name for p in compared}
        chosen_target = target_keys | {p.target.name for p in compared}
        reason = f"not among {words.columns}"
        for c in sides["source"]:
            if c.name not in chosen:
                other = by_name["target"].get(pairs.get(c.name, ""))
                reports.append(_report(c.name, LEFT_OUT, c, other, reason))
        paired_target = {pairs[c.name] for c in sides["source"] if c.name in pairs}
        for c in sides["target"]:
            if c.name not in chosen_target and c.name not in paired_target:
                reports.append(_report(c.name, LEFT_OUT, None, c, reason))
    else:
        excluded = _excluded(exclude or [], own, resolvers, pairs, key_names, target_keys, words)
        compared = []
        for c in sides["source"]:
            if c.name in key_names:
                continue
            other = by_name["target"].get(pairs.get(c.name, ""))
            if c.name in excluded["source"]:
                reports.append(_report(c.name, LEFT_OUT, c, other, f"among {words.exclude}"))
            elif other is None:
                reports.append(_report(c.name, ONLY_IN_SOURCE, c, None, unpaired_why.get(c.name)))
            else:
                compared.append(Pair(c.name, c, other))
        paired_target = set(pairs.values())
        for c in sides["target"]:
            if c.name in paired_target:
                continue
            if c.name in excluded["target"]:
                reports.append(_report(c.name, LEFT_OUT, None, c, f"among {words.exclude}"))
            else:
                reports.append(_report(c.name, ONLY_IN_TARGET, None, c, unpaired_why.get(c.name)))
    _check(keys, compared, label, words, columns is not None)
    schema = [_report(p.name, KEY, p.source, p.target) for p in keys]
    schema += [_report(p.name, COMPARED, p.source, p.target) for p in compared]
    return Plan(tuple(keys), tuple(compared), tuple(schema + reports))


def _excluded(
    names: Sequence[str],
    own: Any,
    resolvers: dict[str, Resolver],
    pairs: dict[str, str],
    key_names: set[str],
    target_keys: set[str],
    words: Words,
) -> dict[str, set[str]]:
    """The columns of each side that ``exclude`` names: by the source's name (and its pair), else the target's."""
    found: dict[str, set[str]] = {"source": set(), "target": set()}
    for name in names:
        mine = own(name, "source", "excluded column")
        theirs = None if mine is not None else own(name, "target", "excluded column")
        if mine is None and theirs is None:
            raise ValueError(
                f"{words.prefix}{words.exclude} names {name!r}, which is a column of neither side"
                f"{resolvers['source'].hint(name) or resolvers['target'].hint(name)}"
            )
        if (mine is not None and mine.name in key_names) or (theirs is not None and theirs.name in target_keys):
            raise ValueError(f"{words.prefix}{words.exclude} names the key column {name!r}; a key cannot be left out")
        if mine is not None:
            found["source"].add(mine.name)
            if mine.name in pairs:
                found["target"].add(pairs[mine.name])
        else:
            found["target"].add(theirs.name)
    return found


def _check(keys: list[Pair], compared: list[Pair], label: dict[str, str], words: Words, chosen: bool) -> None:
    """Refuse, in one message that names each column once, every pair that cannot be compared exactly."""
    problems: dict[str, list[str]] = {}
    refused_compared: list[str] = []
    for role, pairs in (("key column", keys), ("column", compared)):
        for p in pairs:
            why = _why_not(p, label)
            if why is None:
                continue
            problems.setdefault(why, []).append(f"{role} {p.name!r}" if role == "key column" else repr(p.name))
            if role == "column":
                refused_compared.append(p.name)
    if not problems:
        return
    count = sum(len(v) for v in problems.values())
    parts = []
    for why, names in list(problems.items())[:_LISTED]:
        shown = ", ".join(names[:_LISTED]) + (f" and {len(names) - _LISTED} more" if len(names) > _LISTED else "")
        parts.append(f"{shown}: {why}")
    if len(problems) > _LISTED:
        rest = sum(len(v) for v in list(problems.values())[_LISTED:])
        parts.append(f"and {rest} more column(s) for other reasons")
    fix = ""
    if refused_compared:
        them = "it" if len(refused_compared) == 1 else "them"
        fix = f". {words.columns} without {them} leaves {them} out" if chosen else f". {words.exclude} leaves {them} out"
    what = "a column cannot" if count == 1 else f"{count} columns cannot"
    raise ValueError(f"{words.prefix}{what} be compared exactly: " + "; ".join(parts) + fix)


def _why_not(p: Pair, label: dict[str, str]) -> str | None:
    """Why a pair cannot be compared exactly, or None."""
    refused = [(side, getattr(p, side)) for side in SIDES if getattr(p, side).dtype is None]
    if len(refused) == 2 and (p.source.type_text, p.source.refusal) == (p.target.type_text, p.target.refusal):
        return f"{p.source.type_text} on both sides: {p.source.refusal}"
    if refused:
        return "; ".join(f"{c.type_text} in the {side} ({label[side]}): {c.refusal}" for side, c in refused)
    if not hash_alike(p.source.dtype, p.target.dtype):
        return (
            f"{p.source.type_text} ({type_name(p.source.dtype)}) in the source and {p.target.type_text} "
            f"({type_name(p.target.dtype)}) in the target, whose values never compare equal: cast one side in a view"
        )
    return None


def _listed(names: Sequence[str], limit: int = 20) -> str:
    if len(names) <= limit:
        return ", ".join(map(repr, names))
    return ", ".join(map(repr, names[:limit])) + f" and {len(names) - limit} more"


def _report(
    name: str, role: str, source: SideColumn | None, target: SideColumn | None, reason: str | None = None
) -> ColumnReport:
    def spark(c: SideColumn | None) -> str | None:
        return None if c is None or c.dtype is None else type_name(c.dtype)

    return ColumnReport(
        name,
        role,
        None if source is None else source.type_text,
        None if target is None else target.type_text,
        spark(source),
        spark(target),
        reason,
    )
