package io.hashexpr

import java.nio.{ByteBuffer, ByteOrder}
import java.security.MessageDigest

import org.apache.spark.sql.DataFrame

class DatasetFingerprintSuite extends SparkSuite {

  private def fingerprint(df: DataFrame): String = df.selectExpr("dataset_fingerprint(*)").collect().head.getString(0)

  private lazy val data: DataFrame = spark.range(0, 5000).selectExpr(
    "id", "CAST(id * 3 AS STRING) AS s", "IF(id % 7 = 0, NULL, id / 3.0D) AS d",
    "map(id % 5, array(id)) AS m", "named_struct('a', id % 11, 'b', CAST(NULL AS DATE)) AS st")

  /** The fingerprint as docs/FORMAT.md section 5 defines it, from per-row record_hash values. */
  private def fromSpec(df: DataFrame, names: Seq[String], types: Seq[String]): String = {
    val rows = df.selectExpr("record_hash(*)").collect().map(_.getAs[Array[Byte]](0))
    val mod = BigInt(1) << 128
    val sum = rows.map(h => BigInt(1, h.reverse)).foldLeft(BigInt(0))((a, b) => (a + b) % mod)
    val schemaArgs = names.zip(types).flatMap { case (n, t) => Seq(s"'$n'", s"'$t'") }.mkString(", ")
    val schema = one(s"SELECT record_hash($schemaArgs)").getAs[Array[Byte]](0)
    val sumBytes = sum.toByteArray.reverse.padTo(17, 0.toByte).take(16)
    val sha = MessageDigest.getInstance("SHA-256")
    sha.update("hashexpr-fingerprint".getBytes("US-ASCII"))
    sha.update(1.toByte)
    sha.update(schema)
    sha.update(ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putLong(rows.length.toLong).array())
    sha.update(sumBytes)
    "hx1:" + sha.digest().map(b => f"${b & 0xff}%02x").mkString
  }

  test("equals the specification: SHA-256 of label, version, schema, count and the 128-bit sum") {
    val names = Seq("id", "s", "d", "m", "st")
    val types = Seq("bigint", "string", "double", "map<bigint,array<bigint>>", "struct<`a`:bigint,`b`:date>")
    assert(fingerprint(data) == fromSpec(data, names, types))
    val empty = data.limit(0)
    assert(fingerprint(empty) == fromSpec(empty, names, types))
  }

  test("independent of row order and partitioning, in every execution mode") {
    val expected = fingerprint(data)
    SparkSuite.Modes.foreach { m =>
      inMode(m) {
        assert(fingerprint(data.orderBy(org.apache.spark.sql.functions.rand(3))) == expected, m.name)
        assert(fingerprint(data.repartition(7)) == expected, m.name)
        assert(fingerprint(data.coalesce(1)) == expected, m.name)
      }
    }
  }

  test("changes with a value, a row, a duplicate, a column name or a type") {
    val base = fingerprint(data)
    val changes = Seq(
      "a value" -> data.selectExpr("IF(id = 42, id + 1, id) AS id", "s", "d", "m", "st"),
      "a removed row" -> data.where("id <> 42"),
      "a duplicate" -> data.union(data.where("id = 42")),
      "a column name" -> data.withColumnRenamed("s", "t"),
      "a type" -> data.selectExpr("CAST(id AS INT) AS id", "s", "d", "m", "st"))
    val results = changes.map { case (what, df) => what -> fingerprint(df) }
    results.foreach { case (what, fp) => assert(fp != base, s"$what did not change the fingerprint") }
    assert(results.map(_._2).distinct.size == results.size)
  }

  test("sums wrap around under ANSI mode instead of overflowing") {
    withConf("spark.sql.ansi.enabled" -> "true") {
      assert(fingerprint(spark.range(0, 200000).toDF()).startsWith("hx1:"))
    }
  }

  test("GROUP BY, FILTER and OVER give per-group fingerprints equal to fingerprinting each group alone") {
    data.createOrReplaceTempView("fp_data")
    val grouped = spark.sql(
      "SELECT id % 3 AS k, dataset_fingerprint(id, s) AS fp, " +
        "dataset_fingerprint(id, s) FILTER (WHERE d IS NOT NULL) AS fpf FROM fp_data GROUP BY id % 3")
      .collect().map(r => r.getLong(0) -> (r.getString(1), r.getString(2))).toMap
    (0L until 3L).foreach { k =>
      assert(grouped(k)._1 == one(s"SELECT dataset_fingerprint(id, s) FROM fp_data WHERE id % 3 = $k").getString(0))
      assert(grouped(k)._2 ==
        one(s"SELECT dataset_fingerprint(id, s) FROM fp_data WHERE id % 3 = $k AND d IS NOT NULL").getString(0))
    }
    val windowed = spark.sql(
      "SELECT DISTINCT id % 2 AS k, dataset_fingerprint(id, s) OVER (PARTITION BY id % 2) FROM fp_data")
      .collect().map(r => r.getLong(0) -> r.getString(1)).toMap
    assert(windowed(1L) == one("SELECT dataset_fingerprint(id, s) FROM fp_data WHERE id % 2 = 1").getString(0))
  }

  test("declared nullability does not change the fingerprint; bad input is refused like record_hash") {
    val nullable = spark.createDataFrame(data.rdd,
      org.apache.spark.sql.types.StructType(data.schema.map(_.copy(nullable = true))))
    assert(fingerprint(nullable) == fingerprint(data))
    val e = intercept[org.apache.spark.sql.AnalysisException](spark.sql("SELECT dataset_fingerprint()").collect())
    assert(e.getMessage.contains("`dataset_fingerprint` needs at least one argument"))
  }
}
