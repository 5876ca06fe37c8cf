package io.hashexpr

import org.apache.spark.sql.catalyst.analysis.TypeCheckResult
import org.apache.spark.sql.catalyst.expressions.{Expression, ExpressionDescription}

/** A record hash whose first argument is a constant options string choosing the algorithm. */
trait HashesRecordWith extends HashesRecord {

  /** The values hashed: every argument after the options. */
  protected def values: Seq[Expression] = children.drop(1)

  @transient private lazy val parsedAlgorithm: Option[HashAlgorithm] =
    OptionsArgument.parsed(children.headOption, KeyOptions.parseHashOptions)

  @transient override protected lazy val algorithm: HashAlgorithm = parsedAlgorithm.get

  protected def checkOptions(rest: => TypeCheckResult): TypeCheckResult =
    OptionsArgument.check(prettyName, children.headOption, KeyOptions.HashUsage, KeyOptions.parseHashOptions,
      (a: HashAlgorithm) => a)(rest)
}

// scalastyle:off line.size.limit
@ExpressionDescription(
  usage = """
    _FUNC_(options, expr1, expr2, ...) - Returns record_hash(expr1, expr2, ...) hashed with the algorithm the options name: the same canonical encoding (hashexpr format v1, section 10), 16 bytes for murmur3, 32 bytes for sha256 and hmac-sha256. Never NULL.
  """,
  arguments = """
    Arguments:
      * options - a constant string: algorithm=murmur3|sha256|hmac-sha256 (default murmur3) and, for hmac-sha256, secret=<name>: the key is the value of the Spark conf spark.hashexpr.secret.<name>, which Spark redacts from its UI and logs; the SQL text never holds the key.
          murmur3 is the fastest and guards against accidents only; sha256 resists deliberate collisions; hmac-sha256 also keeps hashes of guessable values (emails, ids) from being reversed by whoever lacks the key.
      * expr1, expr2, ... - one or more values, as for record_hash.
  """,
  examples = """
    Examples:
      > SELECT hex(_FUNC_('algorithm=sha256', 1, 'a', NULL));
       3289F54C0BF13B1403FD44008F8A3841FC83179AABE6234C5D3A1D3601D79351
      > SELECT _FUNC_('algorithm=murmur3', 1, 'a') = record_hash(1, 'a');
       true
      > SELECT _FUNC_('algorithm=sha256', map('a', 1, 'b', 2)) = _FUNC_('algorithm=sha256', map('b', 2, 'a', 1));
       true
  """,
  since = "0.2.0",
  group = "hash_funcs")
// scalastyle:on line.size.limit
case class RecordHashWith(children: Seq[Expression]) extends HashesRecordWith {

  override def prettyName: String = RecordHashWith.Name

  override protected def kind: RecordKind = RecordKind.Positional
  override protected def layout: Seq[(Expression, Array[Byte])] = values.map(_ -> null)

  override def checkInputDataTypes(): TypeCheckResult = checkOptions(RecordHash.checkArguments(prettyName, values))

  override protected def withNewChildrenInternal(newChildren: IndexedSeq[Expression]): RecordHashWith =
    copy(children = newChildren)
}

object RecordHashWith {
  val Name = "record_hash_with"
}

// scalastyle:off line.size.limit
@ExpressionDescription(
  usage = """
    _FUNC_(options, col1, col2, ...) - Returns record_hash_by_name(col1, col2, ...) hashed with the algorithm the options name (as record_hash_with): 16 bytes for murmur3, 32 bytes for sha256 and hmac-sha256. Never NULL.
  """,
  arguments = """
    Arguments:
      * options - a constant string: algorithm=murmur3|sha256|hmac-sha256 and, for hmac-sha256, secret=<name> (see record_hash_with).
      * col1, col2, ... - columns (or `*`), each identified by its name, as for record_hash_by_name.
  """,
  examples = """
    Examples:
      > SELECT _FUNC_('algorithm=sha256', *) = (SELECT _FUNC_('algorithm=sha256', *) FROM VALUES ('x', 1) AS t(b, a)) FROM VALUES (1, 'x') AS t(a, b);
       true
  """,
  since = "0.2.0",
  group = "hash_funcs")
// scalastyle:on line.size.limit
case class RecordHashByNameWith(children: Seq[Expression], names: Seq[String]) extends HashesRecordWith {

  // Names are taken when the function is resolved, as in record_hash_by_name.
  def this(children: Seq[Expression]) = this(children, children.drop(1).map(ArgumentNames.of(_)))

  override def prettyName: String = RecordHashByNameWith.Name

  override protected def kind: RecordKind = RecordKind.ByName

  override protected lazy val layout: Seq[(Expression, Array[Byte])] = RecordHashByName.layout(values, names)

  override def checkInputDataTypes(): TypeCheckResult =
    checkOptions(RecordHashByName.checkArguments(prettyName, values, names))

  override protected def stringArgs: Iterator[Any] = Iterator(children)

  override protected def withNewChildrenInternal(newChildren: IndexedSeq[Expression]): RecordHashByNameWith =
    copy(children = newChildren)
}

object RecordHashByNameWith {
  val Name = "record_hash_by_name_with"
}
