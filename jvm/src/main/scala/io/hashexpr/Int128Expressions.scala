package io.hashexpr

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{BinaryExpression, Expression, UnaryExpression}
import org.apache.spark.sql.catalyst.expressions.codegen.{CodegenContext, ExprCode, FalseLiteral}
import org.apache.spark.sql.catalyst.expressions.codegen.Block._
import org.apache.spark.sql.types.{DataType, LongType}
import org.apache.spark.unsafe.Platform

// Small non-null LONG arithmetic for the 128-bit sums of the fingerprint aggregate. Catalyst's `Add` is not
// used: under ANSI mode it throws on overflow, and its constructor differs between Spark minors.

/** `left + right` on longs, wrapping around on overflow (two's complement). */
case class WrappingAdd(left: Expression, right: Expression) extends BinaryExpression {
  override def dataType: DataType = LongType
  override def nullable: Boolean = false
  override def eval(input: InternalRow): Any =
    left.eval(input).asInstanceOf[Long] + right.eval(input).asInstanceOf[Long]
  override protected def doGenCode(ctx: CodegenContext, ev: ExprCode): ExprCode =
    defineCodeGen(ctx, ev, (l, r) => s"$l + $r")
  override protected def withNewChildrenInternal(l: Expression, r: Expression): WrappingAdd = copy(l, r)
}

/**
 * The high half of a 128-bit sum: `accHi + addHi + carry`, where the carry is that of the low halves
 * `accLo + addLo` (unsigned). Together with `WrappingAdd(accLo, addLo)` this adds two 128-bit numbers mod 2^128.
 */
case class CarryAdd(accHi: Expression, addHi: Expression, accLo: Expression, addLo: Expression)
  extends Expression {
  override def children: Seq[Expression] = Seq(accHi, addHi, accLo, addLo)
  override def dataType: DataType = LongType
  override def nullable: Boolean = false

  override def eval(input: InternalRow): Any = {
    val lo = accLo.eval(input).asInstanceOf[Long]
    val add = addLo.eval(input).asInstanceOf[Long]
    val carry = if (java.lang.Long.compareUnsigned(lo + add, add) < 0) 1L else 0L
    accHi.eval(input).asInstanceOf[Long] + addHi.eval(input).asInstanceOf[Long] + carry
  }

  override protected def doGenCode(ctx: CodegenContext, ev: ExprCode): ExprCode = {
    val (hi, addH, lo, addL) = (accHi.genCode(ctx), addHi.genCode(ctx), accLo.genCode(ctx), addLo.genCode(ctx))
    ev.copy(code =
      code"""
         |${hi.code}
         |${addH.code}
         |${lo.code}
         |${addL.code}
         |final long ${ev.value} = ${hi.value} + ${addH.value} +
         |  (java.lang.Long.compareUnsigned(${lo.value} + ${addL.value}, ${addL.value}) < 0 ? 1L : 0L);
       """.stripMargin, isNull = FalseLiteral)
  }

  override protected def withNewChildrenInternal(c: IndexedSeq[Expression]): CarryAdd =
    CarryAdd(c(0), c(1), c(2), c(3))
}

/** Half `lane` (0 or 1) of a 16-byte hash, as the little-endian long the hash was built from. */
case class HashLane(child: Expression, lane: Int) extends UnaryExpression {
  override def dataType: DataType = LongType
  override def nullable: Boolean = false
  override def eval(input: InternalRow): Any = HashLane.read(child.eval(input).asInstanceOf[Array[Byte]], lane)
  override protected def doGenCode(ctx: CodegenContext, ev: ExprCode): ExprCode =
    defineCodeGen(ctx, ev, h => s"${HashLane.getClass.getName.stripSuffix("$")}.read($h, $lane)")
  override protected def withNewChildInternal(c: Expression): HashLane = copy(child = c)
}

object HashLane {
  private val bigEndian = java.nio.ByteOrder.nativeOrder() == java.nio.ByteOrder.BIG_ENDIAN

  def read(hash: Array[Byte], lane: Int): Long = read(hash, Platform.BYTE_ARRAY_OFFSET + 8L * lane)

  /** The little-endian long at `offset` of `base` (as `Platform.getLong` addresses memory). */
  def read(base: AnyRef, offset: Long): Long = {
    val v = Platform.getLong(base, offset)
    if (bigEndian) java.lang.Long.reverseBytes(v) else v
  }
}
