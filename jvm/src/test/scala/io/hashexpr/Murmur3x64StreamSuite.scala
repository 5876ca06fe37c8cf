package io.hashexpr

import java.io.File
import java.nio.ByteBuffer
import java.nio.ByteOrder


import com.fasterxml.jackson.databind.ObjectMapper
import org.apache.commons.codec.digest.MurmurHash3
import org.apache.spark.unsafe.Platform
import org.scalatest.funsuite.AnyFunSuite

class Murmur3x64StreamSuite extends AnyFunSuite {

  private def digest(data: Array[Byte], seed: Int): Array[Byte] = {
    val h = new Murmur3x64Stream(seed)
    h.putBytes(data)
    h.finish()
    h.digest()
  }

  /** The digest from an independent implementation (commons-codec, which zero-extends the seed as SMHasher). */
  private def reference(data: Array[Byte], seed: Int): Array[Byte] = {
    val h = MurmurHash3.hash128x64(data, 0, data.length, seed)
    ByteBuffer.allocate(16).order(ByteOrder.LITTLE_ENDIAN).putLong(h(0)).putLong(h(1)).array()
  }

  private def le(v: Long, n: Int): Array[Byte] =
    ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putLong(v).array().take(n)

  /** Off-heap memory holding exactly `data`, freed after `f`. */
  private def withOffHeap[T](data: Array[Byte])(f: Long => T): T = {
    val address = Platform.allocateMemory(math.max(data.length, 1).toLong)
    try {
      Platform.copyMemory(data, Platform.BYTE_ARRAY_OFFSET, null, address, data.length.toLong)
      f(address)
    } finally Platform.freeMemory(address)
  }

  private def hex(b: Array[Byte]): String = b.map(x => f"${x & 0xff}%02x").mkString
  private def unhex(s: String): Array[Byte] = s.grouped(2).map(Integer.parseInt(_, 16).toByte).toArray

  test("SMHasher verification value 0x6384BA69") {
    val all = (0 until 256).flatMap { i =>
      digest(Array.tabulate(i)(_.toByte), 256 - i)
    }.toArray
    val result = ByteBuffer.wrap(digest(all, 0)).order(ByteOrder.LITTLE_ENDIAN).getInt
    assert(result == 0x6384BA69)
  }

  test("published vectors (SMHasher, Guava, commons-codec, mmh3)") {
    val ascii = (s: String) => s.getBytes("US-ASCII")
    assert(hex(digest(Array.emptyByteArray, 0)) == "00000000000000000000000000000000")
    assert(hex(digest(Array.emptyByteArray, 42)) == "23851bfa7da72af0b9cb11da106601d1")
    assert(hex(digest(ascii("foo"), 0)) == "6145f501578671e2877dba2be487af7e")
    assert(hex(digest(ascii("hello"), 1)) == "108daeadf5df8da735019020ef008912")
    assert(hex(digest(ascii("The quick brown fox jumps over the lazy dog"), 0)) ==
      "6c1b07bc7bbc4be347939ac4a93c437a")
    // A seed >= 2^31: zero-extended as in the C reference (Guava sign-extends and differs here).
    assert(hex(digest(ascii("The quick brown fox jumps over the lazy dog"), 0x9747B28C)) ==
      "213163d23b7f8a73e516c07e727345f9")
    assert(hex(digest(Array.emptyByteArray, -1)) == "ecc93b9d4ddff16a6b44e61e12217485")
  }

  test("vectors computed with mmh3 (spec/murmur3-vectors.json): every tail length, long inputs, seeds") {
    val root = new File(sys.props.getOrElse("hashexpr.root", ".."))
    val vectors = new ObjectMapper().readTree(new File(root, "spec/murmur3-vectors.json")).get("vectors")
    assert(vectors.size() >= 40)
    val tails = scala.collection.mutable.Set.empty[Int]
    TestJson.elements(vectors).foreach { v =>
      val input = unhex(v.get("input_hex").asText())
      val seed = v.get("seed").asLong().toInt
      tails += input.length % 16
      assert(hex(digest(input, seed)) == v.get("digest_hex").asText(), s"input ${v.get("input_hex")} seed $seed")
    }
    assert(tails.size == 16)
  }

  test("streaming in any chunking equals one-shot hashing, numbers write little-endian bytes") {
    val rnd = new scala.util.Random(7)
    (0 until 300).foreach { n =>
      val data = Array.fill(n)(rnd.nextInt().toByte)
      val expected = hex(digest(data, 12345))
      val h = new Murmur3x64Stream(12345)
      var i = 0
      while (i < n) {
        val k = math.min(n - i, rnd.nextInt(20) + 1)
        rnd.nextInt(3) match {
          case 0 if k >= 8 =>
            h.putLong(ByteBuffer.wrap(data, i, 8).order(ByteOrder.LITTLE_ENDIAN).getLong); i += 8
          case 1 if k >= 4 =>
            h.putInt(ByteBuffer.wrap(data, i, 4).order(ByteOrder.LITTLE_ENDIAN).getInt); i += 4
          case _ =>
            h.putBytes(data, Platform.BYTE_ARRAY_OFFSET + i, k); i += k
        }
      }
      h.finish()
      assert(hex(h.digest()) == expected, s"length $n")
    }
  }

  test("reset starts over") {
    val h = new Murmur3x64Stream(0)
    h.putBytes("garbage".getBytes("US-ASCII"))
    h.reset()
    h.putBytes("foo".getBytes("US-ASCII"))
    h.finish()
    assert(hex(h.digest()) == "6145f501578671e2877dba2be487af7e")
  }

  test("every put kind, interleaved at random, hashes as the concatenated bytes (commons-codec)") {
    val rnd = new scala.util.Random(11)
    // Run lengths around the copy limit, block size and buffer size, and longer.
    val lengths = Seq(0, 1, 3, 4, 7, 8, 9, 15, 16, 17, 31, 32, 33, 47, 48, 63, 64, 255, 256, 257, 600)
    (0 until 400).foreach { round =>
      val seed = rnd.nextInt()
      val h = new Murmur3x64Stream(seed)
      val expected = new java.io.ByteArrayOutputStream
      val target = rnd.nextInt(3000)
      while (expected.size() < target) {
        rnd.nextInt(7) match {
          case 0 =>
            val b = rnd.nextInt(256)
            h.putByte(b); expected.write(b)
          case 1 =>
            val v = rnd.nextInt()
            h.putInt(v); expected.write(le(v, 4))
          case 2 =>
            val v = rnd.nextLong()
            h.putLong(v); expected.write(le(v, 8))
          case 3 =>
            val v = rnd.nextLong()
            val n = rnd.nextInt(8) + 1
            h.put(v, n); expected.write(le(v, n))
          case k =>
            val len = if (rnd.nextBoolean()) lengths(rnd.nextInt(lengths.length)) else rnd.nextInt(100)
            val data = Array.fill(len)(rnd.nextInt().toByte)
            k match {
              case 4 => h.putBytes(data)
              case 5 =>
                // A slice of a larger array: bytes around it must not count.
                val padded = Array.fill(len + 16)(rnd.nextInt().toByte)
                val at = rnd.nextInt(9)
                System.arraycopy(data, 0, padded, at, len)
                h.putBytes(padded, Platform.BYTE_ARRAY_OFFSET + at, len)
              case _ => withOffHeap(data)(address => h.putBytes(null, address, len))
            }
            expected.write(data)
        }
      }
      h.finish()
      assert(hex(h.digest()) == hex(reference(expected.toByteArray, seed)), s"round $round")
    }
  }

  test("byte runs of every length after every pending length, on and off heap") {
    val rnd = new scala.util.Random(5)
    val data = Array.fill(600)(rnd.nextInt().toByte)
    // Every alignment, and every pending length up to and past the buffer's capacity (256).
    val prefixes = (0 to 48) ++ (200 to 300)
    val lengths = (0 to 40) ++ Seq(63, 64, 65, 255, 256, 257, 270)
    withOffHeap(data) { address =>
      for (prefix <- prefixes; len <- lengths) {
        val expected = hex(reference(data.take(prefix + len), 3))
        val onHeap = new Murmur3x64Stream(3)
        onHeap.putBytes(data, Platform.BYTE_ARRAY_OFFSET, prefix)
        onHeap.putBytes(data, Platform.BYTE_ARRAY_OFFSET + prefix, len)
        onHeap.finish()
        val offHeap = new Murmur3x64Stream(3)
        (0 until prefix).foreach(i => offHeap.putByte(data(i)))
        offHeap.putBytes(null, address + prefix, len)
        offHeap.finish()
        assert(hex(onHeap.digest()) == expected, s"on heap, $prefix then $len")
        assert(hex(offHeap.digest()) == expected, s"off heap, $prefix then $len")
      }
    }
  }

  test("nested levels: sub-streams hash alone, their 128-bit sum resumes the outer stream") {
    final class Levels(seed: Int) extends Murmur3x64Stream(seed) {
      def push(): Unit = pushLevel()
      def entry(write: => Unit): Unit = { restartSubStream(); write; addSubStreamToLevel() }
      def pop(): Unit = popLevel()
    }
    val seed = 0x68617368
    val rnd = new scala.util.Random(3)

    // Writes a random stream to `h` (nested levels up to `depth`, runs up to `maxRun` bytes) and returns the bytes
    // it stands for.
    def write(h: Levels, depth: Int, maxRun: Int): Array[Byte] = {
      val out = new java.io.ByteArrayOutputStream
      (0 until rnd.nextInt(6)).foreach { _ =>
        if (depth > 0 && rnd.nextInt(3) == 0) {
          h.push()
          var sum = BigInt(0)
          // Few entries of any length and depth, or many short flat ones that fill the level's part of the buffer.
          val (entries, entryDepth, entryRun) =
            if (rnd.nextInt(3) == 0) (rnd.nextInt(200), 0, 20) else (rnd.nextInt(4), depth - 1, 300)
          (0 until entries).foreach { _ =>
            var bytes: Array[Byte] = null
            h.entry { bytes = write(h, entryDepth, entryRun) }
            val d = reference(bytes, seed)
            sum += BigInt(1, d.reverse)
          }
          h.pop()
          val sumBytes = (sum.mod(BigInt(1) << 128) + (BigInt(1) << 128)).toByteArray.takeRight(16).reverse
          out.write(sumBytes)
        } else {
          val data = Array.fill(rnd.nextInt(maxRun))(rnd.nextInt().toByte)
          if (rnd.nextBoolean()) h.putBytes(data) else data.foreach(b => h.putByte(b))
          out.write(data)
        }
      }
      out.toByteArray
    }

    (0 until 300).foreach { round =>
      val h = new Levels(seed)
      val bytes = write(h, 3, 300)
      h.finish()
      assert(hex(h.digest()) == hex(reference(bytes, seed)), s"round $round")
    }
  }
}
