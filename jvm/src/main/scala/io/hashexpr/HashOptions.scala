package io.hashexpr

/**
 * The options of [[functions.record_hash_with]] and [[functions.record_hash_by_name_with]]: the algorithm that
 * hashes the canonical encoding (docs/FORMAT.md, section 10). Immutable. [[text]] is the options string of the
 * SQL functions, read back by their own parser when the value is made: an invalid value is an
 * `IllegalArgumentException` here, never a failed query or a different hash.
 *
 * {{{
 *   import io.hashexpr.HashOptions
 *   import io.hashexpr.functions._
 *
 *   df.select(record_hash_with(HashOptions.sha256(), "*"))           // 32 bytes, resists crafted collisions
 *   df.select(record_hash_with(HashOptions.hmacSha256("pii"), "email"))  // keyed by spark.hashexpr.secret.pii
 *   HashOptions.hmacSha256("pii").text                               // "algorithm=hmac-sha256; secret=pii"
 * }}}
 */
final class HashOptions private (private[hashexpr] val algorithm: HashAlgorithm, val text: String) {

  override def toString: String = text

  override def equals(other: Any): Boolean = other match {
    case o: HashOptions => text == o.text
    case _ => false
  }

  override def hashCode(): Int = text.hashCode
}

object HashOptions {
  SparkLineCheck.requireScala()

  /** MurmurHash3 x64 128 (the default): 16 bytes, the fastest; guards against accidents, not adversaries. */
  def murmur3(): HashOptions = of("HashOptions.murmur3", HashAlgorithm.Murmur3)

  /** SHA-256: 32 bytes; resists rows crafted to collide. */
  def sha256(): HashOptions = of("HashOptions.sha256", HashAlgorithm.Sha256)

  /**
   * HMAC-SHA-256: 32 bytes, keyed by the value of the Spark conf `spark.hashexpr.secret.<secret>`, which must be in
   * the application's configuration before the session starts (`--conf`, spark-defaults.conf or
   * `SparkSession.builder.config`); hashes of guessable values (emails, ids) cannot be reversed without it.
   *
   * @param secret the secret's name (letters, digits, `_`, `.`, `-`), never the key itself
   * @throws IllegalArgumentException when `secret` is not such a name
   */
  def hmacSha256(secret: String): HashOptions = of("HashOptions.hmacSha256",
    HashAlgorithm.HmacSha256(OptionsText.secretName("HashOptions.hmacSha256", secret)))

  /**
   * The options of an options text as SQL's `record_hash_with` takes it, such as `"algorithm=sha256"`.
   *
   * @throws IllegalArgumentException naming the problem when the text is not valid there
   */
  def parse(text: String): HashOptions = of("HashOptions.parse",
    OptionsText.parsed("HashOptions.parse", text, KeyOptions.parseHashOptions, KeyOptions.HashUsage))

  /** The options items that choose `algorithm`. */
  private[hashexpr] def items(algorithm: HashAlgorithm): Seq[String] = algorithm match {
    case HashAlgorithm.HmacSha256(secret) => Seq("algorithm=hmac-sha256", s"secret=$secret")
    case other => Seq(s"algorithm=${other.name}")
  }

  private def of(method: String, algorithm: HashAlgorithm): HashOptions = new HashOptions(algorithm,
    OptionsText.checked(method, items(algorithm).mkString("; "), KeyOptions.parseHashOptions, algorithm))
}
