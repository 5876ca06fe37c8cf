package io.hashexpr

import org.apache.spark.sql.SparkSessionExtensions
import org.apache.spark.sql.catalyst.FunctionIdentifier
import org.apache.spark.sql.catalyst.analysis.{FunctionRegistry, FunctionRegistryBase}
import org.apache.spark.sql.catalyst.expressions.{Expression, ExpressionInfo}

/**
 * hashexpr's SQL functions and rules, injected into a session by [[HashExprExtensions]] once it has checked that
 * this jar was built for the running Spark and Scala.
 */
object HashExprFunctions {
  type Description = (FunctionIdentifier, ExpressionInfo, Seq[Expression] => Expression)

  /** Every SQL function hashexpr adds, with the `DESCRIBE FUNCTION` text of its `@ExpressionDescription`. */
  val functions: Seq[Description] = Seq(
    describe[RecordHash](RecordHash.Name),
    describe[RecordHashByName](RecordHashByName.Name),
    describe[RecordHashWith](RecordHashWith.Name),
    describe[RecordHashByNameWith](RecordHashByNameWith.Name),
    describe[RecordKey](RecordKey.Name),
    describe[RecordKeyWith](RecordKeyWith.Name),
    describe[NormalizeKey](NormalizeKey.Name),
    describe[DatasetFingerprint](DatasetFingerprint.Name),
    describe[DatasetFingerprintWith](DatasetFingerprintWith.Name),
    describe[DatasetFingerprintState](DatasetFingerprintState.Name),
    describe[DatasetFingerprintStateWith](DatasetFingerprintStateWith.Name),
    describe[DiffBuckets](DiffBuckets.Name),
    describe[DiffKeyFilter](DiffKeyFilter.Name),
    describe[DiffKeyFilterContains](DiffKeyFilterContains.Name),
    describe[DiffRows](DiffRows.Name),
    describe[RowPosition](RowPosition.Name))

  def register(extensions: SparkSessionExtensions): Unit = {
    functions.foreach(extensions.injectFunction)
    if (extensionFunctionsAreTemporary) registerAsBuiltin()
    extensions.injectPostHocResolutionRule(_ => ArgumentNamesRule)
  }

  /**
   * Before Spark 4.2, a function from session extensions counts as temporary, and a persistent view may not use
   * one. Registered as built-in as well (which is what 4.2 makes of them), `CREATE VIEW ... record_hash(*)` works
   * on every line.
   */
  private def extensionFunctionsAreTemporary: Boolean = {
    // The first two numbers only: vendors append their own parts ("3.5.1-amzn-0").
    val version = org.apache.spark.SPARK_VERSION.split("[.-]").take(2).map(_.toInt)
    version(0) < 4 || (version(0) == 4 && version(1) < 2)
  }

  private def registerAsBuiltin(): Unit = FunctionRegistry.builtin.synchronized {
    functions.foreach { case (id, info, builder) =>
      if (!FunctionRegistry.builtin.functionExists(id)) FunctionRegistry.builtin.registerFunction(id, info, builder)
    }
  }

  private def describe[T <: Expression : scala.reflect.ClassTag](name: String): Description = {
    val (info, builder) = FunctionRegistryBase.build[T](name, since = None)
    (FunctionIdentifier(name), info, builder)
  }
}
