//! The case mapping of business keys (docs/FORMAT.md, section 9.1): CPython 3.11's `str.upper()` and
//! `str.lower()` from the frozen Unicode 14.0.0 table the Python package ships, parsed once.

use std::sync::OnceLock;

const TABLE: &str = include_str!("../../../python/hashexpr/unicode_case_14_0_0.txt");
const CAPITAL_SIGMA: char = '\u{03A3}';
const SMALL_SIGMA: char = '\u{03C3}';
const FINAL_SIGMA: char = '\u{03C2}';

/// Upper or lower case.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Case {
    Upper,
    Lower,
}

struct CaseTable {
    /// (code point, its mapping), sorted by code point: one to three code points.
    upper: Vec<(u32, Vec<char>)>,
    lower: Vec<(u32, Vec<char>)>,
    /// Inclusive ranges, sorted.
    cased: Vec<(u32, u32)>,
    ignorable: Vec<(u32, u32)>,
}

fn table() -> &'static CaseTable {
    static PARSED: OnceLock<CaseTable> = OnceLock::new();
    PARSED.get_or_init(|| parse(TABLE))
}

fn parse(text: &str) -> CaseTable {
    let lines: Vec<&str> = text
        .lines()
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .collect();
    assert_eq!(
        lines.first(),
        Some(&"unicode 14.0.0"),
        "the case table is damaged"
    );
    assert_eq!(
        lines.last().copied(),
        Some(format!("end {}", lines.len() - 2).as_str()),
        "the case table is damaged"
    );
    let mut table = CaseTable {
        upper: Vec::new(),
        lower: Vec::new(),
        cased: Vec::new(),
        ignorable: Vec::new(),
    };
    for line in &lines[1..lines.len() - 1] {
        let mut fields = line.split(' ');
        let kind = fields.next().unwrap();
        let numbers: Vec<u32> = fields
            .map(|f| u32::from_str_radix(f, 16).expect("a hex code point"))
            .collect();
        let mapping = || {
            numbers[1..]
                .iter()
                .map(|&c| char::from_u32(c).expect("a code point"))
                .collect()
        };
        match kind {
            "U" => table.upper.push((numbers[0], mapping())),
            "L" => table.lower.push((numbers[0], mapping())),
            "C" => table.cased.push((numbers[0], numbers[1])),
            "I" => table.ignorable.push((numbers[0], numbers[1])),
            _ => panic!("the case table is damaged at {line:?}"),
        }
    }
    for list in [&mut table.upper, &mut table.lower] {
        list.sort_by_key(|(c, _)| *c);
    }
    for ranges in [&mut table.cased, &mut table.ignorable] {
        ranges.sort_unstable();
    }
    table
}

fn in_ranges(ranges: &[(u32, u32)], c: char) -> bool {
    let c = c as u32;
    let i = ranges.partition_point(|&(first, _)| first <= c);
    i > 0 && c <= ranges[i - 1].1
}

fn push_mapped(out: &mut Vec<u8>, mappings: &[(u32, Vec<char>)], c: char) {
    match mappings.binary_search_by_key(&(c as u32), |(k, _)| *k) {
        Ok(i) => {
            for m in &mappings[i].1 {
                push_char(out, *m);
            }
        }
        Err(_) => push_char(out, c),
    }
}

fn push_char(out: &mut Vec<u8>, c: char) {
    let mut buf = [0u8; 4];
    out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
}

/// A unit of a string's bytes: a well-formed UTF-8 sequence is a code point, any other byte stands alone.
#[derive(Clone, Copy)]
enum Unit {
    Char(char),
    Byte(u8),
}

fn units(data: &[u8]) -> Vec<Unit> {
    let mut units = Vec::with_capacity(data.len());
    for chunk in data.utf8_chunks() {
        units.extend(chunk.valid().chars().map(Unit::Char));
        units.extend(chunk.invalid().iter().map(|&b| Unit::Byte(b)));
    }
    units
}

/// `data` (UTF-8, possibly invalid) mapped to `case`; bytes that are not UTF-8 are kept as they are.
pub fn case_map(data: &[u8], case: Case) -> Vec<u8> {
    let table = table();
    let mut out = Vec::with_capacity(data.len() + data.len() / 2);
    if data.is_ascii() {
        out.extend(data.iter().map(|b| match case {
            Case::Upper => b.to_ascii_uppercase(),
            Case::Lower => b.to_ascii_lowercase(),
        }));
        return out;
    }
    let mappings = match case {
        Case::Upper => &table.upper,
        Case::Lower => &table.lower,
    };
    let units = units(data);
    for (i, unit) in units.iter().enumerate() {
        match *unit {
            Unit::Byte(b) => out.push(b),
            Unit::Char(CAPITAL_SIGMA) if case == Case::Lower => push_char(
                &mut out,
                if is_final_sigma(&units, i, table) {
                    FINAL_SIGMA
                } else {
                    SMALL_SIGMA
                },
            ),
            Unit::Char(c) => push_mapped(&mut out, mappings, c),
        }
    }
    out
}

/// CPython's Final_Sigma: a Cased unit before, none after, skipping Case_Ignorable ones.
fn is_final_sigma(units: &[Unit], index: usize, table: &CaseTable) -> bool {
    let ignorable = |u: &Unit| matches!(u, Unit::Char(c) if in_ranges(&table.ignorable, *c));
    let cased = |u: &Unit| matches!(u, Unit::Char(c) if in_ranges(&table.cased, *c));
    match units[..index].iter().rev().find(|u| !ignorable(u)) {
        Some(before) if cased(before) => {}
        _ => return false,
    }
    match units[index + 1..].iter().find(|u| !ignorable(u)) {
        None => true,
        Some(after) => !cased(after),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lower(text: &str) -> String {
        String::from_utf8(case_map(text.as_bytes(), Case::Lower)).unwrap()
    }

    fn upper(text: &str) -> String {
        String::from_utf8(case_map(text.as_bytes(), Case::Upper)).unwrap()
    }

    /// The examples of docs/FORMAT.md, section 9.1, written out by hand.
    #[test]
    fn maps_as_format_section_9_1() {
        assert_eq!(upper("Stra\u{df}e"), "STRASSE");
        assert_eq!(upper("\u{149}"), "\u{2bc}N");
        assert_eq!(lower("\u{130}"), "i\u{307}");
        assert_eq!(lower("ΟΔΟΣ"), "οδος");
        assert_eq!(lower("ΑΣ."), "ας.");
        assert_eq!(lower("ΑΣ.Β"), "ασ.β");
        assert_eq!(lower("ΑΣ1Β"), "ας1β");
        assert_eq!(lower("Α1Σ"), "α1σ");
        assert_eq!(lower("Σ"), "σ");
        // New case pairs of Unicode 14.0.
        assert_eq!(upper("\u{2c5f}"), "\u{2c2f}");
        assert_eq!(lower("\u{10570}"), "\u{10597}");
    }

    #[test]
    fn keeps_bytes_that_are_not_utf8() {
        assert_eq!(case_map(b"a\xff", Case::Upper), b"A\xff");
        // An invalid byte is neither Cased nor Case_Ignorable: after it, a sigma is not final.
        assert_eq!(
            case_map("\u{391}\u{3a3}".as_bytes(), Case::Lower),
            "\u{3b1}\u{3c2}".as_bytes()
        );
        let mut data = b"\xff".to_vec();
        data.extend_from_slice("\u{3a3}".as_bytes());
        assert_eq!(
            case_map(&data, Case::Lower),
            [b"\xff".as_slice(), "\u{3c3}".as_bytes()].concat()
        );
    }
}
