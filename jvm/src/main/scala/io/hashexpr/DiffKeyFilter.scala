package io.hashexpr

import java.nio.ByteBuffer

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.analysis.TypeCheckResult
import org.apache.spark.sql.catalyst.analysis.TypeCheckResult.DataTypeMismatch
import org.apache.spark.sql.catalyst.expressions.{BinaryExpression, Expression, ExpressionDescription, PlanExpression}
import org.apache.spark.sql.catalyst.expressions.aggregate.TypedImperativeAggregate
import org.apache.spark.sql.catalyst.expressions.codegen.{CodegenContext, EmptyBlock, ExprCode, JavaCode, TrueLiteral}
import org.apache.spark.sql.types._

// scalastyle:off line.size.limit
@ExpressionDescription(
  usage = """
    _FUNC_(key_hash, bits) - Returns a bitmap of `bits` bits with one bit set for each non-NULL key hash: a filter that answers `diff_key_filter_contains` true for every key hash it was built from, and for other hashes only when they share a bit (a share of about the set bits). The Python package's diff builds it from the keys that changed, to read the values of those rows alone.
  """,
  arguments = """
    Arguments:
      * key_hash - a BINARY hash of at least 16 bytes, e.g. record_key(id); NULL is skipped.
      * bits - the size of the bitmap: a constant power of two from 64 to 67108864 (8 MiB).
  """,
  examples = """
    Examples:
      > SELECT diff_key_filter_contains((SELECT _FUNC_(record_key(id), 1024) FROM range(10) AS t(id)), record_key(3));
       true
      > SELECT length(_FUNC_(record_key(id), 1024)) FROM range(10) AS t(id);
       128
  """,
  since = "0.1.0",
  group = "agg_funcs")
// scalastyle:on line.size.limit
case class DiffKeyFilter(
    keyHash: Expression,
    bits: Expression,
    mutableAggBufferOffset: Int = 0,
    inputAggBufferOffset: Int = 0) extends TypedImperativeAggregate[Array[Long]] {

  def this(keyHash: Expression, bits: Expression) = this(keyHash, bits, 0, 0)

  override def prettyName: String = DiffKeyFilter.Name
  override def children: Seq[Expression] = Seq(keyHash, bits)
  override def nullable: Boolean = false
  override def dataType: DataType = BinaryType

  override def checkInputDataTypes(): TypeCheckResult = {
    def mismatch(msg: String) = DataTypeMismatch("TYPE_CHECK_FAILURE_WITH_HINT", Map(
      "msg" -> s"`$prettyName` $msg", "hint" -> s": call it as $prettyName(key_hash, bits)"))
    if (keyHash.dataType != BinaryType) mismatch(s"needs a BINARY key hash, not ${keyHash.dataType.sql}")
    else if (!Seq(IntegerType, LongType).contains(bits.dataType) || !bits.foldable) {
      mismatch("needs a constant integer number of bits")
    } else {
      val n = Option(bits.eval()).map(_.asInstanceOf[Number].longValue)
      if (n.forall(v => v < 64 || v > DiffKeyFilter.MaxBits || java.lang.Long.bitCount(v) != 1)) {
        mismatch(s"needs a power of two from 64 to ${DiffKeyFilter.MaxBits} bits, not ${n.getOrElse("NULL")}")
      } else {
        TypeCheckResult.TypeCheckSuccess
      }
    }
  }

  @transient private lazy val nBits: Int = bits.eval().asInstanceOf[Number].intValue

  override def createAggregationBuffer(): Array[Long] = new Array[Long](nBits >>> 6)

  override def update(bitmap: Array[Long], input: InternalRow): Array[Long] = {
    val hash = keyHash.eval(input).asInstanceOf[Array[Byte]]
    if (hash != null) DiffKeyFilter.set(bitmap, DiffKeyFilter.lane(prettyName, hash))
    bitmap
  }

  override def merge(bitmap: Array[Long], other: Array[Long]): Array[Long] = {
    require(other.length == bitmap.length, s"cannot merge ${other.length * 64} bits with ${bitmap.length * 64}")
    var i = 0
    while (i < bitmap.length) {
      bitmap(i) |= other(i)
      i += 1
    }
    bitmap
  }

  override def eval(bitmap: Array[Long]): Any = DiffKeyFilter.toBytes(bitmap)

  override def serialize(bitmap: Array[Long]): Array[Byte] = DiffKeyFilter.serialize(bitmap)

  override def deserialize(bytes: Array[Byte]): Array[Long] = DiffKeyFilter.deserialize(bytes)

  override def withNewMutableAggBufferOffset(offset: Int): DiffKeyFilter = copy(mutableAggBufferOffset = offset)

  override def withNewInputAggBufferOffset(offset: Int): DiffKeyFilter = copy(inputAggBufferOffset = offset)

  override protected def withNewChildrenInternal(c: IndexedSeq[Expression]): DiffKeyFilter =
    copy(keyHash = c(0), bits = c(1))
}

object DiffKeyFilter {
  val Name = "diff_key_filter"

  /** 8 MiB of bitmap: sent once to every task that reads a side. */
  val MaxBits: Int = 1 << 26

  /** The bits taken from a key hash: its second 8 bytes, independent of the first 8 that diff's buckets use. */
  def lane(function: String, hash: Array[Byte]): Long = {
    if (hash.length < 16) {
      throw new IllegalArgumentException(s"$function: a key hash must have at least 16 bytes, got ${hash.length}")
    }
    HashLane.read(hash, 1)
  }

  /** Bits are numbered from the low bit of the first long; the bitmap's size is a power of two. */
  def set(bitmap: Array[Long], lane: Long): Unit = {
    val bit = lane & (bitmap.length * 64L - 1)
    bitmap((bit >>> 6).toInt) |= 1L << bit
  }

  def contains(bitmap: Array[Long], lane: Long): Boolean = {
    val bit = lane & (bitmap.length * 64L - 1)
    (bitmap((bit >>> 6).toInt) & (1L << bit)) != 0L
  }

  /** The bitmap as little-endian longs, the form `diff_key_filter` returns and its `_contains` reads. */
  def toBytes(bitmap: Array[Long]): Array[Byte] = {
    val out = ByteBuffer.allocate(bitmap.length * 8).order(java.nio.ByteOrder.LITTLE_ENDIAN)
    bitmap.foreach(out.putLong)
    out.array()
  }

  def fromBytes(function: String, bytes: Array[Byte]): Array[Long] = {
    val n = bytes.length / 8
    if (bytes.length % 8 != 0 || n == 0 || java.lang.Integer.bitCount(n) != 1) {
      throw new IllegalArgumentException(
        s"$function: the filter must be a result of ${Name}, got ${bytes.length} bytes")
    }
    val in = ByteBuffer.wrap(bytes).order(java.nio.ByteOrder.LITTLE_ENDIAN)
    Array.fill(n)(in.getLong)
  }

  /**
   * A task's bitmap between tasks: a tag and the bitmap's length in longs, then the gaps between set bits as
   * variable-length integers (tag 0) when that is shorter (a task holds a few of the keys, so most of its
   * bitmap is zeros), else the longs (tag 1).
   */
  def serialize(bitmap: Array[Long]): Array[Byte] = {
    val set = bitmap.iterator.map(java.lang.Long.bitCount).sum
    val sparse = set * 4L < bitmap.length * 8L
    val out = new Bytes(if (sparse) 16 + set * 4 else 16 + bitmap.length * 8)
    out.putVarLong(if (sparse) 0 else 1).putVarLong(bitmap.length)
    if (sparse) {
      var previous = -1L
      var i = 0
      while (i < bitmap.length) {
        var word = bitmap(i)
        while (word != 0L) {
          val bit = i * 64L + java.lang.Long.numberOfTrailingZeros(word)
          out.putVarLong(bit - previous - 1)
          previous = bit
          word &= word - 1
        }
        i += 1
      }
    } else {
      bitmap.foreach(out.putLong)
    }
    out.toArray
  }

  def deserialize(bytes: Array[Byte]): Array[Long] = {
    val in = ByteBuffer.wrap(bytes)
    val sparse = Bytes.getVarLong(in) == 0
    val n = Bytes.getVarLong(in).toInt
    if (sparse) {
      val bitmap = new Array[Long](n)
      var bit = -1L
      while (in.hasRemaining) {
        bit += Bytes.getVarLong(in) + 1
        bitmap((bit >>> 6).toInt) |= 1L << bit
      }
      bitmap
    } else {
      Array.fill(n)(in.getLong)
    }
  }
}

// scalastyle:off line.size.limit
@ExpressionDescription(
  usage = """
    _FUNC_(filter, key_hash) - Returns true when `key_hash` may be one of the key hashes `filter` (a result of `diff_key_filter`) was built from: always for those, for others only when they share a bit. NULL when `key_hash` is NULL.
  """,
  arguments = """
    Arguments:
      * filter - a constant or an uncorrelated scalar subquery returning `diff_key_filter(...)`: it is read once per task, not per row.
      * key_hash - a BINARY hash of at least 16 bytes, as given to diff_key_filter.
  """,
  examples = """
    Examples:
      > SELECT count_if(diff_key_filter_contains((SELECT diff_key_filter(record_key(id), 67108864) FROM range(100) AS t(id)), record_key(id))) FROM range(100) AS t(id);
       100
  """,
  since = "0.1.0",
  group = "predicate_funcs")
// scalastyle:on line.size.limit
case class DiffKeyFilterContains(filter: Expression, keyHash: Expression) extends BinaryExpression {

  override def left: Expression = filter
  override def right: Expression = keyHash
  override def prettyName: String = DiffKeyFilterContains.Name
  override def dataType: DataType = BooleanType
  override def nullable: Boolean = true

  override def checkInputDataTypes(): TypeCheckResult = {
    def mismatch(msg: String) = DataTypeMismatch("TYPE_CHECK_FAILURE_WITH_HINT", Map(
      "msg" -> s"`$prettyName` $msg", "hint" -> s": call it as $prettyName(filter, key_hash)"))
    if (filter.dataType != BinaryType) mismatch(s"needs a BINARY filter, not ${filter.dataType.sql}")
    else if (keyHash.dataType != BinaryType) mismatch(s"needs a BINARY key hash, not ${keyHash.dataType.sql}")
    else if (!filter.foldable && !isScalarSubquery(filter)) {
      mismatch("needs a filter that is a constant or an uncorrelated scalar subquery, so it is read once")
    } else {
      TypeCheckResult.TypeCheckSuccess
    }
  }

  private def isScalarSubquery(e: Expression): Boolean = e match {
    case p: PlanExpression[_] => p.references.isEmpty
    case _ => false
  }

  // Evaluated once, where the plan runs: by then Spark has run the subquery and holds its result.
  @transient private lazy val bitmap: Array[Long] =
    Option(filter.eval().asInstanceOf[Array[Byte]]).map(DiffKeyFilter.fromBytes(prettyName, _)).orNull

  override def eval(input: InternalRow): Any = {
    val hash = keyHash.eval(input).asInstanceOf[Array[Byte]]
    if (hash == null || bitmap == null) null
    else DiffKeyFilter.contains(bitmap, DiffKeyFilter.lane(prettyName, hash))
  }

  override protected def doGenCode(ctx: CodegenContext, ev: ExprCode): ExprCode = {
    val filterClass = DiffKeyFilter.getClass.getName.stripSuffix("$")
    if (bitmap == null) {
      ev.copy(code = EmptyBlock, isNull = TrueLiteral, value = JavaCode.defaultLiteral(BooleanType))
    } else {
      val bits = ctx.addReferenceObj("diffKeyFilter", bitmap, "long[]")
      val name = ctx.addReferenceObj("functionName", prettyName, "java.lang.String")
      nullSafeCodeGen(ctx, ev, (_, h) =>
        s"${ev.value} = $filterClass.contains($bits, $filterClass.lane($name, $h));")
    }
  }

  override protected def withNewChildrenInternal(l: Expression, r: Expression): DiffKeyFilterContains =
    copy(filter = l, keyHash = r)
}

object DiffKeyFilterContains {
  val Name = "diff_key_filter_contains"
}
