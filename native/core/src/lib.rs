//! hashexpr hash format v1 (docs/FORMAT.md) over Apache Arrow arrays: record hashes, by-name records,
//! business keys and dataset fingerprints, byte-identical to the Spark expression and the Python reference.
//!
//! Each Arrow column is hashed as the Spark type Spark reads it as from Parquet ([`spark_type`]); the
//! batch drivers ([`record::Record::hash_batch`], [`fingerprint::Fingerprinter::update`]) run on the
//! current rayon pool.

pub mod algorithm;
pub mod block;
pub mod case;
pub mod column;
pub mod columns;
pub mod encode;
pub mod error;
pub mod fingerprint;
pub mod key;
pub mod lthash;
pub mod murmur3;
pub mod postgres_text;
pub mod record;
pub mod spark_type;

pub use algorithm::Algorithm;
pub use columns::{spark_types, Columns};
pub use error::Error;
pub use fingerprint::{Fingerprinter, GroupFingerprints, State};
pub use key::{KeyOptions, NullKey};
pub use record::Record;
pub use spark_type::SparkType;
