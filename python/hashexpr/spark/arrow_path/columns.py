"""hashexpr's column functions without the jar: ordinary columns, computed in Python workers.

``pyspark.sql.functions.arrow_udf`` (PySpark 4.1 and later, classic and Connect) hands the worker the UDF's
arguments as Arrow arrays and takes an Arrow array back, which the Rust engine hashes; Spark sends only those
arguments, not the whole row. The function's columns go in as arrays of their own, with Spark's ``typeof`` of their
struct, which says what the Arrow types cannot (collations, intervals); stars and by-name hashes go in as one
struct, the only form in which ``"*"`` and ``"t.*"`` expand as they do in ``record_hash(*)`` and arguments keep
their names. Where PySpark has no Arrow UDFs (3.5, 4.0), the same arguments go to plain Python UDFs, hashed row by
row (:mod:`hashexpr.spark.arrow_path.rows`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pyarrow as pa
from pyspark.sql import Column, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import BinaryType, StringType

from hashexpr.arrow.engine import native
from hashexpr.names import attribute_sql, quote
from hashexpr.options import KeyOptions, algorithm_of
from hashexpr.spark.arrow_path import rows
from hashexpr.spark.types import is_column


def available() -> bool:
    """Whether this PySpark has scalar Arrow UDFs (a feature probe: runtimes differ from their versions)."""
    return hasattr(F, "arrow_udf")


def _require(function: str) -> Any:
    """``arrow_udf``, once the engine is known to be installed; None where PySpark has no Arrow UDFs (the column
    functions then run row by row: :mod:`hashexpr.spark.arrow_path.rows`)."""
    if not available():
        return None
    native()  # the pure wheel has no engine: say what to install before any job runs
    return F.arrow_udf


def _argument(c: Any) -> Column:
    if is_column(c):
        return c
    if isinstance(c, str):
        text = attribute_sql(c)
        return F.expr(text) if text is not None else F.col(c)
    raise TypeError(f"expected a Column or a column name, got {type(c).__name__}: {c!r}")


def _struct_field(c: Any, position: int, kind: str) -> Column:
    """An argument as a field of the struct the UDF receives. Positions and keys ignore names, so each argument
    but a star gets a name of its own there (Arrow refuses a struct with two fields of one name)."""
    argument = _argument(c)
    if kind == "by_name" or _is_star(c):
        return argument
    return argument.alias(f"_{position}")


def _is_star(c: Any) -> bool:
    return isinstance(c, str) and (c == "*" or c.endswith(".*"))


def _shown(c: Any) -> str:
    """An argument as errors name it: a column name as given, a Column as PySpark prints it."""
    if isinstance(c, str):
        return c
    try:
        text = str(c)
    except TypeError:  # PySpark 3.5's Connect columns of a Python UDF print as None
        return "an expression"
    return text[len("Column<'") : -len("'>")] if text.startswith("Column<'") and text.endswith("'>") else text


def _is_named(c: Any) -> bool:
    """Whether a Column is a column reference or an alias: the arguments whose name ``struct`` keeps, the name
    ``record_hash_by_name`` identifies them by."""
    if isinstance(c, str):
        return True
    # A classic Column answers any attribute with a field access, so the kind is told by the class's module.
    if type(c).__module__.startswith("pyspark.sql.connect"):
        return type(c._expr).__name__ in ("ColumnReference", "ColumnAlias", "UnresolvedStar")
    from py4j.protocol import Py4JError

    java = c._jc
    try:
        node = java.node()  # PySpark 4: a ColumnNode
    except Py4JError:
        node = java.expr()  # PySpark 3.5: a Catalyst expression
    kind = node.getClass().getSimpleName()
    return kind in ("UnresolvedAttribute", "Alias", "UnresolvedStar")


def key_arguments(key: KeyOptions | None) -> tuple[str, bool, str | None, bool, str]:
    """``key`` (default: none of its options) as the engine's Hasher takes it: salt, trim, case, empty as NULL,
    NULL-key policy."""
    key = key or KeyOptions()
    return (key.salt, key.trim, key.case, key.empty_as_null, key.null_key)


def secret_key(name: str, function: str) -> bytes:
    """The HMAC key Spark's conf ``spark.hashexpr.secret.<name>`` holds, read in the driver from the
    application's configuration, as the jar reads it (docs/SECURITY.md): a key set or changed on the running
    session is refused, since Spark writes session confs unredacted into the event log with every job."""
    spark = SparkSession.getActiveSession()
    conf = f"spark.hashexpr.secret.{name}"
    how = (
        f"set {conf} in the application's configuration before the session starts (--conf, spark-defaults.conf "
        "or SparkSession.builder.config; on Spark Connect, the server's), and unset it on the session"
    )
    if spark is None:
        raise ValueError(f"{function}: secret={name!r}: there is no active Spark session to read {conf} from")
    session = spark.conf.get(conf, None)
    if type(spark).__module__.startswith("pyspark.sql.connect"):
        if not session:
            # A Spark Connect server since 4.0 gives clients no conf whose name matches spark.redaction.regex
            # ("secret"), even one the client set itself, so the key cannot reach the Arrow UDF from here.
            raise ValueError(
                f"{function}: secret={name!r} names the Spark conf {conf}, which a Spark Connect server never "
                "shows its clients, so without hashexpr's jar the key cannot be read: start the server with the "
                "jar (docs/PYTHON.md), which reads the key where it is"
            )
        return session.encode("utf-8")
    configured = spark.sparkContext.getConf().get(conf, None)
    if configured is None and session is None:
        raise ValueError(f"{function}: secret={name!r}: the secret is not set; {how}")
    if configured is None or configured != session:
        raise ValueError(
            f"{function}: secret={name!r}: the secret is {'set' if configured is None else 'changed'} on the "
            "session (spark.conf.set or SET), which writes it unredacted into the event log with every job's "
            f"properties; {how}"
        )
    if not configured:
        raise ValueError(f"{function}: secret={name!r}: the secret is empty; {how}")
    return configured.encode("utf-8")


def hash_column(
    function: str,
    cols: Sequence[Any],
    kind: str,
    algorithm: str,
    secret: str | None,
    key: KeyOptions | None = None,
) -> Column:
    """``record_hash``, ``record_hash_by_name`` or ``record_key`` of ``cols`` as an Arrow UDF column."""
    arrow_udf = _require(function)
    chosen, name = algorithm_of(algorithm, secret, function)
    hmac_key = secret_key(name, function) if name is not None else None
    if kind == "by_name":
        unnamed = [c for c in cols if not _is_named(c)]
        if unnamed:
            raise ValueError(
                f"{function}: without the jar, an expression hashed by name needs a name of its own: give "
                f"{unnamed[0]} one with .alias('name') (the jar names it as Spark shows it)"
            )
    options = key_arguments(key)
    from hashexpr.spark.arrow_path import worker

    labels = {f"_{i}": _shown(c) for i, c in enumerate(cols) if kind != "by_name" and not _is_star(c)}
    fields = F.struct(*[_struct_field(c, i, kind) for i, c in enumerate(cols)])
    # Spark folds typeof into a literal: the struct in it is never built.
    catalog = F.call_function("typeof", fields)
    alias = f"{function}({_label(cols)})"
    whole = kind == "by_name" or not cols or any(map(_is_star, cols))
    if arrow_udf is None:
        if whole:
            body = rows.struct_hashes(function, kind, chosen, hmac_key, options, labels)
            return rows.udf(body, BinaryType())(fields, catalog).alias(alias)
        body = rows.argument_hashes(function, kind, chosen, hmac_key, options, labels)
        return rows.udf(body, BinaryType())(*map(_argument, cols), catalog).alias(alias)
    if whole:
        # Stars expand, and names reach the worker, only inside a struct (and a UDF needs an argument).

        def hashes(values: pa.Array, catalog: pa.Array) -> pa.Array:
            return worker.hash_rows(function, values, catalog, kind, chosen, hmac_key, options, labels)

        return arrow_udf(hashes, BinaryType())(fields, catalog).alias(alias)

    def separate(*arrays: pa.Array) -> pa.Array:
        return worker.hash_arguments(
            function, arrays[:-1], arrays[-1], kind, chosen, hmac_key, options, labels
        )

    return arrow_udf(separate, BinaryType())(*map(_argument, cols), catalog).alias(alias)


def typed_column(
    function: str,
    names: Sequence[str],
    expected: Sequence[str],
    kind: str,
    algorithm: str,
    hmac_key: bytes | None,
    options: tuple[str, bool, str | None, bool, str],
) -> Column:
    """The hash of a DataFrame's top-level columns ``names`` as an Arrow UDF column, their Spark types
    ``expected`` read by the driver from its schema: no type text travels with the rows, and by-name hashes
    use the names as the schema spells them."""
    from hashexpr.spark.arrow_path import worker

    arrow_udf = _require(function)
    assert arrow_udf is not None, "typed columns are for PySpark with Arrow UDFs; frames.with_hashes checks"
    names, expected = tuple(names), tuple(expected)

    def hashes(*arrays: pa.Array) -> pa.Array:
        return worker.hash_typed(function, arrays, names, expected, kind, algorithm, hmac_key, options)

    return arrow_udf(hashes, BinaryType())(*(F.col(quote(n)) for n in names))


def normalize_column(col: Any, options: KeyOptions) -> Column:
    """``normalize_key`` of a string key part as an Arrow UDF column."""
    arrow_udf = _require("normalize_key")
    argument = _argument(col)
    label = col if isinstance(col, str) else "part"
    trim, case, empty_as_null = options.trim, options.case, options.empty_as_null
    if arrow_udf is None:
        body = rows.normalized(label, trim, case, empty_as_null)
        return rows.udf(body, StringType())(argument, F.call_function("typeof", argument)).alias(
            f"normalize_key({label})"
        )
    from hashexpr.spark.arrow_path import worker

    def normalized(values: pa.Array, catalog: pa.Array) -> pa.Array:
        return worker.normalize(values, catalog, label, trim, case, empty_as_null)

    udf = arrow_udf(normalized, StringType())
    return udf(argument, F.call_function("typeof", argument)).alias(f"normalize_key({label})")


def _label(cols: Sequence[Any]) -> str:
    return ", ".join(c if isinstance(c, str) else "..." for c in cols)
