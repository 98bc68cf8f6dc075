//! The writer's handle on a store: create, open, insert.
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
//! batch whole.

use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use rayon::prelude::*;

use crate::batch::Batch;
use crate::block::docs::DocState;
use crate::catalog::{sync_dir, BatchMeta, Catalog};
use crate::error::{Error, Result};
use crate::lock::WriterLock;
use crate::run::{write_run, RunContents};
use crate::settings::Settings;
use crate::snapshot::{Snapshot, DEFAULT_CACHE_BYTES};

/// What an insert did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct InsertSummary {
    /// The batch number, or None when nothing changed and no batch was recorded.
    pub batch: Option<u64>,
    /// Ids that were not stored before.
    pub inserted: u64,
    /// Ids stored before with another fingerprint.
    pub replaced: u64,
    /// Ids stored before with the same fingerprint (nothing written for them).
    pub unchanged: u64,
    /// Documents in the input that a later document with the same id overrode.
    pub superseded: u64,
    /// Fingerprints added to the permuted tables (the others were already there).
    pub new_fingerprints: u64,
}

/// A store open for writing. Only one may exist per store at a time, across processes.
pub struct Store {
    dir: PathBuf,
    catalog: Catalog,
    _lock: WriterLock,
}

impl Store {
    /// Creates a store in `dir`, which must not exist or be an empty directory.
    pub fn create(dir: &Path, settings: Settings) -> Result<Self> {
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
        let catalog = Catalog::new(settings);
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
    pub fn snapshot(&self) -> Snapshot {
        Snapshot::from_catalog(&self.dir, self.catalog.clone(), DEFAULT_CACHE_BYTES)
    }

    /// Inserts a batch, all or nothing: each id gets its fingerprint, replacing the one it had.
    pub fn insert(&mut self, batch: &Batch, label: Option<&str>) -> Result<InsertSummary> {
        let snapshot = self.snapshot();
        let order = batch.sorted_unique();
        let mut summary = InsertSummary {
            superseded: (batch.len() - order.len()) as u64,
            ..InsertSummary::default()
        };

        // What the live runs say of each id, newest run first.
        let keys: Vec<(u64, &str)> = order
            .par_iter()
            .map(|&(hash, i)| (hash, batch.id(i as usize)))
            .collect();
        let mut states: Vec<Option<DocState>> = vec![None; keys.len()];
        for run in snapshot.runs().iter().rev() {
            run.docs()?.states_sorted(&keys, &mut states)?;
        }

        let batch_id = self.catalog.next_batch;
        let mut documents: Vec<(u64, &str, DocState)> = Vec::with_capacity(order.len());
        for ((&(hash, id), &(_, i)), state) in keys.iter().zip(&order).zip(&states) {
            let fingerprint = batch.fingerprint(i as usize);
            match state {
                Some(DocState::Live {
                    fingerprint: old, ..
                }) if *old == fingerprint => {
                    summary.unchanged += 1;
                    continue;
                }
                Some(DocState::Live { .. }) => summary.replaced += 1,
                _ => summary.inserted += 1,
            }
            documents.push((
                hash,
                id,
                DocState::Live {
                    fingerprint,
                    batch: batch_id,
                },
            ));
        }
        if documents.is_empty() {
            return Ok(summary);
        }

        let postings = postings_of(&documents);
        let fingerprints = new_fingerprints(&snapshot, &postings)?;
        summary.new_fingerprints = fingerprints.len() as u64;

        let run_id = self.catalog.next_run;
        let run_dir = Catalog::run_dir(&self.dir, run_id);
        let meta = write_run(
            &run_dir,
            run_id,
            snapshot.permutations(),
            usize::from(self.catalog.settings.shards),
            &RunContents {
                documents: &documents,
                postings: &postings,
                fingerprints: &fingerprints,
            },
        )?;

        let mut next = self.catalog.clone();
        next.next_run += 1;
        next.next_batch += 1;
        next.documents += summary.inserted;
        next.runs.push(meta);
        next.batches.push(BatchMeta {
            id: batch_id,
            committed_unix_s: SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |d| d.as_secs()),
            label: label.map(str::to_string),
            inserted: summary.inserted,
            replaced: summary.replaced,
            unchanged: summary.unchanged,
        });
        next.commit(&self.dir)?;
        self.catalog = next;
        summary.batch = Some(batch_id);
        Ok(summary)
    }
}

/// `(fingerprint, id)` of each document, ordered by fingerprint then id.
fn postings_of<'a>(documents: &[(u64, &'a str, DocState)]) -> Vec<(u64, &'a str)> {
    let mut postings: Vec<(u64, &str)> = documents
        .iter()
        .map(|&(_, id, state)| match state {
            DocState::Live { fingerprint, .. } => (fingerprint, id),
            DocState::Deleted { .. } => unreachable!("a batch inserts only live documents"),
        })
        .collect();
    postings.par_sort_unstable();
    postings
}

/// The distinct fingerprints of `postings` that no live run's tables hold yet, ascending.
fn new_fingerprints(snapshot: &Snapshot, postings: &[(u64, &str)]) -> Result<Vec<u64>> {
    let mut fingerprints: Vec<u64> = postings.iter().map(|&(fp, _)| fp).collect();
    fingerprints.dedup();
    let mut found = vec![false; fingerprints.len()];
    let perms = snapshot.permutations();
    for run in snapshot.runs() {
        let mut start = 0;
        while start < fingerprints.len() {
            // Table 0 is the identity, so a fingerprint's shard is its own leading bits.
            let shard = perms.shard_of(fingerprints[start]);
            let end =
                start + fingerprints[start..].partition_point(|&fp| perms.shard_of(fp) == shard);
            if let Some(file) = run.shard(shard)? {
                file.contains_sorted(&fingerprints[start..end], &mut found[start..end])?;
            }
            start = end;
        }
    }
    Ok(fingerprints
        .into_iter()
        .zip(found)
        .filter_map(|(fp, found)| (!found).then_some(fp))
        .collect())
}
