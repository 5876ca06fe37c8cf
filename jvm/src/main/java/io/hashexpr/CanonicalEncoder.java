package io.hashexpr;

import java.math.BigInteger;

import org.apache.spark.sql.types.Decimal;
import org.apache.spark.unsafe.types.CalendarInterval;
import org.apache.spark.unsafe.types.UTF8String;

/**
 * Writes the canonical encoding of hash format v1 (docs/FORMAT.md) straight into a MurmurHash3 x64 128 stream.
 *
 * <p>Each {@code put*} method writes one value of one logical kind: its tag, then its payload. Containers are
 * written with {@code begin*} calls around their elements. Both the generated code and the interpreted path of
 * the Catalyst expressions call these methods, so the bytes come from one place. {@link Sha256CanonicalEncoder}
 * sends the same bytes to SHA-256 or HMAC-SHA-256 instead (docs/FORMAT.md, section 10).
 */
public class CanonicalEncoder extends Murmur3x64Stream {
  public static final int FORMAT_VERSION = 1;
  /** The ASCII bytes "hash"; below 2^31 so that every MurmurHash3 implementation reads it the same way. */
  public static final int SEED = 0x68617368;

  /** The first byte of a by-name record; a positional record starts with the format version. */
  static final int BY_NAME_RECORD = 0x81;

  /** The first byte of a business-key record. */
  static final int KEY_RECORD = 0x82;

  /**
   * Compares two byte arrays lexicographically as unsigned bytes, a shorter prefix first: the order in which
   * record_hash_by_name sorts its names. (Java 9's Arrays.compareUnsigned, on Java 8 too.)
   */
  public static int compareUnsigned(byte[] a, byte[] b) {
    int n = Math.min(a.length, b.length);
    for (int i = 0; i < n; i++) {
      int c = (a[i] & 0xFF) - (b[i] & 0xFF);
      if (c != 0) {
        return c;
      }
    }
    return a.length - b.length;
  }

  public static final int NULL_KEY_HASH = 0;
  public static final int NULL_KEY_NULL = 1;
  public static final int NULL_KEY_ERROR = 2;

  static final int NULL = 0x00;
  static final int BOOLEAN = 0x01;
  static final int INTEGRAL = 0x02;
  static final int FLOATING = 0x03;
  static final int DECIMAL = 0x04;
  static final int STRING = 0x05;
  static final int BINARY = 0x06;
  static final int DATE = 0x07;
  static final int TIMESTAMP = 0x08;
  static final int TIMESTAMP_NTZ = 0x09;
  static final int DAY_TIME_INTERVAL = 0x0A;
  static final int YEAR_MONTH_INTERVAL = 0x0B;
  static final int CALENDAR_INTERVAL = 0x0C;
  static final int COLLATED_STRING = 0x0D;
  static final int ARRAY = 0x10;
  static final int MAP = 0x11;
  static final int STRUCT = 0x12;

  /** NULLs written since {@link #beginKey}; only meaningful while a key is written. */
  private int keyNulls;
  private int keyParts;

  private static final long CANONICAL_NAN = Double.doubleToLongBits(Double.NaN);

  public CanonicalEncoder() {
    super(SEED);
  }

  /** Starts a record of {@code arity} values. */
  public void beginRecord(int arity) {
    reset();
    putTagged(FORMAT_VERSION, arity, 4);
  }

  /** Ends the record and returns its hash: 16 bytes of MurmurHash3 x64 128. */
  public byte[] finishRecord() {
    finish();
    return digest();
  }

  /** Starts a by-name record: its fields follow as (name, value) pairs, NULL fields left out. */
  public void beginRecordByName() {
    reset();
    putByte(BY_NAME_RECORD);
  }

  /** Writes the name of the next by-name field, as a STRING value. */
  public void putFieldName(byte[] utf8) {
    putTagged(STRING, utf8.length, 4);
    putBytes(utf8);
  }

  /** Ends the by-name record (a NULL tag cannot start a field, so it closes the list) and hashes it. */
  public byte[] finishRecordByName() {
    putByte(NULL);
    return finishRecord();
  }

  /** Starts a business key of {@code parts} values under a salt (docs/FORMAT.md, section 9). */
  public void beginKey(byte[] salt, int parts) {
    reset();
    putByte(KEY_RECORD);
    putFieldName(salt);
    putInt(parts);
    keyNulls = 0;
    keyParts = parts;
  }

  /**
   * Ends the key and hashes it. When every part was NULL, {@code nullKey} decides: hash it as it is
   * ({@link #NULL_KEY_HASH}), return null ({@link #NULL_KEY_NULL}) or fail ({@link #NULL_KEY_ERROR}).
   */
  public byte[] finishKey(int nullKey) {
    if (keyNulls == keyParts && nullKey != NULL_KEY_HASH) {
      if (nullKey == NULL_KEY_NULL) {
        return null;
      }
      throw new IllegalArgumentException("record_key: every key part is NULL. Filter such rows out, "
          + "or choose what they get with null_key=hash (a hash of the NULL key) or null_key=null (NULL)");
    }
    return finishRecord();
  }

  public void putNull() {
    putByte(NULL);
  }

  /** A NULL key part (top level), counted for {@link #finishKey}. */
  public void putNullKeyPart() {
    putByte(NULL);
    keyNulls++;
  }

  public void putBoolean(boolean v) {
    put(v ? (BOOLEAN | 0x100) : BOOLEAN, 2);
  }

  /** TINYINT, SMALLINT, INT and BIGINT: one kind, so widening keeps the hash. */
  public void putIntegral(long v) {
    putTagged(INTEGRAL, v, 8);
  }

  /** A FLOAT hashes as its exact DOUBLE widening. */
  public void putFloat(float v) {
    putDouble(v);
  }

  public void putDouble(double v) {
    // -0.0 == 0.0 is true, so this maps -0.0 to 0.0; every NaN becomes the canonical NaN.
    long bits = v == 0.0 ? 0L : (v != v ? CANONICAL_NAN : Double.doubleToRawLongBits(v));
    putTagged(FLOATING, bits, 8);
  }

  public void putDecimal(Decimal d) {
    if (d.precision() <= Decimal.MAX_LONG_DIGITS()) {
      putDecimal(d.toUnscaledLong(), d.scale());
    } else {
      putDecimal(d.toJavaBigDecimal());
    }
  }

  private void putDecimal(java.math.BigDecimal value) {
    BigInteger unscaled = value.unscaledValue();
    if (unscaled.bitLength() < 64) {
      putDecimal(unscaled.longValue(), value.scale());
      return;
    }
    java.math.BigDecimal normal = value.stripTrailingZeros();
    unscaled = normal.unscaledValue();
    if (unscaled.bitLength() < 64) {
      putDecimal(unscaled.longValue(), normal.scale());
      return;
    }
    byte[] bigEndian = unscaled.toByteArray();
    // i32(scale) || u8(n) as one 5-byte number, then the n bytes least significant first.
    putTagged(DECIMAL, (normal.scale() & 0xFFFFFFFFL) | (long) bigEndian.length << 32, 5);
    for (int i = bigEndian.length - 1; i >= 0; i--) {
      putByte(bigEndian[i]);
    }
  }

  /**
   * A decimal as (unscaled, scale), normalised so that equal values hash the same at any precision. Generated
   * code passes a DECIMAL(p, s) with p &lt;= 18 this way, so the {@link Decimal} it reads need not be allocated.
   */
  public void putDecimal(long unscaled, int scale) {
    if (unscaled % 10L == 0L) {
      if (unscaled == 0L) {
        scale = 0;
      } else {
        do {
          unscaled /= 10L;
          scale--;
        } while (unscaled % 10L == 0L);
      }
    }
    int n = ((64 - Long.numberOfLeadingZeros(unscaled ^ (unscaled >> 63))) >>> 3) + 1;
    // tag || i32(scale) || u8(n) || the n bytes of unscaled, least significant first: 6 + n bytes.
    putPair(DECIMAL | (scale & 0xFFFFFFFFL) << 8 | (long) n << 40 | unscaled << 48, unscaled >> 16, 6 + n);
  }

  public void putString(UTF8String s) {
    int n = s.numBytes();
    putTagged(STRING, n, 4);
    putBytes(s.getBaseObject(), s.getBaseOffset(), n);
  }

  /** A string under a collation without binary equality: the collation's name and the value's key. */
  public void putCollatedString(byte[] collationName, byte[] key) {
    putTagged(COLLATED_STRING, collationName.length, 4);
    putBytes(collationName);
    putInt(key.length);
    putBytes(key);
  }

  public void putBinary(byte[] b) {
    putTagged(BINARY, b.length, 4);
    putBytes(b);
  }

  public void putDate(int days) {
    putTagged(DATE, days, 4);
  }

  public void putTimestamp(long micros) {
    putTagged(TIMESTAMP, micros, 8);
  }

  public void putTimestampNtz(long micros) {
    putTagged(TIMESTAMP_NTZ, micros, 8);
  }

  public void putDayTimeInterval(long micros) {
    putTagged(DAY_TIME_INTERVAL, micros, 8);
  }

  public void putYearMonthInterval(int months) {
    putTagged(YEAR_MONTH_INTERVAL, months, 4);
  }

  public void putCalendarInterval(CalendarInterval v) {
    // i32(months) || i32(days) as one 8-byte number.
    putTagged(CALENDAR_INTERVAL, (v.months & 0xFFFFFFFFL) | (long) v.days << 32, 8);
    putLong(v.microseconds);
  }

  public void beginArray(int n) {
    putTagged(ARRAY, n, 4);
  }

  public void beginStruct(int n) {
    putTagged(STRUCT, n, 4);
  }

  /** Starts a map of {@code n} entries; each entry is written between {@link #beginEntry()} and {@link #endEntry()}. */
  public void beginMap(int n) {
    putTagged(MAP, n, 4);
    pushLevel();
  }

  /** Starts an entry: its key and value are hashed on their own, from the seed. */
  public void beginEntry() {
    restartSubStream();
  }

  public void endEntry() {
    addSubStreamToLevel();
  }

  /** Ends the map: the sum of the entry hashes (mod 2^128) is appended, so entry order does not matter. */
  public void endMap() {
    popLevel();
  }
}
