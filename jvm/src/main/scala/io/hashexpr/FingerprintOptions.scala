package io.hashexpr

/**
 * The options of [[functions.dataset_fingerprint_with]]: how the rows' hashes are combined (docs/FORMAT.md,
 * sections 5 and 11). Immutable; [[text]] is the options string of SQL's `dataset_fingerprint_with`, read back
 * by its own parser when the value is made.
 *
 * {{{
 *   import io.hashexpr.FingerprintOptions
 *   import io.hashexpr.functions._
 *
 *   df.agg(dataset_fingerprint_with(FingerprintOptions.lthash16(), "*")).head().getString(0)  // "hx1-lthash16:..."
 * }}}
 */
final class FingerprintOptions private (private[hashexpr] val algorithm: FingerprintAlgorithm, val text: String) {

  override def toString: String = text

  override def equals(other: Any): Boolean = other match {
    case o: FingerprintOptions => text == o.text
    case _ => false
  }

  override def hashCode(): Int = text.hashCode
}

object FingerprintOptions {
  SparkLineCheck.requireScala()

  /** The sum of the rows' MurmurHash3 record hashes (the default, `dataset_fingerprint`): guards against accidents. */
  def murmur3(): FingerprintOptions = of("FingerprintOptions.murmur3", FingerprintAlgorithm.Murmur3)

  /** LtHash16 of the rows' SHA-256 record hashes: a fingerprint nobody can forge, at more cost. */
  def lthash16(): FingerprintOptions = of("FingerprintOptions.lthash16", FingerprintAlgorithm.LtHash(None))

  /**
   * LtHash16 of the rows' HMAC-SHA-256 record hashes, keyed by the Spark conf `spark.hashexpr.secret.<secret>`
   * (set in the application's configuration before the session starts).
   *
   * @param secret the secret's name (letters, digits, `_`, `.`, `-`), never the key itself
   * @throws IllegalArgumentException when `secret` is not such a name
   */
  def lthash16(secret: String): FingerprintOptions = of("FingerprintOptions.lthash16",
    FingerprintAlgorithm.LtHash(Some(OptionsText.secretName("FingerprintOptions.lthash16", secret))))

  /**
   * The options of an options text as SQL's `dataset_fingerprint_with` takes it, such as `"algorithm=lthash16"`.
   *
   * @throws IllegalArgumentException naming the problem when the text is not valid there
   */
  def parse(text: String): FingerprintOptions = of("FingerprintOptions.parse",
    OptionsText.parsed("FingerprintOptions.parse", text, FingerprintAlgorithm.parse, FingerprintAlgorithm.Usage))

  private def of(method: String, algorithm: FingerprintAlgorithm): FingerprintOptions = {
    val items = algorithm match {
      case FingerprintAlgorithm.LtHash(Some(secret)) => Seq("algorithm=lthash16", s"secret=$secret")
      case other => Seq(s"algorithm=${other.name}")
    }
    new FingerprintOptions(algorithm, OptionsText.checked(method, items.mkString("; "), FingerprintAlgorithm.parse,
      algorithm))
  }
}
