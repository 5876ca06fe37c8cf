package io.hashexpr

import org.apache.spark.sql.AnalysisException

/** What the suites need that differs on Spark 4.x. */
object TestShims {
  def condition(e: AnalysisException): String = e.getCondition
}
