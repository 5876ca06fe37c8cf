//! The digits PostgreSQL prints for a float (`float8out`, `float4out` with `extra_float_digits > 0`: its build
//! of Ryu, `src/common/d2s.c` and `f2s.c`): the shortest decimal strictly inside the interval of values that
//! read back as the float, the closest to it of that length.
//!
//! Rust's shortest digits (`{:e}`) are the same but for two cases:
//! - they also take a decimal on the interval's edge, an exact midpoint between two floats that reads back as
//!   this one by round-half-even; PostgreSQL's build does not, and prints more digits. A short decimal is a
//!   midpoint only for integers whose floats are 4 or more apart, which [`on_edge`] checks exactly;
//! - when the float lies exactly halfway between the two closest decimals of the shortest length, Ryu takes
//!   the one whose last digit is even, Rust not always. Only a float whose exact decimal has one digit more
//!   than the shortest is halfway ([`halfway`]).

use std::fmt::Write;

/// A finite, nonzero float's bits as PostgreSQL's Ryu reads them.
#[derive(Clone, Copy)]
pub struct Bits {
    /// The significand, with its implicit bit.
    pub significand: u64,
    /// The value is `significand × 2^exponent`.
    pub exponent: i32,
    /// The float below is half as far as the one above (a power of two above the smallest normal).
    pub closer_below: bool,
}

impl Bits {
    fn decode(bits: u64, significand_bits: u32, exponent_bits: u32) -> Self {
        let bias = (1i32 << (exponent_bits - 1)) - 1;
        let field = ((bits >> significand_bits) & ((1 << exponent_bits) - 1)) as i32;
        let fraction = bits & ((1 << significand_bits) - 1);
        let shift = significand_bits as i32;
        if field == 0 {
            Self {
                significand: fraction,
                exponent: 1 - bias - shift,
                closer_below: false,
            }
        } else {
            Self {
                significand: fraction | (1 << significand_bits),
                exponent: field - bias - shift,
                closer_below: fraction == 0 && field > 1,
            }
        }
    }

    pub fn of_f64(value: f64) -> Self {
        Self::decode(value.to_bits(), 52, 11)
    }

    pub fn of_f32(value: f32) -> Self {
        Self::decode(value.to_bits().into(), 23, 8)
    }
}

/// Whether `digits × 10^shift` (an integer when `shift >= 0`) is a midpoint between the float `bits` and a
/// neighbour: `(2m ± 1) × 2^(e - 1)`, or `(4m - 1) × 2^(e - 2)` below a power of two.
pub fn on_edge(digits: u64, shift: i32, bits: Bits) -> bool {
    if shift < 0 || digits == 0 {
        return false;
    }
    let twos = digits.trailing_zeros() as i32;
    let odd = u128::from(digits >> twos);
    let m = u128::from(bits.significand);
    let below = if bits.closer_below {
        (4 * m - 1, bits.exponent - 2)
    } else {
        (2 * m - 1, bits.exponent - 1)
    };
    [(2 * m + 1, bits.exponent - 1), below]
        .into_iter()
        .any(|(multiple, power)| {
            // Equal numbers have equal powers of two and equal odd parts; 5^28 exceeds any odd part here.
            power == twos + shift && shift < 28 && odd * 5u128.pow(shift as u32) == multiple
        })
}

/// The exact decimal digits of the float `bits` (its magnitude) when they are `length + 1` digits ending in 5,
/// with the decimal exponent of their first: the float is then halfway between two decimals of `length` digits.
fn halfway(bits: Bits, length: usize) -> Option<(Vec<u8>, i32)> {
    let zeros = bits.significand.trailing_zeros();
    let (odd, power) = (bits.significand >> zeros, bits.exponent + zeros as i32);
    // odd × 2^power, power < 0, is odd × 5^-power / 10^-power: its digits are those of odd × 5^-power. Past
    // 5^27 they are more than 18, more than any shortest length plus one.
    if !(-27..0).contains(&power) {
        return None;
    }
    let exact = (u128::from(odd) * 5u128.pow(power.unsigned_abs())).to_string();
    if exact.len() != length + 1 {
        return None;
    }
    // The first digit's exponent: the number is exact / 10^-power.
    Some((exact.into_bytes(), (length as i32) + power))
}

/// `digits` (`length + 1`, the last a 5) rounded to `length` half to even, with the exponent of the first.
fn round_half_even(mut digits: Vec<u8>, exponent: i32) -> (Vec<u8>, i32) {
    digits.pop();
    if (digits.last().copied().unwrap_or(b'0') - b'0').is_multiple_of(2) {
        return (digits, exponent);
    }
    for digit in digits.iter_mut().rev() {
        if *digit == b'9' {
            *digit = b'0';
        } else {
            *digit += 1;
            let kept = digits.len() - digits.iter().rev().take_while(|&&d| d == b'0').count();
            digits.truncate(kept.max(1));
            return (digits, exponent);
        }
    }
    (vec![b'1'], exponent + 1)
}

/// The sign, digits and decimal exponent (`d.ddd × 10^exponent`) of `{:e}`-style text.
fn parse(scientific: &str) -> (bool, Vec<u8>, i32) {
    let (mantissa, exponent) = scientific.split_once('e').expect("{:e} prints an exponent");
    let negative = mantissa.starts_with('-');
    let digits = mantissa.bytes().filter(u8::is_ascii_digit).collect();
    (
        negative,
        digits,
        exponent.parse().expect("{:e} prints an integer exponent"),
    )
}

fn value_of(digits: &[u8]) -> u64 {
    digits.iter().fold(0u64, |v, d| {
        v.wrapping_mul(10).wrapping_add(u64::from(d - b'0'))
    })
}

/// PostgreSQL's digits for a finite, nonzero float: `shortest` its `{:e}`, `at(p)` its text correctly rounded
/// to `p` digits, `reads_back` whether a text reads back as it, `most` the digits that always do.
pub fn digits(
    scratch: &mut String,
    bits: Bits,
    shortest: impl Fn(&mut String),
    at: impl Fn(&mut String, usize),
    reads_back: impl Fn(&str) -> bool,
    most: usize,
) -> (bool, Vec<u8>, i32) {
    scratch.clear();
    shortest(scratch);
    let (negative, digits, exponent) = parse(scratch);
    if let Some((exact, first)) = halfway(bits, digits.len()) {
        let (digits, exponent) = round_half_even(exact, first);
        return (negative, digits, exponent);
    }
    let shift = |d: &[u8], e: i32| e - (d.len() as i32 - 1);
    if !on_edge(value_of(&digits), shift(&digits, exponent), bits) {
        return (negative, digits, exponent);
    }
    for precision in digits.len() + 1..=most {
        scratch.clear();
        at(scratch, precision);
        let (negative, longer, exponent) = parse(scratch);
        let trimmed = longer.len() - longer.iter().rev().take_while(|&&d| d == b'0').count();
        let longer = longer[..trimmed.max(1)].to_vec();
        if reads_back(scratch) && !on_edge(value_of(&longer), shift(&longer, exponent), bits) {
            return (negative, longer, exponent);
        }
    }
    scratch.clear();
    at(scratch, most);
    parse(scratch)
}

/// [`digits`] of a double.
pub fn f64_digits(scratch: &mut String, value: f64) -> (bool, Vec<u8>, i32) {
    digits(
        scratch,
        Bits::of_f64(value),
        |s| {
            let _ = write!(s, "{value:e}");
        },
        |s, p| {
            let _ = write!(s, "{value:.*e}", p - 1);
        },
        |text| text.parse::<f64>() == Ok(value),
        17,
    )
}

/// [`digits`] of a real.
pub fn f32_digits(scratch: &mut String, value: f32) -> (bool, Vec<u8>, i32) {
    digits(
        scratch,
        Bits::of_f32(value),
        |s| {
            let _ = write!(s, "{value:e}");
        },
        |s, p| {
            let _ = write!(s, "{value:.*e}", p - 1);
        },
        |text| text.parse::<f32>() == Ok(value),
        9,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_shortest_decimal_on_the_edge_gets_another_digit() {
        // 33995606510552912 is a double; the floats beside it are 4 away, so 33995606510552910 (16 digits,
        // Rust's shortest) is the midpoint below. PostgreSQL 15 prints 3.3995606510552912e+16.
        let value = 33_995_606_510_552_912.0f64;
        assert_eq!(format!("{value:e}"), "3.399560651055291e16");
        let (negative, digits, exponent) = f64_digits(&mut String::new(), value);
        assert_eq!(
            (negative, digits.as_slice(), exponent),
            (false, b"33995606510552912".as_slice(), 16)
        );
    }

    #[test]
    fn halfway_between_two_shortest_decimals_the_even_one() {
        // Exactly 664.51422119140625 and 2267997.25: PostgreSQL 15 prints 664.5142211914062 and, for the
        // real, 2.2679972e+06.
        let (_, digits, exponent) = f64_digits(&mut String::new(), 43_549_604.0 / 65_536.0);
        assert_eq!(
            (digits.as_slice(), exponent),
            (b"6645142211914062".as_slice(), 2)
        );
        let (_, digits, exponent) = f32_digits(&mut String::new(), 9_071_989.0 / 4.0);
        assert_eq!((digits.as_slice(), exponent), (b"22679972".as_slice(), 6));
    }

    #[test]
    fn a_decimal_off_the_edge_is_left_alone() {
        let (_, digits, exponent) = f64_digits(&mut String::new(), 1e100);
        assert_eq!((digits.as_slice(), exponent), (b"1".as_slice(), 100));
        let (_, digits, _) = f32_digits(&mut String::new(), 0.1);
        assert_eq!(digits, b"1");
    }
}
