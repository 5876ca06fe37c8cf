"""The jar's functions written as Spark SQL text, for queries built in one piece.

(The SQL that computes hashes without the jar, in PostgreSQL, DuckDB or Spark, is :mod:`hashexpr.sql`.)

In classic PySpark a Column built call by call costs a round trip to the JVM per call, about a dozen when
DataFrame debugging is on (the default: each function records its call site). An expression written as SQL
text costs one, however many columns it names, and means the same over Spark Connect.
:func:`~hashexpr.spark.diff.diff` builds its queries this way: over 20 columns, call by call, they took 0.3–0.7 s.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from hashexpr.options import hash_options

# Text that a quoted SQL string literal holds as is, whatever the parser settings
# (spark.sql.parser.escapedStringLiterals changes what a backslash means).
_PLAIN = re.compile(r"[^'\\]*")


def string(value: str) -> str:
    """Return a SQL expression for the string ``value``.

    Parameters
    ----------
    value : str
        Any string.

    Returns
    -------
    str
        ``'value'``, or, when ``value`` holds a quote or a backslash, the cast of its UTF-8 bytes written in
        hex, which no parser setting reads differently.

    Examples
    --------
    >>> from hashexpr.jar_sql import string
    >>> string("a.b c"), string("it's")
    ("'a.b c'", "CAST(X'69742773' AS STRING)")
    >>> spark.sql("SELECT " + string("it's") + " AS s").first().s
    "it's"
    """
    if plain(value):
        return f"'{value}'"
    return f"CAST(X'{value.encode('utf-8').hex().upper()}' AS STRING)"


def plain(value: str) -> bool:
    """Whether :func:`string` writes ``value`` as a plain ``'value'`` literal (no quote, no backslash)."""
    return _PLAIN.fullmatch(value) is not None


def call(name: str, args: Sequence[str], options: str = "") -> str:
    """Return the SQL call of the hashexpr function ``name`` on the SQL expressions ``args``.

    With ``options`` (the options text, e.g. ``'algorithm=sha256'``) it is the call of ``name_with``.

    Examples
    --------
    >>> from hashexpr.jar_sql import call
    >>> call("record_key", ["`id`"]), call("record_key", ["`id`"], "salt=s; trim")
    ('record_key(`id`)', "record_key_with('salt=s; trim', `id`)")
    """
    if not args:
        raise ValueError(f"{name} needs at least one argument")
    if options:
        return f"{name}_with({string(options)}, {', '.join(args)})"
    return f"{name}({', '.join(args)})"


def record_hash_sql(
    args: Sequence[str], *, by_name: bool = False, algorithm: str = "murmur3", secret: str | None = None
) -> str:
    """Return the SQL call of ``record_hash`` (or ``record_hash_by_name``) on the SQL expressions ``args``.

    Parameters
    ----------
    args : sequence of str
        SQL expressions, e.g. column names quoted with :func:`~hashexpr.names.quote`.
    by_name, algorithm, secret
        As for :func:`~hashexpr.record_hash`.

    Returns
    -------
    str
        The same expression :func:`~hashexpr.record_hash` builds, as SQL text.

    Examples
    --------
    >>> from hashexpr.jar_sql import record_hash_sql
    >>> record_hash_sql(["`a.b`", "c"], by_name=True)
    'record_hash_by_name(`a.b`, c)'
    >>> record_hash_sql(["c"], algorithm="sha256")
    "record_hash_with('algorithm=sha256', c)"
    """
    name = "record_hash_by_name" if by_name else "record_hash"
    return call(name, args, "; ".join(hash_options(algorithm, secret)))


def record_key_sql(args: Sequence[str], *, algorithm: str = "murmur3", secret: str | None = None) -> str:
    """Return the SQL call of ``record_key`` without key options on the SQL expressions ``args``.

    Examples
    --------
    >>> from hashexpr.jar_sql import record_key_sql
    >>> record_key_sql(["id"])
    'record_key(id)'
    """
    return call("record_key", args, "; ".join(hash_options(algorithm, secret)))
