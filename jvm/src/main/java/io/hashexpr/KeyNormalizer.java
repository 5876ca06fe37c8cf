package io.hashexpr;

import java.util.Locale;

import org.apache.spark.unsafe.types.UTF8String;

/** The opt-in normalisation of string key parts (docs/FORMAT.md, section 9). */
public final class KeyNormalizer {
  public static final int CASE_KEEP = 0;
  public static final int CASE_UPPER = 1;
  public static final int CASE_LOWER = 2;

  private KeyNormalizer() {}

  /**
   * Trims U+0020 from both ends, folds case with the root locale (the same on every machine), and maps the
   * empty string to null, each only when asked for.
   */
  public static UTF8String normalize(UTF8String s, boolean trim, int caseMode, boolean emptyAsNull) {
    UTF8String v = trim ? s.trim() : s;
    if (caseMode == CASE_UPPER) {
      v = UTF8String.fromString(v.toString().toUpperCase(Locale.ROOT));
    } else if (caseMode == CASE_LOWER) {
      v = UTF8String.fromString(v.toString().toLowerCase(Locale.ROOT));
    }
    return emptyAsNull && v.numBytes() == 0 ? null : v;
  }
}
