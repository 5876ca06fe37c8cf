//! Replays every frozen vector file of spec/ against the engine: each vector's JSON values (the rendering of
//! spec/generate_vectors.py) become Arrow arrays of the Arrow type Spark reads back as the vector's type, and
//! the engine must give the vector's bytes. Types without an Arrow counterpart (intervals, collations, and
//! VOID where the type's name is hashed) are counted, and the counts are pinned, so no vector is skipped
//! silently.

use std::sync::Arc;

use arrow_array::builder::BooleanBuilder;
use arrow_array::types::*;
use arrow_array::*;
use arrow_buffer::{NullBuffer, OffsetBuffer};
use arrow_schema::{DataType, Field, Fields, TimeUnit};
use hashexpr_core::case::Case;
use hashexpr_core::fingerprint::Fingerprinter;
use hashexpr_core::{spark_types, Algorithm, Columns, KeyOptions, NullKey, Record};
use serde_json::Value;

fn spec(name: &str) -> Value {
    let path = format!("{}/../../spec/{name}", env!("CARGO_MANIFEST_DIR"));
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn unhex(text: &str) -> Vec<u8> {
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).unwrap())
        .collect()
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Why a vector has no Arrow form.
#[derive(Debug)]
struct NoArrow;

/// A Spark type (JSON form of `DataType`, or its DDL name) as the Arrow type that Spark reads as it.
fn arrow_type(spark: &Value) -> Result<DataType, NoArrow> {
    if let Some(name) = spark.as_str() {
        return arrow_type_of_name(name);
    }
    match spark["type"].as_str().unwrap() {
        "array" => Ok(DataType::List(Arc::new(Field::new(
            "element",
            arrow_type(&spark["elementType"])?,
            true,
        )))),
        "map" => Ok(map_type(
            arrow_type(&spark["keyType"])?,
            arrow_type(&spark["valueType"])?,
        )),
        "struct" => Ok(DataType::Struct(
            spark["fields"]
                .as_array()
                .unwrap()
                .iter()
                .map(|f| {
                    Ok(Field::new(
                        f["name"].as_str().unwrap(),
                        arrow_type(&f["type"])?,
                        true,
                    ))
                })
                .collect::<Result<Fields, NoArrow>>()?,
        )),
        _ => Err(NoArrow),
    }
}

fn map_type(key: DataType, value: DataType) -> DataType {
    let entries = Fields::from(vec![
        Field::new("key", key, false),
        Field::new("value", value, true),
    ]);
    DataType::Map(
        Arc::new(Field::new("entries", DataType::Struct(entries), false)),
        false,
    )
}

fn arrow_type_of_name(name: &str) -> Result<DataType, NoArrow> {
    Ok(match name {
        "boolean" => DataType::Boolean,
        "byte" | "tinyint" => DataType::Int8,
        "short" | "smallint" => DataType::Int16,
        "integer" | "int" => DataType::Int32,
        "long" | "bigint" => DataType::Int64,
        "float" => DataType::Float32,
        "double" => DataType::Float64,
        "string" => DataType::Utf8,
        "binary" => DataType::Binary,
        "date" => DataType::Date32,
        "timestamp" => DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
        "timestamp_ntz" => DataType::Timestamp(TimeUnit::Microsecond, None),
        "void" => DataType::Null,
        _ if name.starts_with("decimal(") => {
            let inner = &name["decimal(".len()..name.len() - 1];
            let (p, s) = inner.split_once(',').unwrap();
            DataType::Decimal128(p.trim().parse().unwrap(), s.trim().parse().unwrap())
        }
        _ if name.starts_with("map<") => {
            let inner = &name["map<".len()..name.len() - 1];
            let (k, v) = inner.split_once(',').unwrap();
            map_type(arrow_type_of_name(k)?, arrow_type_of_name(v)?)
        }
        _ => return Err(NoArrow),
    })
}

fn nulls(values: &[&Value]) -> Option<NullBuffer> {
    let valid: Vec<bool> = values.iter().map(|v| !v.is_null()).collect();
    valid.contains(&false).then(|| NullBuffer::from(valid))
}

fn float(value: &Value) -> f64 {
    match value {
        Value::String(s) => match s.as_str() {
            "NaN" => f64::NAN,
            "Infinity" => f64::INFINITY,
            "-Infinity" => f64::NEG_INFINITY,
            "-0.0" => -0.0,
            other => panic!("float {other}"),
        },
        other => other.as_f64().unwrap(),
    }
}

fn string_bytes(value: &Value) -> Vec<u8> {
    match value {
        Value::String(s) => s.as_bytes().to_vec(),
        Value::Object(o) => unhex(o["utf8_hex"].as_str().unwrap()),
        other => panic!("string {other}"),
    }
}

fn unscaled(text: &str) -> i128 {
    text.replace('.', "").parse().unwrap()
}

fn offsets(lengths: impl Iterator<Item = usize>) -> OffsetBuffer<i32> {
    OffsetBuffer::from_lengths(lengths)
}

/// The Arrow array of `values` (JSON renderings) of the Arrow type `data_type`.
fn array(data_type: &DataType, values: &[&Value]) -> ArrayRef {
    let n = nulls(values);
    macro_rules! primitive {
        ($t:ty, $f:expr) => {
            Arc::new(PrimitiveArray::<$t>::from(
                values
                    .iter()
                    .map(|v| (!v.is_null()).then(|| $f(*v)))
                    .collect::<Vec<_>>(),
            ))
        };
    }
    match data_type {
        DataType::Null => Arc::new(NullArray::new(values.len())),
        DataType::Boolean => {
            let mut builder = BooleanBuilder::new();
            values
                .iter()
                .for_each(|v| builder.append_option(v.as_bool()));
            Arc::new(builder.finish())
        }
        DataType::Int8 => primitive!(Int8Type, |v: &Value| v.as_i64().unwrap() as i8),
        DataType::Int16 => primitive!(Int16Type, |v: &Value| v.as_i64().unwrap() as i16),
        DataType::Int32 => primitive!(Int32Type, |v: &Value| v.as_i64().unwrap() as i32),
        DataType::Int64 => primitive!(Int64Type, |v: &Value| v.as_i64().unwrap()),
        DataType::Float32 => primitive!(Float32Type, |v: &Value| float(v) as f32),
        DataType::Float64 => primitive!(Float64Type, float),
        DataType::Date32 => primitive!(Date32Type, |v: &Value| v.as_i64().unwrap() as i32),
        DataType::Timestamp(_, tz) => {
            let micros: TimestampMicrosecondArray = values.iter().map(|v| v.as_i64()).collect();
            Arc::new(micros.with_timezone_opt(tz.clone()))
        }
        DataType::Decimal128(p, s) => {
            let decimals: Decimal128Array =
                values.iter().map(|v| v.as_str().map(unscaled)).collect();
            Arc::new(decimals.with_precision_and_scale(*p, *s).unwrap())
        }
        DataType::Utf8 | DataType::Binary => {
            let bytes: Vec<Vec<u8>> = values
                .iter()
                .map(|v| match v {
                    Value::Null => Vec::new(),
                    _ if *data_type == DataType::Binary => unhex(v.as_str().unwrap()),
                    _ => string_bytes(v),
                })
                .collect();
            let offsets = offsets(bytes.iter().map(Vec::len));
            let data = bytes.concat().into();
            if *data_type == DataType::Binary {
                Arc::new(BinaryArray::new(offsets, data, n))
            } else {
                // SAFETY: the engine reads a string's bytes and never its `str`, and Spark strings may hold
                // bytes that are not UTF-8 (the vectors' `utf8_hex` values), which these must carry as they are.
                Arc::new(unsafe { StringArray::new_unchecked(offsets, data, n) })
            }
        }
        DataType::List(field) => {
            let lists: Vec<&[Value]> = values
                .iter()
                .map(|v| v.as_array().map_or(&[][..], |a| &a[..]))
                .collect();
            let elements: Vec<&Value> = lists.iter().flat_map(|l| l.iter()).collect();
            let child = array(field.data_type(), &elements);
            Arc::new(ListArray::new(
                field.clone(),
                offsets(lists.iter().map(|l| l.len())),
                child,
                n,
            ))
        }
        DataType::Map(entries, _) => {
            let DataType::Struct(fields) = entries.data_type() else {
                unreachable!()
            };
            let maps: Vec<&[Value]> = values
                .iter()
                .map(|v| v.as_array().map_or(&[][..], |a| &a[..]))
                .collect();
            let keys: Vec<&Value> = maps.iter().flat_map(|m| m.iter().map(|e| &e[0])).collect();
            let items: Vec<&Value> = maps.iter().flat_map(|m| m.iter().map(|e| &e[1])).collect();
            let children = vec![
                array(fields[0].data_type(), &keys),
                array(fields[1].data_type(), &items),
            ];
            let entries_array = StructArray::new(fields.clone(), children, None);
            Arc::new(MapArray::new(
                entries.clone(),
                offsets(maps.iter().map(|m| m.len())),
                entries_array,
                n,
                false,
            ))
        }
        DataType::Struct(fields) => {
            if fields.is_empty() {
                return Arc::new(StructArray::new_empty_fields(values.len(), n));
            }
            let children = fields
                .iter()
                .enumerate()
                .map(|(i, f)| {
                    let field_values: Vec<&Value> = values
                        .iter()
                        .map(|v| v.as_array().map_or(&Value::Null, |a| &a[i]))
                        .collect();
                    array(f.data_type(), &field_values)
                })
                .collect();
            Arc::new(StructArray::new(fields.clone(), children, n))
        }
        other => panic!("no JSON rendering for {other}"),
    }
}

/// One row of arguments as single-row columns: names, arrays.
fn arguments(args: &[Value]) -> Result<(Vec<String>, Vec<ArrayRef>), NoArrow> {
    let mut names = Vec::new();
    let mut arrays = Vec::new();
    for (i, arg) in args.iter().enumerate() {
        let t = arrow_type(&arg["type"])?;
        names.push(
            arg.get("name")
                .and_then(Value::as_str)
                .map_or(format!("c{i}"), str::to_string),
        );
        arrays.push(array(&t, &[&arg["value"]]));
    }
    Ok((names, arrays))
}

fn hash_one(
    record: &Record,
    names: &[String],
    arrays: &[ArrayRef],
) -> Result<Option<String>, String> {
    let columns = Columns::new(names, arrays).map_err(|e| e.to_string())?;
    let mut out = vec![0u8; record.width()];
    let mut valid = [false];
    record
        .hash_batch(&columns, &mut out, &mut valid)
        .map_err(|e| e.to_string())?;
    Ok(valid[0].then(|| hex(&out)))
}

fn key_options(options: &Value) -> KeyOptions {
    let mut key = KeyOptions::default();
    for (name, value) in options.as_object().unwrap() {
        match name.as_str() {
            "salt" => key.salt = value.as_str().unwrap().as_bytes().to_vec(),
            "trim" => key.trim = value.as_bool().unwrap(),
            "empty_as_null" => key.empty_as_null = value.as_bool().unwrap(),
            "case" => {
                key.case = Some(if value == "upper" {
                    Case::Upper
                } else {
                    Case::Lower
                })
            }
            "null_key" => key.null_key = NullKey::parse(value.as_str().unwrap()).unwrap(),
            other => panic!("key option {other}"),
        }
    }
    key
}

fn types_of(names: &[String], arrays: &[ArrayRef]) -> Vec<hashexpr_core::SparkType> {
    let fields: Vec<_> = names
        .iter()
        .cloned()
        .zip(arrays.iter().map(|a| a.data_type().clone()))
        .collect();
    spark_types(&fields).unwrap()
}

/// Counts of replayed and unrepresentable vectors.
#[derive(Default, Debug, PartialEq)]
struct Tally {
    replayed: usize,
    no_arrow: usize,
}

fn replay_records(file: &str, by_name: bool, algorithms: &[&str]) -> Tally {
    let spec = spec(file);
    let mut tally = Tally::default();
    for vector in spec["vectors"].as_array().unwrap() {
        let Ok((names, arrays)) = arguments(vector["args"].as_array().unwrap()) else {
            tally.no_arrow += 1;
            continue;
        };
        for &algorithm in algorithms {
            let algorithm_value = Algorithm::new(algorithm, None).unwrap();
            let record = if by_name {
                Record::by_name(&names, algorithm_value).unwrap()
            } else {
                Record::positional(algorithm_value)
            };
            let got = hash_one(&record, &names, &arrays).unwrap().unwrap();
            if algorithm == "murmur3" {
                assert_eq!(
                    got,
                    vector["hex"].as_str().unwrap(),
                    "{file} {}",
                    vector["name"]
                );
            } else {
                assert_eq!(got.len(), 64);
            }
        }
        tally.replayed += 1;
    }
    tally
}

#[test]
fn replays_vectors_v1() {
    // The intervals, collated strings and calendar intervals of the file have no Arrow type Spark reads so.
    let tally = replay_records("vectors-v1.json", false, &["murmur3", "sha256"]);
    assert_eq!(
        tally,
        Tally {
            replayed: 170,
            no_arrow: 24
        }
    );
}

#[test]
fn replays_by_name_vectors() {
    // One vector has an interval.
    let tally = replay_records("by-name-vectors-v1.json", true, &["murmur3"]);
    assert_eq!(
        tally,
        Tally {
            replayed: 37,
            no_arrow: 1
        }
    );
}

#[test]
fn replays_key_vectors() {
    let spec = spec("key-vectors-v1.json");
    let mut tally = Tally::default();
    for vector in spec["vectors"].as_array().unwrap() {
        let Ok((names, arrays)) = arguments(vector["args"].as_array().unwrap()) else {
            tally.no_arrow += 1;
            continue;
        };
        let record = Record::key(
            key_options(&vector["options"]),
            &types_of(&names, &arrays),
            Algorithm::Murmur3,
        );
        match hash_one(&record, &names, &arrays) {
            Ok(got) => assert_eq!(got.as_deref(), vector["hex"].as_str(), "{}", vector["name"]),
            Err(error) => {
                let expected = vector["error"]
                    .as_str()
                    .unwrap_or_else(|| panic!("{}: {error}", vector["name"]));
                assert!(
                    error.contains("every key part is NULL"),
                    "{}: {error} vs {expected}",
                    vector["name"]
                );
            }
        }
        tally.replayed += 1;
    }
    // One vector has a collated string.
    assert_eq!(
        tally,
        Tally {
            replayed: 186,
            no_arrow: 1
        }
    );
}

fn parse_options(text: &str) -> Vec<(String, String)> {
    text.split(';')
        .map(str::trim)
        .filter(|item| !item.is_empty())
        .map(|item| {
            let (k, v) = item.split_once('=').unwrap_or((item, "true"));
            (k.trim().to_lowercase(), v.trim().to_string())
        })
        .collect()
}

#[test]
fn replays_sha256_vectors() {
    let spec = spec("sha256-vectors-v1.json");
    let mut tally = Tally::default();
    for vector in spec["vectors"].as_array().unwrap() {
        let Ok((names, arrays)) = arguments(vector["args"].as_array().unwrap()) else {
            tally.no_arrow += 1;
            continue;
        };
        let options = parse_options(vector["options"].as_str().unwrap());
        let key = vector["key"]
            .as_str()
            .map(|k| spec["keys"][k].as_str().unwrap().as_bytes().to_vec());
        let name = options
            .iter()
            .find(|(k, _)| k == "algorithm")
            .unwrap()
            .1
            .to_lowercase();
        let algorithm = Algorithm::new(&name, key.as_deref()).unwrap();
        let record = match vector["function"].as_str().unwrap() {
            "record_hash_with" => Record::positional(algorithm),
            "record_hash_by_name_with" => Record::by_name(&names, algorithm).unwrap(),
            "record_key_with" => {
                let mut key_options = KeyOptions::default();
                for (k, v) in &options {
                    match k.as_str() {
                        "salt" => key_options.salt = v.as_bytes().to_vec(),
                        "trim" => key_options.trim = true,
                        "empty_as_null" => key_options.empty_as_null = true,
                        "case" => {
                            key_options.case = Some(if v == "upper" {
                                Case::Upper
                            } else {
                                Case::Lower
                            })
                        }
                        "null_key" => key_options.null_key = NullKey::parse(v).unwrap(),
                        _ => {}
                    }
                }
                Record::key(key_options, &types_of(&names, &arrays), algorithm)
            }
            other => panic!("function {other}"),
        };
        let got = hash_one(&record, &names, &arrays).unwrap().unwrap();
        assert_eq!(got, vector["hex"].as_str().unwrap(), "{}", vector["name"]);
        tally.replayed += 1;
    }
    assert_eq!(
        tally,
        Tally {
            replayed: 15,
            no_arrow: 0
        }
    );
}

#[test]
fn replays_fingerprint_vectors() {
    let spec = spec("fingerprint-vectors-v1.json");
    let mut tally = Tally::default();
    'vectors: for vector in spec["vectors"].as_array().unwrap() {
        let columns = vector["columns"].as_array().unwrap();
        let rows = vector["rows"].as_array().unwrap();
        let mut names = Vec::new();
        let mut arrays = Vec::new();
        for (i, column) in columns.iter().enumerate() {
            // A collated string has no Arrow type (mixed_kinds); nor has VOID, whose name the schema digest
            // holds: the null type reads as INT.
            let t = match arrow_type(&column["type"]) {
                Ok(DataType::Null) | Err(_) => {
                    tally.no_arrow += 1;
                    continue 'vectors;
                }
                Ok(t) => t,
            };
            let values: Vec<&Value> = rows.iter().map(|r| &r[i]).collect();
            names.push(column["name"].as_str().unwrap().to_string());
            arrays.push(array(&t, &values));
        }
        let fingerprinter =
            Fingerprinter::new(&names, &types_of(&names, &arrays), "murmur3", None).unwrap();
        let mut state = fingerprinter.empty();
        fingerprinter.update(&mut state, &Columns::new(&names, &arrays).unwrap());
        assert_eq!(
            fingerprinter.finish(&state),
            vector["fingerprint"].as_str().unwrap(),
            "{}",
            vector["name"]
        );
        tally.replayed += 1;
    }
    assert_eq!(
        tally,
        Tally {
            replayed: 14,
            no_arrow: 1
        }
    );
}

/// The lthash vectors give each row as its byte stream (no values): the aggregation, the schema and the
/// keyed row hashes are replayed from those.
#[test]
fn replays_lthash_vectors() {
    let spec = spec("lthash-vectors-v1.json");
    let vectors = spec["vectors"].as_array().unwrap();
    for vector in vectors {
        let columns = vector["columns"].as_array().unwrap();
        let names: Vec<String> = columns
            .iter()
            .map(|c| c["name"].as_str().unwrap().to_string())
            .collect();
        let arrays: Vec<ArrayRef> = columns
            .iter()
            .map(|c| array(&arrow_type(&c["type"]).unwrap(), &[]))
            .collect();
        let key = vector["key"]
            .as_str()
            .map(|k| spec["keys"][k].as_str().unwrap().as_bytes().to_vec());
        let fingerprinter = Fingerprinter::new(
            &names,
            &types_of(&names, &arrays),
            "lthash16",
            key.as_deref(),
        )
        .unwrap();
        let mut state = fingerprinter.empty();
        for row in vector["rows"].as_array().unwrap() {
            fingerprinter.add_record(&mut state, &unhex(row.as_str().unwrap()));
        }
        assert_eq!(
            fingerprinter.finish(&state),
            vector["fingerprint"].as_str().unwrap(),
            "{}",
            vector["name"]
        );
    }
    assert_eq!(vectors.len(), 9);
}
