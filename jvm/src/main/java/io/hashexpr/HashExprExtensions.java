package io.hashexpr;

import java.lang.reflect.InvocationTargetException;

import org.apache.spark.sql.SparkSessionExtensions;
import org.apache.spark.sql.SparkSessionExtensionsProvider;
import org.apache.spark.sql.catalyst.FunctionIdentifier;
import org.apache.spark.sql.catalyst.expressions.ExpressionInfo;
import org.slf4j.LoggerFactory;

import scala.Tuple3;
import scala.runtime.AbstractFunction1;
import scala.runtime.BoxedUnit;

/**
 * Registers hashexpr's SQL functions in every new Spark session.
 *
 * <p>Picked up with nothing but the jar on the classpath ({@code --jars hashexpr.jar}) through
 * {@code META-INF/services/org.apache.spark.sql.SparkSessionExtensionsProvider}, or named explicitly with
 * {@code spark.sql.extensions=io.hashexpr.HashExprExtensions}.
 *
 * <p>Written in Java, and touching hashexpr's Scala classes only after the check, so that it loads on any Spark
 * line and Scala version: a jar built for another line registers each function as one that fails with a message
 * naming the running versions and the jar to use, instead of a {@code NoSuchMethodError} inside a job.
 */
public final class HashExprExtensions implements SparkSessionExtensionsProvider {

  /** The SQL functions the jar adds, and their expressions' classes. */
  static final String[][] FUNCTIONS = {
    {"record_hash", "io.hashexpr.RecordHash"},
    {"record_hash_by_name", "io.hashexpr.RecordHashByName"},
    {"record_hash_with", "io.hashexpr.RecordHashWith"},
    {"record_hash_by_name_with", "io.hashexpr.RecordHashByNameWith"},
    {"record_key", "io.hashexpr.RecordKey"},
    {"record_key_with", "io.hashexpr.RecordKeyWith"},
    {"normalize_key", "io.hashexpr.NormalizeKey"},
    {"dataset_fingerprint", "io.hashexpr.DatasetFingerprint"},
    {"dataset_fingerprint_with", "io.hashexpr.DatasetFingerprintWith"},
    {"dataset_fingerprint_state", "io.hashexpr.DatasetFingerprintState"},
    {"dataset_fingerprint_state_with", "io.hashexpr.DatasetFingerprintStateWith"},
    {"diff_buckets", "io.hashexpr.DiffBuckets"},
    {"diff_key_filter", "io.hashexpr.DiffKeyFilter"},
    {"diff_key_filter_contains", "io.hashexpr.DiffKeyFilterContains"},
    {"diff_rows", "io.hashexpr.DiffRows"},
    {"row_position", "io.hashexpr.RowPosition"}
  };

  @Override
  @SuppressWarnings("unchecked")
  public BoxedUnit apply(SparkSessionExtensions extensions) {
    String mismatch = SparkLineCheck.mismatch();
    if (mismatch == null) {
      try {
        Class.forName("io.hashexpr.HashExprFunctions")
            .getMethod("register", SparkSessionExtensions.class)
            .invoke(null, extensions);
      } catch (InvocationTargetException e) {
        throw new IllegalStateException("hashexpr could not register its functions", e.getCause());
      } catch (ReflectiveOperationException e) {
        throw new IllegalStateException("hashexpr could not register its functions", e);
      }
    } else {
      LoggerFactory.getLogger(HashExprExtensions.class).error(mismatch + ".");
      for (String[] function : FUNCTIONS) {
        extensions.injectFunction(stub(function[0], function[1], mismatch));
      }
    }
    return BoxedUnit.UNIT;
  }

  /** A function named {@code name} whose every call fails, saying {@code mismatch}. */
  @SuppressWarnings({"unchecked", "rawtypes"})
  private static Tuple3 stub(String name, String className, String mismatch) {
    return new Tuple3(
        new FunctionIdentifier(name),
        new ExpressionInfo(HashExprExtensions.class.getName(), name),
        new AbstractFunction1<Object, Object>() {
          @Override
          public Object apply(Object arguments) {
            throw SparkLineCheck.<RuntimeException>rethrow(SparkLineCheck.cannotLoad(className, name, mismatch));
          }
        });
  }
}
