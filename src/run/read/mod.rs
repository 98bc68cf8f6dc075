//! Reading a committed run: its files opened lazily, probes of the permuted tables, and
//! lookups of documents and postings.
//!
//! Here, [`RunReader`] and its files opened on first use; shard_file.rs ([`ShardFile`]: the
//! permuted tables), docs_file.rs ([`DocsFile`]: documents and postings), sketches.rs (where
//! a run keeps its sketches, and reading them), named.rs (named postings read back to their
//! documents), lookups.rs (entries by key range, through
//! decoded_blocks.rs: the blocks a long-lived reader keeps) and ascending_blocks.rs (the
//! blocks of keys asked for in ascending order).

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use redb::ReadOnlyDatabase;

use crate::error::{Error, Result};
use crate::format::catalog::{RunFormat, RunMeta};
use crate::format::layout;
use crate::run::pinned::PinnedRun;

mod ascending_blocks;
mod decoded_blocks;
mod docs_file;
mod lookups;
mod named;
mod shard_file;
mod sketch_area;
mod sketches;

pub(crate) use docs_file::DocsFile;
pub(crate) use shard_file::ShardFile;
pub(crate) use sketch_area::SketchArea;

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
    /// How its docs file is laid out.
    format: RunFormat,
}

/// Bytes of cache each file of a run gets when it opens: redb's, and for a docs file the
/// blocks it keeps decoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FileCaches {
    /// For the docs file.
    pub docs: usize,
    /// For each shard file (the permuted tables).
    pub tables: usize,
    /// For the docs file's docs blocks kept decoded (see decoded_blocks.rs), beside its redb
    /// cache.
    pub decoded_docs: usize,
    /// For its named postings blocks kept decoded.
    pub decoded_postings: usize,
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
        // One that failed puts it back: the next one fails the same way, naming the damage.
        let mut pinned = self.pinned.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(t) = self.open.get() {
            return Ok(t);
        }
        let file = pinned.take().ok_or_else(|| Error::AfterEarlierFailure {
            path: self.path.clone(),
        })?;
        let spare = file.try_clone().ok();
        let opened = redb::backends::FileBackend::new(file)
            .map_err(|e| Error::redb(&self.path, e))
            .and_then(|backend| {
                redb::Builder::new()
                    .set_cache_size(cache_bytes)
                    .open_read_only_with_backend(backend)
                    .map_err(|e| Error::redb(&self.path, e))
            })
            .and_then(|db| open(&self.path, db));
        match opened {
            Ok(t) => {
                let _ = self.open.set(t);
                Ok(self.open.get().expect("set above"))
            }
            Err(e) => {
                *pinned = spare;
                Err(e)
            }
        }
    }
}

impl RunReader {
    /// A reader of run `meta` stored in `dir`, laid out as `format` says, giving each file it
    /// opens the cache `caches` says. Fails with an I/O error (NotFound) when a file of the
    /// run is gone.
    pub fn new(
        meta: RunMeta,
        dir: PathBuf,
        (shards, tables): (usize, usize),
        format: RunFormat,
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
            format,
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

    /// The number of permuted tables.
    pub fn tables(&self) -> usize {
        self.tables
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
            ShardFile::open(path, db, tables)
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
        let (id_bits, format) = (self.meta.id_bits, self.format);
        let caches = self.caches;
        self.docs.get(caches.docs, |path, db| {
            DocsFile::open(path, db, id_bits, format, caches)
        })
    }
}
