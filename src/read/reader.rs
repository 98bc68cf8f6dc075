//! A long-lived reader: one open snapshot, replaced by a newer one when a writer has committed,
//! with the permuted tables pinned in memory.
//!
//! A [`Snapshot`] sees one committed state for as long as it lives. A service that answers
//! queries all day keeps a `Reader` instead: each query takes the current snapshot (an `Arc`,
//! so a query that started on an older state finishes on it), and [`Reader::refresh`], called
//! as often as freshness requires, reads the catalog and swaps in a snapshot of the new state
//! when a batch, deletion or compaction was committed by any process.
//!
//! The reader pins the tables of each run in memory while they fit in
//! [`ReaderOptions::pin_bytes`] (see [`crate::run::pinned`]). Runs are immutable, so a run's pinned
//! tables pass from one snapshot to the next; only a new run (a batch, a compaction's output)
//! is read from disk, and while it loads the current snapshot keeps answering.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};

use crate::error::Result;
use crate::format::catalog::Catalog;
use crate::read::snapshot::{CacheSpread, Snapshot, DEFAULT_CACHE_BYTES};

use crate::run::pinned::{self, PinnedRun, ProbeCounts};

/// How a [`Reader`] uses memory.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ReaderOptions {
    /// Bytes of permuted tables (as counted on disk) to hold in memory; tables past it are
    /// read through redb's cache. Default: half the machine's memory.
    pub pin_bytes: u64,
    /// Bytes of redb cache spread over each snapshot's files: over the docs files alone when
    /// every table is pinned, else over every file. Default: [`DEFAULT_CACHE_BYTES`].
    pub cache_bytes: usize,
}

impl Default for ReaderOptions {
    fn default() -> Self {
        ReaderOptions {
            pin_bytes: crate::sys::memory::physical_memory().unwrap_or(0) / 2,
            cache_bytes: DEFAULT_CACHE_BYTES,
        }
    }
}

/// What a [`crate::Database`] holds in memory and has done.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
#[non_exhaustive]
pub struct ReaderStats {
    /// Bytes of memory the pinned tables of the current snapshot hold.
    pub pinned_bytes: u64,
    /// Tables (one per run and permutation) held in memory.
    pub pinned_tables: u64,
    /// Tables read through redb because they did not fit.
    pub disk_tables: u64,
    /// Probes answered from pinned tables, since the reader opened.
    pub memory_probes: u64,
    /// Probes that read a table's file.
    pub disk_probes: u64,
    /// Times a newer committed state was made current.
    pub refreshes: u64,
}

/// A store open for reading for a long time, following its commits (behind [`crate::Database`]).
pub(crate) struct Reader {
    dir: PathBuf,
    options: ReaderOptions,
    current: RwLock<Arc<Snapshot>>,
    /// The pinned tables of the current snapshot's runs, by run id. Held while a refresh
    /// loads, so two refreshes never load the same run twice.
    pinned: Mutex<HashMap<u64, Arc<PinnedRun>>>,
    probes: Arc<ProbeCounts>,
    refreshes: AtomicU64,
}

impl Reader {
    /// Opens the store at `dir` and pins its tables as `options` allow (reading them from
    /// disk: at 1e8 documents, several GB).
    pub fn open(dir: &Path, options: ReaderOptions) -> Result<Self> {
        let probes = Arc::<ProbeCounts>::default();
        let pinned = Mutex::new(HashMap::new());
        let first = open_pinned(dir, &options, &probes, &pinned)?;
        Ok(Reader {
            dir: dir.to_path_buf(),
            options,
            current: RwLock::new(Arc::new(first)),
            pinned,
            probes,
            refreshes: AtomicU64::new(0),
        })
    }

    /// The snapshot of the last refresh: one committed state, kept alive as long as the caller
    /// holds it.
    pub fn snapshot(&self) -> Arc<Snapshot> {
        Arc::clone(&self.current.read().unwrap_or_else(|e| e.into_inner()))
    }

    /// Makes the store's committed state current, if a writer committed since the current
    /// snapshot was taken; returns whether it did. Reading the catalog is cheap (one small
    /// file); a new state opens its runs' files and pins the runs not pinned yet, on the
    /// low-priority [`crate::sys::background`] pool. On an error the current snapshot stays.
    pub fn refresh(&self) -> Result<bool> {
        let committed = Catalog::read(&self.dir)?;
        if committed == *self.snapshot().catalog() {
            return Ok(false);
        }
        // Loading a new run (a compaction's: the whole store) must not slow the queries the
        // current snapshot keeps answering meanwhile.
        let next = crate::sys::background::run(|| {
            open_pinned(&self.dir, &self.options, &self.probes, &self.pinned)
        })?;
        *self.current.write().unwrap_or_else(|e| e.into_inner()) = Arc::new(next);
        self.refreshes.fetch_add(1, Ordering::Relaxed);
        Ok(true)
    }

    /// What the reader holds in memory and how its probes were answered.
    pub fn stats(&self) -> ReaderStats {
        let snapshot = self.snapshot();
        let mut stats = ReaderStats {
            memory_probes: self.probes.memory.load(Ordering::Relaxed),
            disk_probes: self.probes.disk.load(Ordering::Relaxed),
            refreshes: self.refreshes.load(Ordering::Relaxed),
            ..ReaderStats::default()
        };
        let tables = snapshot.permutations().tables().len() as u64;
        for run in snapshot.runs() {
            match run.pinned() {
                Some(pinned) => {
                    let (memory, disk) = pinned.counts();
                    stats.pinned_bytes += pinned.bytes();
                    stats.pinned_tables += memory as u64;
                    stats.disk_tables += disk as u64;
                }
                None => stats.disk_tables += tables,
            }
        }
        stats
    }
}

/// A snapshot of the committed state with its runs' tables pinned: those of `pinned` reused,
/// new runs loaded while the budget lasts. `pinned` is left holding the snapshot's runs only.
fn open_pinned(
    dir: &Path,
    options: &ReaderOptions,
    probes: &Arc<ProbeCounts>,
    pinned: &Mutex<HashMap<u64, Arc<PinnedRun>>>,
) -> Result<Snapshot> {
    let mut snapshot = Snapshot::open_spread(dir, |catalog| {
        // When every table will be pinned, the docs files are all that is read after.
        if pinned::tables_cost(catalog) <= options.pin_bytes {
            CacheSpread::DocsOnly(options.cache_bytes)
        } else {
            CacheSpread::ByBytes(options.cache_bytes)
        }
    })?;
    snapshot.count_probes_in(Arc::clone(probes));
    let tables = snapshot.permutations().tables().len();
    let mut pinned = pinned.lock().unwrap_or_else(|e| e.into_inner());
    let mut kept: HashMap<u64, Arc<PinnedRun>> = HashMap::new();
    let mut budget = options.pin_bytes;
    // Runs pinned before keep their tables: they are charged first.
    for run in snapshot.runs() {
        if let Some(p) = pinned.get(&run.meta().id) {
            budget = budget.saturating_sub(p.charged());
            kept.insert(run.meta().id, Arc::clone(p));
        }
    }
    // Every run but the oldest keeps its key sets: lookups of older runs' matches check them.
    let oldest = snapshot.runs().first().map(|run| run.meta().id);
    for run in snapshot.runs_mut() {
        let id = run.meta().id;
        let p = match kept.get(&id) {
            Some(p) => Arc::clone(p),
            None => {
                let with_keys = Some(id) != oldest;
                let p = crate::run::pin::pin(run, tables, with_keys, &mut budget)?;
                kept.insert(id, Arc::clone(&p));
                p
            }
        };
        run.set_pinned(p);
    }
    *pinned = kept;
    Ok(snapshot)
}
