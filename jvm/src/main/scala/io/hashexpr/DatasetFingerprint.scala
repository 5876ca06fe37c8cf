package io.hashexpr

import java.nio.{ByteBuffer, ByteOrder}
import java.nio.charset.StandardCharsets
import java.security.MessageDigest

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
    _FUNC_(expr1, expr2, ...) - Returns an order-independent fingerprint of the rows' values: 'hx1:' and 64 hex digits of a SHA-256 over the row count, the sum (mod 2^128) of every row's record_hash and a digest of the arguments' names and types. Never NULL.
  """,
  arguments = """
    Arguments:
      * expr1, expr2, ... - the values of each row, as for record_hash; `*` fingerprints every column.
          Row order and partitioning do not change the result; a changed value, an added or removed row (duplicates included), a renamed column or a changed type do.
  """,
  examples = """
    Examples:
      > SELECT _FUNC_(*) = (SELECT _FUNC_(*) FROM VALUES (2, 'b'), (1, 'a') AS t(id, s)) FROM VALUES (1, 'a'), (2, 'b') AS t(id, s);
       true
      > SELECT _FUNC_(id) FROM range(0) AS t(id);
       hx1:13f2888eec11c90f5eb8b7bd9baed23c7bd05dc99306f4a632d24011fe48b1ef
  """,
  since = "0.1.0",
  group = "agg_funcs")
// scalastyle:on line.size.limit
case class DatasetFingerprint(children: Seq[Expression], names: Seq[String]) extends DeclarativeAggregate {

  // Names are taken when the function is resolved: the optimizer may later replace a column by its value.
  def this(children: Seq[Expression]) = this(children, children.map(ArgumentNames.of(_)))

  override def prettyName: String = DatasetFingerprint.Name
  override def nullable: Boolean = false
  override def dataType: DataType = StringType

  override def checkInputDataTypes(): TypeCheckResult = RecordHash.checkArguments(prettyName, children)

  private lazy val rowHash = RecordHash(children)
  private lazy val rowLo = HashLane(rowHash, 0)
  private lazy val rowHi = HashLane(rowHash, 1)

  private lazy val count = AttributeReference("count", LongType, nullable = false)()
  private lazy val sumLo = AttributeReference("sum_lo", LongType, nullable = false)()
  private lazy val sumHi = AttributeReference("sum_hi", LongType, nullable = false)()

  override lazy val aggBufferAttributes: Seq[AttributeReference] = Seq(count, sumLo, sumHi)
  override lazy val initialValues: Seq[Expression] = Seq(Literal(0L), Literal(0L), Literal(0L))

  override lazy val updateExpressions: Seq[Expression] = Seq(
    WrappingAdd(count, Literal(1L)),
    WrappingAdd(sumLo, rowLo),
    CarryAdd(sumHi, rowHi, sumLo, rowLo))

  override lazy val mergeExpressions: Seq[Expression] = Seq(
    WrappingAdd(count.left, count.right),
    WrappingAdd(sumLo.left, sumLo.right),
    CarryAdd(sumHi.left, sumHi.right, sumLo.left, sumLo.right))

  override lazy val evaluateExpression: Expression =
    FingerprintDigest(count, sumLo, sumHi, DatasetFingerprint.schemaHash(names, children.map(_.dataType)))

  // Plans show the arguments, not the names taken from them.
  override protected def stringArgs: Iterator[Any] = Iterator(children)

  override protected def withNewChildrenInternal(newChildren: IndexedSeq[Expression]): DatasetFingerprint =
    copy(children = newChildren)
}

object DatasetFingerprint {
  val Name = "dataset_fingerprint"

  /**
   * The record hash of the arguments' names and canonical type strings, in order (docs/FORMAT.md, section 5),
   * hashed by `encoder` (section 11: SHA-256 for the lthash16 fingerprint).
   */
  def schemaHash(
      names: Seq[String], types: Seq[DataType], encoder: CanonicalEncoder = new CanonicalEncoder): Array[Byte] = {
    encoder.beginRecord(names.length * 2)
    names.zip(types).foreach { case (name, dt) =>
      encoder.putString(UTF8String.fromString(name))
      encoder.putString(UTF8String.fromString(typeString(dt)))
    }
    encoder.finishRecord()
  }

  /**
   * A type's name without nullability: `int`, `decimal(10,2)`, `array<string>`, `struct<`a`:int>`. Strings are
   * named after how their values hash: `string` for every string whose values hash as STRING (CHAR and VARCHAR,
   * an explicit `COLLATE UTF8_BINARY`, whatever `spark.sql.preserveCharVarcharTypeInfo` says), otherwise
   * `string collate <name>`.
   */
  def typeString(dt: DataType): String = dt match {
    case st: StringType if SparkShims.hasBinaryEquality(st) => "string"
    // CHAR(n)/VARCHAR(n) hash as STRING; Spark 3.5's are not StringTypes.
    case _: CharType | _: VarcharType => "string"
    case st: StringType =>
      s"string collate ${new String(SparkShims.collationNameBytes(st), StandardCharsets.US_ASCII)}"
    case ArrayType(et, _) => s"array<${typeString(et)}>"
    case MapType(kt, vt, _) => s"map<${typeString(kt)},${typeString(vt)}>"
    case StructType(fields) =>
      fields.map(f => s"`${f.name.replace("`", "``")}`:${typeString(f.dataType)}").mkString("struct<", ",", ">")
    case udt: UserDefinedType[_] => typeString(udt.sqlType)
    case other => other.simpleString
  }
}

/** The final SHA-256 of a fingerprint: 'hx1:' + hex(SHA-256(label ‖ version ‖ schema ‖ count ‖ sum)). */
case class FingerprintDigest(count: Expression, sumLo: Expression, sumHi: Expression, schema: Array[Byte])
  extends Expression {

  override def children: Seq[Expression] = Seq(count, sumLo, sumHi)
  override def nullable: Boolean = false
  override def dataType: DataType = StringType

  override def eval(input: InternalRow): Any = UTF8String.fromString(FingerprintDigest.format(
    count.eval(input).asInstanceOf[Long], sumLo.eval(input).asInstanceOf[Long],
    sumHi.eval(input).asInstanceOf[Long], schema))

  override protected def doGenCode(ctx: CodegenContext, ev: ExprCode): ExprCode = {
    val (c, lo, hi) = (count.genCode(ctx), sumLo.genCode(ctx), sumHi.genCode(ctx))
    val schemaRef = ctx.addReferenceObj("schemaHash", schema, "byte[]")
    val format = FingerprintDigest.getClass.getName.stripSuffix("$")
    ev.copy(code =
      code"""
         |${c.code}
         |${lo.code}
         |${hi.code}
         |final UTF8String ${ev.value} =
         |  UTF8String.fromString($format.format(${c.value}, ${lo.value}, ${hi.value}, $schemaRef));
       """.stripMargin, isNull = FalseLiteral)
  }

  override protected def withNewChildrenInternal(c: IndexedSeq[Expression]): FingerprintDigest =
    copy(count = c(0), sumLo = c(1), sumHi = c(2))

  // Arrays compare by reference; the digest input is a value.
  override def equals(other: Any): Boolean = other match {
    case f: FingerprintDigest => children == f.children && java.util.Arrays.equals(schema, f.schema)
    case _ => false
  }
  override def hashCode(): Int = (children, java.util.Arrays.hashCode(schema)).hashCode()
}

object FingerprintDigest {
  private val Label = "hashexpr-fingerprint".getBytes(StandardCharsets.US_ASCII)
  private val Prefix = s"hx${CanonicalEncoder.FORMAT_VERSION}:"
  private val Hex = "0123456789abcdef".toCharArray
  // MessageDigest.getInstance costs more than hashing these few bytes; grouped fingerprints digest once per group.
  private val sha256 = ThreadLocal.withInitial[MessageDigest](() => MessageDigest.getInstance("SHA-256"))

  def format(count: Long, sumLo: Long, sumHi: Long, schema: Array[Byte]): String = {
    val tail = ByteBuffer.allocate(24).order(ByteOrder.LITTLE_ENDIAN).putLong(count).putLong(sumLo).putLong(sumHi)
    val sha = sha256.get()
    sha.reset()
    sha.update(Label)
    sha.update(CanonicalEncoder.FORMAT_VERSION.toByte)
    sha.update(schema)
    sha.update(tail.array())
    hex(Prefix, sha.digest())
  }

  /** `prefix` followed by `digest` in lowercase hex. */
  def hex(prefix: String, digest: Array[Byte]): String = {
    val out = new java.lang.StringBuilder(prefix.length + 2 * digest.length).append(prefix)
    digest.foreach(b => out.append(Hex((b >> 4) & 0xf)).append(Hex(b & 0xf)))
    out.toString
  }
}
