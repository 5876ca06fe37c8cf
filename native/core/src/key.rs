//! Business-key options (docs/FORMAT.md, section 9): the salt, string normalisation and the all-NULL policy.

use std::borrow::Cow;

use crate::case::{case_map, Case};
use crate::error::Error;

/// What a key whose parts are all NULL gives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NullKey {
    /// The hash of the NULL key (the default): no row loses its key.
    Hash,
    /// NULL.
    Null,
    /// An error.
    Error,
}

impl NullKey {
    /// `hash`, `null` or `error`.
    pub fn parse(name: &str) -> Result<Self, Error> {
        match name {
            "hash" => Ok(Self::Hash),
            "null" => Ok(Self::Null),
            "error" => Ok(Self::Error),
            _ => Err(Error::invalid(format!(
                "null_key must be 'hash', 'null' or 'error', got {name:?}"
            ))),
        }
    }
}

/// The options of `record_key_with`.
#[derive(Clone, Debug)]
pub struct KeyOptions {
    pub salt: Vec<u8>,
    pub trim: bool,
    pub case: Option<Case>,
    pub empty_as_null: bool,
    pub null_key: NullKey,
}

impl Default for KeyOptions {
    fn default() -> Self {
        Self {
            salt: Vec::new(),
            trim: false,
            case: None,
            empty_as_null: false,
            null_key: NullKey::Hash,
        }
    }
}

impl KeyOptions {
    /// Whether top-level string key parts are normalised at all.
    pub fn normalises(&self) -> bool {
        self.trim || self.case.is_some() || self.empty_as_null
    }

    /// A string key part after `trim` (U+0020 from both ends), `case` and `empty_as_null` (`None`: NULL).
    pub fn normalise<'a>(&self, mut data: &'a [u8]) -> Option<Cow<'a, [u8]>> {
        if self.trim {
            while let [b' ', rest @ ..] = data {
                data = rest;
            }
            while let [rest @ .., b' '] = data {
                data = rest;
            }
        }
        let data = match self.case {
            Some(case) => Cow::Owned(case_map(data, case)),
            None => Cow::Borrowed(data),
        };
        if self.empty_as_null && data.is_empty() {
            None
        } else {
            Some(data)
        }
    }
}
