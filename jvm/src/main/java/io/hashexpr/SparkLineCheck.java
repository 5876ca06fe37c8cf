package io.hashexpr;

/**
 * Whether this jar was built for the Spark line and Scala version it runs in, read through reflection so that
 * the check itself links against every line.
 */
final class SparkLineCheck {
  private SparkLineCheck() {}

  /** {@code X.Y} of a version string such as {@code 4.3.0} or {@code 2.13.16}. */
  static String line(String version) {
    String[] parts = version.split("[.-]");
    return parts.length < 2 ? version : parts[0] + "." + parts[1];
  }

  static String runningSpark() {
    return (String) moduleCall("org.apache.spark.package$", "SPARK_VERSION");
  }

  static String runningScala() {
    return (String) moduleCall("scala.util.Properties$", "versionNumberString");
  }

  /** The problem, in one sentence with its fix, or {@code null} when this jar fits the running Spark. */
  static String mismatch() {
    String spark = runningSpark();
    String scala = runningScala();
    if (line(spark).equals(BuildLine.SPARK_LINE) && line(scala).equals(BuildLine.SCALA_BINARY)) {
      return null;
    }
    return "this hashexpr jar (" + BuildLine.JAR_NAME + ") is built for Spark " + BuildLine.SPARK_LINE
        + " with Scala " + BuildLine.SCALA_BINARY + ", but this session runs Spark " + spark + " with Scala "
        + scala + ". Use hashexpr-spark" + line(spark) + "_" + line(scala) + ".jar instead (the Maven artifact "
        + "io.hashexpr:hashexpr-spark" + line(spark) + "_" + line(scala) + "; `hashexpr jar --spark " + line(spark)
        + " --scala " + line(scala) + "` prints its path; hx.configure picks it by itself)";
  }

  /**
   * {@link #mismatch()} when the running Scala is another binary version than this jar's, whose Scala classes then
   * cannot even be called (2.12 and 2.13 differ in their collections); otherwise {@code null}.
   */
  static String wrongScala() {
    return line(runningScala()).equals(BuildLine.SCALA_BINARY) ? null : mismatch();
  }

  /**
   * Fails with {@link #wrongScala()}, if there is one. The public Scala objects call it first thing, so that a jar
   * for the other Scala version fails with this sentence instead of a {@code NoSuchMethodError}; for another Spark
   * line of the same Scala, the SQL functions fail at their first call instead.
   */
  static void requireScala() {
    String problem = wrongScala();
    if (problem != null) {
      throw new IllegalStateException(problem);
    }
  }

  /**
   * The {@code AnalysisException} a function of a jar for another line fails with: Spark's
   * {@code CANNOT_LOAD_FUNCTION_CLASS} (an error class every line has), its function name followed by
   * {@code reason}; an {@code IllegalStateException} with the same text should this Spark lack that constructor.
   */
  static Exception cannotLoad(String className, String function, String reason) {
    String functionName = "`" + function + "`: " + reason;
    try {
      Class<?> map = Class.forName("scala.collection.immutable.Map");
      Object parameters = moduleCall("scala.collection.immutable.Map$", "empty");
      parameters = updated(parameters, "className", className);
      parameters = updated(parameters, "functionName", functionName);
      return (Exception) Class.forName("org.apache.spark.sql.AnalysisException")
          .getConstructor(String.class, map)
          .newInstance("CANNOT_LOAD_FUNCTION_CLASS", parameters);
    } catch (ReflectiveOperationException | ClassCastException e) {
      return new IllegalStateException("Cannot load class " + className + " when registering the function "
          + functionName);
    }
  }

  private static Object updated(Object map, String key, String value) throws ReflectiveOperationException {
    return map.getClass().getMethod("updated", Object.class, Object.class).invoke(map, key, value);
  }

  /** Throws {@code e} as it is: Scala's {@code AnalysisException} is a checked exception to Java. */
  @SuppressWarnings("unchecked")
  static <T extends Throwable> RuntimeException rethrow(Throwable e) throws T {
    throw (T) e;
  }

  private static Object moduleCall(String module, String method) {
    try {
      Class<?> type = Class.forName(module);
      return type.getMethod(method).invoke(type.getField("MODULE$").get(null));
    } catch (ReflectiveOperationException e) {
      throw new IllegalStateException("hashexpr: cannot read " + module + method + "()", e);
    }
  }
}
