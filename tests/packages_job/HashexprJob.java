import static io.hashexpr.functions.dataset_fingerprint;
import static io.hashexpr.functions.dataset_fingerprint_with;
import static io.hashexpr.functions.record_hash;
import static io.hashexpr.functions.record_hash_by_name;
import static io.hashexpr.functions.record_hash_by_name_with;
import static io.hashexpr.functions.record_hash_with;
import static io.hashexpr.functions.record_key;
import static io.hashexpr.functions.record_key_with;
import static io.hashexpr.functions.row_position;
import static org.apache.spark.sql.functions.col;
import static org.apache.spark.sql.functions.hex;

import io.hashexpr.FingerprintOptions;
import io.hashexpr.HashOptions;
import io.hashexpr.RecordKeyOptions;

import org.apache.spark.sql.Column;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;

/**
 * A Spark job that uses hashexpr from Java, as a user's job resolved with {@code spark-submit --packages} does.
 * Prints one line per result, {@code result<TAB>name<TAB>value} (rows ordered by {@code id}, joined by commas), of
 * the table that the query in {@code args[0]} gives; the secret named {@code args[1]} keys the HMAC.
 */
public final class HashexprJob {
  private HashexprJob() {}

  public static void main(String[] args) {
    SparkSession spark = SparkSession.builder().appName("hashexpr-packages").getOrCreate();
    Dataset<Row> df = spark.sql(args[0]);
    String secret = args[1];
    RecordKeyOptions hub = RecordKeyOptions.defaults().salt("hub_customer").trim().upperCase().emptyAsNull();

    printRows(df, "record_hash", hex(record_hash("*")));
    printRows(df, "record_hash_columns", hex(record_hash(col("id"), col("name"))));
    printRows(df, "record_hash_by_name", hex(record_hash_by_name("*")));
    printRows(df, "record_hash_with", hex(record_hash_with(HashOptions.sha256(), "id", "name")));
    printRows(df, "record_hash_by_name_with", hex(record_hash_by_name_with(HashOptions.hmacSha256(secret), "*")));
    printRows(df, "record_key", hex(record_key("id")));
    printRows(df, "record_key_with", hex(record_key_with(hub, "name")));
    print("dataset_fingerprint", df.agg(dataset_fingerprint("*")).head().getString(0));
    print("dataset_fingerprint_with",
        df.agg(dataset_fingerprint_with(FingerprintOptions.lthash16(), "*")).head().getString(0));
    printRows(spark.range(0, 3, 1, 1).toDF("id"), "row_position", row_position());
    spark.stop();
  }

  private static void printRows(Dataset<Row> df, String name, Column value) {
    StringBuilder values = new StringBuilder();
    for (Row row : df.orderBy(col("id")).select(value).collectAsList()) {
      values.append(values.length() == 0 ? "" : ",").append(row.get(0));
    }
    print(name, values.toString());
  }

  private static void print(String name, String value) {
    System.out.println("result\t" + name + "\t" + value);
  }
}
