package io.hashexpr

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.Expression
import org.apache.spark.sql.catalyst.expressions.codegen.{CodegenContext, ExprCode, FalseLiteral, JavaCode}
import org.apache.spark.sql.catalyst.expressions.codegen.Block._
import org.apache.spark.sql.types.{BinaryType, DataType}

/** How a record is framed (docs/FORMAT.md): positionally (section 3), by name (section 6) or as a key (section 9). */
sealed trait RecordKind

object RecordKind {
  case object Positional extends RecordKind
  case object ByName extends RecordKind

  /** A business key: a salt, positional key parts, and what an all-NULL key gives. */
  final case class Key(salt: String, nullKey: NullKey) extends RecordKind {
    private[hashexpr] val saltBytes: Array[Byte] = salt.getBytes(java.nio.charset.StandardCharsets.UTF_8)
  }
}

/** What `record_key` returns when every key part is NULL. */
sealed abstract class NullKey(val name: String, val code: Int)

object NullKey {
  /** Hash the all-NULL key like any other (the default: no row loses its key). */
  case object Hash extends NullKey("hash", CanonicalEncoder.NULL_KEY_HASH)
  /** Return NULL. */
  case object Null extends NullKey("null", CanonicalEncoder.NULL_KEY_NULL)
  /** Fail the query. */
  case object Error extends NullKey("error", CanonicalEncoder.NULL_KEY_ERROR)

  val all: Seq[NullKey] = Seq(Hash, Null, Error)
}

/**
 * An expression that hashes its arguments as one record of hash format v1 (docs/FORMAT.md). `eval` and the
 * generated code walk the same layout and call the same [[CanonicalEncoder]] methods, so they give the same
 * bytes.
 */
trait HashesRecord extends Expression {

  protected def kind: RecordKind

  /** What the encoding is hashed with: MurmurHash3 unless a `_with` function's options say otherwise. */
  protected def algorithm: HashAlgorithm = HashAlgorithm.Murmur3

  /** The arguments in the order they are written, each with its field name (by-name records only). */
  protected def layout: Seq[(Expression, Array[Byte])]

  override def nullable: Boolean = kind match {
    case RecordKind.Key(_, NullKey.Null) => true
    case _ => false
  }
  override def dataType: DataType = BinaryType
  override def foldable: Boolean = children.forall(_.foldable)

  @transient private lazy val interpreted: Array[(Expression, Array[Byte], InterpretedEncoder.Writer)] =
    layout.map { case (c, name) => (c, name, InterpretedEncoder.writer(c.dataType)) }.toArray

  /** Encoders of other algorithms, one per thread; an HMAC encoder holds its key, so it is not shared. */
  @transient private lazy val threadEncoder: ThreadLocal[CanonicalEncoder] =
    ThreadLocal.withInitial[CanonicalEncoder](() => algorithm.newEncoder())

  override def eval(input: InternalRow): Any = algorithm match {
    case HashAlgorithm.Murmur3 =>
      // An argument can itself hash a record (record_hash(a, record_key(b))), so each nesting level takes its
      // own encoder from the thread's stack; expressions can be shared between threads, an encoder's state
      // cannot.
      val encoders = HashesRecord.threadEncoders.get()
      val encoder = encoders.acquire()
      try {
        encode(encoder, input)
      } finally {
        encoders.release()
      }
    case _ => encode(threadEncoder.get(), input)
  }

  private def encode(encoder: CanonicalEncoder, input: InternalRow): Any = {
    kind match {
      case RecordKind.Positional => encoder.beginRecord(interpreted.length)
      case RecordKind.ByName => encoder.beginRecordByName()
      case k: RecordKind.Key => encoder.beginKey(k.saltBytes, interpreted.length)
    }
    var i = 0
    while (i < interpreted.length) {
      val (child, name, write) = interpreted(i)
      val v = child.eval(input)
      if (v != null) {
        if (name != null) encoder.putFieldName(name)
        write(encoder, v)
      } else {
        kind match {
          case RecordKind.Positional => encoder.putNull()
          case _: RecordKind.Key => encoder.putNullKeyPart()
          case RecordKind.ByName =>
        }
      }
      i += 1
    }
    kind match {
      case RecordKind.ByName => encoder.finishRecordByName()
      case k: RecordKind.Key => encoder.finishKey(k.nullKey.code)
      case RecordKind.Positional => encoder.finishRecord()
    }
  }

  override protected def doGenCode(ctx: CodegenContext, ev: ExprCode): ExprCode = {
    val encoder = ctx.addMutableState(algorithm.encoderClass, "recordEncoder",
      v => s"$v = ${algorithm.newEncoderCode};", forceInline = true)
    val gen = new EncoderCodegen(ctx, encoder)
    val perArgument = layout.map { case (child, name) =>
      val c = child.genCode(ctx)
      val whenNull = kind match {
        case RecordKind.Positional => s"$encoder.putNull();"
        case _: RecordKind.Key => s"$encoder.putNullKeyPart();"
        case RecordKind.ByName => ""
      }
      val fieldName =
        if (name == null) "" else s"$encoder.putFieldName(${ctx.addReferenceObj("fieldName", name, "byte[]")});"
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
    val (begin, finish) = kind match {
      case RecordKind.Positional => (s"$encoder.beginRecord(${layout.length});", s"$encoder.finishRecord()")
      case RecordKind.ByName => (s"$encoder.beginRecordByName();", s"$encoder.finishRecordByName()")
      case k: RecordKind.Key =>
        val salt = ctx.addReferenceObj("salt", k.saltBytes, "byte[]")
        (s"$encoder.beginKey($salt, ${layout.length});", s"$encoder.finishKey(${k.nullKey.code})")
    }
    val isNull = if (nullable) JavaCode.isNullExpression(s"${ev.value} == null") else FalseLiteral
    ev.copy(code =
      code"""
         |$begin
         |$body
         |final byte[] ${ev.value} = $finish;
       """.stripMargin, isNull = isNull)
  }
}

object HashesRecord {
  private val threadEncoders = ThreadLocal.withInitial[EncoderStack](() => new EncoderStack)

  /** The encoders of one thread, one per level of records nested in the arguments of records. */
  private final class EncoderStack {
    private var encoders = new Array[CanonicalEncoder](2)
    private var depth = 0

    def acquire(): CanonicalEncoder = {
      if (depth == encoders.length) encoders = java.util.Arrays.copyOf(encoders, depth * 2)
      if (encoders(depth) == null) encoders(depth) = new CanonicalEncoder
      depth += 1
      encoders(depth - 1)
    }

    def release(): Unit = depth -= 1
  }
}
