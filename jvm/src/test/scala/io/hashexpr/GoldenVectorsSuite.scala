package io.hashexpr

import java.io.File

import scala.jdk.CollectionConverters._

import com.fasterxml.jackson.databind.ObjectMapper

/** Replays the frozen format-v1 vectors (computed by the independent Python reference) through Spark SQL. */
class GoldenVectorsSuite extends SparkSuite {

  private case class Vector(name: String, sql: Seq[String], hex: String)

  private lazy val vectors: Seq[Vector] = {
    val json = new ObjectMapper().readTree(new File(root, "spec/vectors-v1.json"))
    assert(json.get("format_version").asInt() == CanonicalEncoder.FORMAT_VERSION)
    assert(json.get("seed").asLong() == CanonicalEncoder.SEED.toLong)
    json.get("vectors").elements().asScala.map { v =>
      Vector(v.get("name").asText(), v.get("args").elements().asScala.map(_.get("sql").asText()).toSeq,
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
}
