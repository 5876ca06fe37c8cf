package io.hashexpr

import org.apache.spark.sql.{SparkSessionExtensions, SparkSessionExtensionsProvider}
import org.apache.spark.sql.catalyst.FunctionIdentifier
import org.apache.spark.sql.catalyst.analysis.FunctionRegistryBase
import org.apache.spark.sql.catalyst.expressions.{Expression, ExpressionInfo}

/**
 * Registers hashexpr's SQL functions in every new Spark session.
 *
 * Picked up with nothing but the jar on the classpath (`--jars hashexpr.jar`) through
 * `META-INF/services/org.apache.spark.sql.SparkSessionExtensionsProvider`, or named explicitly with
 * `spark.sql.extensions=io.hashexpr.HashExprExtensions`.
 */
class HashExprExtensions extends SparkSessionExtensionsProvider {
  override def apply(extensions: SparkSessionExtensions): Unit = {
    HashExprExtensions.functions.foreach(extensions.injectFunction)
    extensions.injectPostHocResolutionRule(_ => ArgumentNamesRule)
  }
}

object HashExprExtensions {
  type Description = (FunctionIdentifier, ExpressionInfo, Seq[Expression] => Expression)

  /** Every SQL function hashexpr adds, with the `DESCRIBE FUNCTION` text of its `@ExpressionDescription`. */
  val functions: Seq[Description] = Seq(
    describe[RecordHash](RecordHash.Name),
    describe[RecordHashByName](RecordHashByName.Name),
    describe[RecordKey](RecordKey.Name),
    describe[RecordKeyWith](RecordKeyWith.Name),
    describe[DatasetFingerprint](DatasetFingerprint.Name),
    describe[DiffBuckets](DiffBuckets.Name),
    describe[RowPosition](RowPosition.Name))

  private def describe[T <: Expression : scala.reflect.ClassTag](name: String): Description = {
    val (info, builder) = FunctionRegistryBase.build[T](name, since = None)
    (FunctionIdentifier(name), info, builder)
  }
}
