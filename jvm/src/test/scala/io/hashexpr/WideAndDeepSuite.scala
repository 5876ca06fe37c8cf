package io.hashexpr

/** Very wide rows and deeply nested values compile (split methods, no 64 KB failures) and agree across modes. */
class WideAndDeepSuite extends SparkSuite {

  private def agreeAcrossModes(sql: String): Seq[String] = {
    val results = SparkSuite.Modes.map(m => m -> inMode(m)(hexes(spark.sql(sql))))
    results.tail.foreach { case (m, r) => assert(r == results.head._2, s"${m.name} differs from interpreted") }
    results.head._2
  }

  test("1600 columns of mixed types") {
    val cols = (0 until 1600).map { i =>
      i % 5 match {
        case 0 => s"id + $i AS c$i"
        case 1 => s"CAST(id * $i AS STRING) AS c$i"
        case 2 => s"IF(id % 3 = 0, NULL, id / ${i + 1}.0D) AS c$i"
        case 3 => s"array(id, $i) AS c$i"
        case _ => s"named_struct('a', id, 'b', map('k', $i)) AS c$i"
      }
    }
    spark.range(50).selectExpr(cols: _*).createOrReplaceTempView("wide")
    val hashes = agreeAcrossModes("SELECT record_hash(*) FROM wide")
    assert(hashes.size == 50 && hashes.distinct.size == 50)
  }

  test("a struct of 1200 fields") {
    val fields = (0 until 1200).map(i => s"'f$i', id + $i").mkString(", ")
    spark.range(20).selectExpr(s"named_struct($fields) AS s").createOrReplaceTempView("widestruct")
    assert(agreeAcrossModes("SELECT record_hash(s) FROM widestruct").distinct.size == 20)
  }

  test("values nested 60 levels deep (arrays, structs and maps)") {
    val deepArray = (1 to 60).foldLeft("id")((e, _) => s"array($e)")
    val deepStruct = (1 to 60).foldLeft("id")((e, i) => s"named_struct('l$i', $e, 'n', CAST(NULL AS STRING))")
    val deepMix = (1 to 30).foldLeft("CAST(id AS STRING)")((e, i) => s"map($i, array($e))")
    spark.range(10).selectExpr(s"$deepArray AS a", s"$deepStruct AS s", s"$deepMix AS m")
      .createOrReplaceTempView("deep")
    assert(agreeAcrossModes("SELECT record_hash(a, s, m) FROM deep").distinct.size == 10)
  }
}
