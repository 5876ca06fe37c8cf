package io.hashexpr;

import org.apache.spark.unsafe.types.UTF8String;

/** The opt-in normalisation of string key parts (docs/FORMAT.md, section 9). */
public final class KeyNormalizer {
  public static final int CASE_KEEP = 0;
  public static final int CASE_UPPER = 1;
  public static final int CASE_LOWER = 2;

  private KeyNormalizer() {}

  /**
   * Trims U+0020 from both ends, maps the case with the frozen Unicode 14.0.0 table of {@link CaseMapping} (the
   * same on every JVM), and maps the empty string to null, each only when asked for. Works on the UTF-8 bytes:
   * bytes that are not UTF-8 are kept as they are.
   */
  public static UTF8String normalize(UTF8String s, boolean trim, int caseMode, boolean emptyAsNull) {
    UTF8String v = trim ? s.trim() : s;
    if (caseMode != CASE_KEEP) {
      v = CaseMapping.apply(v, caseMode == CASE_UPPER);
    }
    return emptyAsNull && v.numBytes() == 0 ? null : v;
  }
}
