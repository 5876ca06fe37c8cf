package io.hashexpr;

import static io.hashexpr.functions.dataset_fingerprint;
import static io.hashexpr.functions.dataset_fingerprint_with;
import static io.hashexpr.functions.normalize_key;
import static io.hashexpr.functions.record_hash;
import static io.hashexpr.functions.record_hash_by_name;
import static io.hashexpr.functions.record_hash_by_name_with;
import static io.hashexpr.functions.record_hash_with;
import static io.hashexpr.functions.record_key;
import static io.hashexpr.functions.record_key_with;
import static io.hashexpr.functions.row_position;
import static org.apache.spark.sql.functions.col;
import static org.apache.spark.sql.functions.lower;

import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;

/**
 * Every function of {@code io.hashexpr.functions} and every options builder, called from Java as a Java job calls
 * them (JavaFunctionsSuite runs them). Each column is named for the SQL text that must give the same values.
 */
final class JavaFunctions {
  private JavaFunctions() {}

  /** The row-wise functions over {@code df}, with Columns and with names. */
  static Dataset<Row> rowFunctions(Dataset<Row> df) {
    RecordKeyOptions hub = RecordKeyOptions.defaults().salt("hub_customer").trim().upperCase().emptyAsNull();
    return df.select(
        record_hash("*").as("record_hash(*)"),
        record_hash(col("id"), lower(col("name"))).as("record_hash(id, lower(name))"),
        record_hash("name").as("record_hash(name)"),
        record_hash_with(HashOptions.sha256(), "id", "name").as("record_hash_with('algorithm=sha256', id, name)"),
        record_hash_with(HashOptions.hmacSha256("suite"), col("name"))
            .as("record_hash_with('algorithm=hmac-sha256; secret=suite', name)"),
        record_hash_by_name("name", "id").as("record_hash_by_name(id, name)"),
        record_hash_by_name(col("*")).as("record_hash_by_name(*)"),
        record_hash_by_name_with(HashOptions.sha256(), "*").as("record_hash_by_name_with('algorithm=sha256', *)"),
        record_hash_by_name_with(HashOptions.parse("algorithm=hmac-sha256; secret=suite"), col("id"))
            .as("record_hash_by_name_with('algorithm=hmac-sha256; secret=suite', id)"),
        record_key("name").as("record_key(name)"),
        record_key(col("id"), col("name")).as("record_key(id, name)"),
        record_key_with(hub, "name").as("record_key_with('salt=hub_customer; trim; case=upper; empty_as_null', name)"),
        record_key_with(RecordKeyOptions.defaults().nullKey(NullKeyPolicy.NULL).algorithm(HashOptions.sha256()),
            col("id"), col("name")).as("record_key_with('null_key=null; algorithm=sha256', id, name)"),
        normalize_key(hub, "name").as("normalize_key('salt=hub_customer; trim; case=upper; empty_as_null', name)"),
        normalize_key(RecordKeyOptions.defaults().lowerCase(), col("name")).as("normalize_key('case=lower', name)"));
  }

  /** The aggregates over {@code df}. */
  static Dataset<Row> fingerprints(Dataset<Row> df) {
    return df.agg(
        dataset_fingerprint("*").as("dataset_fingerprint(*)"),
        dataset_fingerprint(col("id"), col("name")).as("dataset_fingerprint(id, name)"),
        dataset_fingerprint_with(FingerprintOptions.lthash16(), "id")
            .as("dataset_fingerprint_with('algorithm=lthash16', id)"),
        dataset_fingerprint_with(FingerprintOptions.lthash16("suite"), col("*"))
            .as("dataset_fingerprint_with('algorithm=lthash16; secret=suite', *)"));
  }

  /** {@code row_position()} over {@code df}. */
  static Dataset<Row> positions(Dataset<Row> df) {
    return df.select(col("id"), row_position().as("position"));
  }

  /** The options text of every builder step, as Java renders it. */
  static String[] optionsTexts() {
    return new String[] {
      RecordKeyOptions.defaults().salt("crm").trim().lowerCase().emptyAsNull().nullKey(NullKeyPolicy.ERROR)
          .algorithm(HashOptions.hmacSha256("pii")).text(),
      HashOptions.murmur3().text(),
      HashOptions.sha256().toString(),
      FingerprintOptions.murmur3().text(),
      FingerprintOptions.parse("algorithm=lthash16").text(),
      RecordKeyOptions.parse("case=upper; salt=x").text()
    };
  }

  /** The message of the IllegalArgumentException a salt with ';' gives, or null when there is none. */
  static String refusedSalt() {
    try {
      RecordKeyOptions.defaults().salt("crm; trim");
      return null;
    } catch (IllegalArgumentException e) {
      return e.getMessage();
    }
  }
}
