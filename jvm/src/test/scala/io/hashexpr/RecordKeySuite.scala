package io.hashexpr

import org.apache.spark.sql.AnalysisException

class RecordKeySuite extends SparkSuite {

  private def hexOf(sql: String): String = hex(one(s"SELECT $sql").getAs[Array[Byte]](0))

  test("the bytes are those of docs/FORMAT.md section 9, in every mode") {
    val expected =
      streamHash(Array(0x82.toByte) ++ stringValue("hub") ++ u32(2) ++ stringValue("C-042") ++ Array[Byte](0))
    val sql = "SELECT record_key_with('salt=hub', k, n) FROM VALUES ('C-042', CAST(NULL AS INT)) AS t(k, n)"
    assert(hex(one(sql).getAs[Array[Byte]](0)) == expected)
    SparkSuite.Modes.foreach(m => inMode(m)(assert(hex(one(sql).getAs[Array[Byte]](0)) == expected, m.name)))
    assert(hexOf("record_key('C-042')") ==
      streamHash(Array(0x82.toByte) ++ stringValue("") ++ u32(1) ++ stringValue("C-042")))
  }

  test("a key hash never equals the record hash or by-name hash of the same values") {
    val r = one("SELECT record_key(a) = record_hash(a), record_key(a) = record_hash_by_name(a) FROM VALUES ('x') AS t(a)")
    assert(!r.getBoolean(0) && !r.getBoolean(1))
  }

  test("salts separate hash spaces") {
    assert(hexOf("record_key_with('salt=hub_a', 'C-1')") != hexOf("record_key_with('salt=hub_b', 'C-1')"))
    assert(hexOf("record_key_with('salt=', 'C-1')") == hexOf("record_key('C-1')"))
  }

  test("normalisation is opt-in, applies to top-level strings only") {
    assert(hexOf("record_key(' c-1 ')") != hexOf("record_key('C-1')"))
    assert(hexOf("record_key_with('trim; case=upper', ' c-1 ')") == hexOf("record_key_with('trim;case=upper', 'C-1')"))
    assert(hexOf("record_key_with('case=lower', 'STRASSE')") == hexOf("record_key_with('case=lower', 'strasse')"))
    assert(hexOf("record_key_with('case=upper', 'straße')") == hexOf("record_key_with('case=upper', 'STRASSE')"))
    assert(hexOf("record_key_with('case=upper', array('a'))") != hexOf("record_key_with('case=upper', array('A'))"))
    assert(hexOf("record_key_with('trim', 12)") == hexOf("record_key(12)"))
    assert(hexOf("record_key_with('empty_as_null', '  ')") != hexOf("record_key(CAST(NULL AS STRING))"))
    assert(hexOf("record_key_with('trim; empty_as_null', '  ')") == hexOf("record_key(CAST(NULL AS STRING))"))
  }

  test("normalised keys of non-nullable and nullable columns agree in every mode") {
    val sql = "SELECT hex(record_key_with('trim; case=upper', concat(' c-', CAST(id AS STRING)))), " +
      "hex(record_key_with('trim; empty_as_null', IF(id % 2 = 0, '  ', CAST(id AS STRING)))) FROM range(4)"
    val expected = SparkSuite.Modes.map(m => inMode(m)(spark.sql(sql).collect().map(_.toSeq).toSeq))
    assert(expected.distinct.size == 1)
    assert(expected.head.head.head == hexOf("record_key_with('case=upper', 'C-0')").toUpperCase)
  }

  test("all-NULL keys: hashed by default, NULL or an error on request; no rows are dropped") {
    val df = spark.sql("SELECT * FROM VALUES (1, 'a'), (2, NULL), (3, '') AS t(id, k)")
    df.createOrReplaceTempView("keys")
    val hashed = spark.sql("SELECT id, record_key(k) FROM keys").collect()
    assert(hashed.length == 3 && hashed.forall(r => !r.isNullAt(1)))
    val nulls = spark.sql("SELECT id, record_key_with('null_key=null; empty_as_null', k) AS h FROM keys ORDER BY id")
      .collect().map(r => r.isNullAt(1))
    assert(nulls.toSeq == Seq(false, true, true))
    SparkSuite.Modes.foreach { m =>
      inMode(m) {
        val e = intercept[Exception](spark.sql("SELECT record_key_with('null_key=error', k) FROM keys").collect())
        assert(Iterator.iterate[Throwable](e)(_.getCause).takeWhile(_ != null)
          .exists(_.getMessage.contains("record_key: every key part is NULL")), m.name)
      }
    }
    assert(spark.sql("SELECT record_key_with('null_key=error', id, k) FROM keys").count() == 3)
  }

  test("bad options are refused at analysis with the accepted syntax") {
    val bad = Seq("'case=title'", "'slat=x'", "k", "CAST(NULL AS STRING)")
    bad.foreach { o =>
      val e = intercept[AnalysisException](
        spark.sql(s"SELECT record_key_with($o, k) FROM VALUES ('a') AS t(k)").collect())
      assert(e.getMessage.contains("the first argument of `record_key_with` must be"), o)
      assert(e.getMessage.contains("null_key=hash|null|error"), o)
    }
    val none = intercept[AnalysisException](spark.sql("SELECT record_key_with('trim')").collect())
    assert(none.getMessage.contains("`record_key_with` needs at least one argument"))
  }
}
