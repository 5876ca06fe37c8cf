package io.hashexpr

import java.nio.{ByteBuffer, ByteOrder}

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{BoundReference, Literal, UnsafeProjection}
import org.apache.spark.sql.types.{IntegerType, StringType}
import org.apache.spark.unsafe.types.UTF8String

/** A hashexpr call in the arguments of another gives the same bytes however Spark evaluates it. */
class NestingSuite extends SparkSuite {

  private def integral(v: Long): Array[Byte] =
    Array(0x02.toByte) ++ ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putLong(v).array()

  private def unhex(h: String): Array[Byte] = h.grouped(2).map(Integer.parseInt(_, 16).toByte).toArray

  private def binaryValue(b: Array[Byte]): Array[Byte] = Array(0x06.toByte) ++ u32(b.length) ++ b

  test("record_hash(1, record_hash(2)) is the hand-built stream, folded, over VALUES and in every mode") {
    val inner = unhex(streamHash(Array[Byte](0x01) ++ u32(1) ++ integral(2)))
    val expected = streamHash(Array[Byte](0x01) ++ u32(2) ++ integral(1) ++ binaryValue(inner))
    // Folded on the driver (interpreted), over a local relation, and per row in every execution mode.
    assert(hex(one("SELECT record_hash(1, record_hash(2))").getAs[Array[Byte]](0)) == expected)
    assert(hex(one("SELECT record_hash(a, record_hash(b)) FROM VALUES (1, 2) AS t(a, b)")
      .getAs[Array[Byte]](0)) == expected)
    SparkSuite.Modes.foreach { m =>
      inMode(m) {
        assert(hexes(spark.sql("SELECT record_hash(id - 1, record_hash(id)) FROM range(2, 3)")) == Seq(expected),
          m.name)
      }
    }
  }

  private val nested = Seq(
    "record_hash(a, record_hash(s))",
    "record_hash(record_hash(a), record_hash(s), record_hash(a, s))",
    "record_key(a, record_hash(s))",
    "record_key_with('salt=x; case=upper', s, record_key(a), record_key_with('trim', s))",
    "record_key_with('null_key=null', record_hash(a))",
    "record_hash(array(record_hash(a), record_key(s)))",
    "record_hash(map(record_key(a), 1, record_hash(s), 2))",
    "record_hash(named_struct('x', record_hash(a), 'y', record_key(s)))",
    "record_hash_by_name(a, record_hash_by_name(s), record_hash(a, s))",
    "record_hash(a, record_hash_by_name(a, s))",
    "record_hash(record_hash(record_hash(record_hash(a, s), s), a), record_key(record_key(s)))")

  private val table = "SELECT * FROM VALUES (1, 'a'), (2, NULL), (NULL, 'Ab '), (4, '') AS t(a, s)"

  test("nested calls agree in every mode, over VALUES and when folded") {
    // The same rows from a file scan, so that the arguments are not constants.
    val dir = java.nio.file.Files.createTempDirectory("hashexpr-nesting").resolve("t").toString
    spark.sql(table).write.parquet(dir)
    spark.read.parquet(dir).createOrReplaceTempView("nesting")
    nested.foreach { e =>
      val folded = hexes(spark.sql(s"SELECT $e FROM ($table) ORDER BY a, s"))
      SparkSuite.Modes.foreach { m =>
        inMode(m)(assert(hexes(spark.sql(s"SELECT $e FROM nesting ORDER BY a, s")) == folded, s"$e: ${m.name}"))
      }
    }
  }

  test("nested calls in the aggregates agree in every mode") {
    val aggregates = Seq(
      "dataset_fingerprint(record_hash(a))",
      "dataset_fingerprint(a, record_key(a), record_hash_by_name(s))",
      "to_json(diff_buckets(0, 0, 4, record_hash(record_key(a), s, record_hash(s))))")
    aggregates.foreach { e =>
      val folded = spark.sql(s"SELECT $e FROM ($table)").collect().head.get(0)
      SparkSuite.Modes.foreach { m =>
        inMode(m)(assert(spark.sql(s"SELECT $e FROM ($table)").collect().head.get(0) == folded, s"$e: ${m.name}"))
      }
    }
  }

  test("expression level: eval equals generated code for a record_key inside a record_hash") {
    val a = BoundReference(0, IntegerType, nullable = true)
    val s = BoundReference(1, StringType, nullable = true)
    val expr = RecordHash(Seq(a, RecordKey(Seq(s, a)), RecordHashByName(Seq(RecordHash(Seq(s))), Seq("h"))))
    val projection = UnsafeProjection.create(Seq(expr))
    Seq(InternalRow(1, UTF8String.fromString("x")), InternalRow(null, null), InternalRow(7, UTF8String.EMPTY_UTF8))
      .foreach { row =>
        assert(hex(expr.eval(row).asInstanceOf[Array[Byte]]) == hex(projection(row).getBinary(0)))
      }
  }

  test("an error inside a nested call leaves the thread's encoders usable") {
    val failing = RecordKeyWith(Seq(Literal("null_key=error"), Literal.create(null, StringType)))
    val outer = RecordHash(Seq(Literal(1), failing))
    intercept[Exception](outer.eval(InternalRow.empty))
    val plain = RecordHash(Seq(Literal(1), RecordHash(Seq(Literal(2)))))
    assert(hex(plain.eval(InternalRow.empty).asInstanceOf[Array[Byte]]) ==
      hex(one("SELECT record_hash(1, record_hash(2))").getAs[Array[Byte]](0)))
  }
}
