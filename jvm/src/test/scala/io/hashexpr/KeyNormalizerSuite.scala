package io.hashexpr

import java.nio.charset.StandardCharsets.UTF_8

import org.apache.spark.unsafe.types.UTF8String
import org.scalatest.funsuite.AnyFunSuite

/** KeyNormalizer on its own: the frozen Unicode 14.0.0 case table (docs/FORMAT.md, section 9), on UTF-8 bytes. */
class KeyNormalizerSuite extends AnyFunSuite {
  import KeyNormalizer.{CASE_KEEP, CASE_LOWER, CASE_UPPER}

  private def bytes(hex: String): Array[Byte] = hex.grouped(2).map(Integer.parseInt(_, 16).toByte).toArray

  private def hexOf(s: UTF8String): String = s.getBytes.map(b => f"${b & 0xff}%02x").mkString

  private def upper(s: UTF8String) = KeyNormalizer.normalize(s, false, CASE_UPPER, false)
  private def lower(s: UTF8String) = KeyNormalizer.normalize(s, false, CASE_LOWER, false)
  private def upper(s: String): String = upper(UTF8String.fromString(s)).toString
  private def lower(s: String): String = lower(UTF8String.fromString(s)).toString

  test("ASCII: letters flip, nothing else changes, and an unchanged key is returned as it is") {
    val all = UTF8String.fromBytes((0 until 128).map(_.toByte).toArray)
    val expectedUpper = (0 until 128).map(c => if (c >= 'a' && c <= 'z') c - 32 else c).map(_.toByte).toArray
    val expectedLower = (0 until 128).map(c => if (c >= 'A' && c <= 'Z') c + 32 else c).map(_.toByte).toArray
    assert(upper(all).getBytes.sameElements(expectedUpper))
    assert(lower(all).getBytes.sameElements(expectedLower))
    val done = UTF8String.fromString("C-042 / 7")
    assert(upper(done) eq done)
    assert(lower(UTF8String.fromString("c-042")).toString == "c-042")
    assert(KeyNormalizer.normalize(done, false, CASE_KEEP, false) eq done)
  }

  test("the ASCII path writes a copy: the input's buffer, and a slice's neighbours, stay as they are") {
    val buffer = "xxab-CDyy".getBytes(UTF_8)
    val slice = UTF8String.fromBytes(buffer, 2, 5)
    assert(upper(slice).toString == "AB-CD")
    assert(lower(slice).toString == "ab-cd")
    assert(new String(buffer, UTF_8) == "xxab-CDyy")
    val whole = UTF8String.fromBytes("ab\u00dfc".getBytes(UTF_8))
    assert(upper(whole).toString == "ABSSC" && whole.toString == "ab\u00dfc")
  }

  test("full mappings, including those that change the length") {
    assert(upper("stra\u00dfe") == "STRASSE")
    assert(upper("\u0149") == "\u02bcN")
    assert(upper("\u0390") == "\u0399\u0308\u0301")
    assert(upper("\ufb03") == "FFI")
    assert(lower("\u0130") == "i\u0307")
    assert(lower("\u212a") == "k")  // KELVIN SIGN: 3 bytes to 1
    assert(upper("\u0131") == "I")
    assert(lower("\u1e9e") == "\u00df")
    assert(upper("\u0345") == "\u0399")
    assert(upper("\ud801\udc28") == "\ud801\udc00")  // DESERET, 4-byte code points
    // The result grows past the input's length, or ends shorter; unchanged bytes before the first change.
    assert(upper("\u00c9\u00c9" + "\u0390" * 50 + "x") == "\u00c9\u00c9" + "\u0399\u0308\u0301" * 50 + "X")
    val shrunk = lower(UTF8String.fromString("\u00e9" + "\u212a" * 50))
    assert(shrunk.numBytes == 52 && shrunk.toString == "\u00e9" + "k" * 50)
  }

  test("mappings new in Unicode 14.0.0 are applied whatever the JDK's Unicode version") {
    Seq("\u2c5f" -> "\u2c2f", "\ua7c1" -> "\ua7c0", "\ua7d7" -> "\ua7d6", "\ud801\udd97" -> "\ud801\udd70")
      .foreach { case (small, capital) =>
        assert(upper(small) == capital)
        assert(lower(capital) == small)
      }
  }

  test("a key that does not change is returned as it is on the general path too") {
    val greek = UTF8String.fromString("\u0391\u0392\u0393 1")
    assert(upper(greek) eq greek)
    val mixed = UTF8String.fromBytes(bytes("e282ff41"))
    assert(upper(mixed) eq mixed)
  }

  test("Final_Sigma: CPython's rule with Unicode 14.0.0 Cased and Case_Ignorable") {
    val sigma = "\u03a3"
    val cases = Seq(
      "\u0391" + sigma -> "\u03b1\u03c2",
      sigma -> "\u03c3",
      sigma + "\u0391" -> "\u03c3\u03b1",
      "\u039f\u0394\u039f" + sigma + " \u0391" -> "\u03bf\u03b4\u03bf\u03c2 \u03b1",
      "\u0391" + sigma + "." -> "\u03b1\u03c2.",
      "\u0391" + sigma + ".\u0392" -> "\u03b1\u03c3.\u03b2",
      "\u0391'" + sigma -> "\u03b1'\u03c2",
      "\u0391" + sigma + "1\u0392" -> "\u03b1\u03c21\u03b2",
      "\u03911" + sigma -> "\u03b11\u03c3",
      "\u0391_" + sigma -> "\u03b1_\u03c3",
      "\u0391\u0345" + sigma -> "\u03b1\u0345\u03c2",
      "\u0345" + sigma -> "\u0345\u03c3",
      "\u0391" + sigma + "\u0345" -> "\u03b1\u03c2\u0345",
      "\u0391" + sigma + "\u02b0\u0392" -> "\u03b1\u03c3\u02b0\u03b2",
      "\u0391\u00ad" + sigma + "\u0301" -> "\u03b1\u00ad\u03c2\u0301",
      "\u0391" + sigma + sigma -> "\u03b1\u03c3\u03c2",
      "a" + sigma + "\u2c5f" -> "a\u03c3\u2c5f")
    cases.foreach { case (in, out) => assert(lower(in) == out, in.map(c => f"${c.toInt}%04X").mkString(" ")) }
    assert(upper("\u03b1\u03c2") == "\u0391\u03a3")
  }

  test("bytes that are not UTF-8 are copied and are neither Cased nor Case_Ignorable") {
    val cases = Seq(
      ("61ff", "41ff", "61ff"),
      ("c0af61", "c0af41", "c0af61"),                    // overlong '/'
      ("eda08061", "eda08041", "eda08061"),              // an encoded surrogate
      ("f490808061", "f490808041", "f490808061"),        // above U+10FFFF
      ("e282c39f", "e2825353", "e282c39f"),              // truncated, then sharp s
      ("80bf41", "80bf41", "80bf61"),                    // lone continuation bytes
      ("f09f98", "f09f98", "f09f98"),                    // truncated at the end
      ("ce91ffcea3", "ce91ffcea3", "ceb1ffcf83"),        // Alpha, junk, Sigma: not final
      ("ce91cea3ffce92", "ce91cea3ffce92", "ceb1cf82ffceb2"))  // junk after Sigma: not Cased, so final
    cases.foreach { case (in, up, low) =>
      assert(hexOf(upper(UTF8String.fromBytes(bytes(in)))) == up, in)
      assert(hexOf(lower(UTF8String.fromBytes(bytes(in)))) == low, in)
    }
  }

  test("trim, case and empty_as_null apply in that order") {
    val blank = UTF8String.fromString("   ")
    assert(KeyNormalizer.normalize(blank, true, CASE_UPPER, true) == null)
    assert(KeyNormalizer.normalize(blank, false, CASE_UPPER, true) eq blank)
    assert(KeyNormalizer.normalize(UTF8String.fromString(" \t\u00df "), true, CASE_UPPER, false).toString == "\tSS")
    assert(KeyNormalizer.normalize(UTF8String.EMPTY_UTF8, false, CASE_LOWER, true) == null)
  }
}
