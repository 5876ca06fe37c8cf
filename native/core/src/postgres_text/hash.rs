//! PostgreSQL's `hash_bytes_extended` (`src/common/hashfn.c`, Bob Jenkins' lookup3 with a 64-bit result):
//! what `hashtextextended(text, seed)` returns for a text of a deterministic collation, on a little-endian
//! server. reconcile checks it against the server before it relies on it.

fn mix(a: &mut u32, b: &mut u32, c: &mut u32) {
    *a = a.wrapping_sub(*c);
    *a ^= c.rotate_left(4);
    *c = c.wrapping_add(*b);
    *b = b.wrapping_sub(*a);
    *b ^= a.rotate_left(6);
    *a = a.wrapping_add(*c);
    *c = c.wrapping_sub(*b);
    *c ^= b.rotate_left(8);
    *b = b.wrapping_add(*a);
    *a = a.wrapping_sub(*c);
    *a ^= c.rotate_left(16);
    *c = c.wrapping_add(*b);
    *b = b.wrapping_sub(*a);
    *b ^= a.rotate_left(19);
    *a = a.wrapping_add(*c);
    *c = c.wrapping_sub(*b);
    *c ^= b.rotate_left(4);
    *b = b.wrapping_add(*a);
}

fn finish(a: &mut u32, b: &mut u32, c: &mut u32) {
    *c ^= *b;
    *c = c.wrapping_sub(b.rotate_left(14));
    *a ^= *c;
    *a = a.wrapping_sub(c.rotate_left(11));
    *b ^= *a;
    *b = b.wrapping_sub(a.rotate_left(25));
    *c ^= *b;
    *c = c.wrapping_sub(b.rotate_left(16));
    *a ^= *c;
    *a = a.wrapping_sub(c.rotate_left(4));
    *b ^= *a;
    *b = b.wrapping_sub(a.rotate_left(14));
    *c ^= *b;
    *c = c.wrapping_sub(b.rotate_left(24));
}

/// Up to 4 bytes as a little-endian word, missing bytes zero.
fn word(bytes: &[u8]) -> u32 {
    bytes
        .iter()
        .enumerate()
        .fold(0u32, |w, (i, &byte)| w | (u32::from(byte) << (8 * i)))
}

/// `hash_bytes_extended(data, len, seed)` of a little-endian PostgreSQL server.
pub fn hash_bytes_extended(data: &[u8], seed: u64) -> u64 {
    // The server's length is an int; a text reconcile hashes is a row's text, far below 2^31 bytes.
    let initial = 0x9e37_79b9u32
        .wrapping_add(data.len() as u32)
        .wrapping_add(3_923_095);
    let (mut a, mut b, mut c) = (initial, initial, initial);
    if seed != 0 {
        a = a.wrapping_add((seed >> 32) as u32);
        b = b.wrapping_add(seed as u32);
        mix(&mut a, &mut b, &mut c);
    }
    let mut rest = data;
    while rest.len() >= 12 {
        a = a.wrapping_add(word(&rest[0..4]));
        b = b.wrapping_add(word(&rest[4..8]));
        c = c.wrapping_add(word(&rest[8..12]));
        mix(&mut a, &mut b, &mut c);
        rest = &rest[12..];
    }
    // The last 0 to 11 bytes: a and b take theirs as words; c's lowest byte is left for the length.
    a = a.wrapping_add(word(&rest[..rest.len().min(4)]));
    if rest.len() > 4 {
        b = b.wrapping_add(word(&rest[4..rest.len().min(8)]));
    }
    if rest.len() > 8 {
        c = c.wrapping_add(word(&rest[8..]) << 8);
    }
    finish(&mut a, &mut b, &mut c);
    (u64::from(b) << 32) | u64::from(c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_tail_length_reads_its_bytes_once() {
        // Each prefix of a 30-byte text hashes differently (a tail byte read twice or skipped would collide
        // two lengths); the values themselves are checked against PostgreSQL in tests/test_reconcile_texts.py.
        let text: Vec<u8> = (1..=30).collect();
        let mut seen: Vec<u64> = (0..=30)
            .map(|n| hash_bytes_extended(&text[..n], 0))
            .collect();
        seen.sort_unstable();
        seen.dedup();
        assert_eq!(seen.len(), 31);
    }

    #[test]
    fn the_seed_changes_the_hash() {
        assert_ne!(
            hash_bytes_extended(b"(1)", 0),
            hash_bytes_extended(b"(1)", 1)
        );
    }
}
