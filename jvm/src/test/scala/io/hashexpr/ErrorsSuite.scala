package io.hashexpr

import org.apache.spark.sql.AnalysisException

/** Bad input is refused at analysis, with a message that names record_hash, the argument and the type. */
class ErrorsSuite extends SparkSuite {

  private def error(sql: String): AnalysisException = intercept[AnalysisException](spark.sql(sql).collect())

  test("no arguments") {
    val e = error("SELECT record_hash()")
    assert(TestShims.condition(e) == "DATATYPE_MISMATCH.TYPE_CHECK_FAILURE_WITH_HINT")
    assert(e.getMessage.contains("`record_hash` needs at least one argument"))
  }

  if (LineFeatures.variant) test("VARIANT, at top level and nested") {
    val top = error("SELECT record_hash(1, parse_json('{\"a\": 1}'))")
    assert(top.getMessage.contains("argument 2 (parse_json("))
    assert(top.getMessage.contains("of `record_hash` has type VARIANT"))
    assert(top.getMessage.contains("to_json"))
    val nested = error("SELECT record_hash(named_struct('v', array(parse_json('1'))))")
    assert(nested.getMessage.contains("has type STRUCT<v: ARRAY<VARIANT>"))
    assert(nested.getMessage.contains(", which contains VARIANT, "))
  }

  if (LineFeatures.time) test("types the format does not specify yet: TIME") {
    val e = error("SELECT record_hash(TIME'12:00:00')")
    assert(e.getMessage.contains("argument 1"))
    assert(e.getMessage.contains("of `record_hash` has type TIME(6)"))
    assert(e.getMessage.contains("does not specify TIME(6) values yet"))
  }

  test("an unknown column is Spark's own error") {
    val e = error("SELECT record_hash(nope) FROM range(1)")
    assert(TestShims.condition(e) == "UNRESOLVED_COLUMN.WITH_SUGGESTION")
  }
}
