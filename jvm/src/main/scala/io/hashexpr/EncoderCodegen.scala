package io.hashexpr

import scala.collection.mutable

import org.apache.spark.sql.catalyst.expressions.codegen.{CodeGenerator, CodegenContext}
import org.apache.spark.sql.types._

/**
 * Generates the Java that feeds values to a [[CanonicalEncoder]]: the code-generated twin of
 * [[InterpretedEncoder]]. Scalars become one call on the encoder; arrays, maps and structs get one generated
 * method per distinct type, so deep nesting stays small, and wide structs are split into several methods.
 *
 * @param ctx     the codegen context
 * @param encoder the name of the (class-level) encoder field
 */
private[hashexpr] final class EncoderCodegen(ctx: CodegenContext, encoder: String) {
  private val methods = mutable.HashMap.empty[DataType, String]

  /** Java statements that write the non-null value held in the Java expression `value`. */
  def write(value: String, dt: DataType): String = dt match {
    case NullType => s"$encoder.putNull();"
    case BooleanType => s"$encoder.putBoolean($value);"
    case ByteType | ShortType | IntegerType | LongType => s"$encoder.putIntegral((long) $value);"
    case FloatType => s"$encoder.putFloat($value);"
    case DoubleType => s"$encoder.putDouble($value);"
    // Unscaled value and scale as numbers: the Decimal read from the row then never escapes, and the JIT does
    // not allocate it.
    case dt: DecimalType if dt.precision <= Decimal.MAX_LONG_DIGITS =>
      s"$encoder.putDecimal($value.toUnscaledLong(), $value.scale());"
    case _: DecimalType => s"$encoder.putDecimal($value);"
    case st: StringType if SparkShims.hasBinaryEquality(st) => s"$encoder.putString($value);"
    case st: StringType =>
      val name = ctx.addReferenceObj("collationName", SparkShims.collationNameBytes(st), "byte[]")
      val shims = SparkShims.getClass.getName.stripSuffix("$")
      s"$encoder.putCollatedString($name, $shims.collationKey($value, ${SparkShims.collationId(st)}));"
    case BinaryType => s"$encoder.putBinary($value);"
    case DateType => s"$encoder.putDate($value);"
    case TimestampType => s"$encoder.putTimestamp($value);"
    case TimestampNTZType => s"$encoder.putTimestampNtz($value);"
    case _: DayTimeIntervalType => s"$encoder.putDayTimeInterval($value);"
    case _: YearMonthIntervalType => s"$encoder.putYearMonthInterval($value);"
    case CalendarIntervalType => s"$encoder.putCalendarInterval($value);"
    case _: ArrayType | _: MapType | _: StructType => s"${method(dt)}($value);"
    case udt: UserDefinedType[_] => write(value, udt.sqlType)
    case other => throw new IllegalStateException(s"record_hash cannot hash ${other.sql} values")
  }

  /** Java statements that write the slot `index` of `container` (an InternalRow or ArrayData), NULL included. */
  def writeSlot(container: String, index: String, dt: DataType): String = {
    val value = ctx.freshName("v")
    s"""
       |if ($container.isNullAt($index)) {
       |  $encoder.putNull();
       |} else {
       |  ${CodeGenerator.javaType(dt)} $value = ${CodeGenerator.getValue(container, dt, index)};
       |  ${write(value, dt)}
       |}
     """.stripMargin
  }

  private def method(dt: DataType): String = methods.get(dt) match {
    case Some(name) => name
    case None =>
      val name = newMethod(dt)
      methods(dt) = name
      name
  }

  private def newMethod(dt: DataType): String = dt match {
    case ArrayType(et, _) =>
      val name = ctx.freshName("writeArray")
      ctx.addNewFunction(name,
        s"""
           |private void $name(ArrayData a) {
           |  final int n = a.numElements();
           |  $encoder.beginArray(n);
           |  for (int i = 0; i < n; i++) {
           |    ${writeSlot("a", "i", et)}
           |  }
           |}
         """.stripMargin)
    case MapType(kt, vt, _) =>
      val name = ctx.freshName("writeMap")
      ctx.addNewFunction(name,
        s"""
           |private void $name(MapData m) {
           |  final int n = m.numElements();
           |  final ArrayData keys = m.keyArray();
           |  final ArrayData values = m.valueArray();
           |  $encoder.beginMap(n);
           |  for (int i = 0; i < n; i++) {
           |    $encoder.beginEntry();
           |    ${writeSlot("keys", "i", kt)}
           |    ${writeSlot("values", "i", vt)}
           |    $encoder.endEntry();
           |  }
           |  $encoder.endMap();
           |}
         """.stripMargin)
    case StructType(fields) =>
      val name = ctx.freshName("writeStruct")
      val fieldCode = fields.toIndexedSeq.zipWithIndex.map { case (f, i) => writeSlot("row", i.toString, f.dataType) }
      // Wide structs: splitExpressions spreads the fields over several methods below the JVM's 64 KB limit.
      val body = ctx.splitExpressions(fieldCode, "writeStructFields", Seq("InternalRow" -> "row"))
      ctx.addNewFunction(name,
        s"""
           |private void $name(InternalRow row) {
           |  $encoder.beginStruct(${fields.length});
           |  $body
           |}
         """.stripMargin)
    case other => throw new IllegalStateException(s"no container method for ${other.sql}")
  }
}
