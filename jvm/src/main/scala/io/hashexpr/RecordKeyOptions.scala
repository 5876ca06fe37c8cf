package io.hashexpr

/**
 * The options of [[functions.record_key_with]]: a salt, opt-in normalisation of string key parts, what an
 * all-NULL key gives and the algorithm (docs/KEYS.md). Immutable: each method returns new options. [[text]] is
 * the options string of SQL's `record_key_with`, read back by its own parser whenever options are made, so a
 * value the text cannot carry (a salt with `;`, or with spaces at its ends) is an `IllegalArgumentException`
 * here, never a different key.
 *
 * {{{
 *   import io.hashexpr.{HashOptions, NullKeyPolicy, RecordKeyOptions}
 *   import io.hashexpr.functions._
 *
 *   val options = RecordKeyOptions.defaults().salt("hub_customer").trim().upperCase().emptyAsNull()
 *     .nullKey(NullKeyPolicy.ERROR).algorithm(HashOptions.sha256())
 *   options.text   // "salt=hub_customer; trim; case=upper; empty_as_null; null_key=error; algorithm=sha256"
 *   df.select(record_key_with(options, "customer_id"))
 * }}}
 */
final class RecordKeyOptions private (private[hashexpr] val options: KeyOptions, val text: String) {

  /**
   * Separates the hash space of one table (or hub) from others; change it to re-key a table. The empty string
   * (the default) is no salt.
   *
   * @throws IllegalArgumentException when the salt contains `;`, or begins or ends with a space or control
   *                                  character (the options text could not carry it as written)
   */
  def salt(salt: String): RecordKeyOptions = {
    val method = "RecordKeyOptions.salt"
    if (salt == null) throw new IllegalArgumentException(s"$method: the salt is null; the empty string is no salt")
    if (salt.contains(';')) {
      throw new IllegalArgumentException(s"$method: a salt cannot contain ';', which separates options; got '$salt'")
    }
    if (salt != salt.trim) {
      throw new IllegalArgumentException(s"$method: a salt cannot begin or end with a space or control character " +
        s"(the options text is trimmed); got '$salt'")
    }
    RecordKeyOptions.of(method, options.copy(salt = salt))
  }

  /** Removes spaces (U+0020) from both ends of string key parts. */
  def trim(): RecordKeyOptions = RecordKeyOptions.of("RecordKeyOptions.trim", options.copy(trim = true))

  /**
   * Maps string key parts to upper case: the Unicode 14.0.0 full case mapping (Python 3.11's `str.upper()`), the
   * same on every JVM and locale (docs/FORMAT.md, section 9.1).
   */
  def upperCase(): RecordKeyOptions =
    RecordKeyOptions.of("RecordKeyOptions.upperCase", options.copy(caseMode = KeyNormalizer.CASE_UPPER))

  /** Maps string key parts to lower case, as [[upperCase]] does to upper case. */
  def lowerCase(): RecordKeyOptions =
    RecordKeyOptions.of("RecordKeyOptions.lowerCase", options.copy(caseMode = KeyNormalizer.CASE_LOWER))

  /** Treats an empty string key part (after [[trim]]) as NULL. */
  def emptyAsNull(): RecordKeyOptions =
    RecordKeyOptions.of("RecordKeyOptions.emptyAsNull", options.copy(emptyAsNull = true))

  /** What a key whose parts are all NULL gives: its hash (the default), NULL, or a failed query. */
  def nullKey(policy: NullKeyPolicy): RecordKeyOptions = {
    val method = "RecordKeyOptions.nullKey"
    if (policy == null) {
      throw new IllegalArgumentException(s"$method: the policy is null; NullKeyPolicy.HASH is the default")
    }
    RecordKeyOptions.of(method, options.copy(nullKey = NullKey.all.find(_.name == policy.option).get))
  }

  /** The algorithm that hashes the key (default [[HashOptions.murmur3]]). */
  def algorithm(hash: HashOptions): RecordKeyOptions = {
    val method = "RecordKeyOptions.algorithm"
    if (hash == null) {
      throw new IllegalArgumentException(s"$method: the algorithm is null; HashOptions.murmur3() is the default")
    }
    RecordKeyOptions.of(method, options.copy(algorithm = hash.algorithm))
  }

  override def toString: String = text

  override def equals(other: Any): Boolean = other match {
    case o: RecordKeyOptions => text == o.text
    case _ => false
  }

  override def hashCode(): Int = text.hashCode
}

object RecordKeyOptions {
  SparkLineCheck.requireScala()

  /** No options: `record_key_with` with these gives `record_key`. */
  def defaults(): RecordKeyOptions = of("RecordKeyOptions.defaults", KeyOptions.Default)

  /**
   * The options of an options text as SQL's `record_key_with` takes it, such as `"salt=hub_customer; trim"`.
   *
   * @throws IllegalArgumentException naming the problem when the text is not valid there
   */
  def parse(text: String): RecordKeyOptions = of("RecordKeyOptions.parse",
    OptionsText.parsed("RecordKeyOptions.parse", text, KeyOptions.parse, KeyOptions.Usage))

  private val caseItems = Map(KeyNormalizer.CASE_UPPER -> "case=upper", KeyNormalizer.CASE_LOWER -> "case=lower")

  private def of(method: String, o: KeyOptions): RecordKeyOptions = {
    val items = Seq(
      Some(o.salt).filter(_.nonEmpty).map("salt=" + _),
      Some("trim").filter(_ => o.trim),
      caseItems.get(o.caseMode),
      Some("empty_as_null").filter(_ => o.emptyAsNull),
      Some(o.nullKey).filter(_ != NullKey.Hash).map("null_key=" + _.name)).flatten ++
      Some(o.algorithm).filter(_ != HashAlgorithm.Murmur3).toSeq.flatMap(HashOptions.items)
    new RecordKeyOptions(o, OptionsText.checked(method, items.mkString("; "), KeyOptions.parse, o))
  }
}
