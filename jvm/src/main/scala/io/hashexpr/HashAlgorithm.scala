package io.hashexpr

/**
 * The function a record's canonical encoding is hashed with (docs/FORMAT.md, section 10), chosen with the
 * `algorithm=` option of the `_with` functions.
 */
sealed abstract class HashAlgorithm(val name: String) {

  /** An encoder that hashes with this algorithm; an HMAC encoder reads its secret now, where it runs. */
  def newEncoder(): CanonicalEncoder

  /** The Java expression that [[newEncoder]] is in generated code. */
  def newEncoderCode: String

  /** The class of the encoders, for generated code. */
  def encoderClass: String
}

object HashAlgorithm {
  private val sha256Encoder = classOf[Sha256CanonicalEncoder].getName

  /** MurmurHash3 x64 128: 16 bytes, the fastest; not collision-resistant against an adversary. */
  case object Murmur3 extends HashAlgorithm("murmur3") {
    override def newEncoder(): CanonicalEncoder = new CanonicalEncoder
    override def encoderClass: String = classOf[CanonicalEncoder].getName
    override def newEncoderCode: String = s"new $encoderClass()"
  }

  /** SHA-256: 32 bytes, collision-resistant. */
  case object Sha256 extends HashAlgorithm("sha256") {
    override def newEncoder(): CanonicalEncoder = new Sha256CanonicalEncoder
    override def encoderClass: String = sha256Encoder
    override def newEncoderCode: String = s"new $encoderClass()"
  }

  /** HMAC-SHA-256 keyed with the secret named `secret` (see [[Secrets]]): 32 bytes, unforgeable without it. */
  final case class HmacSha256(secret: String) extends HashAlgorithm("hmac-sha256") {
    override def newEncoder(): CanonicalEncoder = new Sha256CanonicalEncoder(Secrets.key(secret))
    override def encoderClass: String = sha256Encoder
    // The secret's name is checked to be [A-Za-z0-9_.-]+, so it is a safe Java string literal.
    override def newEncoderCode: String =
      s"""new $encoderClass(${Secrets.getClass.getName.stripSuffix("$")}.key("$secret"))"""
  }

  val names: Seq[String] = Seq(Murmur3.name, Sha256.name, "hmac-sha256")
}
