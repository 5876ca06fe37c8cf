//! A value's text as PostgreSQL's output functions print it, with the settings reconcile pins for its
//! transaction (`extra_float_digits = 3`, `TimeZone = 'UTC'`, `DateStyle = 'ISO, YMD'`, `bytea_output = 'hex'`).
//!
//! Each printer is lossless: its text reads back, in PostgreSQL, as the value printed. So a text equal to the
//! server's is the server's value, and a value printed otherwise than the server would print it (a rare
//! float, a date past PostgreSQL's range) only makes its row's text differ, never match another value's.

use super::floats;

const MICROS_PER_SECOND: i64 = 1_000_000;
const MICROS_PER_DAY: i64 = 86_400 * MICROS_PER_SECOND;

/// `float4out` / `float8out` of a finite, nonzero value from its digits (floats.rs): fixed-point while the
/// exponent is in `-4..fixed_below`, else `d.ddde+XX` with at least two exponent digits.
fn write_float(out: &mut Vec<u8>, decimal: floats::Decimal, fixed_below: i32) {
    let (digits, exponent) = (decimal.digits(), decimal.exponent);
    if decimal.negative {
        out.push(b'-');
    }
    if (-4..fixed_below).contains(&exponent) {
        let before = exponent + 1; // digits before the point
        if before <= 0 {
            out.extend_from_slice(b"0.");
            out.extend(std::iter::repeat_n(b'0', (-before) as usize));
            out.extend_from_slice(digits);
        } else if (before as usize) >= digits.len() {
            out.extend_from_slice(digits);
            out.extend(std::iter::repeat_n(b'0', before as usize - digits.len()));
        } else {
            out.extend_from_slice(&digits[..before as usize]);
            out.push(b'.');
            out.extend_from_slice(&digits[before as usize..]);
        }
    } else {
        out.push(digits[0]);
        if digits.len() > 1 {
            out.push(b'.');
            out.extend_from_slice(&digits[1..]);
        }
        out.extend_from_slice(if exponent < 0 { b"e-" } else { b"e+" });
        write_small(out, exponent.unsigned_abs().into(), 2);
    }
}

/// The texts of NaN, the infinities and the zeros, which have no digits; false for any other value.
fn write_special(out: &mut Vec<u8>, value: f64) -> bool {
    let text: &[u8] = if value.is_nan() {
        b"NaN"
    } else if value.is_infinite() {
        if value > 0.0 {
            b"Infinity"
        } else {
            b"-Infinity"
        }
    } else if value == 0.0 {
        if value.is_sign_negative() {
            b"-0"
        } else {
            b"0"
        }
    } else {
        return false;
    };
    out.extend_from_slice(text);
    true
}

/// `float8out`.
pub fn write_f64(out: &mut Vec<u8>, scratch: &mut String, value: f64) {
    if !write_special(out, value) {
        write_float(out, floats::f64_digits(scratch, value), 15);
    }
}

/// `float4out`.
pub fn write_f32(out: &mut Vec<u8>, scratch: &mut String, value: f32) {
    // Widening keeps NaN, the infinities and the zeros' signs.
    if !write_special(out, f64::from(value)) {
        write_float(out, floats::f32_digits(scratch, value), 6);
    }
}

/// The decimal digits of `value`, at least `width` of them (zeros in front).
fn write_digits(out: &mut Vec<u8>, mut value: u128, width: usize) {
    let mut digits = [0u8; 40];
    let mut at = digits.len();
    while value > 0 || digits.len() - at < width.max(1) {
        at -= 1;
        digits[at] = b'0' + (value % 10) as u8;
        value /= 10;
    }
    out.extend_from_slice(&digits[at..]);
}

/// The decimal digits of a `u64`, which most values fit: a 64-bit division is far cheaper than a 128-bit one.
fn write_small(out: &mut Vec<u8>, mut value: u64, width: usize) {
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    while value > 0 || digits.len() - at < width.max(1) {
        at -= 1;
        digits[at] = b'0' + (value % 10) as u8;
        value /= 10;
    }
    out.extend_from_slice(&digits[at..]);
}

/// An integer's decimal text.
pub fn write_integer(out: &mut Vec<u8>, value: i128) {
    if value < 0 {
        out.push(b'-');
    }
    match u64::try_from(value.unsigned_abs()) {
        Ok(small) => write_small(out, small, 1),
        Err(_) => write_digits(out, value.unsigned_abs(), 1),
    }
}

/// `numeric_out` of `unscaled × 10^-scale` in a column of scale `column_scale`: exactly `column_scale` digits
/// after the point. A value with more nonzero fraction digits than that keeps them (no such value is in the
/// column, so its text matches none).
pub fn write_decimal(out: &mut Vec<u8>, unscaled: i128, scale: i32, column_scale: i32) {
    let (mut unscaled, mut scale) = (unscaled, scale);
    while scale > column_scale && unscaled % 10 == 0 {
        unscaled /= 10;
        scale -= 1;
    }
    if unscaled < 0 {
        out.push(b'-');
    }
    let magnitude = unscaled.unsigned_abs();
    if scale <= 0 {
        write_digits(out, magnitude, 1);
        out.extend(std::iter::repeat_n(b'0', scale.unsigned_abs() as usize));
    } else {
        let unit = 10u128.pow(scale.unsigned_abs());
        write_digits(out, magnitude / unit, 1);
        out.push(b'.');
        write_digits(out, magnitude % unit, scale as usize);
    }
    let digits = scale.max(0);
    if column_scale > digits {
        if digits == 0 {
            out.push(b'.');
        }
        out.extend(std::iter::repeat_n(b'0', (column_scale - digits) as usize));
    }
}

/// `boolout`.
pub fn write_bool(out: &mut Vec<u8>, value: bool) {
    out.push(if value { b't' } else { b'f' });
}

/// `byteaout` in hex.
pub fn write_bytea(out: &mut Vec<u8>, value: &[u8]) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    out.extend_from_slice(b"\\x");
    for &byte in value {
        out.push(HEX[usize::from(byte >> 4)]);
        out.push(HEX[usize::from(byte & 15)]);
    }
}

/// The proleptic Gregorian year, month and day of a day count from 1970-01-01 (as PostgreSQL's `j2date`).
fn civil(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

/// `YYYY-MM-DD`, the year as PostgreSQL prints it (`-(year - 1)` before year 1, marked ` BC` by the caller).
fn write_day(out: &mut Vec<u8>, days: i64) -> bool {
    let (year, month, day) = civil(days);
    let shown = if year > 0 { year } else { 1 - year };
    write_small(out, shown.unsigned_abs(), 4);
    out.push(b'-');
    write_small(out, month.into(), 2);
    out.push(b'-');
    write_small(out, day.into(), 2);
    year <= 0
}

/// `date_out`.
pub fn write_date(out: &mut Vec<u8>, days: i64) {
    if write_day(out, days) {
        out.extend_from_slice(b" BC");
    }
}

/// `timestamp_out` (`with_zone`: `timestamptz_out` in UTC) of microseconds from 1970-01-01 00:00.
pub fn write_timestamp(out: &mut Vec<u8>, micros: i64, with_zone: bool) {
    let days = micros.div_euclid(MICROS_PER_DAY);
    let of_day = micros.rem_euclid(MICROS_PER_DAY);
    let bc = write_day(out, days);
    let seconds = of_day / MICROS_PER_SECOND;
    let fraction = of_day % MICROS_PER_SECOND;
    for (separator, part) in [
        (b' ', seconds / 3600),
        (b':', seconds / 60 % 60),
        (b':', seconds % 60),
    ] {
        out.push(separator);
        write_small(out, part as u64, 2);
    }
    if fraction != 0 {
        // Six digits, the trailing zeros dropped.
        let (mut fraction, mut width) = (fraction as u64, 6);
        while fraction % 10 == 0 {
            fraction /= 10;
            width -= 1;
        }
        out.push(b'.');
        write_small(out, fraction, width);
    }
    if with_zone {
        out.extend_from_slice(b"+00");
    }
    if bc {
        out.extend_from_slice(b" BC");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f64_text(value: f64) -> String {
        let mut out = Vec::new();
        write_f64(&mut out, &mut String::new(), value);
        String::from_utf8(out).unwrap()
    }

    fn f32_text(value: f32) -> String {
        let mut out = Vec::new();
        write_f32(&mut out, &mut String::new(), value);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn doubles_as_postgres_prints_them() {
        // Expected texts: PostgreSQL 15's `SELECT x::float8::text` with extra_float_digits = 3.
        let cases = [
            (1.5, "1.5"),
            (-0.0, "-0"),
            (0.1, "0.1"),
            (1e-4, "0.0001"),
            (1.5e-5, "1.5e-05"),
            (123_456_789_012_345.0, "123456789012345"),
            (1e15, "1e+15"),
            (1.25e100, "1.25e+100"),
            (f64::MIN_POSITIVE, "2.2250738585072014e-308"),
            (5e-324, "5e-324"),
            (f64::NAN, "NaN"),
            (f64::NEG_INFINITY, "-Infinity"),
            (100.0, "100"),
            (-0.00012345, "-0.00012345"),
        ];
        for (value, text) in cases {
            assert_eq!(f64_text(value), text, "{value:e}");
        }
    }

    #[test]
    fn reals_switch_to_exponents_at_six_digits() {
        assert_eq!(f32_text(123_456.0), "123456");
        assert_eq!(f32_text(1_234_567.0), "1.234567e+06");
        assert_eq!(f32_text(0.1), "0.1");
    }

    #[test]
    fn decimals_print_the_columns_scale() {
        let text = |unscaled, scale, column| {
            let mut out = Vec::new();
            write_decimal(&mut out, unscaled, scale, column);
            String::from_utf8(out).unwrap()
        };
        assert_eq!(text(150, 2, 4), "1.5000");
        assert_eq!(text(-5, 2, 2), "-0.05");
        assert_eq!(text(0, 2, 2), "0.00");
        assert_eq!(text(15_000, 4, 2), "1.50");
        assert_eq!(text(15_001, 4, 2), "1.5001");
        assert_eq!(text(7, 0, 0), "7");
        assert_eq!(text(7, -2, 0), "700");
    }

    #[test]
    fn dates_and_timestamps_in_iso_and_utc() {
        let text = |f: &dyn Fn(&mut Vec<u8>)| {
            let mut out = Vec::new();
            f(&mut out);
            String::from_utf8(out).unwrap()
        };
        assert_eq!(text(&|o| write_date(o, 0)), "1970-01-01");
        assert_eq!(text(&|o| write_date(o, -719_528)), "0001-01-01 BC");
        assert_eq!(text(&|o| write_date(o, -719_162)), "0001-01-01");
        assert_eq!(
            text(&|o| write_timestamp(o, 1_500_000, true)),
            "1970-01-01 00:00:01.5+00"
        );
        assert_eq!(
            text(&|o| write_timestamp(o, -1, false)),
            "1969-12-31 23:59:59.999999"
        );
        assert_eq!(text(&|o| write_bytea(o, &[0, 255])), "\\x00ff");
    }
}
