//! Arrow columns in and out through the Arrow C Data Interface, as pyarrow speaks it
//! (`__arrow_c_array__`, pyarrow >= 14): a column of texts or ids crosses the boundary as the
//! buffers it already is, never as one Python object per row.

use std::ffi::CString;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::ffi::{from_ffi, to_ffi, FFI_ArrowArray, FFI_ArrowSchema};
use arrow_array::types::{Int16Type, Int32Type, Int64Type, Int8Type, UInt32Type, UInt64Type};
use arrow_array::{make_array, Array, ArrayRef};
use arrow_schema::DataType;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyCapsule, PyTuple};

/// The Arrow array `object` exports (a pyarrow Array, or anything with
/// `__arrow_c_array__`); `what` names it in errors.
pub fn import(object: &Bound<'_, PyAny>, what: &str) -> PyResult<ArrayRef> {
    let exported = object.call_method0("__arrow_c_array__").map_err(|_| {
        PyTypeError::new_err(format!(
            "{what}: expected an Arrow array (pyarrow >= 14), got {}",
            object
                .get_type()
                .name()
                .map_or("?".into(), |n| n.to_string())
        ))
    })?;
    let (schema, array): (Bound<'_, PyCapsule>, Bound<'_, PyCapsule>) = exported.extract()?;
    let schema = schema.pointer_checked(Some(c"arrow_schema"))?;
    let array = array.pointer_checked(Some(c"arrow_array"))?;
    // SAFETY: the capsules are named as the C Data Interface's PyCapsule protocol names them,
    // so they hold an ArrowSchema and an ArrowArray. The array is moved out (its release
    // callback set to NULL in the capsule, as the protocol asks of a consumer), the schema only
    // read; both capsules outlive this call, which runs with the GIL held.
    let data = unsafe {
        let array = FFI_ArrowArray::from_raw(array.cast::<FFI_ArrowArray>().as_ptr());
        from_ffi(array, schema.cast::<FFI_ArrowSchema>().as_ref())
    }
    .map_err(|e| PyValueError::new_err(format!("{what}: not a valid Arrow array: {e}")))?;
    Ok(make_array(data))
}

/// An Arrow array on its way to Python: `pyarrow.array(it)` takes it through
/// `__arrow_c_array__`, without a copy.
#[pyclass(module = "simhashdb._native", frozen)]
pub struct Exported {
    array: std::sync::Mutex<Option<ArrayRef>>,
}

impl Exported {
    pub fn new(array: ArrayRef) -> Self {
        Exported {
            array: std::sync::Mutex::new(Some(array)),
        }
    }
}

#[pymethods]
impl Exported {
    /// The C Data Interface's capsules of the array (which can be taken once).
    #[pyo3(signature = (requested_schema=None))]
    fn __arrow_c_array__<'py>(
        &self,
        py: Python<'py>,
        requested_schema: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyTuple>> {
        let _ = requested_schema; // the array is given as it is; pyarrow casts if it must
        let array = self
            .array
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take()
            .ok_or_else(|| PyValueError::new_err("the array was already taken"))?;
        let (array, schema) =
            to_ffi(&array.to_data()).map_err(|e| PyValueError::new_err(e.to_string()))?;
        let schema = PyCapsule::new(py, schema, Some(CString::from(c"arrow_schema")))?;
        let array = PyCapsule::new(py, array, Some(CString::from(c"arrow_array")))?;
        PyTuple::new(py, [schema.into_any(), array.into_any()])
    }
}

/// A column of texts or ids read value by value: strings (utf8, large_utf8, utf8_view),
/// binary of any width (checked as UTF-8 where text is wanted), or integers (ids, read as their
/// decimal form).
pub struct Column {
    array: ArrayRef,
}

impl Column {
    /// `array` as a column of strings; `what` names it in the error for another type.
    pub fn new(array: ArrayRef, what: &str) -> PyResult<Column> {
        match array.data_type() {
            DataType::Utf8
            | DataType::LargeUtf8
            | DataType::Utf8View
            | DataType::Binary
            | DataType::LargeBinary
            | DataType::BinaryView
            | DataType::Int8
            | DataType::Int16
            | DataType::Int32
            | DataType::Int64
            | DataType::UInt32
            | DataType::UInt64 => Ok(Column { array }),
            other => Err(PyTypeError::new_err(format!(
                "{what} has Arrow type {other}; it needs strings (or binary, or integer ids)"
            ))),
        }
    }

    pub fn len(&self) -> usize {
        self.array.len()
    }

    /// Calls `f(i, value)` on every value in order, None when null: the column's type is
    /// matched once, not per value (integers: their decimal digits).
    pub fn for_each(
        &self,
        mut f: impl FnMut(usize, Option<&[u8]>) -> PyResult<()>,
    ) -> PyResult<()> {
        if let Some(strings) = self.array.as_string_opt::<i32>() {
            for (i, v) in strings.iter().enumerate() {
                f(i, v.map(str::as_bytes))?;
            }
            return Ok(());
        }
        for i in 0..self.len() {
            f(i, self.bytes(i).as_deref())?;
        }
        Ok(())
    }

    /// The bytes of value `i`, None when null (integers: their decimal digits).
    pub fn bytes(&self, i: usize) -> Option<std::borrow::Cow<'_, [u8]>> {
        use std::borrow::Cow;
        if self.array.is_null(i) {
            return None;
        }
        let a = &self.array;
        Some(match a.data_type() {
            DataType::Utf8 => Cow::Borrowed(a.as_string::<i32>().value(i).as_bytes()),
            DataType::LargeUtf8 => Cow::Borrowed(a.as_string::<i64>().value(i).as_bytes()),
            DataType::Utf8View => Cow::Borrowed(a.as_string_view().value(i).as_bytes()),
            DataType::Binary => Cow::Borrowed(a.as_binary::<i32>().value(i)),
            DataType::LargeBinary => Cow::Borrowed(a.as_binary::<i64>().value(i)),
            DataType::BinaryView => Cow::Borrowed(a.as_binary_view().value(i)),
            DataType::Int8 => Cow::Owned(a.as_primitive::<Int8Type>().value(i).to_string().into()),
            DataType::Int16 => {
                Cow::Owned(a.as_primitive::<Int16Type>().value(i).to_string().into())
            }
            DataType::Int32 => {
                Cow::Owned(a.as_primitive::<Int32Type>().value(i).to_string().into())
            }
            DataType::Int64 => {
                Cow::Owned(a.as_primitive::<Int64Type>().value(i).to_string().into())
            }
            DataType::UInt32 => {
                Cow::Owned(a.as_primitive::<UInt32Type>().value(i).to_string().into())
            }
            DataType::UInt64 => {
                Cow::Owned(a.as_primitive::<UInt64Type>().value(i).to_string().into())
            }
            _ => unreachable!("checked in Column::new"),
        })
    }

    /// Value `i` as Python's `repr` shows it in a message (the Spark jobs' messages are
    /// Python's): a quoted string, or an integer as it is; `None` when null.
    pub fn show(&self, i: usize) -> String {
        let integer = matches!(
            self.array.data_type(),
            DataType::Int8
                | DataType::Int16
                | DataType::Int32
                | DataType::Int64
                | DataType::UInt32
                | DataType::UInt64
        );
        match self.bytes(i) {
            None => "None".to_string(),
            Some(b) if integer => String::from_utf8_lossy(&b).into_owned(),
            Some(b) => python_repr(&String::from_utf8_lossy(&b)),
        }
    }
}

/// A string as Python's `repr` writes it: in single quotes (double when it holds a single
/// quote and no double one), backslashes, the quote and control characters escaped.
pub fn python_repr(s: &str) -> String {
    let quote = if s.contains('\'') && !s.contains('"') {
        '"'
    } else {
        '\''
    };
    let mut out = String::with_capacity(s.len() + 2);
    out.push(quote);
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                out.push_str(&format!("\\x{:02x}", c as u32));
            }
            c => out.push(c),
        }
    }
    out.push(quote);
    out
}

/// An int64 column (fingerprints as the 64 bits): its values, None where null.
pub fn int64s(array: &ArrayRef, what: &str) -> PyResult<Vec<Option<u64>>> {
    match array.data_type() {
        DataType::Int64 => Ok(array
            .as_primitive::<Int64Type>()
            .iter()
            .map(|v| v.map(|v| v as u64))
            .collect()),
        DataType::UInt64 => Ok(array.as_primitive::<UInt64Type>().iter().collect()),
        other => Err(PyTypeError::new_err(format!(
            "{what} has Arrow type {other}; fingerprints are int64 (the 64 bits) or uint64"
        ))),
    }
}

/// A boolean column's values (null reads false).
pub fn bools(array: &ArrayRef, what: &str) -> PyResult<Vec<bool>> {
    match array.data_type() {
        DataType::Boolean => Ok(array
            .as_boolean()
            .iter()
            .map(|v| v.unwrap_or(false))
            .collect()),
        other => Err(PyTypeError::new_err(format!(
            "{what} has Arrow type {other}; expected booleans"
        ))),
    }
}

/// An array to hand back to Python.
pub fn export(array: impl Array + 'static) -> Exported {
    Exported::new(Arc::new(array))
}
