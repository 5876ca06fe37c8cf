package io.hashexpr

import java.nio.file.Files

import org.apache.spark.sql.Row
import org.apache.spark.sql.streaming.Trigger

/** row_position(): one number per row and partition in every execution mode, and the micro-batch id. */
class RowPositionSuite extends SparkSuite {

  private def positions(sql: String): Seq[Row] = spark.sql(sql).collect().toSeq

  test("each partition numbers its rows from 0, the same in every execution mode") {
    val sql = "SELECT id, spark_partition_id() AS task, p.batch_id, p.partition, p.index " +
      "FROM (SELECT id, row_position() AS p FROM range(0, 1000, 1, 3))"
    val results = SparkSuite.Modes.map(m => m -> inMode(m)(positions(sql)))
    results.foreach { case (mode, rows) =>
      assert(rows.size == 1000, mode.name)
      assert(rows.forall(r => r.isNullAt(2) && r.getInt(3) == r.getInt(1)), mode.name)
      val byPartition = rows.groupBy(_.getInt(3)).values.map(_.map(r => r.getLong(0) -> r.getLong(4)))
      assert(byPartition.size == 3, mode.name)
      byPartition.foreach { part =>
        assert(part.map(_._2) == part.indices.map(_.toLong), s"${mode.name}: indices in row order")
      }
    }
    assert(results.map(_._2.map(_.toSeq)).distinct.size == 1)
  }

  test("batch_id is the micro-batch id the task's local properties carry") {
    val sc = spark.sparkContext
    sc.setLocalProperty("streaming.sql.batchId", "41")
    try {
      SparkSuite.Modes.foreach { m =>
        val ids = inMode(m)(positions("SELECT row_position().batch_id FROM range(0, 10, 1, 2)")).map(_.get(0))
        assert(ids == Seq.fill(10)(41L), m.name)
      }
    } finally sc.setLocalProperty("streaming.sql.batchId", null)
    assert(positions("SELECT row_position().batch_id FROM range(0, 10, 1, 2)").forall(_.isNullAt(0)))
  }

  test("a streaming query may use it; each micro-batch has its own batch_id") {
    val dir = Files.createTempDirectory("row-position")
    Seq("a", "b", "c").zipWithIndex.foreach { case (s, i) => Files.write(dir.resolve(s"$i.txt"), s"$s\n${s}2\n".getBytes("UTF-8")) }
    val query = spark.readStream.option("maxFilesPerTrigger", 1).text(dir.toString)
      .selectExpr("value", "row_position() AS p")
      .writeStream.format("memory").queryName("row_positions").trigger(Trigger.AvailableNow()).start()
    try query.awaitTermination()
    finally query.stop()
    val rows = positions("SELECT value, p.batch_id, p.index FROM row_positions")
    assert(rows.size == 6)
    val batches = rows.groupBy(_.getString(0).take(1)).values.map(_.map(r => r.getLong(1)).distinct)
    assert(batches.forall(_.size == 1), "the rows of one file are in one micro-batch")
    assert(batches.flatten.toSet == Set(0L, 1L, 2L))
    assert(rows.groupBy(_.getLong(1)).values.forall(_.map(_.getLong(2)).sorted == Seq(0L, 1L)))
    spark.sql("DROP VIEW IF EXISTS row_positions")
  }
}
