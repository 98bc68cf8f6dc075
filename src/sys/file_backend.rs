//! The storage backend of every redb file the engine writes, and the faults tests inject in it.
//!
//! In normal builds [`Backend`] passes every call to redb's `FileBackend`, and starts the
//! writeback of what it wrote every few MiB ([`crate::sys::writeback`]). Under `cfg(test)` a
//! test can install a [`Plan`] that fails the Nth write or the Nth sync (counted over every
//! file written, and the catalog's write and sync), or freezes the storage at the Nth sync:
//! that sync and every later write or sync fails, as if the machine had lost power there.

use std::fs::File;
use std::io;
use std::path::Path;

use redb::backends::FileBackend;
use redb::StorageBackend;

use crate::error::{Error, Result};
use crate::sys::writeback::Writeback;

/// A redb file being written (or read back) by the engine.
#[derive(Debug)]
pub(crate) struct Backend {
    inner: FileBackend,
    writeback: Writeback,
}

/// The backend of a new run file.
pub(crate) fn backend(path: &Path, file: File) -> Result<Backend> {
    let writeback = Writeback::new(file.try_clone().map_err(|e| Error::io(path, e))?);
    Ok(Backend {
        inner: FileBackend::new(file).map_err(|e| Error::redb(path, e))?,
        writeback,
    })
}

impl StorageBackend for Backend {
    fn len(&self) -> io::Result<u64> {
        self.inner.len()
    }

    fn read(&self, offset: u64, out: &mut [u8]) -> io::Result<()> {
        self.inner.read(offset, out)
    }

    fn set_len(&self, len: u64) -> io::Result<()> {
        injected(Op::Write)?;
        self.inner.set_len(len)
    }

    fn sync_data(&self) -> io::Result<()> {
        injected(Op::Sync)?;
        self.inner.sync_data()
    }

    fn write(&self, offset: u64, data: &[u8]) -> io::Result<()> {
        injected(Op::Write)?;
        self.inner.write(offset, data)?;
        self.writeback.wrote(data.len())
    }

    fn close(&self) -> io::Result<()> {
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

#[cfg(test)]
mod tests {
    //! Every operation either completes or leaves the previous state, and says which, whatever
    //! write or sync fails.

    use std::collections::BTreeMap;
    use std::path::Path;
    use std::sync::atomic::Ordering;

    use super::plan::{self, Fault};
    use crate::maintenance::verify::verify_store;
    use crate::write::policy::CompactionPolicy;
    use crate::{Batch, Settings, Snapshot, Store};

    type Model = BTreeMap<String, u64>;

    fn contents(dir: &Path) -> Model {
        let mut out = Model::new();
        Snapshot::open(dir)
            .unwrap()
            .for_each_live_document(|id, fp, _| {
                out.insert(id.to_string(), fp);
            })
            .unwrap();
        out
    }

    /// A store with three runs, and the operations to break: each changes the store.
    fn base(dir: &Path) -> Model {
        let mut store = Store::create(
            dir,
            Settings {
                blocks: 6,
                distance: 3,
                shards: 4,
            },
        )
        .unwrap();
        store
            .set_compaction_policy(CompactionPolicy {
                max_runs: 0,
                merge_factor: 2,
            })
            .unwrap();
        for b in 0..3u64 {
            let mut batch = Batch::new();
            for i in 0..300u64 {
                batch
                    .push(
                        &format!("d{}", (b * 200 + i) % 700),
                        (b << 32 | i).wrapping_mul(0x9E37_79B9_7F4A_7C15),
                    )
                    .unwrap();
            }
            store.insert(&batch, None).unwrap();
        }
        contents(dir)
    }

    fn run_op(op: usize, dir: &Path) -> crate::Result<()> {
        let mut store = Store::open(dir)?;
        match op {
            0 => {
                let mut batch = Batch::new();
                for i in 0..400u64 {
                    batch.push(
                        &format!("d{}", i * 3),
                        i.wrapping_mul(0xD6E8_FEB8_6659_FD93),
                    )?;
                }
                store.insert(&batch, None).map(|_| ())
            }
            1 => {
                let ids: Vec<String> = (0..200).map(|i| format!("d{}", i * 2)).collect();
                store.delete(ids.iter().map(String::as_str)).map(|_| ())
            }
            _ => store.compact().map(|_| ()),
        }
    }

    #[test]
    fn every_injected_fault_leaves_the_old_state_or_the_new_one() {
        let _serial = plan::SERIAL.lock().unwrap();
        for op in 0..3 {
            // A clean run: the expected result, and how many writes and syncs it makes.
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("s");
            let before = base(&path);
            let counter = plan::install(Fault::FailWrite(u64::MAX));
            run_op(op, &path).unwrap();
            plan::clear();
            let after = contents(&path);
            let (writes, syncs) = counter.counts();
            assert!(
                writes > 0 && syncs > 0,
                "op {op}: {writes} writes, {syncs} syncs"
            );
            let faults = (0..writes)
                .map(Fault::FailWrite)
                .chain((0..syncs).map(Fault::FailSync))
                .chain((0..syncs).map(Fault::FreezeAtSync));
            for fault in faults {
                let dir = tempfile::tempdir().unwrap();
                let path = dir.path().join("s");
                base(&path);
                let plan = plan::install(fault);
                let result = run_op(op, &path);
                plan::clear();
                assert!(plan.fired.load(Ordering::SeqCst), "op {op} {fault:?} fired");
                // Reopening as a writer removes what a failed operation left behind.
                drop(Store::open(&path).unwrap());
                let report = verify_store(&path, false).unwrap();
                assert!(
                    report.findings.is_empty(),
                    "op {op} {fault:?}: {:?}",
                    report.findings
                );
                let now = contents(&path);
                match result {
                    Ok(()) => assert!(now == after, "op {op} {fault:?}: succeeded but differs"),
                    Err(e) => {
                        assert!(now == before, "op {op} {fault:?}: failed ({e}) but changed");
                        assert!(
                            e.to_string().contains("injected fault"),
                            "op {op} {fault:?}: {e}"
                        );
                    }
                }
                let leftovers = std::fs::read_dir(crate::format::layout::runs_dir(&path))
                    .unwrap()
                    .count();
                assert_eq!(
                    leftovers,
                    Snapshot::open(&path).unwrap().catalog().runs.len()
                );
            }
        }
    }
}
