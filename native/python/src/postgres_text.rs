//! `postgres_row_digests`: the digests of PostgreSQL's row texts, printed from a record batch (reconcile).

use hashexpr_core::postgres_text::{PgKind, RowTexts};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use crate::capsule::import_batch;
use crate::{value_error, Pool};

/// Per row of `batch`: `hashtextextended(CAST(ROW(<key columns>) AS text), 0)` (int64, little-endian) and
/// `sha256(convert_to(CAST(ROW(<columns>) AS text), 'UTF8'))` (its first 16 bytes), as a PostgreSQL server
/// computes them with reconcile's
/// settings. `columns` are positions in the batch, each printed as its entry of `kinds`; the first
/// `key_count` make the key. Two `bytes`: 8 and 16 bytes a row.
#[pyfunction]
#[pyo3(signature = (batch, columns, kinds, key_count, threads=None))]
pub fn postgres_row_digests<'py>(
    py: Python<'py>,
    batch: &Bound<'py, PyAny>,
    columns: Vec<usize>,
    kinds: Vec<String>,
    key_count: usize,
    threads: Option<usize>,
) -> PyResult<(Bound<'py, PyBytes>, Bound<'py, PyBytes>)> {
    if columns.len() != kinds.len() {
        return Err(PyValueError::new_err(
            "postgres_row_digests: one kind per column",
        ));
    }
    let arrays = import_batch(batch)?;
    let mut chosen = Vec::with_capacity(columns.len());
    for (&i, kind) in columns.iter().zip(&kinds) {
        let array = arrays.get(i).cloned().ok_or_else(|| {
            PyValueError::new_err(format!("the record batch has no column at position {i}"))
        })?;
        chosen.push((
            format!("#{i}"),
            array,
            PgKind::parse(kind).map_err(value_error)?,
        ));
    }
    let texts = RowTexts::new(chosen, key_count).map_err(value_error)?;
    let (keys, rows) = Pool::new(threads)?.run(py, || Ok(texts.digests()))?;
    let key_bytes: Vec<u8> = keys.iter().flat_map(|k| k.to_le_bytes()).collect();
    Ok((
        PyBytes::new(py, &key_bytes),
        PyBytes::new(py, rows.as_flattened()),
    ))
}
