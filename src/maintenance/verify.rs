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

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use crate::error::{corruption_location, guard_redb, Error, Result};
use crate::format::block::docs::DocState;
use crate::format::block::entries::Payload;
use crate::format::block::postings::Posting;
use crate::format::catalog::Catalog;
use crate::format::layout::{self, docs_file, shard_file};
use crate::read::debris::{self, Debris};
use crate::read::snapshot::Snapshot;
use crate::run::{table_name, DOCS_TABLE, POSTINGS_TABLE, SKETCHES_TABLE};
use crate::run::{EntryScan, RunReader};
use crate::sys::progress::{Phase, Progress};
use crate::tables::permutation::Permutations;
use crate::write::store::Store;

/// One problem `verify` found: where it is, as far as known, and what is wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Finding {
    /// The file (or directory) at fault.
    pub file: Option<PathBuf>,
    /// The table of that file.
    pub table: Option<String>,
    /// The block: the key it is filed under, as 16 hex digits.
    pub block: Option<String>,
    /// What is wrong.
    pub problem: String,
}

impl Finding {
    /// Where the problem is: `FILE table TABLE block BLOCK`, with the parts that are known.
    pub fn location(&self) -> String {
        corruption_location(
            self.file.as_deref(),
            self.table.as_deref(),
            self.block.as_deref(),
        )
    }
}

/// What `verify` checked and found.
#[derive(Clone, Debug, Default)]
#[non_exhaustive]
pub struct Report {
    /// Every problem found, in the order found.
    pub findings: Vec<Finding>,
    /// Runs checked.
    pub runs: usize,
    /// Blocks whose checksum and structure were checked.
    pub blocks: u64,
    /// Live documents.
    pub documents: u64,
    /// Distinct fingerprints in the tables.
    pub fingerprints: u64,
    /// Files that redb's integrity check examined (with `deep`).
    pub deep_checked: usize,
    /// What killed writers left in `runs/` (a warning, not a finding: nothing reads it, and
    /// the next writer removes it).
    pub debris: Vec<Debris>,
}

/// The report as `verify --json` prints it (and Python's `verify` answers):
/// `{"clean", "findings": [{"location", "problem"}], "runs", "blocks", "documents",
/// "fingerprints", "deep_checked_files", "debris": [{"path", "bytes"}]}`.
impl serde::Serialize for Report {
    fn serialize<S: serde::Serializer>(
        &self,
        serializer: S,
    ) -> std::result::Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut out = serializer.serialize_struct("Report", 8)?;
        out.serialize_field("clean", &self.findings.is_empty())?;
        out.serialize_field("findings", &self.findings)?;
        out.serialize_field("runs", &self.runs)?;
        out.serialize_field("blocks", &self.blocks)?;
        out.serialize_field("documents", &self.documents)?;
        out.serialize_field("fingerprints", &self.fingerprints)?;
        out.serialize_field("deep_checked_files", &self.deep_checked)?;
        out.serialize_field("debris", &self.debris)?;
        out.end()
    }
}

impl serde::Serialize for Finding {
    fn serialize<S: serde::Serializer>(
        &self,
        serializer: S,
    ) -> std::result::Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut out = serializer.serialize_struct("Finding", 2)?;
        out.serialize_field("location", &self.location())?;
        out.serialize_field("problem", &self.problem)?;
        out.end()
    }
}

impl Report {
    fn find(&mut self, file: &Path, table: Option<&str>, problem: impl Into<String>) {
        self.findings.push(Finding {
            file: Some(file.to_path_buf()),
            table: table.map(str::to_string),
            block: None,
            problem: problem.into(),
        });
    }

    /// Records a corruption as a finding; any other error ends the verification.
    fn absorb(&mut self, result: Result<()>) -> Result<()> {
        match result {
            Err(Error::Corruption {
                file,
                table,
                block,
                problem,
            }) => {
                self.findings.push(Finding {
                    file,
                    table,
                    block,
                    problem,
                });
                Ok(())
            }
            other => other,
        }
    }
}

impl Store {
    /// Checks the store at `dir`, reading it only, and tells `progress` of each run checked
    /// (and with `deep`, each file; `&()` tells nobody).
    ///
    /// With `deep`, also runs redb's own integrity check (its page checksums and B-tree
    /// structure) on every file of every run. That check needs a writable file and may repair
    /// what it finds, so it runs on a private copy of each file, one at a time, in the
    /// system's temporary directory (`TMPDIR`): it needs as much free space there as the
    /// largest file of the store, and reads every byte of the store once more.
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

/// A multiset digest: equal multisets give equal digests; different ones collide with
/// probability about 2^-64 per component.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Digest {
    count: u64,
    sum: u64,
    sum_of_squares: u64,
}

impl Digest {
    fn add(&mut self, item: u64) {
        let h = mix(item);
        self.count += 1;
        self.sum = self.sum.wrapping_add(h);
        self.sum_of_squares = self.sum_of_squares.wrapping_add(h.wrapping_mul(h | 1));
    }
}

/// The splitmix64 finalizer: a bijection that spreads every input bit over the output.
fn mix(mut x: u64) -> u64 {
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

/// A document as both of its copies hold it: `(fingerprint, id, batch)`.
fn document_hash(fingerprint: u64, id: &str, batch: u64) -> u64 {
    xxhash_rust::xxh3::xxh3_64_with_seed(id.as_bytes(), fingerprint) ^ batch
}

/// Walks every block of entry table `table` of `file`: checks each block and the
/// order across blocks, calls `f` on each entry, and compares the block bytes with `bytes`
/// from the catalog. Returns the number of entries.
fn check_entries<P: Payload>(
    mut scan: EntryScan<P>,
    file: &Path,
    table: &str,
    catalog_bytes: u64,
    report: &mut Report,
    mut f: impl FnMut(u64, &str, &P),
) -> Result<u64> {
    let mut block = Vec::new();
    let mut previous: Option<(u64, String)> = None;
    let mut entries = 0;
    loop {
        report.blocks += 1;
        match scan.next_block(&mut block) {
            Ok(false) => {
                report.blocks -= 1;
                break;
            }
            Ok(true) => {}
            Err(e) => {
                report.absorb(Err(e))?;
                continue;
            }
        }
        if let (Some(prev), Some(first)) = (&previous, block.first()) {
            if (first.0, first.1.as_str()) <= (prev.0, prev.1.as_str()) {
                report.find(
                    file,
                    Some(table),
                    format!("entry {:016x} {:?} is out of order", first.0, first.1),
                );
            }
        }
        for (key, id, payload) in &block {
            entries += 1;
            f(*key, id, payload);
        }
        if let Some((key, id, _)) = block.last() {
            previous = Some((*key, id.clone()));
        }
    }
    if scan.bytes != catalog_bytes {
        report.find(
            file,
            Some(table),
            format!(
                "holds {} block bytes; the catalog says {catalog_bytes}",
                scan.bytes
            ),
        );
    }
    Ok(entries)
}

/// The docs and postings tables of one run.
fn check_docs(run: &RunReader, run_dir: &Path, report: &mut Report) -> Result<()> {
    let path = docs_file(run_dir);
    let docs = run.docs()?;
    let mut live = Digest::default();
    let entries = check_entries(
        docs.scan_documents()?,
        &path,
        DOCS_TABLE,
        run.meta().docs_bytes,
        report,
        |_, id, state| {
            if let DocState::Live { fingerprint, batch } = state {
                live.add(document_hash(*fingerprint, id, *batch));
            }
        },
    )?;
    if entries != run.meta().documents {
        report.find(
            &path,
            Some(DOCS_TABLE),
            format!(
                "holds {entries} entries; the catalog says {}",
                run.meta().documents
            ),
        );
    }
    let mut postings = Digest::default();
    check_entries(
        docs.scan_postings()?,
        &path,
        POSTINGS_TABLE,
        run.meta().postings_bytes,
        report,
        |fp, id, posting| postings.add(document_hash(fp, id, posting.batch)),
    )?;
    if postings != live {
        report.find(
            &path,
            None,
            format!(
                "the postings ({} entries) differ from the live document entries ({})",
                postings.count, live.count
            ),
        );
    }
    Ok(())
}

/// The sketches table of one run (format 4): every block, the catalog's counts, each sketch
/// of the store's size and belonging to a posting of the run with its batch (the postings and
/// the sketches are walked together, both in `(fingerprint, id)` order).
fn check_sketches(
    run: &RunReader,
    run_dir: &Path,
    sketch_bytes: u16,
    report: &mut Report,
) -> Result<()> {
    let path = docs_file(run_dir);
    let docs = run.docs()?;
    let Some(scan) = docs.scan_sketches_in(0, u64::MAX)? else {
        if run.meta().sketches > 0 {
            let problem = format!(
                "the table is missing; the catalog says it holds {} sketches",
                run.meta().sketches
            );
            report.find(&path, Some(SKETCHES_TABLE), problem);
        }
        return Ok(());
    };
    let mut postings = docs.scan_postings()?;
    let mut block: Vec<(u64, String, Posting)> = Vec::new();
    let (mut at, mut postings_readable) = (0, true);
    let (mut orphans, mut misfits) = (0u64, 0u64);
    let mut first_orphan: Option<String> = None;
    let entries = check_entries(
        scan,
        &path,
        SKETCHES_TABLE,
        run.meta().sketches_bytes,
        report,
        |fp, id, entry| {
            if entry.sketch.len() != usize::from(sketch_bytes) {
                misfits += 1;
            }
            // The first posting at or after (fp, id).
            while postings_readable {
                if let Some((pf, pid, _)) = block.get(at) {
                    if (*pf, pid.as_str()) < (fp, id) {
                        at += 1;
                        continue;
                    }
                    break;
                }
                at = 0;
                // A damaged postings block is check_docs' finding; stop matching there.
                postings_readable = matches!(postings.next_block(&mut block), Ok(true));
            }
            let posted = block.get(at).is_some_and(|(pf, pid, posting)| {
                *pf == fp && pid == id && posting.batch == entry.batch
            });
            if postings_readable && !posted {
                orphans += 1;
                first_orphan
                    .get_or_insert_with(|| format!("{fp:016x} {id:?} batch {}", entry.batch));
            }
        },
    )?;
    if entries != run.meta().sketches {
        let problem = format!(
            "holds {entries} sketches; the catalog says {}",
            run.meta().sketches
        );
        report.find(&path, Some(SKETCHES_TABLE), problem);
    }
    if misfits > 0 {
        let problem = format!("{misfits} sketches are not of the store's {sketch_bytes} bytes");
        report.find(&path, Some(SKETCHES_TABLE), problem);
    }
    if let Some(first) = first_orphan {
        let problem =
            format!("{orphans} sketches belong to no posting of the run (the first: {first})");
        report.find(&path, Some(SKETCHES_TABLE), problem);
    }
    Ok(())
}

/// The permuted tables of one run; appends the run's table-0 fingerprints to `fingerprints`.
fn check_tables(
    run: &RunReader,
    run_dir: &Path,
    perms: &Permutations,
    shards: usize,
    report: &mut Report,
    fingerprints: &mut Vec<u64>,
) -> Result<()> {
    let meta = run.meta();
    let files = usize::from(meta.shard_files).clamp(1, shards);
    let per_file = shards / files;
    let tables = perms.tables();
    let mut digests = vec![Digest::default(); tables.len()];
    let mut bytes = vec![0u64; tables.len()];
    for f in 0..files {
        let path = shard_file(run_dir, f);
        let listed = meta.present_files.contains(&(f as u16));
        if !listed {
            if path.exists() {
                report.find(
                    &path,
                    None,
                    "the file exists but the catalog does not list it",
                );
            }
            continue;
        }
        let Some(file) = run.shard(f * per_file)? else {
            continue;
        };
        let (lo, hi) = perms.shard_keys(f * per_file, (f + 1) * per_file);
        for (t, table) in tables.iter().enumerate() {
            // Scan the whole table to catch keys outside the file's shards too.
            let mut scan = file.scan(t, 0, u64::MAX)?;
            let mut keys = Vec::new();
            let mut previous: Option<u64> = None;
            let mut misplaced = 0u64;
            loop {
                match scan.next_block(&mut keys) {
                    Ok(false) => break,
                    Ok(true) => {}
                    Err(e) => {
                        report.blocks += 1;
                        report.absorb(Err(e))?;
                        continue;
                    }
                }
                report.blocks += 1;
                if let (Some(p), Some(&first)) = (previous, keys.first()) {
                    if first <= p {
                        report.find(
                            &path,
                            Some(&table_name(t)),
                            format!("key {first:016x} is out of order after {p:016x}"),
                        );
                    }
                }
                for &key in &keys {
                    if !(lo..=hi).contains(&key) {
                        misplaced += 1;
                    }
                    let fp = table.unpermute(key);
                    digests[t].add(fp);
                    if t == 0 {
                        fingerprints.push(fp);
                    }
                }
                previous = keys.last().copied().or(previous);
            }
            bytes[t] += scan.bytes;
            if misplaced > 0 {
                report.find(
                    &path,
                    Some(&table_name(t)),
                    format!("{misplaced} keys belong to shards outside this file"),
                );
            }
        }
    }
    for (t, digest) in digests.iter().enumerate() {
        if digest.count != meta.fingerprints {
            report.find(
                run_dir,
                Some(&table_name(t)),
                format!(
                    "holds {} keys; the catalog says the run has {} fingerprints",
                    digest.count, meta.fingerprints
                ),
            );
        } else if *digest != digests[0] {
            report.find(
                run_dir,
                Some(&table_name(t)),
                "holds a different set of fingerprints than table t000",
            );
        }
        if meta.table_bytes.get(t) != Some(&bytes[t]) {
            report.find(
                run_dir,
                Some(&table_name(t)),
                match meta.table_bytes.get(t) {
                    Some(listed) => {
                        format!("holds {} block bytes; the catalog says {listed}", bytes[t])
                    }
                    None => format!(
                        "holds {} block bytes; the catalog lists no size for this table",
                        bytes[t]
                    ),
                },
            );
        }
    }
    Ok(())
}

/// No fingerprint in two runs' tables; every live fingerprint in the tables; the catalog's
/// document count.
fn check_across_runs(snapshot: &Snapshot, mut stored: Vec<u64>, report: &mut Report) -> Result<()> {
    stored.sort_unstable();
    let mut twice = BTreeSet::new();
    for w in stored.windows(2) {
        if w[0] == w[1] {
            twice.insert(w[0]);
        }
    }
    for fp in twice.iter().take(10) {
        report.find(
            &layout::runs_dir(snapshot.dir()),
            None,
            format!("fingerprint {fp:016x} is in the tables of more than one run"),
        );
    }
    stored.dedup();
    report.fingerprints = stored.len() as u64;

    let mut live: Vec<u64> = Vec::new();
    let mut documents = 0u64;
    let walked = snapshot.for_each_live_document(|_, fp, _| {
        documents += 1;
        live.push(fp);
    });
    report.absorb(walked)?;
    live.sort_unstable();
    live.dedup();
    let missing: Vec<u64> = live
        .iter()
        .copied()
        .filter(|fp| stored.binary_search(fp).is_err())
        .collect();
    for fp in missing.iter().take(10) {
        report.find(
            &layout::runs_dir(snapshot.dir()),
            None,
            format!("live fingerprint {fp:016x} is in no run's tables: queries cannot find it"),
        );
    }
    if missing.len() > 10 {
        report.find(
            &layout::runs_dir(snapshot.dir()),
            None,
            format!(
                "... and {} more live fingerprints in no tables",
                missing.len() - 10
            ),
        );
    }
    report.documents = documents;
    if documents != snapshot.catalog().documents {
        report.find(
            &layout::catalog_file(snapshot.dir()),
            None,
            format!(
                "says {} documents but {documents} are live",
                snapshot.catalog().documents
            ),
        );
    }
    Ok(())
}

/// redb's own integrity check of every file of every run, each on a private copy.
fn deep_check(
    dir: &Path,
    catalog: &Catalog,
    report: &mut Report,
    progress: &dyn Progress,
) -> Result<()> {
    let scratch = tempfile::Builder::new()
        .prefix("simhashdb-verify-")
        .tempdir()
        .map_err(|e| Error::io(std::env::temp_dir(), e))?;
    let copy = scratch.path().join("copy.redb");
    for run in &catalog.runs {
        let run_dir = layout::run_dir(dir, run.id);
        let mut files: Vec<PathBuf> = vec![docs_file(&run_dir)];
        files.extend(
            run.present_files
                .iter()
                .map(|&f| shard_file(&run_dir, usize::from(f))),
        );
        for path in files {
            std::fs::copy(&path, &copy).map_err(|e| Error::io(&copy, e))?;
            report.deep_checked += 1;
            let outcome = guard_redb(&path, || {
                redb::Database::open(&copy)
                    .and_then(|mut db| db.check_integrity())
                    .map_err(|e| Error::redb(&path, e))
            });
            match outcome {
                Ok(true) => {}
                Ok(false) => report.find(
                    &path,
                    None,
                    "redb's integrity check found damage (it repaired its private copy; the \
                     store's file is unchanged)",
                ),
                Err(e) => report.find(&path, None, format!("redb's integrity check failed: {e}")),
            }
            std::fs::remove_file(&copy).map_err(|e| Error::io(&copy, e))?;
            progress.advance(1);
        }
    }
    Ok(())
}
