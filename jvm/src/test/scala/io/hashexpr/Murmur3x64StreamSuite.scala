package io.hashexpr

import java.io.File
import java.nio.ByteBuffer
import java.nio.ByteOrder

import scala.jdk.CollectionConverters._

import com.fasterxml.jackson.databind.ObjectMapper
import org.apache.spark.unsafe.Platform
import org.scalatest.funsuite.AnyFunSuite

class Murmur3x64StreamSuite extends AnyFunSuite {

  private def digest(data: Array[Byte], seed: Int): Array[Byte] = {
    val h = new Murmur3x64Stream(seed)
    h.putBytes(data)
    h.finish()
    h.digest()
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
    vectors.elements().asScala.foreach { v =>
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
}
