package io.hashexpr

import org.apache.spark.SparkException
import org.apache.spark.sql.{AnalysisException, DataFrame, Row}

class DiffBucketsSuite extends SparkSuite {

  private val Buckets = 64

  /**
   * Old and new rows (side, bucket, digest): bucket -1 rows are unmatched, some buckets hold the same rows in
   * another order or with one more duplicate, a few rows change a value.
   */
  private lazy val sides: DataFrame = {
    val old = spark.range(0, 3000).selectExpr(
      "0 AS side", "IF(id % 97 = 0, -1, CAST(id % 64 AS INT)) AS bucket", "record_hash(id, id % 13) AS digest")
    val changed = spark.range(0, 3000).selectExpr(
      "1 AS side", "IF(id % 97 = 0, -1, CAST(id % 64 AS INT)) AS bucket",
      "record_hash(id, IF(id IN (5, 77, 130), -1, id % 13)) AS digest")
    // A duplicate of an old row in bucket 9 (a multiset with one more element differs).
    val duplicate = old.where("id = 9").selectExpr("1 AS side", "bucket", "digest")
    old.union(changed.where("id <> 200")).union(duplicate)
  }

  private def found(df: DataFrame, buckets: Int = Buckets): Row =
    df.selectExpr(s"diff_buckets(side, bucket, $buckets, digest) AS f").collect().head.getStruct(0)

  /** The result computed from the collected rows, comparing each bucket's digests as sorted lists. */
  private def reference(df: DataFrame): Seq[Any] = {
    val rows = df.collect().map(r => (r.getInt(0), r.getInt(1), hex(r.getAs[Array[Byte]](2))))
    def side(s: Int) = rows.filter(_._1 == s)
    val matched = rows.filter(_._2 >= 0).groupBy(_._2)
    val differing = matched.collect {
      case (b, rs) if rs.filter(_._1 == 0).map(_._3).sorted.toSeq != rs.filter(_._1 == 1).map(_._3).sorted.toSeq => b
    }.toSeq.sorted
    val toCompare = rows.count(r => differing.contains(r._2))
    val unchanged = rows.count(r => r._1 == 0 && r._2 >= 0 && !differing.contains(r._2))
    Seq(side(0).length.toLong, side(1).length.toLong, side(0).count(_._2 < 0).toLong, side(1).count(_._2 < 0).toLong,
      toCompare.toLong, unchanged.toLong, differing)
  }

  private def asSeq(r: Row): Seq[Any] = r.toSeq.init :+ r.getSeq[Int](6)

  test("finds exactly the buckets whose multisets differ, with the rows of each kind") {
    val expected = reference(sides)
    assert(expected(6).asInstanceOf[Seq[Int]].nonEmpty)
    assert(asSeq(found(sides)) == expected)
  }

  test("independent of row order and partitioning, in every execution mode") {
    val expected = reference(sides)
    SparkSuite.Modes.foreach { m =>
      inMode(m) {
        assert(asSeq(found(sides.repartition(7))) == expected, m.name)
        assert(asSeq(found(sides.coalesce(1))) == expected, m.name)
        assert(asSeq(found(sides.orderBy(org.apache.spark.sql.functions.rand(5)))) == expected, m.name)
      }
    }
  }

  test("buckets spread over many pages and partitions: counts survive serialization between tasks") {
    // 2^20 buckets: rows fall into most pages of cells, few buckets of each; the last bucket and bucket 0 too.
    val max = DiffBuckets.MaxBuckets
    val spread = sides.selectExpr("side",
      s"CASE WHEN bucket < 0 THEN -1 WHEN bucket = 3 THEN 0 WHEN bucket = 4 THEN ${max - 1} " +
        s"ELSE CAST(pmod(hash(digest), $max) AS INT) END AS bucket", "digest")
    val expected = reference(spread)
    assert(expected(6).asInstanceOf[Seq[Int]].nonEmpty)
    Seq(spread, spread.repartition(11), spread.coalesce(1)).foreach { df =>
      assert(asSeq(found(df, max)) == expected)
    }
    // Counts beyond one byte of a variable-length integer: one bucket with many rows.
    val crowded = spark.range(0, 40000).selectExpr("CAST(id % 2 AS INT) AS side", s"${max - 1} AS bucket",
      "record_hash(id DIV 2) AS digest")
    assert(asSeq(found(crowded.repartition(3), max)) == Seq(20000L, 20000L, 0L, 0L, 0L, 20000L, Seq.empty[Int]))
  }

  test("a task with rows beyond one batch adds every row: batches end inside a bucket's rows and at a side") {
    val max = DiffBuckets.MaxBuckets
    val n = 3 * DiffBuckets.BatchSize + 5
    // Old rows then new rows in one task, so a batch holds both sides; a few changed values and a missing row.
    val rows = spark.range(0, 2L * n).selectExpr(s"CAST(id >= $n AS INT) AS side", s"id % $n AS k")
      .selectExpr("side", s"CAST(pmod(hash(k), ${max / 8}) AS INT) AS bucket",
        "record_hash(k, IF(side = 1 AND k % 4099 = 7, -1, k % 13)) AS digest")
      .where(s"NOT (side = 1 AND k = ${n - 1})")
    val expected = reference(rows)
    assert(expected(6).asInstanceOf[Seq[Int]].length > 5)
    assert(asSeq(found(rows.coalesce(1), max)) == expected)
    assert(asSeq(found(rows.coalesce(1).orderBy("digest"), max)) == expected)
  }

  test("no rows: zero counts, no differing bucket") {
    assert(asSeq(found(sides.limit(0))) == Seq(0L, 0L, 0L, 0L, 0L, 0L, Seq.empty[Int]))
  }

  test("compares 128-bit sums: a carry out of the low half reaches the high half") {
    // Old: lo = 2^64 - 1 and lo = 1, summing to 2^64; new: exactly 2^64 (hi = 1) and zero. Equal counts and
    // sums (mod 2^128) make the bucket the same; without the carry the sums would differ.
    val df = spark.sql(
      """SELECT * FROM VALUES
        |  (0, 0, X'FFFFFFFFFFFFFFFF0000000000000000'), (0, 0, X'01000000000000000000000000000000'),
        |  (1, 0, X'00000000000000000100000000000000'), (1, 0, X'00000000000000000000000000000000')
        |  AS t(side, bucket, digest)""".stripMargin)
    assert(asSeq(found(df)) == Seq(2L, 2L, 0L, 0L, 0L, 2L, Seq.empty[Int]))
    assert(asSeq(found(df.where("side = 1 OR digest <> X'01000000000000000000000000000000'"))) ==
      Seq(1L, 2L, 0L, 0L, 3L, 0L, Seq(0)))
  }

  test("arguments of the wrong kind are analysis errors naming the function") {
    val bad = Seq(
      "diff_buckets('a', 0, 4, record_hash(1))" -> "integer side",
      "diff_buckets(0, 1.5D, 4, record_hash(1))" -> "integer bucket",
      "diff_buckets(0, 0, id, record_hash(1))" -> "constant integer number of buckets",
      "diff_buckets(0, 0, 0, record_hash(1))" -> "from 1 to 1048576 buckets, not 0",
      "diff_buckets(0, 0, 2097152, record_hash(1))" -> "not 2097152",
      "diff_buckets(0, 0, 4, 'x')" -> "BINARY digest")
    bad.foreach { case (call, message) =>
      val e = intercept[AnalysisException](spark.sql(s"SELECT $call FROM range(3) AS t(id)").collect())
      assert(e.getMessage.contains("`diff_buckets`") && e.getMessage.contains(message), call)
    }
  }

  test("rows outside the contract fail the query with the reason") {
    val bad = Seq(
      "SELECT diff_buckets(2, 0, 4, record_hash(id)) FROM range(3) AS t(id)" -> "side must be 0 or 1, got 2",
      "SELECT diff_buckets(0, 4, 4, record_hash(id)) FROM range(3) AS t(id)" -> "bucket 4 is outside 0 to 3",
      "SELECT diff_buckets(0, CAST(NULL AS INT), 4, record_hash(id)) FROM range(3) AS t(id)" ->
        "bucket must not be NULL",
      "SELECT diff_buckets(0, 0, 4, X'0102') FROM range(3) AS t(id)" -> "the digest must be 16 bytes, got 2 bytes")
    bad.foreach { case (query, message) =>
      val e = intercept[SparkException](spark.sql(query).collect())
      assert(Iterator.iterate[Throwable](e)(_.getCause).takeWhile(_ != null).exists(t =>
        Option(t.getMessage).exists(_.contains(message))), query)
    }
  }
}
