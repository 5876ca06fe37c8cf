//! Arrow data in and out through the Arrow PyCapsule interface (`__arrow_c_schema__`, `__arrow_c_array__`)
//! and arrow-rs's C data interface.

use std::sync::Arc;

use arrow_array::ffi::{from_ffi, FFI_ArrowArray, FFI_ArrowSchema};
use arrow_array::{make_array, Array, ArrayRef, StructArray};
use arrow_schema::{ArrowError, DataType, Field, Schema};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyCapsule;

fn arrow_error(error: ArrowError) -> PyErr {
    PyValueError::new_err(format!(
        "hashexpr.arrow: the Arrow data cannot be read: {error}"
    ))
}

/// The fields of `obj`'s Arrow schema (a pyarrow Schema, or anything with `__arrow_c_schema__`).
pub fn import_schema(obj: &Bound<'_, PyAny>) -> PyResult<Vec<Arc<Field>>> {
    let capsule = obj
        .call_method0("__arrow_c_schema__")?
        .cast_into::<PyCapsule>()?;
    let pointer = capsule
        .pointer_checked(Some(c"arrow_schema"))?
        .cast::<FFI_ArrowSchema>();
    // SAFETY: a capsule named "arrow_schema" holds a valid ArrowSchema (the PyCapsule interface), which the
    // capsule keeps alive while it is borrowed here; it is only read, and its owner releases it.
    let ffi_schema = unsafe { pointer.as_ref() };
    let schema = Schema::try_from(ffi_schema).map_err(arrow_error)?;
    Ok(schema.fields().iter().cloned().collect())
}

/// The columns of `obj`, a record batch (or a struct array) with `__arrow_c_array__`.
pub fn import_batch(obj: &Bound<'_, PyAny>) -> PyResult<Vec<ArrayRef>> {
    let (schema, array): (Bound<'_, PyCapsule>, Bound<'_, PyCapsule>) =
        obj.call_method0("__arrow_c_array__")?.extract()?;
    let schema_pointer = schema
        .pointer_checked(Some(c"arrow_schema"))?
        .cast::<FFI_ArrowSchema>();
    let array_pointer = array
        .pointer_checked(Some(c"arrow_array"))?
        .cast::<FFI_ArrowArray>();
    // SAFETY: the capsules hold a valid ArrowSchema and ArrowArray (the PyCapsule interface). The array is
    // moved out and a released one left in its place, as the interface prescribes for a consumer that takes
    // ownership: the capsule's destructor then finds nothing to release, and the data is released once, when
    // arrow-rs drops the last buffer of the imported array.
    let data = unsafe {
        let ffi_array = std::ptr::replace(array_pointer.as_ptr(), FFI_ArrowArray::empty());
        from_ffi(ffi_array, schema_pointer.as_ref())
    }
    .map_err(arrow_error)?;
    // The C data interface skips validation; a producer's malformed buffers are refused here, not read.
    data.validate().map_err(arrow_error)?;
    if !matches!(data.data_type(), DataType::Struct(_)) {
        return Err(PyValueError::new_err(format!(
            "hashexpr.arrow: expected a record batch, got an Arrow array of type {}",
            data.data_type()
        )));
    }
    let batch = StructArray::from(data);
    if batch.null_count() > 0 {
        return Err(PyValueError::new_err(
            "hashexpr.arrow: a record batch cannot have NULL rows",
        ));
    }
    Ok(batch
        .columns()
        .iter()
        .map(|c| make_array(c.to_data()))
        .collect())
}

/// `array` as the (schema, array) capsules that `pyarrow.array` takes through `__arrow_c_array__`.
pub fn export_array<'py>(
    py: Python<'py>,
    array: &dyn Array,
) -> PyResult<(Bound<'py, PyCapsule>, Bound<'py, PyCapsule>)> {
    let data = array.to_data();
    let schema = FFI_ArrowSchema::try_from(data.data_type()).map_err(arrow_error)?;
    let array = FFI_ArrowArray::new(&data);
    Ok((
        PyCapsule::new_with_value(py, schema, c"arrow_schema")?,
        PyCapsule::new_with_value(py, array, c"arrow_array")?,
    ))
}
