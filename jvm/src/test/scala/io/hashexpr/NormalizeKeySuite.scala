package io.hashexpr

import org.apache.spark.sql.AnalysisException

/** `normalize_key` gives a key part exactly as `record_key_with` hashes it, in every execution mode. */
class NormalizeKeySuite extends SparkSuite {

  // Spellings that normalisation merges or keeps apart: blanks, case beyond ASCII, final sigma, bytes that are not
  // UTF-8, empty strings, NULL.
  private val parts = Seq("' n10156 '", "'N10156'", "'straße'", "'ΟΔΟΣ'", "'ΑΣ1Β'", "CAST(X'61FF' AS STRING)",
    "''", "'  '", "CAST(NULL AS STRING)", "'ǅ'", "'İ'")
  private val options = Seq("trim", "case=upper", "case=lower", "trim; case=upper; empty_as_null",
    "trim; empty_as_null", "salt=hub; case=upper; null_key=null", "case=keep", "")

  test("record_key of the normalised part is record_key_with of the part, and normalising twice changes nothing") {
    for (mode <- SparkSuite.Modes) inMode(mode) {
      val table = parts.zipWithIndex.map { case (p, i) => s"SELECT $i AS i, $p AS s" }.mkString(" UNION ALL ")
      for (o <- options) {
        val salt = if (o.contains("salt=hub")) "salt=hub; " else ""
        val keyOptions = o.replace("null_key=null", "null_key=hash")
        val rows = spark.sql(
          s"""SELECT hex(record_key_with('${salt}null_key=hash', normalize_key('$o', s))) AS via_part,
             |       hex(record_key_with('$keyOptions', s)) AS via_key,
             |       normalize_key('$o', normalize_key('$o', s)) <=> normalize_key('$o', s) AS idempotent
             |FROM ($table) ORDER BY i""".stripMargin).collect()
        rows.zip(parts).foreach { case (r, p) =>
          assert(r.getString(0) == r.getString(1), s"${mode.name}: $o over $p")
          assert(r.getBoolean(2), s"${mode.name}: $o twice over $p")
        }
      }
    }
  }

  test("values other than strings are returned as they are, with their type; strings keep their collation") {
    val row = one("SELECT normalize_key('trim; case=upper', 7), normalize_key('case=upper', array(' a ')), " +
      "typeof(normalize_key('trim', CAST(1.50 AS DECIMAL(4, 2))))")
    assert(row.getInt(0) == 7 && row.getSeq[String](1) == Seq(" a ") && row.getString(2) == "decimal(4,2)")
  }

  test("the options are checked as record_key_with checks them; an HMAC secret is not needed to normalise") {
    val e = intercept[AnalysisException](spark.sql("SELECT normalize_key('trim, case=upper', 'a')").collect())
    assert(e.getMessage.contains("`normalize_key` must be a valid options string") &&
      e.getMessage.contains("options are separated by ';', not ','"))
    intercept[AnalysisException](spark.sql("SELECT normalize_key(concat('tr', 'im', s), s) FROM (SELECT 'x' s)"))
    assert(one("SELECT normalize_key('algorithm=hmac-sha256; secret=absent; case=upper', 'a')").getString(0) == "A")
  }
}
