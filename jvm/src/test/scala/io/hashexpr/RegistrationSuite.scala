package io.hashexpr

import org.apache.spark.sql.functions.col

/** The functions arrive with nothing but the jar (ServiceLoader), with `*`, views and DESCRIBE FUNCTION. */
class RegistrationSuite extends SparkSuite {

  test("SELECT record_hash(*), record_hash(t.*) and record_hash(a, b) with no configuration") {
    spark.range(3).selectExpr("id AS a", "CAST(id AS STRING) AS b").createOrReplaceTempView("reg")
    val r = spark.sql(
      "SELECT record_hash(*) = record_hash(a, b), record_hash(reg.*) = record_hash(a, b) FROM reg").collect()
    assert(r.length == 3 && r.forall(x => x.getBoolean(0) && x.getBoolean(1)))
  }

  test("the Scala DataFrame function matches SQL") {
    val df = spark.range(5).selectExpr("id", "CAST(id AS STRING) s")
    val viaApi = hexes(df.select(functions.record_hash(col("id"), col("s"))))
    assert(viaApi == hexes(df.select(functions.record_hash("*"))))
    assert(viaApi == hexes(df.selectExpr("record_hash(id, s)")))
  }

  test("a persistent view can use record_hash") {
    spark.sql("DROP VIEW IF EXISTS default.hashed_view")
    spark.sql("DROP TABLE IF EXISTS default.base_table")
    spark.range(4).selectExpr("id", "CAST(id AS STRING) s").write.saveAsTable("default.base_table")
    spark.sql("CREATE VIEW default.hashed_view AS SELECT id, record_hash(*) AS h FROM default.base_table")
    val fromView = spark.sql("SELECT hex(h) FROM default.hashed_view ORDER BY id").collect().map(_.getString(0))
    val direct = spark.sql("SELECT hex(record_hash(*)) FROM default.base_table ORDER BY id").collect().map(_.getString(0))
    assert(fromView.toSeq == direct.toSeq && fromView.length == 4)
    spark.sql("DROP VIEW default.hashed_view")
    spark.sql("DROP TABLE default.base_table")
  }

  test("DESCRIBE FUNCTION EXTENDED shows usage, arguments and examples") {
    val text = spark.sql("DESCRIBE FUNCTION EXTENDED record_hash").collect().map(_.getString(0)).mkString("\n")
    assert(text.contains("Function: record_hash"))
    assert(text.contains("Class: io.hashexpr.RecordHash"))
    assert(text.contains("Usage:") && text.contains("MurmurHash3 x64 128"))
    assert(text.contains("Arguments:") && text.contains("Examples:") && text.contains("Since: 0.1.0"))
  }

  test("every example in DESCRIBE FUNCTION EXTENDED gives the result it shows") {
    HashExprFunctions.functions.foreach { case (_, info, _) =>
      val examples = info.getExamples.linesIterator.map(_.trim).filter(_.nonEmpty).toSeq
      val pairs = examples.sliding(2).collect { case Seq(q, r) if q.startsWith(">") => q.drop(1).trim -> r }.toSeq
      assert(pairs.nonEmpty, s"${info.getName} has no examples")
      pairs.foreach { case (query, expected) =>
        val actual = spark.sql(query.stripSuffix(";")).collect().head.toSeq.map(String.valueOf).mkString("\t")
        assert(actual == expected, s"$query")
      }
    }
  }

  test("the session entry point knows every function (it registers them all when the jar is for another line)") {
    assert(HashExprExtensions.FUNCTIONS.toSeq.map(_.toSeq) ==
      HashExprFunctions.functions.map { case (id, info, _) => Seq(id.funcName, info.getClassName) })
  }
}
