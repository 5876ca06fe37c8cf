package io.hashexpr

import org.apache.spark.sql.AnalysisException
import org.apache.spark.sql.functions.{call_function, col, upper}

/**
 * The names of by-name and fingerprint arguments (docs/FORMAT.md, section 6.1): the schema's column names,
 * whatever table, alias, subquery or typed case the query uses; an expression's name is its unqualified text.
 */
class ArgumentNamesSuite extends SparkSuite {

  private def setUp(): Unit = {
    spark.sql("SELECT * FROM VALUES ('x', 1, named_struct('b', 5)) AS v(s, id, a)").createOrReplaceTempView("qt")
    spark.sql("SELECT * FROM VALUES ('x', 1, named_struct('b', 5)) AS v(s, id, a)").createOrReplaceTempView("other")
  }

  private def value(sql: String): String = spark.sql(sql).collect().head.get(0) match {
    case b: Array[Byte] => hex(b)
    case other => String.valueOf(other)
  }

  /** Every query gives the same value; returns it. */
  private def same(queries: String*): String = {
    val values = queries.map(value)
    assert(values.distinct.size == 1, queries.zip(values).mkString("\n"))
    values.head
  }

  test("a column goes by its schema name, whatever case was typed") {
    setUp()
    Seq("record_hash_by_name", "dataset_fingerprint").foreach { f =>
      same(s"SELECT $f(s) FROM qt", s"SELECT $f(S) FROM qt", s"SELECT $f(qt.S) FROM qt",
        s"SELECT $f(*) FROM (SELECT s FROM qt)", s"SELECT $f(x.s) FROM qt AS x",
        s"SELECT $f(S) FROM (SELECT * FROM qt) AS sub")
    }
    // The same values under a name that differs only in case is another name.
    assert(value("SELECT record_hash_by_name(s) FROM qt") !=
      value("SELECT record_hash_by_name(S) FROM (SELECT s AS S FROM qt)"))
  }

  test("an expression goes by its unqualified text, the same over every table, alias and subquery") {
    setUp()
    Seq("record_hash_by_name", "dataset_fingerprint").foreach { f =>
      val h = same(s"SELECT $f(upper(s)) FROM qt", s"SELECT $f(upper(S)) FROM qt",
        s"SELECT $f(upper(x.s)) FROM qt AS x", s"SELECT $f(upper(s)) FROM other",
        s"SELECT $f(upper(s)) FROM (SELECT * FROM qt)", s"SELECT $f(upper(t.s)) FROM (SELECT * FROM qt) AS t",
        // ... and equals a column of that name.
        s"SELECT $f(`upper(s)`) FROM (SELECT upper(s) AS `upper(s)` FROM qt)")
      assert(h != value(s"SELECT $f(lower(s)) FROM qt"))
    }
    same("SELECT record_hash_by_name(id + 1) FROM qt", "SELECT record_hash_by_name(ID + 1) FROM qt AS q",
      "SELECT record_hash_by_name(`(id + 1)`) FROM (SELECT id + 1 AS `(id + 1)` FROM qt)")
  }

  test("DataFrame aliases and typed case do not count; an aliased argument goes by its alias") {
    setUp()
    val df = spark.table("qt")
    val plain = df.select(call_function("record_hash_by_name", upper(col("s")))).collect().head.getAs[Array[Byte]](0)
    val aliased = df.alias("zz").select(call_function("record_hash_by_name", upper(col("zz.S"))))
      .collect().head.getAs[Array[Byte]](0)
    assert(hex(plain) == hex(aliased))
    val named = df.select(call_function("record_hash_by_name", upper(col("s")).as("u"))).collect().head
      .getAs[Array[Byte]](0)
    assert(hex(named) == value("SELECT record_hash_by_name(u) FROM (SELECT upper(s) AS u FROM qt)"))
  }

  test("a struct field goes by its field name, as Spark names the column it selects") {
    setUp()
    same("SELECT record_hash_by_name(a.b) FROM qt", "SELECT record_hash_by_name(A.B) FROM qt",
      "SELECT record_hash_by_name(*) FROM (SELECT a.b FROM qt)", "SELECT record_hash_by_name(b) FROM (SELECT 5 AS b)")
  }

  test("names inside subqueries, CTEs and lambda functions follow the same rule") {
    setUp()
    same("SELECT record_hash_by_name(s) FROM qt", "SELECT (SELECT record_hash_by_name(S) FROM qt)",
      "WITH c AS (SELECT * FROM qt) SELECT record_hash_by_name(S) FROM c")
    // A lambda variable goes by the name it was given, as a column would.
    same("SELECT transform(array(1), x -> record_hash_by_name(x))[0]",
      "SELECT record_hash_by_name(x) FROM VALUES (1) AS t(x)")
    same("SELECT transform(array(1), x -> record_hash_by_name(x + 1))[0]",
      "SELECT record_hash_by_name(`(x + 1)`) FROM VALUES (2) AS t(`(x + 1)`)")
  }

  test("two arguments naming one column in different case are duplicates") {
    setUp()
    val e = intercept[AnalysisException](spark.sql("SELECT record_hash_by_name(id, ID) FROM qt").collect())
    assert(e.getMessage.contains("the name `id` appears more than once"))
  }

  test("under spark.sql.caseSensitive=true names are the schema's too, and differ by case") {
    withConf("spark.sql.caseSensitive" -> "true") {
      val h = same("SELECT record_hash_by_name(s) FROM VALUES ('x') AS t(s)",
        "SELECT record_hash_by_name(*) FROM VALUES ('x') AS t(s)")
      assert(h != value("SELECT record_hash_by_name(S) FROM VALUES ('x') AS t(S)"))
      assert(value("SELECT record_hash_by_name(s, S) FROM VALUES ('x', 'y') AS t(s, S)") ==
        value("SELECT record_hash_by_name(S, s) FROM VALUES ('x', 'y') AS t(s, S)"))
    }
    assert(value("SELECT record_hash_by_name(s) FROM VALUES ('x') AS t(s)") ==
      value("SELECT record_hash_by_name(s) FROM VALUES ('x') AS t(s)"))
  }

  test("names are taken in persistent views and window, group and filter clauses alike") {
    setUp()
    val grouped = same("SELECT dataset_fingerprint(S) FROM qt GROUP BY ID",
      "SELECT dataset_fingerprint(s) FILTER (WHERE ID > 0) FROM qt",
      "SELECT dataset_fingerprint(s) OVER (PARTITION BY ID) FROM qt")
    assert(grouped == value("SELECT dataset_fingerprint(*) FROM (SELECT s FROM qt)"))
    spark.sql("CREATE OR REPLACE VIEW hx_names_view AS " +
      "SELECT record_hash_by_name(S, upper(S)) AS h FROM VALUES ('x') AS v(s)")
    try {
      assert(value("SELECT h FROM hx_names_view") ==
        value("SELECT record_hash_by_name(s, upper(s)) FROM VALUES ('x') AS v(s)"))
    } finally spark.sql("DROP VIEW hx_names_view")
  }

  test("type text: an explicit UTF8_BINARY collation and CHAR/VARCHAR fingerprint as STRING in any setting") {
    val plain = value("SELECT dataset_fingerprint(c) FROM VALUES ('a') AS t(c)")
    if (LineFeatures.collations) {
      assert(value("SELECT dataset_fingerprint(c) FROM (SELECT 'a' COLLATE UTF8_BINARY AS c)") == plain)
      assert(value("SELECT dataset_fingerprint(c) FROM (SELECT 'a' COLLATE UTF8_LCASE AS c)") != plain)
    }
    Seq("true", "false").foreach { preserve =>
      withConf("spark.sql.preserveCharVarcharTypeInfo" -> preserve) {
        assert(value("SELECT dataset_fingerprint(c) FROM (SELECT CAST('a' AS CHAR(1)) AS c)") == plain, preserve)
        assert(value("SELECT dataset_fingerprint(c) FROM (SELECT CAST('a' AS VARCHAR(3)) AS c)") == plain, preserve)
      }
    }
    assert(DatasetFingerprint.typeString(org.apache.spark.sql.types.CharType(3)) == "string")
  }
}
