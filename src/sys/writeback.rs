//! Writeback of the run files as they are written, a few MiB at a time.
//!
//! Left to itself, the kernel lets a writer dirty gigabytes of page cache (a merge of a large
//! store writes all of its tables again), then flushes them in bursts that fill the disk's
//! queue and make every other process on the machine, a server's clients included, wait for
//! a page (docs/benchmarks.md, "Writeback as runs are written"). So every [`FLUSH_EVERY`]
//! bytes written to a file, the writer waits for the writeback it started last time and starts
//! it for what it wrote since: each file has at most about [`FLUSH_EVERY`] bytes dirty and as
//! many under writeback, and the writer, not its neighbours, waits for the disk.
//! (PostgreSQL's `backend_flush_after` and RocksDB's `bytes_per_sync` do the same.) redb still
//! syncs each file at its commit. A write error the writeback meets is returned as the error of
//! the write that triggered it: the kernel reports such an error once per open file, so
//! swallowing it here would let the commit's sync succeed on data that never reached the disk.
//!
//! A merge whose output is a quarter of the machine's memory or more also drops what it has
//! written back from the page cache ([`Cached`]): such an output cannot stay cached anyway,
//! and keeping it while writing made the kernel's copies slower (docs/benchmarks.md, "A
//! merge's written pages: kept or dropped").

use std::fs::File;
use std::sync::atomic::{AtomicU64, Ordering};

/// Bytes written to one file between two writeback calls.
pub(crate) const FLUSH_EVERY: u64 = 8 << 20;

/// Whether the pages of a file being written stay in the page cache once written back.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Cached {
    /// They stay for the reads that follow: an audit just after a compaction reads them from
    /// memory instead of the disk (docs/benchmarks.md, "A merge's written pages: kept or
    /// dropped").
    Keep,
    /// They are dropped as soon as they are on disk: for an output too large to stay cached
    /// beside its inputs and the machine's other work. Keeping them costs while writing: the
    /// kernel's copy into the page cache takes fresh pages for every written page, where
    /// dropping them lets it reuse the pages just freed, so a large merge spends less CPU in
    /// the kernel and runs faster (docs/benchmarks.md, "A merge's written pages: kept or
    /// dropped"). RocksDB offers direct I/O for compaction output for the same reason.
    Forget,
}

impl Cached {
    /// The policy for files of an output of `bytes` in all: [`Cached::Forget`] from a quarter
    /// of the machine's memory up (where known), else [`Cached::Keep`].
    pub(crate) fn for_output(bytes: u64) -> Cached {
        match crate::sys::memory::physical_memory() {
            Some(memory) if bytes >= memory / 4 => Cached::Forget,
            _ => Cached::Keep,
        }
    }
}

/// The writeback state of one file being written.
#[derive(Debug)]
pub(crate) struct Writeback {
    #[cfg_attr(not(target_os = "linux"), allow(dead_code))]
    file: File,
    #[cfg_attr(not(target_os = "linux"), allow(dead_code))]
    cached: Cached,
    unflushed: AtomicU64,
}

impl Writeback {
    /// Tracks `file` (a handle on the file being written), whose written pages `cached` says
    /// what to do with.
    pub(crate) fn new(file: File, cached: Cached) -> Self {
        Writeback {
            file,
            cached,
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
        if unsafe { libc::sync_file_range(self.file.as_raw_fd(), 0, 0, flags) } != 0 {
            return Err(std::io::Error::last_os_error());
        }
        if self.cached == Cached::Forget {
            // The pages written back by now are clean and dropped; those still dirty or under
            // writeback stay. Advice only: it cannot fail in a way that loses data.
            // SAFETY: as above.
            unsafe { libc::posix_fadvise(self.file.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED) };
        }
        Ok(())
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

    /// Counting resets at each flush, and what is written still reads back, whether its pages
    /// are kept in the page cache or dropped once written back.
    #[test]
    fn flushes_every_few_mib_and_keeps_the_data() {
        for cached in [Cached::Keep, Cached::Forget] {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("f");
            let mut file = File::create(&path).unwrap();
            let writeback = Writeback::new(file.try_clone().unwrap(), cached);
            for i in 0..(FLUSH_EVERY >> 20) * 3 + 3 {
                file.write_all(&vec![i as u8; 1 << 20]).unwrap();
                writeback.wrote(1 << 20).unwrap();
            }
            assert_eq!(writeback.unflushed.load(Ordering::Relaxed), 3 << 20);
            drop(file);
            let back = std::fs::read(&path).unwrap();
            assert_eq!(back.len() as u64, 3 * FLUSH_EVERY + (3 << 20), "{cached:?}");
            for (i, chunk) in back.chunks(1 << 20).enumerate() {
                assert!(chunk.iter().all(|&b| b == i as u8), "{cached:?}: MiB {i}");
            }
        }
    }

    /// Outputs of a quarter of the machine's memory or more are written past the page cache.
    #[cfg(target_os = "linux")]
    #[test]
    fn large_outputs_forget_their_pages() {
        let memory = crate::sys::memory::physical_memory().unwrap();
        assert!(memory > 1 << 28, "{memory}");
        assert_eq!(
            Cached::for_output(1 << 30.min(memory.ilog2() - 3)),
            Cached::Keep
        );
        assert_eq!(Cached::for_output(memory / 4 - 1), Cached::Keep);
        assert_eq!(Cached::for_output(memory / 4), Cached::Forget);
        assert_eq!(Cached::for_output(u64::MAX), Cached::Forget);
    }

    /// An error of the writeback is the write's error, not swallowed (a pipe cannot be
    /// written back: ESPIPE).
    #[cfg(target_os = "linux")]
    #[test]
    fn a_failed_writeback_is_reported() {
        let (_reader, writer) = std::io::pipe().unwrap();
        let writeback =
            Writeback::new(File::from(std::os::fd::OwnedFd::from(writer)), Cached::Keep);
        writeback.wrote(1 << 20).unwrap();
        let err = writeback.wrote(FLUSH_EVERY as usize).unwrap_err();
        assert_eq!(err.raw_os_error(), Some(libc::ESPIPE));
    }
}
