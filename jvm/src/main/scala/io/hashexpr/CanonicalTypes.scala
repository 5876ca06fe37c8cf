package io.hashexpr

import org.apache.spark.sql.types._

/** Which Spark SQL types hash format v1 specifies (docs/FORMAT.md, section 4). */
private[hashexpr] object CanonicalTypes {

  /** The first type inside `dt` that the format does not specify, if any. */
  def firstUnsupported(dt: DataType): Option[DataType] = dt match {
    case NullType | BooleanType | ByteType | ShortType | IntegerType | LongType | FloatType | DoubleType |
        BinaryType | DateType | TimestampType | TimestampNTZType | CalendarIntervalType => None
    case _: DecimalType | _: StringType | _: DayTimeIntervalType | _: YearMonthIntervalType => None
    case ArrayType(et, _) => firstUnsupported(et)
    case MapType(kt, vt, _) => firstUnsupported(kt).orElse(firstUnsupported(vt))
    case StructType(fields) => fields.iterator.map(f => firstUnsupported(f.dataType)).collectFirst { case Some(t) => t }
    case udt: UserDefinedType[_] => firstUnsupported(udt.sqlType)
    case other => Some(other)
  }

  /** Why a type is refused, and what to do instead. */
  def hint(unsupported: DataType): String = unsupported.typeName match {
    case "variant" =>
      "; VARIANT values with equal meaning can have different bytes, so hash to_json(value) instead"
    case _ =>
      s"; hash format v${CanonicalEncoder.FORMAT_VERSION} does not specify ${unsupported.sql} values yet, " +
        "so cast the argument to a supported type (e.g. STRING) first"
  }
}
