//! Dataset fingerprints (docs/FORMAT.md, sections 5 and 11): the sum of the rows' MurmurHash3 record
//! hashes, or LtHash16 of their SHA-256 (HMAC-SHA-256) record hashes, with the schema and the row count.

use std::collections::HashMap;

use rayon::prelude::*;
use sha2::{Digest, Sha256};

use crate::algorithm::Algorithm;
use crate::block::Block;
use crate::columns::Columns;
use crate::encode::{put_bytes, put_u32, FORMAT_VERSION, STRING};
use crate::error::Error;
use crate::lthash::Lanes;
use crate::record::{rows_per_task, Record, BLOCK_ROWS};
use crate::spark_type::SparkType;

const LABEL: &[u8] = b"hashexpr-fingerprint";
const LTHASH_LABEL: &[u8] = b"hashexpr-fingerprint-lthash16";

/// The combined rows of a table (or a group): how many, and their sum or lanes.
#[derive(Clone, Debug)]
pub struct State {
    count: u64,
    sum: u128,
    lanes: Option<Lanes>,
}

impl State {
    fn add(&mut self, other: &State) {
        self.count += other.count;
        self.sum = self.sum.wrapping_add(other.sum);
        if let (Some(mine), Some(theirs)) = (self.lanes.as_mut(), other.lanes.as_ref()) {
            mine.add(theirs);
        }
    }

    /// The number of rows.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// `murmur3`: the sum of the rows' record hashes, modulo 2^128, as 16 bytes little-endian (section 5).
    pub fn sum_bytes(&self) -> Option<[u8; 16]> {
        self.lanes.is_none().then(|| self.sum.to_le_bytes())
    }

    /// `lthash16`: the 1024 lane sums as 2048 bytes little-endian (section 11).
    pub fn lane_bytes(&self) -> Option<Vec<u8>> {
        self.lanes
            .as_ref()
            .map(|lanes| lanes.lanes().iter().flat_map(|l| l.to_le_bytes()).collect())
    }

    fn add_row(&mut self, digest: &[u8]) {
        self.count += 1;
        match self.lanes.as_mut() {
            None => {
                self.sum = self
                    .sum
                    .wrapping_add(u128::from_le_bytes(digest.try_into().unwrap()))
            }
            Some(lanes) => lanes.add_element(digest.try_into().unwrap()),
        }
    }
}

/// How the rows of a table with these columns are fingerprinted.
pub struct Fingerprinter {
    record: Record,
    lthash: bool,
    keyed: bool,
    schema: Vec<u8>,
}

impl Fingerprinter {
    /// `algorithm` is `murmur3` or `lthash16`; `key` (lthash16 only) hashes the rows with HMAC-SHA-256.
    pub fn new(
        names: &[String],
        types: &[SparkType],
        algorithm: &str,
        key: Option<&[u8]>,
    ) -> Result<Self, Error> {
        if names.is_empty() {
            return Err(Error::invalid(
                "dataset_fingerprint needs at least one column, as Spark's dataset_fingerprint does",
            ));
        }
        let (lthash, row_algorithm) = match (algorithm, key) {
            ("murmur3", None) => (false, Algorithm::Murmur3),
            ("murmur3", Some(_)) => {
                return Err(Error::invalid(
                    "hmac_key is only for algorithm='lthash16' (rows hashed with HMAC-SHA-256); drop it",
                ))
            }
            ("lthash16", None) => (true, Algorithm::Sha256),
            ("lthash16", Some(key)) => (true, Algorithm::new("hmac-sha256", Some(key))?),
            _ => {
                return Err(Error::invalid(format!(
                    "algorithm must be 'murmur3' or 'lthash16', got {algorithm:?}"
                )))
            }
        };
        let schema_algorithm = if lthash {
            Algorithm::Sha256
        } else {
            Algorithm::Murmur3
        };
        Ok(Self {
            record: Record::positional(row_algorithm),
            lthash,
            keyed: key.is_some(),
            schema: schema_hash(names, types, &schema_algorithm),
        })
    }

    /// Adds one row, given as its record's byte stream (section 3), to `state`.
    pub fn add_record(&self, state: &mut State, record: &[u8]) {
        let mut digest = [0u8; 32];
        let digest = &mut digest[..self.record.width()];
        self.record.algorithm.hash_into(record, digest);
        state.add_row(digest);
    }

    /// The state of no rows.
    pub fn empty(&self) -> State {
        State {
            count: 0,
            sum: 0,
            lanes: self.lthash.then(Lanes::new),
        }
    }

    /// Adds every row of `columns` to `state`, on the current rayon pool.
    pub fn update(&self, state: &mut State, columns: &Columns) {
        let step = rows_per_task(columns.len);
        let tasks = columns.len.div_ceil(step);
        let width = self.record.width();
        let partial = (0..tasks)
            .into_par_iter()
            .map(|task| {
                let mut part = self.empty();
                let mut block = Block::new(self.record.algorithm.sorted_maps());
                let mut digests = vec![0u8; BLOCK_ROWS * width];
                let rows = task * step..((task + 1) * step).min(columns.len);
                for first in rows.clone().step_by(BLOCK_ROWS) {
                    let len = BLOCK_ROWS.min(rows.end - first);
                    block.positional(&columns.nodes, first, len);
                    let digests = &mut digests[..len * width];
                    self.record.algorithm.hash_block(&block, digests);
                    for digest in digests.chunks_exact(width) {
                        part.add_row(digest);
                    }
                }
                part
            })
            .reduce(
                || self.empty(),
                |mut a, b| {
                    a.add(&b);
                    a
                },
            );
        state.add(&partial);
    }

    /// `SCHEMA`: the digest of the columns' names and Spark types (section 5).
    pub fn schema(&self) -> &[u8] {
        &self.schema
    }

    /// The fingerprint of `state`: `hx1:`, `hx1-lthash16:` or `hx1-lthash16-hmac:` and 64 hex digits.
    pub fn finish(&self, state: &State) -> String {
        let mut hasher = Sha256::new();
        hasher.update(if self.lthash { LTHASH_LABEL } else { LABEL });
        hasher.update([FORMAT_VERSION]);
        hasher.update(&self.schema);
        hasher.update((state.count as i64).to_le_bytes());
        match &state.lanes {
            None => hasher.update(state.sum.to_le_bytes()),
            Some(lanes) => {
                for lane in lanes.lanes() {
                    hasher.update(lane.to_le_bytes());
                }
            }
        }
        let digest = hasher.finalize();
        let prefix = match (self.lthash, self.keyed) {
            (false, _) => "hx1:",
            (true, false) => "hx1-lthash16:",
            (true, true) => "hx1-lthash16-hmac:",
        };
        let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
        format!("{prefix}{hex}")
    }
}

/// `SCHEMA`: the record hash of every column's name and type string (section 5).
pub fn schema_hash(names: &[String], types: &[SparkType], algorithm: &Algorithm) -> Vec<u8> {
    let mut record = vec![FORMAT_VERSION];
    put_u32(&mut record, 2 * names.len() as u32);
    for (name, spark_type) in names.iter().zip(types) {
        put_bytes(&mut record, STRING, name.as_bytes());
        put_bytes(&mut record, STRING, spark_type.type_string().as_bytes());
    }
    let mut digest = vec![0u8; algorithm.width()];
    algorithm.hash_into(&record, &mut digest);
    digest
}

/// One fingerprint per group of rows with equal values in the `by` columns, as Spark's `groupBy` groups
/// them: groups are told apart by the canonical encoding of their values, so `-0.0` and `0.0` are one
/// group, every NaN another, and NULL its own.
pub struct GroupFingerprints {
    fingerprinter: Fingerprinter,
    by: Vec<usize>,
    index: HashMap<Box<[u8]>, usize>,
    states: Vec<State>,
}

impl GroupFingerprints {
    /// Groups by the columns at the positions `by`.
    pub fn new(fingerprinter: Fingerprinter, by: Vec<usize>) -> Self {
        Self {
            fingerprinter,
            by,
            index: HashMap::new(),
            states: Vec::new(),
        }
    }

    /// Adds the rows of `columns`; returns the rows that start a group, in the order of the groups.
    pub fn update(&mut self, columns: &Columns) -> Vec<usize> {
        let record = &self.fingerprinter.record;
        let group_record = Record::positional(Algorithm::Murmur3);
        let by_nodes: Vec<_> = self.by.iter().map(|&i| columns.nodes[i].clone()).collect();
        let width = record.width();
        let step = rows_per_task(columns.len);
        let tasks = columns.len.div_ceil(step);
        // Per task: the digests of its rows, and their group values' encodings end to end.
        let parts: Vec<(Vec<u8>, Vec<u8>, Vec<usize>)> = (0..tasks)
            .into_par_iter()
            .map(|task| {
                let rows = task * step..((task + 1) * step).min(columns.len);
                let mut digests = vec![0u8; rows.len() * width];
                let mut keys = Vec::with_capacity(rows.len() * 16);
                let mut ends = Vec::with_capacity(rows.len());
                let mut block = Block::new(record.algorithm.sorted_maps());
                let mut group_scratch = group_record.scratch();
                for (b, digests) in digests.chunks_mut(BLOCK_ROWS * width).enumerate() {
                    let first = rows.start + b * BLOCK_ROWS;
                    block.positional(&columns.nodes, first, digests.len() / width);
                    record.algorithm.hash_block(&block, digests);
                }
                for row in rows {
                    group_record.encode_row(&by_nodes, row, &mut keys, &mut group_scratch);
                    ends.push(keys.len());
                }
                (digests, keys, ends)
            })
            .collect();
        let mut starts = Vec::new();
        let mut row = 0;
        for (digests, keys, ends) in parts {
            let mut start = 0;
            for (digest, end) in digests.chunks_exact(width).zip(ends) {
                let key = &keys[start..end];
                start = end;
                let group = match self.index.get(key) {
                    Some(&group) => group,
                    None => {
                        self.index.insert(key.into(), self.states.len());
                        self.states.push(self.fingerprinter.empty());
                        starts.push(row);
                        self.states.len() - 1
                    }
                };
                self.states[group].add_row(digest);
                row += 1;
            }
        }
        starts
    }

    /// Every group's fingerprint, in the order the groups were found.
    pub fn finish(&self) -> Vec<String> {
        self.states
            .par_iter()
            .map(|s| self.fingerprinter.finish(s))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fingerprinter(algorithm: &str) -> Fingerprinter {
        Fingerprinter::new(&["id".into()], &[SparkType::Long], algorithm, None).unwrap()
    }

    #[test]
    fn a_murmur3_state_is_the_count_and_the_wrapping_sum_of_the_row_hashes() {
        let f = fingerprinter("murmur3");
        let mut state = f.empty();
        assert_eq!(state.sum_bytes(), Some([0; 16]));
        let records: [&[u8]; 2] = [b"first record", b"second"];
        let mut total = 0u128;
        for record in records {
            f.add_record(&mut state, record);
            let mut digest = [0u8; 16];
            Algorithm::Murmur3.hash_into(record, &mut digest);
            total = total.wrapping_add(u128::from_le_bytes(digest));
        }
        assert_eq!(state.count(), 2);
        assert_eq!(state.sum_bytes(), Some(total.to_le_bytes()));
        assert_eq!(state.lane_bytes(), None);
        assert_eq!(f.schema().len(), 16);
    }

    #[test]
    fn an_lthash16_state_is_the_count_and_the_lanes_little_endian() {
        let f = fingerprinter("lthash16");
        let mut state = f.empty();
        f.add_record(&mut state, b"a record");
        let mut digest = [0u8; 32];
        Algorithm::Sha256.hash_into(b"a record", &mut digest);
        let mut lanes = Lanes::new();
        lanes.add_element(&digest);
        let expected: Vec<u8> = lanes.lanes().iter().flat_map(|l| l.to_le_bytes()).collect();
        assert_eq!(state.count(), 1);
        assert_eq!(state.lane_bytes(), Some(expected));
        assert_eq!(state.sum_bytes(), None);
        assert_eq!(f.schema().len(), 32);
    }
}
