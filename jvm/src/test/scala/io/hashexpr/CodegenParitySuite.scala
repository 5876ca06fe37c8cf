package io.hashexpr

import java.math.{BigDecimal => JBigDecimal}
import java.time.{Duration, Instant, LocalDate, LocalDateTime, Period}

import scala.util.Random

import org.apache.spark.sql.Row
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{BoundReference, Literal, UnsafeProjection}
import org.apache.spark.sql.catalyst.expressions.codegen.GenerateUnsafeProjection
import org.apache.spark.sql.catalyst.util.ArrayBasedMapData
import org.apache.spark.sql.types._
import org.apache.spark.unsafe.types.CalendarInterval

/** Generated code and the interpreted `eval` must give the same bytes for every value. */
class CodegenParitySuite extends SparkSuite {
  import CodegenParitySuite._

  test("random rows of every type: the execution modes (SparkSuite.Modes) agree") {
    val rnd = new Random(20261121)
    val rows = Seq.fill(3000)(randomRow(rnd, Schema))
    // java.time values in Rows (Spark 3.5 encodes them only with the Java 8 time API on; 4.x either way).
    val df = withConf("spark.sql.datetime.java8API.enabled" -> "true")(
      spark.createDataFrame(spark.sparkContext.parallelize(rows, 3), Schema))
      .selectExpr(Seq("*", "make_interval(0, i % 13, 0, i % 31, 0, 0, 0) AS ci") ++
        (if (LineFeatures.collations) Seq("collate(s, 'UTF8_LCASE') AS s_lcase") else Nil): _*)
    // One hash of the whole row and one per column, so that a disagreement names its type.
    val hashes = df.columns.toIndexedSeq.map(c => s"record_hash(`$c`)") :+ "record_hash(*)"
    val results = SparkSuite.Modes.map(m => inMode(m)(df.selectExpr(hashes: _*).collect().toSeq))
    results.tail.zip(SparkSuite.Modes.tail).foreach { case (other, mode) =>
      df.columns.indices.foreach { i =>
        assert(results.head.map(r => hex(r.getAs[Array[Byte]](i))) == other.map(r => hex(r.getAs[Array[Byte]](i))),
          s"column ${df.columns(i)}: interpreted != ${mode.name}")
      }
      assert(results.head.map(r => hex(r.getAs[Array[Byte]](hashes.length - 1))) ==
        other.map(r => hex(r.getAs[Array[Byte]](hashes.length - 1))))
    }
    // 3000 random rows of 25 columns: distinct rows, distinct hashes.
    val whole = results.head.map(r => hex(r.getAs[Array[Byte]](hashes.length - 1)))
    assert(whole.distinct.size == whole.size)
  }

  test("per-row hashes do not depend on partitioning") {
    val df = spark.range(0, 20000).selectExpr("id", "CAST(id * 7 AS STRING) s", "array(id, NULL) a", "map(id, id) m")
    val base = df.selectExpr("id", "hex(record_hash(*)) h").collect().map(r => r.getLong(0) -> r.getString(1)).toMap
    val shuffled = df.repartition(7).selectExpr("id", "hex(record_hash(*)) h").collect()
    assert(shuffled.length == base.size && shuffled.forall(r => base(r.getLong(0)) == r.getString(1)))
  }

  test("expression level: generated UnsafeProjection equals eval on literal maps with repeated entries") {
    // MapData can carry repeated entries (e.g. from files written by other tools). Entries combine by
    // addition, so two repeated pairs do not cancel each other out as they would under XOR.
    val mt = MapType(IntegerType, IntegerType)
    def map(kv: (Int, Int)*) = Literal(ArrayBasedMapData(kv.map(_._1).toArray, kv.map(_._2).toArray), mt)
    val a = RecordHash(Seq(map(1 -> 2, 1 -> 2, 3 -> 4, 3 -> 4)))
    val b = RecordHash(Seq(map(5 -> 6, 5 -> 6, 7 -> 8, 7 -> 8)))
    val ha = a.eval(InternalRow.empty).asInstanceOf[Array[Byte]]
    val hb = b.eval(InternalRow.empty).asInstanceOf[Array[Byte]]
    assert(hex(ha) != hex(hb))
    val projection = GenerateUnsafeProjection.generate(Seq(a, b))
    val out = projection(InternalRow.empty)
    assert(hex(out.getBinary(0)) == hex(ha) && hex(out.getBinary(1)) == hex(hb))
  }

  test("expression level: generated code equals eval on bound references of every type") {
    val rnd = new Random(99)
    val converter = org.apache.spark.sql.catalyst.CatalystTypeConverters.createToCatalystConverter(Schema)
    val expr = RecordHash(Schema.fields.toIndexedSeq.zipWithIndex.map { case (f, i) =>
      BoundReference(i, f.dataType, f.nullable)
    })
    val codegen = UnsafeProjection.create(Seq(expr))
    (0 until 500).foreach { _ =>
      val row = converter(randomRow(rnd, Schema)).asInstanceOf[InternalRow]
      assert(hex(codegen(row).getBinary(0)) == hex(expr.eval(row).asInstanceOf[Array[Byte]]))
    }
    val interval = RecordHash(Seq(Literal(new CalendarInterval(1, 2, 3L), CalendarIntervalType)))
    assert(hex(GenerateUnsafeProjection.generate(Seq(interval))(InternalRow.empty).getBinary(0)) ==
      hex(interval.eval(InternalRow.empty).asInstanceOf[Array[Byte]]))
  }
}

object CodegenParitySuite {
  val Schema: StructType = StructType.fromDDL(
    """b BOOLEAN, y TINYINT, sh SMALLINT, i INT, l BIGINT, f FLOAT, d DOUBLE,
      |d1 DECIMAL(5,2), d2 DECIMAL(18,4), d3 DECIMAL(38,10), s STRING, bin BINARY, dt DATE, ts TIMESTAMP,
      |ntz TIMESTAMP_NTZ, dti INTERVAL DAY TO SECOND, ymi INTERVAL YEAR TO MONTH, ai ARRAY<INT>,
      |aas ARRAY<ARRAY<STRING>>, ms MAP<STRING, INT>, mia MAP<INT, ARRAY<DOUBLE>>,
      |st STRUCT<a: INT, b: STRING, c: MAP<STRING, STRUCT<x: BIGINT, y: ARRAY<STRING>>>>,
      |am ARRAY<MAP<STRING, DECIMAL(20,3)>>""".stripMargin)

  def randomRow(rnd: Random, schema: StructType): Row =
    Row.fromSeq(schema.fields.toSeq.map(f => value(rnd, f.dataType, nullable = true)))

  private val specialDoubles = Seq(0.0, -0.0, Double.NaN, Double.PositiveInfinity, Double.NegativeInfinity,
    Double.MinPositiveValue, Double.MaxValue, -1.0, 1.0)

  def value(rnd: Random, dt: DataType, nullable: Boolean): Any = {
    if (nullable && rnd.nextInt(8) == 0) return null
    dt match {
      case BooleanType => rnd.nextBoolean()
      case ByteType => rnd.nextInt().toByte
      case ShortType => rnd.nextInt().toShort
      case IntegerType => if (rnd.nextInt(5) == 0) Seq(0, Int.MinValue, Int.MaxValue)(rnd.nextInt(3)) else rnd.nextInt()
      case LongType => if (rnd.nextInt(5) == 0) Seq(0L, Long.MinValue, Long.MaxValue)(rnd.nextInt(3)) else rnd.nextLong()
      case FloatType => if (rnd.nextInt(4) == 0) specialDoubles(rnd.nextInt(specialDoubles.size)).toFloat
        else (rnd.nextGaussian() * 1e6).toFloat
      case DoubleType => if (rnd.nextInt(4) == 0) specialDoubles(rnd.nextInt(specialDoubles.size))
        else rnd.nextGaussian() * math.pow(10, rnd.nextInt(40) - 20)
      case dec: DecimalType =>
        val (p, s) = (dec.precision, dec.scale)
        val digits = 1 + rnd.nextInt(p)
        val unscaled = new java.math.BigInteger(
          (1 to digits).map(_ => ('0' + rnd.nextInt(10)).toChar).mkString)
        val v = new JBigDecimal(unscaled, s)
        if (rnd.nextBoolean()) v.negate() else v
      case _: StringType =>
        val n = rnd.nextInt(12)
        (1 to n).map { _ =>
          rnd.nextInt(4) match {
            case 0 => new String(Character.toChars(0x1F600 + rnd.nextInt(50)))
            case 1 => ('À' + rnd.nextInt(200)).toChar.toString
            case _ => ('a' + rnd.nextInt(26)).toChar.toString
          }
        }.mkString
      case BinaryType => Array.fill(rnd.nextInt(20))(rnd.nextInt().toByte)
      case DateType => LocalDate.ofEpochDay(rnd.nextInt(200000) - 100000L)
      case TimestampType => Instant.ofEpochSecond(rnd.nextInt(), rnd.nextInt(1000000) * 1000L)
      case TimestampNTZType => LocalDateTime.ofEpochSecond(rnd.nextInt(), rnd.nextInt(1000000) * 1000,
        java.time.ZoneOffset.UTC)
      case _: DayTimeIntervalType => Duration.ofSeconds(rnd.nextInt(), rnd.nextInt(1000000) * 1000L)
      case _: YearMonthIntervalType => Period.ofMonths(rnd.nextInt(100000) - 50000).normalized()
      case ArrayType(et, containsNull) => Seq.fill(rnd.nextInt(5))(value(rnd, et, containsNull))
      case MapType(kt, vt, valueContainsNull) =>
        (0 until rnd.nextInt(5)).map(_ => value(rnd, kt, nullable = false) -> value(rnd, vt, valueContainsNull)).toMap
      case StructType(fields) => Row.fromSeq(fields.toSeq.map(f => value(rnd, f.dataType, f.nullable)))
      case other => throw new IllegalArgumentException(s"no random values for ${other.sql}")
    }
  }
}
