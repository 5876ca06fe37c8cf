// hashexpr: deterministic record hashing for Apache Spark.
//
// Spark is `provided`: it is compiled against (and tested with) the jars of the pip `pyspark` wheel whose
// version is pinned in `spark-version`, so the jar holds only hashexpr's classes and the build needs
// nothing from outside PyPI and Maven Central.

import java.nio.file.Files
import scala.sys.process._

val sparkVersion = IO.read(file("spark-version")).trim

// The directory holding Spark's jars: SPARK_JARS, else the pyspark of the project's virtualenv.
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
    scalaVersion := "2.13.18",
    // Code that differs between Spark lines lives in its own source directory.
    Compile / unmanagedSourceDirectories += baseDirectory.value / "src" / "main" / "spark-4.x",
    javacOptions ++= Seq("--release", "17"),
    scalacOptions ++= Seq("-release", "17", "-deprecation", "-feature", "-unchecked", "-Xlint:-unused,_"),
    Compile / unmanagedJars ++= (sparkJars ** "*.jar").classpath
      // sbt supplies the Scala compiler and library of `scalaVersion` itself.
      .filterNot(j => Seq("scala-library-", "scala-compiler-", "scala-reflect-").exists(j.data.getName.startsWith)),
    libraryDependencies += "org.scalatest" %% "scalatest" % "3.2.19" % Test,
    checkSparkVersion := {
      val catalyst = sparkJars / s"spark-catalyst_2.13-$sparkVersion.jar"
      if (!catalyst.exists) sys.error(s"expected Spark $sparkVersion in $sparkJars, found no ${catalyst.getName}")
    },
    Compile / compile := (Compile / compile).dependsOn(checkSparkVersion).value,
    // record_key_with's frozen case table lives in the Python package; the jar carries the same file.
    Compile / resourceGenerators += Def.task {
      val table = (LocalRootProject / baseDirectory).value / "python" / "hashexpr" / "unicode_case_14_0_0.txt"
      val resource = (Compile / resourceManaged).value / "io" / "hashexpr" / table.getName
      IO.copyFile(table, resource)
      Seq(resource)
    }.taskValue,
    Compile / packageBin / artifactPath := (LocalRootProject / baseDirectory).value / "target" / "hashexpr.jar",
    Compile / packageBin / packageOptions += Package.ManifestAttributes(
      "Implementation-Title" -> "hashexpr",
      "Implementation-Version" -> version.value,
      "Spark-Version" -> sparkVersion),
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
