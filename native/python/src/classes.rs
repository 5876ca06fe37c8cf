//! The classes of `hashexpr._native`: each takes an Arrow schema and the positions of the columns to hash,
//! then record batches one by one (`update`), and gives its result at the end (`finish`).

use arrow_array::{ArrayRef, FixedSizeBinaryArray};
use arrow_buffer::{Buffer, NullBuffer};
use arrow_schema::{DataType, Field};
use hashexpr_core::case::Case;
use hashexpr_core::{
    spark_types as core_spark_types, Algorithm, Columns, Fingerprinter, KeyOptions, NullKey,
    Record, State,
};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyCapsule};

use crate::capsule::{export_array, import_batch, import_schema};
use crate::{value_error, Pool};

/// The chosen columns of a schema: their names, as the schema spells them, and their Spark types (checked).
struct Chosen {
    positions: Vec<usize>,
    names: Vec<String>,
    types: Vec<hashexpr_core::SparkType>,
}

impl Chosen {
    fn new(schema: &Bound<'_, PyAny>, positions: Vec<usize>) -> PyResult<Self> {
        let fields = import_schema(schema)?;
        let mut chosen = Vec::with_capacity(positions.len());
        for &i in &positions {
            let field = fields.get(i).ok_or_else(|| {
                PyValueError::new_err(format!("column position {i} is not in the schema"))
            })?;
            chosen.push((field.name().clone(), field.data_type().clone()));
        }
        for &i in &positions {
            refuse_extensions(&fields[i]).map_err(value_error)?;
        }
        let types = core_spark_types(&chosen).map_err(value_error)?;
        Ok(Self {
            positions,
            names: chosen.into_iter().map(|(n, _)| n).collect(),
            types,
        })
    }

    /// The chosen columns of a record batch, checked.
    fn columns(&self, batch: &Bound<'_, PyAny>) -> PyResult<(Vec<String>, Vec<ArrayRef>)> {
        let arrays = import_batch(batch)?;
        let chosen = self
            .positions
            .iter()
            .map(|&i| {
                arrays.get(i).cloned().ok_or_else(|| {
                    PyValueError::new_err(format!("the record batch has no column at position {i}"))
                })
            })
            .collect::<PyResult<Vec<_>>>()?;
        for ((name, expected), array) in self.names.iter().zip(&self.types).zip(&chosen) {
            // Every batch of a stream has the stream's schema; a batch that does not would hash other types.
            if hashexpr_core::SparkType::of_arrow(array.data_type())
                .ok()
                .as_ref()
                != Some(expected)
            {
                return Err(PyValueError::new_err(format!(
                    "column '{name}': a record batch has the type {}, unlike the schema",
                    array.data_type()
                )));
            }
        }
        Ok((self.names.clone(), chosen))
    }
}

/// An error, naming the column, when `field` or a field in it is of an Arrow extension type: its meaning is not
/// its storage's (a Parquet VARIANT is a struct of two binaries), and format v1 defines none.
fn refuse_extensions(field: &Field) -> Result<(), hashexpr_core::Error> {
    fn extension(field: &Field) -> Option<String> {
        if let Some(name) = field.metadata().get("ARROW:extension:name") {
            return Some(name.clone());
        }
        match field.data_type() {
            DataType::List(f)
            | DataType::LargeList(f)
            | DataType::ListView(f)
            | DataType::LargeListView(f)
            | DataType::FixedSizeList(f, _)
            | DataType::Map(f, _) => extension(f),
            DataType::Struct(fields) => fields.iter().find_map(|f| extension(f)),
            _ => None,
        }
    }
    match extension(field) {
        Some(name) => Err(hashexpr_core::Error::invalid(format!(
            "Spark has no type for the Arrow extension type {name}"
        ))
        .in_column(field.name())),
        None => Ok(()),
    }
}

/// The Spark type string of each column of `schema`, or a `ValueError` naming the first one without.
#[pyfunction]
pub fn spark_types(schema: &Bound<'_, PyAny>) -> PyResult<Vec<(String, String)>> {
    let fields = import_schema(schema)?;
    for field in &fields {
        refuse_extensions(field).map_err(value_error)?;
    }
    let pairs: Vec<_> = fields
        .iter()
        .map(|f| (f.name().clone(), f.data_type().clone()))
        .collect();
    let types = core_spark_types(&pairs).map_err(value_error)?;
    Ok(pairs
        .into_iter()
        .zip(types)
        .map(|((name, _), t)| (name, t.type_string()))
        .collect())
}

fn algorithm(name: &str, key: Option<&[u8]>) -> PyResult<Algorithm> {
    Algorithm::new(name, key).map_err(value_error)
}

/// Batches are hashed once this many rows of them are waiting (or at the end): one trip into the thread pool,
/// with the GIL released, for many small batches rather than one each.
const PENDING_ROWS: usize = 65_536;

/// Record batches waiting to be hashed, checked against the schema.
#[derive(Default)]
struct Pending {
    batches: Vec<Vec<ArrayRef>>,
    rows: usize,
}

impl Pending {
    /// Adds a batch; whether enough rows wait to be hashed.
    fn push(&mut self, arrays: Vec<ArrayRef>) -> bool {
        self.rows += arrays.first().map_or(0, |a| a.len());
        self.batches.push(arrays);
        self.rows >= PENDING_ROWS
    }

    fn take(&mut self) -> Vec<Vec<ArrayRef>> {
        self.rows = 0;
        std::mem::take(&mut self.batches)
    }
}

/// Record hashes or keys of every row, one fixed-size binary array at the end.
#[pyclass(module = "hashexpr._native")]
pub struct Hasher {
    chosen: Chosen,
    record: Record,
    pool: Pool,
    pending: Pending,
    /// The digests of the first `filled` rows, in zeroed memory allocated for the rows the input said it has:
    /// the pages are mapped as the threads write them, in parallel, rather than zeroed first on this thread.
    digests: Vec<u8>,
    valid: Vec<bool>,
    filled: usize,
}

#[pymethods]
impl Hasher {
    #[new]
    #[pyo3(signature = (schema, columns, kind, algorithm_name, hmac_key, salt, trim, case, empty_as_null, null_key, threads, capacity))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        schema: &Bound<'_, PyAny>,
        columns: Vec<usize>,
        kind: &str,
        algorithm_name: &str,
        hmac_key: Option<Vec<u8>>,
        salt: &str,
        trim: bool,
        case: Option<&str>,
        empty_as_null: bool,
        null_key: &str,
        threads: Option<usize>,
        capacity: usize,
    ) -> PyResult<Self> {
        let chosen = Chosen::new(schema, columns)?;
        let algorithm = algorithm(algorithm_name, hmac_key.as_deref())?;
        let record = match kind {
            "positional" => Record::positional(algorithm),
            "by_name" => Record::by_name(&chosen.names, algorithm).map_err(value_error)?,
            "key" => {
                let case = match case {
                    None => None,
                    Some("upper") => Some(Case::Upper),
                    Some("lower") => Some(Case::Lower),
                    Some(other) => {
                        return Err(PyValueError::new_err(format!(
                            "case must be 'upper', 'lower' or None, got {other:?}"
                        )))
                    }
                };
                let null_key = NullKey::parse(null_key).map_err(value_error)?;
                let options = KeyOptions {
                    salt: salt.as_bytes().to_vec(),
                    trim,
                    case,
                    empty_as_null,
                    null_key,
                };
                Record::key(options, &chosen.types, algorithm)
            }
            other => {
                return Err(PyValueError::new_err(format!(
                    "unknown record kind {other:?}"
                )))
            }
        };
        let width = record.width();
        Ok(Self {
            chosen,
            record,
            pool: Pool::new(threads)?,
            pending: Pending::default(),
            digests: vec![0; capacity * width],
            valid: vec![false; capacity],
            filled: 0,
        })
    }

    /// Hashes the rows of `batch` (anything with `__arrow_c_array__` that is a record batch), now or with the
    /// next batches.
    fn update(&mut self, py: Python<'_>, batch: &Bound<'_, PyAny>) -> PyResult<()> {
        let (_, arrays) = self.chosen.columns(batch)?;
        if self.pending.push(arrays) {
            self.flush(py)?;
        }
        Ok(())
    }

    /// The hashes as the (schema, array) capsules of a fixed-size binary array; NULL where a key is NULL.
    fn finish<'py>(
        &mut self,
        py: Python<'py>,
    ) -> PyResult<(Bound<'py, PyCapsule>, Bound<'py, PyCapsule>)> {
        self.flush(py)?;
        let (mut digests, mut valid) = (
            std::mem::take(&mut self.digests),
            std::mem::take(&mut self.valid),
        );
        digests.truncate(self.filled * self.record.width());
        valid.truncate(self.filled);
        self.filled = 0;
        let nulls = valid.contains(&false).then(|| NullBuffer::from(valid));
        let array =
            FixedSizeBinaryArray::new(self.record.width() as i32, Buffer::from_vec(digests), nulls);
        export_array(py, &array)
    }
}

impl Hasher {
    /// Hashes the waiting batches, in order, in one trip into the pool.
    fn flush(&mut self, py: Python<'_>) -> PyResult<()> {
        let batches = self.pending.take();
        let Self {
            chosen,
            record,
            pool,
            digests,
            valid,
            filled,
            ..
        } = self;
        pool.run(py, || {
            for arrays in &batches {
                let columns = Columns::new(&chosen.names, arrays).map_err(value_error)?;
                let (start, end) = (*filled, *filled + columns.len);
                // More rows than the input said it has: grow (and zero) as needed.
                if valid.len() < end {
                    digests.resize(end * record.width(), 0);
                    valid.resize(end, false);
                }
                record
                    .hash_batch(
                        &columns,
                        &mut digests[start * record.width()..end * record.width()],
                        &mut valid[start..end],
                    )
                    .map_err(value_error)?;
                *filled = end;
            }
            Ok(())
        })
    }
}

/// The fingerprint of every row.
#[pyclass(module = "hashexpr._native")]
pub struct Fingerprint {
    chosen: Chosen,
    fingerprinter: Fingerprinter,
    state: State,
    pool: Pool,
    pending: Pending,
}

#[pymethods]
impl Fingerprint {
    #[new]
    #[pyo3(signature = (schema, columns, algorithm_name, hmac_key, threads))]
    fn new(
        schema: &Bound<'_, PyAny>,
        columns: Vec<usize>,
        algorithm_name: &str,
        hmac_key: Option<Vec<u8>>,
        threads: Option<usize>,
    ) -> PyResult<Self> {
        let chosen = Chosen::new(schema, columns)?;
        let fingerprinter = Fingerprinter::new(
            &chosen.names,
            &chosen.types,
            algorithm_name,
            hmac_key.as_deref(),
        )
        .map_err(value_error)?;
        let state = fingerprinter.empty();
        Ok(Self {
            chosen,
            fingerprinter,
            state,
            pool: Pool::new(threads)?,
            pending: Pending::default(),
        })
    }

    fn update(&mut self, py: Python<'_>, batch: &Bound<'_, PyAny>) -> PyResult<()> {
        let (_, arrays) = self.chosen.columns(batch)?;
        if self.pending.push(arrays) {
            self.flush(py)?;
        }
        Ok(())
    }

    fn finish(&mut self, py: Python<'_>) -> PyResult<String> {
        self.flush(py)?;
        Ok(self.fingerprinter.finish(&self.state))
    }

    /// What the fingerprint is computed from: the row count, the sum (`murmur3`, 16 bytes) or the lanes
    /// (`lthash16`, 2048 bytes), little-endian, and the schema digest; then the fingerprint.
    #[allow(clippy::type_complexity)]
    fn state<'py>(
        &mut self,
        py: Python<'py>,
    ) -> PyResult<(
        u64,
        Option<Bound<'py, PyBytes>>,
        Option<Bound<'py, PyBytes>>,
        Bound<'py, PyBytes>,
        String,
    )> {
        self.flush(py)?;
        let state = &self.state;
        Ok((
            state.count(),
            state.sum_bytes().map(|sum| PyBytes::new(py, &sum)),
            state.lane_bytes().map(|lanes| PyBytes::new(py, &lanes)),
            PyBytes::new(py, self.fingerprinter.schema()),
            self.fingerprinter.finish(state),
        ))
    }
}

impl Fingerprint {
    /// Adds the waiting batches' rows, in one trip into the pool.
    fn flush(&mut self, py: Python<'_>) -> PyResult<()> {
        let batches = self.pending.take();
        let Self {
            chosen,
            fingerprinter,
            state,
            pool,
            ..
        } = self;
        pool.run(py, || {
            for arrays in &batches {
                let columns = Columns::new(&chosen.names, arrays).map_err(value_error)?;
                fingerprinter.update(state, &columns);
            }
            Ok(())
        })
    }
}

/// One fingerprint per group of equal values of some columns.
#[pyclass(module = "hashexpr._native")]
pub struct GroupFingerprints {
    chosen: Chosen,
    groups: hashexpr_core::GroupFingerprints,
    pool: Pool,
}

#[pymethods]
impl GroupFingerprints {
    /// `by` are positions among `columns`.
    #[new]
    #[pyo3(signature = (schema, columns, by, algorithm_name, hmac_key, threads))]
    fn new(
        schema: &Bound<'_, PyAny>,
        columns: Vec<usize>,
        by: Vec<usize>,
        algorithm_name: &str,
        hmac_key: Option<Vec<u8>>,
        threads: Option<usize>,
    ) -> PyResult<Self> {
        let chosen = Chosen::new(schema, columns)?;
        if by.iter().any(|&i| i >= chosen.names.len()) {
            return Err(PyValueError::new_err(
                "a grouping column is not among the columns",
            ));
        }
        let fingerprinter = Fingerprinter::new(
            &chosen.names,
            &chosen.types,
            algorithm_name,
            hmac_key.as_deref(),
        )
        .map_err(value_error)?;
        Ok(Self {
            chosen,
            groups: hashexpr_core::GroupFingerprints::new(fingerprinter, by),
            pool: Pool::new(threads)?,
        })
    }

    /// Adds the rows of `batch`; returns the rows of it that start a new group.
    fn update(&mut self, py: Python<'_>, batch: &Bound<'_, PyAny>) -> PyResult<Vec<usize>> {
        let (names, arrays) = self.chosen.columns(batch)?;
        let Self { groups, pool, .. } = self;
        pool.run(py, || {
            let columns = Columns::new(&names, &arrays).map_err(value_error)?;
            Ok(groups.update(&columns))
        })
    }

    /// Every group's fingerprint, in the order the groups started.
    fn finish(&self, py: Python<'_>) -> PyResult<Vec<String>> {
        let groups = &self.groups;
        self.pool.run(py, || Ok(groups.finish()))
    }
}
