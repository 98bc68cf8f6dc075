//! The writer's handle on a store: create, open, and the changes of its settings. Inserts are
//! in `insertion.rs`, deletions in `deletion.rs`, compaction in `compaction.rs`; each commits
//! through a [`PendingCommit`].
//!
//! The commit protocol of a batch:
//! 1. take the writer lock (held by [`Store`] for its life);
//! 2. read what the live runs say of the batch's ids, and which of its fingerprints the
//!    permuted tables already hold;
//! 3. write a new run directory holding the changed documents, their postings and the new
//!    fingerprints' keys in every table; fsync every file and the directories;
//! 4. commit a catalog that names the run (an atomic rename: the commit point).
//!
//! A crash before 4 leaves the old catalog, which does not name the new run: the batch is
//! absent, and the next writer deletes the unnamed run directory (debris). A crash after 4 leaves the
//! batch whole. Deletions are runs of deletion entries, committed the same way; a compaction
//! writes the merged run, commits a catalog that names it instead of its inputs, and only
//! then deletes the inputs (readers that still use them keep their files open).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use crate::error::{Error, Result, Setting};
use crate::format::catalog::Catalog;
use crate::format::layout::{self, sync_dir};
use crate::format::settings::CompactionPolicy;
use crate::format::settings::Settings;
use crate::read::debris::{self, Debris};
use crate::read::snapshot::{CacheSpread, Snapshot, DEFAULT_CACHE_BYTES};
use crate::similarity::fingerprint::Scheme;
use crate::sys::lock::WriterLock;
use crate::sys::progress::Progress;
use crate::write::commit::PendingCommit;

/// A store open for writing. Only one may exist per store at a time, across processes.
///
/// ```
/// # let dir = tempfile::tempdir().unwrap();
/// # let path = dir.path().join("store");
/// use simhashdb::{Batch, ExpireSelector, Settings, Store};
///
/// let mut store = Store::create(&path, Settings::default())?; // m = 5, K = 3
/// let mut day = Batch::new();
/// day.push("a", 0x0123_4567_89ab_cdef)?;
/// day.push("b", 0xfedc_ba98_7654_3210)?;
/// store.insert(&day, Some("day-1"))?;
/// assert_eq!(store.delete(["b"])?.deleted, 1);
/// store.expire(&ExpireSelector::Label("day-1".into()))?; // every document of day 1
/// store.compact()?;
/// assert_eq!(store.snapshot()?.documents(), 0);
/// # Ok::<(), simhashdb::Error>(())
/// ```
pub struct Store {
    dir: PathBuf,
    catalog: Catalog,
    progress: Arc<dyn Progress>,
    /// Whether an insert merges runs itself after its commit, as the policy asks (a
    /// [`crate::Database`] that merges in the background turns this off).
    pub(crate) compact_inserts: bool,
    /// The debris opening the store removed.
    removed_debris: Vec<Debris>,
    _lock: WriterLock,
}

/// Everything a new store is made with, each defaulting as `simhashdb init` does: K = 3, m
/// chosen for K and the expected size, 256 shards, the default scheme and compaction policy.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CreateOptions {
    /// K, the largest distance a query may ask for.
    pub distance: u8,
    /// m, the blocks a fingerprint is split into; None chooses it for `distance` and
    /// `expected_size` ([`Settings::for_size`]).
    pub blocks: Option<u8>,
    /// About how many fingerprints the store will hold: 1 to 1e15.
    pub expected_size: u64,
    /// Shard files per run; None is the default (256).
    pub shards: Option<u16>,
    /// How text becomes fingerprints.
    pub scheme: Scheme,
    /// When inserts merge runs.
    pub policy: CompactionPolicy,
}

/// The largest expected size a store may be made for.
const MAX_EXPECTED_SIZE: u64 = 1_000_000_000_000_000;

impl Default for CreateOptions {
    fn default() -> Self {
        CreateOptions {
            distance: Settings::default().distance,
            blocks: None,
            expected_size: crate::format::settings::DEFAULT_EXPECTED_SIZE,
            shards: None,
            scheme: Scheme::default(),
            policy: CompactionPolicy::default(),
        }
    }
}

impl CreateOptions {
    /// The settings these options make, checked.
    pub fn settings(&self) -> Result<Settings> {
        if !(1..=MAX_EXPECTED_SIZE).contains(&self.expected_size) {
            return Err(Error::settings(
                Setting::ExpectedSize,
                format!("{} is out of range: between 1 and 1e15", self.expected_size),
            ));
        }
        let mut settings = match self.blocks {
            Some(blocks) => Settings {
                blocks,
                distance: self.distance,
                shards: Settings::default().shards,
            },
            None => Settings::for_size(self.distance, self.expected_size)?,
        };
        if let Some(shards) = self.shards {
            settings.shards = shards;
        }
        settings.validate()?;
        Ok(settings)
    }

    /// What is impractical about these settings at the expected size (a store is still made).
    pub fn warnings(&self) -> Result<Vec<String>> {
        Ok(self.settings()?.warnings(self.expected_size))
    }
}

impl Store {
    /// The format version this build creates stores in (docs/format.md): 5. Stores of
    /// versions 3 and 4 open as they are and stay at their version, which older builds open
    /// too; [`Store::migrate`] upgrades them, and must upgrade versions 1 and 2 before they
    /// open.
    pub const FORMAT_VERSION: u32 = crate::format::catalog::FORMAT_VERSION;

    /// Creates a store in `dir`, which must not exist or be an empty directory, with the
    /// default fingerprint scheme and compaction policy.
    pub fn create(dir: &Path, settings: Settings) -> Result<Self> {
        Self::create_with(
            dir,
            settings,
            Scheme::default(),
            CompactionPolicy::default(),
        )
    }

    /// Creates a store in `dir` (which must not exist or be an empty directory) that
    /// fingerprints text with `scheme` and compacts by `policy`, in one commit.
    pub fn create_with(
        dir: &Path,
        settings: Settings,
        scheme: Scheme,
        policy: CompactionPolicy,
    ) -> Result<Self> {
        settings.validate()?;
        policy.validate()?;
        match std::fs::read_dir(dir) {
            Ok(mut entries) => {
                if entries.next().is_some() {
                    return Err(Error::AlreadyExists {
                        path: dir.to_path_buf(),
                        why: "it exists and is not empty".into(),
                    });
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotADirectory => {
                // The path itself is taken by a file, or a directory it would be made in is
                // not one (the error names that one).
                let parent = dir.ancestors().skip(1).find(|p| p.exists() && !p.is_dir());
                return Err(match parent {
                    Some(parent) => Error::io(parent, e),
                    None => Error::AlreadyExists {
                        path: dir.to_path_buf(),
                        why: "it exists and is not a directory".into(),
                    },
                });
            }
            Err(e) => return Err(Error::io(dir, e)),
        }
        let lock = WriterLock::acquire(dir, &layout::lock_file(dir))?;
        let runs = layout::runs_dir(dir);
        std::fs::create_dir_all(&runs).map_err(|e| Error::io(&runs, e))?;
        sync_dir(dir)?;
        let mut pending = PendingCommit::new(dir, &Catalog::new(settings));
        pending.catalog_mut().scheme = Some(scheme.name());
        pending.catalog_mut().sketch_bytes = scheme.sketch_bytes().unwrap_or(0);
        pending.catalog_mut().compaction = policy;
        let catalog = pending.commit()?;
        if let Some(parent) = dir.parent().filter(|p| !p.as_os_str().is_empty()) {
            sync_dir(parent)?;
        }
        Ok(Store {
            dir: dir.to_path_buf(),
            catalog,
            progress: Arc::new(()),
            compact_inserts: true,
            removed_debris: Vec::new(),
            _lock: lock,
        })
    }

    /// Creates a store in `dir` with `options` (see [`CreateOptions`]).
    pub fn create_from(dir: &Path, options: &CreateOptions) -> Result<Self> {
        Self::create_with(dir, options.settings()?, options.scheme, options.policy)
    }

    /// Opens the store at `dir` for writing: takes the writer lock, or fails at once naming
    /// the process that holds it, and removes the debris of writers that died
    /// ([`Store::removed_debris`]).
    pub fn open(dir: &Path) -> Result<Self> {
        Self::open_waiting(dir, Duration::ZERO)
    }

    /// [`Store::open`], waiting up to `wait` for another writer to release the lock.
    pub fn open_waiting(dir: &Path, wait: Duration) -> Result<Self> {
        // Read first so that a path that is not a store gets that error, not a lock file.
        Catalog::read(dir)?;
        let lock = WriterLock::acquire_within(dir, &layout::lock_file(dir), wait)?;
        let catalog = Catalog::read(dir)?;
        let debris = debris::unnamed(dir, &catalog)?;
        debris::remove(dir, &debris)?;
        Ok(Store {
            dir: dir.to_path_buf(),
            catalog,
            progress: Arc::new(()),
            compact_inserts: true,
            removed_debris: debris,
            _lock: lock,
        })
    }

    /// What opening this store removed from `runs/`: directories no committed catalog named,
    /// left by writers killed before their commit or compactions killed before deleting their
    /// inputs.
    pub fn removed_debris(&self) -> &[Debris] {
        &self.removed_debris
    }

    /// Leaves merges to the caller: inserts no longer merge runs after their commit.
    pub(crate) fn defer_compaction(&mut self) {
        self.compact_inserts = false;
    }

    /// Tells `progress` how this store's long operations advance: writing a run's tables,
    /// merging runs, checking runs for repair.
    pub fn set_progress(&mut self, progress: Arc<dyn Progress>) {
        self.progress = progress;
    }

    /// Where this store reports progress.
    pub(crate) fn progress(&self) -> &dyn Progress {
        self.progress.as_ref()
    }

    crate::read::catalog_view::catalog_accessors!();

    /// The committed catalog.
    pub(crate) fn catalog(&self) -> &Catalog {
        &self.catalog
    }

    /// A read-only view of the committed state, reading through a cache for repeated queries
    /// (as [`Snapshot::open`]'s).
    pub fn snapshot(&self) -> Result<Snapshot> {
        Snapshot::from_catalog_spread(
            &self.dir,
            self.catalog.clone(),
            CacheSpread::ByBytes(DEFAULT_CACHE_BYTES),
        )
    }

    /// Sets when inserts compact by themselves (see [`CompactionPolicy`]).
    pub fn set_compaction_policy(&mut self, policy: CompactionPolicy) -> Result<()> {
        policy.validate()?;
        let mut pending = self.begin_commit();
        pending.catalog_mut().compaction = policy;
        self.commit(pending)
    }

    /// Records the scheme text is fingerprinted with. Only a store that holds no document or
    /// has no scheme yet may take one: fingerprints made with two schemes do not compare. The
    /// sketch size is the store's, fixed when it was made; `scheme`'s is ignored.
    pub fn set_scheme(&mut self, scheme: Scheme) -> Result<()> {
        if let Some(current) = &self.catalog.scheme {
            if self.catalog.documents > 0 && *current != scheme.name() {
                return Err(Error::Scheme(format!(
                    "{}: the store holds documents fingerprinted with scheme {current}; \
                     it cannot change to {}",
                    self.dir.display(),
                    scheme.name()
                )));
            }
        }
        let mut pending = self.begin_commit();
        pending.catalog_mut().scheme = Some(scheme.name());
        self.commit(pending)
    }

    /// A commit that starts from the committed catalog.
    pub(crate) fn begin_commit(&self) -> PendingCommit {
        PendingCommit::new(&self.dir, &self.catalog)
    }

    /// Commits `pending`, which must have started from the committed catalog. When the commit
    /// fails, the catalog on disk may be the old or the new one (the rename may have happened
    /// before the failure): the store takes whichever is there, so that its next commit never
    /// reuses a run id that a committed catalog names, and removes the runs it does not name.
    pub(crate) fn commit(&mut self, pending: PendingCommit) -> Result<()> {
        match pending.commit() {
            Ok(next) => {
                self.catalog = next;
                Ok(())
            }
            Err(e) => {
                if let Ok(on_disk) = Catalog::read(&self.dir) {
                    // Runs the catalog on disk does not name are this commit's: garbage now.
                    if let Ok(garbage) = debris::unnamed(&self.dir, &on_disk) {
                        let _ = debris::remove(&self.dir, &garbage);
                    }
                    self.catalog = on_disk;
                }
                Err(e)
            }
        }
    }
}
