//! The column-at-a-time encoder against the row-at-a-time one ([`Node::encode`]), record by record, on
//! generated data of every Arrow type the engine reads: NULLs at every depth (also under NULL parents, and
//! NULL list rows whose offsets still span elements), slices, every block boundary, and both map forms.

use std::sync::Arc;

use arrow_array::types::*;
use arrow_array::*;
use arrow_buffer::{i256, BooleanBuffer, Buffer, NullBuffer, OffsetBuffer, ScalarBuffer};
use arrow_schema::{DataType, Field, Fields};

use super::Block;
use crate::algorithm::Algorithm;
use crate::column::Node;
use crate::columns::Columns;
use crate::record::Record;

/// A deterministic xorshift generator.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    /// NULLs at one row in `one_in` (none when 0), or `None` when no row is NULL.
    fn nulls(&mut self, len: usize, one_in: u64) -> Option<NullBuffer> {
        if one_in == 0 {
            return None;
        }
        let valid: Vec<bool> = (0..len).map(|_| self.below(one_in) != 0).collect();
        Some(NullBuffer::from(valid))
    }
}

/// An `i64` with some trailing zeros, of either sign, below `bound` in magnitude.
fn decimal_value(rng: &mut Rng, bound: i64) -> i64 {
    let digits = rng.below(bound as u64) as i64 / 10i64.pow(rng.below(4) as u32);
    let value = digits.wrapping_mul(10i64.pow(rng.below(4) as u32)) % bound;
    if rng.below(2) == 0 {
        -value
    } else {
        value
    }
}

fn text(rng: &mut Rng) -> String {
    // Lengths around every copy width: 0 to 40 bytes, some multi-byte characters.
    let len = rng.below(41) as usize;
    (0..len)
        .map(|i| {
            if i % 7 == 3 {
                'é'
            } else {
                char::from(b'a' + (rng.below(26) as u8))
            }
        })
        .collect()
}

fn texts(rng: &mut Rng, len: usize) -> Vec<Option<String>> {
    let nulls = rng.below(3);
    (0..len)
        .map(|_| (nulls == 0 || rng.below(4) != 0).then(|| text(rng)))
        .collect()
}

fn field(name: &str, data_type: DataType) -> Arc<Field> {
    Arc::new(Field::new(name, data_type, true))
}

/// Offsets of `len` lists of 0 to 4 elements each, and how many elements they span.
fn list_offsets(rng: &mut Rng, len: usize) -> (Vec<usize>, usize) {
    let mut offsets = vec![0];
    for _ in 0..len {
        offsets.push(offsets.last().unwrap() + rng.below(5) as usize);
    }
    let total = *offsets.last().unwrap();
    (offsets, total)
}

/// A generated array of `depth` levels of nesting at most, of `len` rows.
fn array(rng: &mut Rng, len: usize, depth: usize) -> ArrayRef {
    let kinds = if depth == 0 { 26 } else { 36 };
    let kind = rng.below(kinds);
    let one_in = [0, 2, 5][rng.below(3) as usize];
    let nulls = rng.nulls(len, one_in);
    let ints: Vec<i64> = (0..len)
        .map(|_| rng.next() as i64 >> rng.below(60))
        .collect();
    match kind {
        0 => Arc::new(NullArray::new(len)),
        1 => Arc::new(BooleanArray::new(
            BooleanBuffer::from_iter((0..len).map(|_| rng.below(2) == 0)),
            nulls,
        )),
        2 => Arc::new(Int8Array::new(
            ints.iter().map(|&v| v as i8).collect(),
            nulls,
        )),
        3 => Arc::new(Int16Array::new(
            ints.iter().map(|&v| v as i16).collect(),
            nulls,
        )),
        4 => Arc::new(Int32Array::new(
            ints.iter().map(|&v| v as i32).collect(),
            nulls,
        )),
        5 => Arc::new(Int64Array::new(ints.into(), nulls)),
        6 => Arc::new(UInt8Array::new(
            ints.iter().map(|&v| v as u8).collect(),
            nulls,
        )),
        7 => Arc::new(UInt16Array::new(
            ints.iter().map(|&v| v as u16).collect(),
            nulls,
        )),
        8 => Arc::new(UInt32Array::new(
            ints.iter().map(|&v| v as u32).collect(),
            nulls,
        )),
        9 => Arc::new(UInt64Array::new(
            ints.iter()
                .map(|&v| (v as u64).wrapping_mul(1000))
                .collect(),
            nulls,
        )),
        10 => {
            let specials = [
                f32::NAN,
                -0.0,
                0.0,
                f32::INFINITY,
                f32::from_bits(0xFFC0_0001),
            ];
            let values = ints.iter().map(|&v| match v % 4 {
                0 => specials[(v.unsigned_abs() % 5) as usize],
                _ => v as f32 / 7.0,
            });
            Arc::new(Float32Array::new(values.collect(), nulls))
        }
        11 => {
            let specials = [
                f64::NAN,
                -0.0,
                0.0,
                f64::NEG_INFINITY,
                f64::from_bits(0xFFF0_0000_0000_0001),
            ];
            let values = ints.iter().map(|&v| match v % 4 {
                0 => specials[(v.unsigned_abs() % 5) as usize],
                _ => v as f64 / 3.0,
            });
            Arc::new(Float64Array::new(values.collect(), nulls))
        }
        12 => {
            let values = (0..len).map(|_| decimal_value(rng, 999_999_999) as i32);
            Arc::new(
                Decimal32Array::new(values.collect(), nulls)
                    .with_precision_and_scale(9, 3)
                    .unwrap(),
            )
        }
        13 => {
            let values = (0..len).map(|_| decimal_value(rng, 999_999_999_999_999_999));
            Arc::new(
                Decimal64Array::new(values.collect(), nulls)
                    .with_precision_and_scale(18, 0)
                    .unwrap(),
            )
        }
        14 => {
            // Some past 64 bits, up to 38 digits.
            let values = (0..len).map(|_| {
                let small = i128::from(decimal_value(rng, i64::MAX));
                if rng.below(3) == 0 {
                    small * 10i128.pow(19) + i128::from(decimal_value(rng, 1_000_000))
                } else {
                    small
                }
            });
            Arc::new(
                Decimal128Array::new(values.collect(), nulls)
                    .with_precision_and_scale(38, 6)
                    .unwrap(),
            )
        }
        15 => {
            let values = (0..len)
                .map(|_| i256::from_i128(i128::from(decimal_value(rng, i64::MAX)) * 1_000_000_007));
            Arc::new(
                Decimal256Array::new(values.collect(), nulls)
                    .with_precision_and_scale(38, 2)
                    .unwrap(),
            )
        }
        16 => Arc::new(StringArray::from(texts(rng, len))),
        17 => Arc::new(LargeStringArray::from(texts(rng, len))),
        18 => Arc::new(StringViewArray::from(texts(rng, len))),
        19 => {
            let values = texts(rng, len);
            Arc::new(BinaryArray::from_iter(
                values.iter().map(|v| v.as_ref().map(|s| s.as_bytes())),
            ))
        }
        20 => {
            let values = texts(rng, len);
            Arc::new(LargeBinaryArray::from_iter(
                values.iter().map(|v| v.as_ref().map(|s| s.as_bytes())),
            ))
        }
        21 => {
            let values = texts(rng, len);
            Arc::new(BinaryViewArray::from_iter(
                values.iter().map(|v| v.as_ref().map(|s| s.as_bytes())),
            ))
        }
        22 => {
            let bytes: Vec<u8> = (0..len * 3).map(|_| rng.next() as u8).collect();
            Arc::new(FixedSizeBinaryArray::new(3, Buffer::from_vec(bytes), nulls))
        }
        23 => Arc::new(Date32Array::new(
            ints.iter().map(|&v| v as i32).collect(),
            nulls,
        )),
        24 => Arc::new(Date64Array::new(
            ints.iter()
                .map(|&v| i64::from(v as i32) * 86_400_000)
                .collect(),
            nulls,
        )),
        25 => {
            let unit = rng.below(4);
            let values: ScalarBuffer<i64> = ints.iter().map(|&v| v >> 24).collect();
            let tz = (rng.below(2) == 0).then_some("UTC");
            let array: ArrayRef = match unit {
                0 => Arc::new(TimestampSecondArray::new(values, nulls).with_timezone_opt(tz)),
                1 => Arc::new(TimestampMillisecondArray::new(values, nulls).with_timezone_opt(tz)),
                2 => Arc::new(TimestampMicrosecondArray::new(values, nulls).with_timezone_opt(tz)),
                _ => Arc::new(
                    TimestampNanosecondArray::new(
                        values.iter().map(|v| v / 1000 * 1000).collect(),
                        nulls,
                    )
                    .with_timezone_opt(tz),
                ),
            };
            array
        }
        26 | 27 => {
            // A list whose NULL rows may still span elements.
            let (offsets, total) = list_offsets(rng, len);
            let child = array(rng, total, depth - 1);
            let offsets = OffsetBuffer::new(offsets.iter().map(|&o| o as i32).collect());
            Arc::new(ListArray::new(
                field("element", child.data_type().clone()),
                offsets,
                child,
                nulls,
            ))
        }
        28 => {
            let (offsets, total) = list_offsets(rng, len);
            let child = array(rng, total, depth - 1);
            let offsets = OffsetBuffer::new(offsets.iter().map(|&o| o as i64).collect());
            Arc::new(LargeListArray::new(
                field("element", child.data_type().clone()),
                offsets,
                child,
                nulls,
            ))
        }
        29 => {
            // A list view: rows in any order over the values, overlapping.
            let total = len * 2 + 1;
            let child = array(rng, total, depth - 1);
            let starts: Vec<i32> = (0..len).map(|_| rng.below(total as u64) as i32).collect();
            let sizes: Vec<i32> = starts
                .iter()
                .map(|&s| rng.below((total as i32 - s).min(4) as u64 + 1) as i32)
                .collect();
            Arc::new(ListViewArray::new(
                field("element", child.data_type().clone()),
                starts.into(),
                sizes.into(),
                child,
                nulls,
            ))
        }
        30 => {
            let child = array(rng, len * 2, depth - 1);
            Arc::new(FixedSizeListArray::new(
                field("element", child.data_type().clone()),
                2,
                child,
                nulls,
            ))
        }
        31 | 32 => {
            // Keys never NULL; values anything.
            let (offsets, total) = list_offsets(rng, len);
            let keys: ArrayRef =
                Arc::new(StringArray::from_iter_values((0..total).map(|_| text(rng))));
            let values = array(rng, total, depth - 1);
            let entries = StructArray::new(
                Fields::from(vec![
                    Field::new("key", DataType::Utf8, false),
                    Field::new("value", values.data_type().clone(), true),
                ]),
                vec![keys, values],
                None,
            );
            let offsets = OffsetBuffer::new(offsets.iter().map(|&o| o as i32).collect());
            let entries_field = Arc::new(Field::new("entries", entries.data_type().clone(), false));
            Arc::new(MapArray::new(entries_field, offsets, entries, nulls, false))
        }
        33 | 34 => {
            let children: Vec<ArrayRef> = (0..1 + rng.below(3))
                .map(|_| array(rng, len, depth - 1))
                .collect();
            let fields: Fields = children
                .iter()
                .enumerate()
                .map(|(i, c)| Field::new(format!("f{i}"), c.data_type().clone(), true))
                .collect();
            Arc::new(StructArray::new(fields, children, nulls))
        }
        _ => {
            // A dictionary whose values hold NULLs too.
            let values_len = 1 + rng.below(6) as usize;
            let values = array(rng, values_len, depth - 1);
            let keys: Vec<i16> = (0..len)
                .map(|_| rng.below(values_len as u64) as i16)
                .collect();
            Arc::new(DictionaryArray::<Int16Type>::new(
                Int16Array::new(keys.into(), nulls),
                values,
            ))
        }
    }
}

/// The records of rows `start..start + len` of `columns`, one block at a time, against the row encoder.
fn check(columns: &[Node], len: usize, algorithm: &Algorithm, context: &str) {
    let record = Record::positional(algorithm.clone());
    let mut block = Block::new(algorithm.sorted_maps());
    let mut scratch = record.scratch();
    let mut expected = Vec::new();
    // Blocks of every size from 1, at every start, and one of every row.
    for block_len in [1, 2, 3, 7, 64, len.max(1)] {
        for start in (0..len).step_by(block_len) {
            let rows = block_len.min(len - start);
            block.positional(columns, start, rows);
            for k in 0..rows {
                expected.clear();
                record.encode_row(columns, start + k, &mut expected, &mut scratch);
                assert_eq!(
                    block.record(k),
                    &expected[..],
                    "{context}: row {} in a block of {block_len}",
                    start + k
                );
            }
        }
    }
}

#[test]
fn writes_the_row_encoders_bytes_for_every_type() {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let murmur3 = Algorithm::Murmur3;
    let sha256 = Algorithm::Sha256;
    for case in 0..400 {
        let len = 1 + rng.below(40) as usize;
        let depth = rng.below(4) as usize;
        let arrays: Vec<ArrayRef> = (0..1 + rng.below(4))
            .map(|_| array(&mut rng, len, depth))
            .collect();
        // The whole arrays, and a slice of them.
        let offset = rng.below(len as u64) as usize;
        let sliced: Vec<ArrayRef> = arrays
            .iter()
            .map(|a| a.slice(offset, len - offset))
            .collect();
        for (arrays, what) in [(&arrays, "whole"), (&sliced, "sliced")] {
            let names: Vec<String> = (0..arrays.len()).map(|i| format!("c{i}")).collect();
            let columns =
                Columns::new(&names, arrays).unwrap_or_else(|e| panic!("case {case}: {e}"));
            let types: Vec<_> = arrays.iter().map(|a| a.data_type().to_string()).collect();
            let context = format!("case {case} ({what}, {types:?})");
            check(&columns.nodes, columns.len, &murmur3, &context);
            check(&columns.nodes, columns.len, &sha256, &context);
        }
    }
}

#[test]
fn hashes_batches_as_the_row_encoder_does() {
    // hash_batch (blocks, tasks on a pool of 3 threads) against the digests of encode_row, for each algorithm.
    let mut rng = Rng(42);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(3)
        .build()
        .unwrap();
    let hmac = Algorithm::new("hmac-sha256", Some(b"a key")).unwrap();
    for case in 0..20 {
        let len = 1 + rng.below(5000) as usize;
        let arrays: Vec<ArrayRef> = (0..3).map(|_| array(&mut rng, len, 2)).collect();
        let names: Vec<String> = (0..arrays.len()).map(|i| format!("c{i}")).collect();
        let columns = Columns::new(&names, &arrays).unwrap();
        for algorithm in [Algorithm::Murmur3, Algorithm::Sha256, hmac.clone()] {
            let record = Record::positional(algorithm.clone());
            let width = record.width();
            let mut digests = vec![0u8; len * width];
            let mut valid = vec![false; len];
            pool.install(|| record.hash_batch(&columns, &mut digests, &mut valid))
                .unwrap();
            assert!(valid.iter().all(|&v| v));
            let mut scratch = record.scratch();
            let mut bytes = Vec::new();
            let mut digest = vec![0u8; width];
            for row in 0..len {
                bytes.clear();
                record.encode_row(&columns.nodes, row, &mut bytes, &mut scratch);
                algorithm.hash_into(&bytes, &mut digest);
                assert_eq!(
                    &digests[row * width..(row + 1) * width],
                    &digest[..],
                    "case {case}, row {row}"
                );
            }
        }
    }
}
