package io.hashexpr;

import java.nio.ByteOrder;
import java.util.Arrays;

import org.apache.spark.unsafe.Platform;

/**
 * Streaming MurmurHash3 x64 128 (SMHasher's {@code MurmurHash3_x64_128}) with zero allocation per hash.
 *
 * <p>Appended bytes go to a buffer with one unaligned store per number, and whole 16-byte blocks are mixed
 * only when the buffer fills up and when the hash is finished, so appending a value costs a store and a
 * compare. A number is stored as a full 8-byte word even when fewer of its bytes are appended: the bytes past
 * the end of the stream are scratch space that the next store overwrites and the hash never reads. Input
 * memory is read through Spark's {@link Platform}, so on-heap {@code byte[]} and off-heap {@code UTF8String}
 * data are hashed in place. The stream is little-endian by definition, whatever the machine.
 *
 * <p>A stack of levels lets a caller hash sub-streams (map entries), each from a fresh state, and sum their
 * hashes as 128-bit numbers before resuming the outer stream. A level's sub-streams are laid out one after
 * another in the buffer above the outer stream's bytes and hashed together when the level ends or its part of
 * the buffer fills up: reading words back right after writing them in pieces stalls the CPU (the loads cannot
 * be forwarded from the pending stores), which would otherwise cost more than hashing a short entry.
 *
 * <p>The methods that write bytes and levels are not final only so that {@link Sha256CanonicalEncoder} can send
 * the same bytes to SHA-256; while that class is not loaded, the JIT compiles them as if they were final.
 */
public class Murmur3x64Stream {
  private static final long C1 = 0x87c37b91114253d5L;
  private static final long C2 = 0x4cf5ad432745937fL;
  private static final boolean BIG_ENDIAN = ByteOrder.nativeOrder() == ByteOrder.BIG_ENDIAN;
  private static final long BASE = Platform.BYTE_ARRAY_OFFSET;

  /** A level's part of the buffer is drained once it holds this many bytes; a multiple of 16. */
  private static final int CAPACITY = 256;
  /** Byte runs up to this length are copied to the buffer; longer ones have their whole blocks mixed in place. */
  private static final int MAX_COPY = 32;
  /**
   * Room a level needs past its start: a put starts below CAPACITY and stores at most MAX_COPY bytes, and
   * finishing reads a last partial block as two words.
   */
  private static final int ROOM = CAPACITY + MAX_COPY + 16;

  /** Saved per level: the outer stream's h1, h2, mixed, start and level, the level's sum, its first entry. */
  private static final int FRAME = 8;
  private static final int SUM_LO = 5;
  private static final int SUM_HI = 6;
  private static final int FIRST_ENTRY = 7;

  private final long seed;
  private long h1;
  private long h2;
  /** Number of bytes of the current stream mixed into h1, h2 so far, a multiple of 16. */
  private long mixed;

  /** The bytes not mixed yet, of the current stream and the levels below it; past {@link #pos}, scratch bytes. */
  private byte[] buffer = new byte[ROOM];
  /** Where the next byte goes. */
  private int pos;
  /** Where the current stream's bytes not yet mixed start. */
  private int start;
  /** Where the current level's part of the buffer starts: its finished entries, then the current one. */
  private int level;
  /** The buffer is drained when {@link #pos} reaches this. */
  private int limit;

  private long result1;
  private long result2;

  private long[] frames = new long[FRAME * 4];
  private int depth;
  /** Start offsets of the finished entries not hashed yet, of every level; an entry ends where the next starts. */
  private int[] entries = new int[64];
  private int entryCount;

  /** @param seed the 32-bit seed, zero-extended as in the reference implementation */
  public Murmur3x64Stream(int seed) {
    this.seed = seed & 0xFFFFFFFFL;
    reset();
  }

  /** Starts a new hash from the seed, dropping any saved states. */
  public void reset() {
    depth = 0;
    entryCount = 0;
    pos = 0;
    level = 0;
    limit = CAPACITY;
    restart();
  }

  /** Starts a stream from the seed at {@link #pos}. */
  private void restart() {
    h1 = seed;
    h2 = seed;
    mixed = 0L;
    start = pos;
  }

  /** Appends the low {@code n} bytes of {@code v} (1 &lt;= n &lt;= 8), least significant first. */
  public void put(long v, int n) {
    store(pos, v);
    advance(n);
  }

  public void putByte(int b) {
    Platform.putByte(buffer, BASE + pos, (byte) b);
    advance(1);
  }

  public final void putInt(int v) {
    put(v, 4);
  }

  public final void putLong(long v) {
    put(v, 8);
  }

  /** Appends the byte {@code tag}, then the low {@code n} bytes of {@code v} (1 &lt;= n &lt;= 8). */
  protected void putTagged(int tag, long v, int n) {
    int p = pos;
    Platform.putByte(buffer, BASE + p, (byte) tag);
    store(p + 1, v);
    advance(n + 1);
  }

  /**
   * Appends the low {@code n} bytes (8 &lt;= n &lt;= 16) of the 128-bit number whose low and high words are
   * {@code lo} and {@code hi}, least significant first: a value whose parts fill more than one word goes in
   * with two stores and one check of the buffer.
   */
  protected void putPair(long lo, long hi, int n) {
    int p = pos;
    store(p, lo);
    store(p + 8, hi);
    advance(n);
  }

  /** Appends {@code len} bytes read from {@code base} at {@code offset} (Spark {@link Platform} addressing). */
  public void putBytes(Object base, long offset, int len) {
    if (len <= MAX_COPY) {
      copy(base, offset, pos, len);
      advance(len);
    } else {
      putLongBytes(base, offset, len);
    }
  }

  public final void putBytes(byte[] bytes) {
    putBytes(bytes, BASE, bytes.length);
  }

  /** Completes the stream's last block from the source, drains the buffer, then mixes the source's blocks. */
  private void putLongBytes(Object base, long offset, int len) {
    int fill = -(pos - start) & 15;
    copy(base, offset, pos, fill);
    pos += fill;
    drain();
    offset += fill;
    len -= fill;
    int blocks = len & ~15;
    for (int i = 0; i < blocks; i += 16) {
      mix(readLong(base, offset + i), readLong(base, offset + i + 8));
    }
    mixed += blocks;
    copy(base, offset + blocks, pos, len - blocks);
    pos += len - blocks;
  }

  /**
   * Copies {@code len} bytes (0 &lt;= len &lt;= MAX_COPY) to the buffer at {@code to}, a word at a time. The
   * last word may overlap the one before it, so nothing past the end of the source is read.
   */
  private void copy(Object base, long offset, int to, int len) {
    byte[] b = buffer;
    long at = BASE + to;
    if (len >= 8) {
      int last = len - 8;
      for (int i = 0; i < last; i += 8) {
        Platform.putLong(b, at + i, Platform.getLong(base, offset + i));
      }
      Platform.putLong(b, at + last, Platform.getLong(base, offset + last));
    } else if (len >= 4) {
      Platform.putInt(b, at, Platform.getInt(base, offset));
      Platform.putInt(b, at + len - 4, Platform.getInt(base, offset + len - 4));
    } else {
      for (int i = 0; i < len; i++) {
        Platform.putByte(b, at + i, Platform.getByte(base, offset + i));
      }
    }
  }

  /** Stores the 8 bytes of {@code v} little-endian at {@code at}; only the stream's length says how many count. */
  private void store(int at, long v) {
    Platform.putLong(buffer, BASE + at, BIG_ENDIAN ? Long.reverseBytes(v) : v);
  }

  private void advance(int n) {
    int p = pos + n;
    pos = p;
    if (p >= limit) {
      drain();
    }
  }

  /**
   * Makes room in the level's part of the buffer: hashes its finished entries, mixes the current stream's whole
   * blocks and moves its remaining 0-15 bytes to the start of the level.
   */
  private void drain() {
    if (depth > 0) {
      sumEntries();
    }
    int end = start + ((pos - start) & ~15);
    mixBlocks(start, end);
    mixed += end - start;
    byte[] b = buffer;
    Platform.putLong(b, BASE + level, Platform.getLong(b, BASE + end));
    Platform.putLong(b, BASE + level + 8, Platform.getLong(b, BASE + end + 8));
    pos = level + pos - end;
    start = level;
  }

  /** Mixes the 16-byte blocks of buffer[from, to) into h1, h2. */
  private void mixBlocks(int from, int to) {
    byte[] b = buffer;
    for (int i = from; i < to; i += 16) {
      mix(readLong(b, BASE + i), readLong(b, BASE + i + 8));
    }
  }

  /**
   * Finishes the hash of the current stream, which is left as it is; read the result with {@link #h1()},
   * {@link #h2()}.
   */
  public final void finish() {
    finish(start, pos, mixed);
  }

  /**
   * Finishes the hash of a stream whose state is h1, h2 after {@code mixedBefore} bytes and whose remaining
   * bytes are buffer[from, to); h1 and h2 are left as they were.
   */
  private void finish(int from, int to, long mixedBefore) {
    long saved1 = h1;
    long saved2 = h2;
    int end = from + ((to - from) & ~15);
    mixBlocks(from, end);
    long length = mixedBefore + (to - from);
    long a = h1;
    long b = h2;
    h1 = saved1;
    h2 = saved2;
    int tail = to - end;
    if (tail > 8) {
      long t = readLong(buffer, BASE + end + 8) & (-1L >>> ((16 - tail) << 3));
      t *= C2;
      t = Long.rotateLeft(t, 33);
      t *= C1;
      b ^= t;
    }
    if (tail > 0) {
      long t = readLong(buffer, BASE + end);
      if (tail < 8) {
        t &= -1L >>> ((8 - tail) << 3);
      }
      t *= C1;
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
    Platform.putLong(out, BASE, BIG_ENDIAN ? Long.reverseBytes(result1) : result1);
    Platform.putLong(out, BASE + 8, BIG_ENDIAN ? Long.reverseBytes(result2) : result2);
    return out;
  }

  /** Saves the current stream and starts a level, above its bytes, whose 128-bit sum starts at zero. */
  protected void pushLevel() {
    int base = depth * FRAME;
    if (base + FRAME > frames.length) {
      frames = Arrays.copyOf(frames, frames.length * 2);
    }
    long[] f = frames;
    f[base] = h1;
    f[base + 1] = h2;
    f[base + 2] = mixed;
    f[base + 3] = start;
    f[base + 4] = level;
    f[base + SUM_LO] = 0L;
    f[base + SUM_HI] = 0L;
    f[base + FIRST_ENTRY] = entryCount;
    depth++;
    level = pos;
    limit = pos + CAPACITY;
    if (pos + ROOM > buffer.length) {
      buffer = Arrays.copyOf(buffer, Math.max(pos + ROOM, buffer.length * 2));
    }
    restart();
  }

  /** Starts a fresh sub-stream at the current level. */
  protected void restartSubStream() {
    restart();
  }

  /** Ends the current sub-stream; its hash is added, as an unsigned 128-bit number, to the level's sum. */
  protected void addSubStreamToLevel() {
    if (mixed == 0L) {
      // Still whole in the buffer: hashed with the level's other entries, once their stores are long done.
      if (entryCount == entries.length) {
        entries = Arrays.copyOf(entries, entryCount * 2);
      }
      entries[entryCount++] = start;
      start = pos;
    } else {
      finish();
      addToSum(result1, result2);
    }
  }

  /** Hashes the level's finished entries and adds them to its sum. */
  private void sumEntries() {
    int first = (int) frames[(depth - 1) * FRAME + FIRST_ENTRY];
    if (entryCount == first) {
      return;
    }
    long current1 = h1;
    long current2 = h2;
    int[] e = entries;
    for (int k = first; k < entryCount; k++) {
      h1 = seed;
      h2 = seed;
      finish(e[k], k + 1 < entryCount ? e[k + 1] : start, 0L);
      addToSum(result1, result2);
    }
    h1 = current1;
    h2 = current2;
    entryCount = first;
  }

  private void addToSum(long lo, long hi) {
    int base = (depth - 1) * FRAME;
    long sum = frames[base + SUM_LO] + lo;
    long carry = Long.compareUnsigned(sum, lo) < 0 ? 1L : 0L;
    frames[base + SUM_LO] = sum;
    frames[base + SUM_HI] += hi + carry;
  }

  /** Ends the level, restores the saved stream and appends the level's sum, low half first. */
  protected void popLevel() {
    sumEntries();
    depth--;
    int base = depth * FRAME;
    long[] f = frames;
    pos = level;
    h1 = f[base];
    h2 = f[base + 1];
    mixed = f[base + 2];
    start = (int) f[base + 3];
    level = (int) f[base + 4];
    limit = level + CAPACITY;
    putLong(f[base + SUM_LO]);
    putLong(f[base + SUM_HI]);
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
