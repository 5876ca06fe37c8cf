"""A Spark table or DataFrame as one side of a comparison: the jar's functions where the session has them,
hashexpr.sql's ``spark`` dialect where it has not (a Databricks SQL warehouse, a Spark Connect server without the
jar), classic or Spark Connect alike.

Every pass is one Spark job over the DataFrame; the aggregates reach the driver as one row per segment: the count
and the four lanes' exact sums (Spark's ``sum`` of 32-bit values is a 64-bit sum, which never overflows here). What
a name reads (a catalog table, ``parquet.`PATH```, ``delta.`PATH``` at one version) is spark_tables.py's.
"""

from __future__ import annotations

import importlib.util
import threading
import uuid
from typing import Any

import numpy as np
import pyarrow as pa

from hashexpr import jar_sql
from hashexpr import sql as hsql
from hashexpr.errors import PySparkMissingError
from hashexpr.names import quote
from hashexpr.reconcile import spark_tables
from hashexpr.reconcile.catalog import SideColumn
from hashexpr.reconcile.columns import SidePlan
from hashexpr.reconcile.segments import MAX_BITS, NULL_SEGMENT, Aggregates
from hashexpr.reconcile.sources import (
    COLUMN_HASH_BYTES,
    COLUMN_HASHES,
    KEY_HASH,
    NULL_KEY,
    ROW_HASH,
    Source,
    key_column,
    segment_clause,
    value_column,
)
from hashexpr.types import DataType, of

_OPTIONS = "algorithm=sha256"


def _signed(word: str) -> str:
    """A 32-bit word read as unsigned, as the signed integer of the same bits."""
    return f"(CASE WHEN {word} >= 2147483648 THEN {word} - 4294967296 ELSE {word} END)"


def _word(column: str, start: int, length: int) -> str:
    """``length`` bytes of a binary column from ``start`` (1-based), read big-endian, as a BIGINT."""
    return f"CAST(conv(hex(substring({column}, {start}, {length})), 16, 10) AS BIGINT)"


class SparkSource(Source):
    """A Spark table or DataFrame (see :func:`hashexpr.reconcile.spark`)."""

    system = "Spark"

    def __init__(self, data: Any, spark: Any = None, engine: str = "auto") -> None:
        super().__init__()
        if engine not in ("auto", "jar", "sql"):
            raise ValueError(f"spark: engine must be 'auto', 'jar' or 'sql', got {engine!r}")
        if importlib.util.find_spec("pyspark") is None:
            raise PySparkMissingError("hashexpr.reconcile.spark (a Spark side)")
        self._engine_choice = engine
        if isinstance(data, str):
            self._name: str | None = data
            self._df = None
            self._spark = spark
        elif hasattr(data, "sparkSession") and hasattr(data, "schema"):
            self._name, self._df, self._spark = None, data, data.sparkSession
        else:
            raise TypeError(f"spark: expected a table name or a DataFrame, got {type(data).__name__}")
        self.engine = "jar"
        self._version: int | None = None
        self._tag = f"hashexpr-reconcile-{uuid.uuid4().hex[:12]}"
        self._timeout: float | None = None

    @property
    def label(self) -> str:
        what = f"table {self._name}" if self._name is not None else "DataFrame"
        version = f" (version {self._version})" if self._version is not None else ""
        return f"Spark {what}{version}"

    def _open(self, statement_timeout: float | None) -> None:
        from pyspark.sql import SparkSession

        if self._spark is None:
            self._spark = SparkSession.getActiveSession()
            if self._spark is None:
                raise ValueError("spark: no active Spark session; pass spark=session, or a DataFrame")
        if self._name is not None:
            self._df, self._version = spark_tables.read(self._spark, self._name)
        self._timeout = statement_timeout
        has_jar = self._spark.catalog.functionExists("record_hash_with")
        if self._engine_choice == "jar" and not has_jar:
            raise ValueError("spark: engine='jar' needs hashexpr's jar in the session (hx.configure)")
        self.engine = "jar" if has_jar and self._engine_choice != "sql" else "sql"

    def _close(self) -> None:
        pass

    def columns(self) -> list[SideColumn]:
        return [SideColumn(f.name, f.dataType.simpleString(), of(f.dataType)) for f in self._df.schema.fields]

    def row_estimate(self) -> int:
        return int(self._collect(self._df.selectExpr("count(*) AS n"))[0]["n"])

    # --- SQL ----------------------------------------------------------------------------------------------

    def _key(self, plan: SidePlan) -> str:
        if self.engine == "jar":
            return jar_sql.call("record_key", [quote(n) for n, _ in plan.key], _OPTIONS)
        return hsql.record_key([(hsql.column(n), t) for n, t in plan.key], dialect="spark")

    def _hash(self, columns: tuple[tuple[str, DataType], ...]) -> str:
        if self.engine == "jar":
            return jar_sql.call("record_hash", [quote(n) for n, _ in columns], _OPTIONS)
        return hsql.record_hash([(hsql.column(n), t) for n, t in columns], dialect="spark")

    def _null(self, plan: SidePlan) -> str:
        return " OR ".join(f"({quote(n)} IS NULL)" for n, _ in plan.key)

    def _segment(self, bits: int) -> str:
        word = _word("hx_k", 1, 4)
        return f"shiftright({word}, {MAX_BITS - bits})" if bits else "CAST(0 AS BIGINT)"

    # --- running ------------------------------------------------------------------------------------------

    def _collect(self, df: Any) -> list[Any]:
        """Run ``df`` under this comparison's tag, cancelled when the statement timeout passes."""
        spark = self._spark
        timer = None
        tagged = hasattr(spark, "addTag")
        if tagged:
            spark.addTag(self._tag)
        if self._timeout:
            timer = threading.Timer(self._timeout, self.cancel)
            timer.start()
        try:
            return df.collect()
        finally:
            if timer is not None:
                timer.cancel()
            if tagged:
                spark.removeTag(self._tag)

    def cancel(self) -> None:
        spark = self._spark
        if spark is not None and hasattr(spark, "interruptTag"):
            spark.interruptTag(self._tag)
        elif spark is not None:
            spark.sparkContext.cancelJobsWithTag(self._tag)

    def _aggregate(self, plan: SidePlan, bits: int, within: tuple[int, np.ndarray] | None) -> Aggregates:
        rows = self._df.selectExpr(
            f"{self._key(plan)} AS hx_k", f"{self._null(plan)} AS hx_z", *map(quote, _names(plan))
        )
        if within is not None:
            bits0, segments = within
            rows = self._semi(rows.where("NOT hx_z"), bits0, segments)
        hashed = rows.selectExpr(
            f"CASE WHEN hx_z THEN {NULL_SEGMENT} ELSE {self._segment(bits)} END AS hx_g",
            f"{self._hash(plan.hashed)} AS hx_h",
        )
        sums = [f"sum({_signed(_word('hx_h', 1 + 4 * i, 4))}) AS hx_s{i}" for i in range(4)]
        grouped = hashed.groupBy("hx_g").agg(*[_expr(h) for h in ["count(*) AS hx_n", *sums]])
        result = self._collect(grouped)
        self.stats.result_bytes += 40 * len(result)
        if not result:
            return Aggregates.empty()
        columns = np.array([tuple(r) for r in result], np.int64)
        return Aggregates.of_sums(columns[:, 0], columns[:, 1], columns[:, 2:6])

    def _semi(self, rows: Any, bits: int, segments: np.ndarray) -> Any:
        """``rows`` whose segment at ``bits`` is among ``segments``, by a broadcast semi-join with their list."""
        from pyspark.sql import functions as F

        listed = self._spark.createDataFrame([(int(s),) for s in segments], "hx_seg BIGINT")
        keyed = rows.withColumn("hx_seg", _expr(self._segment(bits)))
        return keyed.join(F.broadcast(listed), "hx_seg", "left_semi").drop("hx_seg")

    def _fetch(self, plan: SidePlan, bits: int, segments: np.ndarray, values: bool) -> pa.Table:
        listed, nulls = segment_clause(segments)
        rows = self._df.selectExpr(
            f"{self._key(plan)} AS hx_k", f"{self._null(plan)} AS hx_z", *map(quote, _names(plan))
        )
        chosen = self._semi(rows.where("NOT hx_z"), bits, np.array(listed, np.int64))
        if nulls:
            chosen = chosen.unionByName(rows.where("hx_z"))
        hashes = [f"substring({self._hash(((n, t),))}, 1, {COLUMN_HASH_BYTES})" for n, t in plan.compared]
        selected = chosen.selectExpr(
            *[f"{quote(n)} AS {key_column(i)}" for i, (n, _) in enumerate(plan.key)],
            f"hx_k AS {KEY_HASH}",
            f"{self._hash(plan.hashed)} AS {ROW_HASH}",
            f"{'concat(' + ', '.join(hashes) + ')' if hashes else 'X' + chr(39) * 2} AS {COLUMN_HASHES}",
            f"hx_z AS {NULL_KEY}",
            *[f"{quote(n)} AS {value_column(i)}" for i, (n, _) in enumerate(plan.compared if values else ())],
        )
        table = _to_arrow(selected, self)
        self.stats.result_bytes += table.nbytes
        return table


def _names(plan: SidePlan) -> list[str]:
    return list(dict.fromkeys(n for n, _ in plan.key + plan.hashed))


def _expr(text: str) -> Any:
    from pyspark.sql import functions as F

    return F.expr(text)


def _to_arrow(df: Any, source: SparkSource) -> pa.Table:
    """The rows of ``df`` as Arrow, under the source's tag and timeout."""
    spark = source._spark
    tagged = hasattr(spark, "addTag")
    if tagged:
        spark.addTag(source._tag)
    timer = threading.Timer(source._timeout, source.cancel) if source._timeout else None
    if timer is not None:
        timer.start()
    try:
        if hasattr(df, "toArrow"):
            return df.toArrow()
        return pa.Table.from_pandas(df.toPandas(), preserve_index=False)
    finally:
        if timer is not None:
            timer.cancel()
        if tagged:
            spark.removeTag(source._tag)
