//! LtHash16 (docs/FORMAT.md, section 11): a 32-byte element expands into 1024 lanes of 16 bits, the SHA-256
//! digests of the 64 blocks `"hashexpr-lthash16" || element || u32le(i)`, i = 0..63, read as little-endian
//! u16 pairs; a multiset's lanes are the wrapping sums of its elements' lanes.
//!
//! The 64 messages of one element differ only in the counter, which lies in message word 12, so the first 12
//! of SHA-256's 64 rounds are the same for all of them and run once per element; the other 52 run for 16
//! blocks at once with AVX-512, or 8 with AVX2, one block per SIMD lane, where the CPU has them. Sums are
//! kept in that transposed order ([`Lanes`]) and put in the format's order only when read.

use sha2::digest::generic_array::GenericArray;

/// LtHash16's lanes: 1024 of 16 bits, from 64 SHA-256 blocks.
pub const LANES: usize = 1024;
/// Lanes per block (one SHA-256 digest).
const PER_BLOCK: usize = 16;
/// Blocks per element.
const BLOCKS: usize = LANES / PER_BLOCK;

const ELEMENT_LABEL: &[u8; 17] = b"hashexpr-lthash16";
/// The message is 53 bytes: label, element, counter. In bits, as SHA-256's padding writes it.
const MESSAGE_BITS: u32 = 53 * 8;

const IV: [u32; 8] = [
    0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
];

const K: [u32; 64] = [
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
];

/// The wrapping lane sums of a multiset of elements.
///
/// `sums[j * 64 + i]` holds lane `16 i + j` (block `i`, u16 `j` of its digest) in its low 16 bits: sums
/// wrap modulo 2^32, which keeps them right modulo 2^16, so two u16 lanes never share a u32.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Lanes {
    sums: Box<[u32; LANES]>,
}

impl Default for Lanes {
    fn default() -> Self {
        Self::new()
    }
}

impl Lanes {
    /// The lanes of the empty multiset: all zero.
    pub fn new() -> Self {
        Self {
            sums: Box::new([0; LANES]),
        }
    }

    /// Lanes given in the format's order (lane `16 i + j` at index `16 i + j`).
    pub fn from_lanes(lanes: &[u16; LANES]) -> Self {
        let mut sums = Self::new();
        for (index, &lane) in lanes.iter().enumerate() {
            sums.sums[slot(index)] = u32::from(lane);
        }
        sums
    }

    /// The lanes in the format's order.
    pub fn lanes(&self) -> [u16; LANES] {
        let mut lanes = [0u16; LANES];
        for (index, lane) in lanes.iter_mut().enumerate() {
            // Truncation is the sum modulo 2^16.
            *lane = self.sums[slot(index)] as u16;
        }
        lanes
    }

    /// Adds the lanes of `other` (the union of the multisets).
    pub fn add(&mut self, other: &Lanes) {
        for (a, b) in self.sums.iter_mut().zip(other.sums.iter()) {
            *a = a.wrapping_add(*b);
        }
    }

    /// Subtracts the lanes of `other` (the multiset difference, where `other` is part of this one).
    pub fn subtract(&mut self, other: &Lanes) {
        for (a, b) in self.sums.iter_mut().zip(other.sums.iter()) {
            *a = a.wrapping_sub(*b);
        }
    }

    /// Adds the 1024 lanes of one 32-byte element.
    pub fn add_element(&mut self, element: &[u8; 32]) {
        let prefix = Prefix::of(element);
        #[cfg(target_arch = "x86_64")]
        {
            if std::arch::is_x86_feature_detected!("avx512f") {
                // SAFETY: the running CPU has AVX-512F, checked on the line above.
                unsafe { x86::add_avx512(&mut self.sums, &prefix) };
                return;
            }
            if std::arch::is_x86_feature_detected!("avx2") {
                // SAFETY: the running CPU has AVX2, checked on the line above.
                unsafe { x86::add_avx2(&mut self.sums, &prefix) };
                return;
            }
        }
        self.add_element_portable(&prefix);
    }

    /// The same without SIMD: each block through `sha2`'s compression function (SHA-NI or the ARMv8 SHA-2
    /// instructions where the CPU has them).
    fn add_element_portable(&mut self, prefix: &Prefix) {
        for i in 0..BLOCKS {
            let mut words = prefix.words;
            words[12] |= (i as u32) << 16;
            let mut block = [0u8; 64];
            for (bytes, word) in block.chunks_exact_mut(4).zip(words) {
                bytes.copy_from_slice(&word.to_be_bytes());
            }
            let mut state = IV;
            sha2::compress256(&mut state, &[GenericArray::clone_from_slice(&block)]);
            for (k, word) in state.into_iter().enumerate() {
                let (low, high) = lane_pair(word);
                self.sums[2 * k * BLOCKS + i] = self.sums[2 * k * BLOCKS + i].wrapping_add(low);
                self.sums[(2 * k + 1) * BLOCKS + i] =
                    self.sums[(2 * k + 1) * BLOCKS + i].wrapping_add(high);
            }
        }
    }
}

/// Where lane `index` of the format's order is kept in [`Lanes::sums`].
#[inline]
fn slot(index: usize) -> usize {
    (index % PER_BLOCK) * BLOCKS + index / PER_BLOCK
}

/// The two lanes of digest word `word`: its big-endian bytes (0, 1) and (2, 3), each read as a u16 LE.
#[inline]
fn lane_pair(word: u32) -> (u32, u32) {
    let swapped = word.swap_bytes();
    (swapped & 0xffff, swapped >> 16)
}

/// What the 64 blocks of one element share: their message words (word 12 without the counter) and the
/// state after the first 12 rounds, which read words 0 to 11 only.
struct Prefix {
    words: [u32; 16],
    midstate: [u32; 8],
}

impl Prefix {
    fn of(element: &[u8; 32]) -> Self {
        let mut message = [0u8; 64];
        message[..17].copy_from_slice(ELEMENT_LABEL);
        message[17..49].copy_from_slice(element);
        // Bytes 49..53 hold the counter (0 here); then SHA-256's padding: 0x80, zeros, the length in bits.
        message[53] = 0x80;
        message[60..].copy_from_slice(&MESSAGE_BITS.to_be_bytes());
        let mut words = [0u32; 16];
        for (word, bytes) in words.iter_mut().zip(message.chunks_exact(4)) {
            *word = u32::from_be_bytes(bytes.try_into().expect("4 bytes"));
        }
        let mut state = IV;
        for (t, &w) in words.iter().enumerate().take(12) {
            round(&mut state, K[t], w);
        }
        Self {
            words,
            midstate: state,
        }
    }
}

/// One SHA-256 round (FIPS 180-4, 6.2.2 step 3) on `state` = (a, ..., h).
#[inline]
fn round(state: &mut [u32; 8], k: u32, w: u32) {
    let [a, b, c, d, e, f, g, h] = *state;
    let sigma1 = e.rotate_right(6) ^ e.rotate_right(11) ^ e.rotate_right(25);
    let choice = (e & f) ^ (!e & g);
    let t1 = h
        .wrapping_add(sigma1)
        .wrapping_add(choice)
        .wrapping_add(k)
        .wrapping_add(w);
    let sigma0 = a.rotate_right(2) ^ a.rotate_right(13) ^ a.rotate_right(22);
    let majority = (a & b) ^ (a & c) ^ (b & c);
    let t2 = sigma0.wrapping_add(majority);
    *state = [t1.wrapping_add(t2), a, b, c, d.wrapping_add(t1), e, f, g];
}

/// Rounds 12 to 63 of the blocks of one element, a block per SIMD lane. One macro writes both widths, so
/// that the two cannot drift apart; each expansion lies inside a function compiled for its instruction set.
#[cfg(target_arch = "x86_64")]
mod x86 {
    use std::arch::x86_64::*;

    use super::{Prefix, BLOCKS, IV, K, LANES};

    macro_rules! blocks {
        (
            $sums:ident, $prefix:ident, $width:literal, $vector:ty, $counters:expr,
            ops: $splat:ident, $add:ident, $and:ident, $or:ident, $shr:ident, $shl:ident, $rotr:ident,
            $xor3:ident, $choice:ident, $majority:ident, $load:ident, $store:ident
        ) => {{
            for base in (0..BLOCKS).step_by($width) {
                let mut w: [$vector; 16] = [$splat!(0); 16];
                for (lane, &word) in w.iter_mut().zip($prefix.words.iter()) {
                    *lane = $splat!(word);
                }
                // Word 12 holds the last byte of the element and the counter's low byte (blocks < 256).
                w[12] = $or!(w[12], $shl!($add!($counters, $splat!(base)), 16));
                let mut s: [$vector; 8] = [$splat!(0); 8];
                for (lane, &word) in s.iter_mut().zip($prefix.midstate.iter()) {
                    *lane = $splat!(word);
                }
                for t in 12..64 {
                    if t >= 16 {
                        let x = w[(t - 15) & 15];
                        let y = w[(t - 2) & 15];
                        let sigma0 = $xor3!($rotr!(x, 7), $rotr!(x, 18), $shr!(x, 3));
                        let sigma1 = $xor3!($rotr!(y, 17), $rotr!(y, 19), $shr!(y, 10));
                        w[t & 15] = $add!($add!(w[t & 15], sigma0), $add!(w[(t - 7) & 15], sigma1));
                    }
                    let [a, b, c, d, e, f, g, h] = s;
                    let sigma1 = $xor3!($rotr!(e, 6), $rotr!(e, 11), $rotr!(e, 25));
                    let t1 = $add!(
                        $add!(h, sigma1),
                        $add!($choice!(e, f, g), $add!($splat!(K[t]), w[t & 15]))
                    );
                    let sigma0 = $xor3!($rotr!(a, 2), $rotr!(a, 13), $rotr!(a, 22));
                    let t2 = $add!(sigma0, $majority!(a, b, c));
                    s = [$add!(t1, t2), a, b, c, $add!(d, t1), e, f, g];
                }
                for (k, &state) in s.iter().enumerate() {
                    let word = $add!(state, $splat!(IV[k]));
                    // lane_pair, a lane at a time: bytes (0, 1) and (2, 3) of the big-endian word as u16 LE.
                    let low = $or!($shr!(word, 24), $and!($shr!(word, 8), $splat!(0xff00)));
                    let high = $or!($and!($shr!(word, 8), $splat!(0xff)), $and!($shl!(word, 8), $splat!(0xff00)));
                    for (j, half) in [(2 * k, low), (2 * k + 1, high)] {
                        let at = j * BLOCKS + base;
                        let slot = &mut $sums[at..at + $width];
                        // SAFETY: `slot` is `$width` u32s, exactly one vector; loadu/storeu take any alignment.
                        unsafe {
                            let sum = $add!($load(slot.as_ptr().cast()), half);
                            $store(slot.as_mut_ptr().cast(), sum);
                        }
                    }
                }
            }
        }};
    }

    /// 16 blocks at a time. The caller must make sure the CPU has AVX-512F.
    #[target_feature(enable = "avx512f")]
    pub(super) unsafe fn add_avx512(sums: &mut [u32; LANES], prefix: &Prefix) {
        macro_rules! splat {
            ($x:expr) => {
                _mm512_set1_epi32($x as i32)
            };
        }
        macro_rules! add {
            ($a:expr, $b:expr) => {
                _mm512_add_epi32($a, $b)
            };
        }
        macro_rules! and {
            ($a:expr, $b:expr) => {
                _mm512_and_si512($a, $b)
            };
        }
        macro_rules! or {
            ($a:expr, $b:expr) => {
                _mm512_or_si512($a, $b)
            };
        }
        macro_rules! shr {
            ($x:expr, $n:literal) => {
                _mm512_srli_epi32::<$n>($x)
            };
        }
        macro_rules! shl {
            ($x:expr, $n:literal) => {
                _mm512_slli_epi32::<$n>($x)
            };
        }
        macro_rules! rotr {
            ($x:expr, $n:literal) => {
                _mm512_ror_epi32::<$n>($x)
            };
        }
        // Three-input logic in one instruction: the immediates are the truth tables of a ^ b ^ c,
        // e ? f : g and the majority of a, b, c.
        macro_rules! xor3 {
            ($a:expr, $b:expr, $c:expr) => {
                _mm512_ternarylogic_epi32::<0x96>($a, $b, $c)
            };
        }
        macro_rules! choice {
            ($e:expr, $f:expr, $g:expr) => {
                _mm512_ternarylogic_epi32::<0xca>($e, $f, $g)
            };
        }
        macro_rules! majority {
            ($a:expr, $b:expr, $c:expr) => {
                _mm512_ternarylogic_epi32::<0xe8>($a, $b, $c)
            };
        }
        blocks!(
            sums, prefix, 16, __m512i,
            _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
            ops: splat, add, and, or, shr, shl, rotr, xor3, choice, majority, _mm512_loadu_si512, _mm512_storeu_si512
        );
    }

    /// 8 blocks at a time. The caller must make sure the CPU has AVX2.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn add_avx2(sums: &mut [u32; LANES], prefix: &Prefix) {
        macro_rules! splat {
            ($x:expr) => {
                _mm256_set1_epi32($x as i32)
            };
        }
        macro_rules! add {
            ($a:expr, $b:expr) => {
                _mm256_add_epi32($a, $b)
            };
        }
        macro_rules! and {
            ($a:expr, $b:expr) => {
                _mm256_and_si256($a, $b)
            };
        }
        macro_rules! or {
            ($a:expr, $b:expr) => {
                _mm256_or_si256($a, $b)
            };
        }
        macro_rules! xor {
            ($a:expr, $b:expr) => {
                _mm256_xor_si256($a, $b)
            };
        }
        macro_rules! shr {
            ($x:expr, $n:literal) => {
                _mm256_srli_epi32::<$n>($x)
            };
        }
        macro_rules! shl {
            ($x:expr, $n:literal) => {
                _mm256_slli_epi32::<$n>($x)
            };
        }
        macro_rules! rotr {
            ($x:expr, $n:literal) => {
                or!(shr!($x, $n), _mm256_slli_epi32::<{ 32 - $n }>($x))
            };
        }
        macro_rules! xor3 {
            ($a:expr, $b:expr, $c:expr) => {
                xor!(xor!($a, $b), $c)
            };
        }
        macro_rules! choice {
            ($e:expr, $f:expr, $g:expr) => {
                xor!(and!($e, $f), _mm256_andnot_si256($e, $g))
            };
        }
        macro_rules! majority {
            ($a:expr, $b:expr, $c:expr) => {{
                let (a, b) = ($a, $b);
                or!(and!(a, b), and!($c, or!(a, b)))
            }};
        }
        blocks!(
            sums, prefix, 8, __m256i,
            _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7),
            ops: splat, add, and, or, shr, shl, rotr, xor3, choice, majority, _mm256_loadu_si256, _mm256_storeu_si256
        );
    }
}

#[cfg(test)]
mod tests {
    use sha2::{Digest, Sha256};

    use super::*;

    /// The lanes as section 11 defines them, from SHA-256 of each whole message.
    fn expected(element: &[u8; 32]) -> [u16; LANES] {
        let mut lanes = [0u16; LANES];
        for i in 0..BLOCKS {
            let mut message = ELEMENT_LABEL.to_vec();
            message.extend_from_slice(element);
            message.extend_from_slice(&(i as u32).to_le_bytes());
            let digest = Sha256::digest(&message);
            for (j, pair) in digest.chunks_exact(2).enumerate() {
                lanes[i * PER_BLOCK + j] = u16::from_le_bytes([pair[0], pair[1]]);
            }
        }
        lanes
    }

    fn elements() -> Vec<[u8; 32]> {
        let mut elements = vec![[0u8; 32], [0xff; 32]];
        let mut seed = [7u8; 32];
        for _ in 0..40 {
            seed = Sha256::digest(seed).into();
            elements.push(seed);
        }
        elements
    }

    #[test]
    fn one_element_has_the_lanes_of_its_digests() {
        for element in elements() {
            let mut lanes = Lanes::new();
            lanes.add_element(&element);
            assert_eq!(lanes.lanes(), expected(&element));
        }
    }

    #[test]
    fn every_instruction_set_gives_the_same_lanes() {
        let elements = elements();
        let mut portable = Lanes::new();
        for element in &elements {
            portable.add_element_portable(&Prefix::of(element));
        }
        let mut dispatched = Lanes::new();
        for element in &elements {
            dispatched.add_element(element);
        }
        assert_eq!(portable, dispatched);
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") {
            let mut avx2 = Lanes::new();
            for element in &elements {
                // SAFETY: the running CPU has AVX2, checked above.
                unsafe { x86::add_avx2(&mut avx2.sums, &Prefix::of(element)) };
            }
            assert_eq!(portable, avx2);
        }
    }

    #[test]
    fn sums_wrap_per_lane_and_subtract() {
        let elements = elements();
        let mut sum = [0u16; LANES];
        let mut lanes = Lanes::new();
        for element in &elements {
            lanes.add_element(element);
            for (total, lane) in sum.iter_mut().zip(expected(element)) {
                *total = total.wrapping_add(lane);
            }
        }
        assert_eq!(lanes.lanes(), sum);
        // Beyond 2^16 additions the u32 sums wrap too, which keeps their low 16 bits right.
        let full = Lanes::from_lanes(&[0xffff; LANES]);
        let mut many = lanes.clone();
        for _ in 0..(1 << 16) + 5 {
            many.add(&full);
        }
        let wrapped: Vec<u16> = sum
            .iter()
            .map(|&s| s.wrapping_sub(((1 << 16) + 5) as u16))
            .collect();
        assert_eq!(many.lanes().to_vec(), wrapped);
        let mut part = Lanes::new();
        part.add_element(&elements[0]);
        let mut rest = lanes.clone();
        rest.subtract(&part);
        assert_ne!(rest, lanes);
        rest.add(&part);
        assert_eq!(rest, lanes);
        assert_eq!(Lanes::from_lanes(&lanes.lanes()).lanes(), lanes.lanes());
    }
}
