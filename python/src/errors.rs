//! The library's errors as Python exceptions, and the guard that keeps panics out of Python.
//!
//! The class is the one `simhashdb::ErrorKind`'s table names for the error's kind:
//! - bad input, settings, schemes, distances, labels: `ValueError`;
//! - damaged bytes (a block's checksum, or redb's own checks): `simhashdb.CorruptionError` (an
//!   `OSError`);
//! - another writer holds the store: `simhashdb.StoreLockedError` (an `OSError`);
//! - everything else about files: `OSError`, with the errno when there is one, so Python
//!   picks `FileNotFoundError`, `FileExistsError`, `PermissionError`...
//! - a panic (a bug): `RuntimeError`.
//!
//! The message is the library's, which names the file, line or setting at fault.

use std::panic::{catch_unwind, AssertUnwindSafe};

use pyo3::create_exception;
use pyo3::exceptions::{PyOSError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use simhashdb::Error;

create_exception!(
    simhashdb,
    CorruptionError,
    PyOSError,
    "Stored bytes fail their checksum or structure checks; the message names the file, table \
     and block. Store.verify() lists every damaged block."
);
create_exception!(
    simhashdb,
    StoreLockedError,
    PyOSError,
    "Another process (an insert, delete or compaction) holds the store's writer lock; the \
     message names its pid. Queries are not affected."
);

/// `error` as the Python exception the library's table names for its kind
/// ([`simhashdb::ErrorKind`]). A `StoreLockedError` carries the holder's `pid` (an int, or
/// the lock file's text when that is not a number), as the server's 409 does.
pub fn py_err(error: Error) -> PyErr {
    let message = error.message();
    match error.kind().python_exception() {
        "ValueError" => PyValueError::new_err(message),
        "CorruptionError" => CorruptionError::new_err(message),
        "StoreLockedError" => {
            let err = StoreLockedError::new_err(message);
            if let Error::Locked { pid, .. } = &error {
                Python::attach(|py| {
                    let value = err.value(py);
                    let set = match pid.trim().parse::<u64>() {
                        Ok(n) => value.setattr("pid", n),
                        Err(_) => value.setattr("pid", pid.as_str()),
                    };
                    set.expect("an exception takes attributes");
                });
            }
            err
        }
        "RuntimeError" => PyRuntimeError::new_err(message),
        // OSError(errno, message) is created as the subclass for that errno
        // (FileNotFoundError, FileExistsError, PermissionError...).
        _ => match error.errno() {
            Some(errno) => PyOSError::new_err((errno, message)),
            None => PyOSError::new_err(message),
        },
    }
}

/// Runs `f`, turning a panic into a `RuntimeError` that says it is a bug.
pub fn guard<T>(f: impl FnOnce() -> PyResult<T>) -> PyResult<T> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(result) => result,
        Err(panic) => {
            let what = panic
                .downcast_ref::<String>()
                .map(String::as_str)
                .or_else(|| panic.downcast_ref::<&str>().copied())
                .unwrap_or("a panic");
            Err(PyRuntimeError::new_err(format!(
                "simhashdb internal error (a bug; please report it): {what}"
            )))
        }
    }
}
