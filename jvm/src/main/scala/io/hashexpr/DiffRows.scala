package io.hashexpr

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.analysis.TypeCheckResult
import org.apache.spark.sql.catalyst.analysis.TypeCheckResult.DataTypeMismatch
import org.apache.spark.sql.catalyst.expressions.{And, AttributeReference, BinaryExpression, CreateNamedStruct, EqualTo, Expression, ExpressionDescription, Literal, UnaryExpression}
import org.apache.spark.sql.catalyst.expressions.aggregate.DeclarativeAggregate
import org.apache.spark.sql.catalyst.expressions.codegen.{CodegenContext, ExprCode, FalseLiteral}
import org.apache.spark.sql.catalyst.expressions.codegen.Block._
import org.apache.spark.sql.types._

// scalastyle:off line.size.limit
@ExpressionDescription(
  usage = """
    _FUNC_(side, row_hash, width) - Compares a group's rows on two sides, old (side 0) and new (side 1), by their row hashes, and returns a struct: each side's row count, and whether both sides hold the same multiset of row hashes (compared as counts and sums mod 2^128 of each 16 bytes, old minus new: exact for one row a side). The per-key step of the Python package's diff without changed columns.
  """,
  arguments = """
    Arguments:
      * side - 0 for a row of the old side, 1 for a row of the new side.
      * row_hash - the row's hash, a BINARY of exactly `width` bytes, e.g. record_hash(v).
      * width - the bytes of every row hash: a constant 16 (murmur3), 32 (SHA-256), 48 or 64.
  """,
  examples = """
    Examples:
      > SELECT id, _FUNC_(side, record_hash(v), 16).same FROM VALUES (0, 1, 'a'), (1, 1, 'a'), (0, 2, 'b'), (1, 2, 'B') AS t(side, id, v) GROUP BY id ORDER BY id;
       1	true
       2	false
      > SELECT r.old_rows, r.new_rows, r.same FROM (SELECT _FUNC_(side, record_hash(v), 16) AS r FROM VALUES (0, 'a'), (0, 'b'), (1, 'b'), (1, 'a') AS t(side, v));
       2	2	true
  """,
  since = "0.2.0",
  group = "agg_funcs")
// scalastyle:on line.size.limit
case class DiffRows(side: Expression, rowHash: Expression, width: Expression) extends DeclarativeAggregate {

  override def prettyName: String = DiffRows.Name
  override def children: Seq[Expression] = Seq(side, rowHash, width)
  override def nullable: Boolean = false
  override def dataType: DataType = DiffRows.ResultType

  override def checkInputDataTypes(): TypeCheckResult = {
    def mismatch(msg: String) = DataTypeMismatch("TYPE_CHECK_FAILURE_WITH_HINT", Map(
      "msg" -> s"`$prettyName` $msg", "hint" -> s": call it as $prettyName(side, row_hash, width)"))
    if (!DiffRows.integral(side.dataType)) mismatch(s"needs an integer side (0 old, 1 new), not ${side.dataType.sql}")
    else if (rowHash.dataType != BinaryType) mismatch(s"needs a BINARY row hash, not ${rowHash.dataType.sql}")
    else if (!DiffRows.integral(width.dataType) || !width.foldable) mismatch("needs a constant integer width")
    else {
      val n = Option(width.eval()).map(_.asInstanceOf[Number].longValue)
      if (n.forall(w => !DiffRows.Widths.contains(w))) {
        mismatch(s"needs a width of ${DiffRows.Widths.mkString(", ")} bytes, not ${n.getOrElse("NULL")}")
      } else {
        TypeCheckResult.TypeCheckSuccess
      }
    }
  }

  private lazy val bytes: Int = width.eval().asInstanceOf[Number].intValue

  private lazy val oldRows = AttributeReference("old_rows", LongType, nullable = false)()
  private lazy val newRows = AttributeReference("new_rows", LongType, nullable = false)()
  // Per 16 bytes of the row hash: the low and the high half of the sum of the old rows' minus the new rows'.
  private lazy val sums: Seq[(AttributeReference, AttributeReference)] = (0 until bytes / 16).map { i =>
    (AttributeReference(s"sum${i}_lo", LongType, nullable = false)(),
      AttributeReference(s"sum${i}_hi", LongType, nullable = false)())
  }

  override lazy val aggBufferAttributes: Seq[AttributeReference] =
    Seq(oldRows, newRows) ++ sums.flatMap { case (lo, hi) => Seq(lo, hi) }
  override lazy val initialValues: Seq[Expression] = aggBufferAttributes.map(_ => Literal(0L))

  override lazy val updateExpressions: Seq[Expression] = {
    val checked = DiffRowSide(side)
    Seq(WrappingAdd(oldRows, DiffRowCount(checked, old = true)),
      WrappingAdd(newRows, DiffRowCount(checked, old = false))) ++
      sums.zipWithIndex.flatMap { case ((lo, hi), i) =>
        val (addLo, addHi) = (DiffRowLane(checked, rowHash, bytes, 2 * i), DiffRowLane(checked, rowHash, bytes, 2 * i + 1))
        Seq(WrappingAdd(lo, addLo), CarryAdd(hi, addHi, lo, addLo))
      }
  }

  override lazy val mergeExpressions: Seq[Expression] =
    Seq(WrappingAdd(oldRows.left, oldRows.right), WrappingAdd(newRows.left, newRows.right)) ++
      sums.flatMap { case (lo, hi) =>
        Seq(WrappingAdd(lo.left, lo.right), CarryAdd(hi.left, hi.right, lo.left, lo.right))
      }

  override lazy val evaluateExpression: Expression = {
    val zero = sums.flatMap { case (lo, hi) => Seq(lo, hi) }.map(s => EqualTo(s, Literal(0L)))
    CreateNamedStruct(Seq(
      Literal("old_rows"), oldRows,
      Literal("new_rows"), newRows,
      Literal("same"), zero.foldLeft[Expression](EqualTo(oldRows, newRows))(And)))
  }

  override protected def withNewChildrenInternal(c: IndexedSeq[Expression]): DiffRows =
    copy(side = c(0), rowHash = c(1), width = c(2))
}

object DiffRows {
  val Name = "diff_rows"

  val Widths: Seq[Long] = Seq(16L, 32L, 48L, 64L)

  val ResultType: StructType = StructType(Seq(
    StructField("old_rows", LongType, nullable = false),
    StructField("new_rows", LongType, nullable = false),
    StructField("same", BooleanType, nullable = false)))

  def integral(dt: DataType): Boolean = dt match {
    case ByteType | ShortType | IntegerType | LongType => true
    case _ => false
  }

  /**
   * The side, checked: 0 (old) or 1 (new). Not named `side`: the case class's `side` would keep Scala from
   * giving this method the static forwarder that generated code calls.
   */
  def checkedSide(function: String, side: Long): Int = {
    if (side != 0L && side != 1L) throw new IllegalArgumentException(s"$function: side must be 0 or 1, got $side")
    side.toInt
  }

  /**
   * Lane `lane` (a little-endian long) of the row hash when `side` is 0, of its negation (per 16 bytes, mod
   * 2^128) when it is 1: summing these gives the old rows' sum minus the new rows'.
   */
  def lane(function: String, side: Int, hash: Array[Byte], width: Int, lane: Int): Long = {
    if (hash.length != width) {
      throw new IllegalArgumentException(s"$function: the row hash must be $width bytes, got ${hash.length} bytes")
    }
    val v = HashLane.read(hash, lane)
    if (side == 0) v
    else if ((lane & 1) == 0) -v
    // The high half of -(hi:lo) is ~hi, plus the carry of ~lo + 1, which there is exactly when lo is 0.
    else ~v + (if (HashLane.read(hash, lane - 1) == 0L) 1L else 0L)
  }
}

/** The side of a row of `diff_rows`, checked to be 0 or 1 (a NULL side is an error too). */
case class DiffRowSide(child: Expression) extends UnaryExpression {
  override def dataType: DataType = IntegerType
  override def nullable: Boolean = false

  override def eval(input: InternalRow): Any = child.eval(input) match {
    case n: Number => DiffRows.checkedSide(DiffRows.Name, n.longValue)
    case _ => throw new IllegalArgumentException(s"${DiffRows.Name}: side must not be NULL")
  }

  override protected def doGenCode(ctx: CodegenContext, ev: ExprCode): ExprCode = {
    val c = child.genCode(ctx)
    val rows = DiffRows.getClass.getName.stripSuffix("$")
    val name = DiffRows.Name
    ev.copy(code =
      code"""
         |${c.code}
         |if (${c.isNull}) {
         |  throw new IllegalArgumentException("$name: side must not be NULL");
         |}
         |final int ${ev.value} = $rows.checkedSide("$name", (long) ${c.value});
       """.stripMargin, isNull = FalseLiteral)
  }

  override protected def withNewChildInternal(c: Expression): DiffRowSide = copy(child = c)
}

/** 1 for a row of the side counted (`old`, or new), else 0; `side` is a [[DiffRowSide]]. */
case class DiffRowCount(side: Expression, old: Boolean) extends UnaryExpression {
  override def child: Expression = side
  override def dataType: DataType = LongType
  override def nullable: Boolean = false
  private def wanted: Int = if (old) 0 else 1
  override def eval(input: InternalRow): Any = if (side.eval(input).asInstanceOf[Int] == wanted) 1L else 0L
  override protected def doGenCode(ctx: CodegenContext, ev: ExprCode): ExprCode =
    defineCodeGen(ctx, ev, s => s"($s == $wanted ? 1L : 0L)")
  override protected def withNewChildInternal(c: Expression): DiffRowCount = copy(side = c)
}

/** Lane `lane` of a row's signed hash, which it adds to the sums of `diff_rows` (see [[DiffRows.lane]]). */
case class DiffRowLane(side: Expression, rowHash: Expression, width: Int, lane: Int) extends BinaryExpression {
  override def left: Expression = side
  override def right: Expression = rowHash
  override def dataType: DataType = LongType
  override def nullable: Boolean = false

  override def eval(input: InternalRow): Any = {
    val s = side.eval(input).asInstanceOf[Int]
    rowHash.eval(input) match {
      case h: Array[Byte] => DiffRows.lane(DiffRows.Name, s, h, width, lane)
      case _ => throw new IllegalArgumentException(s"${DiffRows.Name}: the row hash must not be NULL")
    }
  }

  override protected def doGenCode(ctx: CodegenContext, ev: ExprCode): ExprCode = {
    val (s, h) = (side.genCode(ctx), rowHash.genCode(ctx))
    val rows = DiffRows.getClass.getName.stripSuffix("$")
    val name = DiffRows.Name
    ev.copy(code =
      code"""
         |${s.code}
         |${h.code}
         |if (${h.isNull}) {
         |  throw new IllegalArgumentException("$name: the row hash must not be NULL");
         |}
         |final long ${ev.value} = $rows.lane("$name", ${s.value}, ${h.value}, $width, $lane);
       """.stripMargin, isNull = FalseLiteral)
  }

  override protected def withNewChildrenInternal(l: Expression, r: Expression): DiffRowLane =
    copy(side = l, rowHash = r)
}
