package io.hashexpr;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.apache.spark.unsafe.Platform;
import org.apache.spark.unsafe.types.UTF8String;

/**
 * The case mapping of {@code record_key_with} (docs/FORMAT.md, section 9.1): exactly CPython 3.11's
 * {@code str.upper()} and {@code str.lower()}, the Unicode 14.0.0 full case mappings with CPython's Final_Sigma
 * rule. It is read from the frozen table {@value #TABLE} (a resource next to this class, the same file the Python
 * reference loads), not taken from Java's case functions, whose Unicode version moves with the JDK.
 *
 * <p>It works on UTF-8 bytes. A byte that does not belong to a well-formed sequence (no overlongs, surrogates or
 * code points above U+10FFFF) is copied unchanged and is neither Cased nor Case_Ignorable.
 */
final class CaseMapping {
  static final String TABLE = "unicode_case_14_0_0.txt";
  private static final String UNICODE_VERSION = "14.0.0";

  private static final int CODE_POINTS = 0x110000;
  private static final int BLOCK_BITS = 8;
  private static final int BLOCK_SIZE = 1 << BLOCK_BITS;

  private static final int CASED = 1;
  private static final int CASE_IGNORABLE = 2;

  private static final int CAPITAL_SIGMA = 0x3A3;
  private static final byte[] FINAL_SIGMA = utf8(new int[] {0x3C2});

  /** The byte length of a decoded sequence sits above its 21-bit code point. */
  private static final int LENGTH_SHIFT = 21;
  private static final int CODE_POINT_MASK = (1 << LENGTH_SHIFT) - 1;

  // Two-stage tables: the entry of code point cp is at BLOCKS[cp >>> 8] + (cp & 0xFF) in UPPER, LOWER and
  // PROPERTIES; 256-entry blocks with equal contents are stored once (most are all identity).
  private static final int[] BLOCKS = new int[CODE_POINTS >>> BLOCK_BITS];
  /** Indices into REPLACEMENTS; 0 is the code point itself. */
  private static final char[] UPPER;
  private static final char[] LOWER;
  private static final byte[] PROPERTIES;
  /** The UTF-8 bytes of every mapping; REPLACEMENTS[0] is null. */
  private static final byte[][] REPLACEMENTS;

  static {
    char[] upper = new char[CODE_POINTS];
    char[] lower = new char[CODE_POINTS];
    byte[] properties = new byte[CODE_POINTS];
    List<byte[]> replacements = new ArrayList<>();
    replacements.add(null);
    try (InputStream in = CaseMapping.class.getResourceAsStream(TABLE)) {
      if (in == null) {
        throw new IllegalStateException("record_key_with: the case table " + TABLE
            + " is missing from the classpath (it belongs in hashexpr.jar, next to io/hashexpr/CaseMapping.class)");
      }
      BufferedReader reader = new BufferedReader(new InputStreamReader(in, StandardCharsets.US_ASCII));
      List<String> lines = new ArrayList<>();
      for (String line = reader.readLine(); line != null; line = reader.readLine()) {
        if (!line.isEmpty() && !line.startsWith("#")) {
          lines.add(line);
        }
      }
      int entries = lines.size() - 2;
      if (entries < 0 || !lines.get(0).equals("unicode " + UNICODE_VERSION)
          || !lines.get(lines.size() - 1).equals("end " + entries)) {
        throw new IllegalStateException("record_key_with: the case table " + TABLE + " is damaged");
      }
      for (String line : lines.subList(1, lines.size() - 1)) {
        String[] fields = line.split(" ");
        int[] numbers = new int[fields.length - 1];
        for (int i = 1; i < fields.length; i++) {
          numbers[i - 1] = Integer.parseInt(fields[i], 16);
        }
        switch (fields[0]) {
          case "U":
          case "L":
            char[] target = fields[0].equals("U") ? upper : lower;
            target[numbers[0]] = (char) replacements.size();
            replacements.add(utf8(Arrays.copyOfRange(numbers, 1, numbers.length)));
            break;
          case "C":
          case "I":
            int property = fields[0].equals("C") ? CASED : CASE_IGNORABLE;
            for (int cp = numbers[0]; cp <= numbers[1]; cp++) {
              properties[cp] |= (byte) property;
            }
            break;
          default:
            throw new IllegalStateException("record_key_with: the case table " + TABLE + " is damaged: " + line);
        }
      }
    } catch (IOException e) {
      throw new IllegalStateException("record_key_with: cannot read the case table " + TABLE, e);
    }
    REPLACEMENTS = replacements.toArray(new byte[0][]);

    Map<ByteBuffer, Integer> blockOffsets = new HashMap<>();
    List<Integer> blockStarts = new ArrayList<>();
    for (int block = 0; block < BLOCKS.length; block++) {
      ByteBuffer contents = ByteBuffer.allocate(BLOCK_SIZE * 5);
      for (int cp = block << BLOCK_BITS; cp < (block + 1) << BLOCK_BITS; cp++) {
        contents.putChar(upper[cp]).putChar(lower[cp]).put(properties[cp]);
      }
      contents.flip();
      Integer offset = blockOffsets.get(contents);
      if (offset == null) {
        offset = blockStarts.size() * BLOCK_SIZE;
        blockOffsets.put(contents, offset);
        blockStarts.add(block << BLOCK_BITS);
      }
      BLOCKS[block] = offset;
    }
    int size = blockStarts.size() * BLOCK_SIZE;
    UPPER = new char[size];
    LOWER = new char[size];
    PROPERTIES = new byte[size];
    for (int b = 0; b < blockStarts.size(); b++) {
      System.arraycopy(upper, blockStarts.get(b), UPPER, b * BLOCK_SIZE, BLOCK_SIZE);
      System.arraycopy(lower, blockStarts.get(b), LOWER, b * BLOCK_SIZE, BLOCK_SIZE);
      System.arraycopy(properties, blockStarts.get(b), PROPERTIES, b * BLOCK_SIZE, BLOCK_SIZE);
    }
  }

  private CaseMapping() {}

  /**
   * Returns {@code s} upper-cased ({@code upper}) or lower-cased; {@code s} itself when nothing changes, so that
   * keys already in the target case allocate nothing.
   */
  static UTF8String apply(UTF8String s, boolean upper) {
    Object base = s.getBaseObject();
    long offset = s.getBaseOffset();
    int n = s.numBytes();
    int first = upper ? 'a' : 'A';
    // Most keys are ASCII: skip ASCII bytes that stay as they are.
    int i = 0;
    while (i < n) {
      int b = Platform.getByte(base, offset + i);
      if (b < 0 || (b >= first && b < first + 26)) {
        break;
      }
      i++;
    }
    if (i == n) {
      return s;
    }
    int ascii = i;
    while (ascii < n && Platform.getByte(base, offset + ascii) >= 0) {
      ascii++;
    }
    if (ascii == n) {
      // All ASCII: in both mappings an ASCII letter only flips its case bit, and nothing else changes.
      byte[] out = new byte[n];
      for (int k = 0; k < n; k++) {
        byte b = Platform.getByte(base, offset + k);
        out[k] = b >= first && b < first + 26 ? (byte) (b ^ 0x20) : b;
      }
      return UTF8String.fromBytes(out);
    }
    return map(s, base, offset, n, upper);
  }

  /**
   * The general path, in one pass over the units. The result array is allocated at the first unit that changes
   * (nothing is allocated when none does); most mappings keep the byte length, so {@code n} bytes usually hold
   * the result; it grows when mappings are longer (the result is at most 3 times as long: U+0390, 2 bytes,
   * becomes 3 code points, 6 bytes).
   */
  private static UTF8String map(UTF8String s, Object base, long offset, int n, boolean upper) {
    byte[] out = null;
    int o = 0;
    // lower(): whether the last unit before i that is not Case_Ignorable exists and is Cased.
    boolean casedBefore = false;
    int i = 0;
    while (i < n) {
      int unit = decode(base, offset, i, n);
      int length = 1;
      byte[] replacement = null;
      if (unit < 0) {
        casedBefore = false;
      } else {
        int cp = unit & CODE_POINT_MASK;
        length = unit >>> LENGTH_SHIFT;
        int entry = BLOCKS[cp >>> BLOCK_BITS] + (cp & (BLOCK_SIZE - 1));
        replacement = REPLACEMENTS[upper ? UPPER[entry] : LOWER[entry]];
        if (!upper) {
          if (cp == CAPITAL_SIGMA && casedBefore && !casedAfter(base, offset, i + length, n)) {
            replacement = FINAL_SIGMA;
          }
          int properties = PROPERTIES[entry];
          if ((properties & CASE_IGNORABLE) == 0) {
            casedBefore = (properties & CASED) != 0;
          }
        }
      }
      if (replacement != null) {
        if (out == null) {
          out = new byte[Math.max(n, i + replacement.length)];
          Platform.copyMemory(base, offset, out, Platform.BYTE_ARRAY_OFFSET, i);
          o = i;
        } else if (o + replacement.length > out.length) {
          out = Arrays.copyOf(out, Math.max(2 * out.length, o + replacement.length));
        }
        for (int k = 0; k < replacement.length; k++) {
          out[o + k] = replacement[k];
        }
        o += replacement.length;
      } else if (out != null) {
        if (o + length > out.length) {
          out = Arrays.copyOf(out, Math.max(2 * out.length, o + length));
        }
        for (int k = 0; k < length; k++) {
          out[o + k] = Platform.getByte(base, offset + i + k);
        }
        o += length;
      }
      i += length;
    }
    return out == null ? s : UTF8String.fromBytes(out, 0, o);
  }

  /** Whether the first code point from byte i on that is not Case_Ignorable exists and is Cased. */
  private static boolean casedAfter(Object base, long offset, int i, int n) {
    while (i < n) {
      int unit = decode(base, offset, i, n);
      if (unit < 0) {
        return false;
      }
      int cp = unit & CODE_POINT_MASK;
      int properties = PROPERTIES[BLOCKS[cp >>> BLOCK_BITS] + (cp & (BLOCK_SIZE - 1))];
      if ((properties & CASE_IGNORABLE) == 0) {
        return (properties & CASED) != 0;
      }
      i += unit >>> LENGTH_SHIFT;
    }
    return false;
  }

  /**
   * The well-formed UTF-8 sequence at byte i (Unicode Table 3-7) as its code point with its byte length above
   * bit 21, or -1 when the byte at i starts none.
   */
  private static int decode(Object base, long offset, int i, int n) {
    int b0 = Platform.getByte(base, offset + i) & 0xFF;
    if (b0 < 0x80) {
      return b0 | 1 << LENGTH_SHIFT;
    }
    if (b0 < 0xC2 || b0 > 0xF4 || i + 1 >= n) {
      return -1;
    }
    int b1 = Platform.getByte(base, offset + i + 1) & 0xFF;
    if (b0 < 0xE0) {
      return continuation(b1) ? ((b0 & 0x1F) << 6 | (b1 & 0x3F)) | 2 << LENGTH_SHIFT : -1;
    }
    // The second byte's range excludes overlongs (E0, F0), surrogates (ED) and code points above U+10FFFF (F4).
    int low = b0 == 0xE0 ? 0xA0 : b0 == 0xF0 ? 0x90 : 0x80;
    int high = b0 == 0xED ? 0x9F : b0 == 0xF4 ? 0x8F : 0xBF;
    if (b1 < low || b1 > high || i + 2 >= n) {
      return -1;
    }
    int b2 = Platform.getByte(base, offset + i + 2) & 0xFF;
    if (!continuation(b2)) {
      return -1;
    }
    if (b0 < 0xF0) {
      return ((b0 & 0x0F) << 12 | (b1 & 0x3F) << 6 | (b2 & 0x3F)) | 3 << LENGTH_SHIFT;
    }
    if (i + 3 >= n) {
      return -1;
    }
    int b3 = Platform.getByte(base, offset + i + 3) & 0xFF;
    if (!continuation(b3)) {
      return -1;
    }
    return ((b0 & 0x07) << 18 | (b1 & 0x3F) << 12 | (b2 & 0x3F) << 6 | (b3 & 0x3F)) | 4 << LENGTH_SHIFT;
  }

  private static boolean continuation(int b) {
    return (b & 0xC0) == 0x80;
  }

  private static byte[] utf8(int[] codePoints) {
    return new String(codePoints, 0, codePoints.length).getBytes(StandardCharsets.UTF_8);
  }
}
