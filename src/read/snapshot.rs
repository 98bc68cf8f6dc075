//! A consistent read-only view of a store: the catalog read once, and the runs it names.
//!
//! Readers take no lock. A snapshot sees the runs of the catalog it read, which are immutable,
//! and opens every file of them at once, so a compaction that deletes them later cannot pull
//! them away. If a compaction commits between reading the catalog and opening the files, a
//! file is missing: the snapshot reads the new catalog and tries again.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rayon::prelude::*;

use crate::error::{guard_redb, Error, Result, Setting};
use crate::format::block::docs::{id_hash, DocState};
use crate::format::block::sketches::check_size;
use crate::format::catalog::Catalog;
use crate::run::pinned::ProbeCounts;
use crate::run::{FileCaches, RunReader};
use crate::similarity::fingerprint::hex;
use crate::similarity::jaccard::check_min_jaccard;
use crate::similarity::sketch::SketchTable;
use crate::tables::permutation::Permutations;

/// Bytes of redb cache a snapshot spreads over the files it opens.
pub(crate) const DEFAULT_CACHE_BYTES: usize = 1 << 30;

/// Cache for snapshots that stream every block once (audits, exports): a scan never rereads
/// a leaf, so a large cache only holds memory and costs time: each page it keeps is a fresh
/// allocation the kernel must fault in, where a small cache reuses the memory of the pages
/// it evicts (docs/benchmarks.md, "Read caches"). Branch pages still fit.
pub(crate) const SCAN_CACHE_BYTES: usize = 16 << 20;

/// Cache for a process that answers a batch of queries and exits (the `query` command): enough
/// for every branch page of the permuted tables (about 1/128 of their bytes; twice that here),
/// at least 16 MiB and at most [`DEFAULT_CACHE_BYTES`]. Random queries rarely reread a leaf,
/// and a leaf kept in a larger cache costs a fresh allocation per read where a small cache
/// reuses the memory of the pages it evicts, so the small cache is faster too
/// (docs/benchmarks.md, "Read caches").
pub fn batch_cache_bytes(catalog: &Catalog) -> usize {
    let table_bytes: u64 = catalog
        .runs
        .iter()
        .flat_map(|run| run.table_bytes.iter())
        .sum();
    usize::try_from(table_bytes / 64)
        .unwrap_or(usize::MAX)
        .clamp(16 << 20, DEFAULT_CACHE_BYTES)
}

/// How a snapshot spreads its redb cache over the files it opens.
#[derive(Clone, Copy, Debug)]
pub(crate) enum CacheSpread {
    /// These bytes evenly over every file.
    Even(usize),
    /// These bytes over the docs files; a table file gets the least. For a reader that pins
    /// every table in memory: it reads each table file once, to pin it, and a scan rereads no
    /// page, while every match is looked up in a docs file.
    DocsOnly(usize),
}

impl CacheSpread {
    /// The smallest cache a file gets.
    const MIN_FILE_BYTES: usize = 1 << 20;

    fn per_file(self, catalog: &Catalog) -> FileCaches {
        let runs = catalog.runs.len().max(1);
        let files: usize = catalog.runs.iter().map(|r| r.present_files.len() + 1).sum();
        match self {
            CacheSpread::Even(bytes) => {
                let each = (bytes / files.max(1)).max(Self::MIN_FILE_BYTES);
                FileCaches {
                    docs: each,
                    tables: each,
                }
            }
            CacheSpread::DocsOnly(bytes) => FileCaches {
                docs: (bytes / runs).max(Self::MIN_FILE_BYTES),
                tables: Self::MIN_FILE_BYTES,
            },
        }
    }
}

/// One stored document within the query's distance. Its JSON form (CLI, HTTP, Python) is
/// `{"id", "fingerprint" (16 hex digits), "distance"}`.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Match {
    /// Hamming distance between the query and the fingerprint.
    pub distance: u32,
    /// The stored fingerprint.
    pub fingerprint: u64,
    /// The document id.
    pub id: String,
}

impl serde::Serialize for Match {
    fn serialize<S: serde::Serializer>(
        &self,
        serializer: S,
    ) -> std::result::Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut out = serializer.serialize_struct("Match", 3)?;
        out.serialize_field("id", &self.id)?;
        out.serialize_field("fingerprint", &hex::format(self.fingerprint))?;
        out.serialize_field("distance", &self.distance)?;
        out.end()
    }
}

/// A stored document. Its JSON form is `{"id", "fingerprint" (16 hex digits), "batch"}`.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
#[non_exhaustive]
pub struct Document {
    /// Its id.
    pub id: String,
    /// Its fingerprint.
    #[serde(serialize_with = "hex::serialize")]
    pub fingerprint: u64,
    /// The insert batch that gave it this fingerprint.
    pub batch: u64,
}

impl Document {
    /// The document `id` with `fingerprint`, set by insert batch `batch` (as
    /// [`Snapshot::for_each_live_document`] gives them).
    pub fn new(id: impl Into<String>, fingerprint: u64, batch: u64) -> Self {
        Document {
            id: id.into(),
            fingerprint,
            batch,
        }
    }
}

/// A read-only view of a store at one commit.
pub struct Snapshot {
    dir: PathBuf,
    catalog: Catalog,
    perms: Permutations,
    runs: Vec<RunReader>,
    probes: Arc<ProbeCounts>,
}

impl Snapshot {
    /// Opens the store at `dir` for reading.
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let path = dir.path().join("store");
    /// use simhashdb::{Batch, Settings, Snapshot, Store};
    /// let mut store = Store::create(&path, Settings::default())?;
    /// let mut batch = Batch::new();
    /// batch.push("doc-1", 0xdead_beef_0000_0000)?;
    /// store.insert(&batch, None)?;
    /// let snapshot = Snapshot::open(&path)?;
    /// let matches = snapshot.query(0xdead_beef_0000_0007, 3)?; // 3 bits away
    /// assert_eq!(matches[0].id, "doc-1");
    /// assert_eq!(matches[0].distance, 3);
    /// # Ok::<(), simhashdb::Error>(())
    /// ```
    pub fn open(dir: &Path) -> Result<Self> {
        Self::open_with_cache(dir, DEFAULT_CACHE_BYTES)
    }

    /// Opens the store at `dir`, spreading `cache_bytes` of redb cache over its files.
    pub fn open_with_cache(dir: &Path, cache_bytes: usize) -> Result<Self> {
        Self::open_spread(dir, |_| CacheSpread::Even(cache_bytes))
    }

    /// Opens the store at `dir` for a process that answers a batch of queries once, with the
    /// cache that holds the tables' branch pages: 1/64 of the table bytes, 16 MiB to 1 GiB.
    pub fn open_for_batch(dir: &Path) -> Result<Self> {
        Self::open_spread(dir, |catalog| CacheSpread::Even(batch_cache_bytes(catalog)))
    }

    /// Opens the store at `dir` for a process that streams every block once (an audit, an
    /// export): a scan never rereads a page, so a small cache saves memory and no time.
    pub fn open_for_scan(dir: &Path) -> Result<Self> {
        Self::open_with_cache(dir, SCAN_CACHE_BYTES)
    }

    /// Opens the store at `dir`, spreading the cache `spread` sizes from its catalog.
    pub(crate) fn open_spread(
        dir: &Path,
        spread: impl Fn(&Catalog) -> CacheSpread,
    ) -> Result<Self> {
        /// Each retry means a writer committed meanwhile; that many in a row is not a race.
        const ATTEMPTS: usize = 8;
        let mut attempt = 0;
        loop {
            let catalog = Catalog::read(dir)?;
            let cache = spread(&catalog);
            match Self::from_catalog_spread(dir, catalog, cache) {
                Err(Error::Io { error, .. })
                    if error.kind() == std::io::ErrorKind::NotFound && attempt + 1 < ATTEMPTS =>
                {
                    attempt += 1;
                }
                other => return other,
            }
        }
    }

    /// A snapshot of `catalog`, spreading `cache_bytes` of redb cache evenly over its files.
    pub(crate) fn from_catalog(dir: &Path, catalog: Catalog, cache_bytes: usize) -> Result<Self> {
        Self::from_catalog_spread(dir, catalog, CacheSpread::Even(cache_bytes))
    }

    fn from_catalog_spread(dir: &Path, catalog: Catalog, spread: CacheSpread) -> Result<Self> {
        let perms = Permutations::new(&catalog.settings);
        let shards = usize::from(catalog.settings.shards);
        let caches = spread.per_file(&catalog);
        let runs = catalog
            .runs
            .iter()
            .map(|meta| {
                RunReader::new(
                    meta.clone(),
                    crate::format::layout::run_dir(dir, meta.id),
                    shards,
                    perms.tables().len(),
                    caches,
                )
            })
            .collect::<Result<_>>()?;
        Ok(Snapshot {
            dir: dir.to_path_buf(),
            catalog,
            perms,
            runs,
            probes: Arc::default(),
        })
    }

    crate::read::catalog_view::catalog_accessors!();

    /// The catalog this snapshot reads.
    pub(crate) fn catalog(&self) -> &Catalog {
        &self.catalog
    }

    /// The ids of the live runs, oldest first (a run's files are under `runs/ID` of the store;
    /// repairs and compaction previews name runs by these ids).
    pub fn run_ids(&self) -> Vec<u64> {
        self.catalog.runs.iter().map(|r| r.id).collect()
    }

    pub(crate) fn runs(&self) -> &[RunReader] {
        &self.runs
    }

    pub(crate) fn runs_mut(&mut self) -> &mut [RunReader] {
        &mut self.runs
    }

    /// Counts this snapshot's probes in `probes` (shared by a reader's snapshots).
    pub(crate) fn count_probes_in(&mut self, probes: Arc<ProbeCounts>) {
        self.probes = probes;
    }

    pub(crate) fn permutations(&self) -> &Permutations {
        &self.perms
    }

    /// Every stored document whose fingerprint is within `distance` bits of `query`, ordered by
    /// (distance, fingerprint, id). `distance` may not exceed the store's K.
    pub fn query(&self, query: u64, distance: u32) -> Result<Vec<Match>> {
        guard_redb(&self.dir, || self.query_unguarded(query, distance))
    }

    fn query_unguarded(&self, query: u64, distance: u32) -> Result<Vec<Match>> {
        let mut matches = Vec::new();
        for (fp, d) in self.close_fingerprints(query, distance)? {
            self.live_ids(fp, |id| {
                matches.push(Match {
                    distance: d,
                    fingerprint: fp,
                    id: id.to_string(),
                })
            })?;
        }
        matches.sort_unstable();
        Ok(matches)
    }

    /// [`Snapshot::query`], verified: a match is kept when its sketch and `sketch` (the query
    /// text's, [`crate::Scheme::sketch`]) estimate a word 3-shingle Jaccard similarity of at
    /// least `min_jaccard`, with that estimate; a match where either has no sketch (a query
    /// given as a fingerprint, a document inserted as one) is kept unverified, with None.
    /// The store must keep sketches (`init --sketch`): else an error that says how.
    pub fn query_verified(
        &self,
        query: u64,
        sketch: Option<&[u8]>,
        distance: u32,
        min_jaccard: f64,
    ) -> Result<Vec<(Match, Option<f64>)>> {
        check_min_jaccard(min_jaccard)?;
        self.check_sketches()?;
        guard_redb(&self.dir, || {
            let mut found: Vec<(u64, String, u64, u32)> = Vec::new();
            for (fp, d) in self.close_fingerprints(query, distance)? {
                self.live_documents_of(fp, |id, batch| found.push((fp, id.to_string(), batch, d)))?;
            }
            found.sort_unstable_by(|a, b| (a.0, &a.1).cmp(&(b.0, &b.1)));
            let sketches = match sketch {
                None => vec![None; found.len()],
                Some(_) => {
                    let keys: Vec<(u64, &str, u64)> = found
                        .iter()
                        .map(|(fp, id, batch, _)| (*fp, id.as_str(), *batch))
                        .collect();
                    self.sketches_of(&keys)?
                }
            };
            let mut matches: Vec<(Match, Option<f64>)> = found
                .into_iter()
                .zip(sketches)
                .filter_map(|((fingerprint, id, _, distance), theirs)| {
                    let jaccard = match (sketch, theirs) {
                        (Some(ours), Some(theirs)) => {
                            let j = crate::similarity::sketch::estimate(ours, &theirs);
                            if j < min_jaccard {
                                return None;
                            }
                            Some(j)
                        }
                        _ => None,
                    };
                    let found = Match {
                        distance,
                        fingerprint,
                        id,
                    };
                    Some((found, jaccard))
                })
                .collect();
            matches.sort_unstable_by(|a, b| a.0.cmp(&b.0));
            Ok(matches)
        })
    }

    /// [`Snapshot::query_verified`] of many queries `(fingerprint, sketch)`, in parallel;
    /// answers in the order of the queries.
    #[allow(clippy::type_complexity)] // the answers of `query_verified`, one per query
    pub fn query_many_verified(
        &self,
        queries: &[(u64, Option<&[u8]>)],
        distance: u32,
        min_jaccard: f64,
    ) -> Result<Vec<Vec<(Match, Option<f64>)>>> {
        self.check_distance(distance)?;
        queries
            .par_iter()
            .with_min_len(64)
            .map(|&(q, sketch)| self.query_verified(q, sketch, distance, min_jaccard))
            .collect()
    }

    /// Every fingerprint in the tables within `distance` bits of `query`, with its distance,
    /// in no set order; fingerprints whose documents were all replaced are included.
    pub(crate) fn close_fingerprints(&self, query: u64, distance: u32) -> Result<Vec<(u64, u32)>> {
        self.check_distance(distance)?;
        let mut found: Vec<(u64, u32)> = Vec::new();
        let mut check = |t: usize, key: u64, candidate: u64| {
            // A permutation moves bits, so distances are the same between keys.
            let d = (candidate ^ key).count_ones();
            if d <= distance {
                let fp = self.perms.tables()[t].unpermute(candidate);
                if self.perms.reports(t, query, fp) {
                    found.push((fp, d));
                }
            }
        };
        // Pinned probes go in three passes over all tables and runs: locate each probe's keys
        // (a directory read), touch them, then scan them. Each pass's memory reads are
        // independent of one another, so the CPU overlaps their cache misses instead of
        // waiting for each in turn (docs/benchmarks.md: 5 runs x 10 tables at 1e8).
        struct PinnedProbe<'k> {
            table: usize,
            key: u64,
            lo: u64,
            hi: u64,
            candidates: &'k [u64],
        }
        let mut pinned: Vec<PinnedProbe> =
            Vec::with_capacity(self.perms.tables().len() * self.runs.len());
        let mut disk = 0;
        for (t, table) in self.perms.tables().iter().enumerate() {
            if !self.perms.is_needed(t, distance) {
                continue;
            }
            let key = table.permute(query);
            let (lo, hi) = table.prefix_range(key);
            for run in &self.runs {
                match run.pinned_table(t) {
                    Some(keys) => pinned.push(PinnedProbe {
                        table: t,
                        key,
                        lo,
                        hi,
                        candidates: keys.candidates(lo, hi),
                    }),
                    None => {
                        disk += 1;
                        run.probe_file(self.perms.shard_of(key), t, lo, hi, |c| check(t, key, c))?;
                    }
                }
            }
        }
        let touched = pinned
            .iter()
            .fold(0, |acc, p| acc ^ crate::run::pinned::touch(p.candidates));
        std::hint::black_box(touched);
        for p in &pinned {
            crate::run::pinned::for_each_in(p.candidates, p.lo, p.hi, |c| check(p.table, p.key, c));
        }
        let memory = pinned.len() as u64;
        self.probes.add(memory, disk);
        Ok(found)
    }

    /// Runs many queries in parallel; the answers come back in the order of `queries`.
    pub fn query_many(&self, queries: &[u64], distance: u32) -> Result<Vec<Vec<Match>>> {
        self.check_distance(distance)?;
        queries
            .par_iter()
            .with_min_len(64)
            .map(|&q| self.query(q, distance))
            .collect()
    }

    /// The distance a query or an audit runs at: `asked`, from 0 to the store's K, or K when
    /// None. Every client reads the distance its users give through this (the CLI's
    /// `--distance`, the server's `distance`, Python's `distance=`), so all take the same
    /// numbers and refuse the others with the same message.
    pub fn distance(&self, asked: Option<i64>) -> Result<u32> {
        let max = u32::from(self.catalog.settings.distance);
        match asked {
            None => Ok(max),
            Some(d) if d < 0 => Err(Error::settings(
                Setting::Distance,
                format!("{d} is negative: a distance is 0 to the store's maximum distance {max}"),
            )),
            Some(d) => {
                let d = u32::try_from(d).unwrap_or(u32::MAX);
                self.check_distance(d)?;
                Ok(d)
            }
        }
    }

    pub(crate) fn check_distance(&self, distance: u32) -> Result<()> {
        let max = u32::from(self.catalog.settings.distance);
        if distance > max {
            return Err(Error::DistanceTooLarge {
                asked: distance,
                max,
            });
        }
        Ok(())
    }

    /// Calls `f` on every live id of `fingerprint`: an id listed under it in run r is live
    /// unless a newer run mentions the id (with another fingerprint, the same one again, or a
    /// deletion).
    pub fn live_ids(&self, fingerprint: u64, mut f: impl FnMut(&str)) -> Result<()> {
        self.live_documents_of(fingerprint, |id, _| f(id))
    }

    /// The store's on-disk format version: 4 with sketches, 3 without (docs/format.md).
    pub fn format_version(&self) -> u32 {
        self.catalog.version()
    }

    /// Bytes of each document's verification sketch, when the store keeps them (`init
    /// --sketch`, format 4).
    pub fn sketch_bytes(&self) -> Option<u16> {
        (self.catalog.sketch_bytes > 0).then_some(self.catalog.sketch_bytes)
    }

    /// Whether `--min-jaccard J` can be verified with this store's sketches: J within 0..=1
    /// and a store that keeps sketches (else an error that says how to get them). Clients
    /// check before they read input or write output.
    pub fn check_sketch_verification(&self, min_jaccard: f64) -> Result<()> {
        check_min_jaccard(min_jaccard)?;
        self.check_sketches()
    }

    /// Refuses verification with sketches of a store that keeps none, saying how to get them.
    pub(crate) fn check_sketches(&self) -> Result<()> {
        if self.sketch_bytes().is_some() {
            return Ok(());
        }
        Err(Error::settings(
            Setting::MinJaccard,
            format!(
                "{} keeps no sketches, so a Jaccard similarity needs the text (audit \
                 --verify-text); to verify from the store, make one with `simhashdb init \
                 STORE --sketch` and insert the documents as text",
                self.dir.display()
            ),
        ))
    }

    /// The sketches of live documents `(fingerprint, id, batch)`, ordered by `(fingerprint,
    /// id)`: None for a document inserted as a bare fingerprint (or whose sketch was lost).
    pub(crate) fn sketches_of(
        &self,
        documents: &[(u64, &str, u64)],
    ) -> Result<Vec<Option<Vec<u8>>>> {
        let (table, found) = self.sketch_table_of(documents)?;
        Ok((0..documents.len())
            .map(|i| found[i].then(|| table.sketch(i).to_vec()))
            .collect())
    }

    /// [`Snapshot::sketches_of`] as one table, row i document i's sketch where `found[i]`
    /// (all zero where not): no allocation per document, for the audit's many.
    pub(crate) fn sketch_table_of(
        &self,
        documents: &[(u64, &str, u64)],
    ) -> Result<(SketchTable, Vec<bool>)> {
        let bytes = usize::from(self.sketch_bytes().unwrap_or(0));
        let mut table = SketchTable::new(bytes, documents.len());
        let mut found = vec![false; documents.len()];
        if bytes > 0 {
            let (rows, stride) = table.rows_mut();
            for run in self.runs.iter().rev() {
                if run.meta().sketches > 0 {
                    run.docs()?
                        .sketches_sorted(documents, rows, (stride, bytes), &mut found)?;
                }
            }
        }
        Ok((table, found))
    }

    /// Calls `f(id, batch)` on every live document with `fingerprint`: a posting's batch is
    /// its document's (format 3).
    pub(crate) fn live_documents_of(
        &self,
        fingerprint: u64,
        mut f: impl FnMut(&str, u64),
    ) -> Result<()> {
        for (r, run) in self.runs.iter().enumerate() {
            // Pinned key sets answer "not here" from memory (see crate::run::pinned).
            if !run.may_list(fingerprint) {
                continue;
            }
            let mut ids = Vec::new();
            run.docs()?
                .ids_of(fingerprint, |id, batch| ids.push((id.to_string(), batch)))?;
            for (id, batch) in ids {
                if !self.named_after(r, &id)? {
                    f(&id, batch);
                }
            }
        }
        Ok(())
    }

    /// Whether every run keeps a sketch for each of its postings, so that the sketches
    /// tables list every live document with its sketch (see
    /// [`Snapshot::live_documents_with_sketches`]). A run's sketches are those of its live
    /// postings, and each posting has its document's entry, so `sketches == documents`
    /// means every entry is a posting with a sketch; a run of deletions has no postings.
    pub(crate) fn sketches_complete(&self) -> bool {
        self.sketch_bytes().is_some()
            && self.runs.iter().all(|run| {
                let meta = run.meta();
                meta.postings_bytes == 0 || meta.sketches == meta.documents
            })
    }

    /// Calls `f(fingerprint, id, batch, sketch)` on every live document with a sketch under
    /// one of the fingerprints `wanted` (ascending, distinct): run by run, each run's in
    /// `(fingerprint, id)` order. Where [`Snapshot::sketches_complete`], these are all the
    /// live documents under `wanted`, read in one pass over the sketches tables instead of a
    /// postings lookup per fingerprint and a sketch lookup per document.
    pub(crate) fn live_documents_with_sketches(
        &self,
        wanted: &[u64],
        mut f: impl FnMut(u64, &str, u64, &[u8]),
    ) -> Result<()> {
        let bytes = usize::from(self.sketch_bytes().unwrap_or(0));
        for (r, run) in self.runs.iter().enumerate() {
            if run.meta().sketches == 0 {
                continue;
            }
            run.docs()?
                .sketched_documents_of(wanted, |fp, id, batch, sketch| {
                    check_size(sketch, bytes)?;
                    if !self.named_after(r, id)? {
                        f(fp, id, batch, sketch);
                    }
                    Ok(())
                })?;
        }
        Ok(())
    }

    /// Whether a run newer than run `r` has an entry for `id` (inserted again, replaced or
    /// deleted there), which overrides run `r`'s.
    fn named_after(&self, r: usize, id: &str) -> Result<bool> {
        let newer = &self.runs[r + 1..];
        if newer.is_empty() {
            return Ok(false);
        }
        let hash = id_hash(id.as_bytes());
        for run in newer {
            if run.may_mention(hash) && run.docs()?.state_of(id)?.is_some() {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// Calls `f(id, fingerprint, batch, sketch)` on every live document, run by run, with its
    /// verification sketch when it has one (`export --sketch`). The sketches are looked up
    /// a chunk of documents at a time.
    pub fn for_each_live_document_with_sketch(
        &self,
        mut f: impl FnMut(&str, u64, u64, Option<&[u8]>),
    ) -> Result<()> {
        /// Documents whose sketches are looked up together.
        const CHUNK: usize = 1 << 14;
        let mut chunk: Vec<(String, u64, u64)> = Vec::with_capacity(CHUNK);
        let mut flush = |chunk: &mut Vec<(String, u64, u64)>| -> Result<()> {
            let mut order: Vec<usize> = (0..chunk.len()).collect();
            order.sort_unstable_by(|&a, &b| {
                (chunk[a].1, &chunk[a].0).cmp(&(chunk[b].1, &chunk[b].0))
            });
            let keys: Vec<(u64, &str, u64)> = order
                .iter()
                .map(|&i| (chunk[i].1, chunk[i].0.as_str(), chunk[i].2))
                .collect();
            let found = self.sketches_of(&keys)?;
            let mut sketches = vec![None; chunk.len()];
            for (i, sketch) in order.into_iter().zip(found) {
                sketches[i] = sketch;
            }
            for ((id, fp, batch), sketch) in chunk.drain(..).zip(sketches) {
                f(&id, fp, batch, sketch.as_deref());
            }
            Ok(())
        };
        let mut failure = None;
        self.for_each_live_document(|id, fp, batch| {
            if failure.is_some() {
                return;
            }
            chunk.push((id.to_string(), fp, batch));
            if chunk.len() == CHUNK {
                failure = flush(&mut chunk).err();
            }
        })?;
        match failure {
            Some(e) => Err(e),
            None => guard_redb(&self.dir, || flush(&mut chunk)),
        }
    }

    /// Calls `f(id, fingerprint, batch)` on every live document, run by run.
    pub fn for_each_live_document(&self, f: impl FnMut(&str, u64, u64)) -> Result<()> {
        guard_redb(&self.dir, || self.for_each_live_document_unguarded(f))
    }

    fn for_each_live_document_unguarded(&self, mut f: impl FnMut(&str, u64, u64)) -> Result<()> {
        const CHUNK: usize = 1 << 16;
        for (r, run) in self.runs.iter().enumerate() {
            let newer = &self.runs[r + 1..];
            let mut chunk: Vec<(u64, String, u64, u64)> = Vec::with_capacity(CHUNK);
            let mut flush = |chunk: &mut Vec<(u64, String, u64, u64)>| -> Result<()> {
                let keys: Vec<(u64, &str)> = chunk
                    .iter()
                    .map(|(h, id, _, _)| (*h, id.as_str()))
                    .collect();
                let mut states = vec![None; keys.len()];
                for run in newer {
                    run.docs()?.states_sorted(&keys, &mut states)?;
                }
                for ((_, id, fp, batch), state) in chunk.iter().zip(states) {
                    if state.is_none() {
                        f(id, *fp, *batch);
                    }
                }
                chunk.clear();
                Ok(())
            };
            let mut failure = None;
            run.docs()?.for_each_document(|hash, id, state| {
                if failure.is_some() {
                    return;
                }
                if let DocState::Live { fingerprint, batch } = state {
                    chunk.push((hash, id.to_string(), fingerprint, batch));
                    if chunk.len() == CHUNK {
                        failure = flush(&mut chunk).err();
                    }
                }
            })?;
            if let Some(e) = failure {
                return Err(e);
            }
            flush(&mut chunk)?;
        }
        Ok(())
    }

    /// The fingerprint `id` currently has, if it is stored.
    pub fn get(&self, id: &str) -> Result<Option<u64>> {
        Ok(self.document(id)?.map(|d| d.fingerprint))
    }

    /// The stored document `id`, if it is stored: its fingerprint and the batch that set it.
    pub fn document(&self, id: &str) -> Result<Option<Document>> {
        guard_redb(&self.dir, || self.document_unguarded(id))
    }

    /// The verification sketch of the stored document `id`: None when it is not stored, was
    /// inserted as a bare fingerprint, or the store keeps no sketches.
    pub fn sketch(&self, id: &str) -> Result<Option<Vec<u8>>> {
        let Some(document) = self.document(id)? else {
            return Ok(None);
        };
        if self.sketch_bytes().is_none() {
            return Ok(None);
        }
        let key = [(document.fingerprint, id, document.batch)];
        guard_redb(&self.dir, || Ok(self.sketches_of(&key)?.pop().flatten()))
    }

    fn document_unguarded(&self, id: &str) -> Result<Option<Document>> {
        for run in self.runs.iter().rev() {
            match run.docs()?.state_of(id)? {
                Some(DocState::Live { fingerprint, batch }) => {
                    return Ok(Some(Document {
                        id: id.to_string(),
                        fingerprint,
                        batch,
                    }))
                }
                Some(DocState::Deleted { .. }) => return Ok(None),
                None => {}
            }
        }
        Ok(None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::catalog::RunMeta;
    use crate::format::settings::Settings;

    #[test]
    fn batch_cache_follows_the_table_bytes_within_bounds() {
        let mut catalog = Catalog::new(Settings::default());
        assert_eq!(batch_cache_bytes(&catalog), 16 << 20);
        let run = |table_bytes: u64| RunMeta {
            id: 0,
            shard_files: 1,
            present_files: vec![0],
            fingerprints: 0,
            documents: 0,
            table_bytes: vec![table_bytes; 10],
            docs_bytes: 0,
            postings_bytes: 0,
            sketches: 0,
            sketches_bytes: 0,
        };
        catalog.runs = vec![run(640 << 20), run(640 << 20)];
        assert_eq!(batch_cache_bytes(&catalog), 200 << 20);
        catalog.runs = vec![run(1 << 40)];
        assert_eq!(batch_cache_bytes(&catalog), DEFAULT_CACHE_BYTES);
    }

    #[test]
    fn a_cache_goes_evenly_to_every_file_or_to_the_docs_files_alone() {
        let mut catalog = Catalog::new(Settings::default());
        let run = |present: u16| RunMeta {
            id: 0,
            shard_files: present,
            present_files: (0..present).collect(),
            fingerprints: 0,
            documents: 0,
            table_bytes: vec![0; 10],
            docs_bytes: 0,
            postings_bytes: 0,
            sketches: 0,
            sketches_bytes: 0,
        };
        // Two runs of 3 shard files and a docs file each: 8 files.
        catalog.runs = vec![run(3), run(3)];
        let even = CacheSpread::Even(800 << 20).per_file(&catalog);
        assert_eq!((even.docs, even.tables), (100 << 20, 100 << 20));
        let docs = CacheSpread::DocsOnly(800 << 20).per_file(&catalog);
        assert_eq!(
            (docs.docs, docs.tables),
            (400 << 20, CacheSpread::MIN_FILE_BYTES)
        );
        // Never less than the least a file gets.
        let tiny = CacheSpread::Even(1).per_file(&catalog);
        assert_eq!(tiny.docs, CacheSpread::MIN_FILE_BYTES);
    }
}
