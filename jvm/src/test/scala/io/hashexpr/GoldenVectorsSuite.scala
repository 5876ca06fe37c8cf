package io.hashexpr

import java.io.File

import com.fasterxml.jackson.databind.{JsonNode, ObjectMapper}

/** Replays the frozen format-v1 vectors (computed by the independent Python reference) through Spark SQL. */
class GoldenVectorsSuite extends SparkSuite {

  private case class Vector(name: String, sql: Seq[String], hex: String)

  private lazy val vectors: Seq[Vector] = {
    val json = new ObjectMapper().readTree(new File(root, "spec/vectors-v1.json"))
    assert(json.get("format_version").asInt() == CanonicalEncoder.FORMAT_VERSION)
    assert(json.get("seed").asLong() == CanonicalEncoder.SEED.toLong)
    TestJson.elements(json.get("vectors")).filter(TestJson.onThisLine).map { v =>
      Vector(v.get("name").asText(), TestJson.elements(v.get("args")).map(_.get("sql").asText()).toSeq,
        v.get("hex").asText())
    }.toSeq
  }

  private def expression(v: Vector): String = s"hex(record_hash(${v.sql.mkString(", ")}))"

  /** Each expression's result (lower-case, or null), from queries of `Batch` columns each: a query per vector
    * spent most of its time planning. With `mustRun`, each column must still hold a `RecordHash` after
    * optimisation, so that the hash runs in the mode under test rather than being folded into a literal. */
  private def results(expressions: Seq[String], mustRun: Boolean = false): Seq[Option[String]] =
    expressions.grouped(GoldenVectorsSuite.Batch).flatMap { group =>
      val df = spark.sql(group.zipWithIndex.map { case (e, i) => s"$e AS c$i" }.mkString("SELECT ", ", ", ""))
      if (mustRun) {
        val running = df.queryExecution.optimizedPlan.expressions.count(_.exists(_.isInstanceOf[RecordHash]))
        assert(running == group.size, s"${group.size - running} of these were folded: ${group.mkString(", ")}")
      }
      val row = df.collect().head
      group.indices.map(i => Option(row.getString(i)).map(_.toLowerCase))
    }.toSeq

  /** Every vector's result against its hex, naming the first that differs. */
  private def checkVectors(where: String, mustRun: Boolean): Unit =
    vectors.zip(results(vectors.map(expression), mustRun)).foreach { case (v, got) =>
      assert(got.contains(v.hex), s"${v.name} ($where): SELECT ${expression(v)} gave ${got.orNull}")
    }

  test("the vector file covers the format") {
    assert(vectors.size >= 80)
    assert(vectors.map(_.name).distinct.size == vectors.size)
  }

  test("constant-folded (planning-time eval) results equal every vector") {
    checkVectors("folded", mustRun = false)
  }

  SparkSuite.Modes.foreach { mode =>
    test(s"${mode.name} results equal every vector") {
      inMode(mode)(checkVectors(mode.name, mustRun = true))
    }
  }

  private def vectorFile(name: String) = {
    val json = new ObjectMapper().readTree(new File(root, s"spec/$name"))
    assert(json.get("format_version").asInt() == CanonicalEncoder.FORMAT_VERSION)
    TestJson.elements(json.get("vectors")).filter(TestJson.onThisLine)
  }

  test("by-name vectors (spec/by-name-vectors-v1.json), constant-folded and in every mode") {
    val byName = vectorFile("by-name-vectors-v1.json")
    assert(byName.size >= 30)
    byName.foreach { v =>
      val columns = TestJson.elements(v.get("args"))
        .map(a => s"${a.get("sql").asText()} AS `${a.get("name").asText().replace("`", "``")}`").mkString(", ")
      val sql = s"SELECT hex(record_hash_by_name(*)) FROM (SELECT $columns)"
      val expected = v.get("hex").asText()
      assert(one(sql).getString(0).toLowerCase == expected, s"${v.get("name")}: $sql")
      SparkSuite.Modes.foreach(m => inMode(m)(assert(one(sql).getString(0).toLowerCase == expected, m.name)))
    }
  }

  test("key vectors (spec/key-vectors-v1.json), constant-folded and in every mode") {
    val keys = vectorFile("key-vectors-v1.json")
    assert(keys.size >= 100)
    val (failing, hashing) = keys.partition(v => v.has("error") && !v.get("error").isNull)
    // record_key_with with the vector's options, and record_key too where they are the defaults.
    def expressions(v: JsonNode): Seq[String] = {
      val args = TestJson.elements(v.get("args")).map(_.get("sql").asText()).mkString(", ")
      val options = v.get("key_options").asText()
      s"hex(record_key_with('$options', $args))" +: (if (options.isEmpty) Seq(s"hex(record_key($args))") else Nil)
    }
    val cases = hashing.flatMap { v =>
      val expected = Option(v.get("hex")).filterNot(_.isNull).map(_.asText())
      expressions(v).map(e => (v.get("name").asText(), e, expected))
    }
    def check(where: String): Unit = cases.zip(results(cases.map(_._2))).foreach { case ((name, e, expected), got) =>
      assert(got == expected, s"$name ($where): SELECT $e gave ${got.orNull}")
    }
    check("folded")
    SparkSuite.Modes.foreach(m => inMode(m)(check(m.name)))
    // A key that cannot hash fails a query of its own, folded and in every mode.
    for (v <- failing; e <- expressions(v)) {
      val sql = s"SELECT $e"
      def refused(where: String): Unit = {
        val error = intercept[Exception](spark.sql(sql).collect())
        assert(Iterator.iterate[Throwable](error)(_.getCause).takeWhile(_ != null)
          .exists(_.getMessage.contains(v.get("error").asText())), s"${v.get("name")} $where: $sql")
      }
      refused("folded")
      SparkSuite.Modes.foreach(m => inMode(m)(refused(m.name)))
    }
  }

  test("fingerprint vectors (spec/fingerprint-vectors-v1.json) in every mode") {
    val fingerprints = vectorFile("fingerprint-vectors-v1.json")
    assert(fingerprints.size >= 10)
    fingerprints.foreach { v =>
      val sql = s"SELECT dataset_fingerprint(*) FROM (${v.get("sql").asText()})"
      val expected = v.get("fingerprint").asText()
      assert(one(sql).getString(0) == expected, s"${v.get("name")}: $sql")
      SparkSuite.Modes.foreach(m => inMode(m)(assert(one(sql).getString(0) == expected, m.name)))
    }
  }

  test("SHA-256 and HMAC-SHA-256 vectors (spec/sha256-vectors-v1.json), constant-folded and in every mode") {
    val sha = vectorFile("sha256-vectors-v1.json")
    assert(sha.size >= 15)
    sha.foreach { v =>
      val (function, options) = (v.get("function").asText(), v.get("options").asText().replace("'", "''"))
      val args = TestJson.elements(v.get("args"))
      val sql = if (function == "record_hash_by_name_with") {
        val columns = args.map(a => s"${a.get("sql").asText()} AS `${a.get("name").asText().replace("`", "``")}`")
        s"SELECT hex($function('$options', *)) FROM (SELECT ${columns.mkString(", ")})"
      } else {
        s"SELECT hex($function('$options', ${args.map(_.get("sql").asText()).mkString(", ")}))"
      }
      val expected = v.get("hex").asText()
      assert(one(sql).getString(0).toLowerCase == expected, s"${v.get("name")}: $sql")
      SparkSuite.Modes.foreach(m => inMode(m)(assert(one(sql).getString(0).toLowerCase == expected, m.name)))
    }
  }

  test("lthash16 fingerprint vectors (spec/lthash-vectors-v1.json) in every mode") {
    val lthash = vectorFile("lthash-vectors-v1.json")
    assert(lthash.size >= 9)
    lthash.foreach { v =>
      val options = v.get("options").asText().replace("'", "''")
      val sql = s"SELECT dataset_fingerprint_with('$options', *) FROM (${v.get("sql").asText()})"
      val expected = v.get("fingerprint").asText()
      assert(one(sql).getString(0) == expected, s"${v.get("name")}: $sql")
      SparkSuite.Modes.foreach(m => inMode(m)(assert(one(sql).getString(0) == expected, m.name)))
    }
  }
}

object GoldenVectorsSuite {
  /** Columns per query: few enough that whole-stage codegen keeps every column in one stage. */
  val Batch = 24
}
