//! Writeback of the run files as they are written, a few MiB at a time.
//!
//! Left to itself, the kernel lets a writer dirty gigabytes of page cache (a merge at 1e8
//! writes 14 GB), then flushes them in bursts that fill the disk's queue and make every
//! other process on the machine, a server's clients included, wait hundreds of milliseconds
//! for a page. So every [`FLUSH_EVERY`] bytes written to a file, the writer waits for the
//! writeback it started last time and starts it for what it wrote since: each file has at
//! most about [`FLUSH_EVERY`] bytes dirty and as many under writeback, and the writer, not
//! its neighbours, waits for the disk. (PostgreSQL's `backend_flush_after` and RocksDB's
//! `bytes_per_sync` do the same.) redb still syncs each file at its commit. A write error
//! the writeback meets is returned as the error of the write that triggered it: the kernel
//! reports such an error once per open file, so swallowing it here would let the commit's
//! sync succeed on data that never reached the disk.

use std::fs::File;
use std::sync::atomic::{AtomicU64, Ordering};

/// Bytes written to one file between two writeback calls.
pub(crate) const FLUSH_EVERY: u64 = 8 << 20;

/// The writeback state of one file being written.
#[derive(Debug)]
pub(crate) struct Writeback {
    #[cfg_attr(not(target_os = "linux"), allow(dead_code))]
    file: File,
    unflushed: AtomicU64,
}

impl Writeback {
    /// Tracks `file` (a handle on the file being written).
    pub(crate) fn new(file: File) -> Self {
        Writeback {
            file,
            unflushed: AtomicU64::new(0),
        }
    }

    /// Counts `bytes` just written; every [`FLUSH_EVERY`] bytes, waits for the writeback in
    /// flight and starts it for the file's dirty pages. Fails with the error the writeback
    /// met (see the module's comment).
    pub(crate) fn wrote(&self, bytes: usize) -> std::io::Result<()> {
        let total = self.unflushed.fetch_add(bytes as u64, Ordering::Relaxed) + bytes as u64;
        // One of concurrent writers past the mark takes the count and flushes.
        if total >= FLUSH_EVERY && self.unflushed.swap(0, Ordering::Relaxed) >= FLUSH_EVERY {
            self.flush()?;
        }
        Ok(())
    }

    #[cfg(target_os = "linux")]
    fn flush(&self) -> std::io::Result<()> {
        use std::os::fd::AsRawFd;
        // Offset 0 and length 0: the whole file.
        let flags = libc::SYNC_FILE_RANGE_WAIT_BEFORE | libc::SYNC_FILE_RANGE_WRITE;
        // SAFETY: the descriptor is open for as long as `self.file` lives.
        match unsafe { libc::sync_file_range(self.file.as_raw_fd(), 0, 0, flags) } {
            0 => Ok(()),
            _ => Err(std::io::Error::last_os_error()),
        }
    }

    #[cfg(not(target_os = "linux"))]
    fn flush(&self) -> std::io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use super::*;

    /// Counting resets at each flush, and what is written still reads back.
    #[test]
    fn flushes_every_few_mib_and_keeps_the_data() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        let mut file = File::create(&path).unwrap();
        let writeback = Writeback::new(file.try_clone().unwrap());
        let chunk = vec![7u8; 1 << 20];
        for _ in 0..(FLUSH_EVERY >> 20) + 3 {
            file.write_all(&chunk).unwrap();
            writeback.wrote(chunk.len()).unwrap();
        }
        assert_eq!(writeback.unflushed.load(Ordering::Relaxed), 3 << 20);
        drop(file);
        let back = std::fs::read(&path).unwrap();
        assert_eq!(back.len() as u64, FLUSH_EVERY + (3 << 20));
        assert!(back.iter().all(|&b| b == 7));
    }

    /// An error of the writeback is the write's error, not swallowed (a pipe cannot be
    /// written back: ESPIPE).
    #[cfg(target_os = "linux")]
    #[test]
    fn a_failed_writeback_is_reported() {
        let (_reader, writer) = std::io::pipe().unwrap();
        let writeback = Writeback::new(File::from(std::os::fd::OwnedFd::from(writer)));
        writeback.wrote(1 << 20).unwrap();
        let err = writeback.wrote(FLUSH_EVERY as usize).unwrap_err();
        assert_eq!(err.raw_os_error(), Some(libc::ESPIPE));
    }
}
