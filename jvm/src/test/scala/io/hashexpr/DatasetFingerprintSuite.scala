package io.hashexpr

import java.nio.{ByteBuffer, ByteOrder}
import java.security.MessageDigest

import org.apache.spark.sql.DataFrame

class DatasetFingerprintSuite extends SparkSuite {

  private def fingerprint(df: DataFrame): String = df.selectExpr("dataset_fingerprint(*)").collect().head.getString(0)

  private lazy val data: DataFrame = spark.range(0, 5000).selectExpr(
    "id", "CAST(id * 3 AS STRING) AS s", "IF(id % 7 = 0, NULL, id / 3.0D) AS d",
    "map(id % 5, array(id)) AS m", "named_struct('a', id % 11, 'b', CAST(NULL AS DATE)) AS st")

  /** The fingerprint as docs/FORMAT.md section 5 defines it, from per-row record_hash values. */
  private def fromSpec(df: DataFrame, names: Seq[String], types: Seq[String]): String = {
    val rows = df.selectExpr("record_hash(*)").collect().map(_.getAs[Array[Byte]](0))
    val mod = BigInt(1) << 128
    val sum = rows.map(h => BigInt(1, h.reverse)).foldLeft(BigInt(0))((a, b) => (a + b) % mod)
    val schemaArgs = names.zip(types).flatMap { case (n, t) => Seq(s"'$n'", s"'$t'") }.mkString(", ")
    val schema = one(s"SELECT record_hash($schemaArgs)").getAs[Array[Byte]](0)
    val sumBytes = sum.toByteArray.reverse.padTo(17, 0.toByte).take(16)
    val sha = MessageDigest.getInstance("SHA-256")
    sha.update("hashexpr-fingerprint".getBytes("US-ASCII"))
    sha.update(1.toByte)
    sha.update(schema)
    sha.update(ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putLong(rows.length.toLong).array())
    sha.update(sumBytes)
    "hx1:" + sha.digest().map(b => f"${b & 0xff}%02x").mkString
  }

  test("equals the specification: SHA-256 of label, version, schema, count and the 128-bit sum") {
    val names = Seq("id", "s", "d", "m", "st")
    val types = Seq("bigint", "string", "double", "map<bigint,array<bigint>>", "struct<`a`:bigint,`b`:date>")
    assert(fingerprint(data) == fromSpec(data, names, types))
    val empty = data.limit(0)
    assert(fingerprint(empty) == fromSpec(empty, names, types))
  }

  test("independent of row order and partitioning, in every execution mode") {
    val expected = fingerprint(data)
    SparkSuite.Modes.foreach { m =>
      inMode(m) {
        assert(fingerprint(data.orderBy(org.apache.spark.sql.functions.rand(3))) == expected, m.name)
        assert(fingerprint(data.repartition(7)) == expected, m.name)
        assert(fingerprint(data.coalesce(1)) == expected, m.name)
      }
    }
  }

  test("changes with a value, a row, a duplicate, a column name or a type") {
    val base = fingerprint(data)
    val changes = Seq(
      "a value" -> data.selectExpr("IF(id = 42, id + 1, id) AS id", "s", "d", "m", "st"),
      "a removed row" -> data.where("id <> 42"),
      "a duplicate" -> data.union(data.where("id = 42")),
      "a column name" -> data.withColumnRenamed("s", "t"),
      "a type" -> data.selectExpr("CAST(id AS INT) AS id", "s", "d", "m", "st"))
    val results = changes.map { case (what, df) => what -> fingerprint(df) }
    results.foreach { case (what, fp) => assert(fp != base, s"$what did not change the fingerprint") }
    assert(results.map(_._2).distinct.size == results.size)
  }

  test("sums wrap around under ANSI mode instead of overflowing") {
    withConf("spark.sql.ansi.enabled" -> "true") {
      assert(fingerprint(spark.range(0, 200000).toDF()).startsWith("hx1:"))
    }
  }

  test("GROUP BY, FILTER and OVER give per-group fingerprints equal to fingerprinting each group alone") {
    data.createOrReplaceTempView("fp_data")
    val grouped = spark.sql(
      "SELECT id % 3 AS k, dataset_fingerprint(id, s) AS fp, " +
        "dataset_fingerprint(id, s) FILTER (WHERE d IS NOT NULL) AS fpf FROM fp_data GROUP BY id % 3")
      .collect().map(r => r.getLong(0) -> (r.getString(1), r.getString(2))).toMap
    (0L until 3L).foreach { k =>
      assert(grouped(k)._1 == one(s"SELECT dataset_fingerprint(id, s) FROM fp_data WHERE id % 3 = $k").getString(0))
      assert(grouped(k)._2 ==
        one(s"SELECT dataset_fingerprint(id, s) FROM fp_data WHERE id % 3 = $k AND d IS NOT NULL").getString(0))
    }
    val windowed = spark.sql(
      "SELECT DISTINCT id % 2 AS k, dataset_fingerprint(id, s) OVER (PARTITION BY id % 2) FROM fp_data")
      .collect().map(r => r.getLong(0) -> r.getString(1)).toMap
    assert(windowed(1L) == one("SELECT dataset_fingerprint(id, s) FROM fp_data WHERE id % 2 = 1").getString(0))
  }

  test("declared nullability does not change the fingerprint; bad input is refused like record_hash") {
    val nullable = spark.createDataFrame(data.rdd,
      org.apache.spark.sql.types.StructType(data.schema.map(_.copy(nullable = true))))
    assert(fingerprint(nullable) == fingerprint(data))
    val e = intercept[org.apache.spark.sql.AnalysisException](spark.sql("SELECT dataset_fingerprint()").collect())
    assert(e.getMessage.contains("`dataset_fingerprint` needs at least one argument"))
  }

  // --- dataset_fingerprint_with ---------------------------------------------------------------------------------

  private def fingerprintWith(options: String, df: DataFrame): String =
    df.selectExpr(s"dataset_fingerprint_with('$options', *)").collect().head.getString(0)

  private def le(count: Long): Array[Byte] =
    ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putLong(count).array()

  /**
   * The lthash16 fingerprint as docs/FORMAT.md section 11 defines it, from each row's record_hash_with (SHA-256 or
   * HMAC-SHA-256), expanded and summed here with the JDK's SHA-256.
   */
  private def lthashFromSpec(df: DataFrame, rowOptions: String, prefix: String, names: Seq[String],
      types: Seq[String]): String = {
    val rows = df.selectExpr(s"record_hash_with('$rowOptions', *)").collect().map(_.getAs[Array[Byte]](0))
    val lanes = lanesFromSpec(rows)
    val sha = MessageDigest.getInstance("SHA-256")
    val schemaArgs = names.zip(types).flatMap { case (n, t) => Seq(s"'$n'", s"'$t'") }.mkString(", ")
    val schema = one(s"SELECT record_hash_with('algorithm=sha256', $schemaArgs)").getAs[Array[Byte]](0)
    sha.update("hashexpr-fingerprint-lthash16".getBytes("US-ASCII"))
    sha.update(1.toByte)
    sha.update(schema)
    sha.update(le(rows.length.toLong))
    sha.update(lanes.flatMap(l => Array(l.toByte, (l >> 8).toByte)))
    prefix + sha.digest().map(b => f"${b & 0xff}%02x").mkString
  }

  /** The LtHash16 lanes of these 32-byte row hashes (section 11), with the JDK's SHA-256. */
  private def lanesFromSpec(rows: Seq[Array[Byte]]): Array[Int] = {
    val lanes = new Array[Int](1024)
    val sha = MessageDigest.getInstance("SHA-256")
    rows.foreach { element =>
      (0 until 64).foreach { block =>
        sha.update("hashexpr-lthash16".getBytes("US-ASCII"))
        sha.update(element)
        sha.update(Array[Byte](block.toByte, 0, 0, 0))
        val out = sha.digest()
        (0 until 16).foreach { i =>
          val lane = (out(2 * i) & 0xff) | (out(2 * i + 1) & 0xff) << 8
          lanes(block * 16 + i) = (lanes(block * 16 + i) + lane) & 0xffff
        }
      }
    }
    lanes
  }

  private val names = Seq("id", "s", "d", "m", "st")
  private val types = Seq("bigint", "string", "double", "map<bigint,array<bigint>>", "struct<`a`:bigint,`b`:date>")

  test("dataset_fingerprint_with lthash16 equals the specification, keyed and not, empty or not") {
    val small = data.where("id < 700")
    Seq(small, small.limit(0)).foreach { df =>
      assert(fingerprintWith("algorithm=lthash16", df) ==
        lthashFromSpec(df, "algorithm=sha256", "hx1-lthash16:", names, types))
      assert(fingerprintWith("algorithm=lthash16; secret=suite", df) ==
        lthashFromSpec(df, "algorithm=hmac-sha256; secret=suite", "hx1-lthash16-hmac:", names, types))
    }
  }

  test("dataset_fingerprint_with: murmur3 is dataset_fingerprint; lthash16 ignores order, partitions and modes") {
    assert(fingerprintWith("algorithm=murmur3", data) == fingerprint(data))
    assert(fingerprintWith("", data) == fingerprint(data))
    Seq("algorithm=lthash16", "algorithm=lthash16; secret=suite", "algorithm=murmur3").foreach { options =>
      val expected = fingerprintWith(options, data)
      SparkSuite.Modes.foreach { m =>
        inMode(m) {
          assert(fingerprintWith(options, data.orderBy(org.apache.spark.sql.functions.rand(5))) == expected, m.name)
          assert(fingerprintWith(options, data.repartition(9)) == expected, m.name)
          assert(fingerprintWith(options, data.coalesce(1)) == expected, m.name)
        }
      }
    }
  }

  test("dataset_fingerprint_with lthash16 changes with a value, a row, a duplicate, a column name or a type") {
    val small = data.where("id < 1000")
    val base = fingerprintWith("algorithm=lthash16", small)
    val changes = Seq(
      "a value" -> small.selectExpr("IF(id = 42, id + 1, id) AS id", "s", "d", "m", "st"),
      "a removed row" -> small.where("id <> 42"),
      "a duplicate" -> small.union(small.where("id = 42")),
      "a column name" -> small.withColumnRenamed("s", "t"),
      "a type" -> small.selectExpr("CAST(id AS INT) AS id", "s", "d", "m", "st"),
      "the key" -> null)
    val results = changes.map {
      case (what, null) => what -> fingerprintWith("algorithm=lthash16; secret=suite", small)
      case (what, df) => what -> fingerprintWith("algorithm=lthash16", df)
    }
    results.foreach { case (what, fp) => assert(fp != base, s"$what did not change the fingerprint") }
    assert(results.map(_._2).distinct.size == results.size)
  }

  test("dataset_fingerprint_with per group, with hash and sort-based aggregation, equals each group alone") {
    data.createOrReplaceTempView("fpw_data")
    def grouped: Map[Long, String] = spark.sql(
      "SELECT id % 50 AS k, dataset_fingerprint_with('algorithm=lthash16', id, s) FROM fpw_data GROUP BY id % 50")
      .collect().map(r => r.getLong(0) -> r.getString(1)).toMap
    val hashed = grouped
    // Past this many groups, an object hash aggregate falls back to sorting its rows (and merging sorted states).
    val sorted = withConf("spark.sql.objectHashAggregate.sortBased.fallbackThreshold" -> "2") { grouped }
    assert(hashed == sorted && hashed.size == 50)
    Seq(0L, 17L, 49L).foreach { k =>
      assert(hashed(k) ==
        one("SELECT dataset_fingerprint_with('algorithm=lthash16', id, s) FROM fpw_data " +
          s"WHERE id % 50 = $k").getString(0))
    }
  }

  test("dataset_fingerprint_with refuses bad options, a missing secret and types record_hash refuses") {
    def failure(sql: String): String =
      intercept[org.apache.spark.sql.AnalysisException](spark.sql(sql).collect()).getMessage
    data.limit(3).createOrReplaceTempView("fpw_opts")
    Seq(
      "'algorithm=sha256'" -> "generalized-birthday attacks",
      "'algorithm=lthash8'" -> "option 'algorithm=lthash8' with a missing or unknown value",
      "'secret=suite'" -> "only lthash16 takes a secret",
      "'algorithm=lthash16; algorithm=lthash16'" -> "option 'algorithm' given twice",
      "'salt=x'" -> "unknown option 'salt=x'",
      "'algorithm=lthash16; secret=nope'" -> "the secret 'nope' is not set",
      "'algorithm=lthash16; secret=blank'" -> "the secret 'blank' is empty",
      "CAST(NULL AS STRING)" -> "a constant options string, not NULL",
      "s" -> "a constant options string").foreach { case (options, message) =>
      val e = failure(s"SELECT dataset_fingerprint_with($options, id) FROM fpw_opts")
      assert(e.contains("dataset_fingerprint_with") && e.contains(message), e)
    }
    assert(failure("SELECT dataset_fingerprint_with('algorithm=lthash16') FROM fpw_opts")
      .contains("`dataset_fingerprint_with` needs at least one argument"))
    if (LineFeatures.variant) {
      assert(failure("SELECT dataset_fingerprint_with('algorithm=lthash16', parse_json('1')) FROM fpw_opts")
        .contains("cannot hash"))
    }
  }

  // --- dataset_fingerprint_state and dataset_fingerprint_state_with ---------------------------------------------

  private def state(function: String, df: DataFrame): org.apache.spark.sql.Row =
    df.selectExpr(s"$function AS s").selectExpr("s.*").collect().head

  /** The sum mod 2^128 of the rows' record_hash, read as little-endian numbers, as 16 little-endian bytes. */
  private def sumFromSpec(df: DataFrame): Array[Byte] = {
    val rows = df.selectExpr("record_hash(*)").collect().map(_.getAs[Array[Byte]](0))
    val sum = rows.map(h => BigInt(1, h.reverse)).foldLeft(BigInt(0))((a, b) => (a + b) % (BigInt(1) << 128))
    sum.toByteArray.reverse.padTo(17, 0.toByte).take(16)
  }

  private def lanesOf(bytes: Array[Byte]): Seq[Int] =
    bytes.grouped(2).map(p => (p(0) & 0xff) | (p(1) & 0xff) << 8).toSeq

  test("dataset_fingerprint_state: the fingerprint, the count, the 128-bit sum and the schema of the spec") {
    val schemaArgs = names.zip(types).flatMap { case (n, t) => Seq(s"'$n'", s"'$t'") }.mkString(", ")
    val schema = one(s"SELECT record_hash($schemaArgs)").getAs[Array[Byte]](0)
    Seq(data, data.limit(0)).foreach { df =>
      val s = state("dataset_fingerprint_state(*)", df)
      assert(s.schema.fieldNames.toSeq == Seq("fingerprint", "algorithm", "secret", "count", "sum", "lanes", "schema"))
      assert(s.getString(0) == fingerprint(df) && s.getString(0) == fromSpec(df, names, types))
      assert(s.getString(1) == "murmur3" && s.isNullAt(2) && s.isNullAt(5))
      assert(s.getLong(3) == df.count())
      assert(hex(s.getAs[Array[Byte]](4)) == hex(sumFromSpec(df)))
      assert(hex(s.getAs[Array[Byte]](6)) == hex(schema))
    }
    assert(state("dataset_fingerprint_state_with('algorithm=murmur3', *)", data) ==
      state("dataset_fingerprint_state(*)", data))
  }

  test("dataset_fingerprint_state_with lthash16: the lanes of the spec, the secret's name and never its key") {
    val small = data.where("id < 300")
    Seq("algorithm=sha256" -> None, "algorithm=hmac-sha256; secret=suite" -> Some("suite")).foreach {
      case (rowOptions, secret) =>
        val options = "algorithm=lthash16" + secret.map(n => s"; secret=$n").getOrElse("")
        val s = state(s"dataset_fingerprint_state_with('$options', *)", small)
        val rows = small.selectExpr(s"record_hash_with('$rowOptions', *)").collect().map(_.getAs[Array[Byte]](0))
        assert(s.getString(0) == fingerprintWith(options, small))
        assert(s.getString(1) == "lthash16" && Option(s.getString(2)) == secret && s.isNullAt(4))
        assert(s.getLong(3) == 300L)
        assert(lanesOf(s.getAs[Array[Byte]](5)) == lanesFromSpec(rows).toSeq)
        val schemaArgs = names.zip(types).flatMap { case (n, t) => Seq(s"'$n'", s"'$t'") }.mkString(", ")
        assert(hex(s.getAs[Array[Byte]](6)) ==
          hex(one(s"SELECT record_hash_with('algorithm=sha256', $schemaArgs)").getAs[Array[Byte]](0)))
        val key = hex(SparkSuite.Secret.getBytes("UTF-8"))
        assert(!s.toSeq.exists {
          case b: Array[Byte] => hex(b).contains(key)
          case v => String.valueOf(v).contains(SparkSuite.Secret)
        })
    }
  }

  test("states add and subtract as multisets: the state of a union is the sum, of a part the difference") {
    val (a, b) = (data.where("id % 3 = 0"), data.where("id % 3 <> 0"))
    val both = a.union(b).union(b.where("id < 50")) // duplicates count
    val (sa, sb, sBoth) = (state("dataset_fingerprint_state(*)", a), state("dataset_fingerprint_state(*)", b),
      state("dataset_fingerprint_state(*)", both))
    val sDup = state("dataset_fingerprint_state(*)", b.where("id < 50"))
    val mod = BigInt(1) << 128
    def n(bytes: Array[Byte]) = BigInt(1, bytes.reverse)
    assert(sBoth.getLong(3) == sa.getLong(3) + sb.getLong(3) + sDup.getLong(3))
    assert((n(sa.getAs(4)) + n(sb.getAs(4)) + n(sDup.getAs(4))) % mod == n(sBoth.getAs(4)))
    assert((n(sBoth.getAs(4)) - n(sb.getAs(4)) - n(sDup.getAs(4))).mod(mod) == n(sa.getAs(4)))
    val lt = "dataset_fingerprint_state_with('algorithm=lthash16', *)"
    val (la, lb, lBoth) = (state(lt, a.limit(200)), state(lt, b.limit(300)), state(lt, a.limit(200).union(b.limit(300))))
    val summed = lanesOf(la.getAs(5)).zip(lanesOf(lb.getAs(5))).map { case (x, y) => (x + y) & 0xffff }
    assert(summed == lanesOf(lBoth.getAs(5)))
    val left = lanesOf(lBoth.getAs(5)).zip(lanesOf(lb.getAs(5))).map { case (x, y) => (x - y) & 0xffff }
    assert(left == lanesOf(la.getAs(5)))
  }

  test("the states per group, in every execution mode and with sort-based aggregation, equal each group alone") {
    data.createOrReplaceTempView("fps_data")
    def grouped(function: String): Map[Long, org.apache.spark.sql.Row] = spark.sql(
      s"SELECT id % 20 AS k, $function AS s FROM fps_data GROUP BY id % 20")
      .collect().map(r => r.getLong(0) -> r.getStruct(1)).toMap
    Seq("dataset_fingerprint_state(id, s)", "dataset_fingerprint_state_with('algorithm=lthash16', id, s)").foreach {
      function =>
        val expected = grouped(function)
        assert(expected.size == 20)
        SparkSuite.Modes.foreach { m =>
          inMode(m) { assert(grouped(function) == expected, m.name) }
        }
        withConf("spark.sql.objectHashAggregate.sortBased.fallbackThreshold" -> "2") {
          assert(grouped(function) == expected)
        }
        Seq(0L, 13L).foreach { k =>
          assert(expected(k) == one(s"SELECT $function FROM fps_data WHERE id % 20 = $k").getStruct(0))
        }
    }
    val filtered = one("SELECT dataset_fingerprint_state(id, s) FILTER (WHERE id < 10) FROM fps_data").getStruct(0)
    assert(filtered.getLong(3) == 10L && filtered.getString(0) == fingerprint(data.where("id < 10").select("id", "s")))
  }

  test("dataset_fingerprint_state_with refuses what dataset_fingerprint_with refuses") {
    def failure(sql: String): String =
      intercept[org.apache.spark.sql.AnalysisException](spark.sql(sql).collect()).getMessage
    data.limit(3).createOrReplaceTempView("fps_opts")
    Seq(
      "'algorithm=sha256'" -> "generalized-birthday attacks",
      "'secret=suite'" -> "only lthash16 takes a secret",
      "'algorithm=lthash16; secret=nope'" -> "the secret 'nope' is not set",
      "s" -> "a constant options string").foreach { case (options, message) =>
      val e = failure(s"SELECT dataset_fingerprint_state_with($options, id) FROM fps_opts")
      assert(e.contains("dataset_fingerprint_state_with") && e.contains(message), e)
    }
    assert(failure("SELECT dataset_fingerprint_state() FROM fps_opts")
      .contains("`dataset_fingerprint_state` needs at least one argument"))
  }
}
