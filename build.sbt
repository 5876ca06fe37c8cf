// hashexpr: deterministic record hashing for Apache Spark.
//
// Spark is `provided`: it is compiled against (and tested with) the jars of the pip `pyspark` wheel whose
// version is pinned in `spark-version`, so the jar holds only hashexpr's classes and the build needs
// nothing from outside PyPI and Maven Central.

import java.nio.file.Files
import scala.sys.process._

val sparkVersion = IO.read(file("spark-version")).trim

// A Spark line other than spark-version's, chosen with -Dhashexpr.line (project/SparkLines.scala).
val chosenLine: Option[SparkLines.Line] = SparkLines.chosen

lazy val sparkJars: File = sys.env.get("SPARK_JARS").map(file).getOrElse {
  val python = file(sys.env.getOrElse("HASHEXPR_PYTHON", ".venv/bin/python")).getAbsoluteFile
  if (!python.exists)
    sys.error(s"Spark $sparkVersion jars not found: run `make venv` (or set SPARK_JARS to a Spark jars directory)")
  val home = Seq(python.getPath, "-c", "import os, pyspark; print(os.path.dirname(pyspark.__file__))").!!.trim
  file(home) / "jars"
}

lazy val checkSparkVersion = taskKey[Unit]("Fails unless the Spark jars are the pinned version")

lazy val hashexpr = (project in file("jvm"))
  .settings(
    name := "hashexpr",
    organization := "io.hashexpr",
    version := IO.read(file("VERSION")).trim,
    scalaVersion := chosenLine.fold("2.13.18")(_.scala),
    // Code that differs between Spark lines lives in its own source directory.
    Compile / unmanagedSourceDirectories += baseDirectory.value / "src" / "main" / chosenLine.fold("spark-4.x")(_.shims),
    javacOptions ++= Seq("--release", chosenLine.fold("17")(_.javaRelease)),
    scalacOptions ++= Seq("-release", chosenLine.fold("17")(_.javaRelease), "-deprecation", "-feature", "-unchecked", "-Xlint:-unused,_"),
    target := chosenLine.fold(baseDirectory.value / "target")(l => baseDirectory.value / "target" / s"spark-${l.spark}_${l.scala}"),
    libraryDependencies ++= chosenLine.toSeq.flatMap(l => Seq(
      "org.apache.spark" %% "spark-sql" % l.spark % Provided,
      "org.apache.spark" %% "spark-catalyst" % l.spark % Provided)),
    Compile / unmanagedJars ++= (if (chosenLine.isDefined) Nil else (sparkJars ** "*.jar").classpath
      // sbt supplies the Scala compiler and library of `scalaVersion` itself.
      .filterNot(j => Seq("scala-library-", "scala-compiler-", "scala-reflect-").exists(j.data.getName.startsWith))),
    libraryDependencies += "org.scalatest" %% "scalatest" % "3.2.19" % Test,
    checkSparkVersion := {
      val catalyst = sparkJars / s"spark-catalyst_2.13-$sparkVersion.jar"
      if (!catalyst.exists) sys.error(s"expected Spark $sparkVersion in $sparkJars, found no ${catalyst.getName}")
    },
    Compile / compile := (if (chosenLine.isDefined) (Compile / compile).value
      else (Compile / compile).dependsOn(checkSparkVersion).value),
    // record_key_with's frozen case table lives in the Python package; the jar carries the same file.
    Compile / resourceGenerators += Def.task {
      val table = (LocalRootProject / baseDirectory).value / "python" / "hashexpr" / "unicode_case_14_0_0.txt"
      val resource = (Compile / resourceManaged).value / "io" / "hashexpr" / table.getName
      IO.copyFile(table, resource)
      Seq(resource)
    }.taskValue,
    // spark-version's jar is target/hashexpr.jar; another line's is named for its Spark line and Scala version.
    Compile / packageBin / artifactPath := (LocalRootProject / baseDirectory).value / "target" / chosenLine.fold(
      "hashexpr.jar")(l => s"jars/hashexpr-spark${l.spark.split('.').take(2).mkString(".")}_${l.scala.split('.').take(2).mkString(".")}.jar"),
    Compile / packageBin / packageOptions += Package.ManifestAttributes(
      "Implementation-Title" -> "hashexpr",
      "Implementation-Version" -> version.value,
      "Spark-Version" -> chosenLine.fold(sparkVersion)(_.spark),
      "Scala-Version" -> scalaVersion.value),
    Test / fork := true,
    Test / javaOptions ++= Seq(
      "-Xmx4g", "-Xss4m", "-XX:+IgnoreUnrecognizedVMOptions",
      "--add-opens=java.base/java.lang=ALL-UNNAMED",
      "--add-opens=java.base/java.lang.invoke=ALL-UNNAMED",
      "--add-opens=java.base/java.lang.reflect=ALL-UNNAMED",
      "--add-opens=java.base/java.io=ALL-UNNAMED",
      "--add-opens=java.base/java.net=ALL-UNNAMED",
      "--add-opens=java.base/java.nio=ALL-UNNAMED",
      "--add-opens=java.base/java.util=ALL-UNNAMED",
      "--add-opens=java.base/java.util.concurrent=ALL-UNNAMED",
      "--add-opens=java.base/java.util.concurrent.atomic=ALL-UNNAMED",
      "--add-opens=java.base/jdk.internal.ref=ALL-UNNAMED",
      "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED",
      "--add-opens=java.base/sun.nio.cs=ALL-UNNAMED",
      "--add-opens=java.base/sun.security.action=ALL-UNNAMED",
      "--add-opens=java.base/sun.util.calendar=ALL-UNNAMED",
      "-Djdk.reflect.useDirectMethodHandle=false",
      "-Dio.netty.tryReflectionSetAccessible=true",
      s"-Dhashexpr.root=${(LocalRootProject / baseDirectory).value}"),
    Test / testOptions += Tests.Argument(TestFrameworks.ScalaTest, "-oD"),
    Test / envVars += "SPARK_LOCAL_IP" -> "127.0.0.1",
    Test / parallelExecution := false
  )
