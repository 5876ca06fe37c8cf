package io.hashexpr

import java.nio.charset.StandardCharsets
import java.security.MessageDigest

import javax.crypto.Mac
import javax.crypto.spec.SecretKeySpec

import scala.util.Random

import org.apache.spark.sql.AnalysisException
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.Literal
import org.apache.spark.sql.catalyst.util.ArrayBasedMapData
import org.apache.spark.sql.types.{IntegerType, MapType}

/**
 * algorithm=sha256 and algorithm=hmac-sha256 (docs/FORMAT.md, section 10): expectations are the JDK's SHA-256 and
 * HMAC over hand-built byte streams, not the encoder's output.
 */
class Sha256Suite extends SparkSuite {

  private val Secret = SparkSuite.Secret

  private def sha256(bytes: Array[Byte]): String = hex(MessageDigest.getInstance("SHA-256").digest(bytes))

  private def hmac(key: String, bytes: Array[Byte]): String = {
    val mac = Mac.getInstance("HmacSHA256")
    mac.init(new SecretKeySpec(key.getBytes(StandardCharsets.UTF_8), "HmacSHA256"))
    hex(mac.doFinal(bytes))
  }

  private def bytes(hexText: String): Array[Byte] =
    hexText.replace(" ", "").grouped(2).map(Integer.parseInt(_, 16).toByte).toArray

  private def unhex(h: String): Array[Byte] = bytes(h)

  private def hashOf(sql: String): String = hex(one(s"SELECT $sql").getAs[Array[Byte]](0))

  private def integral(n: Long): Array[Byte] =
    Array(0x02.toByte) ++ java.nio.ByteBuffer.allocate(8).order(java.nio.ByteOrder.LITTLE_ENDIAN).putLong(n).array()

  /** A map's bytes under section 10: tag, count, then the entries' SHA-256 digests in ascending order. */
  private def sortedMap(entries: Seq[Array[Byte]]): Array[Byte] = {
    val digests = entries.map(e => unhex(sha256(e))).sortWith(CanonicalEncoder.compareUnsigned(_, _) < 0)
    Array(0x11.toByte) ++ u32(entries.length) ++ digests.flatten
  }

  test("sha256 hashes the worked example's bytes of format v1") {
    // docs/FORMAT.md section 7: record_hash(1, 'a', NULL).
    val example = bytes("01 03000000 02 0100000000000000 05 01000000 61 00")
    SparkSuite.Modes.foreach { mode =>
      inMode(mode) {
        assert(hashOf("record_hash_with('algorithm=sha256', 1, 'a', NULL)") == sha256(example), mode.name)
      }
    }
    assert(hashOf("record_hash_with('algorithm=murmur3', 1, 'a', NULL)") == hashOf("record_hash(1, 'a', NULL)"))
    assert(one("SELECT length(record_hash_with('algorithm=sha256', 1))").getInt(0) == 32)
  }

  test("sha256 and hmac-sha256 of a business key hash its key record") {
    val record = Array(0x82.toByte) ++ stringValue("hub") ++ u32(2) ++ stringValue("C-042") ++ integral(7)
    SparkSuite.Modes.foreach { mode =>
      inMode(mode) {
        assert(hashOf("record_key_with('salt=hub; algorithm=sha256', 'C-042', 7)") == sha256(record))
        assert(hashOf("record_key_with('algorithm=hmac-sha256; secret=suite; salt=hub', 'C-042', 7)") ==
          hmac(Secret, record), mode.name)
      }
    }
  }

  test("sha256 maps: entry digests sorted, whatever the entry order, nested maps too") {
    val a = stringValue("a") ++ integral(1)
    val b = stringValue("b") ++ integral(2)
    val expected = sha256(Array(0x01.toByte) ++ u32(1) ++ sortedMap(Seq(a, b)))
    val inner1 = sortedMap(Seq(integral(1) ++ stringValue("x")))
    val inner2 = sortedMap(Seq(integral(2) ++ stringValue("y")))
    val nested = sha256(Array(0x01.toByte) ++ u32(1) ++
      sortedMap(Seq(stringValue("k") ++ inner1, stringValue("b") ++ inner2)))
    SparkSuite.Modes.foreach { mode =>
      inMode(mode) {
        assert(hashOf("record_hash_with('algorithm=sha256', map('a', 1, 'b', 2))") == expected, mode.name)
        assert(hashOf("record_hash_with('algorithm=sha256', map('b', 2, 'a', 1))") == expected, mode.name)
        assert(hashOf("record_hash_with('algorithm=sha256', map('k', map(1, 'x'), 'b', map(2, 'y')))") ==
          nested, mode.name)
        assert(hashOf("record_hash_with('algorithm=sha256', map('b', map(2, 'y'), 'k', map(1, 'x')))") ==
          nested, mode.name)
      }
    }
  }

  test("sha256 maps with repeated entries: eval and generated code agree, repeats count") {
    val mt = MapType(IntegerType, IntegerType)
    def map(kv: (Int, Int)*) = Literal(ArrayBasedMapData(kv.map(_._1).toArray, kv.map(_._2).toArray), mt)
    val options = Literal("algorithm=sha256")
    val twice = RecordHashWith(Seq(options, map(1 -> 2, 1 -> 2)))
    val once = RecordHashWith(Seq(options, map(1 -> 2)))
    val entry = integral(1) ++ integral(2)
    val expected = sha256(Array(0x01.toByte) ++ u32(1) ++ sortedMap(Seq(entry, entry)))
    assert(hex(twice.eval(InternalRow.empty).asInstanceOf[Array[Byte]]) == expected)
    assert(hex(once.eval(InternalRow.empty).asInstanceOf[Array[Byte]]) != expected)
    val projection = org.apache.spark.sql.catalyst.expressions.UnsafeProjection.create(Seq(twice))
    assert(hex(projection(InternalRow.empty).getBinary(0)) == expected)
  }

  test("random rows of every type: sha256 and hmac-sha256 agree across interpreted and generated code") {
    import CodegenParitySuite._
    val rnd = new Random(20261123)
    val rows = Seq.fill(500)(randomRow(rnd, Schema))
    val df = withConf("spark.sql.datetime.java8API.enabled" -> "true")(
      spark.createDataFrame(spark.sparkContext.parallelize(rows, 2), Schema))
    val hashes = Seq(
      "hex(record_hash_with('algorithm=sha256', *))",
      "hex(record_hash_by_name_with('algorithm=sha256', *))",
      "hex(record_hash_with('algorithm=hmac-sha256; secret=suite', *))",
      "hex(record_key_with('algorithm=sha256; salt=s', *))") ++
      df.columns.map(c => s"hex(record_hash_with('algorithm=sha256', `$c`))")
    val results = SparkSuite.Modes.map(m => inMode(m)(df.selectExpr(hashes: _*).collect().toSeq))
    results.tail.zip(SparkSuite.Modes.tail).foreach { case (other, mode) =>
      assert(results.head == other, s"interpreted != ${mode.name}")
    }
    val whole = results.head.map(_.getString(0))
    assert(whole.distinct.size == whole.size && whole.forall(_.length == 64))
  }

  test("record_hash_by_name_with hashes by name: column order and NULL columns do not count") {
    val a = hashOf("record_hash_by_name_with('algorithm=sha256', *) FROM VALUES (1, 'x') AS t(a, b)")
    assert(a == hashOf("record_hash_by_name_with('algorithm=sha256', *) FROM VALUES ('x', 1) AS t(b, a)"))
    assert(a == hashOf(
      "record_hash_by_name_with('algorithm=sha256', *) FROM VALUES ('x', 1, CAST(NULL AS INT)) AS t(b, a, c)"))
    // Section 6's by-name record: 0x81, (name, value) pairs sorted by name, a NULL tag to close.
    val record = Array(0x81.toByte) ++ stringValue("a") ++ integral(1) ++ stringValue("b") ++ stringValue("x") ++
      Array(0x00.toByte)
    assert(a == sha256(record))
    // Names follow the schema's spelling, as in record_hash_by_name.
    spark.range(1).selectExpr("1 AS a", "'x' AS b").createOrReplaceTempView("sha256_by_name")
    assert(a == hashOf("record_hash_by_name_with('algorithm=sha256', A, B) FROM sha256_by_name"))
  }

  test("the secret never shows in plans or generated code; missing, empty or session secrets fail analysis") {
    val df = spark.range(3).selectExpr("record_key_with('algorithm=hmac-sha256; secret=suite', id) AS k")
    val plans = df.queryExecution.toString + df.queryExecution.debug.codegenToSeq().map(_._2).mkString
    assert(plans.contains("secret=suite") && !plans.contains(Secret))
    val set = spark.sql(s"SET ${Secrets.confName("suite")}").collect().map(_.getString(1)).mkString
    assert(!set.contains(Secret))
    def failure(secret: String): String = intercept[AnalysisException](
      spark.sql(s"SELECT record_hash_with('algorithm=hmac-sha256; secret=$secret', 1)").collect()).getMessage
    val missing = failure("absent")
    assert(missing.contains("`record_hash_with` hashes with algorithm=hmac-sha256, but the secret 'absent' is " +
      "not set") && missing.contains("set spark.hashexpr.secret.absent in the application's configuration"))
    assert(failure("blank").contains("the secret 'blank' is empty"))
    // A session conf travels unredacted with every job's properties into the event log: refused.
    withConf(Secrets.confName("runtime") -> "set at run time") {
      assert(failure("runtime").contains("the secret 'runtime' is set on the session"))
    }
    withConf(Secrets.confName("suite") -> "another key") {
      assert(failure("suite").contains("the secret 'suite' is changed on the session"))
    }
  }

  test("options: the algorithm items, and what each function refuses") {
    val errors = Map(
      "record_hash_with('algorithm=md5', 1)" -> "option 'algorithm=md5' with a missing or unknown value",
      "record_hash_with('salt=x', 1)" -> "option that only record_key_with takes",
      "record_hash_with('algorithm=hmac-sha256', 1)" -> "option 'algorithm=hmac-sha256' without 'secret=<name>'",
      "record_key_with('algorithm=sha256; secret=x', 1)" -> "option 'secret=x' without 'algorithm=hmac-sha256'",
      "record_key_with('algorithm=hmac-sha256; secret=a b', 1)" -> "whose name is not made of letters",
      "record_hash_with('algorithm=sha256; algorithm=sha256', 1)" -> "option 'algorithm' given twice",
      "record_hash_with('algorithm=sha256')" -> "`record_hash_with` needs at least one argument",
      "record_hash_by_name_with('algorithm=sha256', a, a) FROM VALUES (1) AS t(a)" ->
        "the name `a` appears more than once")
    errors.foreach { case (call, message) =>
      val e = intercept[AnalysisException](spark.sql(s"SELECT $call").collect())
      assert(e.getMessage.contains(message), s"$call: ${e.getMessage}")
    }
    assert(KeyOptions.parse("SECRET=pii; Algorithm=HMAC-SHA256") ==
      Right(KeyOptions(algorithm = HashAlgorithm.HmacSha256("pii"))))
  }
}
