//! Compaction: merging runs into one, as the store's [`CompactionPolicy`](crate::CompactionPolicy) asks
//! ([`Store::compact_if_due`]) or all of them ([`Store::compact`]). The policy decides which
//! runs ([`crate::write::policy`]); [`crate::run::merge`] merges them; the merged run replaces its
//! inputs in one catalog commit, and the inputs' files are deleted after it.

use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::error::Result;
use crate::format::catalog::{Catalog, RunMeta};
use crate::format::layout::{self, sync_dir};
use crate::read::disk_usage::DiskBytes;
use crate::read::snapshot::{Snapshot, SCAN_CACHE_BYTES};
use crate::run::merge::merge_runs;
use crate::write::policy;
use crate::write::store::Store;

impl Store {
    /// Merges every run into one: drops deleted documents, replaced postings and fingerprints
    /// no id has any more, and reclaims their space.
    pub fn compact(&mut self) -> Result<CompactSummary> {
        if is_compact(self.catalog()) {
            return Ok(CompactSummary::nothing(self.catalog()));
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
        let sizes: Vec<u64> = self.catalog().runs.iter().map(run_size).collect();
        policy::plan(&sizes, &self.catalog().compaction)
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
            if self.catalog().runs.len() <= 1 {
                return Ok(total);
            }
        }
    }

    /// Merges runs `start..` into one run that takes their place.
    fn merge_from(&mut self, start: usize) -> Result<CompactSummary> {
        let began = std::time::Instant::now();
        let before = DiskBytes::of_runs(self.dir(), self.catalog())?;
        // A merge streams every block once: a small cache (see SCAN_CACHE_BYTES).
        let snapshot =
            Snapshot::from_catalog(self.dir(), self.catalog().clone(), SCAN_CACHE_BYTES)?;
        let mut pending = self.begin_commit();
        let mut merged = None;
        let meta = pending.write_run(|dir, id| {
            let m = merge_runs(
                &snapshot.runs()[start..],
                start == 0,
                dir,
                id,
                (
                    snapshot.permutations(),
                    usize::from(snapshot.settings().shards),
                    self.catalog().run_format(),
                ),
                self.progress(),
            )?;
            let meta = m.meta.clone();
            merged = Some(m);
            Ok(meta)
        })?;
        let merged = merged.expect("set by the write");
        let next = pending.catalog_mut();
        let inputs: Vec<u64> = next.runs.drain(start..).map(|r| r.id).collect();
        next.runs.push(meta);
        let runs_before = self.catalog().runs.len();
        self.commit(pending)?;
        drop(snapshot);
        // The inputs are garbage now; if removing one fails, the next writer removes it.
        remove_runs(self.dir(), &inputs);
        let _ = sync_dir(&layout::runs_dir(self.dir()));
        let after = DiskBytes::of_runs(self.dir(), self.catalog())?;
        Ok(CompactSummary {
            runs_before,
            runs_after: self.catalog().runs.len(),
            merged_runs: inputs.len(),
            bytes_before: before.used,
            bytes_after: after.used,
            file_bytes_before: before.files,
            file_bytes_after: after.files,
            dropped_documents: merged.dropped_documents,
            dropped_fingerprints: merged.dropped_fingerprints,
            table_entries: merged.table_entries,
            seconds: began.elapsed().as_secs_f64(),
        })
    }
}

/// Removes the directories of runs `ids`, several at a time: a file system that discards freed
/// blocks (mounted with `discard`) waits for the device at each file, and the waits overlap
/// (docs/benchmarks.md, "Removing the merged runs"). Failures are left
/// for the next writer, which removes what no catalog names.
fn remove_runs(store: &Path, ids: &[u64]) {
    let next = AtomicUsize::new(0);
    let remove = || {
        while let Some(&id) = ids.get(next.fetch_add(1, Ordering::Relaxed)) {
            let _ = std::fs::remove_dir_all(layout::run_dir(store, id));
        }
    };
    std::thread::scope(|scope| {
        for _ in 1..ids.len().min(REMOVING_THREADS) {
            // A thread that cannot be made leaves its share to the others and this one: the
            // commit is done, and removing what it left behind cannot fail it.
            let _ = std::thread::Builder::new().spawn_scoped(scope, remove);
        }
        remove();
    });
}

/// How many runs [`remove_runs`] removes at once.
const REMOVING_THREADS: usize = 8;

/// The entries of a run, as the compaction policy weighs it.
fn run_size(run: &RunMeta) -> u64 {
    run.documents.max(run.fingerprints)
}

/// What a compaction would do: [`Snapshot::preview_compaction`]. Its JSON form (`compact
/// --dry-run --json`) is these fields and `"dry_run": true`.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct CompactionPreview {
    /// Runs now.
    pub runs_before: usize,
    /// Runs after the compaction.
    pub runs_after: usize,
    /// The ids of the runs it would merge (the newest ones), oldest first; empty when nothing
    /// is due.
    pub merged_runs: Vec<u64>,
    /// Table entries it would read.
    pub table_entries: u64,
    /// Disk bytes the merged run may take at most (the block bytes of the runs it merges):
    /// free space it needs until the merged runs are removed.
    pub bytes_needed: u64,
    /// Free bytes on the store's file system now (None when the system does not say).
    pub bytes_free: Option<u64>,
}

/// Whether a full compaction has nothing to do: no run, or one run whose every document
/// entry is live. A lone run holds no dead fingerprint either: an insert writes only its
/// batch's fingerprints, and a merge drops the dead ones; only deletions and replacements in a
/// newer run leave entries to drop, and they make a second run.
fn is_compact(catalog: &Catalog) -> bool {
    match catalog.runs.as_slice() {
        [] => true,
        [only] => only.documents == catalog.documents,
        _ => false,
    }
}

impl serde::Serialize for CompactionPreview {
    fn serialize<S: serde::Serializer>(
        &self,
        serializer: S,
    ) -> std::result::Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut out = serializer.serialize_struct("CompactionPreview", 7)?;
        out.serialize_field("dry_run", &true)?;
        out.serialize_field("runs_before", &self.runs_before)?;
        out.serialize_field("runs_after", &self.runs_after)?;
        out.serialize_field("merged_runs", &self.merged_runs)?;
        out.serialize_field("table_entries", &self.table_entries)?;
        out.serialize_field("bytes_needed", &self.bytes_needed)?;
        out.serialize_field("bytes_free", &self.bytes_free)?;
        out.end()
    }
}

/// What a compaction did (its JSON form is what `compact --json` prints).
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
#[non_exhaustive]
pub struct CompactSummary {
    /// Runs before the compaction.
    pub runs_before: usize,
    /// Runs after it.
    pub runs_after: usize,
    /// Runs merged (over every step of an automatic compaction).
    pub merged_runs: usize,
    /// Bytes the runs' files used on disk before (allocated, as `stats` counts them).
    pub bytes_before: u64,
    /// Bytes the runs' files use on disk after.
    pub bytes_after: u64,
    /// The lengths of the runs' files before (redb extends files ahead of use).
    pub file_bytes_before: u64,
    /// The lengths of the runs' files after.
    pub file_bytes_after: u64,
    /// Document entries dropped (deletions, replaced entries).
    pub dropped_documents: u64,
    /// Fingerprints dropped from the tables (no id has them any more).
    pub dropped_fingerprints: u64,
    /// Table entries read and merged.
    pub table_entries: u64,
    /// Seconds the compaction took.
    pub seconds: f64,
}

impl CompactSummary {
    /// The summary of a compaction of `store` that merged nothing (for a client that answers
    /// "nothing was due" in the summary's shape).
    pub fn unchanged(store: &Store) -> Self {
        Self::nothing(store.catalog())
    }

    fn nothing(catalog: &Catalog) -> Self {
        CompactSummary {
            runs_before: catalog.runs.len(),
            runs_after: catalog.runs.len(),
            merged_runs: 0,
            bytes_before: 0,
            bytes_after: 0,
            file_bytes_before: 0,
            file_bytes_after: 0,
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
            file_bytes_before: self.file_bytes_before,
            file_bytes_after: next.file_bytes_after,
            dropped_documents: self.dropped_documents + next.dropped_documents,
            dropped_fingerprints: self.dropped_fingerprints + next.dropped_fingerprints,
            table_entries: self.table_entries + next.table_entries,
            seconds: self.seconds + next.seconds,
        }
    }
}

impl Snapshot {
    /// Which runs [`Store::compact`] (`if_due` false) or [`Store::compact_if_due`] (`if_due`
    /// true) would merge in this state, without merging them: a dry run, which reads the
    /// catalog only.
    pub fn preview_compaction(&self, if_due: bool) -> CompactionPreview {
        let runs = &self.catalog().runs;
        let mut sizes: Vec<u64> = runs.iter().map(run_size).collect();
        let mut merged = 0;
        if !if_due {
            // One run is rewritten only when it holds what a merge drops.
            merged = if is_compact(self.catalog()) {
                0
            } else {
                runs.len()
            };
        } else {
            // The merges compact_if_due would make, each run of a merge counted as the sum of
            // its inputs' sizes (what the merged run holds at most).
            while let Some(start) = policy::plan(&sizes, &self.catalog().compaction) {
                let total = sizes.drain(start..).sum();
                merged = merged.max(runs.len() - start);
                sizes.push(total);
                if sizes.len() <= 1 {
                    break;
                }
            }
        }
        let merged_runs: Vec<u64> = runs[runs.len() - merged..].iter().map(|r| r.id).collect();
        CompactionPreview {
            runs_before: runs.len(),
            runs_after: if merged == 0 {
                runs.len()
            } else {
                runs.len() - merged + 1
            },
            table_entries: runs[runs.len() - merged..]
                .iter()
                .map(|r| r.fingerprints * r.table_bytes.len() as u64)
                .sum(),
            bytes_needed: runs[runs.len() - merged..].iter().map(RunMeta::bytes).sum(),
            bytes_free: crate::sys::free_space::free_bytes(self.dir()),
            merged_runs,
        }
    }
}
