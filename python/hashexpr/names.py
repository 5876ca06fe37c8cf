"""Column names taken literally, as every hashexpr parameter that takes column *names* takes them.

``key=``, ``hash_columns=``, ``by``, ``hash_col=`` and ``columns=`` name top-level columns: ``"a.b"`` is the
column named ``a.b``, not the field ``b`` of a struct column ``a``, and spaces and backticks are part of the
name. :func:`pyspark.sql.functions.col` parses its string instead (``"a.b"`` is a field, backticks quote), and so
do the column functions :func:`~hashexpr.record_hash` and :func:`~hashexpr.record_key`, which take a
:class:`~pyspark.sql.Column` or a string as ``F.col`` does; :func:`column` gives them a literal name.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from pyspark.sql import Column
from pyspark.sql import functions as F

if TYPE_CHECKING:
    from pyspark.sql import DataFrame


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
        Naming the function and the first name that matches no column, or several, with ``df``'s columns.

    Examples
    --------
    >>> from hashexpr.names import resolve
    >>> df = spark.createDataFrame([(1, 2)], "`a.b` INT, Id INT")
    >>> resolve(df, ["id", "a.b"], "f")
    ['Id', 'a.b']
    >>> resolve(df, ["a"], "f")
    Traceback (most recent call last):
        ...
    ValueError: f: df has no column 'a'; its columns are ['a.b', 'Id']
    """
    columns = df.columns
    by_lower: dict[str, list[str]] = {}
    for c in columns:
        by_lower.setdefault(c.lower(), []).append(c)
    case_sensitive: bool | None = None
    resolved = []
    for name in names:
        if not isinstance(name, str) or not name:
            raise ValueError(f"{function}: column names must be non-empty strings, got {name!r}")
        if name in columns:
            resolved.append(name)
            continue
        if case_sensitive is None:
            # Read only when a name needs it: over Spark Connect each read is a round trip.
            case_sensitive = df.sparkSession.conf.get("spark.sql.caseSensitive", "false").lower() == "true"
        matches = [] if case_sensitive else by_lower.get(name.lower(), [])
        if len(matches) > 1:
            raise ValueError(f"{function}: {name!r} matches several columns of {what}, {matches}: rename them")
        if not matches:
            raise ValueError(f"{function}: {what} has no column {name!r}; its columns are {columns}")
        resolved.append(matches[0])
    return resolved
