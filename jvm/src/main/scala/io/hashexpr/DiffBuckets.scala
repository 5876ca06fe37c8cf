package io.hashexpr

import java.nio.ByteBuffer

import scala.collection.mutable.ArrayBuffer

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.analysis.TypeCheckResult
import org.apache.spark.sql.catalyst.analysis.TypeCheckResult.DataTypeMismatch
import org.apache.spark.sql.catalyst.expressions.{BoundReference, Expression, ExpressionDescription, UnsafeRow}
import org.apache.spark.sql.catalyst.expressions.aggregate.TypedImperativeAggregate
import org.apache.spark.sql.catalyst.util.GenericArrayData
import org.apache.spark.sql.types._

// scalastyle:off line.size.limit
@ExpressionDescription(
  usage = """
    _FUNC_(side, bucket, buckets, digest) - Compares the rows of two sides, old (side 0) and new (side 1), bucket by bucket, and returns a struct: each side's row count, the rows never matched (bucket -1) of each side, the rows of the buckets whose multisets of digests differ, the old rows of the other buckets, and those differing buckets in ascending order. The first pass of the Python package's diff.
  """,
  arguments = """
    Arguments:
      * side - 0 for a row of the old side, 1 for a row of the new side.
      * bucket - the row's bucket, from 0 to buckets - 1, or -1 for a row that is never matched (a NULL key).
      * buckets - the number of buckets: a constant from 1 to 1048576.
      * digest - a 16-byte hash of what is compared, e.g. record_hash(record_key(id), v): a bucket is the same on both sides when its rows' digests are the same multiset (compared as counts and 128-bit sums).
  """,
  examples = """
    Examples:
      > SELECT _FUNC_(side, id % 2, 2, record_hash(id, v)).differing_buckets[0] FROM VALUES (0, 1, 'a'), (1, 1, 'a'), (0, 2, 'b'), (1, 2, 'B') AS t(side, id, v);
       0
      > SELECT _FUNC_(side, 0, 1, record_hash(v)).rows_to_compare FROM VALUES (0, 'a'), (1, 'a'), (0, 'a'), (1, 'b') AS t(side, v);
       4
  """,
  since = "0.1.0",
  group = "agg_funcs")
// scalastyle:on line.size.limit
case class DiffBuckets(
    side: Expression,
    bucket: Expression,
    buckets: Expression,
    digest: Expression,
    mutableAggBufferOffset: Int = 0,
    inputAggBufferOffset: Int = 0) extends TypedImperativeAggregate[DiffBuckets.Counts] {

  def this(side: Expression, bucket: Expression, buckets: Expression, digest: Expression) =
    this(side, bucket, buckets, digest, 0, 0)

  override def prettyName: String = DiffBuckets.Name
  override def children: Seq[Expression] = Seq(side, bucket, buckets, digest)
  override def nullable: Boolean = false
  override def dataType: DataType = DiffBuckets.ResultType

  override def checkInputDataTypes(): TypeCheckResult = {
    def mismatch(msg: String) = DataTypeMismatch("TYPE_CHECK_FAILURE_WITH_HINT", Map(
      "msg" -> s"`$prettyName` $msg", "hint" -> s": call it as $prettyName(side, bucket, buckets, digest)"))
    def integral(e: Expression) = e.dataType match {
      case ByteType | ShortType | IntegerType | LongType => true
      case _ => false
    }
    if (!integral(side)) mismatch(s"needs an integer side (0 old, 1 new), not ${side.dataType.sql}")
    else if (!integral(bucket)) mismatch(s"needs an integer bucket, not ${bucket.dataType.sql}")
    else if (!integral(buckets) || !buckets.foldable) mismatch("needs a constant integer number of buckets")
    else if (digest.dataType != BinaryType) mismatch(s"needs a BINARY digest, not ${digest.dataType.sql}")
    else {
      val n = Option(buckets.eval()).map(_.asInstanceOf[Number].longValue)
      if (n.forall(v => v < 1 || v > DiffBuckets.MaxBuckets)) {
        mismatch(s"needs from 1 to ${DiffBuckets.MaxBuckets} buckets, not ${n.getOrElse("NULL")}")
      } else {
        TypeCheckResult.TypeCheckSuccess
      }
    }
  }

  @transient private lazy val nBuckets: Int = buckets.eval().asInstanceOf[Number].intValue

  override def createAggregationBuffer(): DiffBuckets.Counts = new DiffBuckets.Counts(nBuckets)

  override def update(counts: DiffBuckets.Counts, input: InternalRow): DiffBuckets.Counts = {
    val s = integral(side, input, "side")
    if (s != 0 && s != 1) throw new IllegalArgumentException(s"$prettyName: side must be 0 or 1, got $s")
    val old = s == 0
    val b = integral(bucket, input, "bucket")
    if (b == -1) {
      counts.addUnmatched(old)
    } else if (b < 0 || b >= counts.buckets) {
      throw new IllegalArgumentException(s"$prettyName: bucket $b is outside 0 to ${counts.buckets - 1} and not -1")
    } else {
      digest match {
        // The digest's bytes are read where they lie in the row, without copying them out.
        case BoundReference(i, _, _) if input.isInstanceOf[UnsafeRow] && !input.isNullAt(i) =>
          val row = input.asInstanceOf[UnsafeRow]
          val offsetAndSize = row.getLong(i)
          checkDigest(offsetAndSize.toInt)
          val at = row.getBaseOffset + (offsetAndSize >>> 32)
          counts.add(b.toInt, old, HashLane.read(row.getBaseObject, at), HashLane.read(row.getBaseObject, at + 8))
        case _ =>
          val d = digest.eval(input).asInstanceOf[Array[Byte]]
          checkDigest(if (d == null) -1 else d.length)
          counts.add(b.toInt, old, HashLane.read(d, 0), HashLane.read(d, 1))
      }
    }
    counts
  }

  private def checkDigest(length: Int): Unit = if (length != 16) {
    throw new IllegalArgumentException(
      s"$prettyName: the digest must be 16 bytes, got ${if (length < 0) "NULL" else s"$length bytes"}")
  }

  // Arguments arrive bound to the input row's columns: reading them directly saves boxing every value.
  private def integral(e: Expression, input: InternalRow, what: String): Long = e match {
    case BoundReference(i, dt, _) =>
      if (input.isNullAt(i)) throw new IllegalArgumentException(s"$prettyName: $what must not be NULL")
      dt match {
        case IntegerType => input.getInt(i)
        case LongType => input.getLong(i)
        case ShortType => input.getShort(i)
        case _ => input.getByte(i)
      }
    case _ =>
      e.eval(input) match {
        case n: Number => n.longValue
        case _ => throw new IllegalArgumentException(s"$prettyName: $what must not be NULL")
      }
  }

  override def merge(counts: DiffBuckets.Counts, other: DiffBuckets.Counts): DiffBuckets.Counts = {
    counts.merge(other)
    counts
  }

  override def eval(counts: DiffBuckets.Counts): Any = counts.result()

  override def serialize(counts: DiffBuckets.Counts): Array[Byte] = counts.serialize()

  override def deserialize(bytes: Array[Byte]): DiffBuckets.Counts = DiffBuckets.Counts.deserialize(bytes)

  override def withNewMutableAggBufferOffset(offset: Int): DiffBuckets = copy(mutableAggBufferOffset = offset)

  override def withNewInputAggBufferOffset(offset: Int): DiffBuckets = copy(inputAggBufferOffset = offset)

  override protected def withNewChildrenInternal(c: IndexedSeq[Expression]): DiffBuckets =
    copy(side = c(0), bucket = c(1), buckets = c(2), digest = c(3))
}

object DiffBuckets {
  val Name = "diff_buckets"

  /** A bucket costs 32 bytes of buffer per task: 2^20 buckets are 32 MiB. */
  val MaxBuckets: Int = 1 << 20

  val ResultType: StructType = StructType(Seq(
    "old_rows", "new_rows", "unmatched_old", "unmatched_new", "rows_to_compare", "unchanged_rows"
  ).map(StructField(_, LongType, nullable = false)) :+
    StructField("differing_buckets", ArrayType(IntegerType, containsNull = false), nullable = false))

  /** Buckets per page: the cells of a page (128 KiB) are allocated when the page first sees a row. */
  private val PageBits = 12
  private val PageSize = 1 << PageBits

  /** Rows per batch of [[Counts.add]]: 160 KiB, which stays in the CPU's caches. */
  private[hashexpr] val BatchSize = 1 << 13

  /**
   * Per bucket: the old and the new rows, and the 128-bit sum (mod 2^128) of the old digests minus the new
   * ones. A bucket holds the same multiset of digests on both sides exactly when the counts match and the sum
   * is 0 (a different multiset sums to 0 only by a 2^-128 chance). Cells live in pages allocated on first
   * use, so a task over a few rows neither allocates nor ships the cells of every bucket.
   */
  final class Counts(val buckets: Int) {
    // Page p holds buckets p * PageSize until the next page; cells(4i) old rows, cells(4i + 1) new rows,
    // cells(4i + 2) and cells(4i + 3) the sum's low and high half of the page's bucket i.
    private val pages = new Array[Array[Long]]((buckets + PageSize - 1) >>> PageBits)
    private var unmatchedOld = 0L
    private var unmatchedNew = 0L
    // Rows not yet added to their cells: bucket << 1 | 1 for a new row, and the sum to add (negated for a new
    // row). Allocated with the first row, so that a task without rows allocates nothing.
    private var batchCells: Array[Int] = _
    private var batchSums: Array[Long] = _
    private var batched = 0

    private def page(bucket: Int): Array[Long] = {
      val p = bucket >>> PageBits
      var cells = pages(p)
      if (cells == null) {
        cells = new Array[Long](4 * math.min(PageSize, buckets - (p << PageBits)))
        pages(p) = cells
      }
      cells
    }

    def addUnmatched(old: Boolean): Unit = if (old) unmatchedOld += 1 else unmatchedNew += 1

    def add(bucket: Int, old: Boolean, lo: Long, hi: Long): Unit = {
      if (batchCells == null) {
        batchCells = new Array[Int](BatchSize)
        batchSums = new Array[Long](2 * BatchSize)
      }
      val k = batched
      batchCells(k) = bucket << 1 | (if (old) 0 else 1)
      if (old) {
        batchSums(2 * k) = lo
        batchSums(2 * k + 1) = hi
      } else {
        // Subtracting is adding the two's complement, -(hi:lo) = (~hi + (lo == 0)) : -lo.
        batchSums(2 * k) = -lo
        batchSums(2 * k + 1) = ~hi + (if (lo == 0) 1L else 0L)
      }
      batched = k + 1
      if (batched == BatchSize) flush()
    }

    /**
     * Adds the batched rows to their buckets' cells. The loop has no branch that depends on the data, so the
     * CPU works on the cells of many rows at once; adding each row as it arrived waited for one row's cells
     * (2^20 buckets are 32 MiB, far beyond the caches) between the hashing of two rows.
     */
    private def flush(): Unit = {
      var k = 0
      while (k < batched) {
        val c = batchCells(k)
        val bucket = c >>> 1
        val cells = page(bucket)
        val i = 4 * (bucket & (PageSize - 1))
        cells(i + (c & 1)) += 1
        addSum(cells, i, batchSums(2 * k), batchSums(2 * k + 1))
        k += 1
      }
      batched = 0
    }

    private def addSum(cells: Array[Long], i: Int, lo: Long, hi: Long): Unit = {
      val sumLo = cells(i + 2) + lo
      cells(i + 3) += hi + (if (java.lang.Long.compareUnsigned(sumLo, lo) < 0) 1L else 0L)
      cells(i + 2) = sumLo
    }

    private def addBucket(bucket: Int, oldRows: Long, newRows: Long, lo: Long, hi: Long): Unit = {
      val cells = page(bucket)
      val i = 4 * (bucket & (PageSize - 1))
      cells(i) += oldRows
      cells(i + 1) += newRows
      addSum(cells, i, lo, hi)
    }

    /** Calls `f(bucket, cells, index)` for every bucket that saw a row, in ascending order. */
    private def foreachUsed(f: (Int, Array[Long], Int) => Unit): Unit = {
      flush()
      var p = 0
      while (p < pages.length) {
        val cells = pages(p)
        if (cells != null) {
          var i = 0
          while (i < cells.length) {
            if (cells(i) != 0L || cells(i + 1) != 0L) f((p << PageBits) + i / 4, cells, i)
            i += 4
          }
        }
        p += 1
      }
    }

    def merge(other: Counts): Unit = {
      require(other.buckets == buckets, s"cannot merge $buckets buckets with ${other.buckets}")
      other.foreachUsed((b, cells, i) => addBucket(b, cells(i), cells(i + 1), cells(i + 2), cells(i + 3)))
      unmatchedOld += other.unmatchedOld
      unmatchedNew += other.unmatchedNew
    }

    def result(): InternalRow = {
      var (oldRows, newRows, toCompare, unchanged) = (unmatchedOld, unmatchedNew, 0L, 0L)
      val differing = ArrayBuffer.empty[Int]
      foreachUsed { (b, cells, i) =>
        val (o, n) = (cells(i), cells(i + 1))
        oldRows += o
        newRows += n
        if (o == n && cells(i + 2) == 0L && cells(i + 3) == 0L) {
          unchanged += o
        } else {
          toCompare += o + n
          differing += b
        }
      }
      InternalRow(oldRows, newRows, unmatchedOld, unmatchedNew, toCompare, unchanged,
        new GenericArrayData(differing.toArray[Any]))
    }

    /**
     * The bucket count and the unmatched rows, then each bucket that saw rows: the gap from the previous one
     * and its two row counts as variable-length integers (one byte each for most buckets), and its sum.
     */
    def serialize(): Array[Byte] = {
      val out = new Bytes(64)
      out.putVarLong(buckets).putVarLong(unmatchedOld).putVarLong(unmatchedNew)
      var previous = -1
      foreachUsed { (b, cells, i) =>
        out.putVarLong(b - previous - 1).putVarLong(cells(i)).putVarLong(cells(i + 1))
        out.putLong(cells(i + 2)).putLong(cells(i + 3))
        previous = b
      }
      out.toArray
    }
  }

  object Counts {
    def deserialize(bytes: Array[Byte]): Counts = {
      val in = ByteBuffer.wrap(bytes)
      val counts = new Counts(Bytes.getVarLong(in).toInt)
      counts.unmatchedOld = Bytes.getVarLong(in)
      counts.unmatchedNew = Bytes.getVarLong(in)
      var b = -1
      while (in.hasRemaining) {
        b += Bytes.getVarLong(in).toInt + 1
        counts.addBucket(b, Bytes.getVarLong(in), Bytes.getVarLong(in), in.getLong, in.getLong)
      }
      counts
    }
  }
}
