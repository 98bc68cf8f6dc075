//! Writeback of the run files as they are written, a few MiB at a time.
//!
//! Left to itself, the kernel lets a writer dirty gigabytes of page cache (a merge at 1e8
//! writes 14 GB), then flushes them in bursts that fill the disk's queue and make every
//! other process on the machine, a server's clients included, wait hundreds of milliseconds
//! for a page. So every [`FLUSH_EVERY`] bytes written to a file, the writer waits for the
//! writeback it started last time and starts it for what it wrote since: each file holds at
//! most about twice that in dirty pages, and the writer, not its neighbours, waits for the
//! disk. (PostgreSQL's `backend_flush_after` and RocksDB's `bytes_per_sync` do the same.)
//! Durability is unchanged: redb still syncs each file at its commit.

use std::fs::File;
use std::sync::atomic::{AtomicU64, Ordering};

/// Bytes written to one file between two writeback calls.
pub(crate) const FLUSH_EVERY: u64 = 8 << 20;

/// The writeback state of one file being written.
#[derive(Debug)]
pub(crate) struct Writeback {
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
    /// flight and starts it for the file's dirty pages. A failure here is not an error: the
    /// commit's sync reports any write that did not reach the disk.
    pub(crate) fn wrote(&self, bytes: usize) {
        let total = self.unflushed.fetch_add(bytes as u64, Ordering::Relaxed) + bytes as u64;
        if total >= FLUSH_EVERY {
            self.unflushed.store(0, Ordering::Relaxed);
            self.flush();
        }
    }

    #[cfg(target_os = "linux")]
    fn flush(&self) {
        use std::os::fd::AsRawFd;
        // Offset 0 and length 0: the whole file.
        let flags = libc::SYNC_FILE_RANGE_WAIT_BEFORE | libc::SYNC_FILE_RANGE_WRITE;
        // SAFETY: the descriptor is open for as long as `self.file` lives.
        unsafe { libc::sync_file_range(self.file.as_raw_fd(), 0, 0, flags) };
    }

    #[cfg(not(target_os = "linux"))]
    fn flush(&self) {}
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
            writeback.wrote(chunk.len());
        }
        assert_eq!(writeback.unflushed.load(Ordering::Relaxed), 3 << 20);
        drop(file);
        let back = std::fs::read(&path).unwrap();
        assert_eq!(back.len() as u64, FLUSH_EVERY + (3 << 20));
        assert!(back.iter().all(|&b| b == 7));
    }
}
