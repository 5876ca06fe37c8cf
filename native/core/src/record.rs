//! Records: positional (section 3), by name (section 6) and business keys (section 9), and hashing a
//! batch of them on every thread of the current rayon pool.

use rayon::prelude::*;

use crate::algorithm::Algorithm;
use crate::block::Block;
use crate::column::{Node, Scratch};
use crate::columns::Columns;
use crate::encode::*;
use crate::error::Error;
use crate::key::{KeyOptions, NullKey};
use crate::spark_type::SparkType;

/// Rows per task: enough to amortise a task, few enough to spread a batch over the threads.
const MIN_ROWS_PER_TASK: usize = 1024;

/// Rows per block of the column-at-a-time encoder: its buffers stay in the first cache levels.
pub(crate) const BLOCK_ROWS: usize = 256;

/// How a row's columns make a record.
#[derive(Clone, Debug)]
pub enum Layout {
    /// `record_hash(c1, ..., cn)`.
    Positional,
    /// `record_hash_by_name(c1, ..., cn)`: `order` lists the columns by their names' UTF-8 bytes.
    ByName {
        names: Vec<Vec<u8>>,
        order: Vec<usize>,
    },
    /// `record_key_with(options, k1, ..., kn)`: `strings` marks the STRING key parts, which are normalised.
    Key {
        options: KeyOptions,
        strings: Vec<bool>,
    },
}

/// A kind of record and what it is hashed with.
#[derive(Clone)]
pub struct Record {
    pub layout: Layout,
    pub algorithm: Algorithm,
}

impl Record {
    /// A positional record.
    pub fn positional(algorithm: Algorithm) -> Self {
        Self {
            layout: Layout::Positional,
            algorithm,
        }
    }

    /// A by-name record of columns with these names; names must be distinct.
    pub fn by_name(names: &[String], algorithm: Algorithm) -> Result<Self, Error> {
        let names: Vec<Vec<u8>> = names.iter().map(|n| n.as_bytes().to_vec()).collect();
        let mut order: Vec<usize> = (0..names.len()).collect();
        order.sort_by(|&a, &b| names[a].cmp(&names[b]));
        if let Some(pair) = order.windows(2).find(|w| names[w[0]] == names[w[1]]) {
            return Err(Error::invalid(format!(
                "column '{}' is given twice: by-name records need distinct names",
                String::from_utf8_lossy(&names[pair[0]])
            )));
        }
        Ok(Self {
            layout: Layout::ByName { names, order },
            algorithm,
        })
    }

    /// A business key of parts of these types.
    pub fn key(options: KeyOptions, types: &[SparkType], algorithm: Algorithm) -> Self {
        let strings = types.iter().map(|t| *t == SparkType::String).collect();
        Self {
            layout: Layout::Key { options, strings },
            algorithm,
        }
    }

    /// The digest's width in bytes.
    pub fn width(&self) -> usize {
        self.algorithm.width()
    }

    /// A scratch for this record's encoding.
    pub fn scratch(&self) -> Scratch {
        Scratch::new(self.algorithm.sorted_maps())
    }

    /// Appends the record of `row` to `out`; `false` when it is a key whose parts are all NULL.
    #[inline]
    pub fn encode_row(
        &self,
        columns: &[Node],
        row: usize,
        out: &mut Vec<u8>,
        scratch: &mut Scratch,
    ) -> bool {
        match &self.layout {
            Layout::Positional => {
                out.push(FORMAT_VERSION);
                put_u32(out, columns.len() as u32);
                for column in columns {
                    column.encode(row, out, scratch);
                }
                true
            }
            Layout::ByName { names, order } => {
                out.push(BY_NAME_RECORD);
                for &i in order {
                    // A NULL column is left out: it hashes like a missing column.
                    if !columns[i].is_null(row) {
                        put_bytes(out, STRING, &names[i]);
                        columns[i].encode(row, out, scratch);
                    }
                }
                out.push(BY_NAME_END);
                true
            }
            Layout::Key { options, strings } => {
                out.push(KEY_RECORD);
                put_bytes(out, STRING, &options.salt);
                put_u32(out, columns.len() as u32);
                let mut any_value = false;
                for (column, &is_string) in columns.iter().zip(strings) {
                    if is_string && options.normalises() {
                        match column.string_value(row).and_then(|s| options.normalise(s)) {
                            Some(s) => {
                                put_bytes(out, STRING, &s);
                                any_value = true;
                            }
                            None => out.push(NULL),
                        }
                    } else {
                        any_value |= !column.is_null(row);
                        column.encode(row, out, scratch);
                    }
                }
                any_value
            }
        }
    }

    /// Hashes every row of `columns` into `out` (`width` bytes a row); `valid[row]` is false for a key
    /// that `null_key=null` makes NULL (its bytes are zero). Runs on the current rayon pool.
    pub fn hash_batch(
        &self,
        columns: &Columns,
        out: &mut [u8],
        valid: &mut [bool],
    ) -> Result<(), Error> {
        let width = self.width();
        assert_eq!(out.len(), columns.len * width);
        assert_eq!(valid.len(), columns.len);
        let rows_per_task = rows_per_task(columns.len);
        if matches!(self.layout, Layout::Positional) {
            valid.fill(true);
            out.par_chunks_mut(rows_per_task * width)
                .enumerate()
                .for_each(|(task, out)| {
                    let mut block = Block::new(self.algorithm.sorted_maps());
                    let first = task * rows_per_task;
                    for (b, out) in out.chunks_mut(BLOCK_ROWS * width).enumerate() {
                        let rows = out.len() / width;
                        block.positional(&columns.nodes, first + b * BLOCK_ROWS, rows);
                        self.algorithm.hash_block(&block, out);
                    }
                });
            return Ok(());
        }
        out.par_chunks_mut(rows_per_task * width)
            .zip(valid.par_chunks_mut(rows_per_task))
            .enumerate()
            .try_for_each(|(task, (out, valid))| {
                let first = task * rows_per_task;
                let mut scratch = self.scratch();
                let mut buffer = Vec::with_capacity(256);
                for (i, (digest, valid)) in out.chunks_exact_mut(width).zip(valid.iter_mut()).enumerate() {
                    buffer.clear();
                    let has_value = self.encode_row(&columns.nodes, first + i, &mut buffer, &mut scratch);
                    *valid = has_value || self.null_key() == NullKey::Hash;
                    if !has_value && self.null_key() == NullKey::Error {
                        return Err(Error::invalid(
                            "record_key: every key part is NULL. Filter such rows out, or choose what they get \
                             with null_key='hash' (a hash of the NULL key) or null_key='null' (NULL)",
                        ));
                    }
                    if *valid {
                        self.algorithm.hash_into(&buffer, digest);
                    } else {
                        digest.fill(0);
                    }
                }
                Ok(())
            })
    }

    fn null_key(&self) -> NullKey {
        match &self.layout {
            Layout::Key { options, .. } => options.null_key,
            _ => NullKey::Hash,
        }
    }
}

/// How many rows one rayon task takes of a batch of `len` rows: at least [`MIN_ROWS_PER_TASK`], at most four
/// tasks a thread, and as many tasks as threads or a multiple of it, so that no thread waits on another's last
/// task (a 10,000-row batch on 2 threads is 4 tasks of 2,500 rows, not 2,048, 2,048, 2,048, 2,048 and 1,808).
pub fn rows_per_task(len: usize) -> usize {
    let threads = rayon::current_num_threads().max(1);
    let tasks = (len / MIN_ROWS_PER_TASK).clamp(1, threads * 4);
    let tasks = if tasks >= threads {
        tasks / threads * threads
    } else {
        tasks
    };
    len.div_ceil(tasks).max(1)
}
