//! The canonical encoding of values (docs/FORMAT.md, section 4): tags and payloads, little-endian.

pub const NULL: u8 = 0x00;
pub const BOOLEAN: u8 = 0x01;
pub const INTEGRAL: u8 = 0x02;
pub const FLOATING: u8 = 0x03;
pub const DECIMAL: u8 = 0x04;
pub const STRING: u8 = 0x05;
pub const BINARY: u8 = 0x06;
pub const DATE: u8 = 0x07;
pub const TIMESTAMP: u8 = 0x08;
pub const TIMESTAMP_NTZ: u8 = 0x09;
pub const ARRAY: u8 = 0x10;
pub const MAP: u8 = 0x11;
pub const STRUCT: u8 = 0x12;

/// The first byte of a positional record, and the format version.
pub const FORMAT_VERSION: u8 = 0x01;
/// The first byte of a by-name record (section 6).
pub const BY_NAME_RECORD: u8 = 0x81;
/// The byte that ends a by-name record.
pub const BY_NAME_END: u8 = 0x00;
/// The first byte of a business key (section 9).
pub const KEY_RECORD: u8 = 0x82;

const CANONICAL_NAN: u64 = 0x7FF8_0000_0000_0000;

#[inline(always)]
pub fn put_u32(out: &mut Vec<u8>, value: u32) {
    out.extend_from_slice(&value.to_le_bytes());
}

#[inline(always)]
pub fn put_i64(out: &mut Vec<u8>, tag: u8, value: i64) {
    let mut bytes = [0u8; 9];
    bytes[0] = tag;
    bytes[1..].copy_from_slice(&value.to_le_bytes());
    out.extend_from_slice(&bytes);
}

#[inline(always)]
pub fn put_i32(out: &mut Vec<u8>, tag: u8, value: i32) {
    let mut bytes = [0u8; 5];
    bytes[0] = tag;
    bytes[1..].copy_from_slice(&value.to_le_bytes());
    out.extend_from_slice(&bytes);
}

#[inline(always)]
pub fn put_bool(out: &mut Vec<u8>, value: bool) {
    out.extend_from_slice(&[BOOLEAN, u8::from(value)]);
}

/// A STRING or BINARY value: the tag, `u32(len)` and the bytes.
#[inline(always)]
pub fn put_bytes(out: &mut Vec<u8>, tag: u8, value: &[u8]) {
    out.push(tag);
    put_u32(out, value.len() as u32);
    out.extend_from_slice(value);
}

/// A FLOAT or DOUBLE (a FLOAT widened exactly first): `-0.0` as `0.0`, every NaN as the canonical NaN.
#[inline(always)]
pub fn put_double(out: &mut Vec<u8>, value: f64) {
    put_i64(out, FLOATING, double_bits(value) as i64);
}

/// The bits a DOUBLE is written as: `-0.0` as `0.0`, every NaN as the canonical NaN.
#[inline(always)]
pub fn double_bits(value: f64) -> u64 {
    if value.is_nan() {
        CANONICAL_NAN
    } else if value == 0.0 {
        0
    } else {
        value.to_bits()
    }
}

/// A DECIMAL of unscaled value `unscaled` and scale `scale`, trailing zeros stripped (section 4.3).
#[inline]
pub fn put_decimal(out: &mut Vec<u8>, unscaled: i128, scale: i8) {
    let (bytes, len) = decimal_encoding(unscaled, scale);
    out.extend_from_slice(&bytes[..len]);
}

/// The longest DECIMAL encoding: the tag, `i32(scale)`, the size and 16 bytes.
pub const DECIMAL_MAX: usize = 22;

/// A DECIMAL's encoding (section 4.3) at the start of an array, and its length.
#[inline]
pub fn decimal_encoding(unscaled: i128, scale: i8) -> ([u8; DECIMAL_MAX], usize) {
    let (unscaled, scale) = normalise_decimal(unscaled, i32::from(scale));
    let size = decimal_size(unscaled);
    let mut bytes = [0u8; DECIMAL_MAX];
    bytes[0] = DECIMAL;
    bytes[1..5].copy_from_slice(&scale.to_le_bytes());
    bytes[5] = size as u8;
    bytes[6..].copy_from_slice(&unscaled.to_le_bytes());
    (bytes, 6 + size)
}

/// The length of a DECIMAL's encoding.
#[inline]
pub fn decimal_len(unscaled: i128, scale: i8) -> usize {
    6 + decimal_size(normalise_decimal(unscaled, i32::from(scale)).0)
}

/// The smallest two's complement width that holds the value: one sign bit more than its magnitude.
#[inline(always)]
fn decimal_size(unscaled: i128) -> usize {
    let magnitude = if unscaled >= 0 { unscaled } else { !unscaled };
    (128 - magnitude.leading_zeros()) as usize / 8 + 1
}

#[inline]
fn normalise_decimal(unscaled: i128, scale: i32) -> (i128, i32) {
    // Most decimals fit 64 bits, where division is several times cheaper.
    if let Ok(small) = i64::try_from(unscaled) {
        let (small, scale) = normalise_small_decimal_at(small, scale);
        return (i128::from(small), scale);
    }
    let (mut unscaled, mut scale) = (unscaled, scale);
    while unscaled % 10 == 0 {
        unscaled /= 10;
        scale -= 1;
    }
    (unscaled, scale)
}

/// A DECIMAL that fits 64 bits with its trailing zeros stripped (section 4.3): the unscaled value and scale.
#[inline(always)]
pub fn normalise_small_decimal(unscaled: i64, scale: i8) -> (i64, i32) {
    normalise_small_decimal_at(unscaled, i32::from(scale))
}

#[inline(always)]
fn normalise_small_decimal_at(mut unscaled: i64, mut scale: i32) -> (i64, i32) {
    if unscaled == 0 {
        return (0, 0);
    }
    if unscaled % 10 != 0 {
        return (unscaled, scale);
    }
    // An i64 has at most 18 trailing zeros: strip 16, 8, 4, 2 and 1 of them, each where they are, in five
    // steps rather than one division per zero.
    for (power, zeros) in [
        (10_000_000_000_000_000, 16),
        (100_000_000, 8),
        (10_000, 4),
        (100, 2),
        (10, 1),
    ] {
        if unscaled % power == 0 {
            unscaled /= power;
            scale -= zeros;
        }
    }
    (unscaled, scale)
}

/// [`decimal_size`] of a value that fits 64 bits.
#[inline(always)]
pub fn small_decimal_size(unscaled: i64) -> usize {
    let magnitude = unscaled ^ (unscaled >> 63);
    (64 - magnitude.leading_zeros()) as usize / 8 + 1
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decimal(unscaled: i128, scale: i8) -> Vec<u8> {
        let mut out = Vec::new();
        put_decimal(&mut out, unscaled, scale);
        out
    }

    #[test]
    fn writes_decimals_as_format_section_4_3() {
        // The worked example: CAST(-1.50 AS DECIMAL(10,2)) -> 04 | 01 00 00 00 | 01 | F1.
        assert_eq!(decimal(-150, 2), [0x04, 0x01, 0, 0, 0, 0x01, 0xF1]);
        assert_eq!(decimal(0, 5), [0x04, 0, 0, 0, 0, 0x01, 0x00]);
        // 100 DECIMAL(3,0) is u = 1, s = -2.
        assert_eq!(decimal(100, 0), [0x04, 0xFE, 0xFF, 0xFF, 0xFF, 0x01, 0x01]);
        // 128 needs a second byte for its sign; -128 does not.
        assert_eq!(decimal(128, 0), [0x04, 0, 0, 0, 0, 0x02, 0x80, 0x00]);
        assert_eq!(decimal(-128, 0), [0x04, 0, 0, 0, 0, 0x01, 0x80]);
        let max = 10i128.pow(38) - 1;
        assert_eq!(decimal(max, 0).len(), 1 + 4 + 1 + 16);
    }

    #[test]
    fn strips_every_count_of_trailing_zeros() {
        // The stepwise stripping against one division per zero, for 0 to 18 zeros, both signs.
        for zeros in 0..=18u32 {
            for base in [1i64, 7, -3, 11, -9, 123_456_789, 922] {
                let Some(value) = base.checked_mul(10i64.pow(zeros)) else {
                    continue;
                };
                let (mut naive, mut scale) = (value, 5);
                while naive % 10 == 0 {
                    naive /= 10;
                    scale -= 1;
                }
                assert_eq!(normalise_small_decimal(value, 5), (naive, scale), "{value}");
                assert_eq!(
                    normalise_decimal(i128::from(value), 5),
                    (i128::from(naive), scale)
                );
            }
        }
        assert_eq!(normalise_small_decimal(i64::MIN, 0), (i64::MIN, 0));
        assert_eq!(normalise_small_decimal(0, 7), (0, 0));
    }

    #[test]
    fn folds_negative_zero_and_nan_payloads() {
        let mut a = Vec::new();
        put_double(&mut a, -0.0);
        assert_eq!(a, [0x03, 0, 0, 0, 0, 0, 0, 0, 0]);
        let mut b = Vec::new();
        put_double(&mut b, f64::from_bits(0xFFF0_0000_0000_0001));
        assert_eq!(b, [0x03, 0, 0, 0, 0, 0, 0, 0xF8, 0x7F]);
    }
}
