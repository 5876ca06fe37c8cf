package io.hashexpr

import java.io.File
import java.nio.{ByteBuffer, ByteOrder}
import java.nio.charset.StandardCharsets
import java.nio.file.Files

import org.apache.spark.sql.{DataFrame, Row, SparkSession}
import org.apache.spark.sql.internal.SQLConf
import org.scalatest.funsuite.AnyFunSuite

/** A suite on the one local Spark of the test JVM; hashexpr arrives through its ServiceLoader entry alone. */
trait SparkSuite extends AnyFunSuite {
  protected lazy val spark: SparkSession = SparkSuite.session

  /** The repository root (for spec/ files). */
  protected lazy val root: File = new File(sys.props.getOrElse("hashexpr.root", ".."))

  /** Runs `f` with session confs set, restoring the previous values afterwards. */
  protected def withConf[T](pairs: (String, String)*)(f: => T): T = {
    val conf = spark.conf
    val old = pairs.map { case (k, _) => k -> conf.getOption(k) }
    pairs.foreach { case (k, v) => conf.set(k, v) }
    try f
    finally old.foreach {
      case (k, Some(v)) => conf.set(k, v)
      case (k, None) => conf.unset(k)
    }
  }

  /** Runs `f` in an execution mode, with constant folding off so that `record_hash` runs in that mode. */
  protected def inMode[T](mode: SparkSuite.Mode)(f: => T): T = withConf(
    SQLConf.CODEGEN_FACTORY_MODE.key -> mode.factoryMode,
    SQLConf.WHOLESTAGE_CODEGEN_ENABLED.key -> mode.wholeStage.toString,
    SQLConf.OPTIMIZER_EXCLUDED_RULES.key -> SparkSuite.FoldingRules)(f)

  protected def hexes(df: DataFrame): Seq[String] = df.collect().toSeq.map(r => hex(r.getAs[Array[Byte]](0)))

  protected def hex(bytes: Array[Byte]): String = bytes.map(b => f"${b & 0xff}%02x").mkString

  protected def one(sql: String): Row = spark.sql(sql).collect().head

  // Hand-built streams (docs/FORMAT.md), hashed directly: expectations independent of the encoder.

  /** The hex hash of a hand-built byte stream under the format's seed. */
  protected def streamHash(bytes: Array[Byte]): String = {
    val h = new Murmur3x64Stream(CanonicalEncoder.SEED)
    h.putBytes(bytes)
    h.finish()
    hex(h.digest())
  }

  protected def u32(n: Int): Array[Byte] = ByteBuffer.allocate(4).order(ByteOrder.LITTLE_ENDIAN).putInt(n).array()

  /** A STRING value: tag 0x05, u32 length, UTF-8 bytes. */
  protected def stringValue(s: String): Array[Byte] = {
    val b = s.getBytes(StandardCharsets.UTF_8)
    Array(0x05.toByte) ++ u32(b.length) ++ b
  }
}

object SparkSuite {
  /** The key of the secret named `suite`, given with the session's configuration. */
  val Secret = "k3y-Sha256Suite-7f1c"

  final case class Mode(name: String, factoryMode: String, wholeStage: Boolean)

  val Interpreted: Mode = Mode("interpreted", "NO_CODEGEN", wholeStage = false)
  val Codegen: Mode = Mode("codegen, whole-stage", "CODEGEN_ONLY", wholeStage = true)
  val CodegenNoWholeStage: Mode = Mode("codegen, no whole-stage", "CODEGEN_ONLY", wholeStage = false)
  /** The execution modes a suite checks: all three, or those `-Dhashexpr.test.modes` names (build.sbt). */
  val Modes: Seq[Mode] = {
    val all = Seq("interpreted" -> Interpreted, "codegen" -> Codegen, "codegen-no-whole-stage" -> CodegenNoWholeStage)
    sys.props.get("hashexpr.test.modes").fold(all.map(_._2)) { names =>
      val wanted = names.split(",").map(_.trim).toSet
      require(wanted.subsetOf(all.map(_._1).toSet), s"hashexpr.test.modes: unknown mode in $names")
      all.collect { case (name, mode) if wanted(name) => mode }
    }
  }

  val FoldingRules: String = Seq("ConstantFolding", "ConvertToLocalRelation", "FoldablePropagation")
    .map("org.apache.spark.sql.catalyst.optimizer." + _).mkString(",")

  /** The secrets of spec/sha256-vectors-v1.json and spec/lthash-vectors-v1.json, by name. */
  lazy val vectorSecrets: Map[String, String] = {
    val root = new java.io.File(sys.props.getOrElse("hashexpr.root", ".."))
    Seq("sha256-vectors-v1.json", "lthash-vectors-v1.json").flatMap { file =>
      val keys = new com.fasterxml.jackson.databind.ObjectMapper().readTree(new java.io.File(root, s"spec/$file")).get("keys")
      val names = keys.fieldNames()
      Iterator.continually(names).takeWhile(_.hasNext).map(_.next()).map(n => n -> keys.get(n).asText()).toSeq
    }.toMap
  }

  lazy val session: SparkSession = {
    val warehouse = Files.createTempDirectory("hashexpr-warehouse").toFile
    warehouse.deleteOnExit()
    val s = SparkSession.builder()
      .master("local[2]")
      .appName("hashexpr-tests")
      .config("spark.ui.enabled", "false")
      .config("spark.sql.shuffle.partitions", "4")
      // HMAC secrets come from the application's configuration, never from the session.
      .config(Secrets.confName("suite"), Secret)
      .config(Secrets.confName("blank"), "")
      // The keys the SHA-256 and lthash16 vector files name (GoldenVectorsSuite).
      .config(vectorSecrets.map { case (name, key) => Secrets.confName(name) -> key })
      .config("spark.sql.warehouse.dir", warehouse.getAbsolutePath)
      .config("spark.driver.bindAddress", "127.0.0.1")
      .config("spark.driver.host", "127.0.0.1")
      .getOrCreate()
    s.sparkContext.setLogLevel("ERROR")
    s
  }
}
