package io.hashexpr

import org.apache.spark.sql.catalyst.analysis.TypeCheckResult
import org.apache.spark.sql.catalyst.expressions.{Expression, ExpressionDescription}
import org.apache.spark.sql.types.StringType

/** A business-key hash: the key parts positionally, under a salt, with optional string normalisation. */
trait HashesKey extends HashesRecord {
  protected def keys: Seq[Expression]
  protected def options: KeyOptions

  override protected def kind: RecordKind = RecordKind.Key(options.salt, options.nullKey)
  override protected def algorithm: HashAlgorithm = options.algorithm

  override protected def layout: Seq[(Expression, Array[Byte])] = keys.map {
    case k if options.normalizes && k.dataType.isInstanceOf[StringType] => NormalizeKeyString(k, options) -> null
    case k => k -> null
  }
}

// scalastyle:off line.size.limit
@ExpressionDescription(
  usage = """
    _FUNC_(key1, key2, ...) - Returns the 16-byte hash of a business key (hashexpr format v1, key record): the key parts positionally, NULL-safe and type-tagged as in record_hash, framed so that a key hash never equals a record_hash. An all-NULL key is hashed too (use record_key_with to choose otherwise).
  """,
  arguments = """
    Arguments:
      * key1, key2, ... - the parts of the key, of any type record_hash accepts.
  """,
  examples = """
    Examples:
      > SELECT _FUNC_('C-042') = _FUNC_('C-042'), _FUNC_('C-042') = record_hash('C-042');
       true	false
      > SELECT _FUNC_(1, 'a') = _FUNC_('a', 1);
       false
  """,
  since = "0.1.0",
  group = "hash_funcs")
// scalastyle:on line.size.limit
case class RecordKey(children: Seq[Expression]) extends HashesKey {
  override def prettyName: String = RecordKey.Name
  override protected def keys: Seq[Expression] = children
  override protected def options: KeyOptions = KeyOptions.Default

  override def checkInputDataTypes(): TypeCheckResult = RecordHash.checkArguments(prettyName, children)

  override protected def withNewChildrenInternal(newChildren: IndexedSeq[Expression]): RecordKey =
    copy(children = newChildren)
}

object RecordKey {
  val Name = "record_key"
}

// scalastyle:off line.size.limit
@ExpressionDescription(
  usage = """
    _FUNC_(options, key1, key2, ...) - Returns record_key(key1, key2, ...) under the given options: a salt (one per hub or table, to separate or re-key hash spaces), opt-in normalisation of string key parts, what an all-NULL key gives, and the hash algorithm.
  """,
  arguments = """
    Arguments:
      * options - a constant string of items separated by ';', all optional:
          salt=<text> (default empty), trim (remove spaces at both ends), case=upper|lower|keep (the Unicode 14.0.0 full case mapping of Python 3.11's str.upper()/str.lower(), on every JVM; bytes that are not UTF-8 are kept),
          empty_as_null (an empty string counts as NULL), null_key=hash|null|error (an all-NULL key is hashed, gives NULL, or fails the query; default hash),
          algorithm=murmur3|sha256|hmac-sha256 (default murmur3, 16 bytes; sha256 and hmac-sha256 give 32 bytes that resist deliberate collisions), secret=<name> (hmac-sha256 only: its key is the value of the Spark conf spark.hashexpr.secret.<name>).
          Normalisation applies to top-level STRING key parts only, and only when asked for.
      * key1, key2, ... - the parts of the key.
  """,
  examples = """
    Examples:
      > SELECT _FUNC_('trim; case=upper', ' c-042 ') = _FUNC_('trim; case=upper', 'C-042');
       true
      > SELECT _FUNC_('salt=hub_customer', 'C-042') = record_key('C-042');
       false
      > SELECT _FUNC_('null_key=null', CAST(NULL AS STRING)) IS NULL;
       true
      > SELECT length(_FUNC_('algorithm=sha256; salt=hub_customer', 'C-042'));
       32
  """,
  since = "0.1.0",
  group = "hash_funcs")
// scalastyle:on line.size.limit
case class RecordKeyWith(children: Seq[Expression]) extends HashesKey {
  override def prettyName: String = RecordKeyWith.Name
  override protected def keys: Seq[Expression] = children.drop(1)

  @transient override protected lazy val options: KeyOptions = parsedOptions.get

  @transient private lazy val parsedOptions: Option[KeyOptions] =
    OptionsArgument.parsed(children.headOption, KeyOptions.parse)

  // null_key=error raises: folding it would fail the query while it is planned, even when it reads no rows.
  override def foldable: Boolean = super.foldable && !parsedOptions.exists(_.nullKey == NullKey.Error)

  override def checkInputDataTypes(): TypeCheckResult =
    OptionsArgument.check(prettyName, children.headOption, KeyOptions.Usage, KeyOptions.parse,
      (o: KeyOptions) => o.algorithm) {
      RecordHash.checkArguments(prettyName, keys)
    }

  override protected def withNewChildrenInternal(newChildren: IndexedSeq[Expression]): RecordKeyWith =
    copy(children = newChildren)
}

object RecordKeyWith {
  val Name = "record_key_with"
}
