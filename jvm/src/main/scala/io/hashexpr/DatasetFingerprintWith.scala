package io.hashexpr

import java.nio.{ByteBuffer, ByteOrder}
import java.nio.charset.StandardCharsets

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.analysis.TypeCheckResult
import org.apache.spark.sql.catalyst.expressions.{Expression, ExpressionDescription, Literal}
import org.apache.spark.sql.catalyst.expressions.aggregate.TypedImperativeAggregate
import org.apache.spark.sql.types._
import org.apache.spark.unsafe.types.UTF8String

/**
 * How `dataset_fingerprint_with` combines its rows (docs/FORMAT.md, sections 5 and 11), and what it hashes each
 * row with.
 */
sealed abstract class FingerprintAlgorithm(val name: String, val rows: HashAlgorithm, val prefix: String)

object FingerprintAlgorithm {
  /** dataset_fingerprint itself: the sum of the rows' MurmurHash3 record hashes modulo 2^128. */
  case object Murmur3
    extends FingerprintAlgorithm("murmur3", HashAlgorithm.Murmur3, s"hx${CanonicalEncoder.FORMAT_VERSION}:")

  /** LtHash16 of the rows' SHA-256 record hashes, or, with a secret, of their HMAC-SHA-256 record hashes. */
  final case class LtHash(secret: Option[String]) extends FingerprintAlgorithm("lthash16",
    secret.map(HashAlgorithm.HmacSha256).getOrElse(HashAlgorithm.Sha256),
    s"hx${CanonicalEncoder.FORMAT_VERSION}-lthash16${if (secret.isDefined) "-hmac" else ""}:")

  val Usage = "algorithm=murmur3|lthash16; secret=<name> (with lthash16: rows hashed with hmac-sha256)"

  /**
   * Parses the options of `dataset_fingerprint_with`, as strictly as `record_key_with`'s (KeyOptions.parse):
   * items separated by ';', names case-insensitive, each given once.
   */
  def parse(text: String): Either[String, FingerprintAlgorithm] = {
    val lower = (v: String) => v.toLowerCase(java.util.Locale.ROOT)
    val items = text.split(";", -1).iterator.map(_.trim).filter(_.nonEmpty).toList
    val pairs = items.map { item =>
      item.indexOf('=') match {
        case -1 => (lower(item), item, None)
        case i => (lower(item.take(i).trim), item, Some(item.drop(i + 1).trim))
      }
    }
    val names = pairs.map(_._1)
    val chosen = names.diff(names.distinct).headOption match {
      case Some(twice) => Left(s"option '$twice' given twice; give each option once")
      case None => pairs.foldLeft[Either[String, (Option[String], Option[String])]](Right((None, None))) {
        case (Left(problem), _) => Left(problem)
        case (Right((_, secret)), ("algorithm", _, Some(v))) if Seq("murmur3", "lthash16").contains(lower(v)) =>
          Right((Some(lower(v)), secret))
        case (_, ("algorithm", item, Some(v))) if Seq("sha256", "hmac-sha256").contains(lower(v)) =>
          Left(s"option '$item': a sum of SHA-256 row hashes is open to the same generalized-birthday attacks " +
            "as the murmur3 sum; for a fingerprint an adversary cannot forge, use algorithm=lthash16 (with " +
            "secret=<name> for HMAC-SHA-256 row hashes)")
        case (Right((algorithm, _)), ("secret", _, Some(v))) if v.nonEmpty =>
          Secrets.nameProblem(v).toLeft((algorithm, Some(v)))
        case (_, ("algorithm" | "secret", item, _)) =>
          Left(s"option '$item' with a missing or unknown value${KeyOptions.separatorHint(item)}")
        case (_, (_, item, _)) => Left(s"unknown option '$item'${KeyOptions.separatorHint(item)}")
      }
    }
    chosen.flatMap {
      case (Some("lthash16"), s) => Right(LtHash(s))
      case (_, Some(name)) =>
        Left(s"option 'secret=$name' without 'algorithm=lthash16': only lthash16 takes a secret, with which " +
          "it hashes rows with hmac-sha256")
      case _ => Right(Murmur3)
    }
  }
}

/** An aggregation buffer of `dataset_fingerprint_with`: the row count and the 128-bit sum or the LtHash16 lanes. */
final class FingerprintState(var count: Long, var sumLo: Long, var sumHi: Long, val lanes: Array[Char]) {

  def addSum(lo: Long, hi: Long): Unit = {
    val newLo = sumLo + lo
    sumHi += hi + (if (java.lang.Long.compareUnsigned(newLo, sumLo) < 0) 1L else 0L)
    sumLo = newLo
  }
}

// scalastyle:off line.size.limit
@ExpressionDescription(
  usage = """
    _FUNC_(options, expr1, expr2, ...) - Returns an order-independent fingerprint of the rows' values, computed as the options say: 'algorithm=murmur3' gives dataset_fingerprint(expr1, expr2, ...); 'algorithm=lthash16' gives 'hx1-lthash16:' and 64 hex digits of a SHA-256 over the row count and the LtHash16 multiset hash (1024 16-bit lanes) of the rows' SHA-256 record hashes, a fingerprint nobody can forge, at more cost. Never NULL.
  """,
  arguments = """
    Arguments:
      * options - a constant string: algorithm=murmur3|lthash16 (default murmur3) and, with lthash16, optionally secret=<name>: rows are then hashed with hmac-sha256 keyed by the Spark conf spark.hashexpr.secret.<name>, and the result starts 'hx1-lthash16-hmac:'.
          The murmur3 fingerprint guards against accidents: whoever controls rows can find two different tables with the same one. lthash16 resists that (docs/SECURITY.md).
      * expr1, expr2, ... - the values of each row, as for record_hash; `*` fingerprints every column.
          Row order and partitioning do not change the result; a changed value, an added or removed row (duplicates included), a renamed column or a changed type do.
  """,
  examples = """
    Examples:
      > SELECT _FUNC_('algorithm=lthash16', *) = (SELECT _FUNC_('algorithm=lthash16', *) FROM VALUES (2, 'b'), (1, 'a') AS t(id, s)) FROM VALUES (1, 'a'), (2, 'b') AS t(id, s);
       true
      > SELECT _FUNC_('algorithm=murmur3', id) = dataset_fingerprint(id) FROM range(10) AS t(id);
       true
      > SELECT _FUNC_('algorithm=lthash16', id) FROM range(0) AS t(id);
       hx1-lthash16:a92a34e4dc0b7461bf7259827450afff30c62ed4b133e4272d0f3c8828f2203e
  """,
  since = "0.2.0",
  group = "agg_funcs")
// scalastyle:on line.size.limit
case class DatasetFingerprintWith(
    children: Seq[Expression],
    names: Seq[String],
    mutableAggBufferOffset: Int = 0,
    inputAggBufferOffset: Int = 0)
  extends FingerprintWithAggregate {

  // Names are taken when the function is resolved, as in dataset_fingerprint.
  def this(children: Seq[Expression]) = this(children, children.drop(1).map(ArgumentNames.of(_)))

  override def prettyName: String = DatasetFingerprintWith.Name
  override def dataType: DataType = StringType

  override def eval(state: FingerprintState): Any = UTF8String.fromString(digest(state))

  override def withNewMutableAggBufferOffset(offset: Int): DatasetFingerprintWith =
    copy(mutableAggBufferOffset = offset)

  override def withNewInputAggBufferOffset(offset: Int): DatasetFingerprintWith =
    copy(inputAggBufferOffset = offset)

  override protected def withNewChildrenInternal(newChildren: IndexedSeq[Expression]): DatasetFingerprintWith =
    copy(children = newChildren)
}

/**
 * What `dataset_fingerprint_with` and `dataset_fingerprint_state_with` share: the options, each row's hash, the
 * buffer (the row count and the 128-bit sum or the LtHash16 lanes), its merging and serialisation, and the digest
 * of the names and types. They differ in what they return.
 */
trait FingerprintWithAggregate extends TypedImperativeAggregate[FingerprintState] {

  /** The options, then the values fingerprinted. */
  def children: Seq[Expression]

  /** The values' names (docs/FORMAT.md, section 6.1), taken when the function is resolved. */
  def names: Seq[String]

  override def nullable: Boolean = false

  /** The values fingerprinted: every argument after the options. */
  protected def values: Seq[Expression] = children.drop(1)

  override def checkInputDataTypes(): TypeCheckResult =
    OptionsArgument.check(prettyName, children.headOption, FingerprintAlgorithm.Usage, FingerprintAlgorithm.parse,
      (a: FingerprintAlgorithm) => a.rows)(RecordHash.checkArguments(prettyName, values))

  @transient protected lazy val algorithm: FingerprintAlgorithm =
    OptionsArgument.parsed(children.headOption, FingerprintAlgorithm.parse).get

  /** Each row's hash: the record hash of format v1 under the algorithm the rows are hashed with. */
  @transient private lazy val rowHash: Expression = algorithm.rows match {
    case HashAlgorithm.Murmur3 => RecordHash(values)
    case HashAlgorithm.Sha256 => RecordHashWith(Literal("algorithm=sha256") +: values)
    // The name is checked to be [A-Za-z0-9_.-]+, so it cannot end the option.
    case HashAlgorithm.HmacSha256(secret) => RecordHashWith(Literal(s"algorithm=hmac-sha256; secret=$secret") +: values)
  }

  override def createAggregationBuffer(): FingerprintState = algorithm match {
    case FingerprintAlgorithm.Murmur3 => new FingerprintState(0, 0, 0, null)
    case _ => new FingerprintState(0, 0, 0, LtHash16.empty())
  }

  override def update(state: FingerprintState, input: InternalRow): FingerprintState = {
    val hash = rowHash.eval(input).asInstanceOf[Array[Byte]]
    state.count += 1
    if (state.lanes == null) {
      state.addSum(HashLane.read(hash, 0), HashLane.read(hash, 1))
    } else {
      DatasetFingerprintWith.ltHash.get().add(state.lanes, hash)
    }
    state
  }

  override def merge(state: FingerprintState, other: FingerprintState): FingerprintState = {
    state.count += other.count
    if (state.lanes == null) state.addSum(other.sumLo, other.sumHi) else LtHash16.merge(state.lanes, other.lanes)
    state
  }

  /** The digest of the names and types (sections 5 and 11), once per expression rather than once per group. */
  @transient protected lazy val schema: Array[Byte] = algorithm match {
    case FingerprintAlgorithm.Murmur3 => DatasetFingerprint.schemaHash(names, values.map(_.dataType))
    case _ => DatasetFingerprint.schemaHash(names, values.map(_.dataType), new Sha256CanonicalEncoder)
  }

  /** The fingerprint of `state`: 'hx1:', 'hx1-lthash16:' or 'hx1-lthash16-hmac:' and 64 hex digits. */
  protected def digest(state: FingerprintState): String = algorithm match {
    case FingerprintAlgorithm.Murmur3 => FingerprintDigest.format(state.count, state.sumLo, state.sumHi, schema)
    case lt: FingerprintAlgorithm.LtHash =>
      DatasetFingerprintWith.ltHashDigest(lt.prefix, schema, state.count, state.lanes)
  }

  override def serialize(state: FingerprintState): Array[Byte] = {
    val size = if (state.lanes == null) 24 else 8 + LtHash16.STATE_BYTES
    val out = ByteBuffer.allocate(size).order(ByteOrder.LITTLE_ENDIAN).putLong(state.count)
    if (state.lanes == null) {
      out.putLong(state.sumLo).putLong(state.sumHi)
    } else {
      LtHash16.write(state.lanes, out.array(), 8)
    }
    out.array()
  }

  override def deserialize(bytes: Array[Byte]): FingerprintState = {
    val in = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN)
    if (bytes.length == 24) {
      new FingerprintState(in.getLong(0), in.getLong(8), in.getLong(16), null)
    } else {
      new FingerprintState(in.getLong(0), 0, 0, LtHash16.read(bytes, 8))
    }
  }

  // Plans show the arguments, not the names taken from them.
  override protected def stringArgs: Iterator[Any] = Iterator(children)
}

object DatasetFingerprintWith {
  val Name = "dataset_fingerprint_with"

  private val Label = "hashexpr-fingerprint-lthash16".getBytes(StandardCharsets.US_ASCII)

  /** An LtHash16 holds a SHA-256 state and buffers, so each thread has its own. */
  private[hashexpr] val ltHash = ThreadLocal.withInitial[LtHash16](() => new LtHash16)

  /** prefix + hex(SHA-256("hashexpr-fingerprint-lthash16" ‖ version ‖ schema ‖ count ‖ lanes)). */
  def ltHashDigest(prefix: String, schema: Array[Byte], count: Long, lanes: Array[Char]): String = {
    val tail = new Array[Byte](8 + LtHash16.STATE_BYTES)
    ByteBuffer.wrap(tail).order(ByteOrder.LITTLE_ENDIAN).putLong(count)
    LtHash16.write(lanes, tail, 8)
    val sha = Sha256CanonicalEncoder.newSha256()
    sha.update(Label)
    sha.update(CanonicalEncoder.FORMAT_VERSION.toByte)
    sha.update(schema)
    sha.update(tail)
    FingerprintDigest.hex(prefix, sha.digest())
  }
}
