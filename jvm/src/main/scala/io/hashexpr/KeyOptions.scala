package io.hashexpr

/**
 * The options of `record_key_with`: a salt, string normalisation, the all-NULL policy and the hash algorithm,
 * written as `'salt=hub_customer; trim; case=upper; empty_as_null; null_key=error; algorithm=sha256'` (items in
 * any order, all optional). `record_hash_with` and `record_hash_by_name_with` take the algorithm items only.
 */
final case class KeyOptions(
    salt: String = "",
    trim: Boolean = false,
    caseMode: Int = KeyNormalizer.CASE_KEEP,
    emptyAsNull: Boolean = false,
    nullKey: NullKey = NullKey.Hash,
    algorithm: HashAlgorithm = HashAlgorithm.Murmur3) {

  def normalizes: Boolean = trim || caseMode != KeyNormalizer.CASE_KEEP || emptyAsNull
}

object KeyOptions {
  val Default: KeyOptions = KeyOptions()

  private val cases = Map("keep" -> KeyNormalizer.CASE_KEEP, "upper" -> KeyNormalizer.CASE_UPPER,
    "lower" -> KeyNormalizer.CASE_LOWER)

  val HashUsage = "algorithm=murmur3|sha256|hmac-sha256; secret=<name> (with hmac-sha256)"
  val Usage = s"salt=<text>; trim; case=upper|lower|keep; empty_as_null; null_key=hash|null|error; $HashUsage"

  /** Parses the options of `record_hash_with`: the algorithm items only. */
  def parseHashOptions(text: String): Either[String, HashAlgorithm] = parse(text).flatMap {
    case o if o.copy(algorithm = Default.algorithm) != Default =>
      Left("option that only record_key_with takes (salt, trim, case, empty_as_null or null_key)")
    case o => Right(o.algorithm)
  }

  /** A hint for an item that holds a ',': `'trim, case=upper'` is one unknown item, not two options. */
  private[hashexpr] def separatorHint(item: String): String =
    if (item.contains(",")) " (options are separated by ';', not ',')" else ""

  /**
   * Parses an options string; Left says what is wrong with it. Items are separated by ';' and may be surrounded
   * by spaces (U+0000 to U+0020, which `String.trim` removes); option names and the words `upper`, `lower`,
   * `keep`, `hash`, `null` and `error` are case-insensitive.
   * Strict, so that a key never silently depends on a typo: an unknown option, an option given twice, a flag given
   * a value and a salt that begins or ends with whitespace (is `salt= crm` the salt `crm`?) are errors.
   */
  def parse(text: String): Either[String, KeyOptions] = {
    // Items are not trimmed before the salt is taken: 'salt=crm ; trim' is refused, not read as 'crm'.
    val items = text.split(";", -1).iterator.filter(_.trim.nonEmpty).toList
    // The algorithm and the secret's name are read as items, then combined: either may come first.
    var algorithm: Option[String] = None
    var secret: Option[String] = None
    val result = items.foldLeft[Either[String, (KeyOptions, Set[String])]](Right((Default, Set.empty))) {
      case (Right((o, seen)), item) =>
        val (name, value) = item.indexOf('=') match {
          case -1 => (item.trim.toLowerCase(java.util.Locale.ROOT), None)
          case i => (item.take(i).trim.toLowerCase(java.util.Locale.ROOT), Some(item.drop(i + 1)))
        }
        def word = value.map(_.trim.toLowerCase(java.util.Locale.ROOT)).getOrElse("")
        val parsed: Either[String, KeyOptions] = (name, value) match {
          case _ if seen(name) => Left(s"option '$name' given twice; give each option once")
          case ("salt", Some(v)) if v != v.trim =>
            Left(s"option 'salt=$v' whose salt begins or ends with a space or control character; a salt is " +
              "taken as written, so remove it")
          case ("salt", Some(v)) => Right(o.copy(salt = v))
          case ("trim", None) => Right(o.copy(trim = true))
          case ("empty_as_null", None) => Right(o.copy(emptyAsNull = true))
          case ("trim" | "empty_as_null", Some(_)) => Left(s"option '${item.trim}': '$name' takes no value")
          case ("case", Some(_)) if cases.contains(word) => Right(o.copy(caseMode = cases(word)))
          case ("null_key", Some(_)) if NullKey.all.exists(_.name == word) =>
            Right(o.copy(nullKey = NullKey.all.find(_.name == word).get))
          case ("algorithm", Some(_)) if HashAlgorithm.names.contains(word) =>
            algorithm = Some(word)
            Right(o)
          case ("secret", Some(v)) if v.trim.nonEmpty =>
            secret = Some(v.trim)
            Secrets.nameProblem(v.trim).toLeft(o)
          case ("salt" | "case" | "null_key" | "algorithm" | "secret", _) =>
            Left(s"option '${item.trim}' with a missing or unknown value${separatorHint(item)}")
          case _ => Left(s"unknown option '${item.trim}'${separatorHint(item)}")
        }
        parsed.map(p => (p, seen + name))
      case (failed, _) => failed
    }.map(_._1)
    result.flatMap { o =>
      (algorithm, secret) match {
        case (Some("hmac-sha256"), Some(name)) => Right(o.copy(algorithm = HashAlgorithm.HmacSha256(name)))
        case (Some("hmac-sha256"), None) =>
          Left("option 'algorithm=hmac-sha256' without 'secret=<name>': name the secret, the Spark conf " +
            s"${Secrets.confName("<name>")} that holds the key (never the key itself)")
        case (_, Some(name)) =>
          Left(s"option 'secret=$name' without 'algorithm=hmac-sha256': only HMAC takes a secret")
        case (Some("sha256"), None) => Right(o.copy(algorithm = HashAlgorithm.Sha256))
        case _ => Right(o)
      }
    }
  }
}
