package io.hashexpr

/**
 * The options of `record_key_with`: a salt, string normalisation and the all-NULL policy, written as
 * `'salt=hub_customer; trim; case=upper; empty_as_null; null_key=error'` (items in any order, all optional).
 */
final case class KeyOptions(
    salt: String = "",
    trim: Boolean = false,
    caseMode: Int = KeyNormalizer.CASE_KEEP,
    emptyAsNull: Boolean = false,
    nullKey: NullKey = NullKey.Hash) {

  def normalizes: Boolean = trim || caseMode != KeyNormalizer.CASE_KEEP || emptyAsNull
}

object KeyOptions {
  val Default: KeyOptions = KeyOptions()

  private val cases = Map("keep" -> KeyNormalizer.CASE_KEEP, "upper" -> KeyNormalizer.CASE_UPPER,
    "lower" -> KeyNormalizer.CASE_LOWER)

  val Usage = "salt=<text>; trim; case=upper|lower|keep; empty_as_null; null_key=hash|null|error"

  /** Parses an options string; Left holds what is wrong with it. */
  def parse(text: String): Either[String, KeyOptions] = {
    val items = text.split(";").iterator.map(_.trim).filter(_.nonEmpty)
    items.foldLeft[Either[String, KeyOptions]](Right(Default)) { (acc, item) =>
      acc.flatMap { o =>
        val (key, value) = item.indexOf('=') match {
          case -1 => (item.toLowerCase(java.util.Locale.ROOT), None)
          case i => (item.take(i).trim.toLowerCase(java.util.Locale.ROOT), Some(item.drop(i + 1).trim))
        }
        (key, value) match {
          case ("salt", Some(v)) => Right(o.copy(salt = v))
          case ("trim", None) => Right(o.copy(trim = true))
          case ("empty_as_null", None) => Right(o.copy(emptyAsNull = true))
          case ("case", Some(v)) if cases.contains(v.toLowerCase(java.util.Locale.ROOT)) =>
            Right(o.copy(caseMode = cases(v.toLowerCase(java.util.Locale.ROOT))))
          case ("null_key", Some(v)) if NullKey.all.exists(_.name == v.toLowerCase(java.util.Locale.ROOT)) =>
            Right(o.copy(nullKey = NullKey.all.find(_.name == v.toLowerCase(java.util.Locale.ROOT)).get))
          case _ => Left(s"unknown or malformed option '$item'")
        }
      }
    }
  }
}
