"""``record_hash`` and ``record_key`` as SQL functions of a DuckDB connection, computed by the engine."""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from typing import Any, Literal

import pyarrow as pa

from hashexpr.arrow.functions import record_hash, record_key


def register(
    connection: Any,
    name: str,
    parameters: Sequence[Any],
    *,
    function: Literal["record_hash", "record_key"] = "record_hash",
    names: Sequence[str] | None = None,
    **options: Any,
) -> None:
    """Register ``name(p1, ..., pn)`` in a DuckDB connection: ``function`` of its arguments, as Spark computes it.

    DuckDB's Python functions have fixed parameter types (no ``*`` and no ``ANY``), so each registration names
    them; a value is hashed as the Spark type of the Arrow type DuckDB passes for its parameter type
    (``INTEGER`` as INT, ``VARCHAR`` as STRING, ``TIMESTAMP`` as TIMESTAMP_NTZ, ``TIMESTAMPTZ`` as TIMESTAMP,
    ``HUGEINT`` as DECIMAL(38,0), ...; ``docs/ARROW.md``). Declare the columns' own types: DuckDB casts an
    argument to its parameter's type, and the hash follows that type (``1`` and ``'1'`` differ). To hash every
    column of a relation without naming types, pass the relation itself to :func:`record_hash` instead; a function
    registered with every column's type is called as ``f(*COLUMNS(*))`` (DuckDB reads ``f(*)`` as ``f()``).

    Parameters
    ----------
    connection : :class:`duckdb.DuckDBPyConnection`
        The connection to register the function in.
    name : str
        The SQL function's name.
    parameters : sequence of str or DuckDB types
        The parameter types, e.g. ``["INTEGER", "VARCHAR"]`` or ``relation.types``.
    function : {'record_hash', 'record_key'}, optional
        What the SQL function computes.
    names : sequence of str, optional
        The arguments' names, for ``by_name=True`` (default ``c0``, ``c1``, ...).
    **options
        The keyword options of :func:`record_hash` or :func:`record_key` (``by_name``, ``algorithm``,
        ``hmac_key``, ``salt``, ``trim``, ``case``, ``empty_as_null``, ``null_key``).

    Examples
    --------
    >>> import duckdb
    >>> from hashexpr import arrow as hxa
    >>> con = duckdb.connect()
    >>> hxa.register(con, "row_hash", ["INTEGER", "VARCHAR"])
    >>> con.execute("SELECT hex(row_hash(1, 'a'))").fetchall()
    [('BB9718ED625B2FC5763E75F3ABFD7C5A',)]
    >>> con.execute("CREATE TABLE t AS SELECT 1::INTEGER AS id, 'a' AS s")             # doctest: +ELLIPSIS
    <...>
    >>> hxa.register(con, "hash_t", con.sql("SELECT * FROM t").types)
    >>> con.execute("SELECT hex(hash_t(*COLUMNS(*))) FROM t").fetchall()
    [('BB9718ED625B2FC5763E75F3ABFD7C5A',)]
    """
    if function not in ("record_hash", "record_key"):
        raise ValueError(f"register: function must be 'record_hash' or 'record_key', got {function!r}")
    types = [str(p) for p in parameters]
    if not types:
        raise ValueError(f"register: {function} needs at least one parameter type")
    arguments = list(names) if names is not None else [f"c{i}" for i in range(len(types))]
    if len(arguments) != len(types):
        raise ValueError(f"register: {len(arguments)} names for {len(types)} parameter types")
    compute = record_hash if function == "record_hash" else record_key
    # Checked now, on an empty table of the parameters' Arrow types, rather than at the first query.
    compute(_table(connection, arguments, types), arguments, **options)

    def hashed(*columns: pa.ChunkedArray) -> pa.Array:
        return compute(pa.table(dict(zip(arguments, columns))), arguments, **options)

    # DuckDB reads the parameter count from the signature.
    hashed.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [
            inspect.Parameter(a, inspect.Parameter.POSITIONAL_ONLY)
            for a in map("a{}".format, range(len(types)))
        ]
    )
    # NULLs reach the function (DuckDB's default answers NULL for any NULL argument without calling it).
    connection.create_function(name, hashed, types, "BLOB", type="arrow", null_handling="special")


def _table(connection: Any, arguments: list[str], types: list[str]) -> pa.Table:
    """An empty table of the Arrow types DuckDB passes for these parameter types."""
    casts = ", ".join(f"CAST(NULL AS {t}) AS a{i}" for i, t in enumerate(types))
    table = connection.sql(f"SELECT {casts} LIMIT 0").arrow()
    if isinstance(table, pa.RecordBatchReader):
        table = table.read_all()
    return table.rename_columns(arguments)
