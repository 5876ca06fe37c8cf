package io.hashexpr

import org.apache.spark.sql.{DataFrame, Row}

/** The Java API: JavaFunctions (a Java source, compiled with the tests) gives what SQL gives. */
class JavaFunctionsSuite extends SparkSuite {

  private lazy val df: DataFrame = {
    val data = spark.sql(
      """SELECT * FROM VALUES (1, ' c-042 '), (2, 'C-042'), (3, ''), (CAST(NULL AS INT), CAST(NULL AS STRING))
        |AS t(id, name)""".stripMargin)
    data.createOrReplaceTempView("java_api")
    data
  }

  private def values(rows: Array[Row]): Seq[Seq[Any]] = rows.toSeq.map(_.toSeq.map {
    case b: Array[Byte] => hex(b)
    case other => other
  })

  /** Every column of `fromJava` against the SQL its name holds. */
  private def assertSameAsSql(fromJava: DataFrame): Unit = {
    assert(fromJava.columns.length > 1)
    fromJava.columns.foreach { sql =>
      val expected = values(spark.sql(s"SELECT $sql FROM java_api").collect())
      assert(values(fromJava.select(fromJava.col(s"`$sql`")).collect()) == expected, sql)
    }
  }

  test("every row function called from Java gives what SQL gives") {
    val fromJava = JavaFunctions.rowFunctions(df)
    assert(fromJava.columns.length == 15)
    assertSameAsSql(fromJava)
  }

  test("the fingerprints called from Java give what SQL gives") {
    assertSameAsSql(JavaFunctions.fingerprints(df))
  }

  test("row_position called from Java") {
    val positions = JavaFunctions.positions(spark.range(0, 3, 1, 1).toDF("id")).collect()
    assert(positions.toSeq == Seq(0L, 1L, 2L).map(i => Row(i, Row(null, 0, i))))
  }

  test("the options builders render from Java the text SQL takes, and refuse what it cannot carry") {
    assert(JavaFunctions.optionsTexts().toSeq == Seq(
      "salt=crm; trim; case=lower; empty_as_null; null_key=error; algorithm=hmac-sha256; secret=pii",
      "algorithm=murmur3", "algorithm=sha256", "algorithm=murmur3", "algorithm=lthash16", "salt=x; case=upper"))
    assert(JavaFunctions.refusedSalt().contains("RecordKeyOptions.salt: a salt cannot contain ';'"))
  }
}
