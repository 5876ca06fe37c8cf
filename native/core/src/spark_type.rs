//! The Spark type of an Arrow type: what Spark 4 reads from the Parquet file pyarrow writes from it
//! (the rules of `hashexpr.reference.spark_type_of_arrow`), and its text in the fingerprint's schema (section 5).

use arrow_schema::{DataType, TimeUnit};

use crate::error::Error;

/// The largest decimal precision Spark has.
pub const MAX_DECIMAL_PRECISION: u8 = 38;

/// A Spark SQL type, as far as Arrow data can have one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SparkType {
    Boolean,
    Byte,
    Short,
    Int,
    Long,
    Float,
    Double,
    Decimal(u8, i8),
    String,
    Binary,
    Date,
    Timestamp,
    TimestampNtz,
    Array(Box<SparkType>),
    Map(Box<SparkType>, Box<SparkType>),
    Struct(Vec<(String, SparkType)>),
}

impl SparkType {
    /// The Spark type of `arrow`, or an error naming the Arrow type that has none.
    pub fn of_arrow(arrow: &DataType) -> Result<Self, Error> {
        Ok(match arrow {
            // Spark reads an all-NULL Parquet column as INT.
            DataType::Null => Self::Int,
            DataType::Boolean => Self::Boolean,
            DataType::Int8 => Self::Byte,
            DataType::Int16 | DataType::UInt8 => Self::Short,
            DataType::Int32 | DataType::UInt16 => Self::Int,
            DataType::Int64 | DataType::UInt32 => Self::Long,
            DataType::UInt64 => Self::Decimal(20, 0),
            DataType::Float32 => Self::Float,
            DataType::Float64 => Self::Double,
            DataType::Decimal32(p, s)
            | DataType::Decimal64(p, s)
            | DataType::Decimal128(p, s)
            | DataType::Decimal256(p, s)
                if *p <= MAX_DECIMAL_PRECISION =>
            {
                Self::Decimal(*p, *s)
            }
            DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => Self::String,
            DataType::Binary | DataType::LargeBinary | DataType::BinaryView | DataType::FixedSizeBinary(_) => {
                Self::Binary
            }
            DataType::Date32 | DataType::Date64 => Self::Date,
            DataType::Timestamp(_, Some(_)) => Self::Timestamp,
            DataType::Timestamp(_, None) => Self::TimestampNtz,
            DataType::List(f)
            | DataType::LargeList(f)
            | DataType::ListView(f)
            | DataType::LargeListView(f)
            | DataType::FixedSizeList(f, _) => Self::Array(Box::new(Self::of_arrow(f.data_type())?)),
            DataType::Map(entries, _) => match entries.data_type() {
                DataType::Struct(fields) if fields.len() == 2 => Self::Map(
                    Box::new(Self::of_arrow(fields[0].data_type())?),
                    Box::new(Self::of_arrow(fields[1].data_type())?),
                ),
                other => return Err(Error::invalid(format!("a map's entries must be a struct of two fields, not {other}"))),
            },
            DataType::Struct(fields) => Self::Struct(
                fields
                    .iter()
                    .map(|f| Ok((f.name().clone(), Self::of_arrow(f.data_type())?)))
                    .collect::<Result<_, Error>>()?,
            ),
            DataType::Dictionary(_, values) => Self::of_arrow(values)?,
            other => {
                return Err(Error::invalid(format!(
                    "Spark has no type for the Arrow type {}, so hash format v1 cannot hash it; cast the column \
                     to a supported type first (docs/ARROW.md)",
                    arrow_type_name(other)
                )))
            }
        })
    }

    /// The type's text in the fingerprint's schema: Spark's `simpleString`, struct fields in backticks.
    pub fn type_string(&self) -> String {
        match self {
            Self::Boolean => "boolean".into(),
            Self::Byte => "tinyint".into(),
            Self::Short => "smallint".into(),
            Self::Int => "int".into(),
            Self::Long => "bigint".into(),
            Self::Float => "float".into(),
            Self::Double => "double".into(),
            Self::Decimal(p, s) => format!("decimal({p},{s})"),
            Self::String => "string".into(),
            Self::Binary => "binary".into(),
            Self::Date => "date".into(),
            Self::Timestamp => "timestamp".into(),
            Self::TimestampNtz => "timestamp_ntz".into(),
            Self::Array(element) => format!("array<{}>", element.type_string()),
            Self::Map(key, value) => format!("map<{},{}>", key.type_string(), value.type_string()),
            Self::Struct(fields) => {
                let fields: Vec<String> = fields
                    .iter()
                    .map(|(name, t)| format!("`{}`:{}", name.replace('`', "``"), t.type_string()))
                    .collect();
                format!("struct<{}>", fields.join(","))
            }
        }
    }
}

/// An Arrow type as pyarrow prints it, for error messages (`time32[s]`, `halffloat`, ...).
pub fn arrow_type_name(arrow: &DataType) -> String {
    fn unit(unit: &TimeUnit) -> &'static str {
        match unit {
            TimeUnit::Second => "s",
            TimeUnit::Millisecond => "ms",
            TimeUnit::Microsecond => "us",
            TimeUnit::Nanosecond => "ns",
        }
    }
    match arrow {
        DataType::Float16 => "halffloat".into(),
        DataType::Time32(u) => format!("time32[{}]", unit(u)),
        DataType::Time64(u) => format!("time64[{}]", unit(u)),
        DataType::Duration(u) => format!("duration[{}]", unit(u)),
        DataType::Decimal32(p, s) => format!("decimal32({p}, {s})"),
        DataType::Decimal64(p, s) => format!("decimal64({p}, {s})"),
        DataType::Decimal128(p, s) => format!("decimal128({p}, {s})"),
        DataType::Decimal256(p, s) => format!("decimal256({p}, {s})"),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow_schema::{Field, Fields};

    use super::*;

    #[test]
    fn maps_arrow_types_as_spark_reads_parquet() {
        let cases = [
            (DataType::Null, "int"),
            (DataType::UInt8, "smallint"),
            (DataType::UInt16, "int"),
            (DataType::UInt32, "bigint"),
            (DataType::UInt64, "decimal(20,0)"),
            (DataType::Float32, "float"),
            (DataType::Decimal256(38, 38), "decimal(38,38)"),
            (DataType::Utf8View, "string"),
            (DataType::FixedSizeBinary(3), "binary"),
            (DataType::Date64, "date"),
            (
                DataType::Timestamp(TimeUnit::Millisecond, Some("+01:00".into())),
                "timestamp",
            ),
            (
                DataType::Timestamp(TimeUnit::Nanosecond, None),
                "timestamp_ntz",
            ),
            (
                DataType::Dictionary(Box::new(DataType::Int8), Box::new(DataType::LargeUtf8)),
                "string",
            ),
        ];
        for (arrow, expected) in cases {
            assert_eq!(
                SparkType::of_arrow(&arrow).unwrap().type_string(),
                expected,
                "{arrow}"
            );
        }
        let fields = Fields::from(vec![
            Field::new("a`b", DataType::Int32, true),
            Field::new("c", DataType::new_list(DataType::Int8, true), true),
        ]);
        assert_eq!(
            SparkType::of_arrow(&DataType::Struct(fields))
                .unwrap()
                .type_string(),
            "struct<`a``b`:int,`c`:array<tinyint>>"
        );
        let entries = Field::new(
            "entries",
            DataType::Struct(Fields::from(vec![
                Field::new("k", DataType::Utf8, false),
                Field::new("v", DataType::Int64, true),
            ])),
            false,
        );
        assert_eq!(
            SparkType::of_arrow(&DataType::Map(Arc::new(entries), false))
                .unwrap()
                .type_string(),
            "map<string,bigint>"
        );
    }

    #[test]
    fn refuses_what_spark_has_no_type_for() {
        for arrow in [
            DataType::Float16,
            DataType::Time32(TimeUnit::Second),
            DataType::Duration(TimeUnit::Microsecond),
            DataType::Decimal256(39, 0),
            DataType::new_list(DataType::Time64(TimeUnit::Nanosecond), true),
        ] {
            let error = SparkType::of_arrow(&arrow).unwrap_err();
            assert!(
                error
                    .message()
                    .contains("Spark has no type for the Arrow type"),
                "{error}"
            );
        }
        let error = SparkType::of_arrow(&DataType::Time32(TimeUnit::Second)).unwrap_err();
        assert!(error.message().contains("time32[s]"), "{error}");
    }
}
