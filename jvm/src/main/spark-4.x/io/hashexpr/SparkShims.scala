package io.hashexpr

import java.nio.charset.StandardCharsets

import org.apache.spark.sql.catalyst.util.CollationFactory
import org.apache.spark.sql.types.StringType
import org.apache.spark.unsafe.types.UTF8String

/** The parts of hashexpr that depend on the Spark line it is built for (here: Spark 4, with collations). */
private[hashexpr] object SparkShims {

  /** Whether values of `st` are equal exactly when their bytes are, so they hash as plain STRING values. */
  def hasBinaryEquality(st: StringType): Boolean =
    CollationFactory.fetchCollation(st.collationId).supportsBinaryEquality

  def collationId(st: StringType): Int = st.collationId

  /** The collation's name as written into COLLATED STRING values. */
  def collationNameBytes(st: StringType): Array[Byte] =
    CollationFactory.fetchCollation(st.collationId).collationName.getBytes(StandardCharsets.US_ASCII)

  def collationKey(s: UTF8String, collationId: Int): Array[Byte] =
    CollationFactory.getCollationKeyBytes(s, collationId)
}
