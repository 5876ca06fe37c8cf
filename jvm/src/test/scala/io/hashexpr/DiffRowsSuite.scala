package io.hashexpr

import org.apache.spark.SparkException
import org.apache.spark.sql.{AnalysisException, DataFrame}

class DiffRowsSuite extends SparkSuite {

  /**
   * Old and new rows (side, k, row hash): most keys hold one row a side, some the same rows, a few changed
   * values, keys on one side only, keys with duplicated rows (the same multiset in another order, one more
   * copy, one changed copy).
   */
  private lazy val sides: DataFrame = {
    val old = spark.range(0, 3000).selectExpr("0 AS side", "id % 1000 AS k", "record_hash(id, id % 13) AS h")
    val changed = spark.range(0, 3000).selectExpr("1 AS side", "id % 1000 AS k",
      "record_hash(id, IF(id IN (5, 77, 1130, 2999), -1, id % 13)) AS h")
    val onlyNew = spark.range(5000, 5010).selectExpr("1 AS side", "id AS k", "record_hash(id) AS h")
    // Key 9 has one more copy of one of its rows on the new side.
    val copy = old.where("k = 9").limit(1).selectExpr("1 AS side", "k", "h")
    old.union(changed.where("id NOT IN (200, 201, 1201, 2201)")).union(onlyNew).union(copy)
  }

  private def found(df: DataFrame, width: Int = 16): Map[Long, (Long, Long, Boolean)] =
    df.groupBy("k").agg(org.apache.spark.sql.functions.expr(s"diff_rows(side, h, $width) AS r"))
      .selectExpr("k", "r.old_rows", "r.new_rows", "r.same").collect()
      .map(r => r.getLong(0) -> (r.getLong(1), r.getLong(2), r.getBoolean(3))).toMap

  /** The result computed from the collected rows, comparing each key's hashes as sorted lists. */
  private def reference(df: DataFrame): Map[Long, (Long, Long, Boolean)] = {
    val rows = df.collect().map(r => (r.getInt(0), r.getLong(1), hex(r.getAs[Array[Byte]](2))))
    rows.groupBy(_._2).map { case (k, rs) =>
      val (o, n) = (rs.filter(_._1 == 0).map(_._3).sorted.toSeq, rs.filter(_._1 == 1).map(_._3).sorted.toSeq)
      k -> (o.length.toLong, n.length.toLong, o == n)
    }
  }

  test("per key: each side's rows and whether both hold the same multiset of row hashes") {
    val expected = reference(sides)
    // Changed, missing, added and duplicated rows, and keys that stayed the same with three rows a side.
    assert(expected.values.count(!_._3) == 17 && expected(9L) == ((3L, 4L, false)) && expected(0L)._3)
    assert(found(sides) == expected)
  }

  test("independent of row order and partitioning, in every execution mode, partial and final or complete") {
    val expected = reference(sides)
    SparkSuite.Modes.foreach { m =>
      inMode(m) {
        assert(found(sides.repartition(7)) == expected, m.name)
        assert(found(sides.repartition(3, org.apache.spark.sql.functions.col("k"))) == expected, m.name)
        assert(found(sides.coalesce(1)) == expected, m.name)
        assert(found(sides.orderBy(org.apache.spark.sql.functions.rand(5))) == expected, m.name)
      }
    }
  }

  test("compares 128-bit sums: a carry out of the low half reaches the high half, and wider hashes by halves") {
    // Old: lo = 2^64 - 1 and lo = 1, summing to 2^64; new: exactly 2^64 (hi = 1) and zero. Equal counts and
    // sums (mod 2^128) are the same multiset by this measure; without the carry the sums would differ.
    val df = spark.sql(
      """SELECT side, 0L AS k, h FROM VALUES
        |  (0, X'FFFFFFFFFFFFFFFF0000000000000000'), (0, X'01000000000000000000000000000000'),
        |  (1, X'00000000000000000100000000000000'), (1, X'00000000000000000000000000000000')
        |  AS t(side, h)""".stripMargin)
    assert(found(df) == Map(0L -> ((2L, 2L, true))))
    // One row a side: the same exactly when the bytes are, in every lane; the negation of a lane 0 with a
    // high half and a zero low half (a borrow) is exact too.
    val pairs = Seq(
      "X'00000000000000000100000000000000'" -> "X'00000000000000000100000000000000'",
      "X'00000000000000000100000000000000'" -> "X'00000000000000000200000000000000'",
      "X'01000000000000000000000000000000'" -> "X'00000000000000000000000000000001'")
    val answers = pairs.map { case (o, n) =>
      found(spark.sql(s"SELECT side, 0L AS k, h FROM VALUES (0, $o), (1, $n) AS t(side, h)"))(0L)._3
    }
    assert(answers == Seq(true, false, false))
    // 32 bytes: the second 16 bytes are summed apart, so a change there alone is found.
    val wide = spark.range(0, 50).selectExpr("CAST(id % 2 AS INT) AS side", "id DIV 2 AS k",
      "concat(record_hash(id DIV 2), IF(id = 7, record_hash(-1), record_hash(id DIV 2, 'x'))) AS h")
    assert(found(wide, 32) == (0L until 25L).map(k => k -> ((1L, 1L, k != 3L))).toMap)
  }

  test("no rows: a global aggregate of zero rows a side is the same on both") {
    val r = spark.sql("SELECT diff_rows(side, h, 16) AS r FROM VALUES (0, X'00') AS t(side, h) WHERE side > 5")
      .selectExpr("r.old_rows", "r.new_rows", "r.same").collect().head
    assert((r.getLong(0), r.getLong(1), r.getBoolean(2)) == ((0L, 0L, true)))
  }

  test("arguments of the wrong kind are analysis errors naming the function") {
    val bad = Seq(
      "diff_rows('a', record_hash(1), 16)" -> "integer side",
      "diff_rows(0, 'x', 16)" -> "BINARY row hash",
      "diff_rows(0, record_hash(1), id)" -> "constant integer width",
      "diff_rows(0, record_hash(1), 8)" -> "16, 32, 48, 64 bytes, not 8")
    bad.foreach { case (call, message) =>
      val e = intercept[AnalysisException](spark.sql(s"SELECT $call FROM range(3) AS t(id)").collect())
      assert(e.getMessage.contains("`diff_rows`") && e.getMessage.contains(message), call)
    }
  }

  test("rows outside the contract fail the query with the reason, in every execution mode") {
    val bad = Seq(
      "SELECT diff_rows(2, record_hash(id), 16) FROM range(3) AS t(id)" -> "side must be 0 or 1, got 2",
      "SELECT diff_rows(CAST(NULL AS INT), record_hash(id), 16) FROM range(3) AS t(id)" -> "side must not be NULL",
      "SELECT diff_rows(0, X'0102', 16) FROM range(3) AS t(id)" -> "the row hash must be 16 bytes, got 2 bytes",
      "SELECT diff_rows(1, record_hash(id), 32) FROM range(3) AS t(id)" -> "must be 32 bytes, got 16 bytes",
      "SELECT diff_rows(0, CAST(NULL AS BINARY), 16) FROM range(3) AS t(id)" -> "the row hash must not be NULL")
    SparkSuite.Modes.foreach { m =>
      inMode(m) {
        bad.foreach { case (query, message) =>
          val e = intercept[SparkException](spark.sql(query).collect())
          assert(Iterator.iterate[Throwable](e)(_.getCause).takeWhile(_ != null).exists(t =>
            Option(t.getMessage).exists(_.contains(message))), s"${m.name}: $query")
        }
      }
    }
  }
}
