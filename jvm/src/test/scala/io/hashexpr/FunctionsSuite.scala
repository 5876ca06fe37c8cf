package io.hashexpr

import java.nio.charset.StandardCharsets
import java.security.MessageDigest

import javax.crypto.Mac
import javax.crypto.spec.SecretKeySpec

import org.apache.spark.sql.{AnalysisException, Column, DataFrame, Row}
import org.apache.spark.sql.{functions => F}

import io.hashexpr.functions._

/**
 * The Scala DataFrame API: every function gives what its SQL function gives for the same columns and the options
 * text written out by hand; hand-built byte streams anchor a few of them independently of the encoder.
 */
class FunctionsSuite extends SparkSuite {

  private lazy val df: DataFrame = {
    spark.sql(
      """SELECT * FROM VALUES
        |  (1, ' c-042 ', CAST(12.50 AS DECIMAL(10, 2)), array('x', NULL), map('k', 1), named_struct('b', 7), 'dot'),
        |  (2, 'C-042', CAST(NULL AS DECIMAL(10, 2)), array(), CAST(NULL AS MAP<STRING, INT>), NULL, NULL),
        |  (3, '', CAST(-0.5 AS DECIMAL(10, 2)), CAST(NULL AS ARRAY<STRING>), map(), named_struct('b', NULL), ''),
        |  (CAST(NULL AS INT), CAST(NULL AS STRING), NULL, NULL, NULL, NULL, 'all-null key')
        |AS t(id, name, amount, tags, attrs, a, `a.b`)""".stripMargin)
  }

  /** Each row's value of `api`, and of the SQL expression `sql`, as comparable values (binary as hex). */
  private def rows(api: Column): Seq[Any] = comparable(df.select(api).collect())

  private def rowsOfSql(sql: String): Seq[Any] = comparable(query(s"SELECT $sql FROM api").collect())

  /** A query that may read the view `api`. */
  private def query(sql: String): DataFrame = {
    df.createOrReplaceTempView("api")
    spark.sql(sql)
  }

  private def comparable(rows: Array[Row]): Seq[Any] = rows.toSeq.map(_.get(0) match {
    case b: Array[Byte] => hex(b)
    case other => other
  })

  private def sameAsSql(api: Column, sql: String): Unit = {
    val expected = rowsOfSql(sql)
    assert(rows(api) == expected, sql)
    assert(expected.distinct.size > 1 || sql.contains("fingerprint"), s"$sql gives one value for every row")
  }

  private def sha256(bytes: Array[Byte]): String = hex(MessageDigest.getInstance("SHA-256").digest(bytes))

  private def hmac(key: String, bytes: Array[Byte]): String = {
    val mac = Mac.getInstance("HmacSHA256")
    mac.init(new SecretKeySpec(key.getBytes(StandardCharsets.UTF_8), "HmacSHA256"))
    hex(mac.doFinal(bytes))
  }

  private def one(api: Column): String = hex(spark.range(1).select(api).head().getAs[Array[Byte]](0))

  private def refused(f: => Any): String = intercept[IllegalArgumentException](f).getMessage

  test("record_hash and record_hash_by_name, of Columns and of names, give what SQL gives") {
    sameAsSql(record_hash(F.col("id"), F.col("name"), F.col("amount")), "record_hash(id, name, amount)")
    sameAsSql(record_hash("id", "name", "amount"), "record_hash(id, name, amount)")
    sameAsSql(record_hash("*"), "record_hash(*)")
    sameAsSql(record_hash(F.col("*")), "record_hash(id, name, amount, tags, attrs, a, `a.b`)")
    sameAsSql(record_hash(F.upper(F.col("name")), F.col("tags")), "record_hash(upper(name), tags)")
    sameAsSql(record_hash_by_name("*"), "record_hash_by_name(*)")
    sameAsSql(record_hash_by_name(F.col("attrs"), F.col("id")), "record_hash_by_name(attrs, id)")
    // An aliased expression goes by its alias, an unaliased one by the name Spark shows for it.
    assert(rows(record_hash_by_name(F.upper(F.col("name")).as("n"), F.col("id"))) == comparable(
      query("SELECT record_hash_by_name(n, id) FROM (SELECT upper(name) AS n, id FROM api)").collect()))
    sameAsSql(record_hash_by_name(F.upper(F.col("name")), F.col("id")), "record_hash_by_name(upper(name), id)")
    // By name, the column order does not count; by position it does.
    assert(rows(record_hash_by_name("name", "id")) == rows(record_hash_by_name("id", "name")))
    assert(rows(record_hash("name", "id")) != rows(record_hash("id", "name")))
  }

  test("the worked example of docs/FORMAT.md, and its SHA-256, through the API") {
    val args = Seq(F.lit(1), F.lit("a"), F.lit(null))
    assert(one(record_hash(args: _*)) == "914bafb12d9c5a010bfa6e9e20a248de")
    val bytes = Seq("01", "03000000", "02", "0100000000000000", "05", "01000000", "61", "00").mkString
      .grouped(2).map(Integer.parseInt(_, 16).toByte).toArray
    assert(one(record_hash_with(HashOptions.sha256(), args: _*)) == sha256(bytes))
    assert(one(record_hash_with(HashOptions.murmur3(), args: _*)) == "914bafb12d9c5a010bfa6e9e20a248de")
  }

  test("record_hash_with and record_hash_by_name_with: each algorithm, and an HMAC key from the configuration") {
    sameAsSql(record_hash_with(HashOptions.sha256(), "id", "name"), "record_hash_with('algorithm=sha256', id, name)")
    sameAsSql(record_hash_with(HashOptions.murmur3(), F.col("id")), "record_hash(id)")
    sameAsSql(record_hash_with(HashOptions.hmacSha256("suite"), F.col("name")),
      "record_hash_with('algorithm=hmac-sha256; secret=suite', name)")
    sameAsSql(record_hash_by_name_with(HashOptions.sha256(), "*"), "record_hash_by_name_with('algorithm=sha256', *)")
    sameAsSql(record_hash_by_name_with(HashOptions.hmacSha256("suite"), F.col("name"), F.col("id")),
      "record_hash_by_name_with('secret=suite; algorithm=hmac-sha256', id, name)")
    assert(rows(record_hash_with(HashOptions.hmacSha256("suite"), "name")) !=
      rows(record_hash_with(HashOptions.sha256(), "name")))
  }

  test("record_key and record_key_with: salt, normalisation, the all-NULL policy and the algorithm") {
    sameAsSql(record_key("name"), "record_key(name)")
    sameAsSql(record_key(F.col("id"), F.col("name")), "record_key(id, name)")
    sameAsSql(record_key_with(RecordKeyOptions.defaults(), "name"), "record_key(name)")
    val normalised = RecordKeyOptions.defaults().trim().upperCase().emptyAsNull()
    sameAsSql(record_key_with(normalised, "name"), "record_key_with('empty_as_null;case=UPPER;trim', name)")
    val keys = rows(record_key_with(normalised, "name"))
    assert(keys(0) == keys(1) && keys(2) == keys(3), "' c-042 ' and 'C-042', '' and NULL are one key each")
    sameAsSql(record_key_with(RecordKeyOptions.defaults().salt("hub customer").lowerCase(), F.col("name")),
      "record_key_with('salt=hub customer; case=lower', name)")
    sameAsSql(record_key_with(RecordKeyOptions.defaults().salt("a=b"), "name"), "record_key_with('salt=a=b', name)")
    sameAsSql(record_key_with(RecordKeyOptions.defaults().nullKey(NullKeyPolicy.NULL), "id", "name"),
      "record_key_with('null_key=null', id, name)")
    assert(rows(record_key_with(RecordKeyOptions.defaults().nullKey(NullKeyPolicy.NULL), "id", "name")).last == null)
    sameAsSql(record_key_with(RecordKeyOptions.defaults().algorithm(HashOptions.hmacSha256("suite")).salt("hub"),
      "name"), "record_key_with('algorithm=hmac-sha256; secret=suite; salt=hub', name)")
    val failing = intercept[Exception](df.select(
      record_key_with(RecordKeyOptions.defaults().nullKey(NullKeyPolicy.ERROR), "id", "name")).collect())
    assert(Iterator.iterate[Throwable](failing)(_.getCause).takeWhile(_ != null)
      .exists(_.getMessage.contains("every key part is NULL")))
  }

  test("normalize_key gives a key part as record_key_with hashes it, of a Column and of a name") {
    val normalised = RecordKeyOptions.defaults().salt("hub").trim().upperCase().emptyAsNull()
    sameAsSql(normalize_key(normalised, "name"), "normalize_key('salt=hub; trim; case=upper; empty_as_null', name)")
    assert(rows(normalize_key(normalised, F.col("name"))) == rowsOfSql("upper(nullif(trim(name), ''))"))
    assert(rows(normalize_key(RecordKeyOptions.defaults(), F.col("id"))) == rows(F.col("id")))
  }

  test("record_key_with hashes the key record of docs/FORMAT.md with the salt and the HMAC key given") {
    val record = Array(0x82.toByte) ++ stringValue("hub") ++ u32(2) ++ stringValue("C-042") ++
      Array(0x02.toByte) ++ java.nio.ByteBuffer.allocate(8).order(java.nio.ByteOrder.LITTLE_ENDIAN).putLong(7).array()
    val key = Seq(F.lit(" c-042"), F.lit(7))
    val options = RecordKeyOptions.defaults().salt("hub").trim().upperCase()
    assert(one(record_key_with(options.algorithm(HashOptions.sha256()), key: _*)) == sha256(record))
    assert(one(record_key_with(options.algorithm(HashOptions.hmacSha256("suite")), key: _*)) ==
      hmac(SparkSuite.Secret, record))
  }

  test("dataset_fingerprint and dataset_fingerprint_with, over the table and per group") {
    val sql = query("SELECT dataset_fingerprint(*), dataset_fingerprint_with('algorithm=lthash16', id, name), " +
      "dataset_fingerprint_with('algorithm=lthash16; secret=suite', *) FROM api").head()
    val api = df.agg(dataset_fingerprint("*"), dataset_fingerprint_with(FingerprintOptions.lthash16(), "id", "name"),
      dataset_fingerprint_with(FingerprintOptions.lthash16("suite"), F.col("*"))).head()
    assert(api == sql && api.getString(0).startsWith("hx1:") && api.getString(2).startsWith("hx1-lthash16-hmac:"))
    assert(df.select(dataset_fingerprint(F.col("*"))).head() == Row(sql.getString(0)))
    assert(df.agg(dataset_fingerprint_with(FingerprintOptions.murmur3(), "*")).head() == Row(sql.getString(0)))
    val groups = df.groupBy("a.b").agg(dataset_fingerprint("id", "name").as("f")).orderBy("b").collect().toSeq
    assert(groups == query("SELECT a.b, dataset_fingerprint(id, name) AS f FROM api GROUP BY a.b ORDER BY b")
      .collect().toSeq && groups.size == 2)
  }

  test("dataset_fingerprint_state and dataset_fingerprint_state_with give what SQL gives") {
    val sql = query("SELECT dataset_fingerprint_state(*), dataset_fingerprint_state_with('algorithm=lthash16', id, " +
      "name), dataset_fingerprint_state_with('algorithm=lthash16; secret=suite', *) FROM api").head()
    val api = df.agg(dataset_fingerprint_state("*"),
      dataset_fingerprint_state_with(FingerprintOptions.lthash16(), "id", "name"),
      dataset_fingerprint_state_with(FingerprintOptions.lthash16("suite"), F.col("*"))).head()
    assert(api == sql)
    assert(api.getStruct(0).getString(0) == df.agg(dataset_fingerprint("*")).head().getString(0))
    assert(api.getStruct(2).getString(2) == "suite")
    assert(df.select(dataset_fingerprint_state(F.col("*"))).head() == Row(sql.getStruct(0)))
  }

  test("row_position numbers the rows of each partition") {
    val api = spark.range(0, 6, 1, 2).select(F.col("id"), row_position().as("p")).orderBy("id").collect()
    val sql = spark.sql("SELECT id, row_position() AS p FROM range(0, 6, 1, 2) ORDER BY id").collect()
    assert(api.toSeq == sql.toSeq)
    val positions = for (partition <- 0 to 1; index <- 0L to 2L) yield Row(null, partition, index)
    assert(api.map(_.getStruct(1)).toSeq == positions)
  }

  test("column names are read as functions.col reads them: dots are fields, backticks quote, t.* expands") {
    sameAsSql(record_hash("a.b"), "record_hash(a.b)")
    sameAsSql(record_hash("`a.b`"), "record_hash(`a.b`)")
    assert(rows(record_hash("a.b")) != rows(record_hash("`a.b`")))
    // By name, the struct field goes by its own name and the dotted column by its whole name.
    sameAsSql(record_hash_by_name("a.b", "`a.b`"), "record_hash_by_name(a.b, `a.b`)")
    assert(df.as("t").select(record_hash("t.*")).collect().toSeq == df.select(record_hash("*")).collect().toSeq)
    assert(rows(record_hash("ID", "NAME")) == rows(record_hash("id", "name")))
  }

  test("the options render the text SQL takes, in one order, and parse what SQL parses") {
    val all = RecordKeyOptions.defaults().nullKey(NullKeyPolicy.ERROR).algorithm(HashOptions.sha256()).emptyAsNull()
      .upperCase().trim().salt("hub_customer")
    assert(all.text == "salt=hub_customer; trim; case=upper; empty_as_null; null_key=error; algorithm=sha256")
    val shuffled = " ALGORITHM=sha256;null_key=ERROR;Empty_As_Null; case=upper ;trim;salt=hub_customer"
    assert(RecordKeyOptions.parse(shuffled) == all)
    assert(RecordKeyOptions.defaults().text == "" && RecordKeyOptions.parse("").text == "")
    assert(RecordKeyOptions.defaults().salt("crm").salt("").text == "")
    assert(RecordKeyOptions.defaults().upperCase().lowerCase().text == "case=lower")
    assert(RecordKeyOptions.defaults().nullKey(NullKeyPolicy.NULL).nullKey(NullKeyPolicy.HASH).text == "")
    assert(RecordKeyOptions.defaults().algorithm(HashOptions.hmacSha256("pii")).text ==
      "algorithm=hmac-sha256; secret=pii")
    assert(HashOptions.hmacSha256("pii.v2").text == "algorithm=hmac-sha256; secret=pii.v2")
    assert(HashOptions.parse("secret=pii; algorithm=HMAC-SHA256") == HashOptions.hmacSha256("pii"))
    assert(HashOptions.murmur3().toString == "algorithm=murmur3" && HashOptions.parse("") == HashOptions.murmur3())
    assert(FingerprintOptions.lthash16("audit").text == "algorithm=lthash16; secret=audit")
    assert(FingerprintOptions.parse("Algorithm=LTHASH16") == FingerprintOptions.lthash16())
    assert(FingerprintOptions.murmur3().text == "algorithm=murmur3")
  }

  test("options the text cannot carry, or SQL would refuse, are refused when they are made") {
    assert(refused(RecordKeyOptions.defaults().salt("crm; trim")).contains("cannot contain ';'"))
    assert(refused(RecordKeyOptions.defaults().salt(" crm")).contains("cannot begin or end with a space"))
    assert(refused(RecordKeyOptions.defaults().salt("crm\t")).contains("RecordKeyOptions.salt"))
    assert(refused(RecordKeyOptions.defaults().salt(null)).contains("RecordKeyOptions.salt: the salt is null"))
    assert(refused(RecordKeyOptions.defaults().nullKey(null)).contains("RecordKeyOptions.nullKey"))
    assert(refused(RecordKeyOptions.defaults().algorithm(null)).contains("RecordKeyOptions.algorithm"))
    val key = refused(HashOptions.hmacSha256("s3cr3t key value"))
    assert(key.contains("HashOptions.hmacSha256: the secret must be the name of the Spark conf"))
    assert(!key.contains("s3cr3t"), "the refused value may be the key itself")
    assert(refused(HashOptions.hmacSha256("")).contains("HashOptions.hmacSha256"))
    assert(refused(FingerprintOptions.lthash16("a b")).contains("FingerprintOptions.lthash16"))
    assert(refused(RecordKeyOptions.parse("salt=crm; tirm")).contains("unknown option 'tirm'"))
    assert(refused(RecordKeyOptions.parse("trim; trim")).contains("given twice"))
    assert(refused(RecordKeyOptions.parse("algorithm=hmac-sha256")).contains("without 'secret=<name>'"))
    assert(refused(RecordKeyOptions.parse(null)).contains("RecordKeyOptions.parse: the options text is null"))
    assert(refused(HashOptions.parse("salt=crm")).contains("option that only record_key_with takes"))
    assert(refused(HashOptions.parse("algorithm=md5")).contains("HashOptions.parse"))
    assert(refused(FingerprintOptions.parse("algorithm=sha256")).contains("lthash16"))
    assert(refused(record_hash_with(null, "id")).contains("record_hash_with: the options are null"))
    assert(refused(record_key_with(null: RecordKeyOptions, F.col("id"))).contains("record_key_with"))
  }

  test("what SQL refuses at analysis, the API refuses with the same AnalysisException") {
    def analysis(c: Column): String = intercept[AnalysisException](df.select(c).collect()).getMessage
    val unset = analysis(record_hash_with(HashOptions.hmacSha256("absent"), "name"))
    assert(unset.contains("`record_hash_with` hashes with algorithm=hmac-sha256, but the secret 'absent' is not set"))
    assert(analysis(record_key_with(RecordKeyOptions.defaults().algorithm(HashOptions.hmacSha256("blank")), "id"))
      .contains("the secret 'blank' is empty"))
    assert(analysis(record_hash()).contains("`record_hash` needs at least one argument"))
    assert(analysis(record_hash("no_such_column")).contains("no_such_column"))
    assert(analysis(record_hash_by_name(F.col("id"), F.col("id"))).contains("the name `id` appears more than once"))
  }
}
