package io.hashexpr;

import java.nio.ByteOrder;
import java.security.DigestException;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Arrays;

import org.apache.spark.unsafe.Platform;

/**
 * The canonical encoding of {@link CanonicalEncoder}, hashed with SHA-256, or with HMAC-SHA-256 under a key
 * (docs/FORMAT.md, section 10). Results are 32 bytes.
 *
 * <p>The record's bytes are collected in a buffer and digested at the end, in one call, which is what the JDK's
 * SHA-256 intrinsics are fastest at. A map entry is digested on its own with SHA-256 as soon as it ends; the map's
 * entry digests are then appended in ascending order instead of being added up, because a sum of hashes lets
 * an adversary find different maps with equal sums (research on additive multiset hashes), while a sorted list
 * of collision-resistant digests is as collision-resistant as SHA-256 and still independent of entry order.
 */
public final class Sha256CanonicalEncoder extends CanonicalEncoder {
  private static final boolean BIG_ENDIAN = ByteOrder.nativeOrder() == ByteOrder.BIG_ENDIAN;
  private static final long BASE = Platform.BYTE_ARRAY_OFFSET;
  private static final int DIGEST = 32;

  private static final int BLOCK = 64;

  private final MessageDigest sha256;
  /**
   * For HMAC-SHA-256 (RFC 2104): SHA-256 states that have already absorbed the key XOR ipad and XOR opad, copied
   * for each record, so that the two key blocks are not compressed again for every row. Null for SHA-256.
   */
  private final MessageDigest inner;
  private final MessageDigest outer;

  /** The record's bytes so far, and 8 bytes of scratch past them for word stores. */
  private byte[] buffer = new byte[256];
  private int pos;

  /** Where each open map's entries start, innermost last. */
  private int[] levels = new int[4];
  /** How many entry digests each open map had below it when it started, innermost last. */
  private int[] firstDigest = new int[4];
  private int depth;
  /** The digests of the open maps' finished entries, 32 bytes each. */
  private byte[] digests = new byte[DIGEST * 8];
  private int digestCount;

  /** A SHA-256 encoder. */
  public Sha256CanonicalEncoder() {
    this.sha256 = newSha256();
    this.inner = null;
    this.outer = null;
  }

  /** An HMAC-SHA-256 encoder keyed with {@code key} (at least one byte). */
  public Sha256CanonicalEncoder(byte[] key) {
    if (key.length == 0) {
      throw new IllegalArgumentException("an HMAC key needs at least one byte");
    }
    this.sha256 = newSha256();
    byte[] block = Arrays.copyOf(key.length > BLOCK ? sha256.digest(key) : key, BLOCK);
    this.inner = keyed(block, 0x36);
    this.outer = keyed(block, 0x5c);
    Arrays.fill(block, (byte) 0);
  }

  private static MessageDigest keyed(byte[] block, int pad) {
    MessageDigest md = newSha256();
    byte[] padded = new byte[BLOCK];
    for (int i = 0; i < BLOCK; i++) {
      padded[i] = (byte) (block[i] ^ pad);
    }
    md.update(padded);
    Arrays.fill(padded, (byte) 0);
    return md;
  }

  private static MessageDigest copy(MessageDigest md) {
    try {
      return (MessageDigest) md.clone();
    } catch (CloneNotSupportedException e) {
      throw new IllegalStateException("this JVM's SHA-256 cannot be copied", e);
    }
  }

  /** A new SHA-256 digest; every JVM has one, so its absence is an error, not a checked case. */
  static MessageDigest newSha256() {
    try {
      return MessageDigest.getInstance("SHA-256");
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is not available on this JVM", e);
    }
  }

  @Override
  public void reset() {
    pos = 0;
    depth = 0;
    digestCount = 0;
  }

  /** Makes room for {@code n} more bytes and a word of scratch after them. */
  private void ensure(int n) {
    if (pos + n + 8 > buffer.length) {
      buffer = Arrays.copyOf(buffer, Math.max(pos + n + 8, buffer.length * 2));
    }
  }

  private void store(int at, long v) {
    Platform.putLong(buffer, BASE + at, BIG_ENDIAN ? Long.reverseBytes(v) : v);
  }

  @Override
  public void put(long v, int n) {
    ensure(8);
    store(pos, v);
    pos += n;
  }

  @Override
  public void putByte(int b) {
    ensure(1);
    buffer[pos++] = (byte) b;
  }

  @Override
  protected void putTagged(int tag, long v, int n) {
    ensure(9);
    buffer[pos] = (byte) tag;
    store(pos + 1, v);
    pos += n + 1;
  }

  @Override
  protected void putPair(long lo, long hi, int n) {
    ensure(16);
    store(pos, lo);
    store(pos + 8, hi);
    pos += n;
  }

  @Override
  public void putBytes(Object base, long offset, int len) {
    ensure(len);
    Platform.copyMemory(base, offset, buffer, BASE + pos, len);
    pos += len;
  }

  @Override
  protected void pushLevel() {
    if (depth == levels.length) {
      levels = Arrays.copyOf(levels, depth * 2);
      firstDigest = Arrays.copyOf(firstDigest, depth * 2);
    }
    levels[depth] = pos;
    firstDigest[depth] = digestCount;
    depth++;
  }

  @Override
  protected void restartSubStream() {
    pos = levels[depth - 1];
  }

  /** Digests the entry just written and drops its bytes; the next entry is written in their place. */
  @Override
  protected void addSubStreamToLevel() {
    int start = levels[depth - 1];
    if ((digestCount + 1) * DIGEST > digests.length) {
      digests = Arrays.copyOf(digests, digests.length * 2);
    }
    sha256.update(buffer, start, pos - start);
    try {
      sha256.digest(digests, digestCount * DIGEST, DIGEST);
    } catch (DigestException e) {
      throw new IllegalStateException(e);
    }
    digestCount++;
    pos = start;
  }

  /** Ends the map: its entry digests are appended in ascending order (unsigned bytes). */
  @Override
  protected void popLevel() {
    depth--;
    pos = levels[depth];
    int first = firstDigest[depth];
    int n = digestCount - first;
    byte[][] sorted = new byte[n][];
    for (int i = 0; i < n; i++) {
      int from = (first + i) * DIGEST;
      sorted[i] = Arrays.copyOfRange(digests, from, from + DIGEST);
    }
    Arrays.sort(sorted, CanonicalEncoder::compareUnsigned);
    ensure(n * DIGEST);
    for (byte[] d : sorted) {
      System.arraycopy(d, 0, buffer, pos, DIGEST);
      pos += DIGEST;
    }
    digestCount = first;
  }

  /** Ends the record and returns its 32-byte SHA-256 or HMAC-SHA-256. */
  @Override
  public byte[] finishRecord() {
    if (inner == null) {
      sha256.update(buffer, 0, pos);
      return sha256.digest();
    }
    MessageDigest in = copy(inner);
    in.update(buffer, 0, pos);
    try {
      // The inner digest goes to the scratch space past the record, which is at least 32 bytes long.
      ensure(DIGEST);
      in.digest(buffer, pos, DIGEST);
    } catch (DigestException e) {
      throw new IllegalStateException(e);
    }
    MessageDigest out = copy(outer);
    out.update(buffer, pos, DIGEST);
    return out.digest();
  }
}
