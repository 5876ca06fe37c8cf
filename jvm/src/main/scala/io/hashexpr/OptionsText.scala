package io.hashexpr

/**
 * How the typed options of the DataFrame API ([[HashOptions]], [[RecordKeyOptions]], [[FingerprintOptions]])
 * become the options text of the SQL functions: rendered, then read back by the very parser the SQL functions
 * use, so that a value the text cannot carry is refused when the options are made, never hashed differently.
 */
private[hashexpr] object OptionsText {

  /** `secret` when it is a secret's name (as SQL's `secret=` takes it); never repeats a rejected value. */
  def secretName(method: String, secret: String): String = {
    if (secret == null || Secrets.nameProblem(secret).isDefined) {
      val got = if (secret == null) "null" else s"a ${secret.length}-character value that is not one"
      throw new IllegalArgumentException(s"$method: the secret must be the name of the Spark conf " +
        s"${Secrets.confName("<name>")} that holds the key, made of letters, digits, '_', '.' and '-' (never " +
        s"the key itself); got $got")
    }
    secret
  }

  /** The options `text` renders `intended` as, once `parse` reads the text back as `intended`. */
  def checked[V](method: String, text: String, parse: String => Either[String, V], intended: V): String =
    parse(text) match {
      case Right(v) if v == intended => text
      case Right(_) => throw new IllegalArgumentException(
        s"$method: the options text '$text' would be read as other options than the ones given")
      case Left(problem) => throw new IllegalArgumentException(s"$method: the options text '$text' has an $problem")
    }

  /** What `parse` reads `text` as, or an IllegalArgumentException naming the problem and the valid items. */
  def parsed[V](method: String, text: String, parse: String => Either[String, V], usage: String): V = {
    if (text == null) throw new IllegalArgumentException(s"$method: the options text is null; valid items: $usage")
    parse(text) match {
      case Right(v) => v
      case Left(problem) =>
        throw new IllegalArgumentException(s"$method: the options text '$text' has an $problem; valid items: $usage")
    }
  }
}
