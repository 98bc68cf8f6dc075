//! Reading a committed run: its files opened lazily, probes of the permuted tables, and
//! lookups of documents and postings.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use rayon::prelude::*;
use redb::{ReadOnlyDatabase, ReadOnlyTable, ReadableDatabase, TableDefinition, TableError};

use super::{
    table_name, EntryScan, KeyScan, DOCS, DOCS_TABLE, POSTINGS, POSTINGS_TABLE, SKETCHES,
    SKETCHES_TABLE,
};
use crate::error::{Error, Result};
use crate::format::block::docs::{id_hash, DocState};
use crate::format::block::entries::{self, block_key};
use crate::format::block::keys::KeyBlock;
use crate::format::block::postings::Posting;
use crate::format::block::sketches::{self, SketchEntry};
use crate::format::catalog::RunMeta;
use crate::format::layout;
use crate::run::pinned::PinnedRun;

/// Read access to one committed run.
///
/// Every file of the run is opened (as a plain file) when the reader is made, so a compaction
/// that deletes the run's directory afterwards cannot pull it from under the reader; redb opens
/// each one on first use.
pub struct RunReader {
    meta: RunMeta,
    caches: FileCaches,
    tables: usize,
    docs: LazyFile<DocsFile>,
    files: Vec<Option<LazyFile<ShardFile>>>,
    shards_per_file: usize,
    /// The run's tables held in memory, where a long-lived reader pinned them.
    pinned: Option<Arc<PinnedRun>>,
}

/// Bytes of redb cache each file of a run gets when it opens.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FileCaches {
    /// For the docs file.
    pub docs: usize,
    /// For each shard file (the permuted tables).
    pub tables: usize,
}

/// A pinned file, turned into an open redb file `T` on first use.
struct LazyFile<T> {
    path: PathBuf,
    pinned: Mutex<Option<std::fs::File>>,
    open: OnceLock<T>,
}

impl<T> LazyFile<T> {
    fn pin(path: PathBuf) -> Result<Self> {
        let file = std::fs::File::open(&path).map_err(|e| Error::io(&path, e))?;
        Ok(LazyFile {
            path,
            pinned: Mutex::new(Some(file)),
            open: OnceLock::new(),
        })
    }

    fn get(
        &self,
        cache_bytes: usize,
        open: impl FnOnce(&Path, ReadOnlyDatabase) -> Result<T>,
    ) -> Result<&T> {
        if let Some(t) = self.open.get() {
            return Ok(t);
        }
        // An opener that panicked (redb, on a damaged file) took the file: later ones fail.
        let mut pinned = self.pinned.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(t) = self.open.get() {
            return Ok(t);
        }
        let file = pinned.take().ok_or_else(|| Error::AfterEarlierFailure {
            path: self.path.clone(),
        })?;
        let backend =
            redb::backends::FileBackend::new(file).map_err(|e| Error::redb(&self.path, e))?;
        let db = redb::Builder::new()
            .set_cache_size(cache_bytes)
            .open_read_only_with_backend(backend)
            .map_err(|e| Error::redb(&self.path, e))?;
        let _ = self.open.set(open(&self.path, db)?);
        Ok(self.open.get().expect("set above"))
    }
}

impl RunReader {
    /// A reader of run `meta` stored in `dir`, giving each file it opens the cache `caches`
    /// says. Fails with an I/O error (NotFound) when a file of the run is gone.
    pub fn new(
        meta: RunMeta,
        dir: PathBuf,
        shards: usize,
        tables: usize,
        caches: FileCaches,
    ) -> Result<Self> {
        let count = usize::from(meta.shard_files).clamp(1, shards);
        let mut files: Vec<Option<LazyFile<ShardFile>>> = (0..count).map(|_| None).collect();
        for &f in &meta.present_files {
            if let Some(slot) = files.get_mut(usize::from(f)) {
                *slot = Some(LazyFile::pin(layout::shard_file(&dir, usize::from(f)))?);
            }
        }
        Ok(RunReader {
            docs: LazyFile::pin(layout::docs_file(&dir))?,
            meta,
            caches,
            tables,
            files,
            shards_per_file: shards / count,
            pinned: None,
        })
    }

    /// Probes the tables `pinned` holds in memory instead of their files.
    pub fn set_pinned(&mut self, pinned: Arc<PinnedRun>) {
        self.pinned = Some(pinned);
    }

    /// The run's tables held in memory, if they are.
    pub fn pinned(&self) -> Option<&Arc<PinnedRun>> {
        self.pinned.as_ref()
    }

    /// Whether this run may list postings under `fingerprint`: false only when its pinned key
    /// sets say it lists none.
    pub fn may_list(&self, fingerprint: u64) -> bool {
        self.keys().is_none_or(|k| k.lists(fingerprint))
    }

    /// Whether this run may mention the id whose hash is `id_hash` (see
    /// [`crate::format::block::docs::id_hash`]): false only when its pinned key sets say it does not.
    pub fn may_mention(&self, id_hash: u64) -> bool {
        self.keys().is_none_or(|k| k.mentions(id_hash))
    }

    fn keys(&self) -> Option<&crate::run::pinned::RunKeys> {
        self.pinned.as_ref().and_then(|p| p.keys())
    }

    /// The number of shards.
    pub fn shards(&self) -> usize {
        self.files.len() * self.shards_per_file
    }

    /// Table `t` held in memory, if it is pinned.
    pub(crate) fn pinned_table(&self, t: usize) -> Option<&crate::run::pinned::SortedKeys> {
        self.pinned.as_ref().and_then(|p| p.table(t))
    }

    /// Calls `f` on every key of table `t` in `lo..=hi` (keys of shard `shard`), in order,
    /// read from the table's file (through redb's cache).
    pub fn probe_file(
        &self,
        shard: usize,
        t: usize,
        lo: u64,
        hi: u64,
        f: impl FnMut(u64),
    ) -> Result<()> {
        match self.shard(shard)? {
            Some(file) => file.probe(t, lo, hi, f),
            None => Ok(()),
        }
    }

    /// The catalog's description of this run.
    pub fn meta(&self) -> &RunMeta {
        &self.meta
    }

    /// The shard file that holds `shard`, or None when the run has no keys there.
    pub fn shard(&self, shard: usize) -> Result<Option<&ShardFile>> {
        let Some(lazy) = &self.files[shard / self.shards_per_file] else {
            return Ok(None);
        };
        let tables = self.tables;
        lazy.get(self.caches.tables, |path, db| {
            let txn = db.begin_read().map_err(|e| Error::redb(path, e))?;
            let tables = (0..tables)
                .map(
                    |t| match txn.open_table(TableDefinition::<u64, &[u8]>::new(&table_name(t))) {
                        Ok(table) => Ok(Some(table)),
                        Err(TableError::TableDoesNotExist(_)) => Ok(None),
                        Err(e) => Err(Error::redb(path, e)),
                    },
                )
                .collect::<Result<_>>()?;
            Ok(ShardFile {
                path: path.to_path_buf(),
                tables,
                _db: db,
            })
        })
        .map(Some)
    }

    /// The shard files that hold shards `first..end`, in key order, each once.
    pub fn shard_files(&self, first: usize, end: usize) -> Result<Vec<&ShardFile>> {
        let mut out: Vec<&ShardFile> = Vec::new();
        for f in first / self.shards_per_file..end.div_ceil(self.shards_per_file) {
            if let Some(file) = self.shard(f * self.shards_per_file)? {
                out.push(file);
            }
        }
        Ok(out)
    }

    /// The run's docs file.
    pub fn docs(&self) -> Result<&DocsFile> {
        self.docs.get(self.caches.docs, |path, db| {
            let txn = db.begin_read().map_err(|e| Error::redb(path, e))?;
            let open = |def| txn.open_table(def).map_err(|e| Error::redb(path, e));
            let sketches = match txn.open_table(SKETCHES) {
                Ok(table) => Some(table),
                Err(TableError::TableDoesNotExist(_)) => None,
                Err(e) => return Err(Error::redb(path, e)),
            };
            Ok(DocsFile {
                docs: open(DOCS)?,
                postings: open(POSTINGS)?,
                sketches,
                path: path.to_path_buf(),
                _db: db,
            })
        })
    }
}

/// One open shard file of a run.
pub struct ShardFile {
    path: PathBuf,
    tables: Vec<Option<ReadOnlyTable<u64, &'static [u8]>>>,
    _db: ReadOnlyDatabase,
}

impl ShardFile {
    /// The keys of table `t` in `lo..=hi`, a block at a time.
    pub fn scan(&self, t: usize, lo: u64, hi: u64) -> Result<KeyScan> {
        KeyScan::new(
            self.path.clone(),
            table_name(t),
            self.tables[t].as_ref(),
            lo,
            hi,
        )
    }

    /// Calls `f` on every key of table `t` in `lo..=hi`, in order.
    pub fn probe(&self, t: usize, lo: u64, hi: u64, mut f: impl FnMut(u64)) -> Result<()> {
        let Some(table) = &self.tables[t] else {
            return Ok(());
        };
        let range = table.range(lo..).map_err(|e| Error::redb(&self.path, e))?;
        for item in range {
            let (last, block) = item.map_err(|e| Error::redb(&self.path, e))?;
            let last = last.value();
            KeyBlock::parse(block.value())
                .and_then(|b| b.for_each_in(lo, hi, &mut f))
                .map_err(|e| e.at(&self.path, &table_name(t), Some(format!("{last:016x}"))))?;
            if last >= hi {
                break;
            }
        }
        Ok(())
    }

    /// Calls `f(last_key, block)` on every block of table `t`, in order, each block's
    /// checksum and header checked first.
    pub fn for_each_block(
        &self,
        t: usize,
        mut f: impl FnMut(u64, &[u8]) -> Result<()>,
    ) -> Result<()> {
        let Some(table) = &self.tables[t] else {
            return Ok(());
        };
        let range = table
            .range::<u64>(..)
            .map_err(|e| Error::redb(&self.path, e))?;
        for item in range {
            let (last, block) = item.map_err(|e| Error::redb(&self.path, e))?;
            let last = last.value();
            KeyBlock::parse(block.value())
                .map_err(|e| e.at(&self.path, &table_name(t), Some(format!("{last:016x}"))))?;
            f(last, block.value())?;
        }
        Ok(())
    }

    /// For fingerprints ascending, marks in `found` those present in table 0 (whose keys are
    /// the fingerprints themselves).
    pub fn contains_sorted(&self, fingerprints: &[u64], found: &mut [bool]) -> Result<()> {
        let Some(table) = &self.tables[0] else {
            return Ok(());
        };
        let mut i = 0;
        let mut keys = Vec::new();
        while i < fingerprints.len() {
            // The block that may hold fingerprints[i]; then every later fingerprint it covers.
            let mut range = table
                .range(fingerprints[i]..)
                .map_err(|e| Error::redb(&self.path, e))?;
            let Some(item) = range.next() else { break };
            let (last, block) = item.map_err(|e| Error::redb(&self.path, e))?;
            let last = last.value();
            keys.clear();
            KeyBlock::parse(block.value())
                .and_then(|b| b.for_each(|k| keys.push(k)))
                .map_err(|e| e.at(&self.path, "t000", Some(format!("{last:016x}"))))?;
            while i < fingerprints.len() && fingerprints[i] <= last {
                if keys.binary_search(&fingerprints[i]).is_ok() {
                    found[i] = true;
                }
                i += 1;
            }
        }
        Ok(())
    }
}

/// The blocks of an entry table, found for keys asked for in ascending order: a key's block
/// is the first whose redb key (its last entry's) is at least it. Each is looked for among
/// the few blocks after the last one found before the table is searched from its root
/// again: for keys as dense as a batch's or an audit's that is the next block or the one
/// after, and a step along a leaf costs less than a descent.
struct AscendingBlocks<'t> {
    table: &'t ReadOnlyTable<&'static [u8], &'static [u8]>,
    /// Positioned after the last block found.
    after: Option<redb::Range<'static, &'static [u8], &'static [u8]>>,
}

/// A block's redb key and the block.
type Block = (
    redb::AccessGuard<'static, &'static [u8]>,
    redb::AccessGuard<'static, &'static [u8]>,
);

impl<'t> AscendingBlocks<'t> {
    /// Blocks stepped over before the table is searched instead.
    const STEPS: usize = 4;

    fn new(table: &'t ReadOnlyTable<&'static [u8], &'static [u8]>) -> Self {
        AscendingBlocks { table, after: None }
    }

    /// The first block whose key is at least `key`, or None when there is none; `key` must
    /// not be below a key asked for before.
    fn at_least(&mut self, key: &[u8]) -> std::result::Result<Option<Block>, redb::StorageError> {
        if let Some(after) = self.after.as_mut() {
            for item in after.take(Self::STEPS) {
                // A page stepped over that cannot be read is left to the search, which reads
                // only the pages a lookup of `key` needs, as a lookup of it alone would.
                let Ok((last, block)) = item else { break };
                if last.value() >= key {
                    return Ok(Some((last, block)));
                }
            }
        }
        let mut range = self.table.range(key..)?;
        let found = range.next().transpose()?;
        self.after = Some(range);
        Ok(found)
    }
}

/// `(key, id)` of an entry block's redb key (see [`block_key`]).
fn split_block_key(key: &[u8]) -> Option<(u64, &[u8])> {
    let (head, id) = key.split_at_checked(8)?;
    Some((u64::from_be_bytes(head.try_into().ok()?), id))
}

/// One open docs file of a run.
pub struct DocsFile {
    path: PathBuf,
    docs: ReadOnlyTable<&'static [u8], &'static [u8]>,
    postings: ReadOnlyTable<&'static [u8], &'static [u8]>,
    /// None in a run that holds no sketches.
    sketches: Option<ReadOnlyTable<&'static [u8], &'static [u8]>>,
    _db: ReadOnlyDatabase,
}

impl DocsFile {
    /// Every document entry, a block at a time, ordered by `(id_hash, id)`.
    pub fn scan_documents(&self) -> Result<EntryScan<DocState>> {
        self.scan_documents_in(0, u64::MAX)
    }

    /// The documents whose id hashes are within `lo..=hi`, a block at a time.
    pub fn scan_documents_in(&self, lo: u64, hi: u64) -> Result<EntryScan<DocState>> {
        EntryScan::new(self.path.clone(), DOCS_TABLE, &self.docs, lo, hi)
    }

    /// Every posting, a block at a time, ordered by `(fingerprint, id)`.
    pub fn scan_postings(&self) -> Result<EntryScan<Posting>> {
        self.scan_postings_in(0, u64::MAX)
    }

    /// The postings of fingerprints within `lo..=hi`, a block at a time.
    pub fn scan_postings_in(&self, lo: u64, hi: u64) -> Result<EntryScan<Posting>> {
        self.scan_postings_as(lo, hi)
    }

    /// The postings as payload `P`: an older format's, for a migration.
    pub(crate) fn scan_postings_as<P: entries::Payload>(
        &self,
        lo: u64,
        hi: u64,
    ) -> Result<EntryScan<P>> {
        EntryScan::new(self.path.clone(), POSTINGS_TABLE, &self.postings, lo, hi)
    }

    /// The sketches of fingerprints within `lo..=hi`, a block at a time; None when the run
    /// holds none.
    pub fn scan_sketches_in(&self, lo: u64, hi: u64) -> Result<Option<EntryScan<SketchEntry>>> {
        self.sketches
            .as_ref()
            .map(|table| EntryScan::new(self.path.clone(), SKETCHES_TABLE, table, lo, hi))
            .transpose()
    }

    /// For documents `(fingerprint, id, batch)` ordered by `(fingerprint, id)`, copies
    /// document i's sketch from this run (the entry of its fingerprint and id with its batch),
    /// which must have `bytes` bytes, to the start of row i of `rows` (rows of `stride`
    /// bytes) and sets `found[i]`, where it is not set yet. Each block is read once for the
    /// documents it covers; chunks of the documents are looked up in parallel.
    pub fn sketches_sorted(
        &self,
        documents: &[(u64, &str, u64)],
        rows: &mut [u8],
        (stride, bytes): (usize, usize),
        found: &mut [bool],
    ) -> Result<()> {
        /// Documents per parallel lookup task.
        const CHUNK: usize = 1 << 12;
        let Some(table) = &self.sketches else {
            return Ok(());
        };
        documents
            .par_chunks(CHUNK)
            .zip(rows.par_chunks_mut(CHUNK * stride))
            .zip(found.par_chunks_mut(CHUNK))
            .try_for_each(|((documents, rows), found)| {
                let mut blocks = AscendingBlocks::new(table);
                let mut i = 0;
                while i < documents.len() {
                    let (fp, id, _) = documents[i];
                    let key = block_key(fp, id.as_bytes());
                    let item = blocks
                        .at_least(&key)
                        .map_err(|e| Error::redb(&self.path, e))?;
                    let Some((last, block)) = item else { break };
                    let last = split_block_key(last.value()).ok_or_else(|| {
                        Error::corrupt("sketches block key is shorter than 8 bytes").at(
                            &self.path,
                            SKETCHES_TABLE,
                            None,
                        )
                    })?;
                    // The documents this block covers: i..end.
                    let end = i + documents[i..]
                        .partition_point(|&(fp, id, _)| (fp, id.as_bytes()) <= (last.0, last.1));
                    let mut j = i;
                    // Entries are read in place; only the wanted sketches are copied.
                    entries::decode_each(block.value(), |fp, id, reader| {
                        let (batch, sketch) = sketches::read_borrowed(reader)?;
                        while j < end && (documents[j].0, documents[j].1) < (fp, id) {
                            j += 1;
                        }
                        while j < end && (documents[j].0, documents[j].1) == (fp, id) {
                            if documents[j].2 == batch && !found[j] {
                                sketches::check_size(sketch, bytes)?;
                                rows[j * stride..][..bytes].copy_from_slice(sketch);
                                found[j] = true;
                            }
                            j += 1;
                        }
                        Ok(j < end)
                    })
                    .map_err(|e| e.at(&self.path, SKETCHES_TABLE, None))?;
                    i = end.max(i + 1);
                }
                Ok(())
            })
    }

    /// Calls `f(fingerprint, id, batch, sketch)` on every sketch entry of this run under one
    /// of the fingerprints `wanted` (ascending, distinct), in `(fingerprint, id)` order. Each
    /// block is read once; a run whose catalog entry counts sketches must have the table
    /// (else an error). Where the run keeps a sketch for each of its postings (its
    /// `sketches` equal its `documents`), these are its postings under `wanted`, with their
    /// sketches: one pass instead of two.
    pub fn sketched_documents_of(
        &self,
        wanted: &[u64],
        mut f: impl FnMut(u64, &str, u64, &[u8]) -> Result<()>,
    ) -> Result<()> {
        let Some(table) = &self.sketches else {
            return Err(Error::corrupt(
                "the catalog counts sketches in this run, but its docs file has no sketches table",
            )
            .in_file(&self.path));
        };
        let mut blocks = AscendingBlocks::new(table);
        let mut next = 0; // wanted[next] is the least fingerprint not yet passed
        let mut after: Vec<u8> = Vec::new(); // just above the last block read
        while next < wanted.len() {
            let key = block_key(wanted[next], b"").max(std::mem::take(&mut after));
            let item = blocks
                .at_least(&key)
                .map_err(|e| Error::redb(&self.path, e))?;
            let Some((last, block)) = item else { break };
            entries::decode_each(block.value(), |fp, id, reader| {
                let (batch, sketch) = sketches::read_borrowed(reader)?;
                while next < wanted.len() && wanted[next] < fp {
                    next += 1;
                }
                if next < wanted.len() && wanted[next] == fp {
                    f(fp, id, batch, sketch)?;
                }
                Ok(next < wanted.len())
            })
            .map_err(|e| e.at(&self.path, SKETCHES_TABLE, None))?;
            // The block's last fingerprint may go on in the next block: look from just above
            // its last key (a key followed by a zero byte is the least key above it).
            after = last.value().to_vec();
            after.push(0);
        }
        Ok(())
    }

    /// Calls `f(redb_key, block)` on every block of the docs table, in order, as stored.
    pub(crate) fn for_each_docs_block(
        &self,
        mut f: impl FnMut(&[u8], &[u8]) -> Result<()>,
    ) -> Result<()> {
        let range = self
            .docs
            .range::<&[u8]>(..)
            .map_err(|e| Error::redb(&self.path, e))?;
        for item in range {
            let (key, block) = item.map_err(|e| Error::redb(&self.path, e))?;
            f(key.value(), block.value())?;
        }
        Ok(())
    }

    /// Calls `f(id, batch)` on every document this run lists under `fingerprint`.
    pub fn ids_of(&self, fingerprint: u64, mut f: impl FnMut(&str, u64)) -> Result<()> {
        let from = fingerprint.to_be_bytes();
        let range = self
            .postings
            .range(&from[..]..)
            .map_err(|e| Error::redb(&self.path, e))?;
        for item in range {
            let (key, block) = item.map_err(|e| Error::redb(&self.path, e))?;
            let mut past = false;
            entries::decode::<Posting>(block.value(), |fp, id, posting| {
                if fp == fingerprint {
                    f(id, posting.batch);
                }
                past = fp > fingerprint;
                !past
            })
            .map_err(|e| e.at(&self.path, POSTINGS_TABLE, None))?;
            if past || key.value()[..8] != from[..] {
                break;
            }
        }
        Ok(())
    }

    /// Calls `f` on every document entry of this run, ordered by `(id_hash, id)`.
    pub fn for_each_document(&self, mut f: impl FnMut(u64, &str, DocState)) -> Result<()> {
        self.for_each_entry(&self.docs, DOCS_TABLE, |hash, id, state| f(hash, id, state))
    }

    /// Calls `f` on the fingerprint of every posting of this run, in order.
    pub fn for_each_posting(&self, mut f: impl FnMut(u64)) -> Result<()> {
        self.for_each_entry::<Posting>(&self.postings, POSTINGS_TABLE, |fp, _, _| f(fp))
    }

    /// Decodes every block of `table` (named `name` in errors), calling `f` on each entry.
    fn for_each_entry<P: entries::Payload>(
        &self,
        table: &ReadOnlyTable<&'static [u8], &'static [u8]>,
        name: &str,
        mut f: impl FnMut(u64, &str, P),
    ) -> Result<()> {
        let range = table
            .range::<&[u8]>(..)
            .map_err(|e| Error::redb(&self.path, e))?;
        for item in range {
            let (_, block) = item.map_err(|e| Error::redb(&self.path, e))?;
            entries::decode::<P>(block.value(), |key, id, payload| {
                f(key, id, payload);
                true
            })
            .map_err(|e| e.at(&self.path, name, None))?;
        }
        Ok(())
    }

    /// What this run says of `id`, if anything.
    pub fn state_of(&self, id: &str) -> Result<Option<DocState>> {
        let hash = id_hash(id.as_bytes());
        let key = block_key(hash, id.as_bytes());
        let mut range = self
            .docs
            .range(&key[..]..)
            .map_err(|e| Error::redb(&self.path, e))?;
        let Some(item) = range.next() else {
            return Ok(None);
        };
        let (_, block) = item.map_err(|e| Error::redb(&self.path, e))?;
        let mut found = None;
        entries::decode::<DocState>(block.value(), |h, other, state| {
            if h == hash && other == id {
                found = Some(state);
            }
            (h, other.as_bytes()) < (hash, id.as_bytes())
        })
        .map_err(|e| e.at(&self.path, DOCS_TABLE, None))?;
        Ok(found)
    }

    /// For documents ordered by `(id_hash, id)`, fills `states[i]` with what this run says of
    /// document i, where `states[i]` is still None. Chunks of the documents are looked up in
    /// parallel; within a chunk each block is read once and merged with the documents it
    /// covers, with no copy of its entries.
    pub fn states_sorted(
        &self,
        documents: &[(u64, &str)],
        states: &mut [Option<DocState>],
    ) -> Result<()> {
        /// Documents per parallel lookup task: enough to amortise a task, few enough to share.
        const CHUNK: usize = 1 << 14;
        documents
            .par_chunks(CHUNK)
            .zip(states.par_chunks_mut(CHUNK))
            .try_for_each(|(documents, states)| self.states_sorted_chunk(documents, states))
    }

    fn states_sorted_chunk(
        &self,
        documents: &[(u64, &str)],
        states: &mut [Option<DocState>],
    ) -> Result<()> {
        let mut blocks = AscendingBlocks::new(&self.docs);
        let mut i = 0;
        while i < documents.len() {
            let (hash, id) = documents[i];
            let key = block_key(hash, id.as_bytes());
            let item = blocks
                .at_least(&key)
                .map_err(|e| Error::redb(&self.path, e))?;
            let Some((last, block)) = item else { break };
            let last = split_block_key(last.value()).ok_or_else(|| {
                Error::corrupt("docs block key is shorter than 8 bytes")
                    .at(&self.path, DOCS_TABLE, None)
            })?;
            // The documents this block covers: i..end (at least i, since its last key >= key).
            let end = i + documents[i..]
                .partition_point(|&(h, id)| (h, id.as_bytes()) <= (last.0, last.1));
            let mut j = i;
            entries::decode::<DocState>(block.value(), |h, other, state| {
                while j < end && (documents[j].0, documents[j].1) < (h, other) {
                    j += 1;
                }
                if j < end && (documents[j].0, documents[j].1) == (h, other) {
                    states[j].get_or_insert(state);
                    j += 1;
                }
                j < end
            })
            .map_err(|e| e.at(&self.path, DOCS_TABLE, None))?;
            i = end.max(i + 1);
        }
        Ok(())
    }
}
