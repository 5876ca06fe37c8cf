package io.hashexpr

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.SpecializedGetters
import org.apache.spark.sql.catalyst.util.{ArrayData, MapData}
import org.apache.spark.sql.types._
import org.apache.spark.unsafe.types.{CalendarInterval, UTF8String}

/**
 * The interpreted twin of [[EncoderCodegen]]: turns a Spark type, once, into a writer that feeds non-null
 * values of that type to a [[CanonicalEncoder]]. Used by `eval` (constant folding, NO_CODEGEN mode).
 */
private[hashexpr] object InterpretedEncoder {

  /** Writes one non-null value. */
  type Writer = (CanonicalEncoder, Any) => Unit

  /** Writes the value at an ordinal of an `InternalRow` or `ArrayData`, NULL included. */
  private type SlotWriter = (CanonicalEncoder, SpecializedGetters, Int) => Unit

  def writer(dt: DataType): Writer = dt match {
    case NullType => (e, _) => e.putNull()
    case BooleanType => (e, v) => e.putBoolean(v.asInstanceOf[Boolean])
    case ByteType => (e, v) => e.putIntegral(v.asInstanceOf[Byte].toLong)
    case ShortType => (e, v) => e.putIntegral(v.asInstanceOf[Short].toLong)
    case IntegerType => (e, v) => e.putIntegral(v.asInstanceOf[Int].toLong)
    case LongType => (e, v) => e.putIntegral(v.asInstanceOf[Long])
    case FloatType => (e, v) => e.putFloat(v.asInstanceOf[Float])
    case DoubleType => (e, v) => e.putDouble(v.asInstanceOf[Double])
    case _: DecimalType => (e, v) => e.putDecimal(v.asInstanceOf[Decimal])
    case st: StringType if SparkShims.hasBinaryEquality(st) => (e, v) => e.putString(v.asInstanceOf[UTF8String])
    case st: StringType =>
      val id = SparkShims.collationId(st)
      val name = SparkShims.collationNameBytes(st)
      (e, v) => e.putCollatedString(name, SparkShims.collationKey(v.asInstanceOf[UTF8String], id))
    case BinaryType => (e, v) => e.putBinary(v.asInstanceOf[Array[Byte]])
    case DateType => (e, v) => e.putDate(v.asInstanceOf[Int])
    case TimestampType => (e, v) => e.putTimestamp(v.asInstanceOf[Long])
    case TimestampNTZType => (e, v) => e.putTimestampNtz(v.asInstanceOf[Long])
    case _: DayTimeIntervalType => (e, v) => e.putDayTimeInterval(v.asInstanceOf[Long])
    case _: YearMonthIntervalType => (e, v) => e.putYearMonthInterval(v.asInstanceOf[Int])
    case CalendarIntervalType => (e, v) => e.putCalendarInterval(v.asInstanceOf[CalendarInterval])
    case ArrayType(et, _) =>
      val element = slot(et)
      (e, v) => {
        val a = v.asInstanceOf[ArrayData]
        val n = a.numElements()
        e.beginArray(n)
        var i = 0
        while (i < n) { element(e, a, i); i += 1 }
      }
    case MapType(kt, vt, _) =>
      val key = slot(kt)
      val value = slot(vt)
      (e, v) => {
        val m = v.asInstanceOf[MapData]
        val n = m.numElements()
        val keys = m.keyArray()
        val values = m.valueArray()
        e.beginMap(n)
        var i = 0
        while (i < n) {
          e.beginEntry()
          key(e, keys, i)
          value(e, values, i)
          e.endEntry()
          i += 1
        }
        e.endMap()
      }
    case StructType(fields) =>
      val fieldWriters = fields.map(f => slot(f.dataType))
      (e, v) => {
        val row = v.asInstanceOf[InternalRow]
        e.beginStruct(fieldWriters.length)
        var i = 0
        while (i < fieldWriters.length) { fieldWriters(i)(e, row, i); i += 1 }
      }
    case udt: UserDefinedType[_] => writer(udt.sqlType)
    case other => throw new IllegalStateException(s"record_hash cannot hash ${other.sql} values")
  }

  private def slot(dt: DataType): SlotWriter = {
    val write = writer(dt)
    val get = InternalRow.getAccessor(dt, nullable = true)
    (e, container, i) => if (container.isNullAt(i)) e.putNull() else write(e, get(container, i))
  }
}
