package io.hashexpr

import scala.annotation.varargs

import org.apache.spark.sql.Column
import org.apache.spark.sql.functions.{call_function, col, lit}

/**
 * DataFrame functions for hashexpr's SQL functions, in the style of `org.apache.spark.sql.functions`: one for
 * each SQL function, taking Columns or column names, with typed options ([[HashOptions]], [[RecordKeyOptions]],
 * [[FingerprintOptions]]) for the `_with` functions. Callable from Java as static methods with varargs.
 *
 * A column name means what it means to `functions.col`, as in Spark's own functions that take names: `"a.b"` is
 * the field `b` of a struct column `a`, backticks quote (`"`a.b`"` is the column named `a.b`), `"*"` is every
 * column and `"t.*"` every column of `t`.
 *
 * Each function calls the SQL function of the same name, which hashexpr's jar registers in every session that
 * has the jar on its class path (through `META-INF/services`), or that names
 * `spark.sql.extensions=io.hashexpr.HashExprExtensions`. Arguments are checked where SQL checks them: a wrong
 * type, an unknown column or a missing secret fails analysis with an `AnalysisException` naming the function.
 *
 * {{{
 *   import io.hashexpr.functions._
 *
 *   df.select(col("*"), record_hash("*").as("row_hash"), record_key("customer_id", "order_no").as("key_hash"))
 *   df.agg(dataset_fingerprint("*")).head().getString(0)     // "hx1:...", independent of row order
 * }}}
 *
 * From Java:
 * {{{
 *   import static io.hashexpr.functions.*;
 *
 *   df.select(record_hash("*").as("row_hash"), record_key_with(RecordKeyOptions.defaults().trim(), "id"));
 * }}}
 */
// scalastyle:off object.name
object functions {
// scalastyle:on object.name

  SparkLineCheck.requireScala()

  /**
   * The 16-byte record hash of the columns (SQL `record_hash`, docs/FORMAT.md): MurmurHash3 x64 128 of their
   * null-safe, length-prefixed, type-tagged encoding. NULLs, positions and the number of columns count; map entry
   * order, `-0.0` versus `0.0`, NaN payloads and integer, float or decimal widening do not. Never NULL.
   *
   * {{{
   *   df.select(record_hash(col("id"), upper(col("name"))))
   * }}}
   *
   * @param cols one or more columns; `col("*")` stands for every column, in order
   * @return a BINARY column of 16-byte hashes
   */
  @varargs
  def record_hash(cols: Column*): Column = call(RecordHash.Name, cols)

  /**
   * The record hash of the named columns, as `record_hash` of Columns.
   *
   * {{{
   *   df.select(record_hash("*").as("row_hash"))      // every column, in order
   *   df.select(record_hash("id", "name"))
   * }}}
   *
   * @param colName the first column name, read as `functions.col` reads it; `"*"` names every column
   */
  @varargs
  def record_hash(colName: String, colNames: String*): Column = record_hash(columns(colName, colNames): _*)

  /**
   * The record hash of the columns hashed with the algorithm `options` choose (SQL `record_hash_with`): the same
   * canonical encoding, 16 bytes with MurmurHash3, 32 with SHA-256 or HMAC-SHA-256 (docs/SECURITY.md).
   *
   * {{{
   *   df.select(record_hash_with(HashOptions.sha256(), col("id"), col("name")))
   * }}}
   *
   * @param options the algorithm, e.g. `HashOptions.sha256()` or `HashOptions.hmacSha256("pii")`
   * @param cols    one or more columns
   */
  @varargs
  def record_hash_with(options: HashOptions, cols: Column*): Column =
    call(RecordHashWith.Name, nonNull(RecordHashWith.Name, options).text, cols)

  /**
   * `record_hash_with` of the named columns.
   *
   * {{{
   *   df.select(record_hash_with(HashOptions.hmacSha256("pii"), "email", "birth_date"))
   * }}}
   */
  @varargs
  def record_hash_with(options: HashOptions, colName: String, colNames: String*): Column =
    record_hash_with(options, columns(colName, colNames): _*)

  /**
   * The 16-byte hash of the columns identified by name (SQL `record_hash_by_name`): reordering the columns does
   * not change it, and neither does adding a column that is NULL. A column goes by its name as the schema spells
   * it, an aliased expression by its alias, any other expression by the name Spark shows for it (`upper(s)`);
   * names must be distinct. Never NULL.
   *
   * {{{
   *   df.select(record_hash_by_name(col("*")))
   * }}}
   */
  @varargs
  def record_hash_by_name(cols: Column*): Column = call(RecordHashByName.Name, cols)

  /**
   * The by-name record hash of the named columns.
   *
   * {{{
   *   df.select(record_hash_by_name("*"))   // the same after a reordering of df's columns
   * }}}
   */
  @varargs
  def record_hash_by_name(colName: String, colNames: String*): Column =
    record_hash_by_name(columns(colName, colNames): _*)

  /**
   * The by-name record hash hashed with the algorithm `options` choose (SQL `record_hash_by_name_with`).
   *
   * {{{
   *   df.select(record_hash_by_name_with(HashOptions.sha256(), col("*")))
   * }}}
   */
  @varargs
  def record_hash_by_name_with(options: HashOptions, cols: Column*): Column =
    call(RecordHashByNameWith.Name, nonNull(RecordHashByNameWith.Name, options).text, cols)

  /**
   * The by-name record hash of the named columns, hashed with the algorithm `options` choose.
   *
   * {{{
   *   df.select(record_hash_by_name_with(HashOptions.sha256(), "*"))
   * }}}
   */
  @varargs
  def record_hash_by_name_with(options: HashOptions, colName: String, colNames: String*): Column =
    record_hash_by_name_with(options, columns(colName, colNames): _*)

  /**
   * The 16-byte hash of a business key (SQL `record_key`, docs/KEYS.md): the key parts positionally, null-safe
   * and type-tagged as in `record_hash`, framed so that a key hash never equals a record
   * hash. An all-NULL key is hashed too (`record_key_with` chooses
   * otherwise).
   *
   * {{{
   *   df.select(record_key(col("customer_id")).as("hk_customer"))
   * }}}
   */
  @varargs
  def record_key(cols: Column*): Column = call(RecordKey.Name, cols)

  /**
   * The key hash of the named columns.
   *
   * {{{
   *   df.select(record_key("customer_id", "order_no").as("key_hash"))
   * }}}
   */
  @varargs
  def record_key(colName: String, colNames: String*): Column = record_key(columns(colName, colNames): _*)

  /**
   * The key hash under `options` (SQL `record_key_with`): a salt, opt-in trimming, case mapping and
   * empty-as-NULL of string key parts, the all-NULL policy and the algorithm.
   *
   * {{{
   *   val options = RecordKeyOptions.defaults().salt("hub_customer").trim().upperCase()
   *   df.select(record_key_with(options, col("customer_id")))
   * }}}
   */
  @varargs
  def record_key_with(options: RecordKeyOptions, cols: Column*): Column =
    call(RecordKeyWith.Name, nonNull(RecordKeyWith.Name, options).text, cols)

  /**
   * The key hash of the named columns under `options`.
   *
   * {{{
   *   df.select(record_key_with(RecordKeyOptions.defaults().nullKey(NullKeyPolicy.NULL), "customer_id"))
   * }}}
   */
  @varargs
  def record_key_with(options: RecordKeyOptions, colName: String, colNames: String*): Column =
    record_key_with(options, columns(colName, colNames): _*)

  /**
   * A key part as `record_key_with(options, ...)` hashes it (SQL `normalize_key`): a top-level string trimmed,
   * case-mapped and turned into NULL when empty, each only as `options` ask; any other value as it is. Two
   * spellings are one business key under `options` exactly when their normalised parts are equal, so this is what
   * to group, join or compare business keys on. The salt, NULL-key policy and algorithm of `options` change
   * nothing here, so a key's own options can be given.
   *
   * {{{
   *   df.select(normalize_key(RecordKeyOptions.defaults().trim().upperCase(), col("tailnum")))   // " n1 " -> "N1"
   * }}}
   */
  def normalize_key(options: RecordKeyOptions, part: Column): Column =
    call(NormalizeKey.Name, nonNull(NormalizeKey.Name, options).text, Seq(part))

  /** A named key part as `record_key_with(options, ...)` hashes it. */
  def normalize_key(options: RecordKeyOptions, colName: String): Column = normalize_key(options, col(colName))

  /**
   * An aggregate: the order-independent fingerprint of the rows' values (SQL `dataset_fingerprint`),
   * `"hx1:"` and 64 hex digits over the row count, the sum of the rows' record hashes and the columns' names and
   * types. Row order and partitioning do not change it; a changed value, an added or removed row, a renamed
   * column or a changed type do. Also per group (`groupBy(...).agg(...)`) and over windows.
   *
   * {{{
   *   df.agg(dataset_fingerprint(col("*"))).head().getString(0)
   * }}}
   */
  @varargs
  def dataset_fingerprint(cols: Column*): Column = call(DatasetFingerprint.Name, cols)

  /**
   * The fingerprint of the named columns.
   *
   * {{{
   *   df.agg(dataset_fingerprint("*")).head().getString(0)                          // the whole table
   *   df.groupBy("day").agg(dataset_fingerprint("*").as("fingerprint"))              // each day
   * }}}
   */
  @varargs
  def dataset_fingerprint(colName: String, colNames: String*): Column =
    dataset_fingerprint(columns(colName, colNames): _*)

  /**
   * The fingerprint computed as `options` say (SQL `dataset_fingerprint_with`): `FingerprintOptions.lthash16()`
   * gives `"hx1-lthash16:..."`, the LtHash16 of the rows' SHA-256 hashes, which nobody can forge.
   *
   * {{{
   *   df.agg(dataset_fingerprint_with(FingerprintOptions.lthash16(), col("*")))
   * }}}
   */
  @varargs
  def dataset_fingerprint_with(options: FingerprintOptions, cols: Column*): Column =
    call(DatasetFingerprintWith.Name, nonNull(DatasetFingerprintWith.Name, options).text, cols)

  /**
   * The fingerprint of the named columns, computed as `options` say.
   *
   * {{{
   *   df.agg(dataset_fingerprint_with(FingerprintOptions.lthash16("audit"), "*"))
   * }}}
   */
  @varargs
  def dataset_fingerprint_with(options: FingerprintOptions, colName: String, colNames: String*): Column =
    dataset_fingerprint_with(options, columns(colName, colNames): _*)

  /**
   * An aggregate: what `dataset_fingerprint` is computed from (SQL `dataset_fingerprint_state`), a struct of
   * `fingerprint`, `algorithm`, `secret`, `count`, `sum` (16 bytes), `lanes` (NULL) and `schema`. States add and
   * subtract as the multisets of their rows do, so a fingerprint can be kept from the rows added and removed.
   *
   * {{{
   *   val state = df.agg(dataset_fingerprint_state(col("*")).as("s")).select("s.*").head()
   * }}}
   */
  @varargs
  def dataset_fingerprint_state(cols: Column*): Column = call(DatasetFingerprintState.Name, cols)

  /** The state of the named columns' fingerprint. */
  @varargs
  def dataset_fingerprint_state(colName: String, colNames: String*): Column =
    dataset_fingerprint_state(columns(colName, colNames): _*)

  /**
   * The state of the fingerprint computed as `options` say (SQL `dataset_fingerprint_state_with`): with
   * `FingerprintOptions.lthash16()`, `lanes` holds the 1024 16-bit LtHash16 lanes (2048 bytes) and `sum` is NULL.
   *
   * {{{
   *   df.agg(dataset_fingerprint_state_with(FingerprintOptions.lthash16(), col("*")))
   * }}}
   */
  @varargs
  def dataset_fingerprint_state_with(options: FingerprintOptions, cols: Column*): Column =
    call(DatasetFingerprintStateWith.Name, nonNull(DatasetFingerprintStateWith.Name, options).text, cols)

  /** The state of the named columns' fingerprint, computed as `options` say. */
  @varargs
  def dataset_fingerprint_state_with(options: FingerprintOptions, colName: String, colNames: String*): Column =
    dataset_fingerprint_state_with(options, columns(colName, colNames): _*)

  /**
   * The position of each row (SQL `row_position()`): a struct of `batch_id` (the streaming micro-batch id, NULL
   * outside one), `partition` and `index` (the row's index in its partition, from 0). Unlike
   * `monotonically_increasing_id()` it is allowed in streaming queries.
   *
   * {{{
   *   df.select(col("*"), row_position().as("position"))
   * }}}
   */
  def row_position(): Column = call_function(RowPosition.Name)

  private def columns(colName: String, colNames: Seq[String]): Seq[Column] = (colName +: colNames).map(col)

  private def call(function: String, cols: Seq[Column]): Column = call_function(function, cols: _*)

  private def call(function: String, options: String, cols: Seq[Column]): Column =
    call_function(function, lit(options) +: cols: _*)

  /** The options, or an IllegalArgumentException for Java callers that pass null. */
  private def nonNull[T <: AnyRef](function: String, options: T): T = {
    if (options == null) throw new IllegalArgumentException(s"$function: the options are null; pass options " +
      "(HashOptions.murmur3(), RecordKeyOptions.defaults(), FingerprintOptions.murmur3() are the defaults)")
    options
  }
}
