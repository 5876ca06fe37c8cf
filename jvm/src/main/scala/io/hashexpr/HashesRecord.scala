package io.hashexpr

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{Attribute, Expression}
import org.apache.spark.sql.catalyst.expressions.codegen.{CodegenContext, ExprCode, FalseLiteral}
import org.apache.spark.sql.catalyst.expressions.codegen.Block._
import org.apache.spark.sql.types.{BinaryType, DataType}

/**
 * An expression that hashes its arguments as one record of hash format v1 (docs/FORMAT.md): positionally,
 * or by name. `eval` and the generated code walk the same layout and call the same [[CanonicalEncoder]]
 * methods, so they produce the same bytes.
 */
trait HashesRecord extends Expression {

  /**
   * True for by-name records (docs/FORMAT.md, section 6): NULL fields are left out, the others are written
   * with their name.
   */
  protected def byName: Boolean

  /** The arguments in the order they are written, each with its field name (by-name records only). */
  protected def layout: Seq[(Expression, Array[Byte])]

  override def nullable: Boolean = false
  override def dataType: DataType = BinaryType
  override def foldable: Boolean = children.forall(_.foldable)

  @transient private lazy val interpreted: Array[(Expression, Array[Byte], InterpretedEncoder.Writer)] =
    layout.map { case (c, name) => (c, name, InterpretedEncoder.writer(c.dataType)) }.toArray

  override def eval(input: InternalRow): Any = {
    // One encoder per thread: expressions can be shared, the encoder's stream state cannot.
    val encoder = HashesRecord.threadEncoder.get()
    if (byName) encoder.beginRecordByName() else encoder.beginRecord(interpreted.length)
    var i = 0
    while (i < interpreted.length) {
      val (child, name, write) = interpreted(i)
      val v = child.eval(input)
      if (v != null) {
        if (byName) encoder.putFieldName(name)
        write(encoder, v)
      } else if (!byName) {
        encoder.putNull()
      }
      i += 1
    }
    if (byName) encoder.finishRecordByName() else encoder.finishRecord()
  }

  override protected def doGenCode(ctx: CodegenContext, ev: ExprCode): ExprCode = {
    val encoder = ctx.addMutableState(classOf[CanonicalEncoder].getName, "recordEncoder",
      v => s"$v = new ${classOf[CanonicalEncoder].getName}();", forceInline = true)
    val gen = new EncoderCodegen(ctx, encoder)
    val perArgument = layout.map { case (child, name) =>
      val c = child.genCode(ctx)
      val (whenNull, fieldName) =
        if (byName) ("", s"$encoder.putFieldName(${ctx.addReferenceObj("fieldName", name, "byte[]")});")
        else (s"$encoder.putNull();", "")
      s"""
         |${c.code}
         |if (${c.isNull}) {
         |  $whenNull
         |} else {
         |  $fieldName
         |  ${gen.write(c.value.toString, child.dataType)}
         |}
       """.stripMargin
    }
    // Wide rows: the per-argument code is split into methods below the JVM's 64 KB limit.
    val body = ctx.splitExpressionsWithCurrentInputs(perArgument, funcName = "hashRecord")
    val (begin, finish) =
      if (byName) (s"$encoder.beginRecordByName();", s"$encoder.finishRecordByName()")
      else (s"$encoder.beginRecord(${layout.length});", s"$encoder.finishRecord()")
    ev.copy(code =
      code"""
         |$begin
         |$body
         |final byte[] ${ev.value} = $finish;
       """.stripMargin, isNull = FalseLiteral)
  }
}

object HashesRecord {
  private val threadEncoder = ThreadLocal.withInitial[CanonicalEncoder](() => new CanonicalEncoder)

  /** The name an argument goes by: a column's name, or the SQL text of any other expression. */
  def argumentName(e: Expression): String = e match {
    case a: Attribute => a.name
    case other => other.sql
  }
}
