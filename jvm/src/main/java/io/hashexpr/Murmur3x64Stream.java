package io.hashexpr;

import java.nio.ByteOrder;

import org.apache.spark.unsafe.Platform;

/**
 * Streaming MurmurHash3 x64 128 (SMHasher's {@code MurmurHash3_x64_128}) with zero allocation per hash.
 *
 * <p>Bytes are appended with {@link #put(long, int)} and {@link #putBytes(Object, long, int)}; the pending
 * partial 16-byte block lives in two longs, so appending a number costs a few shifts. Input memory is read
 * through Spark's {@link Platform}, so on-heap {@code byte[]} and off-heap {@code UTF8String} data are hashed
 * in place. The stream is little-endian by definition, whatever the machine.
 *
 * <p>A stack of saved states lets a caller hash a sub-stream (a map entry) from a fresh state and then resume
 * the outer stream; each level also carries a 128-bit sum of the sub-hashes finished at that level.
 */
public class Murmur3x64Stream {
  private static final long C1 = 0x87c37b91114253d5L;
  private static final long C2 = 0x4cf5ad432745937fL;
  private static final boolean BIG_ENDIAN = ByteOrder.nativeOrder() == ByteOrder.BIG_ENDIAN;
  private static final int FRAME = 8;

  private final long seed;
  private long h1;
  private long h2;
  /** Pending bytes 0-7 and 8-15 of the current block, little-endian; unused bits are zero. */
  private long k1;
  private long k2;
  /** Number of pending bytes, 0..15. */
  private int pos;
  private long length;

  private long result1;
  private long result2;

  /** Saved states: h1, h2, k1, k2, pos, length, sumLo, sumHi per level. */
  private long[] frames = new long[FRAME * 4];
  private int depth;

  /** @param seed the 32-bit seed, zero-extended as in the reference implementation */
  public Murmur3x64Stream(int seed) {
    this.seed = seed & 0xFFFFFFFFL;
    reset();
  }

  /** Starts a new hash from the seed, dropping any saved states. */
  public final void reset() {
    depth = 0;
    restart();
  }

  private void restart() {
    h1 = seed;
    h2 = seed;
    k1 = 0L;
    k2 = 0L;
    pos = 0;
    length = 0L;
  }

  /** Appends the low {@code n} bytes of {@code v} (1 &lt;= n &lt;= 8), least significant first. */
  public final void put(long v, int n) {
    if (n < 8) {
      v &= (1L << (n << 3)) - 1L;
    }
    int p = pos;
    long spill = 0L;
    if (p < 8) {
      k1 |= v << (p << 3);
      if (p + n > 8) {
        k2 = v >>> ((8 - p) << 3);
      }
    } else {
      k2 |= v << ((p - 8) << 3);
      if (p + n > 16) {
        spill = v >>> ((16 - p) << 3);
      }
    }
    p += n;
    length += n;
    if (p >= 16) {
      mix(k1, k2);
      k1 = spill;
      k2 = 0L;
      p -= 16;
    }
    pos = p;
  }

  public final void putByte(int b) {
    put(b, 1);
  }

  public final void putInt(int v) {
    put(v, 4);
  }

  public final void putLong(long v) {
    put(v, 8);
  }

  /** Appends {@code len} bytes read from {@code base} at {@code offset} (Spark {@link Platform} addressing). */
  public final void putBytes(Object base, long offset, int len) {
    while (len >= 8) {
      if (pos == 0 && len >= 16) {
        mix(readLong(base, offset), readLong(base, offset + 8));
        length += 16;
        offset += 16;
        len -= 16;
      } else {
        put(readLong(base, offset), 8);
        offset += 8;
        len -= 8;
      }
    }
    if (len > 0) {
      long v = 0L;
      for (int i = 0; i < len; i++) {
        v |= (Platform.getByte(base, offset + i) & 0xFFL) << (i << 3);
      }
      put(v, len);
    }
  }

  public final void putBytes(byte[] bytes) {
    putBytes(bytes, Platform.BYTE_ARRAY_OFFSET, bytes.length);
  }

  /** Finishes the hash of the current stream; read the result with {@link #h1()}, {@link #h2()}. */
  public final void finish() {
    long a = h1;
    long b = h2;
    if (pos > 8) {
      long t = k2 * C2;
      t = Long.rotateLeft(t, 33);
      t *= C1;
      b ^= t;
    }
    if (pos > 0) {
      long t = k1 * C1;
      t = Long.rotateLeft(t, 31);
      t *= C2;
      a ^= t;
    }
    a ^= length;
    b ^= length;
    a += b;
    b += a;
    a = fmix64(a);
    b = fmix64(b);
    a += b;
    b += a;
    result1 = a;
    result2 = b;
  }

  /** The first half of the last finished hash (the digest's bytes 0-7, little-endian). */
  public final long h1() {
    return result1;
  }

  /** The second half of the last finished hash (the digest's bytes 8-15, little-endian). */
  public final long h2() {
    return result2;
  }

  /** The last finished hash as the 16-byte digest LE(h1) || LE(h2). */
  public final byte[] digest() {
    byte[] out = new byte[16];
    Platform.putLong(out, Platform.BYTE_ARRAY_OFFSET, BIG_ENDIAN ? Long.reverseBytes(result1) : result1);
    Platform.putLong(out, Platform.BYTE_ARRAY_OFFSET + 8, BIG_ENDIAN ? Long.reverseBytes(result2) : result2);
    return out;
  }

  /** Saves the current stream and starts a sub-level whose 128-bit sum starts at zero. */
  protected final void pushLevel() {
    int base = depth * FRAME;
    if (base + FRAME > frames.length) {
      frames = java.util.Arrays.copyOf(frames, frames.length * 2);
    }
    long[] f = frames;
    f[base] = h1;
    f[base + 1] = h2;
    f[base + 2] = k1;
    f[base + 3] = k2;
    f[base + 4] = pos;
    f[base + 5] = length;
    f[base + 6] = 0L;
    f[base + 7] = 0L;
    depth++;
  }

  /** Starts a fresh sub-stream at the current level. */
  protected final void restartSubStream() {
    restart();
  }

  /** Finishes the current sub-stream and adds its hash, as an unsigned 128-bit number, to the level's sum. */
  protected final void addSubStreamToLevel() {
    finish();
    int base = (depth - 1) * FRAME;
    long lo = frames[base + 6] + result1;
    long carry = Long.compareUnsigned(lo, result1) < 0 ? 1L : 0L;
    frames[base + 6] = lo;
    frames[base + 7] = frames[base + 7] + result2 + carry;
  }

  /** Restores the saved stream and appends the level's sum, low half first. */
  protected final void popLevel() {
    depth--;
    int base = depth * FRAME;
    long[] f = frames;
    h1 = f[base];
    h2 = f[base + 1];
    k1 = f[base + 2];
    k2 = f[base + 3];
    pos = (int) f[base + 4];
    length = f[base + 5];
    putLong(f[base + 6]);
    putLong(f[base + 7]);
  }

  private void mix(long a, long b) {
    a *= C1;
    a = Long.rotateLeft(a, 31);
    a *= C2;
    h1 ^= a;
    h1 = Long.rotateLeft(h1, 27);
    h1 += h2;
    h1 = h1 * 5 + 0x52dce729L;

    b *= C2;
    b = Long.rotateLeft(b, 33);
    b *= C1;
    h2 ^= b;
    h2 = Long.rotateLeft(h2, 31);
    h2 += h1;
    h2 = h2 * 5 + 0x38495ab5L;
  }

  private static long fmix64(long k) {
    k ^= k >>> 33;
    k *= 0xff51afd7ed558ccdL;
    k ^= k >>> 33;
    k *= 0xc4ceb9fe1a85ec53L;
    k ^= k >>> 33;
    return k;
  }

  private static long readLong(Object base, long offset) {
    long v = Platform.getLong(base, offset);
    return BIG_ENDIAN ? Long.reverseBytes(v) : v;
  }
}
