//! The engine's errors: each becomes a Python `ValueError` whose text names the problem (and the column).

use std::fmt;

/// Something the caller asked for, or data, that format v1 cannot hash.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error(String);

impl Error {
    /// An error whose message is `message`.
    pub fn invalid(message: impl Into<String>) -> Self {
        Self(message.into())
    }

    /// The same error, prefixed with the column it is about.
    pub fn in_column(self, column: &str) -> Self {
        Self(format!("column '{column}': {}", self.0))
    }

    /// The message.
    pub fn message(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Error {}
