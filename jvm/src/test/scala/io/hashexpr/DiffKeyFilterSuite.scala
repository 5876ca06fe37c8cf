package io.hashexpr

import org.apache.spark.SparkException
import org.apache.spark.sql.{AnalysisException, DataFrame}

class DiffKeyFilterSuite extends SparkSuite {

  /** Key hashes of the ids 0 until n, spread over partitions. */
  private def keys(n: Int, partitions: Int): DataFrame =
    spark.range(0, n, 1, partitions).selectExpr("id", "record_key(id) AS kh")

  /** The filter built from `from`, as a scalar subquery, asked for every key of 0 until `n`. */
  private def held(from: String, bits: Int, n: Int, partitions: Int = 3): Set[Long] = {
    keys(n, partitions).createOrReplaceTempView("dkf_keys")
    spark.sql(
      s"""SELECT id FROM dkf_keys WHERE diff_key_filter_contains(
         |  (SELECT diff_key_filter(kh, $bits) FROM dkf_keys WHERE $from), kh)""".stripMargin)
      .collect().map(_.getLong(0)).toSet
  }

  /** The bit a key hash sets, computed here from its bytes: the little-endian long at bytes 8 to 15. */
  private def bit(hash: Array[Byte], bits: Int): Long =
    java.nio.ByteBuffer.wrap(hash, 8, 8).order(java.nio.ByteOrder.LITTLE_ENDIAN).getLong & (bits - 1)

  test("holds every key it was built from, in every execution mode and partitioning") {
    SparkSuite.Modes.foreach { m =>
      inMode(m) {
        Seq(1, 4, 13).foreach { partitions =>
          val got = held("id % 37 = 0", 1 << 20, 5000, partitions)
          assert((0L until 5000L by 37).toSet.subsetOf(got), s"${m.name}, $partitions partitions")
        }
      }
    }
  }

  test("holds other keys only when they share a bit with one it was built from") {
    val bits = 1 << 12
    val hashes = keys(5000, 1).collect().map(r => r.getLong(0) -> r.getAs[Array[Byte]](1)).toMap
    val set = hashes.collect { case (id, h) if id % 50 == 0 => bit(h, bits) }.toSet
    val expected = hashes.collect { case (id, h) if set.contains(bit(h, bits)) => id }.toSet
    val got = held("id % 50 = 0", bits, 5000)
    assert(got == expected)
    // 100 keys in 4,096 bits: about 2.4 % of the others share a bit.
    assert(got.size < 100 + 0.05 * 4900, got.size)
  }

  test("the bitmap is the same whether tasks send it sparse or dense") {
    // 4,000 keys in 1,024 bits: tasks send whole bitmaps; 3 keys in 2^26 bits: tasks send set bits.
    val sql = (from: String, bits: Int, partitions: Int) =>
      keys(4000, partitions).where(from).selectExpr(s"diff_key_filter(kh, $bits)").collect().head.getAs[Array[Byte]](0)
    assert(sql("true", 1024, 9).sameElements(sql("true", 1024, 1)))
    assert(sql("id < 3", 1 << 26, 9).sameElements(sql("id < 3", 1 << 26, 1)))
    val bytes = sql("id < 3", 1 << 26, 9)
    assert(bytes.length == (1 << 23) && bytes.map(b => Integer.bitCount(b & 0xFF)).sum == 3)
  }

  test("NULL key hashes set no bit and are held as NULL; no keys give an empty filter") {
    val f = "(SELECT diff_key_filter(IF(id = 1, NULL, record_key(id)), 64) FROM range(1, 2) AS t(id))"
    val got = spark.sql(
      s"""SELECT diff_key_filter_contains($f, record_key(1)), diff_key_filter_contains($f, CAST(NULL AS BINARY)),
         |       $f = X'0000000000000000'""".stripMargin).collect().head
    assert(got.get(0) == false && got.isNullAt(1) && got.getBoolean(2))
  }

  test("a constant filter is accepted too") {
    val ones = "X'" + "FF" * 8 + "'"
    assert(spark.sql(s"SELECT diff_key_filter_contains($ones, record_key(7))").collect().head.getBoolean(0))
  }

  test("arguments of the wrong kind are analysis errors naming the function") {
    val bad = Seq(
      "diff_key_filter(id, 64)" -> ("`diff_key_filter`", "BINARY key hash"),
      "diff_key_filter(record_key(id), id)" -> ("`diff_key_filter`", "constant integer number of bits"),
      "diff_key_filter(record_key(id), 100)" -> ("`diff_key_filter`", "power of two from 64 to 67108864 bits, not 100"),
      "diff_key_filter(record_key(id), 32)" -> ("`diff_key_filter`", "not 32"),
      "diff_key_filter(record_key(id), 134217728)" -> ("`diff_key_filter`", "not 134217728"),
      "diff_key_filter_contains(record_key(id), record_key(id))" ->
        ("`diff_key_filter_contains`", "a constant or an uncorrelated scalar subquery"),
      "diff_key_filter_contains(1, record_key(id))" -> ("`diff_key_filter_contains`", "BINARY filter"),
      "diff_key_filter_contains(X'00', id)" -> ("`diff_key_filter_contains`", "BINARY key hash"))
    bad.foreach { case (call, (name, message)) =>
      val e = intercept[AnalysisException](spark.sql(s"SELECT $call FROM range(3) AS t(id)").collect())
      assert(e.getMessage.contains(name) && e.getMessage.contains(message), call)
    }
  }

  test("key hashes shorter than 16 bytes and filters of the wrong size fail the query with the reason") {
    val bad = Seq(
      "SELECT diff_key_filter(X'0102', 64) FROM range(3)" -> "a key hash must have at least 16 bytes, got 2",
      "SELECT diff_key_filter_contains(X'00000000000000000000', record_key(id)) FROM range(3) AS t(id)" ->
        "the filter must be a result of diff_key_filter, got 10 bytes")
    bad.foreach { case (query, message) =>
      SparkSuite.Modes.foreach { m =>
        inMode(m) {
          val e = intercept[Exception](spark.sql(query).collect())
          assert(e.isInstanceOf[SparkException] || e.isInstanceOf[IllegalArgumentException], query)
          assert(Iterator.iterate[Throwable](e)(_.getCause).takeWhile(_ != null).exists(t =>
            Option(t.getMessage).exists(_.contains(message))), s"$query (${m.name})")
        }
      }
    }
  }
}
