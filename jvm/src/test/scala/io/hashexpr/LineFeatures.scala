package io.hashexpr

/** The SQL types and syntax of the Spark line the suites run on; tests of what a line lacks are absent there. */
object LineFeatures {
  private val line: (Int, Int) = {
    val parts = org.apache.spark.SPARK_VERSION.split("[.-]")
    (parts(0).toInt, parts(1).toInt)
  }

  private def atLeast(major: Int, minor: Int): Boolean = Ordering[(Int, Int)].gteq(line, (major, minor))

  /** Collated strings (`COLLATE`), from Spark 4.0. */
  val collations: Boolean = atLeast(4, 0)

  /** VARIANT and `parse_json`, from Spark 4.0. */
  val variant: Boolean = atLeast(4, 0)

  /** The TIME type, from Spark 4.1. */
  val time: Boolean = atLeast(4, 1)
}
