//! The writer lock: one process at a time may change a store.
//!
//! `LOCK` in the store directory is held with `flock(LOCK_EX)` for as long as a [`WriterLock`]
//! lives and holds the holder's pid for the error message of the next one. The kernel releases
//! the lock when the process dies, so a killed writer never leaves a stale lock behind.

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, Write};
use std::os::fd::AsRawFd;
use std::path::Path;

use crate::error::{Error, Result};

/// Held while a process may write to a store; released on drop.
#[derive(Debug)]
pub struct WriterLock {
    _file: File,
}

impl WriterLock {
    /// Takes the lock of the store at `dir` by locking its lock file `path`, or fails at once
    /// naming the pid that holds it.
    pub fn acquire(dir: &Path, path: &Path) -> Result<Self> {
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(path)
            .map_err(|e| Error::io(path, e))?;
        // SAFETY: flock on a file descriptor we own; no memory is involved.
        if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } != 0 {
            let err = std::io::Error::last_os_error();
            if err.raw_os_error() == Some(libc::EWOULDBLOCK) {
                let mut pid = String::new();
                let _ = file.read_to_string(&mut pid);
                let pid = pid.trim();
                return Err(Error::Locked {
                    path: dir.to_path_buf(),
                    pid: if pid.is_empty() {
                        "unknown".into()
                    } else {
                        pid.into()
                    },
                });
            }
            return Err(Error::io(path, err));
        }
        file.set_len(0)
            .and_then(|_| file.rewind())
            .and_then(|_| write!(file, "{}", std::process::id()))
            .map_err(|e| Error::io(path, e))?;
        Ok(WriterLock { _file: file })
    }
}
