package io.hashexpr

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.analysis.TypeCheckResult
import org.apache.spark.sql.catalyst.analysis.TypeCheckResult.DataTypeMismatch
import org.apache.spark.sql.catalyst.expressions.{Expression, ExpressionDescription}
import org.apache.spark.sql.catalyst.expressions.codegen.{CodegenContext, ExprCode, FalseLiteral}
import org.apache.spark.sql.catalyst.expressions.codegen.Block._
import org.apache.spark.sql.types.{BinaryType, DataType}

// scalastyle:off line.size.limit
@ExpressionDescription(
  usage = """
    _FUNC_(expr1, expr2, ...) - Returns the 16-byte MurmurHash3 x64 128 hash of the arguments' canonical encoding (hashexpr format v1). Never NULL.
  """,
  arguments = """
    Arguments:
      * expr1, expr2, ... - one or more values of any type but VARIANT, TIME, GEOMETRY and GEOGRAPHY; `*` or `t.*` hashes every column.
          NULLs, argument positions and the number of arguments count; map entry order, -0.0 versus 0.0, NaN payloads and integer, float or decimal widening do not.
  """,
  examples = """
    Examples:
      > SELECT hex(_FUNC_(1, 'a', NULL));
       914BAFB12D9C5A010BFA6E9E20A248DE
      > SELECT _FUNC_(CAST(1 AS TINYINT)) = _FUNC_(1L);
       true
      > SELECT _FUNC_(map('a', 1, 'b', 2)) = _FUNC_(map('b', 2, 'a', 1));
       true
      > SELECT _FUNC_('a', NULL) = _FUNC_(NULL, 'a');
       false
  """,
  since = "0.1.0",
  group = "hash_funcs")
// scalastyle:on line.size.limit
case class RecordHash(children: Seq[Expression]) extends Expression {

  override def prettyName: String = RecordHash.Name
  override def nullable: Boolean = false
  override def dataType: DataType = BinaryType
  override def foldable: Boolean = children.forall(_.foldable)

  override def checkInputDataTypes(): TypeCheckResult = RecordHash.checkArguments(prettyName, children)

  // One encoder per thread: expressions can be shared, the encoder's stream state cannot.
  @transient private lazy val writers = children.map(c => InterpretedEncoder.writer(c.dataType)).toArray

  override def eval(input: InternalRow): Any = {
    val encoder = RecordHash.threadEncoder.get()
    encoder.beginRecord(children.length)
    var i = 0
    while (i < writers.length) {
      val v = children(i).eval(input)
      if (v == null) encoder.putNull() else writers(i)(encoder, v)
      i += 1
    }
    encoder.finishRecord()
  }

  override protected def doGenCode(ctx: CodegenContext, ev: ExprCode): ExprCode = {
    val encoder = ctx.addMutableState(classOf[CanonicalEncoder].getName, "recordEncoder",
      v => s"$v = new ${classOf[CanonicalEncoder].getName}();", forceInline = true)
    val gen = new EncoderCodegen(ctx, encoder)
    val perArgument = children.map { child =>
      val c = child.genCode(ctx)
      s"""
         |${c.code}
         |if (${c.isNull}) {
         |  $encoder.putNull();
         |} else {
         |  ${gen.write(c.value.toString, child.dataType)}
         |}
       """.stripMargin
    }
    // Wide rows: the per-argument code is split into methods below the JVM's 64 KB limit.
    val body = ctx.splitExpressionsWithCurrentInputs(perArgument, funcName = "recordHash")
    ev.copy(code =
      code"""
         |$encoder.beginRecord(${children.length});
         |$body
         |final byte[] ${ev.value} = $encoder.finishRecord();
       """.stripMargin, isNull = FalseLiteral)
  }

  override protected def withNewChildrenInternal(newChildren: IndexedSeq[Expression]): RecordHash =
    copy(children = newChildren)
}

object RecordHash {
  val Name = "record_hash"

  private val threadEncoder = ThreadLocal.withInitial[CanonicalEncoder](() => new CanonicalEncoder)

  /** The analysis-time checks of every function that hashes records: at least one argument, known types. */
  private[hashexpr] def checkArguments(function: String, children: Seq[Expression]): TypeCheckResult = {
    if (children.isEmpty) {
      DataTypeMismatch("TYPE_CHECK_FAILURE_WITH_HINT", Map(
        "msg" -> s"`$function` needs at least one argument",
        "hint" -> "; pass columns, or * for every column"))
    } else {
      children.iterator.zipWithIndex.flatMap { case (c, i) =>
        CanonicalTypes.firstUnsupported(c.dataType).map { bad =>
          val inside = if (bad == c.dataType) "" else s", which contains ${bad.sql}"
          DataTypeMismatch("TYPE_CHECK_FAILURE_WITH_HINT", Map(
            "msg" -> (s"argument ${i + 1} (${c.sql}) of `$function` has type ${c.dataType.sql}$inside, " +
              s"which hashexpr format v${CanonicalEncoder.FORMAT_VERSION} cannot hash"),
            "hint" -> CanonicalTypes.hint(bad)))
        }
      }.nextOption().getOrElse(TypeCheckResult.TypeCheckSuccess)
    }
  }
}
