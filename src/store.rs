//! The writer's handle on a store: create, open, delete, expire, compact (inserts are in
//! `insertion.rs`).
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
//! absent, and the next writer deletes the unnamed run directory. A crash after 4 leaves the
//! batch whole. Deletions are runs of deletion entries, committed the same way; a compaction
//! writes the merged run, commits a catalog that names it instead of its inputs, and only
//! then deletes the inputs (readers that still use them keep their files open).

use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use rayon::prelude::*;

use crate::block::docs::{id_hash, DocState};
use crate::catalog::{sync_dir, BatchKind, BatchMeta, Catalog, CompactionPolicy};
use crate::compaction;
use crate::error::{Error, Result};
use crate::fingerprint::Scheme;
use crate::lock::WriterLock;
use crate::merge::merge_runs;
use crate::run::{write_run, RunContents};
use crate::settings::Settings;
use crate::snapshot::{Snapshot, DEFAULT_CACHE_BYTES};

/// A store open for writing. Only one may exist per store at a time, across processes.
pub struct Store {
    dir: PathBuf,
    catalog: Catalog,
    _lock: WriterLock,
}

impl Store {
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
        match std::fs::read_dir(dir) {
            Ok(mut entries) => {
                if entries.next().is_some() {
                    return Err(Error::Input(format!(
                        "{}: already exists and is not empty; choose a new path",
                        dir.display()
                    )));
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotADirectory => {
                return Err(Error::Input(format!(
                    "{}: already exists and is not a directory",
                    dir.display()
                )))
            }
            Err(e) => return Err(Error::io(dir, e)),
        }
        let lock = WriterLock::acquire(dir)?;
        let runs = dir.join("runs");
        std::fs::create_dir_all(&runs).map_err(|e| Error::io(&runs, e))?;
        sync_dir(dir)?;
        let mut catalog = Catalog::new(settings);
        catalog.scheme = Some(scheme.name());
        catalog.compaction = policy;
        catalog.commit(dir)?;
        if let Some(parent) = dir.parent().filter(|p| !p.as_os_str().is_empty()) {
            sync_dir(parent)?;
        }
        Ok(Store {
            dir: dir.to_path_buf(),
            catalog,
            _lock: lock,
        })
    }

    /// Opens the store at `dir` for writing: takes the writer lock and deletes the runs of
    /// writers that died before committing.
    pub fn open(dir: &Path) -> Result<Self> {
        // Read first so that a path that is not a store gets that error, not a lock file.
        Catalog::read(dir)?;
        let lock = WriterLock::acquire(dir)?;
        let catalog = Catalog::read(dir)?;
        let store = Store {
            dir: dir.to_path_buf(),
            catalog,
            _lock: lock,
        };
        store.remove_abandoned_runs()?;
        Ok(store)
    }

    /// Deletes run directories the catalog does not name. Only the lock holder may do this:
    /// a writer in progress would otherwise lose its run.
    fn remove_abandoned_runs(&self) -> Result<()> {
        let runs = self.dir.join("runs");
        let entries = std::fs::read_dir(&runs).map_err(|e| Error::io(&runs, e))?;
        let mut removed = false;
        for entry in entries {
            let entry = entry.map_err(|e| Error::io(&runs, e))?;
            let name = entry.file_name();
            let live = name
                .to_str()
                .and_then(|n| n.parse::<u64>().ok())
                .is_some_and(|id| self.catalog.runs.iter().any(|r| r.id == id));
            if !live {
                let path = entry.path();
                std::fs::remove_dir_all(&path).map_err(|e| Error::io(&path, e))?;
                removed = true;
            }
        }
        if removed {
            sync_dir(&runs)?;
        }
        Ok(())
    }

    /// The store's settings.
    pub fn settings(&self) -> &Settings {
        &self.catalog.settings
    }

    /// The committed catalog.
    pub fn catalog(&self) -> &Catalog {
        &self.catalog
    }

    /// A read-only view of the committed state.
    pub fn snapshot(&self) -> Result<Snapshot> {
        Snapshot::from_catalog(&self.dir, self.catalog.clone(), DEFAULT_CACHE_BYTES)
    }

    /// Sets when inserts compact by themselves (see [`compaction::plan`]).
    pub fn set_compaction_policy(&mut self, policy: CompactionPolicy) -> Result<()> {
        let mut next = self.catalog.clone();
        next.compaction = policy;
        self.commit(next)
    }

    /// The scheme text is fingerprinted with (see [`Catalog::scheme`]).
    pub fn scheme(&self) -> Result<Option<Scheme>> {
        self.catalog.scheme()
    }

    /// Records the scheme text is fingerprinted with. Only a store that holds no document or
    /// has no scheme yet may take one: fingerprints made with two schemes do not compare.
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
        let mut next = self.catalog.clone();
        next.scheme = Some(scheme.name());
        self.commit(next)
    }

    pub(crate) fn commit(&mut self, next: Catalog) -> Result<()> {
        next.commit(&self.dir)?;
        self.catalog = next;
        Ok(())
    }

    /// A new batch record of `kind`, to be committed with its run.
    pub(crate) fn batch_meta(&self, kind: BatchKind, label: Option<&str>) -> BatchMeta {
        BatchMeta {
            id: self.catalog.next_batch,
            kind,
            committed_unix_s: SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |d| d.as_secs()),
            label: label.map(str::to_string),
            inserted: 0,
            replaced: 0,
            unchanged: 0,
            deleted: 0,
            expired_by: None,
        }
    }

    /// Writes `contents` as a new run that `next` names but no committed catalog does yet,
    /// and returns its directory. A run that fails half-written is removed.
    pub(crate) fn write_pending_run(
        &self,
        next: &mut Catalog,
        contents: &RunContents<'_>,
    ) -> Result<PathBuf> {
        let run_id = next.next_run;
        let run_dir = Catalog::run_dir(&self.dir, run_id);
        let perms = crate::permutation::Permutations::new(&next.settings);
        let meta = write_run(
            &run_dir,
            run_id,
            &perms,
            usize::from(next.settings.shards),
            contents,
        )
        .inspect_err(|_| {
            let _ = std::fs::remove_dir_all(&run_dir);
        })?;
        next.next_run += 1;
        next.runs.push(meta);
        Ok(run_dir)
    }

    /// Writes `contents` as a new run and commits it with `batch`; `next` is the catalog to
    /// commit, before the run and batch are added.
    fn commit_run(
        &mut self,
        mut next: Catalog,
        contents: &RunContents<'_>,
        batch: BatchMeta,
    ) -> Result<()> {
        self.write_pending_run(&mut next, contents)?;
        next.next_batch += 1;
        next.batches.push(batch);
        // A failed commit may still have reached the disk: the run stays, and the next
        // writer to open the store removes it if the catalog does not name it.
        self.commit(next)
    }

    /// The store's directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Deletes documents by id, all or nothing. Their fingerprints stop matching at once and
    /// leave the tables at the next compaction.
    pub fn delete<'a>(&mut self, ids: impl IntoIterator<Item = &'a str>) -> Result<DeleteSummary> {
        let mut keys: Vec<(u64, &str)> = ids
            .into_iter()
            .map(|id| (id_hash(id.as_bytes()), id))
            .collect();
        let asked = keys.len() as u64;
        keys.par_sort_unstable();
        keys.dedup();
        let snapshot = self.snapshot()?;
        let live = live_among(&snapshot, &keys)?;
        let summary = DeleteSummary {
            batch: None,
            deleted: live.len() as u64,
            not_found: keys.len() as u64 - live.len() as u64,
            repeated: asked - keys.len() as u64,
        };
        self.delete_sorted(&live, BatchKind::Delete, None, summary, &[])
    }

    /// Deletes every document still in the insert batches `selector` picks, all or nothing.
    pub fn expire(&mut self, selector: &ExpireSelector) -> Result<DeleteSummary> {
        let batches: Vec<u64> = self
            .catalog
            .batches
            .iter()
            .filter(|b| b.kind == BatchKind::Insert && selector.picks(b))
            .map(|b| b.id)
            .collect();
        if let ExpireSelector::Label(label) = selector {
            if batches.is_empty() {
                return Err(Error::Input(format!(
                    "no insert batch has the label {label:?} (see `simhashdb batches`)"
                )));
            }
        }
        let mut doomed: Vec<(u64, String)> = Vec::new();
        if !batches.is_empty() {
            self.snapshot()?.for_each_live_document(|id, _, batch| {
                if batches.binary_search(&batch).is_ok() {
                    doomed.push((id_hash(id.as_bytes()), id.to_string()));
                }
            })?;
        }
        doomed.par_sort_unstable();
        let keys: Vec<(u64, &str)> = doomed.iter().map(|(h, id)| (*h, id.as_str())).collect();
        let summary = DeleteSummary {
            batch: None,
            deleted: keys.len() as u64,
            not_found: 0,
            repeated: 0,
        };
        let label = match selector {
            ExpireSelector::Before(t) => format!("before {t}"),
            ExpireSelector::Label(l) => format!("label {l}"),
        };
        self.delete_sorted(&keys, BatchKind::Expire, Some(&label), summary, &batches)
    }

    /// Commits deletions of the live documents `keys` (ordered by `(id_hash, id)`), marking
    /// the insert batches `expired` as expired by it.
    fn delete_sorted(
        &mut self,
        keys: &[(u64, &str)],
        kind: BatchKind,
        label: Option<&str>,
        mut summary: DeleteSummary,
        expired: &[u64],
    ) -> Result<DeleteSummary> {
        if keys.is_empty() && expired.is_empty() {
            return Ok(summary);
        }
        let mut meta = self.batch_meta(kind, label);
        meta.deleted = keys.len() as u64;
        let documents: Vec<(u64, &str, DocState)> = keys
            .iter()
            .map(|&(hash, id)| (hash, id, DocState::Deleted { batch: meta.id }))
            .collect();
        let mut next = self.catalog.clone();
        next.documents -= keys.len() as u64;
        for b in next.batches.iter_mut() {
            if expired.contains(&b.id) && b.expired_by.is_none() {
                b.expired_by = Some(meta.id);
            }
        }
        summary.batch = Some(meta.id);
        self.commit_run(
            next,
            &RunContents {
                documents: &documents,
                postings: &[],
                fingerprints: &[],
            },
            meta,
        )?;
        Ok(summary)
    }

    /// Merges every run into one: drops deleted documents, replaced postings and fingerprints
    /// no id has any more, and reclaims their space.
    pub fn compact(&mut self) -> Result<CompactSummary> {
        if self.catalog.runs.is_empty() {
            return Ok(CompactSummary::nothing(&self.catalog));
        }
        self.merge_from(0)
    }

    /// Whether the compaction policy asks for a merge now (what [`Store::compact_if_due`]
    /// would do).
    pub fn compaction_due(&self) -> bool {
        self.due_merge().is_some()
    }

    /// The first run of the merge the policy asks for now, if any.
    fn due_merge(&self) -> Option<usize> {
        let sizes: Vec<u64> = self.catalog.runs.iter().map(run_size).collect();
        compaction::plan(&sizes, &self.catalog.compaction)
    }

    /// Merges what the compaction policy says is due, repeatedly; None when nothing was.
    pub fn compact_if_due(&mut self) -> Result<Option<CompactSummary>> {
        let mut total: Option<CompactSummary> = None;
        loop {
            let Some(start) = self.due_merge() else {
                return Ok(total);
            };
            let step = self.merge_from(start)?;
            total = Some(match total {
                None => step,
                Some(t) => t.then(step),
            });
            if self.catalog.runs.len() <= 1 {
                return Ok(total);
            }
        }
    }

    /// Merges runs `start..` into one run that takes their place.
    fn merge_from(&mut self, start: usize) -> Result<CompactSummary> {
        let began = std::time::Instant::now();
        let bytes_before = runs_bytes(&self.dir, &self.catalog)?;
        let snapshot = self.snapshot()?;
        let run_id = self.catalog.next_run;
        let merged = merge_runs(
            &snapshot.runs()[start..],
            start == 0,
            &Catalog::run_dir(&self.dir, run_id),
            run_id,
            snapshot.permutations(),
            usize::from(self.catalog.settings.shards),
        )?;
        let mut next = self.catalog.clone();
        let inputs: Vec<u64> = next.runs.drain(start..).map(|r| r.id).collect();
        next.runs.push(merged.meta);
        next.next_run += 1;
        let runs_before = self.catalog.runs.len();
        self.commit(next)?;
        drop(snapshot);
        // The inputs are garbage now; if removing one fails, the next writer removes it.
        for id in &inputs {
            let _ = std::fs::remove_dir_all(Catalog::run_dir(&self.dir, *id));
        }
        let _ = sync_dir(&self.dir.join("runs"));
        Ok(CompactSummary {
            runs_before,
            runs_after: self.catalog.runs.len(),
            merged_runs: inputs.len(),
            bytes_before,
            bytes_after: runs_bytes(&self.dir, &self.catalog)?,
            dropped_documents: merged.dropped_documents,
            dropped_fingerprints: merged.dropped_fingerprints,
            table_entries: merged.table_entries,
            seconds: began.elapsed().as_secs_f64(),
        })
    }
}

/// The entries of a run, as the compaction policy weighs it.
fn run_size(run: &crate::catalog::RunMeta) -> u64 {
    run.documents.max(run.fingerprints)
}

/// Bytes of the files of the catalog's runs.
pub fn runs_bytes(dir: &Path, catalog: &Catalog) -> Result<u64> {
    let mut total = 0;
    for run in &catalog.runs {
        let run_dir = Catalog::run_dir(dir, run.id);
        for entry in std::fs::read_dir(&run_dir).map_err(|e| Error::io(&run_dir, e))? {
            let entry = entry.map_err(|e| Error::io(&run_dir, e))?;
            total += entry
                .metadata()
                .map_err(|e| Error::io(entry.path(), e))?
                .len();
        }
    }
    Ok(total)
}

/// The ids among `keys` (ordered by `(id_hash, id)`) that are live now.
fn live_among<'a>(snapshot: &Snapshot, keys: &[(u64, &'a str)]) -> Result<Vec<(u64, &'a str)>> {
    let mut states: Vec<Option<DocState>> = vec![None; keys.len()];
    for run in snapshot.runs().iter().rev() {
        run.docs()?.states_sorted(keys, &mut states)?;
    }
    Ok(keys
        .iter()
        .zip(states)
        .filter(|(_, s)| matches!(s, Some(DocState::Live { .. })))
        .map(|(&k, _)| k)
        .collect())
}

/// Which insert batches `expire` removes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ExpireSelector {
    /// Batches committed before this time (seconds since the Unix epoch).
    Before(u64),
    /// Batches with this label.
    Label(String),
}

impl ExpireSelector {
    fn picks(&self, batch: &BatchMeta) -> bool {
        match self {
            ExpireSelector::Before(t) => batch.committed_unix_s < *t,
            ExpireSelector::Label(l) => batch.label.as_deref() == Some(l.as_str()),
        }
    }
}

/// What a delete or expire did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DeleteSummary {
    /// The batch number, or None when nothing changed.
    pub batch: Option<u64>,
    /// Live documents deleted.
    pub deleted: u64,
    /// Ids asked for that were not stored (or already deleted).
    pub not_found: u64,
    /// Ids asked for more than once (counted once).
    pub repeated: u64,
}

/// What a compaction did.
#[derive(Clone, Debug, PartialEq)]
pub struct CompactSummary {
    pub runs_before: usize,
    pub runs_after: usize,
    /// Runs merged (over every step of an automatic compaction).
    pub merged_runs: usize,
    /// Bytes of run files before and after.
    pub bytes_before: u64,
    pub bytes_after: u64,
    /// Document entries dropped (deletions, replaced entries).
    pub dropped_documents: u64,
    /// Fingerprints dropped from the tables (no id has them any more).
    pub dropped_fingerprints: u64,
    /// Table entries read and merged.
    pub table_entries: u64,
    pub seconds: f64,
}

impl CompactSummary {
    fn nothing(catalog: &Catalog) -> Self {
        CompactSummary {
            runs_before: catalog.runs.len(),
            runs_after: catalog.runs.len(),
            merged_runs: 0,
            bytes_before: 0,
            bytes_after: 0,
            dropped_documents: 0,
            dropped_fingerprints: 0,
            table_entries: 0,
            seconds: 0.0,
        }
    }

    /// This step followed by `next`.
    fn then(self, next: CompactSummary) -> Self {
        CompactSummary {
            runs_before: self.runs_before,
            runs_after: next.runs_after,
            merged_runs: self.merged_runs + next.merged_runs,
            bytes_before: self.bytes_before,
            bytes_after: next.bytes_after,
            dropped_documents: self.dropped_documents + next.dropped_documents,
            dropped_fingerprints: self.dropped_fingerprints + next.dropped_fingerprints,
            table_entries: self.table_entries + next.table_entries,
            seconds: self.seconds + next.seconds,
        }
    }
}
