package io.hashexpr;

/**
 * What {@code record_key_with} gives for a key whose parts are all NULL: the option {@code null_key=} of its
 * options text, set with {@link RecordKeyOptions#nullKey(NullKeyPolicy)}.
 */
public enum NullKeyPolicy {
  /** Hash the all-NULL key like any other key (the default: no row loses its key). */
  HASH("hash"),
  /** Give NULL instead of a hash. */
  NULL("null"),
  /** Fail the query at the first all-NULL key. */
  ERROR("error");

  private final String option;

  NullKeyPolicy(String option) {
    this.option = option;
  }

  /** The value of {@code null_key=} in the options text: {@code hash}, {@code null} or {@code error}. */
  public String option() {
    return option;
  }
}
