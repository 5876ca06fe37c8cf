package io.hashexpr

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.analysis.TypeCheckResult
import org.apache.spark.sql.catalyst.analysis.TypeCheckResult.TypeCheckSuccess
import org.apache.spark.sql.catalyst.expressions.{BinaryExpression, Expression, ExpressionDescription}
import org.apache.spark.sql.catalyst.expressions.codegen.{CodegenContext, ExprCode}
import org.apache.spark.sql.types.{DataType, StringType}
import org.apache.spark.unsafe.types.UTF8String

// scalastyle:off line.size.limit
@ExpressionDescription(
  usage = """
    _FUNC_(options, part) - Returns a key part as record_key_with(options, ...) hashes it: a top-level string after the normalisation the options ask for (trim, case=upper|lower, empty_as_null, in that order), any other value as it is. Two spellings are one business key under those options exactly when their normalised parts are equal.
  """,
  arguments = """
    Arguments:
      * options - the constant options string of record_key_with; only trim, case and empty_as_null change the part, so a key's whole options string can be given.
      * part - a key part of any type.
  """,
  examples = """
    Examples:
      > SELECT _FUNC_('trim; case=upper', ' n10156 ');
       N10156
      > SELECT _FUNC_('case=upper', 'straße');
       STRASSE
      > SELECT _FUNC_('trim; empty_as_null', '  ') IS NULL, _FUNC_('trim', 7);
       true	7
  """,
  since = "0.2.0",
  group = "string_funcs")
// scalastyle:on line.size.limit
case class NormalizeKey(left: Expression, right: Expression) extends BinaryExpression {
  override def prettyName: String = NormalizeKey.Name
  override def dataType: DataType = right.dataType

  @transient private lazy val options: Option[KeyOptions] = OptionsArgument.parsed(Some(left), KeyOptions.parse)

  private def normalizes: Boolean = right.dataType.isInstanceOf[StringType] && options.exists(_.normalizes)

  override def nullable: Boolean = right.nullable || (normalizes && options.exists(_.emptyAsNull))

  // The secret of an HMAC algorithm named in the options is not needed to normalise, so it is not checked.
  override def checkInputDataTypes(): TypeCheckResult =
    OptionsArgument.check(prettyName, Some(left), KeyOptions.Usage, KeyOptions.parse,
      (_: KeyOptions) => HashAlgorithm.Murmur3)(TypeCheckSuccess)

  override def eval(input: InternalRow): Any = {
    val value = right.eval(input)
    if (value == null || !normalizes) value
    else {
      val o = options.get
      KeyNormalizer.normalize(value.asInstanceOf[UTF8String], o.trim, o.caseMode, o.emptyAsNull)
    }
  }

  // The part's own code, normalised by the same expression record_key_with uses for its key parts.
  override protected def doGenCode(ctx: CodegenContext, ev: ExprCode): ExprCode = {
    val part = if (normalizes) NormalizeKeyString(right, options.get).genCode(ctx) else right.genCode(ctx)
    ev.copy(code = part.code, isNull = part.isNull, value = part.value)
  }

  override protected def withNewChildrenInternal(newLeft: Expression, newRight: Expression): NormalizeKey =
    copy(left = newLeft, right = newRight)
}

object NormalizeKey {
  val Name = "normalize_key"
}
