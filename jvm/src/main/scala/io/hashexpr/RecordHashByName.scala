package io.hashexpr

import java.nio.charset.StandardCharsets

import org.apache.spark.sql.catalyst.analysis.TypeCheckResult
import org.apache.spark.sql.catalyst.analysis.TypeCheckResult.DataTypeMismatch
import org.apache.spark.sql.catalyst.expressions.{Expression, ExpressionDescription}

// scalastyle:off line.size.limit
@ExpressionDescription(
  usage = """
    _FUNC_(col1, col2, ...) - Returns the 16-byte hash of the columns identified by name (hashexpr format v1, by-name record): reordering the columns does not change it, and neither does adding a column that is NULL. Never NULL.
  """,
  arguments = """
    Arguments:
      * col1, col2, ... - columns (or `*`); each is identified by its name: a column's name as its schema spells it, an alias, or an expression's unqualified text, such as upper(s). Names must be distinct.
          A NULL field is left out of the record, so it hashes like a missing column; it still differs from every value, '' and 0 included.
  """,
  examples = """
    Examples:
      > SELECT _FUNC_(*) = (SELECT _FUNC_(*) FROM VALUES ('x', 1) AS t(b, a)) FROM VALUES (1, 'x') AS t(a, b);
       true
      > SELECT _FUNC_(*) = (SELECT _FUNC_(a) FROM VALUES (1) AS t(a)) FROM VALUES (1, CAST(NULL AS STRING)) AS t(a, c);
       true
      > SELECT _FUNC_(*) = (SELECT _FUNC_(a) FROM VALUES (1) AS t(a)) FROM VALUES (1, '') AS t(a, c);
       false
  """,
  since = "0.1.0",
  group = "hash_funcs")
// scalastyle:on line.size.limit
case class RecordHashByName(children: Seq[Expression], names: Seq[String]) extends HashesRecord {

  // Names are taken when the function is resolved: the optimizer may later replace a column by its value.
  def this(children: Seq[Expression]) = this(children, children.map(ArgumentNames.of(_)))

  override def prettyName: String = RecordHashByName.Name

  override protected def kind: RecordKind = RecordKind.ByName

  override protected lazy val layout: Seq[(Expression, Array[Byte])] = RecordHashByName.layout(children, names)

  override def checkInputDataTypes(): TypeCheckResult = RecordHashByName.checkArguments(prettyName, children, names)

  // Plans show the arguments, not the names taken from them.
  override protected def stringArgs: Iterator[Any] = Iterator(children)

  override protected def withNewChildrenInternal(newChildren: IndexedSeq[Expression]): RecordHashByName =
    copy(children = newChildren)
}

object RecordHashByName {
  val Name = "record_hash_by_name"

  /** The values with their names' UTF-8 bytes, sorted by those bytes, so the column order does not matter. */
  private[hashexpr] def layout(values: Seq[Expression], names: Seq[String]): Seq[(Expression, Array[Byte])] =
    values.zip(names).map { case (c, name) => c -> name.getBytes(StandardCharsets.UTF_8) }
      .sortWith { case ((_, a), (_, b)) => CanonicalEncoder.compareUnsigned(a, b) < 0 }

  /** The checks of a by-name record: distinct names, then those of every record. */
  private[hashexpr] def checkArguments(function: String, values: Seq[Expression], names: Seq[String])
      : TypeCheckResult = names.diff(names.distinct).headOption match {
    case Some(dup) =>
      DataTypeMismatch("TYPE_CHECK_FAILURE_WITH_HINT", Map(
        "msg" -> s"`$function` identifies columns by name, and the name `$dup` appears more than once",
        "hint" -> "; select or alias the columns so that every name is distinct"))
    case None => RecordHash.checkArguments(function, values)
  }
}
