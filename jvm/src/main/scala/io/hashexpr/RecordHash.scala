package io.hashexpr

import org.apache.spark.sql.catalyst.analysis.TypeCheckResult
import org.apache.spark.sql.catalyst.analysis.TypeCheckResult.DataTypeMismatch
import org.apache.spark.sql.catalyst.expressions.{Expression, ExpressionDescription}

// scalastyle:off line.size.limit
@ExpressionDescription(
  usage = """
    _FUNC_(expr1, expr2, ...) - Returns the 16-byte MurmurHash3 x64 128 hash of the arguments' canonical encoding (hashexpr format v1). Never NULL.
  """,
  arguments = """
    Arguments:
      * expr1, expr2, ... - one or more values of any type but VARIANT, TIME, GEOMETRY and GEOGRAPHY; `*` or `t.*` hashes every column.
          NULLs, argument positions and the number of arguments count; map entry order, -0.0 versus 0.0, NaN payloads and integer, float or decimal widening do not.
  """,
  examples = """
    Examples:
      > SELECT hex(_FUNC_(1, 'a', NULL));
       914BAFB12D9C5A010BFA6E9E20A248DE
      > SELECT _FUNC_(CAST(1 AS TINYINT)) = _FUNC_(1L);
       true
      > SELECT _FUNC_(map('a', 1, 'b', 2)) = _FUNC_(map('b', 2, 'a', 1));
       true
      > SELECT _FUNC_('a', NULL) = _FUNC_(NULL, 'a');
       false
  """,
  since = "0.1.0",
  group = "hash_funcs")
// scalastyle:on line.size.limit
case class RecordHash(children: Seq[Expression]) extends HashesRecord {

  override def prettyName: String = RecordHash.Name

  override protected def kind: RecordKind = RecordKind.Positional
  override protected def layout: Seq[(Expression, Array[Byte])] = children.map(_ -> null)

  override def checkInputDataTypes(): TypeCheckResult = RecordHash.checkArguments(prettyName, children)

  override protected def withNewChildrenInternal(newChildren: IndexedSeq[Expression]): RecordHash =
    copy(children = newChildren)
}

object RecordHash {
  val Name = "record_hash"

  /** The analysis-time checks of every function that hashes records: at least one argument, known types. */
  private[hashexpr] def checkArguments(function: String, children: Seq[Expression]): TypeCheckResult = {
    if (children.isEmpty) {
      DataTypeMismatch("TYPE_CHECK_FAILURE_WITH_HINT", Map(
        "msg" -> s"`$function` needs at least one argument",
        "hint" -> "; pass columns, or * for every column"))
    } else {
      children.iterator.zipWithIndex.flatMap { case (c, i) =>
        CanonicalTypes.firstUnsupported(c.dataType).map { bad =>
          val inside = if (bad == c.dataType) "" else s", which contains ${bad.sql}"
          DataTypeMismatch("TYPE_CHECK_FAILURE_WITH_HINT", Map(
            "msg" -> (s"argument ${i + 1} (${c.sql}) of `$function` has type ${c.dataType.sql}$inside, " +
              s"which hashexpr format v${CanonicalEncoder.FORMAT_VERSION} cannot hash"),
            "hint" -> CanonicalTypes.hint(bad)))
        }
      }.collectFirst { case mismatch => mismatch }.getOrElse(TypeCheckResult.TypeCheckSuccess)
    }
  }
}
