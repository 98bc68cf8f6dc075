//! Writing a run's files: the docs file and the shard files of the permuted tables.
//!
//! A run is written whole, each file made durable with redb's immediate durability and the
//! run directory fsynced, before any catalog names it.
//!
//! Blocks reach a file through [`RunFile`]: appended in transactions of at most
//! [`TRANSACTION_BYTES`], each committed without a sync, and the file made durable once, when
//! it is finished. One transaction for a whole file cost each page twice: redb computes the
//! checksums of a transaction's pages at its commit, so every page its write buffer had
//! already spilled to the file was read back and written again (docs/benchmarks.md, "Each
//! page written once"). Nothing reads a run before the
//! catalog names it, so its intermediate commits need no durability.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use rayon::prelude::*;
use redb::{Database, TableDefinition};

use super::{table_name, RunContents, DOCS, IDS, POSTINGS, SKETCHES};
use crate::error::{all_or_cause, Error, Result};
use crate::format::block::entries::Keys;
use crate::format::block::keys::{self, KeyCodec};
use crate::format::block::postings::Posting;
use crate::format::block::sketches::SketchEntry;
use crate::format::block::{entries, id_filter};
use crate::format::catalog::{RunFormat, RunMeta};
use crate::format::layout::{self, sync_dir};
use crate::sys::prefetch;
use crate::sys::progress::{Phase, Progress};
use crate::sys::writeback::Cached;
use crate::tables::permutation::Permutations;
use crate::tables::sorted_tables;

/// Table bytes a shard file aims for: bigger runs are split into more files, written in
/// parallel, up to one file per shard.
const SHARD_FILE_TARGET_BYTES: u64 = 128 << 20;
/// Bytes per key per table assumed when sizing shard files: a little above what the tables
/// take at scale (docs/benchmarks.md, "Disk").
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
/// A larger cache writes no faster, and every page it keeps is fresh memory: the insert's
/// peak grows with it (docs/benchmarks.md, "The writer's cache").
const WRITER_CACHE_BYTES: usize = 32 << 20;

/// Writes run `id` into `run_dir`, laid out as `format` says, and returns its description for
/// the catalog.
pub(crate) fn write_run(
    run_dir: &Path,
    id: u64,
    (perms, shards, format): (&Permutations, usize, RunFormat),
    contents: &RunContents<'_>,
    progress: &dyn Progress,
) -> Result<RunMeta> {
    let codec = format.codec;
    let (docs, tables) = rayon::join(
        || write_docs(run_dir, contents, format),
        || {
            let tables = perms.tables().len() as u64;
            let _phase = Phase::start(progress, "writing tables", tables);
            write_tables(
                run_dir,
                (perms, shards, codec),
                contents.fingerprints,
                progress,
            )
        },
    );
    let ((docs_bytes, postings_bytes, (sketches, sketches_bytes)), (id_bits, ids_bytes)) = docs?;
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
        sketches,
        sketches_bytes,
        id_bits,
        ids_bytes,
    })
}

/// Creates a new redb file for writing a run, whose written pages `cached` says what to do
/// with.
pub(crate) fn create_db(path: &Path, cached: Cached) -> Result<Database> {
    open_db(path, cached, true)
}

/// Opens a redb file for writing a run: a new one, or (`new` false) one a writer closed.
fn open_db(path: &Path, cached: Cached, new: bool) -> Result<Database> {
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(new)
        .open(path)
        .map_err(|e| Error::io(path, e))?;
    Database::builder()
        .set_cache_size(WRITER_CACHE_BYTES)
        .create_with_backend(crate::sys::file_backend::backend(path, file, cached)?)
        .map_err(|e| Error::redb(path, e))
}

/// Closes a written redb file, reporting what dropping it would ignore: a file whose close
/// failed would need repair, which a read-only open refuses.
pub(crate) fn close_db(db: Database, path: &Path) -> Result<()> {
    db.close().map_err(|e| Error::redb(path, e))
}

/// Blocks a write transaction of a run file holds at most: a quarter of the writer's cache,
/// so that redb's write buffer (half the cache) never spills a page of an open transaction.
const TRANSACTION_BYTES: usize = WRITER_CACHE_BYTES / 4;

/// A redb file of a run being written (see the module docs). Its tables may be appended to
/// from several threads at once, each through its own [`Appender`]; their transactions take
/// turns.
pub(crate) struct RunFile {
    path: PathBuf,
    /// None until the file is created (at the first block, for a shard file that may stay
    /// empty); Some(None) once creating it failed (the writer that met the failure reports
    /// it; the others report a consequence).
    db: Mutex<Option<Option<Database>>>,
    cached: Cached,
}

impl RunFile {
    /// The file at `path`, created now; its written pages are `cached` as it says.
    pub(crate) fn create(path: &Path, cached: Cached) -> Result<RunFile> {
        Ok(RunFile {
            path: path.to_path_buf(),
            db: Mutex::new(Some(Some(create_db(path, cached)?))),
            cached,
        })
    }

    /// The redb file at `path`, which a writer closed, opened to take more tables (a copy of
    /// a committed run's file, being made into a new run's).
    pub(crate) fn reopen(path: &Path, cached: Cached) -> Result<RunFile> {
        Ok(RunFile {
            path: path.to_path_buf(),
            db: Mutex::new(Some(Some(open_db(path, cached, false)?))),
            cached,
        })
    }

    /// The file at `path`, created when its first block comes.
    pub(crate) fn when_written(path: PathBuf, cached: Cached) -> RunFile {
        RunFile {
            path,
            db: Mutex::new(None),
            cached,
        }
    }

    /// An appender of blocks to the entry table `def`, which must be empty or hold only
    /// smaller keys.
    pub(crate) fn entries(
        &self,
        def: TableDefinition<'static, &'static [u8], &'static [u8]>,
    ) -> Appender<'_> {
        Appender::new(self, Target::Entries(def))
    }

    /// An appender of key blocks (filed under their last key) to the key table `name`, which
    /// must be empty or hold only smaller keys.
    pub(crate) fn keys(&self, name: &str) -> Appender<'_> {
        Appender::new(self, Target::Keys(name.to_string()))
    }

    /// Appends strictly increasing `keys`, greater than any it holds, to permuted table `t`
    /// as blocks of `codec`; returns the bytes of blocks written.
    pub(crate) fn append_keys(&self, t: usize, keys: &[u64], codec: KeyCodec) -> Result<u64> {
        self.append_keys_to(table_name(t), keys, codec)
    }

    /// Appends strictly increasing `keys`, greater than any it holds, to the key table `name`
    /// as blocks of `codec`; returns the bytes of blocks written.
    pub(crate) fn append_keys_to(
        &self,
        name: String,
        keys: &[u64],
        codec: KeyCodec,
    ) -> Result<u64> {
        let mut appender = Appender::new(self, Target::Keys(name));
        keys::encode(codec, keys, |last, block| {
            appender.push(&<u64 as redb::Value>::as_bytes(&last), block)
        })?;
        appender.finish()
    }

    /// Commits `blocks` to the file in one transaction, without a sync.
    fn commit(&self, target: &Target, blocks: &EncodedBlocks) -> Result<()> {
        let mut db = self.db.lock().unwrap_or_else(|e| e.into_inner());
        if db.is_none() {
            *db = Some(None); // what stays if creating it fails
            *db = Some(Some(create_db(&self.path, self.cached)?));
        }
        let Some(Some(db)) = db.as_ref() else {
            return Err(failed_before(&self.path));
        };
        let redb_err = |e: redb::Error| Error::redb(&self.path, e);
        let mut txn = db.begin_write().map_err(|e| redb_err(e.into()))?;
        txn.set_durability(redb::Durability::None)
            .map_err(|e| redb_err(e.into()))?;
        match target {
            Target::Keys(name) => {
                append_blocks(&txn, TableDefinition::<u64, &[u8]>::new(name), blocks)
            }
            Target::Entries(def) => append_blocks(&txn, *def, blocks),
        }
        .map_err(redb_err)?;
        txn.commit().map_err(|e| redb_err(e.into()))
    }

    /// Makes everything appended durable and closes the file; false when no block came and
    /// there is no file.
    pub(crate) fn finish(self) -> Result<bool> {
        match self.db.into_inner().unwrap_or_else(|e| e.into_inner()) {
            Some(Some(db)) => {
                // An empty transaction with immediate durability persists the ones before.
                let txn = db.begin_write().map_err(|e| Error::redb(&self.path, e))?;
                txn.commit().map_err(|e| Error::redb(&self.path, e))?;
                close_db(db, &self.path)?;
                Ok(true)
            }
            Some(None) => Err(failed_before(&self.path)),
            None => Ok(false),
        }
    }
}

/// Appends `blocks` to table `def` after any it holds; their keys are as `K::as_bytes` writes
/// them.
fn append_blocks<K: redb::Key + 'static>(
    txn: &redb::WriteTransaction,
    def: TableDefinition<K, &[u8]>,
    blocks: &EncodedBlocks,
) -> std::result::Result<(), redb::Error> {
    let mut table = txn.open_table(def)?;
    let mut cursor = table.upper_bound_mut(std::ops::Bound::<K::SelfType<'_>>::Unbounded)?;
    for (key, block) in blocks.iter() {
        cursor.insert_before(K::from_bytes(key), block)?;
    }
    cursor.close()?;
    Ok(())
}

/// The table an [`Appender`] appends to.
enum Target {
    /// A permuted table, by name: u64 keys.
    Keys(String),
    /// An entry table: byte-string keys.
    Entries(TableDefinition<'static, &'static [u8], &'static [u8]>),
}

/// Encoded blocks and the keys they are filed under, in order, end to end: what waits for a
/// transaction, and what a merge gathers of one key range for the appender to take whole.
#[derive(Default)]
pub(crate) struct EncodedBlocks {
    bytes: Vec<u8>,
    /// Per block, where its key and where the block end in `bytes`.
    ends: Vec<(usize, usize)>,
    /// Bytes of the blocks, their keys not counted.
    block_bytes: u64,
}

impl EncodedBlocks {
    pub(crate) fn push(&mut self, key: &[u8], block: &[u8]) {
        self.bytes.extend_from_slice(key);
        let key_end = self.bytes.len();
        self.bytes.extend_from_slice(block);
        self.ends.push((key_end, self.bytes.len()));
        self.block_bytes += block.len() as u64;
    }

    fn iter(&self) -> impl Iterator<Item = (&[u8], &[u8])> {
        let mut start = 0;
        self.ends.iter().map(move |&(key_end, end)| {
            let item = (&self.bytes[start..key_end], &self.bytes[key_end..end]);
            start = end;
            item
        })
    }

    fn clear(&mut self) {
        self.bytes.clear();
        self.ends.clear();
        self.block_bytes = 0;
    }
}

/// Appends blocks, in key order, to one table of a [`RunFile`]: gathers them (encoding goes
/// on while another table's transaction holds the file) and commits every
/// [`TRANSACTION_BYTES`].
pub(crate) struct Appender<'f> {
    file: &'f RunFile,
    target: Target,
    pending: EncodedBlocks,
    /// Bytes of blocks appended so far.
    bytes: u64,
    /// Whether a transaction committed: the table exists in the file.
    committed: bool,
}

impl<'f> Appender<'f> {
    fn new(file: &'f RunFile, target: Target) -> Self {
        Appender {
            file,
            target,
            pending: SPARE.take(),
            bytes: 0,
            committed: false,
        }
    }

    /// Appends a block filed under `key` (greater than any before).
    pub(crate) fn push(&mut self, key: &[u8], block: &[u8]) -> Result<()> {
        self.pending.push(key, block);
        self.bytes += block.len() as u64;
        if self.pending.bytes.len() >= TRANSACTION_BYTES {
            self.flush()?;
        }
        Ok(())
    }

    /// Appends `blocks` (in key order, after any before). Enough of them for a transaction of
    /// their own, with nothing pending, are committed as they are: the appending thread sets
    /// the pace of a merge, and copying every block into its pending buffer was a share of
    /// its time worth saving (docs/benchmarks.md, "Appending a merge's blocks").
    pub(crate) fn push_all(&mut self, blocks: EncodedBlocks) -> Result<()> {
        let own_transaction = TRANSACTION_BYTES / 4..=TRANSACTION_BYTES;
        if self.pending.ends.is_empty() && own_transaction.contains(&blocks.bytes.len()) {
            self.bytes += blocks.block_bytes;
            self.pending = blocks;
            return self.flush();
        }
        for (key, block) in blocks.iter() {
            self.push(key, block)?;
        }
        Ok(())
    }

    fn flush(&mut self) -> Result<()> {
        self.file.commit(&self.target, &self.pending)?;
        self.pending.clear();
        self.committed = true;
        Ok(())
    }

    /// Commits what is left; returns the bytes of blocks appended. The table exists in the
    /// file afterwards, if empty (readers of a docs file open all its tables).
    pub(crate) fn finish(mut self) -> Result<u64> {
        if !self.pending.ends.is_empty() || !self.committed {
            self.flush()?;
        }
        Ok(self.bytes)
    }
}

impl Drop for Appender<'_> {
    fn drop(&mut self) {
        self.pending.clear();
        SPARE.set(std::mem::take(&mut self.pending));
    }
}

thread_local! {
    /// The buffer of this thread's last appender, kept for its next: a fresh one is memory
    /// the kernel must fault in, page by page, for every block written.
    static SPARE: std::cell::Cell<EncodedBlocks> = std::cell::Cell::new(EncodedBlocks::default());
}

/// What [`write_docs`] wrote: (docs bytes, postings bytes, (sketches, sketches bytes)) and
/// (the id filter's prefix bits, its bytes).
type DocsWritten = ((u64, u64, (u64, u64)), (u8, u64));

/// Writes docs.redb. Documents, postings, sketches and the id filter (where `format` has one)
/// are tables of one file, written at once from several threads; a run without sketches has
/// no sketches table.
fn write_docs(
    run_dir: &Path,
    contents: &RunContents<'_>,
    format: RunFormat,
) -> Result<DocsWritten> {
    let path = layout::docs_file(run_dir);
    let file = RunFile::create(&path, Cached::Keep)?;
    let documents = prefetch::ahead(contents.documents, |d| d.1.as_bytes())
        .map(|&(hash, id, state)| (hash, id.as_bytes(), state));
    let postings = prefetch::ahead(contents.postings, |p| p.1.as_bytes())
        .map(|&(fp, id, batch)| (fp, id.as_bytes(), Posting { batch }));
    let write_sketches = || -> Result<(u64, u64)> {
        let sketched = contents.sketches.iter().filter(|s| s.is_some()).count() as u64;
        if sketched == 0 {
            return Ok((0, 0));
        }
        let entries = contents.postings.iter().zip(contents.sketches).filter_map(
            |(&(fp, id, batch), sketch)| {
                let sketch = (*sketch)?.to_vec();
                Some((fp, id.as_bytes(), SketchEntry { batch, sketch }))
            },
        );
        Ok((
            sketched,
            append_all_entries(&file, (SKETCHES, Keys::Stored), entries)?,
        ))
    };
    let write_ids = || -> Result<(u8, u64)> {
        if !format.id_filter {
            return Ok((0, 0));
        }
        let bits = id_filter::bits_for(contents.documents.len() as u64);
        let mut ids = KeyStream::new(&file, IDS, format.codec);
        for &(hash, _, _) in contents.documents {
            ids.push(id_filter::prefix(hash, bits))?;
        }
        Ok((bits, ids.finish()?))
    };
    let ((docs_bytes, ids), (postings_bytes, sketches)) = rayon::join(
        || {
            rayon::join(
                || append_all_entries(&file, (DOCS, format.doc_keys), documents),
                write_ids,
            )
        },
        || {
            rayon::join(
                || append_all_entries(&file, (POSTINGS, Keys::Stored), postings),
                write_sketches,
            )
        },
    );
    let bytes = match (docs_bytes, postings_bytes, sketches, ids) {
        (Ok(docs), Ok(postings), Ok(sketches), Ok(ids)) => ((docs, postings, sketches), ids),
        (docs, postings, sketches, ids) => {
            return Err(all_or_cause(vec![
                docs.map(|_| ()),
                postings.map(|_| ()),
                sketches.map(|_| ()),
                ids.map(|_| ()),
            ])
            .expect_err("one failed"))
        }
    };
    file.finish()?;
    Ok(bytes)
}

/// Appends ascending keys, repeats allowed and dropped, to a key table of a run file, encoding
/// [`KEY_CHUNK`] keys at a time: memory holds one chunk, whatever the table's size.
pub(crate) struct KeyStream<'f> {
    appender: Appender<'f>,
    codec: KeyCodec,
    chunk: Vec<u64>,
    previous: Option<u64>,
}

/// Keys a [`KeyStream`] encodes at a time: 512 KB.
const KEY_CHUNK: usize = 1 << 16;

impl<'f> KeyStream<'f> {
    /// A stream into the key table `name` of `file` (empty), as blocks of `codec`.
    pub(crate) fn new(file: &'f RunFile, name: &str, codec: KeyCodec) -> Self {
        KeyStream {
            appender: file.keys(name),
            codec,
            chunk: Vec::with_capacity(KEY_CHUNK),
            previous: None,
        }
    }

    /// Appends `key`, at least the one before.
    pub(crate) fn push(&mut self, key: u64) -> Result<()> {
        if self.previous == Some(key) {
            return Ok(());
        }
        self.previous = Some(key);
        if self.chunk.len() == KEY_CHUNK {
            self.flush()?;
        }
        self.chunk.push(key);
        Ok(())
    }

    fn flush(&mut self) -> Result<()> {
        let appender = &mut self.appender;
        keys::encode(self.codec, &self.chunk, |last, block| {
            appender.push(&<u64 as redb::Value>::as_bytes(&last), block)
        })?;
        self.chunk.clear();
        Ok(())
    }

    /// Appends what is left; returns the bytes of blocks written.
    pub(crate) fn finish(mut self) -> Result<u64> {
        if !self.chunk.is_empty() {
            self.flush()?;
        }
        self.appender.finish()
    }
}

/// Appends `entries` (ascending, after any the table holds) to table `def` as entry blocks
/// whose keys are as `keys` says; returns the bytes of blocks written.
fn append_all_entries<'e, P: entries::Payload + 'e>(
    file: &RunFile,
    (def, keys): (TableDefinition<'static, &'static [u8], &'static [u8]>, Keys),
    entries: impl IntoIterator<Item = (u64, &'e [u8], P)>,
) -> Result<u64> {
    let mut appender = file.entries(def);
    entries::encode(keys, entries, |key, block| appender.push(key, block))?;
    appender.finish()
}

/// Lets `fill` append entry blocks, in key order and after any the table holds, to table `def`
/// of a docs file being written, through `emit(block_key, block)`; returns what `fill` did.
pub(crate) fn append_entries<T>(
    file: &RunFile,
    def: TableDefinition<'static, &'static [u8], &'static [u8]>,
    fill: impl FnOnce(&mut dyn FnMut(&[u8], &[u8]) -> Result<()>) -> Result<T>,
) -> Result<T> {
    let mut appender = file.entries(def);
    let out = fill(&mut |key, block| appender.push(key, block))?;
    appender.finish()?;
    Ok(out)
}

/// What a writer of a shard file whose opening failed gets: a consequence of that failure.
fn failed_before(path: &Path) -> Error {
    Error::AfterEarlierFailure {
        path: path.to_path_buf(),
    }
}

/// Writes every permuted table into the shard files; returns (shard files, files present,
/// bytes per table).
fn write_tables(
    run_dir: &Path,
    (perms, shards, codec): (&Permutations, usize, KeyCodec),
    fingerprints: &[u64],
    progress: &dyn Progress,
) -> Result<(u16, Vec<u16>, Vec<u64>)> {
    let files = shard_file_count(fingerprints.len(), perms.tables().len(), shards);
    let shards_per_file = shards / files;
    let writers: Vec<RunFile> = (0..files)
        .map(|s| RunFile::when_written(layout::shard_file(run_dir, s), Cached::Keep))
        .collect();
    let bytes: Vec<AtomicU64> = perms.tables().iter().map(|_| AtomicU64::new(0)).collect();
    sorted_tables::for_each(perms, fingerprints, |t, keys| {
        // Each shard file's slice of the ascending keys goes to that file.
        let mut start = 0;
        while start < keys.len() {
            let file = perms.shard_of(keys[start]) / shards_per_file;
            let end = start
                + keys[start..].partition_point(|&k| perms.shard_of(k) / shards_per_file == file);
            let written = writers[file].append_keys(t, &keys[start..end], codec)?;
            bytes[t].fetch_add(written, Ordering::Relaxed);
            start = end;
        }
        progress.advance(1);
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sys::file_backend::plan::{self, Fault};

    #[test]
    fn a_shard_file_that_failed_to_open_fails_its_other_writers_as_a_consequence() {
        let _serial = plan::SERIAL.lock().unwrap_or_else(|e| e.into_inner());
        let dir = tempfile::tempdir().unwrap();
        let writer = RunFile::when_written(layout::shard_file(dir.path(), 0), Cached::Keep);
        // The file is created, then its first write fails.
        let plan = plan::install(Fault::FailWrite(0));
        let first = writer.append_keys(0, &[1, 2, 3], KeyCodec::EliasFano);
        plan::clear();
        assert!(plan.fired.load(std::sync::atomic::Ordering::SeqCst));
        let first = first.unwrap_err();
        assert!(first.to_string().contains("injected fault"), "{first}");
        // Another table's writer must not try to create the file again ("File exists").
        let second = writer
            .append_keys(1, &[4], KeyCodec::EliasFano)
            .unwrap_err();
        assert!(second.follows_earlier_io_error(), "{second}");
        assert!(first.cause(second).to_string().contains("injected fault"));
        assert!(writer.finish().unwrap_err().follows_earlier_io_error());
    }

    /// Blocks handed over whole (committed as they are, or copied when blocks are pending
    /// already, when they are few, or when they are more than a transaction) and blocks pushed
    /// one at a time all land in the table, in order, once.
    #[test]
    fn blocks_pushed_whole_or_one_by_one_are_all_appended_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("docs.redb");
        let file = RunFile::create(&path, Cached::Keep).unwrap();
        let mut appender = file.entries(DOCS);
        let mut expected: Vec<(Vec<u8>, Vec<u8>)> = Vec::new();
        let mut gather = |count: usize| {
            let mut blocks = EncodedBlocks::default();
            for _ in 0..count {
                let n = expected.len() as u64;
                let (key, block) = (n.to_be_bytes().to_vec(), vec![(n % 251) as u8; 4000]);
                blocks.push(&key, &block);
                expected.push((key, block));
            }
            blocks
        };
        // ~3 MB, its own transaction; then few; then one block; then ~3 MB with blocks
        // pending; then ~10 MB, more than a transaction.
        appender.push_all(gather(750)).unwrap();
        appender.push_all(gather(10)).unwrap();
        let one = gather(1);
        for (key, block) in one.iter() {
            appender.push(key, block).unwrap();
        }
        appender.push_all(gather(750)).unwrap();
        appender.push_all(gather(2500)).unwrap();
        let bytes = appender.finish().unwrap();
        assert_eq!(bytes, expected.len() as u64 * 4000);
        assert!(file.finish().unwrap());

        use redb::{ReadableDatabase, ReadableTable};
        let db = Database::open(&path).unwrap();
        let txn = db.begin_read().unwrap();
        let table = txn.open_table(DOCS).unwrap();
        let stored: Vec<(Vec<u8>, Vec<u8>)> = table
            .iter()
            .unwrap()
            .map(|entry| {
                let (key, block) = entry.unwrap();
                (key.value().to_vec(), block.value().to_vec())
            })
            .collect();
        assert!(
            stored == expected,
            "{} blocks stored, {} appended",
            stored.len(),
            expected.len()
        );
    }
}
