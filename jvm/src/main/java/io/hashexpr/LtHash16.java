package io.hashexpr;

import java.nio.charset.StandardCharsets;
import java.security.DigestException;
import java.security.MessageDigest;

/**
 * The lattice multiset hash LtHash16 (Lewi, Kim, Maykov, Weis, "Securing Update Propagation with Homomorphic
 * Hashing", 2019) of the secure dataset fingerprint (docs/FORMAT.md, section 11): each element, a 32-byte
 * digest, is expanded into 1024 16-bit lanes with SHA-256 in counter mode, and a multiset's state is the
 * lane-wise sum of its elements' lanes modulo 2^16. A sum of 128- or 256-bit hashes can be forged by
 * generalized-birthday attacks; 1024 lanes of 16 bits cannot in any feasible time. The sum stays commutative
 * and associative, so states of partitions and groups merge in any order.
 *
 * <p>Lanes are Java {@code char}s: unsigned 16-bit values whose addition wraps modulo 2^16.
 */
public final class LtHash16 {
  /** Lanes per state. */
  public static final int LANES = 1024;
  /** Bytes of a state written out: each lane as two bytes, little-endian. */
  public static final int STATE_BYTES = 2 * LANES;

  private static final byte[] LABEL = "hashexpr-lthash16".getBytes(StandardCharsets.US_ASCII);
  private static final int ELEMENT = 32;
  private static final int BLOCKS = STATE_BYTES / 32;

  private final MessageDigest sha256;
  /** LABEL ‖ element ‖ u32(counter), the input of each expansion block. */
  private final byte[] input = new byte[LABEL.length + ELEMENT + 4];
  private final byte[] block = new byte[32];

  public LtHash16() {
    sha256 = Sha256CanonicalEncoder.newSha256();
    System.arraycopy(LABEL, 0, input, 0, LABEL.length);
  }

  /** A state with no element: every lane 0. */
  public static char[] empty() {
    return new char[LANES];
  }

  /** Adds the lanes of {@code element} (a 32-byte digest) to {@code state}. */
  public void add(char[] state, byte[] element) {
    if (element.length != ELEMENT) {
      throw new IllegalArgumentException("an LtHash16 element is a 32-byte digest, not " + element.length);
    }
    System.arraycopy(element, 0, input, LABEL.length, ELEMENT);
    int counterAt = LABEL.length + ELEMENT;
    for (int b = 0; b < BLOCKS; b++) {
      // The counter is little-endian, as every integer of the format; below 256 only its first byte varies.
      input[counterAt] = (byte) b;
      sha256.update(input, 0, input.length);
      try {
        sha256.digest(block, 0, 32);
      } catch (DigestException e) {
        throw new IllegalStateException(e);
      }
      int lane = b * 16;
      for (int i = 0; i < 32; i += 2, lane++) {
        state[lane] += (char) ((block[i] & 0xff) | (block[i + 1] & 0xff) << 8);
      }
    }
  }

  /** Adds {@code other} to {@code state}, lane by lane: the state of both multisets together. */
  public static void merge(char[] state, char[] other) {
    for (int i = 0; i < LANES; i++) {
      state[i] += other[i];
    }
  }

  /** Writes {@code state} into {@code out} at {@code offset}: each lane as two bytes, little-endian. */
  public static void write(char[] state, byte[] out, int offset) {
    for (int i = 0; i < LANES; i++) {
      out[offset + 2 * i] = (byte) state[i];
      out[offset + 2 * i + 1] = (byte) (state[i] >>> 8);
    }
  }

  /** Reads a state that {@link #write} wrote. */
  public static char[] read(byte[] in, int offset) {
    char[] state = new char[LANES];
    for (int i = 0; i < LANES; i++) {
      state[i] = (char) ((in[offset + 2 * i] & 0xff) | (in[offset + 2 * i + 1] & 0xff) << 8);
    }
    return state;
  }
}
