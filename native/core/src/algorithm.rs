//! What a record's byte stream is hashed with (docs/FORMAT.md, sections 1 and 10).

use hmac::{Hmac, Mac};
use sha2::{Digest, Sha256};

use crate::block::Block;
use crate::error::Error;
use crate::murmur3::{murmur3_x64_128, murmur3_x64_128_padded, SEED};

/// MurmurHash3 x64 128 (16 bytes), SHA-256 or HMAC-SHA-256 (32 bytes).
#[derive(Clone)]
pub enum Algorithm {
    Murmur3,
    Sha256,
    /// Keyed once: every row clones the keyed state instead of hashing the key again.
    HmacSha256(Hmac<Sha256>),
}

impl Algorithm {
    /// `murmur3`, `sha256` or `hmac-sha256` with its key; the key goes with `hmac-sha256` and only with it.
    pub fn new(name: &str, key: Option<&[u8]>) -> Result<Self, Error> {
        match (name, key) {
            ("murmur3", None) => Ok(Self::Murmur3),
            ("sha256", None) => Ok(Self::Sha256),
            ("hmac-sha256", Some(key)) if !key.is_empty() => Ok(Self::HmacSha256(
                Hmac::<Sha256>::new_from_slice(key).expect("HMAC takes a key of any length"),
            )),
            ("hmac-sha256", Some(_)) => Err(Error::invalid("hmac_key is empty: an HMAC key needs at least one byte")),
            ("hmac-sha256", None) => Err(Error::invalid(
                "algorithm='hmac-sha256' needs hmac_key, the secret's value (bytes, or str as UTF-8)",
            )),
            ("murmur3" | "sha256", Some(_)) => Err(Error::invalid(format!(
                "hmac_key is only for algorithm='hmac-sha256', not {name:?}: drop it, or choose that algorithm"
            ))),
            _ => Err(Error::invalid(format!(
                "algorithm must be 'murmur3', 'sha256' or 'hmac-sha256', got {name:?}"
            ))),
        }
    }

    /// The digest's length in bytes.
    pub fn width(&self) -> usize {
        match self {
            Self::Murmur3 => 16,
            Self::Sha256 | Self::HmacSha256(_) => 32,
        }
    }

    /// Whether maps are written as their entries' sorted SHA-256 digests (section 10) instead of a sum.
    pub fn sorted_maps(&self) -> bool {
        !matches!(self, Self::Murmur3)
    }

    /// Writes the digest of `data` into `out`, which is [`Self::width`] bytes long.
    #[inline]
    pub fn hash_into(&self, data: &[u8], out: &mut [u8]) {
        match self {
            Self::Murmur3 => out.copy_from_slice(&murmur3_x64_128(data, SEED)),
            Self::Sha256 => out.copy_from_slice(&Sha256::digest(data)),
            Self::HmacSha256(keyed) => {
                let mut mac = keyed.clone();
                mac.update(data);
                out.copy_from_slice(&mac.finalize().into_bytes());
            }
        }
    }

    /// Writes the digest of every record of `block` into `out`, [`Self::width`] bytes each.
    #[inline]
    pub fn hash_block(&self, block: &Block, out: &mut [u8]) {
        let width = self.width();
        match self {
            // The common case in a loop of its own, with the digest written in place.
            Self::Murmur3 => {
                for (k, digest) in out.chunks_exact_mut(16).enumerate() {
                    let (padded, len) = block.padded(k);
                    digest.copy_from_slice(&murmur3_x64_128_padded(padded, len, SEED));
                }
            }
            _ => {
                for (k, digest) in out.chunks_exact_mut(width).enumerate() {
                    self.hash_into(block.record(k), digest);
                }
            }
        }
    }
}
