//! `hashexpr._native`: the Arrow engine (the `hashexpr-core` crate) for `hashexpr.arrow`.
//!
//! Each class consumes record batches one at a time through the Arrow PyCapsule interface, so a stream is
//! hashed in bounded memory; work runs with the GIL released on a rayon pool, and a panic anywhere (also
//! on a pool thread) comes back as a Python `RuntimeError`, never as a crash.

mod capsule;
mod classes;
mod postgres_text;

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;

use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;

/// The rayon pool a call runs on: the global one (every core), or one of `threads` threads.
#[derive(Clone)]
pub(crate) struct Pool(Option<Arc<rayon::ThreadPool>>);

impl Pool {
    pub(crate) fn new(threads: Option<usize>) -> PyResult<Self> {
        match threads {
            None => Ok(Self(None)),
            Some(0) => Err(PyValueError::new_err(
                "threads must be at least 1, or None for every core",
            )),
            Some(n) => rayon::ThreadPoolBuilder::new()
                .num_threads(n)
                .thread_name(|i| format!("hashexpr-{i}"))
                .build()
                .map(|pool| Self(Some(Arc::new(pool))))
                .map_err(|e| {
                    PyRuntimeError::new_err(format!("hashexpr.arrow: no thread pool: {e}"))
                }),
        }
    }

    /// Runs `work` on the pool with the GIL released; a panic becomes a `RuntimeError`.
    pub(crate) fn run<T: Send>(
        &self,
        py: Python<'_>,
        work: impl FnOnce() -> PyResult<T> + Send,
    ) -> PyResult<T> {
        py.detach(|| {
            // rayon re-raises a pool thread's panic in the thread that waits for it: here.
            let outcome = catch_unwind(AssertUnwindSafe(|| match &self.0 {
                Some(pool) => pool.install(work),
                None => work(),
            }));
            outcome.unwrap_or_else(|panic| {
                let message = panic
                    .downcast_ref::<&str>()
                    .map(|s| s.to_string())
                    .or_else(|| panic.downcast_ref::<String>().cloned())
                    .unwrap_or_else(|| "unknown panic".into());
                Err(PyRuntimeError::new_err(format!(
                    "hashexpr.arrow: internal error: {message}"
                )))
            })
        })
    }
}

pub(crate) fn value_error(error: hashexpr_core::Error) -> PyErr {
    PyValueError::new_err(error.to_string())
}

/// Panics on a pool thread: the test of the panic barrier (a panic must reach Python as `RuntimeError`).
#[pyfunction]
#[pyo3(signature = (threads=None))]
fn _panic_on_pool(py: Python<'_>, threads: Option<usize>) -> PyResult<()> {
    use rayon::prelude::*;
    Pool::new(threads)?.run(py, || {
        (0..64)
            .into_par_iter()
            .for_each(|i| assert!(i != 63, "a deliberate panic on a pool thread"));
        Ok(())
    })
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<classes::Hasher>()?;
    m.add_class::<classes::Fingerprint>()?;
    m.add_class::<classes::GroupFingerprints>()?;
    m.add_function(wrap_pyfunction!(classes::spark_types, m)?)?;
    m.add_function(wrap_pyfunction!(postgres_text::postgres_row_digests, m)?)?;
    m.add_function(wrap_pyfunction!(_panic_on_pool, m)?)?;
    Ok(())
}
