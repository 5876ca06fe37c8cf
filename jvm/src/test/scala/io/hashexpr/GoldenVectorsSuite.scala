package io.hashexpr

import java.io.File

import com.fasterxml.jackson.databind.ObjectMapper

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

  private def query(v: Vector): String = s"SELECT hex(record_hash(${v.sql.mkString(", ")}))"

  test("the vector file covers the format") {
    assert(vectors.size >= 80)
    assert(vectors.map(_.name).distinct.size == vectors.size)
  }

  test("constant-folded (planning-time eval) results equal every vector") {
    vectors.foreach { v =>
      assert(one(query(v)).getString(0).toLowerCase == v.hex, s"${v.name}: ${query(v)}")
    }
  }

  SparkSuite.Modes.foreach { mode =>
    test(s"${mode.name} results equal every vector") {
      inMode(mode) {
        vectors.foreach { v =>
          val df = spark.sql(query(v))
          // The hash must run at execution time in this mode, not be folded into a literal.
          assert(df.queryExecution.optimizedPlan.expressions.exists(_.exists(_.isInstanceOf[RecordHash])),
            s"${v.name} was folded")
          assert(df.collect().head.getString(0).toLowerCase == v.hex, s"${v.name}: ${query(v)}")
        }
      }
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
    keys.foreach { v =>
      val args = TestJson.elements(v.get("args")).map(_.get("sql").asText()).mkString(", ")
      val options = v.get("key_options").asText()
      val queries = s"SELECT hex(record_key_with('$options', $args))" +:
        (if (options.isEmpty) Seq(s"SELECT hex(record_key($args))") else Nil)
      val expected = Option(v.get("hex")).filterNot(_.isNull).map(_.asText())
      def check(sql: String, where: String): Unit = Option(v.get("error")) match {
        case Some(error) =>
          val e = intercept[Exception](spark.sql(sql).collect())
          assert(Iterator.iterate[Throwable](e)(_.getCause).takeWhile(_ != null)
            .exists(_.getMessage.contains(error.asText())), s"${v.get("name")} $where: $sql")
        case None =>
          assert(Option(one(sql).getString(0)).map(_.toLowerCase) == expected, s"${v.get("name")} $where: $sql")
      }
      queries.foreach { sql =>
        check(sql, "folded")
        SparkSuite.Modes.foreach(m => inMode(m)(check(sql, m.name)))
      }
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
}
