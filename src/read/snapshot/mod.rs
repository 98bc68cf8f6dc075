//! A consistent read-only view of a store: the catalog read once, and the runs it names.
//!
//! Readers take no lock. A snapshot sees the runs of the catalog it read, which are immutable,
//! and opens every file of them at once, so a compaction that deletes them later cannot pull
//! them away. If a compaction commits between reading the catalog and opening the files, a
//! file is missing: the snapshot reads the new catalog and tries again.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::error::{guard_redb, Error, Result, Setting};
use crate::format::block::docs::{id_hash, DocState};
use crate::format::block::sketches::check_size;
use crate::format::catalog::{Catalog, RunMeta};
use crate::run::pinned::ProbeCounts;
use crate::run::{FileCaches, RunReader};
use crate::similarity::fingerprint::hex;
use crate::similarity::jaccard::check_min_jaccard;
use crate::similarity::sketch::SketchTable;
use crate::tables::permutation::Permutations;

mod documents;
mod open_options;
mod query;
mod sketches;

pub use open_options::OpenOptions;

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

/// How a snapshot spreads its cache over the files it opens (redb's pages and, in a
/// long-lived reader, blocks kept decoded).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum CacheSpread {
    /// These bytes evenly over every file. For a process that reads each leaf once (a batch
    /// of queries, a scan): what it rereads is the tables' branch pages, which every table
    /// file needs alike; the docs file's part would hold pages never read again.
    Even(usize),
    /// These bytes over every file in proportion to its block bytes. For a reader that
    /// queries again and again: every file's branch pages (a fixed share of its bytes) fit
    /// whenever the whole cache holds them all, and the pages a repeated query rereads stay.
    /// An even spread gave the docs file of a 1e8 store (35% of its bytes in format 8: docs,
    /// named postings and id filter) a 35th of the cache (docs/benchmarks.md, "Read caches").
    ByBytes(usize),
    /// These bytes over the docs files, by their bytes; a table file gets the least. For a
    /// reader that pins every table in memory: it reads each table file once, to pin it, and
    /// a scan rereads no page, while every match is looked up in a docs file.
    DocsOnly(usize),
}

impl CacheSpread {
    /// The smallest cache a file gets.
    const MIN_FILE_BYTES: usize = 1 << 20;

    /// The caches of the files of `run`, one of `catalog`'s runs.
    fn for_run(self, catalog: &Catalog, run: &RunMeta) -> FileCaches {
        // A file's weight is its block bytes, at least 1: a catalog that counted no bytes
        // spreads the cache evenly.
        let table_files = |r: &RunMeta| r.present_files.len() as u64;
        let docs_weight = Self::docs_file_bytes;
        let tables_weight = |r: &RunMeta| {
            let bytes = r.table_bytes.iter().fold(0u64, |a, &b| a.saturating_add(b));
            (bytes / table_files(r).max(1)).max(1)
        };
        let share = |bytes: usize, weight: u64, total: u64| {
            let part = bytes as u128 * u128::from(weight) / u128::from(total.max(1));
            usize::try_from(part)
                .unwrap_or(usize::MAX)
                .max(Self::MIN_FILE_BYTES)
        };
        match self {
            CacheSpread::Even(bytes) => {
                let files: u64 = catalog.runs.iter().map(|r| table_files(r) + 1).sum();
                let each = share(bytes, 1, files);
                FileCaches {
                    docs: each,
                    tables: each,
                    decoded_docs: 0,
                    decoded_postings: 0,
                }
            }
            CacheSpread::ByBytes(bytes) => {
                let total: u64 = catalog
                    .runs
                    .iter()
                    .map(|r| docs_weight(r).saturating_add(tables_weight(r) * table_files(r)))
                    .fold(0, u64::saturating_add);
                Self::decoding(
                    share(bytes, docs_weight(run), total),
                    share(bytes, tables_weight(run), total),
                    run,
                    catalog.run_format().named_postings,
                )
            }
            CacheSpread::DocsOnly(bytes) => {
                let total: u64 = catalog
                    .runs
                    .iter()
                    .map(docs_weight)
                    .fold(0, u64::saturating_add);
                Self::decoding(
                    share(bytes, docs_weight(run), total),
                    Self::MIN_FILE_BYTES,
                    run,
                    catalog.run_format().named_postings,
                )
            }
        }
    }

    /// The block bytes of `run`'s docs file (docs, postings, sketches, id filter), at least 1.
    fn docs_file_bytes(run: &RunMeta) -> u64 {
        [
            run.docs_bytes,
            run.postings_bytes,
            run.sketches_bytes,
            run.ids_bytes,
        ]
        .into_iter()
        .fold(0u64, u64::saturating_add)
        .max(1)
    }

    /// The caches of a long-lived reader's files, its docs file's share `docs` split by the
    /// file's bytes: its docs blocks' part, and its postings' where they are named postings
    /// (`named`), are kept decoded, for lookups that come again; redb keeps the rest (the id
    /// filter, sketches, postings that hold ids, and every branch page), at least
    /// [`Self::MIN_FILE_BYTES`].
    fn decoding(docs: usize, tables: usize, run: &RunMeta, named: bool) -> FileCaches {
        let weight = Self::docs_file_bytes(run);
        // redb keeps a quarter at least: a lookup that misses the decoded blocks descends
        // the table's branch pages, which should stay in memory.
        let part = |bytes: u64| {
            let part = docs as u128 * 3 / 4 * u128::from(bytes) / u128::from(weight);
            usize::try_from(part).unwrap_or(usize::MAX)
        };
        let (decoded_docs, decoded_postings) = match named {
            true => (part(run.docs_bytes), part(run.postings_bytes)),
            false => (part(run.docs_bytes), 0),
        };
        FileCaches {
            docs: docs
                .saturating_sub(decoded_docs + decoded_postings)
                .max(Self::MIN_FILE_BYTES),
            tables,
            decoded_docs,
            decoded_postings,
        }
    }
}

/// One stored document within the query's distance, verified with sketches when the query
/// asked for it ([`Snapshot::query_many`] with a `min_jaccard`). Its JSON form (CLI, HTTP,
/// Python) is `{"id", "fingerprint" (16 hex digits), "distance"}`, and when verified
/// `"jaccard"` (the estimate) or `"unverified": true` (a side has no sketch). Matches order by
/// (distance, fingerprint, id).
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct Match {
    /// Hamming distance between the query and the fingerprint.
    pub distance: u32,
    /// The stored fingerprint.
    pub fingerprint: u64,
    /// The document id.
    pub id: String,
    /// The word 3-shingle Jaccard similarity of the two texts as their sketches estimate it;
    /// None when not verified.
    pub jaccard: Option<f64>,
    /// Whether verification was asked for and the match is kept without an estimate (the
    /// query or the document has no sketch: it was given as a fingerprint).
    pub unverified: bool,
}

impl Match {
    /// An unverified match.
    pub(crate) fn new(distance: u32, fingerprint: u64, id: String) -> Self {
        Match {
            distance,
            fingerprint,
            id,
            jaccard: None,
            unverified: false,
        }
    }

    /// The match verified: with the estimate, or marked unverified when there is none.
    pub(crate) fn verified(mut self, jaccard: Option<f64>) -> Self {
        self.unverified = jaccard.is_none();
        self.jaccard = jaccard;
        self
    }

    fn order_key(&self) -> (u32, u64, &str) {
        (self.distance, self.fingerprint, &self.id)
    }
}

// Ordered by the answer's order, then by the estimate (total order: estimates are never
// NaN, and equal matches compare equal).
impl Ord for Match {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.order_key()
            .cmp(&other.order_key())
            .then_with(|| match (self.jaccard, other.jaccard) {
                (Some(a), Some(b)) => a.total_cmp(&b),
                (a, b) => a.is_some().cmp(&b.is_some()),
            })
            .then(self.unverified.cmp(&other.unverified))
    }
}

impl PartialOrd for Match {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for Match {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other).is_eq()
    }
}

impl Eq for Match {}

impl serde::Serialize for Match {
    fn serialize<S: serde::Serializer>(
        &self,
        serializer: S,
    ) -> std::result::Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut out = serializer.serialize_map(None)?;
        out.serialize_entry("id", &self.id)?;
        out.serialize_entry("fingerprint", &hex::format(self.fingerprint))?;
        out.serialize_entry("distance", &self.distance)?;
        if let Some(jaccard) = self.jaccard {
            out.serialize_entry("jaccard", &jaccard)?;
        }
        if self.unverified {
            out.serialize_entry("unverified", &true)?;
        }
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

/// A read-only view of a store at one commit: queries, lookups, the audit and dry runs read
/// one state, whatever writers commit meanwhile.
///
/// ```
/// # let dir = tempfile::tempdir().unwrap();
/// # let path = dir.path().join("store");
/// use simhashdb::{Batch, Settings, Snapshot, Store, Verification};
///
/// let mut store = Store::create(&path, Settings::default())?;
/// let mut batch = Batch::new();
/// batch.push("a", 0x0123_4567_89ab_cdef)?;
/// batch.push("b", 0x0123_4567_89ab_cdee)?; // 1 bit from "a"
/// store.insert(&batch, None)?;
///
/// let snapshot = Snapshot::open(&path)?;
/// assert_eq!(snapshot.get("b")?, Some(0x0123_4567_89ab_cdee));
/// let near = snapshot.near_duplicates(3, &Verification::None, &())?;
/// let mut pairs = Vec::new();
/// near.for_each_pair(|a, b, distance, _| {
///     pairs.push((a.to_string(), b.to_string(), distance));
///     Ok::<(), simhashdb::Error>(())
/// })?;
/// assert_eq!(pairs, [("a".to_string(), "b".to_string(), 1)]);
/// # Ok::<(), simhashdb::Error>(())
/// ```
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
        Self::open_with(dir, OpenOptions::new())
    }

    /// Opens the store at `dir` for reading, with the cache `options` choose.
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let path = dir.path().join("store");
    /// # simhashdb::Store::create(&path, simhashdb::Settings::default())?;
    /// use simhashdb::{OpenOptions, Snapshot};
    /// // An audit or an export streams every block once: a small cache does as well.
    /// let snapshot = Snapshot::open_with(&path, OpenOptions::new().for_scan())?;
    /// # Ok::<(), simhashdb::Error>(())
    /// ```
    pub fn open_with(dir: &Path, options: OpenOptions) -> Result<Self> {
        Self::open_spread(dir, |catalog| options.spread_for(catalog))
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

    pub(crate) fn from_catalog_spread(
        dir: &Path,
        catalog: Catalog,
        spread: CacheSpread,
    ) -> Result<Self> {
        let perms = Permutations::new(&catalog.settings);
        let shards = usize::from(catalog.settings.shards);
        let runs = catalog
            .runs
            .iter()
            .map(|meta| {
                RunReader::new(
                    meta.clone(),
                    crate::format::layout::run_dir(dir, meta.id),
                    (shards, perms.tables().len()),
                    catalog.run_format(),
                    spread.for_run(&catalog, meta),
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

    /// The store's on-disk format version: 5, or 3 or 4 for a store an older build made and
    /// `migrate` has not upgraded (docs/format.md).
    pub fn format_version(&self) -> u32 {
        self.catalog.format
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
            id_bits: 9,
            ids_bytes: 0,
        };
        catalog.runs = vec![run(640 << 20), run(640 << 20)];
        assert_eq!(batch_cache_bytes(&catalog), 200 << 20);
        catalog.runs = vec![run(1 << 40)];
        assert_eq!(batch_cache_bytes(&catalog), DEFAULT_CACHE_BYTES);
    }

    #[test]
    fn a_cache_goes_evenly_or_by_bytes_to_every_file_or_to_the_docs_files_alone() {
        let mut catalog = Catalog::new(Settings::default());
        let run = |present: u16, table: u64, docs: u64| RunMeta {
            id: 0,
            shard_files: present,
            present_files: (0..present).collect(),
            fingerprints: 0,
            documents: 0,
            table_bytes: vec![table; 10],
            docs_bytes: docs / 2,
            postings_bytes: docs / 4,
            sketches: 0,
            sketches_bytes: 0,
            id_bits: 9,
            ids_bytes: docs / 4,
        };
        // Two runs of 2 shard files and a docs file each, 6 files; the first run holds 3/4
        // of the 800 bytes, its docs file 3/8.
        let (big, small) = (run(2, 30, 300), run(2, 10, 100));
        catalog.runs = vec![big.clone(), small.clone()];
        let even = CacheSpread::Even(600 << 20);
        for r in [&big, &small] {
            let caches = even.for_run(&catalog, r);
            assert_eq!((caches.docs, caches.tables), (100 << 20, 100 << 20));
        }
        let by_bytes = CacheSpread::ByBytes(800 << 20);
        // A docs file's share, in redb's cache and kept decoded.
        let docs = |c: FileCaches| c.docs + c.decoded_docs + c.decoded_postings;
        let (b, s) = (
            by_bytes.for_run(&catalog, &big),
            by_bytes.for_run(&catalog, &small),
        );
        assert_eq!((docs(b), b.tables), (300 << 20, 150 << 20));
        assert_eq!((docs(s), s.tables), (100 << 20, 50 << 20));
        let docs_only = CacheSpread::DocsOnly(800 << 20);
        let (b, s) = (
            docs_only.for_run(&catalog, &big),
            docs_only.for_run(&catalog, &small),
        );
        assert_eq!((docs(b), docs(s)), (600 << 20, 200 << 20));
        assert_eq!(b.tables, CacheSpread::MIN_FILE_BYTES);
        // Never less than the least a file gets.
        let tiny = CacheSpread::ByBytes(1).for_run(&catalog, &small);
        assert_eq!(
            (tiny.docs, tiny.tables),
            (CacheSpread::MIN_FILE_BYTES, CacheSpread::MIN_FILE_BYTES)
        );
        let tiny = CacheSpread::Even(1).for_run(&catalog, &small);
        assert_eq!(tiny.docs, CacheSpread::MIN_FILE_BYTES);
        // A run without shard files (a delete's) has only its docs file: 4 files.
        catalog.runs = vec![big.clone(), run(0, 0, 100)];
        let caches = even.for_run(&catalog, &big);
        assert_eq!((caches.docs, caches.tables), (150 << 20, 150 << 20));
        // By bytes, its docs file weighs its bytes: 300 + 2 x 150 + 100.
        let caches = CacheSpread::ByBytes(700 << 20).for_run(&catalog, &big);
        assert_eq!((docs(caches), caches.tables), (300 << 20, 150 << 20));
        // A catalog that counted no bytes: by bytes is even.
        let none = run(2, 0, 0);
        catalog.runs = vec![none.clone(), none.clone()];
        let caches = CacheSpread::ByBytes(600 << 20).for_run(&catalog, &none);
        assert_eq!((caches.docs, caches.tables), (100 << 20, 100 << 20));
    }

    #[test]
    fn a_long_lived_reader_keeps_three_quarters_of_its_docs_and_postings_share_decoded() {
        let mut catalog = Catalog::new(Settings::default());
        let run = RunMeta {
            id: 0,
            shard_files: 1,
            present_files: vec![0],
            fingerprints: 0,
            documents: 0,
            table_bytes: vec![0; 10],
            docs_bytes: 200,
            postings_bytes: 100,
            sketches: 0,
            sketches_bytes: 0,
            id_bits: 9,
            ids_bytes: 100,
        };
        catalog.runs = vec![run.clone()];
        // The docs file gets all 400 MiB; its docs blocks are half its bytes, its named
        // postings a quarter, and three quarters of each part is kept decoded.
        let caches = CacheSpread::DocsOnly(400 << 20).for_run(&catalog, &run);
        assert_eq!(
            (caches.decoded_docs, caches.decoded_postings),
            (150 << 20, 75 << 20)
        );
        assert_eq!(caches.docs, 175 << 20);
        // One-pass readers keep nothing decoded.
        let caches = CacheSpread::Even(400 << 20).for_run(&catalog, &run);
        assert_eq!((caches.decoded_docs, caches.decoded_postings), (0, 0));
        // Postings that hold their ids (a store of format 8 with sketches) are left to redb.
        catalog.sketch_bytes = 128;
        assert!(catalog.run_format().named_postings);
        catalog.format = 8;
        assert!(!catalog.run_format().named_postings);
        let caches = CacheSpread::DocsOnly(400 << 20).for_run(&catalog, &run);
        assert_eq!(
            (caches.decoded_docs, caches.decoded_postings),
            (150 << 20, 0)
        );
        assert_eq!(caches.docs, 250 << 20);
    }
}
