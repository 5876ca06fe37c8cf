"""Column names taken literally, as every hashexpr parameter that takes column *names* takes them.

``key=``, ``hash_columns=``, ``by``, ``hash_col=`` and ``columns=`` name top-level columns: ``"a.b"`` is the
column named ``a.b``, not the field ``b`` of a struct column ``a``, and spaces and backticks are part of the
name. :func:`pyspark.sql.functions.col` parses its string instead (``"a.b"`` is a field, backticks quote), and so
do the column functions :func:`~hashexpr.record_hash` and :func:`~hashexpr.record_key`, which take a
:class:`~pyspark.sql.Column` or a string as ``F.col`` does; :func:`column` gives them a literal name.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame, SparkSession


def quote(name: str) -> str:
    """Return ``name`` quoted for Spark: in backticks, with every backtick doubled.

    Parameters
    ----------
    name : str
        A column name, taken literally.

    Returns
    -------
    str
        The quoted name, which :func:`pyspark.sql.functions.col` and SQL resolve to that one column.

    Examples
    --------
    >>> from hashexpr.names import quote
    >>> quote("a.b"), quote("unit price"), quote("x`y")
    ('`a.b`', '`unit price`', '`x``y`')
    """
    return "`" + name.replace("`", "``") + "`"


def attribute_sql(name: str) -> str | None:
    """Return SQL text that means what ``F.col(name)`` means, or None when it takes ``F.col`` to say it.

    ``F.col`` splits a name at the dots outside backticks (``"a.b"`` is the field ``b`` of ``a``; ``"`a.b`"``
    is the column ``a.b``) and reads ``"*"`` and ``"t.*"`` as stars; the text quotes each part, so the SQL
    parser reads the same parts. A name ``F.col`` would refuse, or with an empty part, gives None: ``F.col``
    then reports it in its own words.

    Parameters
    ----------
    name : str
        A name as :func:`pyspark.sql.functions.col` takes it.

    Returns
    -------
    str or None
        The SQL text, or None.

    Examples
    --------
    >>> from hashexpr.names import attribute_sql
    >>> attribute_sql("a.b"), attribute_sql("`a.b`"), attribute_sql("unit price"), attribute_sql("t.*")
    ('`a`.`b`', '`a.b`', '`unit price`', '`t`.*')
    >>> attribute_sql("a..b") is None, attribute_sql("`a") is None
    (True, True)
    """
    if name == "*":
        return name
    star = name.endswith(".*")
    parts = _attribute_parts(name[:-2] if star else name)
    if parts is None or "" in parts:
        return None
    text = ".".join(map(quote, parts))
    return text + ".*" if star else text


def _attribute_parts(name: str) -> list[str] | None:
    """The parts of ``name`` as Spark's ``parseAttributeName`` splits it, or None where that fails."""
    parts: list[str] = []
    part: list[str] = []
    quoted = False
    i = 0
    while i < len(name):
        char = name[i]
        if quoted:
            if char != "`":
                part.append(char)
            elif name[i + 1 : i + 2] == "`":
                part.append("`")
                i += 1
            else:
                quoted = False
                if name[i + 1 : i + 2] not in ("", "."):
                    return None
        elif char == "`":
            if part:
                return None
            quoted = True
        elif char == ".":
            if i == 0 or name[i - 1] == "." or i == len(name) - 1:
                return None
            parts.append("".join(part))
            part = []
        else:
            part.append(char)
        i += 1
    if quoted:
        return None
    parts.append("".join(part))
    return parts


def column(name: str) -> Column:
    """Return the top-level column named ``name``, taken literally (dots, spaces and backticks included).

    Parameters
    ----------
    name : str
        A column name.

    Returns
    -------
    :class:`~pyspark.sql.Column`
        ``F.col`` of the quoted name.

    Examples
    --------
    >>> import hashexpr as hx
    >>> from hashexpr.names import column
    >>> df = spark.sql("SELECT 1 AS `a.b`, named_struct('b', 2) AS a")
    >>> df.select(column("a.b"), F.col("a.b")).first()
    Row(a.b=1, b=2)
    >>> df.select(hx.record_hash(column("a.b")) == hx.record_hash(F.lit(1))).first()[0]
    True
    """
    from pyspark.sql import functions as F

    return F.col(quote(name))


def resolve(df: DataFrame, names: Sequence[str], function: str, what: str = "df") -> list[str]:
    """Return each of ``names`` as ``df`` spells it, matching as Spark resolves a quoted column name.

    A name matches a column of the same name, or else, unless ``spark.sql.caseSensitive`` is set, the one
    column whose name differs only in case. Taking the schema's spelling keeps what depends on the name (the
    names a by-name record hash hashes, output column names) independent of how the caller spelt it.

    Parameters
    ----------
    df : :class:`~pyspark.sql.DataFrame`
        The frame whose top-level columns are named.
    names : sequence of str
        The names, taken literally.
    function : str
        The function the names were given to, for the error message.
    what : str, optional
        What ``df`` is called there (default ``'df'``).

    Returns
    -------
    list of str
        The column names, in the order of ``names``.

    Raises
    ------
    ValueError
        Naming the function and the first name that matches no column (with the nearest column's name), or
        several, with ``df``'s columns.

    Examples
    --------
    >>> from hashexpr.names import resolve
    >>> df = spark.createDataFrame([(1, 2)], "`a.b` INT, Id INT")
    >>> resolve(df, ["id", "a.b"], "f")
    ['Id', 'a.b']
    >>> resolve(df, ["idd"], "f")
    Traceback (most recent call last):
        ...
    ValueError: f: df has no column 'idd' (did you mean 'Id'?); its columns are ['a.b', 'Id']
    """
    return Resolver.of(df).resolve(names, function, what)


class Resolver:
    """Column names matched as Spark matches them, over one list of columns.

    ``case_sensitive`` is ``spark.sql.caseSensitive``; it is read only when a name needs it (over Spark Connect
    each read is a round trip), by ``read_case_sensitive``.
    """

    def __init__(self, columns: Sequence[str], read_case_sensitive: Callable[[], bool]) -> None:
        self.columns = list(columns)
        self._read_case_sensitive = read_case_sensitive
        self._case_sensitive: bool | None = None
        self._by_lower: dict[str, list[str]] = {}
        for c in self.columns:
            self._by_lower.setdefault(c.lower(), []).append(c)

    @classmethod
    def of(cls, df: DataFrame) -> Resolver:
        """The resolver of ``df``'s top-level columns under its session's ``spark.sql.caseSensitive``."""
        return cls(df.columns, lambda: case_sensitive(df.sparkSession))

    @property
    def case_sensitive(self) -> bool:
        if self._case_sensitive is None:
            self._case_sensitive = self._read_case_sensitive()
        return self._case_sensitive

    def matches(self, name: str) -> list[str]:
        """The columns ``name`` resolves to: one, none, or (ignoring case) several."""
        if name in self.columns:
            return [name]
        return [] if self.case_sensitive else self._by_lower.get(name.lower(), [])

    def find(self, name: str) -> str | None:
        """The column ``name`` resolves to, or None when none does (several is an error)."""
        found = self.matches(name)
        if len(found) > 1:
            raise ValueError(f"{name!r} matches several columns, {found}: rename them")
        return found[0] if found else None

    def nearest(self, name: str) -> str | None:
        """The column whose name is closest to ``name``, for an error's hint; None when none is close."""
        lowered = {c.lower(): c for c in reversed(self.columns)}
        close = difflib.get_close_matches(name.lower(), list(lowered), n=1, cutoff=0.6)
        return lowered[close[0]] if close else None

    def hint(self, name: str) -> str:
        """`` (did you mean 'x'?)`` for a name that matches no column, when one is close; else ``''``."""
        near = self.nearest(name)
        return f" (did you mean {near!r}?)" if near is not None else ""

    def resolve(self, names: Sequence[str], function: str, what: str = "df") -> list[str]:
        """Each of ``names`` as the columns spell it; a ValueError naming ``function`` otherwise."""
        resolved = []
        for name in names:
            if not isinstance(name, str) or not name:
                raise ValueError(f"{function}: column names must be non-empty strings, got {name!r}")
            found = self.matches(name)
            if len(found) > 1:
                raise ValueError(
                    f"{function}: {name!r} matches several columns of {what}, {found}: rename them"
                )
            if not found:
                raise ValueError(
                    f"{function}: {what} has no column {name!r}{self.hint(name)}; its columns are "
                    f"{preview(self.columns)}"
                )
            resolved.append(found[0])
        return resolved


def case_sensitive(spark: SparkSession) -> bool:
    """Whether ``spark`` matches column names by case (``spark.sql.caseSensitive``)."""
    return str(spark.conf.get("spark.sql.caseSensitive", "false")).strip().lower() == "true"


def preview(columns: Sequence[str], limit: int = 50) -> str:
    """The list of ``columns`` for a message, cut after ``limit`` names."""
    if len(columns) <= limit:
        return str(list(columns))
    return f"{list(columns[:limit])} and {len(columns) - limit} more"
