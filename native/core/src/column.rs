//! The Arrow type walk: an Arrow array as a tree of typed nodes, each writing its values' encoding
//! (docs/FORMAT.md, section 4) by row, as the Spark type the array is read as (`spark_type`).
//!
//! Every physical variant of a logical type hashes like the logical value: string, large and view strings;
//! every binary; list, large list, list view and fixed-size list; dictionaries by value; slices by their
//! offsets. Values are checked when a node is built, so encoding a row cannot fail.

use arrow_array::cast::AsArray;
use arrow_array::types::*;
use arrow_array::{Array, ArrayRef, FixedSizeBinaryArray};
use arrow_buffer::{i256, BooleanBuffer, Buffer, NullBuffer, OffsetBuffer, ScalarBuffer};
use arrow_schema::{DataType, TimeUnit};

use crate::encode::*;
use crate::error::Error;
use crate::murmur3::{murmur3_x64_128, SEED};
use sha2::{Digest, Sha256};

pub(crate) const MICROS_PER_DAY_MS: i64 = 86_400_000;

/// Where NULLs are: a physical validity bitmap, aligned with the array's rows.
#[derive(Clone, Debug, Default)]
pub struct Nulls(Option<NullBuffer>);

impl Nulls {
    fn of(array: &dyn Array) -> Self {
        Self(array.nulls().filter(|n| n.null_count() > 0).cloned())
    }

    #[inline(always)]
    pub(crate) fn is_null(&self, row: usize) -> bool {
        self.0.as_ref().is_some_and(|n| n.is_null(row))
    }

    /// The bitmap, when some value is NULL.
    #[inline(always)]
    pub(crate) fn buffer(&self) -> Option<&NullBuffer> {
        self.0.as_ref()
    }

    pub(crate) fn is_valid(&self, row: usize) -> bool {
        !self.is_null(row)
    }
}

/// Per-thread buffers for map entries: one per nesting depth, so nested maps do not allocate per row.
#[derive(Default)]
pub struct Scratch {
    sorted_maps: bool,
    depth: usize,
    entries: Vec<Vec<u8>>,
    digests: Vec<Vec<[u8; 32]>>,
}

impl Scratch {
    /// Buffers for encoding under an algorithm whose maps are sums (`sorted_maps` false) or sorted digests.
    pub fn new(sorted_maps: bool) -> Self {
        Self {
            sorted_maps,
            ..Self::default()
        }
    }
}

/// One column (or nested child) of Arrow data, typed.
#[derive(Clone, Debug)]
pub enum Node {
    /// The Arrow null type: every value is NULL.
    Null,
    Boolean(Nulls, BooleanBuffer),
    Int8(Nulls, ScalarBuffer<i8>),
    Int16(Nulls, ScalarBuffer<i16>),
    Int32(Nulls, ScalarBuffer<i32>),
    Int64(Nulls, ScalarBuffer<i64>),
    UInt8(Nulls, ScalarBuffer<u8>),
    UInt16(Nulls, ScalarBuffer<u16>),
    UInt32(Nulls, ScalarBuffer<u32>),
    /// DECIMAL(20,0) in Spark.
    UInt64(Nulls, ScalarBuffer<u64>),
    Float32(Nulls, ScalarBuffer<f32>),
    Float64(Nulls, ScalarBuffer<f64>),
    Decimal32(Nulls, ScalarBuffer<i32>, i8),
    Decimal64(Nulls, ScalarBuffer<i64>, i8),
    Decimal128(Nulls, ScalarBuffer<i128>, i8),
    /// Precision 38 at most, so every value fits an `i128` (checked when built).
    Decimal256(Nulls, ScalarBuffer<i256>, i8),
    /// STRING or BINARY (the tag) with 32-bit offsets.
    Bytes(u8, Nulls, OffsetBuffer<i32>, Buffer),
    LargeBytes(u8, Nulls, OffsetBuffer<i64>, Buffer),
    /// A string or binary view: inline up to 12 bytes, else a buffer index and offset.
    View(u8, Nulls, ScalarBuffer<u128>, Vec<Buffer>),
    FixedBytes(Nulls, FixedSizeBinaryArray),
    Date32(Nulls, ScalarBuffer<i32>),
    /// Milliseconds, whole days (checked when built).
    Date64(Nulls, ScalarBuffer<i64>),
    /// TIMESTAMP or TIMESTAMP_NTZ (the tag), in the unit; whole microseconds that fit (checked when built).
    Timestamp(u8, Nulls, ScalarBuffer<i64>, TimeUnit),
    List(Nulls, OffsetBuffer<i32>, Box<Node>),
    LargeList(Nulls, OffsetBuffer<i64>, Box<Node>),
    ListView(Nulls, ScalarBuffer<i32>, ScalarBuffer<i32>, Box<Node>),
    LargeListView(Nulls, ScalarBuffer<i64>, ScalarBuffer<i64>, Box<Node>),
    FixedList(Nulls, usize, Box<Node>),
    Map(Nulls, OffsetBuffer<i32>, Box<Node>, Box<Node>),
    Struct(Nulls, Vec<Node>),
    /// Keys (checked in range) into the values.
    Dictionary(Nulls, Vec<usize>, Box<Node>),
}

fn overflow(unit: &str, value: i64) -> Error {
    Error::invalid(format!(
        "the timestamp {value} {unit} is out of range in microseconds, the unit Spark keeps"
    ))
}

impl Node {
    /// The node of `array`, its values checked: timestamps convert exactly to microseconds, dates of
    /// milliseconds are whole days, map keys are not NULL, dictionary keys are in range.
    pub fn build(array: &ArrayRef) -> Result<Self, Error> {
        Self::build_dyn(array.as_ref())
    }

    fn build_dyn(array: &dyn Array) -> Result<Self, Error> {
        let nulls = Nulls::of(array);
        Ok(match array.data_type() {
            DataType::Null => Self::Null,
            DataType::Boolean => Self::Boolean(nulls, array.as_boolean().values().clone()),
            DataType::Int8 => Self::Int8(nulls, array.as_primitive::<Int8Type>().values().clone()),
            DataType::Int16 => {
                Self::Int16(nulls, array.as_primitive::<Int16Type>().values().clone())
            }
            DataType::Int32 => {
                Self::Int32(nulls, array.as_primitive::<Int32Type>().values().clone())
            }
            DataType::Int64 => {
                Self::Int64(nulls, array.as_primitive::<Int64Type>().values().clone())
            }
            DataType::UInt8 => {
                Self::UInt8(nulls, array.as_primitive::<UInt8Type>().values().clone())
            }
            DataType::UInt16 => {
                Self::UInt16(nulls, array.as_primitive::<UInt16Type>().values().clone())
            }
            DataType::UInt32 => {
                Self::UInt32(nulls, array.as_primitive::<UInt32Type>().values().clone())
            }
            DataType::UInt64 => {
                Self::UInt64(nulls, array.as_primitive::<UInt64Type>().values().clone())
            }
            DataType::Float32 => {
                Self::Float32(nulls, array.as_primitive::<Float32Type>().values().clone())
            }
            DataType::Float64 => {
                Self::Float64(nulls, array.as_primitive::<Float64Type>().values().clone())
            }
            DataType::Decimal32(_, s) => Self::Decimal32(
                nulls,
                array.as_primitive::<Decimal32Type>().values().clone(),
                *s,
            ),
            DataType::Decimal64(_, s) => Self::Decimal64(
                nulls,
                array.as_primitive::<Decimal64Type>().values().clone(),
                *s,
            ),
            DataType::Decimal128(_, s) => Self::Decimal128(
                nulls,
                array.as_primitive::<Decimal128Type>().values().clone(),
                *s,
            ),
            DataType::Decimal256(p, s) => {
                let values = array.as_primitive::<Decimal256Type>().values().clone();
                for (row, value) in values.iter().enumerate() {
                    if nulls.is_valid(row) && value.to_i128().is_none() {
                        return Err(Error::invalid(format!(
                            "a decimal256({p}, {s}) value needs more than 38 digits"
                        )));
                    }
                }
                Self::Decimal256(nulls, values, *s)
            }
            DataType::Utf8 => {
                let a = array.as_string::<i32>();
                Self::Bytes(STRING, nulls, a.offsets().clone(), a.values().clone())
            }
            DataType::LargeUtf8 => {
                let a = array.as_string::<i64>();
                Self::LargeBytes(STRING, nulls, a.offsets().clone(), a.values().clone())
            }
            DataType::Binary => {
                let a = array.as_binary::<i32>();
                Self::Bytes(BINARY, nulls, a.offsets().clone(), a.values().clone())
            }
            DataType::LargeBinary => {
                let a = array.as_binary::<i64>();
                Self::LargeBytes(BINARY, nulls, a.offsets().clone(), a.values().clone())
            }
            DataType::Utf8View => {
                let a = array.as_string_view();
                Self::View(STRING, nulls, a.views().clone(), a.data_buffers().to_vec())
            }
            DataType::BinaryView => {
                let a = array.as_binary_view();
                Self::View(BINARY, nulls, a.views().clone(), a.data_buffers().to_vec())
            }
            DataType::FixedSizeBinary(_) => {
                Self::FixedBytes(nulls, array.as_fixed_size_binary().clone())
            }
            DataType::Date32 => {
                Self::Date32(nulls, array.as_primitive::<Date32Type>().values().clone())
            }
            DataType::Date64 => {
                let values = array.as_primitive::<Date64Type>().values().clone();
                for (row, &ms) in values.iter().enumerate() {
                    if nulls.is_valid(row)
                        && (ms % MICROS_PER_DAY_MS != 0
                            || i32::try_from(ms / MICROS_PER_DAY_MS).is_err())
                    {
                        return Err(Error::invalid(format!(
                            "the date64 value {ms} ms is not a whole day that a DATE holds"
                        )));
                    }
                }
                Self::Date64(nulls, values)
            }
            DataType::Timestamp(unit, tz) => {
                let tag = if tz.is_some() {
                    TIMESTAMP
                } else {
                    TIMESTAMP_NTZ
                };
                let values = match unit {
                    TimeUnit::Second => {
                        array.as_primitive::<TimestampSecondType>().values().clone()
                    }
                    TimeUnit::Millisecond => array
                        .as_primitive::<TimestampMillisecondType>()
                        .values()
                        .clone(),
                    TimeUnit::Microsecond => array
                        .as_primitive::<TimestampMicrosecondType>()
                        .values()
                        .clone(),
                    TimeUnit::Nanosecond => array
                        .as_primitive::<TimestampNanosecondType>()
                        .values()
                        .clone(),
                };
                check_timestamps(&nulls, &values, unit)?;
                Self::Timestamp(tag, nulls, values, *unit)
            }
            DataType::List(_) => {
                let a = array.as_list::<i32>();
                Self::List(
                    nulls,
                    a.offsets().clone(),
                    Box::new(Self::build(a.values())?),
                )
            }
            DataType::LargeList(_) => {
                let a = array.as_list::<i64>();
                Self::LargeList(
                    nulls,
                    a.offsets().clone(),
                    Box::new(Self::build(a.values())?),
                )
            }
            DataType::ListView(_) => {
                let a = array.as_list_view::<i32>();
                Self::ListView(
                    nulls,
                    a.offsets().clone(),
                    a.sizes().clone(),
                    Box::new(Self::build(a.values())?),
                )
            }
            DataType::LargeListView(_) => {
                let a = array.as_list_view::<i64>();
                Self::LargeListView(
                    nulls,
                    a.offsets().clone(),
                    a.sizes().clone(),
                    Box::new(Self::build(a.values())?),
                )
            }
            DataType::FixedSizeList(_, size) => {
                // arrow-rs slices the values to the list's rows, so row i starts at i * size.
                let a = array.as_fixed_size_list();
                Self::FixedList(nulls, *size as usize, Box::new(Self::build(a.values())?))
            }
            DataType::Map(_, _) => {
                let a = array.as_map();
                if a.keys().null_count() > 0 {
                    return Err(Error::invalid(
                        "a map key is NULL, which Spark's maps cannot hold",
                    ));
                }
                Self::Map(
                    nulls,
                    a.offsets().clone(),
                    Box::new(Self::build(a.keys())?),
                    Box::new(Self::build(a.values())?),
                )
            }
            DataType::Struct(_) => Self::Struct(
                nulls,
                array
                    .as_struct()
                    .columns()
                    .iter()
                    .map(Self::build)
                    .collect::<Result<_, _>>()?,
            ),
            DataType::Dictionary(key_type, _) => {
                let dictionary = array.as_any_dictionary();
                let values = dictionary.values();
                let keys = dictionary_keys(dictionary.keys(), key_type, &nulls, values.len())?;
                Self::Dictionary(nulls, keys, Box::new(Self::build(values)?))
            }
            other => {
                return Err(Error::invalid(format!(
                    "Spark has no type for the Arrow type {}",
                    crate::spark_type::arrow_type_name(other)
                )))
            }
        })
    }

    /// Whether the value of `row` is NULL (a dictionary's key or value, every value of the null type).
    #[inline(always)]
    pub fn is_null(&self, row: usize) -> bool {
        match self {
            Self::Null => true,
            Self::Dictionary(nulls, keys, values) => {
                nulls.is_null(row) || values.is_null(keys[row])
            }
            Self::Boolean(n, _)
            | Self::Int8(n, _)
            | Self::Int16(n, _)
            | Self::Int32(n, _)
            | Self::Int64(n, _)
            | Self::UInt8(n, _)
            | Self::UInt16(n, _)
            | Self::UInt32(n, _)
            | Self::UInt64(n, _)
            | Self::Float32(n, _)
            | Self::Float64(n, _)
            | Self::Decimal32(n, _, _)
            | Self::Decimal64(n, _, _)
            | Self::Decimal128(n, _, _)
            | Self::Decimal256(n, _, _)
            | Self::Bytes(_, n, _, _)
            | Self::LargeBytes(_, n, _, _)
            | Self::View(_, n, _, _)
            | Self::FixedBytes(n, _)
            | Self::Date32(n, _)
            | Self::Date64(n, _)
            | Self::Timestamp(_, n, _, _)
            | Self::List(n, _, _)
            | Self::LargeList(n, _, _)
            | Self::ListView(n, _, _, _)
            | Self::LargeListView(n, _, _, _)
            | Self::FixedList(n, _, _)
            | Self::Map(n, _, _, _)
            | Self::Struct(n, _) => n.is_null(row),
        }
    }

    /// The bytes of a STRING value (of a string column or a dictionary of strings); `None` for NULL or
    /// another type.
    #[inline]
    pub fn string_value(&self, row: usize) -> Option<&[u8]> {
        match self {
            Self::Bytes(STRING, n, offsets, data) if n.is_valid(row) => {
                Some(slice32(offsets, data, row))
            }
            Self::LargeBytes(STRING, n, offsets, data) if n.is_valid(row) => {
                Some(slice64(offsets, data, row))
            }
            Self::View(STRING, n, views, buffers) if n.is_valid(row) => {
                Some(view_bytes(views, row, buffers))
            }
            Self::Dictionary(n, keys, values) if n.is_valid(row) => values.string_value(keys[row]),
            _ => None,
        }
    }

    /// Appends `ENC(value of row)` to `out`.
    #[inline]
    pub fn encode(&self, row: usize, out: &mut Vec<u8>, scratch: &mut Scratch) {
        // One match: each arm checks its own validity, rather than a second match to find it first.
        match self {
            Self::Null => out.push(NULL),
            Self::Boolean(n, v) => {
                if n.is_null(row) {
                    out.push(NULL);
                } else {
                    put_bool(out, v.value(row));
                }
            }
            Self::Int8(n, v) => {
                if n.is_null(row) {
                    out.push(NULL);
                } else {
                    put_i64(out, INTEGRAL, i64::from(v[row]));
                }
            }
            Self::Int16(n, v) => {
                if n.is_null(row) {
                    out.push(NULL);
                } else {
                    put_i64(out, INTEGRAL, i64::from(v[row]));
                }
            }
            Self::Int32(n, v) => {
                if n.is_null(row) {
                    out.push(NULL);
                } else {
                    put_i64(out, INTEGRAL, i64::from(v[row]));
                }
            }
            Self::Int64(n, v) => {
                if n.is_null(row) {
                    out.push(NULL);
                } else {
                    put_i64(out, INTEGRAL, v[row]);
                }
            }
            Self::UInt8(n, v) => {
                if n.is_null(row) {
                    out.push(NULL);
                } else {
                    put_i64(out, INTEGRAL, i64::from(v[row]));
                }
            }
            Self::UInt16(n, v) => {
                if n.is_null(row) {
                    out.push(NULL);
                } else {
                    put_i64(out, INTEGRAL, i64::from(v[row]));
                }
            }
            Self::UInt32(n, v) => {
                if n.is_null(row) {
                    out.push(NULL);
                } else {
                    put_i64(out, INTEGRAL, i64::from(v[row]));
                }
            }
            Self::UInt64(n, v) => {
                if n.is_null(row) {
                    out.push(NULL);
                } else {
                    put_decimal(out, i128::from(v[row]), 0);
                }
            }
            Self::Float32(n, v) => {
                if n.is_null(row) {
                    out.push(NULL);
                } else {
                    put_double(out, f64::from(v[row]));
                }
            }
            Self::Float64(n, v) => {
                if n.is_null(row) {
                    out.push(NULL);
                } else {
                    put_double(out, v[row]);
                }
            }
            Self::Decimal32(n, v, s) => {
                if n.is_null(row) {
                    out.push(NULL);
                } else {
                    put_decimal(out, i128::from(v[row]), *s);
                }
            }
            Self::Decimal64(n, v, s) => {
                if n.is_null(row) {
                    out.push(NULL);
                } else {
                    put_decimal(out, i128::from(v[row]), *s);
                }
            }
            Self::Decimal128(n, v, s) => {
                if n.is_null(row) {
                    out.push(NULL);
                } else {
                    put_decimal(out, v[row], *s);
                }
            }
            Self::Decimal256(n, v, s) => {
                if n.is_null(row) {
                    out.push(NULL);
                } else {
                    put_decimal(out, v[row].as_i128(), *s);
                }
            }
            Self::Bytes(tag, n, offsets, data) => {
                if n.is_null(row) {
                    out.push(NULL);
                } else {
                    put_bytes(out, *tag, slice32(offsets, data, row));
                }
            }
            Self::LargeBytes(tag, n, offsets, data) => {
                if n.is_null(row) {
                    out.push(NULL);
                } else {
                    put_bytes(out, *tag, slice64(offsets, data, row))
                }
            }
            Self::View(tag, n, views, buffers) => {
                if n.is_null(row) {
                    out.push(NULL);
                } else {
                    put_bytes(out, *tag, view_bytes(views, row, buffers))
                }
            }
            Self::FixedBytes(n, a) => {
                if n.is_null(row) {
                    out.push(NULL);
                } else {
                    put_bytes(out, BINARY, a.value(row));
                }
            }
            Self::Date32(n, v) => {
                if n.is_null(row) {
                    out.push(NULL);
                } else {
                    put_i32(out, DATE, v[row]);
                }
            }
            Self::Date64(n, v) => {
                if n.is_null(row) {
                    out.push(NULL);
                } else {
                    put_i32(out, DATE, (v[row] / MICROS_PER_DAY_MS) as i32);
                }
            }
            Self::Timestamp(tag, n, v, unit) => {
                if n.is_null(row) {
                    out.push(NULL);
                } else {
                    put_i64(out, *tag, micros(v[row], unit));
                }
            }
            Self::List(n, offsets, child) => {
                if n.is_null(row) {
                    out.push(NULL);
                } else {
                    let (start, end) = (offsets[row] as usize, offsets[row + 1] as usize);
                    encode_elements(child, start..end, out, scratch);
                }
            }
            Self::LargeList(n, offsets, child) => {
                if n.is_null(row) {
                    out.push(NULL);
                } else {
                    let (start, end) = (offsets[row] as usize, offsets[row + 1] as usize);
                    encode_elements(child, start..end, out, scratch);
                }
            }
            Self::ListView(n, offsets, sizes, child) => {
                if n.is_null(row) {
                    out.push(NULL);
                } else {
                    let start = offsets[row] as usize;
                    encode_elements(child, start..start + sizes[row] as usize, out, scratch);
                }
            }
            Self::LargeListView(n, offsets, sizes, child) => {
                if n.is_null(row) {
                    out.push(NULL);
                } else {
                    let start = offsets[row] as usize;
                    encode_elements(child, start..start + sizes[row] as usize, out, scratch);
                }
            }
            Self::FixedList(n, size, child) => {
                if n.is_null(row) {
                    out.push(NULL);
                } else {
                    encode_elements(child, row * size..(row + 1) * size, out, scratch)
                }
            }
            Self::Map(n, offsets, keys, values) => {
                if n.is_null(row) {
                    out.push(NULL);
                } else {
                    let (start, end) = (offsets[row] as usize, offsets[row + 1] as usize);
                    encode_map(keys, values, start..end, out, scratch);
                }
            }
            Self::Struct(n, fields) => {
                if n.is_null(row) {
                    out.push(NULL);
                } else {
                    out.push(STRUCT);
                    put_u32(out, fields.len() as u32);
                    for field in fields {
                        field.encode(row, out, scratch);
                    }
                }
            }
            Self::Dictionary(n, keys, values) => {
                if n.is_null(row) {
                    out.push(NULL);
                } else {
                    values.encode(keys[row], out, scratch);
                }
            }
        }
    }
}

#[inline(always)]
pub(crate) fn slice32<'a>(offsets: &OffsetBuffer<i32>, data: &'a Buffer, row: usize) -> &'a [u8] {
    &data[offsets[row] as usize..offsets[row + 1] as usize]
}

#[inline(always)]
pub(crate) fn slice64<'a>(offsets: &OffsetBuffer<i64>, data: &'a Buffer, row: usize) -> &'a [u8] {
    &data[offsets[row] as usize..offsets[row + 1] as usize]
}

/// The bytes a view names (Arrow columnar format): a 16-byte view holds the length, then up to 12 bytes
/// inline, or else a prefix, the data buffer's index and the offset in it.
#[inline(always)]
pub(crate) fn view_bytes<'a>(
    views: &'a ScalarBuffer<u128>,
    row: usize,
    buffers: &'a [Buffer],
) -> &'a [u8] {
    let view = views[row];
    let len = view as u32 as usize;
    if len <= 12 {
        // The view's own bytes, read from its buffer (not from a copy of it).
        let start = row * 16 + 4;
        return &views.inner()[start..start + len];
    }
    let buffer = (view >> 64) as u32 as usize;
    let offset = (view >> 96) as u32 as usize;
    &buffers[buffer][offset..offset + len]
}

#[inline(always)]
pub(crate) fn micros(value: i64, unit: &TimeUnit) -> i64 {
    // Checked when the node was built: these neither overflow nor drop a fraction.
    match unit {
        TimeUnit::Second => value * 1_000_000,
        TimeUnit::Millisecond => value * 1_000,
        TimeUnit::Microsecond => value,
        TimeUnit::Nanosecond => value / 1_000,
    }
}

fn check_timestamps(
    nulls: &Nulls,
    values: &ScalarBuffer<i64>,
    unit: &TimeUnit,
) -> Result<(), Error> {
    let (factor, name) = match unit {
        TimeUnit::Second => (1_000_000, "s"),
        TimeUnit::Millisecond => (1_000, "ms"),
        TimeUnit::Microsecond => return Ok(()),
        TimeUnit::Nanosecond => {
            for (row, &ns) in values.iter().enumerate() {
                if ns % 1_000 != 0 && nulls.is_valid(row) {
                    return Err(Error::invalid(format!(
                        "the timestamp[ns] value {ns} is not a whole number of microseconds, the unit Spark keeps \
                         (Spark reads no nanoseconds from Parquet); truncate it to microseconds first, e.g. \
                         write with coerce_timestamps=\"us\""
                    )));
                }
            }
            return Ok(());
        }
    };
    for (row, &value) in values.iter().enumerate() {
        if value.checked_mul(factor).is_none() && nulls.is_valid(row) {
            return Err(overflow(name, value));
        }
    }
    Ok(())
}

fn dictionary_keys(
    keys: &dyn Array,
    key_type: &DataType,
    nulls: &Nulls,
    len: usize,
) -> Result<Vec<usize>, Error> {
    fn collect<T: Copy + TryInto<usize>>(
        values: &[T],
        nulls: &Nulls,
        len: usize,
    ) -> Result<Vec<usize>, Error> {
        values
            .iter()
            .enumerate()
            .map(|(row, &key)| match key.try_into() {
                Ok(k) if k < len => Ok(k),
                // A NULL row's key is never read: any value will do.
                _ if nulls.is_null(row) => Ok(0),
                _ => Err(Error::invalid(format!(
                    "dictionary key at row {row} is outside its {len} values"
                ))),
            })
            .collect()
    }
    match key_type {
        DataType::Int8 => collect(keys.as_primitive::<Int8Type>().values(), nulls, len),
        DataType::Int16 => collect(keys.as_primitive::<Int16Type>().values(), nulls, len),
        DataType::Int32 => collect(keys.as_primitive::<Int32Type>().values(), nulls, len),
        DataType::Int64 => collect(keys.as_primitive::<Int64Type>().values(), nulls, len),
        DataType::UInt8 => collect(keys.as_primitive::<UInt8Type>().values(), nulls, len),
        DataType::UInt16 => collect(keys.as_primitive::<UInt16Type>().values(), nulls, len),
        DataType::UInt32 => collect(keys.as_primitive::<UInt32Type>().values(), nulls, len),
        DataType::UInt64 => collect(keys.as_primitive::<UInt64Type>().values(), nulls, len),
        other => Err(Error::invalid(format!(
            "a dictionary cannot have {other} keys"
        ))),
    }
}

#[inline]
fn encode_elements(
    child: &Node,
    range: std::ops::Range<usize>,
    out: &mut Vec<u8>,
    scratch: &mut Scratch,
) {
    out.push(ARRAY);
    put_u32(out, range.len() as u32);
    for element in range {
        child.encode(element, out, scratch);
    }
}

/// A map's entries: the sum of their MurmurHash3 digests (section 4.6), or their SHA-256 digests in
/// ascending order under SHA-256 and HMAC-SHA-256 (section 10).
fn encode_map(
    keys: &Node,
    values: &Node,
    range: std::ops::Range<usize>,
    out: &mut Vec<u8>,
    scratch: &mut Scratch,
) {
    out.push(MAP);
    put_u32(out, range.len() as u32);
    let depth = scratch.depth;
    if scratch.entries.len() <= depth {
        scratch.entries.resize_with(depth + 1, Vec::new);
        scratch.digests.resize_with(depth + 1, Vec::new);
    }
    let mut entry = std::mem::take(&mut scratch.entries[depth]);
    let mut digests = std::mem::take(&mut scratch.digests[depth]);
    digests.clear();
    let mut sum = 0u128;
    scratch.depth += 1;
    for row in range {
        entry.clear();
        keys.encode(row, &mut entry, scratch);
        values.encode(row, &mut entry, scratch);
        if scratch.sorted_maps {
            digests.push(Sha256::digest(&entry).into());
        } else {
            // Addition, not XOR, so that equal entries accumulate instead of cancelling.
            sum = sum.wrapping_add(u128::from_le_bytes(murmur3_x64_128(&entry, SEED)));
        }
    }
    scratch.depth -= 1;
    if scratch.sorted_maps {
        digests.sort_unstable();
        for digest in &digests {
            out.extend_from_slice(digest);
        }
    } else {
        out.extend_from_slice(&sum.to_le_bytes());
    }
    scratch.entries[depth] = entry;
    scratch.digests[depth] = digests;
}
