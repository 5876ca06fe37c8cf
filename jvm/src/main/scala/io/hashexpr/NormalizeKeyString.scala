package io.hashexpr

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{Expression, UnaryExpression}
import org.apache.spark.sql.catalyst.expressions.codegen.{CodegenContext, ExprCode}
import org.apache.spark.sql.types.DataType
import org.apache.spark.unsafe.types.UTF8String

/** A string key part after the normalisation `record_key_with` asked for (see [[KeyNormalizer]]). */
case class NormalizeKeyString(child: Expression, options: KeyOptions) extends UnaryExpression {
  override def dataType: DataType = child.dataType
  override def nullable: Boolean = child.nullable || options.emptyAsNull

  override protected def nullSafeEval(input: Any): Any = KeyNormalizer.normalize(
    input.asInstanceOf[UTF8String], options.trim, options.caseMode, options.emptyAsNull)

  override protected def doGenCode(ctx: CodegenContext, ev: ExprCode): ExprCode = {
    val normalizer = classOf[KeyNormalizer].getName
    // Only empty_as_null can turn a value into NULL; otherwise the result is as nullable as the input.
    nullSafeCodeGen(ctx, ev, s =>
      s"${ev.value} = $normalizer.normalize($s, ${options.trim}, ${options.caseMode}, ${options.emptyAsNull});" +
        (if (options.emptyAsNull) s"\n${ev.isNull} = ${ev.value} == null;" else ""))
  }

  override def eval(input: InternalRow): Any = {
    val v = child.eval(input)
    if (v == null) null else nullSafeEval(v)
  }

  override protected def withNewChildInternal(c: Expression): NormalizeKeyString = copy(child = c)
}
