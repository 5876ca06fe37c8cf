package io.hashexpr

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.analysis.TypeCheckResult
import org.apache.spark.sql.catalyst.expressions.{AttributeReference, Expression, ExpressionDescription, Literal}
import org.apache.spark.sql.catalyst.expressions.aggregate.DeclarativeAggregate
import org.apache.spark.sql.catalyst.expressions.codegen.{CodegenContext, ExprCode, FalseLiteral}
import org.apache.spark.sql.catalyst.expressions.codegen.Block._
import org.apache.spark.sql.types._
import org.apache.spark.unsafe.types.UTF8String

// scalastyle:off line.size.limit
@ExpressionDescription(
  usage = """
    _FUNC_(expr1, expr2, ...) - Returns what dataset_fingerprint(expr1, expr2, ...) is computed from, as a struct: `fingerprint` (that value), `algorithm` ('murmur3'), `secret` (NULL), `count` (the row count), `sum` (the sum mod 2^128 of the rows' record_hash, 16 bytes little-endian), `lanes` (NULL) and `schema` (the digest of the arguments' names and types). Sums of states add and subtract as the multisets of rows do, so a fingerprint can be kept up to date from the rows added and removed alone. Never NULL.
  """,
  arguments = """
    Arguments:
      * expr1, expr2, ... - the values of each row, as for record_hash; `*` fingerprints every column.
  """,
  examples = """
    Examples:
      > SELECT _FUNC_(id).fingerprint = dataset_fingerprint(id) FROM range(10) AS t(id);
       true
      > SELECT _FUNC_(id).count, hex(_FUNC_(id).sum) FROM range(0) AS t(id);
       0	00000000000000000000000000000000
  """,
  since = "0.2.0",
  group = "agg_funcs")
// scalastyle:on line.size.limit
case class DatasetFingerprintState(children: Seq[Expression], names: Seq[String]) extends DeclarativeAggregate {

  // Names are taken when the function is resolved, as in dataset_fingerprint.
  def this(children: Seq[Expression]) = this(children, children.map(ArgumentNames.of(_)))

  override def prettyName: String = DatasetFingerprintState.Name
  override def nullable: Boolean = false
  override def dataType: DataType = DatasetFingerprintState.StateType

  override def checkInputDataTypes(): TypeCheckResult = RecordHash.checkArguments(prettyName, children)

  private lazy val rowHash = RecordHash(children)

  private lazy val count = AttributeReference("count", LongType, nullable = false)()
  private lazy val sumLo = AttributeReference("sum_lo", LongType, nullable = false)()
  private lazy val sumHi = AttributeReference("sum_hi", LongType, nullable = false)()

  override lazy val aggBufferAttributes: Seq[AttributeReference] = Seq(count, sumLo, sumHi)
  override lazy val initialValues: Seq[Expression] = Seq(Literal(0L), Literal(0L), Literal(0L))

  // dataset_fingerprint's buffer and its updates, code-generated alike.
  override lazy val updateExpressions: Seq[Expression] = Seq(
    WrappingAdd(count, Literal(1L)),
    WrappingAdd(sumLo, HashLane(rowHash, 0)),
    CarryAdd(sumHi, HashLane(rowHash, 1), sumLo, HashLane(rowHash, 0)))

  override lazy val mergeExpressions: Seq[Expression] = Seq(
    WrappingAdd(count.left, count.right),
    WrappingAdd(sumLo.left, sumLo.right),
    CarryAdd(sumHi.left, sumHi.right, sumLo.left, sumLo.right))

  override lazy val evaluateExpression: Expression =
    Murmur3StateRow(count, sumLo, sumHi, DatasetFingerprint.schemaHash(names, children.map(_.dataType)))

  // Plans show the arguments, not the names taken from them.
  override protected def stringArgs: Iterator[Any] = Iterator(children)

  override protected def withNewChildrenInternal(newChildren: IndexedSeq[Expression]): DatasetFingerprintState =
    copy(children = newChildren)
}

object DatasetFingerprintState {
  val Name = "dataset_fingerprint_state"

  /** The state of both functions: one struct type, whichever the algorithm. */
  val StateType: StructType = StructType(Seq(
    StructField("fingerprint", StringType, nullable = false),
    StructField("algorithm", StringType, nullable = false),
    StructField("secret", StringType, nullable = true),
    StructField("count", LongType, nullable = false),
    StructField("sum", BinaryType, nullable = true),
    StructField("lanes", BinaryType, nullable = true),
    StructField("schema", BinaryType, nullable = false)))

  private val Murmur3 = UTF8String.fromString(FingerprintAlgorithm.Murmur3.name)

  /** The state of a murmur3 fingerprint: its value, the count, the 128-bit sum and the schema digest. */
  def murmur3(count: Long, sumLo: Long, sumHi: Long, schema: Array[Byte]): InternalRow = {
    val sum = new Array[Byte](16)
    java.nio.ByteBuffer.wrap(sum).order(java.nio.ByteOrder.LITTLE_ENDIAN).putLong(sumLo).putLong(sumHi)
    InternalRow(UTF8String.fromString(FingerprintDigest.format(count, sumLo, sumHi, schema)), Murmur3, null, count,
      sum, null, schema.clone())
  }

  /** The state of an lthash16 fingerprint; `secret` names the key the rows were hashed with, if any. */
  def lthash(fingerprint: String, secret: Option[String], count: Long, lanes: Array[Char],
      schema: Array[Byte]): InternalRow = {
    val bytes = new Array[Byte](LtHash16.STATE_BYTES)
    LtHash16.write(lanes, bytes, 0)
    InternalRow(UTF8String.fromString(fingerprint), UTF8String.fromString("lthash16"),
      secret.map(UTF8String.fromString).orNull, count, null, bytes, schema.clone())
  }
}

/** The struct `dataset_fingerprint_state` returns, from its buffer. */
case class Murmur3StateRow(count: Expression, sumLo: Expression, sumHi: Expression, schema: Array[Byte])
  extends Expression {

  override def children: Seq[Expression] = Seq(count, sumLo, sumHi)
  override def nullable: Boolean = false
  override def dataType: DataType = DatasetFingerprintState.StateType

  override def eval(input: InternalRow): Any = DatasetFingerprintState.murmur3(
    count.eval(input).asInstanceOf[Long], sumLo.eval(input).asInstanceOf[Long],
    sumHi.eval(input).asInstanceOf[Long], schema)

  override protected def doGenCode(ctx: CodegenContext, ev: ExprCode): ExprCode = {
    val (c, lo, hi) = (count.genCode(ctx), sumLo.genCode(ctx), sumHi.genCode(ctx))
    val schemaRef = ctx.addReferenceObj("schemaHash", schema, "byte[]")
    val state = DatasetFingerprintState.getClass.getName.stripSuffix("$")
    ev.copy(code =
      code"""
         |${c.code}
         |${lo.code}
         |${hi.code}
         |final org.apache.spark.sql.catalyst.InternalRow ${ev.value} = $state.murmur3(${c.value}, ${lo.value}, ${hi.value}, $schemaRef);
       """.stripMargin, isNull = FalseLiteral)
  }

  override protected def withNewChildrenInternal(c: IndexedSeq[Expression]): Murmur3StateRow =
    copy(count = c(0), sumLo = c(1), sumHi = c(2))

  // Arrays compare by reference; the schema digest is a value.
  override def equals(other: Any): Boolean = other match {
    case s: Murmur3StateRow => children == s.children && java.util.Arrays.equals(schema, s.schema)
    case _ => false
  }
  override def hashCode(): Int = (children, java.util.Arrays.hashCode(schema)).hashCode()
}

// scalastyle:off line.size.limit
@ExpressionDescription(
  usage = """
    _FUNC_(options, expr1, expr2, ...) - Returns what dataset_fingerprint_with(options, expr1, expr2, ...) is computed from, as the struct of dataset_fingerprint_state: `fingerprint`, `algorithm` ('murmur3' or 'lthash16'), `secret` (the name of the secret whose key hashed the rows, or NULL; never the key), `count`, `sum` (murmur3: 16 bytes little-endian, else NULL), `lanes` (lthash16: the 1024 16-bit lanes, 2048 bytes little-endian, else NULL) and `schema` (the digest of the names and types). Never NULL.
  """,
  arguments = """
    Arguments:
      * options - a constant string, as for dataset_fingerprint_with: algorithm=murmur3|lthash16 and, with lthash16, optionally secret=<name>.
      * expr1, expr2, ... - the values of each row, as for record_hash; `*` fingerprints every column.
  """,
  examples = """
    Examples:
      > SELECT _FUNC_('algorithm=lthash16', id).fingerprint = dataset_fingerprint_with('algorithm=lthash16', id) FROM range(10) AS t(id);
       true
      > SELECT _FUNC_('algorithm=lthash16', id).count, length(_FUNC_('algorithm=lthash16', id).lanes) FROM range(3) AS t(id);
       3	2048
      > SELECT _FUNC_('algorithm=murmur3', id) = dataset_fingerprint_state(id) FROM range(10) AS t(id);
       true
  """,
  since = "0.2.0",
  group = "agg_funcs")
// scalastyle:on line.size.limit
case class DatasetFingerprintStateWith(
    children: Seq[Expression],
    names: Seq[String],
    mutableAggBufferOffset: Int = 0,
    inputAggBufferOffset: Int = 0)
  extends FingerprintWithAggregate {

  // Names are taken when the function is resolved, as in dataset_fingerprint.
  def this(children: Seq[Expression]) = this(children, children.drop(1).map(ArgumentNames.of(_)))

  override def prettyName: String = DatasetFingerprintStateWith.Name
  override def dataType: DataType = DatasetFingerprintState.StateType

  override def eval(state: FingerprintState): Any = algorithm match {
    case FingerprintAlgorithm.Murmur3 => DatasetFingerprintState.murmur3(state.count, state.sumLo, state.sumHi, schema)
    case lt: FingerprintAlgorithm.LtHash =>
      DatasetFingerprintState.lthash(digest(state), lt.secret, state.count, state.lanes, schema)
  }

  override def withNewMutableAggBufferOffset(offset: Int): DatasetFingerprintStateWith =
    copy(mutableAggBufferOffset = offset)

  override def withNewInputAggBufferOffset(offset: Int): DatasetFingerprintStateWith =
    copy(inputAggBufferOffset = offset)

  override protected def withNewChildrenInternal(newChildren: IndexedSeq[Expression]): DatasetFingerprintStateWith =
    copy(children = newChildren)
}

object DatasetFingerprintStateWith {
  val Name = "dataset_fingerprint_state_with"
}
