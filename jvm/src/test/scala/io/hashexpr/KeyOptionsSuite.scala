package io.hashexpr

import org.apache.spark.sql.AnalysisException

/** `record_key_with` options are parsed strictly: a key never depends on a typo or on stray whitespace. */
class KeyOptionsSuite extends SparkSuite {

  test("parse: items in any order, names and words in any case, spaces around items") {
    assert(KeyOptions.parse(" TRIM ;case = Upper; salt=hub;;null_key=NULL ") ==
      Right(KeyOptions(salt = "hub", trim = true, caseMode = KeyNormalizer.CASE_UPPER, nullKey = NullKey.Null)))
    assert(KeyOptions.parse("salt=a=b; empty_as_null") == Right(KeyOptions(salt = "a=b", emptyAsNull = true)))
    assert(KeyOptions.parse("") == Right(KeyOptions.Default))
  }

  test("parse: unknown, repeated, valued flags, bad values and whitespace-ambiguous salts are errors") {
    val errors = Map(
      "case=upper; case=lower" -> "option 'case' given twice",
      "salt=a; salt=b" -> "option 'salt' given twice",
      "trim; TRIM" -> "option 'trim' given twice",
      "salt= crm" -> "option 'salt= crm' whose salt begins or ends with a space",
      "salt=crm ; trim" -> "option 'salt=crm ' whose salt begins or ends with a space",
      "salt=crm\t" -> "whose salt begins or ends with a space",
      "trim=yes" -> "option 'trim=yes': 'trim' takes no value",
      "case=title" -> "option 'case=title' with a missing or unknown value",
      "null_key" -> "option 'null_key' with a missing or unknown value",
      "slat=x" -> "unknown option 'slat=x'",
      "trim, case=upper" -> "unknown option 'trim, case=upper' (options are separated by ';', not ',')",
      "case=upper, trim" -> "option 'case=upper, trim' with a missing or unknown value (options are separated by ';'")
    errors.foreach { case (text, message) =>
      val problem = KeyOptions.parse(text)
      assert(problem.left.exists(_.contains(message)), s"$text: $problem")
    }
  }

  test("bad options fail the query at analysis, naming the option") {
    val e = intercept[AnalysisException](
      spark.sql("SELECT record_key_with('case=upper; case=lower', 'a')").collect())
    assert(e.getMessage.contains("`record_key_with` must be a valid options string, but it has an option 'case' " +
      "given twice"))
    val salt = intercept[AnalysisException](spark.sql("SELECT record_key_with('salt= crm', 'a')").collect())
    assert(salt.getMessage.contains("salt begins or ends with a space"))
  }

  test("null_key=error is not folded: a query over no rows runs, a NULL key still fails") {
    assert(spark.sql("SELECT record_key_with('null_key=error', CAST(NULL AS INT)) FROM range(0)").count() == 0)
    assert(spark.sql("SELECT record_key_with('null_key=error', CAST(NULL AS INT)) FROM range(0)").collect().isEmpty)
    val e = intercept[Exception](
      spark.sql("SELECT record_key_with('null_key=error', CAST(NULL AS INT)) FROM range(1)").collect())
    assert(Iterator.iterate[Throwable](e)(_.getCause).takeWhile(_ != null)
      .exists(_.getMessage.contains("every key part is NULL")))
  }
}
