/** The Spark lines hashexpr is built for besides spark-version's, one sbt project each (build.sbt). Each is
  * compiled against its lowest patch release from Maven Central, for the oldest Java that line runs on.
  */
object SparkLines {
  final case class Line(spark: String, scala: String, javaRelease: String, shims: String)

  val all: Map[(String, String), Line] = Map(
    ("3.5", "2.12") -> Line("3.5.0", "2.12.18", "8", "spark-3.5"),
    ("3.5", "2.13") -> Line("3.5.0", "2.13.8", "8", "spark-3.5"),
    ("4.0", "2.13") -> Line("4.0.0", "2.13.16", "17", "spark-4.x"),
    ("4.1", "2.13") -> Line("4.1.0", "2.13.17", "17", "spark-4.x"),
    ("4.2", "2.13") -> Line("4.2.0", "2.13.18", "17", "spark-4.x"))
}
