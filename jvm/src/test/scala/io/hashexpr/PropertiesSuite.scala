package io.hashexpr

/** The guarantees of docs/FORMAT.md, each as a query over Spark values. */
import org.apache.spark.sql.types.StructType

class PropertiesSuite extends SparkSuite {

  private def same(a: String, b: String): Boolean =
    one(s"SELECT record_hash($a) = record_hash($b)").getBoolean(0)

  private def assertSame(a: String, b: String): Unit = assert(same(a, b), s"record_hash($a) != record_hash($b)")
  private def assertDiffer(a: String, b: String): Unit = assert(!same(a, b), s"record_hash($a) == record_hash($b)")

  private def assertAllDiffer(args: String*): Unit = {
    val hashes = args.map(a => a -> hex(one(s"SELECT record_hash($a)").getAs[Array[Byte]](0)))
    val clashes = hashes.groupBy(_._2).values.filter(_.size > 1).map(_.map(_._1))
    assert(clashes.isEmpty, s"equal hashes: ${clashes.mkString("; ")}")
  }

  test("the result is 16 bytes, BINARY, never NULL") {
    val df = spark.sql("SELECT record_hash(NULL) AS h, record_hash(CAST(NULL AS STRING), NULL) AS h2")
    assert(df.schema.forall(f => f.dataType == org.apache.spark.sql.types.BinaryType && !f.nullable))
    val r = df.collect().head
    assert(r.getAs[Array[Byte]](0).length == 16 && r.getAs[Array[Byte]](1).length == 16)
  }

  test("NULL, '' and 'NULL' differ") {
    assertAllDiffer("CAST(NULL AS STRING)", "''", "'NULL'", "'null'")
  }

  test("string boundaries: ('ab','c') and ('a','bc') differ, in columns and in arrays") {
    assertDiffer("'ab', 'c'", "'a', 'bc'")
    assertDiffer("array('ab', 'c')", "array('a', 'bc')")
    assertDiffer("X'0102', X'03'", "X'01', X'0203'")
  }

  test("NULL position counts: ('a', NULL) and (NULL, 'a') differ") {
    assertDiffer("'a', NULL", "NULL, 'a'")
    assertDiffer("array(1, NULL, 3)", "array(NULL, 1, 3)")
  }

  test("nested array boundaries: [[1,2],[3]] and [[1],[2,3]] differ") {
    assertDiffer("array(array(1, 2), array(3))", "array(array(1), array(2, 3))")
  }

  test("array(NULL), array(), NULL array, [[]] all differ") {
    assertAllDiffer("array(CAST(NULL AS INT))", "CAST(array() AS ARRAY<INT>)", "CAST(NULL AS ARRAY<INT>)",
      "array(CAST(array() AS ARRAY<INT>))", "array(array(1), CAST(array() AS ARRAY<INT>))",
      "array(CAST(array() AS ARRAY<INT>), array(1))")
  }

  test("NULL struct differs from a struct of NULLs; empty map, NULL map and map(k, NULL) differ") {
    assertDiffer("CAST(NULL AS STRUCT<a: INT, b: STRING>)", "named_struct('a', CAST(NULL AS INT), 'b', CAST(NULL AS STRING))")
    assertAllDiffer("CAST(map() AS MAP<INT, INT>)", "CAST(NULL AS MAP<INT, INT>)", "map(1, CAST(NULL AS INT))")
  }

  test("the number of arguments counts: (1) and (1, NULL) differ; (NULL) and (NULL, NULL) differ") {
    assertDiffer("1", "1, NULL")
    assertDiffer("NULL", "NULL, NULL")
    assertDiffer("'a'", "'a', ''")
  }

  test("container shape counts: (1, 2), array(1, 2), struct(1, 2), map(1, 2) differ") {
    assertAllDiffer("1, 2", "array(1, 2)", "struct(1, 2)", "map(1, 2)")
  }

  test("logical kinds never collide: 1, '1', 1.0, true, DATE, TIMESTAMP, TIMESTAMP_NTZ, binary, decimal") {
    assertAllDiffer("1", "'1'", "1.0D", "true", "DATE'1970-01-02'", "TIMESTAMP'1970-01-01 00:00:00.000001 UTC'",
      "TIMESTAMP_NTZ'1970-01-01 00:00:00.000001'", "X'01'", "CAST(1 AS DECIMAL(1,0))", "INTERVAL '1' MONTH",
      "INTERVAL '0.000001' SECOND", "make_interval(0, 1)")
    assertAllDiffer("0", "''", "false", "0.0D", "X''", "CAST(0 AS DECIMAL(1,0))", "NULL")
  }

  test("integer widening keeps the hash") {
    Seq("TINYINT", "SMALLINT", "INT", "BIGINT").combinations(2).map(p => (p(0), p(1))).foreach { case (a, b) =>
      assertSame(s"CAST(-7 AS $a)", s"CAST(-7 AS $b)")
    }
    assertSame("CAST(127 AS TINYINT)", "127L")
  }

  test("a float hashes as its double widening") {
    Seq("1.5", "0.1", "-3.4028235E38", "1.0E-45", "'Infinity'", "'-Infinity'").foreach { v =>
      assertSame(s"CAST($v AS FLOAT)", s"CAST(CAST($v AS FLOAT) AS DOUBLE)")
    }
    assertDiffer("CAST(0.1 AS FLOAT)", "0.1D")
  }

  test("decimals equal in value hash the same at any precision and scale") {
    assertSame("CAST(1.5 AS DECIMAL(2,1))", "CAST(1.50 AS DECIMAL(10,2))")
    assertSame("CAST(1.5 AS DECIMAL(2,1))", "CAST(1.5 AS DECIMAL(38,20))")
    assertSame("CAST(-12345678901234567.5 AS DECIMAL(18,1))", "CAST(-12345678901234567.50 AS DECIMAL(38,2))")
    assertSame("CAST(0 AS DECIMAL(1,0))", "CAST(0 AS DECIMAL(38,10))")
    assertSame("CAST(100 AS DECIMAL(3,0))", "CAST(100 AS DECIMAL(30,5))")
    assertDiffer("CAST(1.5 AS DECIMAL(2,1))", "CAST(1.05 AS DECIMAL(3,2))")
    assertDiffer("CAST(1 AS DECIMAL(1,0))", "CAST(10 AS DECIMAL(2,0))")
  }

  test("-0.0 hashes as 0.0 and every NaN the same") {
    assertSame("-0.0D", "0.0D")
    assertSame("CAST(-0.0 AS FLOAT)", "0.0D")
    assertSame("CAST('NaN' AS DOUBLE)", "CAST('NaN' AS FLOAT)")
    assertSame("CAST('NaN' AS DOUBLE)", "-CAST('NaN' AS DOUBLE)")
    assertSame("CAST('NaN' AS DOUBLE)", "sqrt(-1.0D)")
    assertSame("array(-0.0D)", "array(0.0D)")
  }

  test("map entry order does not matter, also nested in arrays, structs and maps") {
    assertSame("map('a', 1, 'b', 2)", "map('b', 2, 'a', 1)")
    assertSame("array(map(1, 'x', 2, 'y'))", "array(map(2, 'y', 1, 'x'))")
    assertSame("named_struct('m', map(1, map('p', 1, 'q', 2), 2, map('r', 3)))",
      "named_struct('m', map(2, map('r', 3), 1, map('q', 2, 'p', 1)))")
    assertSame("map_from_arrays(array(3, 1, 2), array('c', 'a', 'b'))", "map(1, 'a', 2, 'b', 3, 'c')")
    assertDiffer("map('a', 1, 'b', 2)", "map('a', 2, 'b', 1)")
    assertDiffer("map('a', 1)", "map(1, 'a')")
  }

  test("declared nullability does not change the hash") {
    val df = spark.range(5).selectExpr("id", "CAST(id AS STRING) s", "array(id) a")
    val nullable = spark.createDataFrame(df.rdd, StructType(df.schema.map(_.copy(nullable = true))))
    assert(df.schema != nullable.schema)
    val h1 = hexes(df.selectExpr("record_hash(*)"))
    val h2 = hexes(nullable.selectExpr("record_hash(*)"))
    assert(h1 == h2)
  }

  test("the session time zone does not change the hash of a TIMESTAMP value") {
    val sql = "SELECT record_hash(t) FROM VALUES (TIMESTAMP'2024-03-10 12:00:00 UTC') AS v(t)"
    val utc = withConf("spark.sql.session.timeZone" -> "UTC")(hex(one(sql).getAs[Array[Byte]](0)))
    val la = withConf("spark.sql.session.timeZone" -> "America/Los_Angeles")(hex(one(sql).getAs[Array[Byte]](0)))
    assert(utc == la)
  }

  // Collations exist from Spark 4.0 on.
  if (LineFeatures.collations) test("strings equal under their collation hash the same, and only those") {
    val pairs = Seq(
      "'Abc' COLLATE UTF8_LCASE" -> "'aBC' COLLATE UTF8_LCASE",
      "'abc' COLLATE UTF8_LCASE" -> "'abd' COLLATE UTF8_LCASE",
      "'Café' COLLATE UNICODE_CI" -> "'CAFÉ' COLLATE UNICODE_CI",
      "'Café' COLLATE UNICODE_CI" -> "'Cafe' COLLATE UNICODE_CI",
      "'a  ' COLLATE UTF8_BINARY_RTRIM" -> "'a' COLLATE UTF8_BINARY_RTRIM",
      "'a  ' COLLATE UTF8_LCASE_RTRIM" -> "'A' COLLATE UTF8_LCASE_RTRIM",
      "'Abc' COLLATE UTF8_BINARY" -> "'Abc'",
      "'Abc'" -> "'abc'")
    val equalUnderCollation = pairs.map { case (a, b) =>
      val r = one(s"SELECT $a = $b, record_hash($a) = record_hash($b)")
      assert(r.getBoolean(0) == r.getBoolean(1), s"$a vs $b: equal ${r.getBoolean(0)}, same hash ${r.getBoolean(1)}")
      r.getBoolean(0)
    }
    assert(equalUnderCollation.count(identity) == 5)
  }

  test("CHAR and VARCHAR columns hash as their string values") {
    spark.sql("CREATE OR REPLACE TEMP VIEW cv AS SELECT CAST('ab' AS VARCHAR(5)) v, CAST('ab' AS CHAR(2)) c")
    assert(one("SELECT record_hash(v) = record_hash('ab'), record_hash(c) = record_hash('ab') FROM cv") ==
      org.apache.spark.sql.Row(true, true))
  }

  test("a calendar interval hashes all three fields") {
    assertAllDiffer("make_interval(0, 1, 0, 0, 0, 0, 0)", "make_interval(0, 0, 0, 1, 0, 0, 0)",
      "make_interval(0, 0, 0, 0, 0, 0, 1)", "make_interval(0, 0, 0, 0, 0, 0, 0)")
  }

  test("record_hash(*) hashes the columns in order; t.* and explicit columns agree") {
    spark.range(10).selectExpr("id", "CAST(id AS STRING) s", "id % 3 = 0 b").createOrReplaceTempView("t3")
    val r = spark.sql(
      "SELECT record_hash(*) = record_hash(id, s, b), record_hash(t3.*) = record_hash(id, s, b), " +
        "record_hash(*) = record_hash(s, id, b) FROM t3").collect()
    assert(r.forall(row => row.getBoolean(0) && row.getBoolean(1) && !row.getBoolean(2)))
  }
}
