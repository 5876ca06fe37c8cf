package io.hashexpr

import org.apache.spark.sql.types.Decimal
import org.apache.spark.unsafe.types.UTF8String
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
}
