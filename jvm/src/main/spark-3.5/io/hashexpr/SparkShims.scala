package io.hashexpr

import org.apache.spark.sql.types.StringType
import org.apache.spark.unsafe.types.UTF8String

/** The parts of hashexpr that depend on the Spark line it is built for (here: Spark 3.5, without collations). */
private[hashexpr] object SparkShims {

  /** Spark 3.5 has one STRING type, compared by its bytes. */
  def hasBinaryEquality(st: StringType): Boolean = true

  def collationId(st: StringType): Int = 0

  def collationNameBytes(st: StringType): Array[Byte] =
    throw new UnsupportedOperationException("Spark 3.5 has no collations")

  def collationKey(s: UTF8String, collationId: Int): Array[Byte] =
    throw new UnsupportedOperationException("Spark 3.5 has no collations")
}
