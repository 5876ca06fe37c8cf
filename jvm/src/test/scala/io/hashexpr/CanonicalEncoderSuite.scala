package io.hashexpr

import java.io.ByteArrayOutputStream
import java.nio.{ByteBuffer, ByteOrder}

import scala.collection.mutable

import org.apache.commons.codec.digest.MurmurHash3
import org.apache.spark.sql.types.Decimal
import org.apache.spark.unsafe.Platform
import org.apache.spark.unsafe.types.{CalendarInterval, UTF8String}
import org.scalatest.funsuite.AnyFunSuite

/** The encoder's bytes for values that SQL literals cannot produce. */
class CanonicalEncoderSuite extends AnyFunSuite {

  private def hash(write: CanonicalEncoder => Unit): String = {
    val e = new CanonicalEncoder
    e.beginRecord(1)
    write(e)
    e.finishRecord().map(b => f"${b & 0xff}%02x").mkString
  }

  test("every NaN bit pattern hashes as the canonical NaN, float or double") {
    val nans = Seq(0x7ff8000000000000L, 0xfff8000000000000L, 0x7ff0000000000001L, 0xffffffffffffffffL)
      .map(java.lang.Double.longBitsToDouble)
    val expected = hash(_.putDouble(Double.NaN))
    nans.foreach(n => assert(hash(_.putDouble(n)) == expected))
    assert(hash(_.putFloat(java.lang.Float.intBitsToFloat(0x7fc00001))) == expected)
    assert(hash(_.putFloat(java.lang.Float.intBitsToFloat(0xff800001))) == expected)
  }

  test("a decimal stored as a BigDecimal and one stored as a long hash alike") {
    val compact = Decimal(12345L, 10, 2)
    val wide = Decimal(new java.math.BigDecimal("123.4500000000"), 38, 10)
    assert(hash(_.putDecimal(compact)) == hash(_.putDecimal(wide)))
    val huge = Decimal(new java.math.BigDecimal("-99999999999999999999999999999999999999"), 38, 0)
    val hugeScaled = Decimal(new java.math.BigDecimal("-9999999999999999999999999999999999999.9"), 38, 1)
    assert(hash(_.putDecimal(huge)) != hash(_.putDecimal(hugeScaled)))
  }

  test("an off-heap string hashes as the same bytes on heap") {
    val bytes = "zero-copy ✓ strings".getBytes("UTF-8")
    val address = org.apache.spark.unsafe.Platform.allocateMemory(bytes.length)
    try {
      org.apache.spark.unsafe.Platform.copyMemory(bytes, org.apache.spark.unsafe.Platform.BYTE_ARRAY_OFFSET,
        null, address, bytes.length)
      val offHeap = UTF8String.fromAddress(null, address, bytes.length)
      assert(hash(_.putString(offHeap)) == hash(_.putString(UTF8String.fromBytes(bytes))))
    } finally org.apache.spark.unsafe.Platform.freeMemory(address)
  }

  test("random sequences of every kind hash as their docs/FORMAT.md bytes (hashed by commons-codec)") {
    val rnd = new scala.util.Random(17)
    val offHeap = mutable.ArrayBuffer.empty[Long]

    def le(v: Long, n: Int): Array[Byte] =
      ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putLong(v).array().take(n)
    def u8(v: Int): Array[Byte] = Array(v.toByte)
    def reference(data: Array[Byte]): Array[Byte] = {
      val h = MurmurHash3.hash128x64(data, 0, data.length, CanonicalEncoder.SEED)
      le(h(0), 8) ++ le(h(1), 8)
    }
    def randomBytes(): Array[Byte] = {
      val len = if (rnd.nextInt(4) == 0) rnd.nextInt(600) else rnd.nextInt(40)
      Array.fill(len)(rnd.nextInt().toByte)
    }
    def decimalBytes(value: java.math.BigDecimal): Array[Byte] = {
      val normal = if (value.signum == 0) java.math.BigDecimal.ZERO else value.stripTrailingZeros()
      val unscaled = normal.unscaledValue.toByteArray.reverse
      u8(0x04) ++ le(normal.scale, 4) ++ u8(unscaled.length) ++ unscaled
    }

    // Writes one random value to `e` and returns its expected bytes.
    def value(e: CanonicalEncoder, depth: Int): Array[Byte] = rnd.nextInt(if (depth > 0) 19 else 16) match {
      case 0 => e.putNull(); u8(0x00)
      case 1 =>
        val v = rnd.nextBoolean()
        e.putBoolean(v); u8(0x01) ++ u8(if (v) 1 else 0)
      case 2 =>
        val v = rnd.nextLong() >> rnd.nextInt(64)
        e.putIntegral(v); u8(0x02) ++ le(v, 8)
      case 3 =>
        val v = rnd.nextInt(4) match {
          case 0 => -0.0
          case 1 => Double.NaN
          case _ => rnd.nextGaussian() * 1e6
        }
        e.putDouble(v)
        val bits = if (v.isNaN) 0x7ff8000000000000L else java.lang.Double.doubleToLongBits(v + 0.0)
        u8(0x03) ++ le(bits, 8)
      case 4 =>
        // Compact decimals, trailing zeros included.
        val scale = rnd.nextInt(19)
        val zeros = rnd.nextInt(4)
        val unscaled = (rnd.nextLong() % 100000000000000L) * math.pow(10, zeros).toLong
        e.putDecimal(Decimal(unscaled, 18, scale))
        decimalBytes(java.math.BigDecimal.valueOf(unscaled, scale))
      case 5 =>
        val scale = rnd.nextInt(39)
        val unscaled = new java.math.BigInteger(rnd.nextInt(100) + 1, rnd.self)
          .multiply(java.math.BigInteger.TEN.pow(rnd.nextInt(8)))
        val v = new java.math.BigDecimal(if (rnd.nextBoolean()) unscaled.negate() else unscaled, scale)
        e.putDecimal(Decimal(v, 38, scale))
        decimalBytes(v)
      case 6 =>
        val b = randomBytes()
        val s = if (rnd.nextBoolean()) UTF8String.fromBytes(b) else {
          val address = Platform.allocateMemory(math.max(b.length, 1).toLong)
          offHeap += address
          Platform.copyMemory(b, Platform.BYTE_ARRAY_OFFSET, null, address, b.length.toLong)
          UTF8String.fromAddress(null, address, b.length)
        }
        e.putString(s); u8(0x05) ++ le(b.length, 4) ++ b
      case 7 =>
        val b = randomBytes()
        e.putBinary(b); u8(0x06) ++ le(b.length, 4) ++ b
      case 8 =>
        val v = rnd.nextInt()
        e.putDate(v); u8(0x07) ++ le(v, 4)
      case 9 =>
        val v = rnd.nextLong()
        e.putTimestamp(v); u8(0x08) ++ le(v, 8)
      case 10 =>
        val v = rnd.nextLong()
        e.putTimestampNtz(v); u8(0x09) ++ le(v, 8)
      case 11 =>
        val v = rnd.nextLong()
        e.putDayTimeInterval(v); u8(0x0A) ++ le(v, 8)
      case 12 =>
        val v = rnd.nextInt()
        e.putYearMonthInterval(v); u8(0x0B) ++ le(v, 4)
      case 13 =>
        val v = new CalendarInterval(rnd.nextInt(), rnd.nextInt(), rnd.nextLong())
        e.putCalendarInterval(v); u8(0x0C) ++ le(v.months, 4) ++ le(v.days, 4) ++ le(v.microseconds, 8)
      case 14 =>
        val name = randomBytes()
        val key = randomBytes()
        e.putCollatedString(name, key)
        u8(0x0D) ++ le(name.length, 4) ++ name ++ le(key.length, 4) ++ key
      case 15 =>
        // Headers only: the encoder does not count elements.
        val n = rnd.nextInt()
        if (rnd.nextBoolean()) { e.beginArray(n); u8(0x10) ++ le(n, 4) } else { e.beginStruct(n); u8(0x12) ++ le(n, 4) }
      case _ =>
        val n = rnd.nextInt(5)
        e.beginMap(n)
        var sum = BigInt(0)
        (0 until n).foreach { _ =>
          e.beginEntry()
          val entry = value(e, depth - 1) ++ value(e, depth - 1)
          e.endEntry()
          sum += BigInt(1, reference(entry).reverse)
        }
        e.endMap()
        u8(0x11) ++ le(n, 4) ++ (sum.mod(BigInt(1) << 128) + (BigInt(1) << 128)).toByteArray.takeRight(16).reverse
    }

    val e = new CanonicalEncoder
    try {
      (0 until 500).foreach { round =>
        val expected = new ByteArrayOutputStream
        val values = rnd.nextInt(40)
        val digest = rnd.nextInt(3) match {
          case 0 =>
            e.beginRecord(values)
            expected.write(u8(0x01) ++ le(values, 4))
            (0 until values).foreach(_ => expected.write(value(e, 2)))
            e.finishRecord()
          case 1 =>
            e.beginRecordByName()
            expected.write(u8(0x81))
            (0 until values).foreach { _ =>
              val name = randomBytes()
              e.putFieldName(name)
              expected.write(u8(0x05) ++ le(name.length, 4) ++ name ++ value(e, 2))
            }
            expected.write(u8(0x00))
            e.finishRecordByName()
          case _ =>
            val salt = randomBytes()
            e.beginKey(salt, values)
            expected.write(u8(0x82) ++ u8(0x05) ++ le(salt.length, 4) ++ salt ++ le(values, 4))
            (0 until values).foreach(_ => expected.write(value(e, 2)))
            e.finishKey(CanonicalEncoder.NULL_KEY_HASH)
        }
        assert(hex(digest) == hex(reference(expected.toByteArray)), s"round $round")
      }
    } finally offHeap.foreach(Platform.freeMemory)
  }

  private def hex(b: Array[Byte]): String = b.map(x => f"${x & 0xff}%02x").mkString
}
