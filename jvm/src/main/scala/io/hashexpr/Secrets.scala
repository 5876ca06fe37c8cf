package io.hashexpr

import java.nio.charset.StandardCharsets

import org.apache.spark.SparkEnv
import org.apache.spark.sql.internal.SQLConf

/**
 * The keys of `algorithm=hmac-sha256`, read from the application's configuration: Spark confs named
 * `spark.hashexpr.secret.<name>`, given before the session starts (spark-defaults.conf, `--conf`,
 * `SparkSession.builder.config`, a Connect server's configuration). SQL text and plans carry only the name; the key
 * is read where the hash runs. Spark redacts such confs from its UI, event log and `SET` output (its default
 * `spark.redaction.regex` matches "secret"), except a value set on a session at run time: Spark copies session
 * confs into every job's properties, and the event log redacts there only what the application's configuration
 * holds. So a secret set with `spark.conf.set` or `SET` is refused, never used.
 */
object Secrets {
  val Prefix = "spark.hashexpr.secret."

  private val ValidName = "[A-Za-z0-9_.-]+".r

  def confName(name: String): String = Prefix + name

  /** What is wrong with a secret's name, if anything. */
  def nameProblem(name: String): Option[String] = name match {
    case ValidName() => None
    case _ => Some(s"option 'secret=$name' whose name is not made of letters, digits, '_', '.' and '-'")
  }

  /** The value in the application's configuration (the driver's, which executors receive). */
  private def configured(name: String): Option[String] =
    Option(SparkEnv.get).flatMap(_.conf.getOption(confName(name)))

  /** The value the session (or, in a task, the job's properties) holds. */
  private def inSession(name: String): Option[String] = Option(SQLConf.get.getConfString(confName(name), null))

  /** Why the secret cannot be used, if it cannot; never the secret itself. */
  def problem(name: String): Option[String] = (configured(name), inSession(name)) match {
    case (None, None) => Some(s"the secret '$name' is not set")
    case (None, Some(_)) => Some(s"the secret '$name' is set on the session (spark.conf.set or SET), which " +
      "writes it unredacted into the event log with every job's properties")
    case (Some(a), Some(b)) if a != b => Some(s"the secret '$name' is changed on the session (spark.conf.set " +
      "or SET), which writes it unredacted into the event log with every job's properties")
    case (Some(""), _) => Some(s"the secret '$name' is empty")
    case _ => None
  }

  /** How to give a secret, for error messages. */
  def howToSet(name: String): String =
    s"set ${confName(name)} in the application's configuration before the session starts (--conf, " +
      "spark-defaults.conf or SparkSession.builder.config; on Spark Connect, the server's), and unset it " +
      "on the session"

  /** The key: the conf's value as UTF-8 bytes. Fails, without an unkeyed hash, when it cannot be used. */
  def key(name: String): Array[Byte] = {
    problem(name).foreach { p =>
      throw new IllegalArgumentException(s"algorithm=hmac-sha256: $p; ${howToSet(name)}")
    }
    configured(name).get.getBytes(StandardCharsets.UTF_8)
  }
}
