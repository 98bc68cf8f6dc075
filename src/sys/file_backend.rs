//! The storage backend of every redb file the engine writes, and the faults tests inject in it.
//!
//! In normal builds [`Backend`] passes every call to redb's `FileBackend` but its writes,
//! which it gathers and issues in offset order ([`crate::sys::gathered_writes`]), and starts
//! the writeback of what it wrote every few MiB ([`crate::sys::writeback`]), and its syncs,
//! which wait until the file is finished ([`DeferredSyncs`]). Under `cfg(test)` a
//! test can install a [`Plan`] that fails the Nth write or the Nth sync (counted over every
//! file written, and the catalog's write and sync), or freezes the storage at the Nth sync:
//! that sync and every later write or sync fails, as if the machine had lost power there.
//! A frozen file keeps the writes that were not synced (the page cache survives the
//! simulated power loss), so that a run file's last sync is made is shown by its own test
//! (`run_file.rs`), not by these.

use std::fs::File;
use std::io;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use redb::backends::FileBackend;
use redb::StorageBackend;

use crate::error::{Error, Result};
use crate::sys::gathered_writes::Gathered;
use crate::sys::writeback::{Cached, Writeback};

/// A redb file being written (or read back) by the engine.
#[derive(Debug)]
pub(crate) struct Backend {
    inner: FileBackend,
    /// The file `inner` writes, for the gathered writes.
    file: File,
    gathered: Mutex<Gathered>,
    writeback: Writeback,
    syncs: DeferredSyncs,
}

/// The backend of a run file being written, whose written pages `cached` says what to do
/// with, and whose syncs wait until `syncs` ends their deferral.
pub(crate) fn backend(
    path: &Path,
    file: File,
    cached: Cached,
    syncs: DeferredSyncs,
) -> Result<Backend> {
    let clone = || file.try_clone().map_err(|e| Error::io(path, e));
    let writeback = Writeback::new(clone()?, cached);
    Ok(Backend {
        file: clone()?,
        inner: FileBackend::new(file).map_err(|e| Error::redb(path, e))?,
        gathered: Mutex::default(),
        writeback,
        syncs,
    })
}

/// Whether the syncs redb asks of a run file still being written are skipped. No one reads a
/// run before the catalog names it, and the catalog names it only once it is finished, so
/// the syncs redb makes while it is written (at each growth of the file, and at its creation)
/// protect nothing; each waited for the disk. The writer ends the deferral before the
/// commit that finishes the file: that commit's sync makes everything written before durable.
#[derive(Clone, Debug, Default)]
pub(crate) struct DeferredSyncs(Arc<SyncState>);

#[derive(Debug, Default)]
struct SyncState {
    ended: AtomicBool,
    /// Syncs that reached the disk.
    made: AtomicU64,
}

impl DeferredSyncs {
    /// From now on every sync reaches the disk.
    pub(crate) fn end(&self) {
        self.0.ended.store(true, Ordering::Release);
    }

    /// The syncs that reached the disk so far.
    #[cfg(test)]
    pub(crate) fn made(&self) -> u64 {
        self.0.made.load(Ordering::Acquire)
    }

    /// Syncs `file` unless syncs are still deferred.
    fn sync(&self, file: &FileBackend) -> io::Result<()> {
        if !self.0.ended.load(Ordering::Acquire) {
            return Ok(());
        }
        file.sync_data()?;
        self.0.made.fetch_add(1, Ordering::AcqRel);
        Ok(())
    }
}

impl Drop for Backend {
    /// Issues what redb wrote after its last call that issues (it closes every file it
    /// finishes, so only a file abandoned on an error has any), as the file held it before
    /// writes were gathered. An error here has no caller to go to; the file is abandoned.
    fn drop(&mut self) {
        let _ = self.issue();
    }
}

impl Backend {
    /// Issues the gathered writes (see [`crate::sys::gathered_writes`]).
    fn issue(&self) -> io::Result<()> {
        let issued = self.gathered().issue(&self.file)?;
        self.writeback.wrote(issued)
    }

    fn gathered(&self) -> std::sync::MutexGuard<'_, Gathered> {
        self.gathered.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl StorageBackend for Backend {
    fn len(&self) -> io::Result<u64> {
        self.issue()?;
        self.inner.len()
    }

    fn read(&self, offset: u64, out: &mut [u8]) -> io::Result<()> {
        self.issue()?;
        self.inner.read(offset, out)
    }

    // The gathered writes are issued before a fault is injected: they were writes that
    // succeeded, so a simulated failure or power loss finds them in the file.
    fn set_len(&self, len: u64) -> io::Result<()> {
        self.issue()?;
        injected(Op::Write)?;
        self.inner.set_len(len)
    }

    // A deferred sync still counts for fault injection: the crash tests simulate a power loss
    // at each sync redb asks for, deferred or not.
    fn sync_data(&self) -> io::Result<()> {
        self.issue()?;
        injected(Op::Sync)?;
        self.syncs.sync(&self.inner)
    }

    fn write(&self, offset: u64, data: &[u8]) -> io::Result<()> {
        injected(Op::Write)?;
        let issued = self.gathered().write(&self.file, offset, data)?;
        self.writeback.wrote(issued)
    }

    fn close(&self) -> io::Result<()> {
        self.issue()?;
        self.inner.close()
    }
}

/// A kind of storage operation that a fault plan counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Op {
    Write,
    Sync,
}

/// Fails `op` when the installed plan says so (never outside tests).
pub(crate) fn injected(op: Op) -> io::Result<()> {
    #[cfg(test)]
    {
        plan::check(op)
    }
    #[cfg(not(test))]
    {
        let _ = op;
        Ok(())
    }
}

#[cfg(test)]
pub(crate) mod plan {
    use std::io;
    use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
    use std::sync::{Arc, Mutex};

    use super::Op;

    /// Which operation fails.
    #[derive(Clone, Copy, Debug)]
    pub enum Fault {
        /// The Nth write (0-based) fails; later ones succeed.
        FailWrite(u64),
        /// The Nth sync fails; later ones succeed.
        FailSync(u64),
        /// The Nth sync and everything after it fails.
        FreezeAtSync(u64),
    }

    #[derive(Debug)]
    pub struct Plan {
        fault: Fault,
        writes: AtomicU64,
        syncs: AtomicU64,
        frozen: AtomicBool,
        /// Whether the fault fired.
        pub fired: AtomicBool,
    }

    static PLAN: Mutex<Option<Arc<Plan>>> = Mutex::new(None);
    /// Tests that install plans run one at a time.
    pub static SERIAL: Mutex<()> = Mutex::new(());

    /// Installs `fault` until the returned guard drops.
    pub fn install(fault: Fault) -> Arc<Plan> {
        let plan = Arc::new(Plan {
            fault,
            writes: AtomicU64::new(0),
            syncs: AtomicU64::new(0),
            frozen: AtomicBool::new(false),
            fired: AtomicBool::new(false),
        });
        *PLAN.lock().unwrap() = Some(Arc::clone(&plan));
        plan
    }

    pub fn clear() {
        *PLAN.lock().unwrap() = None;
    }

    impl Plan {
        /// (writes, syncs) seen so far.
        pub fn counts(&self) -> (u64, u64) {
            (
                self.writes.load(Ordering::SeqCst),
                self.syncs.load(Ordering::SeqCst),
            )
        }
    }

    pub(super) fn check(op: Op) -> io::Result<()> {
        let Some(plan) = PLAN.lock().unwrap().clone() else {
            return Ok(());
        };
        let fail = || {
            plan.fired.store(true, Ordering::SeqCst);
            Err(io::Error::other("injected fault"))
        };
        if plan.frozen.load(Ordering::SeqCst) {
            return fail();
        }
        let n = match op {
            Op::Write => plan.writes.fetch_add(1, Ordering::SeqCst),
            Op::Sync => plan.syncs.fetch_add(1, Ordering::SeqCst),
        };
        match (plan.fault, op) {
            (Fault::FailWrite(at), Op::Write) | (Fault::FailSync(at), Op::Sync) if n == at => {
                fail()
            }
            (Fault::FreezeAtSync(at), Op::Sync) if n == at => {
                plan.frozen.store(true, Ordering::SeqCst);
                fail()
            }
            _ => Ok(()),
        }
    }
}
