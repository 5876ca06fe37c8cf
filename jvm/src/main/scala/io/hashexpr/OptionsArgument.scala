package io.hashexpr

import org.apache.spark.sql.catalyst.analysis.TypeCheckResult
import org.apache.spark.sql.catalyst.analysis.TypeCheckResult.DataTypeMismatch
import org.apache.spark.sql.catalyst.expressions.Expression
import org.apache.spark.sql.types.StringType
import org.apache.spark.unsafe.types.UTF8String

/** The constant options string that the `_with` functions take as their first argument. */
private[hashexpr] object OptionsArgument {

  /** The parsed options, once the argument is a valid constant string. */
  def parsed[T](argument: Option[Expression], parse: String => Either[String, T]): Option[T] = argument
    .filter(o => o.foldable && o.dataType.isInstanceOf[StringType])
    .flatMap(o => Option(o.eval()))
    .flatMap(v => parse(v.asInstanceOf[UTF8String].toString).toOption)

  /**
   * Checks the options argument of `function`, then (when they are valid) the algorithm's secret and the other
   * arguments with `rest`.
   */
  def check[T](
      function: String,
      argument: Option[Expression],
      usage: String,
      parse: String => Either[String, T],
      algorithm: T => HashAlgorithm)(rest: => TypeCheckResult): TypeCheckResult = {
    def mismatch(msg: String) = DataTypeMismatch("TYPE_CHECK_FAILURE_WITH_HINT", Map(
      "msg" -> s"the first argument of `$function` must be $msg", "hint" -> s": $usage"))
    argument match {
      case None => mismatch("a constant options string, followed by the values to hash")
      case Some(o) if !o.foldable || !o.dataType.isInstanceOf[StringType] => mismatch("a constant options string")
      case Some(o) =>
        Option(o.eval()).map(v => parse(v.toString)) match {
          case None => mismatch("a constant options string, not NULL")
          case Some(Left(problem)) => mismatch(s"a valid options string, but it has an $problem")
          case Some(Right(options)) => checkSecret(function, algorithm(options)).getOrElse(rest)
        }
    }
  }

  /** A missing or empty HMAC secret fails analysis, naming the conf to set; never an unkeyed hash. */
  private def checkSecret(function: String, algorithm: HashAlgorithm): Option[TypeCheckResult] = algorithm match {
    case HashAlgorithm.HmacSha256(name) =>
      Secrets.problem(name).map { problem =>
        DataTypeMismatch("TYPE_CHECK_FAILURE_WITH_HINT", Map(
          "msg" -> s"`$function` hashes with algorithm=hmac-sha256, but $problem",
          "hint" -> s"; ${Secrets.howToSet(name)}"))
      }
    case _ => None
  }
}
