package io.hashexpr

import org.apache.spark.sql.Column
import org.apache.spark.sql.functions.{call_function, col}

/** DataFrame functions for hashexpr's SQL functions, in the style of `org.apache.spark.sql.functions`. */
// scalastyle:off object.name
object functions {
// scalastyle:on object.name

  /** The 16-byte record hash of the columns (see `DESCRIBE FUNCTION EXTENDED record_hash`). */
  def record_hash(cols: Column*): Column = call_function(RecordHash.Name, cols: _*)

  /** The record hash of the named columns; `"*"` names every column. */
  def record_hash(colName: String, colNames: String*): Column = record_hash((colName +: colNames).map(col): _*)
}
