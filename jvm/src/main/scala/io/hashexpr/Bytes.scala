package io.hashexpr

import java.nio.ByteBuffer

/**
 * A growing byte buffer: unsigned LEB128 variable-length integers and big-endian longs, as the diff aggregates
 * send their buffers between tasks.
 */
private[hashexpr] final class Bytes(initial: Int) {
  private var buf = new Array[Byte](initial)
  private var size = 0

  private def room(n: Int): Unit = if (size + n > buf.length) {
    buf = java.util.Arrays.copyOf(buf, math.max(buf.length * 2, size + n))
  }

  def putVarLong(value: Long): Bytes = {
    room(10)
    var v = value
    while ((v & ~0x7FL) != 0L) {
      buf(size) = ((v & 0x7F) | 0x80).toByte
      size += 1
      v >>>= 7
    }
    buf(size) = v.toByte
    size += 1
    this
  }

  def putLong(value: Long): Bytes = {
    room(8)
    var k = 56
    while (k >= 0) {
      buf(size) = (value >>> k).toByte
      size += 1
      k -= 8
    }
    this
  }

  def toArray: Array[Byte] = java.util.Arrays.copyOf(buf, size)
}

private[hashexpr] object Bytes {
  def getVarLong(in: ByteBuffer): Long = {
    var (v, shift) = (0L, 0)
    var b = 0
    do {
      b = in.get
      v |= (b & 0x7FL) << shift
      shift += 7
    } while ((b & 0x80) != 0)
    v
  }
}
