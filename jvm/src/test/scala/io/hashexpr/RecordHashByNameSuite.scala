package io.hashexpr

import org.apache.spark.sql.AnalysisException

class RecordHashByNameSuite extends SparkSuite {

  private def byName(sql: String): Seq[String] =
    hexes(spark.sql(s"SELECT record_hash_by_name(*) FROM ($sql) ORDER BY 1"))

  test("column order does not matter") {
    assert(byName("SELECT 1 AS a, 'x' AS b, array(2) AS c") == byName("SELECT array(2) AS c, 'x' AS b, 1 AS a"))
  }

  test("adding a column that is NULL keeps existing hashes, anywhere in the row") {
    val base = byName("SELECT id AS a, CAST(id AS STRING) AS b FROM range(20)")
    assert(byName("SELECT id AS a, CAST(NULL AS INT) AS added, CAST(id AS STRING) AS b FROM range(20)") == base)
    assert(byName("SELECT CAST(NULL AS MAP<INT, INT>) AS z, id AS a, CAST(id AS STRING) AS b FROM range(20)") == base)
  }

  test("NULL still differs from every value") {
    val base = byName("SELECT 1 AS a")
    Seq("''", "0", "false", "CAST(array() AS ARRAY<INT>)", "named_struct('x', CAST(NULL AS INT))").foreach { v =>
      assert(byName(s"SELECT 1 AS a, $v AS c") != base, v)
    }
  }

  test("names count: the same values under other names differ; values move with their names") {
    assert(byName("SELECT 1 AS a, 2 AS b") != byName("SELECT 1 AS a, 2 AS c"))
    assert(byName("SELECT 1 AS a, 2 AS b") != byName("SELECT 2 AS a, 1 AS b"))
  }

  test("by-name and positional hashes of the same values differ") {
    assert(one("SELECT record_hash_by_name(a) = record_hash(a) FROM VALUES (1) AS t(a)").getBoolean(0) == false)
  }

  test("the bytes are those of docs/FORMAT.md section 6, in every mode") {
    // Built by hand: 81, then ('a', 1) and ('b', 'x') in name order, then 00; NULL field c is left out.
    val int1 = Array[Byte](0x02, 1, 0, 0, 0, 0, 0, 0, 0)
    val bytes = Array(0x81.toByte) ++ stringValue("a") ++ int1 ++ stringValue("b") ++ stringValue("x") ++
      Array[Byte](0)
    val expected = streamHash(bytes)
    val sql = "SELECT record_hash_by_name(b, c, a) FROM VALUES ('x', CAST(NULL AS INT), 1) AS t(b, c, a)"
    assert(hex(one(sql).getAs[Array[Byte]](0)) == expected)
    SparkSuite.Modes.foreach(m => inMode(m)(assert(hex(one(sql).getAs[Array[Byte]](0)) == expected, m.name)))
  }

  test("duplicate names are refused") {
    val e = intercept[AnalysisException](spark.sql("SELECT record_hash_by_name(a, a) FROM VALUES (1) AS t(a)").collect())
    assert(e.getMessage.contains("the name `a` appears more than once"))
  }
}
