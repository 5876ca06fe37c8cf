//! A row's text as PostgreSQL prints it (`CAST(ROW(c1, ..., cn) AS text)`), printed here from Arrow data, and
//! the two digests reconcile compares PostgreSQL's rows by: `hashtextextended` of the key columns' row text
//! and the SHA-256 of the whole row's text. A PostgreSQL server computes both far faster than the record
//! hashes, so a comparison of PostgreSQL against Arrow data (DuckDB, Parquet) aggregates by them, and only the
//! rows of the segments that differ are settled by their record hashes.

mod floats;
mod hash;
mod values;

pub use hash::hash_bytes_extended;

use arrow_array::cast::AsArray;
use arrow_array::types::*;
use arrow_array::{Array, ArrayRef};
use arrow_schema::{DataType, TimeUnit};
use rayon::prelude::*;
use sha2::{Digest, Sha256};

use crate::error::Error;

/// Rows per task.
const ROWS_PER_TASK: usize = 4096;

/// The text of a value that no value of the column's PostgreSQL type has: no output function prints it, so
/// its row's text matches no row of the server's, and the row is settled by its record hash.
const UNPRINTABLE: &[u8] = b"?";

/// The PostgreSQL type a column's values are printed as.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PgKind {
    /// `smallint`, `integer`, `bigint`.
    Integer,
    /// `real`.
    Real,
    /// `double precision`.
    Double,
    /// `numeric(p, s)`: the scale.
    Numeric(i32),
    /// `text`, `varchar`, `name`, `citext`, an enum.
    Text,
    /// `bytea`.
    Bytea,
    /// `boolean`.
    Boolean,
    /// `date`.
    Date,
    /// `timestamp` (without time zone).
    Timestamp,
    /// `timestamp with time zone`.
    TimestampTz,
}

impl PgKind {
    /// A kind from its name: `integer`, `real`, `double`, `numeric:S`, `text`, `bytea`, `boolean`, `date`,
    /// `timestamp`, `timestamptz`.
    pub fn parse(name: &str) -> Result<Self, Error> {
        Ok(match name {
            "integer" => Self::Integer,
            "real" => Self::Real,
            "double" => Self::Double,
            "text" => Self::Text,
            "bytea" => Self::Bytea,
            "boolean" => Self::Boolean,
            "date" => Self::Date,
            "timestamp" => Self::Timestamp,
            "timestamptz" => Self::TimestampTz,
            other => match other.strip_prefix("numeric:").map(str::parse) {
                Some(Ok(scale)) => Self::Numeric(scale),
                _ => return Err(Error::invalid(format!("no PostgreSQL text kind '{other}'"))),
            },
        })
    }
}

/// Whether values of `data_type` can be printed as `kind`.
pub fn printable(kind: PgKind, data_type: &DataType) -> bool {
    use DataType::*;
    let integer = matches!(
        data_type,
        Int8 | Int16 | Int32 | Int64 | UInt8 | UInt16 | UInt32 | UInt64
    );
    match kind {
        PgKind::Integer => integer,
        PgKind::Real | PgKind::Double => matches!(data_type, Float32 | Float64),
        PgKind::Numeric(_) => integer || matches!(data_type, Decimal128(_, _)),
        PgKind::Text => matches!(data_type, Utf8 | LargeUtf8 | Utf8View),
        PgKind::Bytea => matches!(
            data_type,
            Binary | LargeBinary | BinaryView | FixedSizeBinary(_)
        ),
        PgKind::Boolean => matches!(data_type, Boolean),
        PgKind::Date => matches!(data_type, Date32),
        PgKind::Timestamp => {
            matches!(data_type, Timestamp(unit, None) if *unit != TimeUnit::Nanosecond)
        }
        PgKind::TimestampTz => {
            matches!(data_type, Timestamp(unit, Some(_)) if *unit != TimeUnit::Nanosecond)
        }
    }
}

/// Appends the text of row `row` of `array` as `kind` (the row is not NULL).
fn write_value(
    out: &mut Vec<u8>,
    scratch: &mut String,
    array: &dyn Array,
    kind: PgKind,
    row: usize,
) {
    use DataType::*;
    let integer = |out: &mut Vec<u8>, value: i128| match kind {
        PgKind::Numeric(scale) => values::write_decimal(out, value, 0, scale),
        _ => values::write_integer(out, value),
    };
    match array.data_type() {
        Int8 => integer(out, array.as_primitive::<Int8Type>().value(row).into()),
        Int16 => integer(out, array.as_primitive::<Int16Type>().value(row).into()),
        Int32 => integer(out, array.as_primitive::<Int32Type>().value(row).into()),
        Int64 => integer(out, array.as_primitive::<Int64Type>().value(row).into()),
        UInt8 => integer(out, array.as_primitive::<UInt8Type>().value(row).into()),
        UInt16 => integer(out, array.as_primitive::<UInt16Type>().value(row).into()),
        UInt32 => integer(out, array.as_primitive::<UInt32Type>().value(row).into()),
        UInt64 => integer(out, array.as_primitive::<UInt64Type>().value(row).into()),
        Float32 if kind == PgKind::Real => {
            values::write_f32(out, scratch, array.as_primitive::<Float32Type>().value(row))
        }
        Float32 => values::write_f64(
            out,
            scratch,
            array.as_primitive::<Float32Type>().value(row).into(),
        ),
        Float64 if kind == PgKind::Real => {
            // A double is a real's value only when it is one exactly; printed as a double, "0.1" would read
            // back in a `real` column as another value than the double 0.1.
            let value = array.as_primitive::<Float64Type>().value(row);
            if value.is_nan() || f64::from(value as f32) == value {
                values::write_f32(out, scratch, value as f32)
            } else {
                out.extend_from_slice(UNPRINTABLE)
            }
        }
        Float64 => values::write_f64(out, scratch, array.as_primitive::<Float64Type>().value(row)),
        Decimal128(_, scale) => {
            let column = if let PgKind::Numeric(s) = kind { s } else { 0 };
            let value = array.as_primitive::<Decimal128Type>().value(row);
            values::write_decimal(out, value, i32::from(*scale), column)
        }
        Utf8 => out.extend_from_slice(array.as_string::<i32>().value(row).as_bytes()),
        LargeUtf8 => out.extend_from_slice(array.as_string::<i64>().value(row).as_bytes()),
        Utf8View => out.extend_from_slice(array.as_string_view().value(row).as_bytes()),
        Binary => values::write_bytea(out, array.as_binary::<i32>().value(row)),
        LargeBinary => values::write_bytea(out, array.as_binary::<i64>().value(row)),
        BinaryView => values::write_bytea(out, array.as_binary_view().value(row)),
        FixedSizeBinary(_) => values::write_bytea(out, array.as_fixed_size_binary().value(row)),
        Boolean => values::write_bool(out, array.as_boolean().value(row)),
        Date32 => values::write_date(out, array.as_primitive::<Date32Type>().value(row).into()),
        Timestamp(unit, zone) => {
            let micros = match unit {
                TimeUnit::Second => array
                    .as_primitive::<TimestampSecondType>()
                    .value(row)
                    .checked_mul(1_000_000),
                TimeUnit::Millisecond => array
                    .as_primitive::<TimestampMillisecondType>()
                    .value(row)
                    .checked_mul(1_000),
                TimeUnit::Microsecond => {
                    Some(array.as_primitive::<TimestampMicrosecondType>().value(row))
                }
                TimeUnit::Nanosecond => None,
            };
            match micros {
                Some(micros) => values::write_timestamp(out, micros, zone.is_some()),
                // Past any timestamp PostgreSQL holds.
                None => out.extend_from_slice(UNPRINTABLE),
            }
        }
        other => unreachable!("printable() admits no {other}"),
    }
}

/// Appends one field of `record_out`'s text: quoted when empty or holding `"`, `\`, `(`, `)`, `,` or
/// white space, with `"` and `\` doubled inside the quotes.
fn write_field(out: &mut Vec<u8>, value: &[u8]) {
    let quote = value.is_empty()
        || value.iter().any(|b| {
            matches!(
                b,
                b'"' | b'\\' | b'(' | b')' | b',' | b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c
            )
        });
    if !quote {
        out.extend_from_slice(value);
        return;
    }
    out.push(b'"');
    for &byte in value {
        if byte == b'"' || byte == b'\\' {
            out.push(byte);
        }
        out.push(byte);
    }
    out.push(b'"');
}

/// The columns of a row text, each with the kind it is printed as.
pub struct RowTexts {
    columns: Vec<(ArrayRef, PgKind)>,
    key_count: usize,
}

impl RowTexts {
    /// Rows of `columns` (equal lengths), whose first `key_count` make the key; an error names the first
    /// column whose type cannot be printed as its kind.
    pub fn new(columns: Vec<(String, ArrayRef, PgKind)>, key_count: usize) -> Result<Self, Error> {
        for (name, array, kind) in &columns {
            if !printable(*kind, array.data_type()) {
                return Err(Error::invalid(format!(
                    "the Arrow type {} cannot be printed as PostgreSQL's {kind:?}",
                    array.data_type()
                ))
                .in_column(name));
            }
        }
        if key_count > columns.len() || columns.windows(2).any(|w| w[0].1.len() != w[1].1.len()) {
            return Err(Error::invalid(
                "the key columns and the row's columns do not line up",
            ));
        }
        Ok(Self {
            columns: columns.into_iter().map(|(_, a, k)| (a, k)).collect(),
            key_count,
        })
    }

    /// Rows.
    pub fn len(&self) -> usize {
        self.columns.first().map_or(0, |(a, _)| a.len())
    }

    /// Whether there are no rows.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Per row, `hashtextextended(CAST(ROW(key columns) AS text), 0)` and the first 16 bytes of
    /// `sha256(convert_to(CAST(ROW(columns) AS text), 'UTF8'))`,
    /// on every thread of the current rayon pool.
    pub fn digests(&self) -> (Vec<i64>, Vec<[u8; 16]>) {
        let n = self.len();
        let mut keys = vec![0i64; n];
        let mut rows = vec![[0u8; 16]; n];
        keys.par_chunks_mut(ROWS_PER_TASK)
            .zip(rows.par_chunks_mut(ROWS_PER_TASK))
            .enumerate()
            .for_each(|(task, (keys, rows))| {
                let start = task * ROWS_PER_TASK;
                let (mut text, mut value, mut scratch) = (Vec::new(), Vec::new(), String::new());
                for (i, (key, row)) in keys.iter_mut().zip(rows.iter_mut()).enumerate() {
                    text.clear();
                    text.push(b'(');
                    for (j, (array, kind)) in self.columns.iter().enumerate() {
                        if j == self.key_count {
                            text.push(b')');
                            *key = hash_bytes_extended(&text, 0) as i64;
                            text.pop();
                        }
                        if j > 0 {
                            text.push(b',');
                        }
                        if array.is_valid(start + i) {
                            value.clear();
                            write_value(&mut value, &mut scratch, array.as_ref(), *kind, start + i);
                            write_field(&mut text, &value);
                        }
                    }
                    text.push(b')');
                    if self.key_count == self.columns.len() {
                        *key = hash_bytes_extended(&text, 0) as i64;
                    }
                    row.copy_from_slice(&Sha256::digest(&text)[..16]);
                }
            });
        (keys, rows)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow_array::{Int64Array, StringArray};

    use super::*;

    fn text_of(columns: Vec<(ArrayRef, PgKind)>, row: usize) -> String {
        let mut text = vec![b'('];
        let mut scratch = String::new();
        for (j, (array, kind)) in columns.iter().enumerate() {
            if j > 0 {
                text.push(b',');
            }
            if array.is_valid(row) {
                let mut value = Vec::new();
                write_value(&mut value, &mut scratch, array.as_ref(), *kind, row);
                write_field(&mut text, &value);
            }
        }
        text.push(b')');
        String::from_utf8(text).unwrap()
    }

    #[test]
    fn fields_are_quoted_as_record_out_quotes_them() {
        let strings: ArrayRef = Arc::new(StringArray::from(vec![
            Some(""),
            Some("a b"),
            Some("say \"hi\""),
            Some("x\\y"),
            None,
            Some("plain"),
        ]));
        let texts: Vec<String> = (0..6)
            .map(|row| text_of(vec![(strings.clone(), PgKind::Text)], row))
            .collect();
        assert_eq!(
            texts,
            [
                "(\"\")",
                "(\"a b\")",
                "(\"say \"\"hi\"\"\")",
                "(\"x\\\\y\")",
                "()",
                "(plain)"
            ]
        );
    }

    #[test]
    fn the_key_digest_is_of_the_key_columns_alone() {
        let ids: ArrayRef = Arc::new(Int64Array::from(vec![1, 2]));
        let names: ArrayRef = Arc::new(StringArray::from(vec!["a", "a"]));
        let texts = RowTexts::new(
            vec![
                ("id".into(), ids.clone(), PgKind::Integer),
                ("name".into(), names, PgKind::Text),
            ],
            1,
        )
        .unwrap();
        let (keys, rows) = texts.digests();
        assert_eq!(keys[0], hash_bytes_extended(b"(1)", 0) as i64);
        assert_eq!(rows[1][..], Sha256::digest(b"(2,a)")[..16]);
    }

    #[test]
    fn a_type_without_a_printer_is_refused_by_name() {
        let ids: ArrayRef = Arc::new(Int64Array::from(vec![1]));
        let error = RowTexts::new(vec![("id".into(), ids, PgKind::Date)], 1)
            .err()
            .unwrap();
        assert!(error
            .message()
            .starts_with("column 'id': the Arrow type Int64"));
    }
}
