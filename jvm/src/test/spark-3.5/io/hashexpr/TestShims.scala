package io.hashexpr

import org.apache.spark.sql.AnalysisException

/** What the suites need that differs on Spark 3.5. */
object TestShims {
  def condition(e: AnalysisException): String = e.getErrorClass
}
