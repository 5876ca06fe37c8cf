import java.security.MessageDigest;
import java.util.Arrays;
import java.util.Random;

import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * What HMAC-SHA-256 costs on top of SHA-256 per record, on this JVM, for each way the JDK's public API allows.
 *
 * <p>HMAC-SHA-256 is SHA-256(K ^ opad || SHA-256(K ^ ipad || m)): one more compression (the outer block) than
 * SHA-256 of m, once the two key blocks are absorbed. The JDK offers no way to set a digest's state, so each
 * record must either copy a digest that has absorbed a key block (clone) or absorb that block again:
 * <ul>
 *   <li>{@code sha256}: SHA-256 of m, the baseline;
 *   <li>{@code clone both}: copies of the two keyed states, as {@code Sha256CanonicalEncoder} does;
 *   <li>{@code key blocks}: one digest, the key blocks written in front of m and of the inner digest;
 *   <li>{@code clone inner, key block outer} and {@code key block inner, clone outer}: the two mixes;
 *   <li>{@code javax.crypto.Mac}: the JDK's HmacSHA256, which absorbs both key blocks for every message.
 * </ul>
 * Every variant is checked against {@code Mac} before it is timed. Prints one line per variant: the median
 * nanoseconds per message over the rounds, and the rounds.
 *
 * <p>Run: {@code java bench/HmacCost.java [message bytes] [rounds]} (the secure section of bench/run.py,
 * bench/sections/secure.py, runs it).
 */
public final class HmacCost {
  private static final int BLOCK = 64;
  private static final int DIGEST = 32;

  private final MessageDigest work = sha256();
  private final MessageDigest inner = sha256();
  private final MessageDigest outer = sha256();
  /** The inner key block, then the message. */
  private final byte[] keyed;
  /** The outer key block, then room for the inner digest. */
  private final byte[] outerBlock = new byte[BLOCK + DIGEST];
  private final byte[] message;
  private final int n;

  private HmacCost(byte[] key, byte[] message) {
    this.message = message;
    this.n = message.length;
    this.keyed = new byte[BLOCK + n];
    for (int i = 0; i < BLOCK; i++) {
      int k = i < key.length ? key[i] : 0;
      keyed[i] = (byte) (k ^ 0x36);
      outerBlock[i] = (byte) (k ^ 0x5c);
    }
    System.arraycopy(message, 0, keyed, BLOCK, n);
    inner.update(keyed, 0, BLOCK);
    outer.update(outerBlock, 0, BLOCK);
  }

  private static MessageDigest sha256() {
    try {
      return MessageDigest.getInstance("SHA-256");
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  private static MessageDigest copy(MessageDigest md) {
    try {
      return (MessageDigest) md.clone();
    } catch (CloneNotSupportedException e) {
      throw new IllegalStateException(e);
    }
  }

  byte[] plain() {
    work.update(message, 0, n);
    return work.digest();
  }

  byte[] cloneBoth() throws Exception {
    MessageDigest in = copy(inner);
    in.update(message, 0, n);
    in.digest(outerBlock, BLOCK, DIGEST);
    MessageDigest out = copy(outer);
    out.update(outerBlock, BLOCK, DIGEST);
    return out.digest();
  }

  byte[] keyBlocks() throws Exception {
    work.update(keyed, 0, BLOCK + n);
    work.digest(outerBlock, BLOCK, DIGEST);
    work.update(outerBlock, 0, BLOCK + DIGEST);
    return work.digest();
  }

  byte[] cloneInner() throws Exception {
    MessageDigest in = copy(inner);
    in.update(message, 0, n);
    in.digest(outerBlock, BLOCK, DIGEST);
    work.update(outerBlock, 0, BLOCK + DIGEST);
    return work.digest();
  }

  byte[] cloneOuter() throws Exception {
    work.update(keyed, 0, BLOCK + n);
    work.digest(outerBlock, BLOCK, DIGEST);
    MessageDigest out = copy(outer);
    out.update(outerBlock, BLOCK, DIGEST);
    return out.digest();
  }

  interface Variant {
    byte[] run() throws Exception;
  }

  public static void main(String[] args) throws Exception {
    int bytes = args.length > 0 ? Integer.parseInt(args[0]) : 110;
    int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 5;
    Random random = new Random(1);
    byte[] key = new byte[32];
    byte[] message = new byte[bytes];
    random.nextBytes(key);
    random.nextBytes(message);
    HmacCost c = new HmacCost(key, message);
    Mac mac = Mac.getInstance("HmacSHA256");
    mac.init(new SecretKeySpec(key, "HmacSHA256"));

    String[] names = {
      "sha256", "clone both", "key blocks", "clone inner, key block outer", "key block inner, clone outer",
      "javax.crypto.Mac"
    };
    Variant[] variants = {
      c::plain, c::cloneBoth, c::keyBlocks, c::cloneInner, c::cloneOuter, () -> mac.doFinal(message)
    };
    byte[] expected = mac.doFinal(message);
    for (int v = 1; v < variants.length; v++) {
      if (!Arrays.equals(expected, variants[v].run())) {
        throw new IllegalStateException(names[v] + " does not compute HMAC-SHA-256");
      }
    }
    int calls = 2_000_000;
    double[][] ns = new double[variants.length][rounds];
    long sink = 0;
    for (int r = -1; r < rounds; r++) { // round -1 warms every variant up
      for (int v = 0; v < variants.length; v++) {
        long t0 = System.nanoTime();
        for (int i = 0; i < calls; i++) {
          sink += variants[v].run()[0];
        }
        if (r >= 0) {
          ns[v][r] = (System.nanoTime() - t0) / (double) calls;
        }
      }
    }
    System.out.println("# " + bytes + "-byte messages, " + calls + " calls per round, checksum " + sink);
    for (int v = 0; v < variants.length; v++) {
      double[] sorted = ns[v].clone();
      Arrays.sort(sorted);
      StringBuilder runs = new StringBuilder();
      for (double x : ns[v]) {
        runs.append(runs.length() == 0 ? "" : " ").append(String.format("%.1f", x));
      }
      System.out.printf("%s\t%.1f\t%s%n", names[v], sorted[rounds / 2], runs);
    }
  }
}
