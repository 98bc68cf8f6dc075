//! Runs: the immutable files one batch (or one compaction) writes.
//!
//! ```text
//! runs/<id: 10 digits>/docs.redb          tables "docs" and "postings": entry blocks
//! runs/<id: 10 digits>/shard-<sss>.redb   tables "t000".."tNNN": key blocks of the permuted
//!                                         keys whose leading log2(S) bits are sss
//! ```
//! Every table maps a block's last key to the block (see [`crate::block`]). A run is written
//! whole, each file committed with redb's immediate durability and the directory fsynced,
//! before the catalog names it; it is never modified after, so readers need no locks, and a
//! file a reader has opened stays readable even after a compaction deletes it.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};

use rayon::prelude::*;
use redb::{
    Database, ReadOnlyDatabase, ReadOnlyTable, ReadableDatabase, TableDefinition, TableError,
};

mod scan;
pub use scan::{EntryScan, KeyScan};

use crate::block::docs::{id_hash, DocState};
use crate::block::entries::{self, block_key};
use crate::block::keys::{self, KeyBlock};
use crate::block::postings::Posting;
use crate::catalog::{sync_dir, RunMeta};
use crate::error::{Error, Result};
use crate::permutation::Permutations;
use crate::sorted_tables;

pub(crate) const DOCS: TableDefinition<&[u8], &[u8]> = TableDefinition::new("docs");
pub(crate) const POSTINGS: TableDefinition<&[u8], &[u8]> = TableDefinition::new("postings");
pub(crate) const DOCS_FILE: &str = "docs.redb";

/// The redb table name of permuted table `t`.
pub(crate) fn table_name(t: usize) -> String {
    format!("t{t:03}")
}

pub(crate) fn shard_file(run_dir: &Path, file: usize) -> PathBuf {
    run_dir.join(format!("shard-{file:03}.redb"))
}

/// Table bytes a shard file aims for: bigger runs are split into more files, written in
/// parallel, up to one file per shard.
const SHARD_FILE_TARGET_BYTES: u64 = 128 << 20;
/// Bytes per key per table assumed when sizing shard files (measured: about 6 at 1e8).
const ESTIMATED_KEY_BYTES: u64 = 7;

/// The number of shard files for a run of `fingerprints` new fingerprints.
pub(crate) fn shard_file_count(fingerprints: usize, tables: usize, shards: usize) -> usize {
    let bytes = fingerprints as u64 * tables as u64 * ESTIMATED_KEY_BYTES;
    let wanted = bytes.div_ceil(SHARD_FILE_TARGET_BYTES).max(1) as usize;
    let files = if wanted.is_power_of_two() {
        wanted
    } else {
        wanted.next_power_of_two() / 2
    };
    files.clamp(1, shards)
}

/// Cache given to each redb file a writer creates: the write buffer spills at half of it.
/// Measured (1e7 bulk insert at m = 6, and compaction of 3e6 in 9 runs, side by side): 32 MiB
/// writes as fast as 256 MiB did, and the insert peaks at 1.76 GB instead of 2.73 GB.
const WRITER_CACHE_BYTES: usize = 32 << 20;

/// What a new run holds. Documents are ordered by `(id_hash(id), id)`, postings by
/// `(fingerprint, id)`, and `fingerprints` ascending; none repeats.
pub struct RunContents<'a> {
    pub documents: &'a [(u64, &'a str, DocState)],
    pub postings: &'a [(u64, &'a str)],
    pub fingerprints: &'a [u64],
}

/// Writes run `id` into `run_dir` and returns its description for the catalog.
pub fn write_run(
    run_dir: &Path,
    id: u64,
    perms: &Permutations,
    shards: usize,
    contents: &RunContents<'_>,
) -> Result<RunMeta> {
    std::fs::create_dir_all(run_dir).map_err(|e| Error::io(run_dir, e))?;
    let (docs, tables) = rayon::join(
        || write_docs(run_dir, contents),
        || write_tables(run_dir, perms, shards, contents.fingerprints),
    );
    let (docs_bytes, postings_bytes) = docs?;
    let (shard_files, present_files, table_bytes) = tables?;
    sync_dir(run_dir)?;
    if let Some(parent) = run_dir.parent() {
        sync_dir(parent)?;
    }
    Ok(RunMeta {
        id,
        shard_files,
        present_files,
        fingerprints: contents.fingerprints.len() as u64,
        documents: contents.documents.len() as u64,
        table_bytes,
        docs_bytes,
        postings_bytes,
    })
}

/// Creates a new redb file for writing a run.
pub(crate) fn create_db(path: &Path) -> Result<Database> {
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .open(path)
        .map_err(|e| Error::io(path, e))?;
    Database::builder()
        .set_cache_size(WRITER_CACHE_BYTES)
        .create_with_backend(crate::fault::backend(path, file)?)
        .map_err(|e| Error::redb(path, e))
}

/// Closes a written redb file, reporting what dropping it would ignore: a file whose close
/// failed would need repair, which a read-only open refuses.
pub(crate) fn close_db(db: Database, path: &Path) -> Result<()> {
    db.close().map_err(|e| Error::redb(path, e))
}

/// Appends strictly increasing `keys`, greater than any the table holds, to permuted table `t`
/// in a shard file being written; returns the bytes of blocks written.
pub(crate) fn append_keys(
    txn: &redb::WriteTransaction,
    path: &Path,
    t: usize,
    keys: &[u64],
) -> Result<u64> {
    let redb_err = |e: redb::Error| Error::redb(path, e);
    let mut table = txn
        .open_table(TableDefinition::<u64, &[u8]>::new(&table_name(t)))
        .map_err(|e| redb_err(e.into()))?;
    let mut cursor = table
        .upper_bound_mut(std::ops::Bound::<u64>::Unbounded)
        .map_err(|e| redb_err(e.into()))?;
    let mut bytes = 0;
    keys::encode(keys, |last, block| {
        bytes += block.len() as u64;
        cursor
            .insert_before(last, block)
            .map_err(|e| redb_err(e.into()))
    })?;
    cursor.close().map_err(|e| redb_err(e.into()))?;
    Ok(bytes)
}

/// Writes docs.redb; returns (docs bytes, postings bytes). Documents and postings are two
/// tables of one write transaction, written at once from two threads.
fn write_docs(run_dir: &Path, contents: &RunContents<'_>) -> Result<(u64, u64)> {
    let path = run_dir.join(DOCS_FILE);
    let db = create_db(&path)?;
    let txn = db.begin_write().map_err(|e| Error::redb(&path, e))?;
    let documents = contents
        .documents
        .iter()
        .map(|&(hash, id, state)| (hash, id.as_bytes(), state));
    let postings = contents
        .postings
        .iter()
        .map(|&(fp, id)| (fp, id.as_bytes(), Posting));
    let (docs_bytes, postings_bytes) = rayon::join(
        || append_all_entries(&txn, &path, DOCS, documents),
        || append_all_entries(&txn, &path, POSTINGS, postings),
    );
    let bytes = match (docs_bytes, postings_bytes) {
        (Ok(docs), Ok(postings)) => (docs, postings),
        (Err(a), Err(b)) => return Err(a.cause(b)),
        (Err(e), _) | (_, Err(e)) => return Err(e),
    };
    txn.commit().map_err(|e| Error::redb(&path, e))?;
    close_db(db, &path)?;
    Ok(bytes)
}

/// Appends `entries` (ascending, after any the table holds) to table `def` as entry blocks;
/// returns the bytes of blocks written.
fn append_all_entries<'e, P: entries::Payload + 'e>(
    txn: &redb::WriteTransaction,
    path: &Path,
    def: TableDefinition<&[u8], &[u8]>,
    entries: impl IntoIterator<Item = (u64, &'e [u8], P)>,
) -> Result<u64> {
    let mut bytes = 0;
    append_entries(txn, path, def, |emit| {
        entries::encode(entries, |key, block| {
            bytes += block.len() as u64;
            emit(key, block)
        })
    })?;
    Ok(bytes)
}

/// Lets `fill` append entry blocks, in key order and after any the table holds, to table `def`
/// of a docs file being written, through `emit(block_key, block)`.
pub(crate) fn append_entries<T>(
    txn: &redb::WriteTransaction,
    path: &Path,
    def: TableDefinition<&[u8], &[u8]>,
    fill: impl FnOnce(&mut dyn FnMut(&[u8], &[u8]) -> Result<()>) -> Result<T>,
) -> Result<T> {
    let redb_err = |e: redb::Error| Error::redb(path, e);
    let mut table = txn.open_table(def).map_err(|e| redb_err(e.into()))?;
    let mut cursor = table
        .upper_bound_mut(std::ops::Bound::<&[u8]>::Unbounded)
        .map_err(|e| redb_err(e.into()))?;
    let out = fill(&mut |key, block| {
        cursor
            .insert_before(key, block)
            .map_err(|e| redb_err(e.into()))
    })?;
    cursor.close().map_err(|e| redb_err(e.into()))?;
    Ok(out)
}

/// One shard file being written, created when its first key comes. Its tables may be
/// appended to from several threads at once: redb lets the tables of one write transaction be
/// written concurrently.
pub(crate) struct ShardWriter {
    path: PathBuf,
    /// The open file, once the first key came; None if opening it failed (the writer that
    /// met the failure reports it; the others report a consequence).
    open: OnceLock<Option<(Database, redb::WriteTransaction)>>,
    creating: Mutex<()>,
}

impl ShardWriter {
    pub(crate) fn new(path: PathBuf) -> Self {
        ShardWriter {
            path,
            open: OnceLock::new(),
            creating: Mutex::new(()),
        }
    }

    /// Appends strictly increasing `keys`, greater than any it holds, to table `t`; returns
    /// the bytes of blocks written.
    pub(crate) fn append_keys(&self, t: usize, keys: &[u64]) -> Result<u64> {
        append_keys(self.txn()?, &self.path, t, keys)
    }

    fn txn(&self) -> Result<&redb::WriteTransaction> {
        if self.open.get().is_none() {
            let _creating = self.creating.lock().expect("no writer panicked");
            if self.open.get().is_none() {
                let created = create_db(&self.path).and_then(|db| {
                    let txn = db.begin_write().map_err(|e| Error::redb(&self.path, e))?;
                    Ok((db, txn))
                });
                match created {
                    Ok(open) => {
                        let _ = self.open.set(Some(open));
                    }
                    Err(e) => {
                        let _ = self.open.set(None);
                        return Err(e);
                    }
                }
            }
        }
        match self.open.get() {
            Some(Some((_, txn))) => Ok(txn),
            _ => Err(failed_before(&self.path)),
        }
    }

    /// Commits and closes the file; false when no key came and there is no file.
    pub(crate) fn finish(self) -> Result<bool> {
        match self.open.into_inner() {
            Some(Some((db, txn))) => {
                txn.commit().map_err(|e| Error::redb(&self.path, e))?;
                close_db(db, &self.path)?;
                Ok(true)
            }
            Some(None) => Err(failed_before(&self.path)),
            None => Ok(false),
        }
    }
}

/// What a writer of a shard file whose opening failed gets: a consequence of that failure.
fn failed_before(path: &Path) -> Error {
    Error::redb(path, redb::Error::PreviousIo)
}

/// Writes every permuted table into the shard files; returns (shard files, files present,
/// bytes per table).
fn write_tables(
    run_dir: &Path,
    perms: &Permutations,
    shards: usize,
    fingerprints: &[u64],
) -> Result<(u16, Vec<u16>, Vec<u64>)> {
    let files = shard_file_count(fingerprints.len(), perms.tables().len(), shards);
    let shards_per_file = shards / files;
    let writers: Vec<ShardWriter> = (0..files)
        .map(|s| ShardWriter::new(shard_file(run_dir, s)))
        .collect();
    let bytes: Vec<AtomicU64> = perms.tables().iter().map(|_| AtomicU64::new(0)).collect();
    sorted_tables::for_each(perms, fingerprints, |t, keys| {
        // Each shard file's slice of the ascending keys goes to that file.
        let mut start = 0;
        while start < keys.len() {
            let file = perms.shard_of(keys[start]) / shards_per_file;
            let end = start
                + keys[start..].partition_point(|&k| perms.shard_of(k) / shards_per_file == file);
            let written = writers[file].append_keys(t, &keys[start..end])?;
            bytes[t].fetch_add(written, Ordering::Relaxed);
            start = end;
        }
        Ok(())
    })?;
    let present: Vec<u16> = writers
        .into_par_iter()
        .enumerate()
        .filter_map(|(s, w)| {
            w.finish()
                .map(|present| present.then_some(s as u16))
                .transpose()
        })
        .collect::<Result<_>>()?;
    let bytes = bytes.iter().map(|b| b.load(Ordering::Relaxed)).collect();
    Ok((files as u16, present, bytes))
}

/// Read access to one committed run.
///
/// Every file of the run is opened (as a plain file) when the reader is made, so a compaction
/// that deletes the run's directory afterwards cannot pull it from under the reader; redb opens
/// each one on first use.
pub struct RunReader {
    meta: RunMeta,
    cache_bytes: usize,
    tables: usize,
    docs: LazyFile<DocsFile>,
    files: Vec<Option<LazyFile<ShardFile>>>,
    shards_per_file: usize,
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
        let mut pinned = self.pinned.lock().expect("no opener panicked");
        if let Some(t) = self.open.get() {
            return Ok(t);
        }
        let file = pinned.take().ok_or_else(|| {
            Error::corrupt(format!("{}: an earlier open failed", self.path.display()))
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
    /// A reader of run `meta` stored in `dir`, giving each file it opens `cache_bytes` of cache.
    /// Fails with an I/O error (NotFound) when a file of the run is gone.
    pub fn new(
        meta: RunMeta,
        dir: PathBuf,
        shards: usize,
        tables: usize,
        cache_bytes: usize,
    ) -> Result<Self> {
        let count = usize::from(meta.shard_files).clamp(1, shards);
        let mut files: Vec<Option<LazyFile<ShardFile>>> = (0..count).map(|_| None).collect();
        for &f in &meta.present_files {
            if let Some(slot) = files.get_mut(usize::from(f)) {
                *slot = Some(LazyFile::pin(shard_file(&dir, usize::from(f)))?);
            }
        }
        Ok(RunReader {
            docs: LazyFile::pin(dir.join(DOCS_FILE))?,
            meta,
            cache_bytes,
            tables,
            files,
            shards_per_file: shards / count,
        })
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
        lazy.get(self.cache_bytes, |path, db| {
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
        self.docs.get(self.cache_bytes, |path, db| {
            let txn = db.begin_read().map_err(|e| Error::redb(path, e))?;
            let open = |def| txn.open_table(def).map_err(|e| Error::redb(path, e));
            Ok(DocsFile {
                docs: open(DOCS)?,
                postings: open(POSTINGS)?,
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
                .map_err(|e| {
                    e.at(format!(
                        "{} table {} block {last:016x}",
                        self.path.display(),
                        table_name(t)
                    ))
                })?;
            if last >= hi {
                break;
            }
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
                .map_err(|e| {
                    e.at(format!(
                        "{} table t000 block {last:016x}",
                        self.path.display()
                    ))
                })?;
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
    _db: ReadOnlyDatabase,
}

impl DocsFile {
    /// Every document entry, a block at a time, ordered by `(id_hash, id)`.
    pub fn scan_documents(&self) -> Result<EntryScan<DocState>> {
        self.scan_documents_in(0, u64::MAX)
    }

    /// The documents whose id hashes are within `lo..=hi`, a block at a time.
    pub fn scan_documents_in(&self, lo: u64, hi: u64) -> Result<EntryScan<DocState>> {
        EntryScan::new(self.path.clone(), "docs", &self.docs, lo, hi)
    }

    /// Every posting, a block at a time, ordered by `(fingerprint, id)`.
    pub fn scan_postings(&self) -> Result<EntryScan<Posting>> {
        self.scan_postings_in(0, u64::MAX)
    }

    /// The postings of fingerprints within `lo..=hi`, a block at a time.
    pub fn scan_postings_in(&self, lo: u64, hi: u64) -> Result<EntryScan<Posting>> {
        EntryScan::new(self.path.clone(), "postings", &self.postings, lo, hi)
    }

    /// Calls `f` on every id this run lists under `fingerprint`.
    pub fn ids_of(&self, fingerprint: u64, mut f: impl FnMut(&str)) -> Result<()> {
        let from = fingerprint.to_be_bytes();
        let range = self
            .postings
            .range(&from[..]..)
            .map_err(|e| Error::redb(&self.path, e))?;
        for item in range {
            let (key, block) = item.map_err(|e| Error::redb(&self.path, e))?;
            let mut past = false;
            entries::decode::<Posting>(block.value(), |fp, id, _| {
                if fp == fingerprint {
                    f(id);
                }
                past = fp > fingerprint;
                !past
            })
            .map_err(|e| e.at(format!("{} table postings", self.path.display())))?;
            if past || key.value()[..8] != from[..] {
                break;
            }
        }
        Ok(())
    }

    /// Calls `f` on every document entry of this run, ordered by `(id_hash, id)`.
    pub fn for_each_document(&self, mut f: impl FnMut(u64, &str, DocState)) -> Result<()> {
        self.for_each_entry(&self.docs, "docs", |hash, id, state| f(hash, id, state))
    }

    /// Calls `f` on the fingerprint of every posting of this run, in order.
    pub fn for_each_posting(&self, mut f: impl FnMut(u64)) -> Result<()> {
        self.for_each_entry::<Posting>(&self.postings, "postings", |fp, _, _| f(fp))
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
            .map_err(|e| e.at(format!("{} table {name}", self.path.display())))?;
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
        .map_err(|e| e.at(format!("{} table docs", self.path.display())))?;
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
        let mut i = 0;
        while i < documents.len() {
            let (hash, id) = documents[i];
            let key = block_key(hash, id.as_bytes());
            let mut range = self
                .docs
                .range(&key[..]..)
                .map_err(|e| Error::redb(&self.path, e))?;
            let Some(item) = range.next() else { break };
            let (last, block) = item.map_err(|e| Error::redb(&self.path, e))?;
            let last = split_block_key(last.value()).ok_or_else(|| {
                Error::corrupt(format!(
                    "{}: docs block key is shorter than 8 bytes",
                    self.path.display()
                ))
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
            .map_err(|e| e.at(format!("{} table docs", self.path.display())))?;
            i = end.max(i + 1);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fault::plan::{self, Fault};

    #[test]
    fn a_shard_file_that_failed_to_open_fails_its_other_writers_as_a_consequence() {
        let _serial = plan::SERIAL.lock().unwrap_or_else(|e| e.into_inner());
        let dir = tempfile::tempdir().unwrap();
        let writer = ShardWriter::new(dir.path().join("shard-000.redb"));
        // The file is created, then its first write fails.
        let plan = plan::install(Fault::FailWrite(0));
        let first = writer.append_keys(0, &[1, 2, 3]);
        plan::clear();
        assert!(plan.fired.load(std::sync::atomic::Ordering::SeqCst));
        let first = first.unwrap_err();
        assert!(first.to_string().contains("injected fault"), "{first}");
        // Another table's writer must not try to create the file again ("File exists").
        let second = writer.append_keys(1, &[4]).unwrap_err();
        assert!(second.follows_earlier_io_error(), "{second}");
        assert!(first.cause(second).to_string().contains("injected fault"));
        assert!(writer.finish().unwrap_err().follows_earlier_io_error());
    }
}
