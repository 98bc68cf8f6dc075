//! `verify`: reads every byte of a store that the engine wrote and checks every invariant,
//! reporting each finding with where it is. It never writes to the store: its files are
//! byte-identical before and after, with `deep` too (see [`verify_store`]).
//!
//! Checks, per run: every block's CRC-32 and structure; blocks and entries in strictly
//! increasing order and filed under their last key; every key in the shard file that should
//! hold it; every permuted table holding the same set of fingerprints as table 0 (compared by
//! count and two 64-bit multiset digests); the postings equal to the run's live document
//! entries (same digests); the counts and byte sizes the catalog records. Across runs: no
//! fingerprint in the tables of two runs, every live fingerprint in the tables, and the
//! catalog's document count equal to the live documents.
//!
//! Memory: 8 bytes per live document and per stored fingerprint (the cross-run check sorts
//! them); everything else streams a block at a time.
//!
//! Here, the walk over the store; a file per kind of check: docs.rs (a run's docs, postings
//! and sketches tables), tables.rs (a run's permuted tables), across_runs.rs (what holds
//! between runs), deep.rs (redb's own check, with `deep`); digest.rs (the multiset digests
//! the checks compare), report.rs (what `verify` answers: [`Report`] and its [`Finding`]s).

use std::path::Path;

use crate::error::{guard_redb, Error, Result};
use crate::format::layout::{self, docs_file};
use crate::read::debris;
use crate::read::snapshot::Snapshot;
use crate::sys::progress::{Phase, Progress};
use crate::write::store::Store;

mod across_runs;
mod deep;
mod digest;
mod docs;
mod report;
mod tables;

use across_runs::check_across_runs;
use deep::deep_check;
use docs::{check_docs, check_sketches};
use tables::check_tables;

pub use report::{Finding, Report};

impl Store {
    /// Checks the store at `dir`, reading it only, and tells `progress` of each run checked
    /// (and with `deep`, each file; `&()` tells nobody).
    ///
    /// With `deep`, also runs redb's own integrity check (its page checksums and B-tree
    /// structure) on every file of every run. That check needs a writable file and may repair
    /// what it finds, so it runs on a private copy of each file, one at a time, in the
    /// system's temporary directory (`TMPDIR`): it needs as much free space there as the
    /// largest file of the store, and reads every byte of the store once more.
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let path = dir.path().join("store");
    /// use simhashdb::{Batch, Settings, Store};
    ///
    /// let mut store = Store::create(&path, Settings::default())?;
    /// let mut batch = Batch::new();
    /// batch.push("a", 0x0123_4567_89ab_cdef)?;
    /// store.insert(&batch, None)?;
    /// let report = Store::verify(&path, false, &())?;
    /// assert!(report.findings.is_empty()); // each one names its file, table and block
    /// assert_eq!(report.documents, 1);
    /// # Ok::<(), simhashdb::Error>(())
    /// ```
    pub fn verify(dir: &Path, deep: bool, progress: &dyn Progress) -> Result<Report> {
        verify_store(dir, deep, progress)
    }
}

fn verify_store(dir: &Path, deep: bool, progress: &dyn Progress) -> Result<Report> {
    let mut report = Report::default();
    let snapshot = match Snapshot::open(dir) {
        Ok(s) => s,
        Err(e @ Error::Corruption { .. }) => {
            report.absorb(Err(e.in_file(&layout::catalog_file(dir))))?;
            return Ok(report);
        }
        Err(Error::Io { path, error }) if error.kind() == std::io::ErrorKind::NotFound => {
            report.find(&path, None, "a file the catalog names is missing");
            return Ok(report);
        }
        Err(e) => return Err(e),
    };
    report.runs = snapshot.runs().len();
    report.debris = debris::seen_by_reader(dir)?;
    let perms = snapshot.permutations().clone();
    let shards = usize::from(snapshot.settings().shards);
    let mut table_fingerprints: Vec<u64> = Vec::new();
    // The last step is the check across runs.
    let verifying = Phase::start(progress, "verifying runs", snapshot.runs().len() as u64 + 1);
    for run in snapshot.runs() {
        let run_dir = layout::run_dir(dir, run.meta().id);
        let checked = guard_redb(&docs_file(&run_dir), || {
            check_docs(run, &run_dir, &mut report)
        });
        report.absorb(checked)?;
        let sketch_bytes = snapshot.sketch_bytes().unwrap_or(0);
        let checked = guard_redb(&docs_file(&run_dir), || {
            check_sketches(run, &run_dir, sketch_bytes, &mut report)
        });
        report.absorb(checked)?;
        let checked = guard_redb(&run_dir, || {
            check_tables(
                run,
                &run_dir,
                &perms,
                shards,
                &mut report,
                &mut table_fingerprints,
            )
        });
        report.absorb(checked)?;
        progress.advance(1);
    }
    let checked = guard_redb(&layout::runs_dir(dir), || {
        check_across_runs(&snapshot, table_fingerprints, &mut report)
    });
    progress.advance(1);
    drop(verifying);
    report.absorb(checked)?;
    if deep {
        let files = snapshot.catalog().runs.iter();
        let files: usize = files.map(|r| r.present_files.len() + 1).sum();
        let _phase = Phase::start(progress, "checking files with redb", files as u64);
        deep_check(dir, snapshot.catalog(), &mut report, progress)?;
    }
    Ok(report)
}
