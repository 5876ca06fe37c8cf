//! MurmurHash3 x64 128 (SMHasher's `MurmurHash3_x64_128`), one-shot and streaming.
//!
//! The digest is `LE64(h1) ‖ LE64(h2)`, the byte order of `mmh3.mmh3_x64_128_digest` and Guava's
//! `HashCode.asBytes()` (docs/FORMAT.md, section 1).

/// The seed of every hash in format v1: the ASCII bytes `hash`.
pub const SEED: u32 = 0x6861_7368;

const C1: u64 = 0x87c3_7b91_1142_53d5;
const C2: u64 = 0x4cf5_ad43_2745_937f;

#[inline(always)]
fn fmix64(mut k: u64) -> u64 {
    k ^= k >> 33;
    k = k.wrapping_mul(0xff51_afd7_ed55_8ccd);
    k ^= k >> 33;
    k = k.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    k ^= k >> 33;
    k
}

#[inline(always)]
fn mix_k1(k1: u64) -> u64 {
    k1.wrapping_mul(C1).rotate_left(31).wrapping_mul(C2)
}

#[inline(always)]
fn mix_k2(k2: u64) -> u64 {
    k2.wrapping_mul(C2).rotate_left(33).wrapping_mul(C1)
}

#[inline(always)]
fn block(h1: &mut u64, h2: &mut u64, chunk: &[u8]) {
    let k1 = u64::from_le_bytes(chunk[..8].try_into().unwrap());
    let k2 = u64::from_le_bytes(chunk[8..16].try_into().unwrap());
    *h1 ^= mix_k1(k1);
    *h1 = h1
        .rotate_left(27)
        .wrapping_add(*h2)
        .wrapping_mul(5)
        .wrapping_add(0x52dc_e729);
    *h2 ^= mix_k2(k2);
    *h2 = h2
        .rotate_left(31)
        .wrapping_add(*h1)
        .wrapping_mul(5)
        .wrapping_add(0x3849_5ab5);
}

/// The little-endian value of up to 8 bytes, by overlapping loads rather than a copy into a padded block.
#[inline(always)]
fn load_tail(bytes: &[u8]) -> u64 {
    let n = bytes.len();
    debug_assert!(n <= 8);
    if n >= 4 {
        // Two 4-byte loads that overlap where n < 8; the shared bytes are equal, so OR joins them.
        let low = u64::from(u32::from_le_bytes(bytes[..4].try_into().unwrap()));
        let high = u64::from(u32::from_le_bytes(bytes[n - 4..].try_into().unwrap()));
        low | (high << (8 * (n - 4)))
    } else if n > 0 {
        u64::from(bytes[0])
            | (u64::from(bytes[n / 2]) << (8 * (n / 2)))
            | (u64::from(bytes[n - 1]) << (8 * (n - 1)))
    } else {
        0
    }
}

#[inline(always)]
fn finish(mut h1: u64, mut h2: u64, tail: &[u8], len: u64) -> [u8; 16] {
    debug_assert!(tail.len() < 16);
    if tail.len() > 8 {
        h2 ^= mix_k2(load_tail(&tail[8..]));
        h1 ^= mix_k1(u64::from_le_bytes(tail[..8].try_into().unwrap()));
    } else if !tail.is_empty() {
        h1 ^= mix_k1(load_tail(tail));
    }
    h1 ^= len;
    h2 ^= len;
    h1 = h1.wrapping_add(h2);
    h2 = h2.wrapping_add(h1);
    h1 = fmix64(h1);
    h2 = fmix64(h2);
    h1 = h1.wrapping_add(h2);
    h2 = h2.wrapping_add(h1);
    let mut out = [0u8; 16];
    out[..8].copy_from_slice(&h1.to_le_bytes());
    out[8..].copy_from_slice(&h2.to_le_bytes());
    out
}

/// The 16-byte MurmurHash3 x64 128 digest of `data` under `seed` (zero-extended into `h1` and `h2`).
#[inline(always)]
pub fn murmur3_x64_128(data: &[u8], seed: u32) -> [u8; 16] {
    let (mut h1, mut h2) = (u64::from(seed), u64::from(seed));
    let mut blocks = data.chunks_exact(16);
    for chunk in &mut blocks {
        block(&mut h1, &mut h2, chunk);
    }
    finish(h1, h2, blocks.remainder(), data.len() as u64)
}

/// [`murmur3_x64_128`] of `data[..len]`, where `data` goes on for at least 16 bytes past the last whole block
/// (their values do not matter). The tail is read as one 16-byte load and masked to its length, instead of
/// through branches on the length that mispredict when lengths vary from row to row; a missing half of the tail
/// is a zero, and the mix of zero is zero, so XOR-ing it in changes nothing, as skipping it does.
#[inline(always)]
pub fn murmur3_x64_128_padded(data: &[u8], len: usize, seed: u32) -> [u8; 16] {
    let (mut h1, mut h2) = (u64::from(seed), u64::from(seed));
    let mut blocks = data[..len].chunks_exact(16);
    for chunk in &mut blocks {
        block(&mut h1, &mut h2, chunk);
    }
    let at = len & !15;
    let word = u128::from_le_bytes(data[at..at + 16].try_into().unwrap());
    let tail = word & ((1u128 << (8 * (len & 15))) - 1);
    h2 ^= mix_k2((tail >> 64) as u64);
    h1 ^= mix_k1(tail as u64);
    finish(h1, h2, &[], len as u64)
}

/// MurmurHash3 x64 128 over data given in pieces: the same digest as [`murmur3_x64_128`] of their concatenation.
#[derive(Clone, Debug)]
pub struct Murmur3 {
    h1: u64,
    h2: u64,
    pending: [u8; 16],
    pending_len: usize,
    len: u64,
}

impl Murmur3 {
    /// A hasher under `seed`.
    pub fn new(seed: u32) -> Self {
        Self {
            h1: u64::from(seed),
            h2: u64::from(seed),
            pending: [0; 16],
            pending_len: 0,
            len: 0,
        }
    }

    /// Adds `data` to what is hashed.
    pub fn update(&mut self, mut data: &[u8]) {
        self.len += data.len() as u64;
        if self.pending_len > 0 {
            let take = (16 - self.pending_len).min(data.len());
            self.pending[self.pending_len..self.pending_len + take].copy_from_slice(&data[..take]);
            self.pending_len += take;
            data = &data[take..];
            if self.pending_len < 16 {
                return;
            }
            let pending = self.pending;
            block(&mut self.h1, &mut self.h2, &pending);
            self.pending_len = 0;
        }
        let mut blocks = data.chunks_exact(16);
        for chunk in &mut blocks {
            block(&mut self.h1, &mut self.h2, chunk);
        }
        let rest = blocks.remainder();
        self.pending[..rest.len()].copy_from_slice(rest);
        self.pending_len = rest.len();
    }

    /// The digest of everything added.
    pub fn finish(&self) -> [u8; 16] {
        finish(
            self.h1,
            self.h2,
            &self.pending[..self.pending_len],
            self.len,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_padded_form_hashes_every_length_as_the_plain_one() {
        let bytes: Vec<u8> = (0..200u32)
            .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
            .collect();
        for len in 0..=bytes.len() - 16 {
            let mut padded = bytes[..len].to_vec();
            padded.extend(&bytes[len..len + 16]);
            assert_eq!(
                murmur3_x64_128_padded(&padded, len, SEED),
                murmur3_x64_128(&bytes[..len], SEED),
                "{len} bytes"
            );
        }
    }

    fn hex(bytes: &[u8]) -> String {
        bytes.iter().map(|b| format!("{b:02x}")).collect()
    }

    fn unhex(text: &str) -> Vec<u8> {
        (0..text.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&text[i..i + 2], 16).unwrap())
            .collect()
    }

    /// spec/murmur3-vectors.json: digests computed by mmh3, an independent implementation.
    #[test]
    fn replays_the_murmur3_vectors() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../spec/murmur3-vectors.json"
        );
        let spec: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        let vectors = spec["vectors"].as_array().expect("vectors");
        assert!(vectors.len() > 10);
        for vector in vectors {
            let data = unhex(vector["input_hex"].as_str().unwrap());
            let seed = vector["seed"].as_u64().unwrap() as u32;
            let expected = vector["digest_hex"].as_str().unwrap();
            assert_eq!(hex(&murmur3_x64_128(&data, seed)), expected, "{vector}");
            // So does the padded form, whatever follows the data.
            for fill in [0u8, 0xff, 0x5a] {
                let mut padded = data.clone();
                padded.extend([fill; 16]);
                assert_eq!(
                    hex(&murmur3_x64_128_padded(&padded, data.len(), seed)),
                    expected
                );
            }
            // Split points around every block boundary give the same digest as one piece.
            for split in (0..=data.len().min(40)).chain([data.len() / 2, data.len()]) {
                let mut hasher = Murmur3::new(seed);
                hasher.update(&data[..split]);
                hasher.update(&data[split..]);
                assert_eq!(hex(&hasher.finish()), expected);
            }
        }
    }
}
