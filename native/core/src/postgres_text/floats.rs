//! The digits PostgreSQL prints for a float (`float8out`, `float4out` with `extra_float_digits > 0`: its build
//! of Ryu, `src/common/d2s.c` and `f2s.c`): the shortest decimal strictly inside the interval of values that
//! read back as the float, the closest to it of that length.
//!
//! The shortest digits of Ryu's reference (the `ryu` crate, and Rust's `{:e}`) are the same but for two
//! cases:
//! - they also take a decimal on the interval's edge, an exact midpoint between two floats that reads back as
//!   this one by round-half-even; PostgreSQL's build does not, and prints more digits. A short decimal is a
//!   midpoint only for integers whose floats are 4 or more apart, which [`on_edge`] checks exactly;
//! - when the float lies exactly halfway between the two closest decimals of the shortest length, Ryu takes
//!   the one whose last digit is even, Rust's `{:e}` not always. Only a float whose exact decimal has one
//!   digit more than the shortest is halfway ([`halfway`]).

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

/// A decimal's digits, without leading or trailing zeros, and the exponent of its first: `d.ddd × 10^exponent`.
#[derive(Clone, Copy)]
pub struct Decimal {
    pub negative: bool,
    buffer: [u8; 40],
    length: usize,
    pub exponent: i32,
}

impl Decimal {
    pub fn digits(&self) -> &[u8] {
        &self.buffer[..self.length]
    }

    /// The digits as an integer (a float's shortest digits are at most 17).
    fn value(&self) -> u64 {
        self.digits().iter().fold(0u64, |v, d| {
            v.wrapping_mul(10).wrapping_add(u64::from(d - b'0'))
        })
    }

    /// The power of ten of the last digit.
    fn shift(&self) -> i32 {
        self.exponent - (self.length as i32 - 1)
    }

    /// From digits with the exponent of the first, dropping leading and trailing zeros.
    fn of(negative: bool, all: &[u8], exponent: i32) -> Self {
        let leading = all.iter().take_while(|&&d| d == b'0').count();
        let kept = &all[leading..];
        let length = kept.len() - kept.iter().rev().take_while(|&&d| d == b'0').count();
        let mut buffer = [b'0'; 40];
        buffer[..length].copy_from_slice(&kept[..length]);
        Self {
            negative,
            buffer,
            length,
            exponent: exponent - leading as i32,
        }
    }

    /// A number's text: ryu's (`123.45`, `0.001`, `1e16`, `1.5e-7`) or `{:e}`'s (`1.2345e2`).
    fn parse(text: &str) -> Self {
        let negative = text.starts_with('-');
        let (mantissa, exponent) = match text.split_once(['e', 'E']) {
            Some((m, e)) => (
                m,
                e.parse::<i32>()
                    .expect("a float's text has an integer exponent"),
            ),
            None => (text, 0),
        };
        let mantissa = mantissa.trim_start_matches('-');
        let before = mantissa.find('.').unwrap_or(mantissa.len()) as i32;
        let mut all = [b'0'; 40];
        let mut n = 0;
        for digit in mantissa.bytes().filter(u8::is_ascii_digit).take(all.len()) {
            all[n] = digit;
            n += 1;
        }
        Self::of(negative, &all[..n], before - 1 + exponent)
    }
}

/// Where the float `bits` is exactly halfway between the two decimals of `length` digits closest to it (its
/// exact decimal has `length + 1` digits, the last a 5), the one whose last digit is even.
fn halfway(negative: bool, bits: Bits, length: usize) -> Option<Decimal> {
    let zeros = bits.significand.trailing_zeros();
    let (odd, power) = (bits.significand >> zeros, bits.exponent + zeros as i32);
    // odd × 2^power, power < 0, is odd × 5^-power / 10^-power: its digits are those of odd × 5^-power. Past
    // 5^27 they are more than 18, more than any shortest length plus one.
    if !(-27..0).contains(&power) {
        return None;
    }
    let exact = u128::from(odd) * 5u128.pow(power.unsigned_abs());
    let count = exact.ilog10() as usize + 1;
    if count != length + 1 {
        return None;
    }
    // Drop the 5 and round half to even: up when the digit before it is odd.
    let mut kept = exact / 10;
    if kept % 2 == 1 {
        kept += 1;
    }
    let mut all = [b'0'; 40];
    let text = kept.to_string();
    all[..text.len()].copy_from_slice(text.as_bytes());
    // The first digit of `exact` is at 10^(count - 1 + power); rounding up may add one in front.
    let exponent = (count as i32 - 1 + power) + (text.len() as i32 - length as i32);
    Some(Decimal::of(negative, &all[..text.len()], exponent))
}

/// PostgreSQL's digits for a finite, nonzero float: `shortest` its shortest text (ryu's), `at(p)` its text
/// correctly rounded to `p` digits, `reads_back` whether a text reads back as it, `most` the digits that always
/// do.
pub fn digits(
    scratch: &mut String,
    bits: Bits,
    shortest: impl Fn(&mut String),
    at: impl Fn(&mut String, usize),
    reads_back: impl Fn(&str) -> bool,
    most: usize,
) -> Decimal {
    scratch.clear();
    shortest(scratch);
    let found = Decimal::parse(scratch);
    if let Some(even) = halfway(found.negative, bits, found.length) {
        return even;
    }
    if !on_edge(found.value(), found.shift(), bits) {
        return found;
    }
    for precision in found.length + 1..=most {
        scratch.clear();
        at(scratch, precision);
        let longer = Decimal::parse(scratch);
        if reads_back(scratch) && !on_edge(longer.value(), longer.shift(), bits) {
            return longer;
        }
    }
    scratch.clear();
    at(scratch, most);
    Decimal::parse(scratch)
}

/// [`digits`] of a double.
pub fn f64_digits(scratch: &mut String, value: f64) -> Decimal {
    digits(
        scratch,
        Bits::of_f64(value),
        |s| s.push_str(ryu::Buffer::new().format_finite(value)),
        |s, p| {
            let _ = write!(s, "{value:.*e}", p - 1);
        },
        |text| text.parse::<f64>() == Ok(value),
        17,
    )
}

/// [`digits`] of a real.
pub fn f32_digits(scratch: &mut String, value: f32) -> Decimal {
    digits(
        scratch,
        Bits::of_f32(value),
        |s| s.push_str(ryu::Buffer::new().format_finite(value)),
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

    fn shown(found: Decimal) -> (bool, String, i32) {
        let digits = String::from_utf8(found.digits().to_vec()).unwrap();
        (found.negative, digits, found.exponent)
    }

    #[test]
    fn a_shortest_decimal_on_the_edge_gets_another_digit() {
        // 33995606510552912 is a double; the floats beside it are 4 away, so 33995606510552910 (16 digits,
        // ryu's shortest) is the midpoint below. PostgreSQL 15 prints 3.3995606510552912e+16.
        let value = 33_995_606_510_552_912.0f64;
        assert_eq!(
            ryu::Buffer::new().format_finite(value),
            "3.399560651055291e16"
        );
        let found = shown(f64_digits(&mut String::new(), value));
        assert_eq!(found, (false, "33995606510552912".into(), 16));
    }

    #[test]
    fn halfway_between_two_shortest_decimals_the_even_one() {
        // Exactly 664.51422119140625 and 2267997.25: PostgreSQL 15 prints 664.5142211914062 and, for the
        // real, 2.2679972e+06; a negative one alike.
        let found = shown(f64_digits(&mut String::new(), 43_549_604.0 / 65_536.0));
        assert_eq!(found, (false, "6645142211914062".into(), 2));
        let found = shown(f32_digits(&mut String::new(), -9_071_989.0 / 4.0));
        assert_eq!(found, (true, "22679972".into(), 6));
    }

    #[test]
    fn a_decimal_off_the_edge_is_left_alone() {
        assert_eq!(
            shown(f64_digits(&mut String::new(), 1e100)),
            (false, "1".into(), 100)
        );
        assert_eq!(
            shown(f32_digits(&mut String::new(), 0.1)),
            (false, "1".into(), -1)
        );
        assert_eq!(
            shown(f64_digits(&mut String::new(), -0.00012345)),
            (true, "12345".into(), -4)
        );
        assert_eq!(
            shown(f64_digits(&mut String::new(), 100.0)),
            (false, "1".into(), 2)
        );
    }
}
