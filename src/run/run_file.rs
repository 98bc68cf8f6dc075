//! A redb file of a run being written: blocks appended to its tables from several threads,
//! in transactions that take turns, and the file made durable once, when it is finished.
//!
//! Blocks reach a file through [`RunFile`]: appended in transactions of at most
//! [`TRANSACTION_BYTES`], each committed without a sync, and the file made durable once, when
//! it is finished. One transaction for a whole file cost each page twice: redb computes the
//! checksums of a transaction's pages at its commit, so every page its write buffer had
//! already spilled to the file was read back and written again (docs/benchmarks.md, "Each
//! page written once"). Nothing reads a run before the catalog names it, so its intermediate
//! commits need no durability.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use redb::{Database, TableDefinition};

use super::{table_name, SKETCH_AREA};
use crate::error::{Error, Result};
use crate::format::block::entry_writer::EntryWriter;
use crate::format::block::keys::{self, KeyCodec};
use crate::format::block::sketch_area::AreaWriter;
use crate::sys::file_backend::{self, DeferredSyncs};
use crate::sys::writeback::Cached;

/// Cache given to each redb file a writer creates: the write buffer spills at half of it.
/// Every page it keeps is fresh memory, so a larger cache made inserts and merges slower
/// and their peak higher (docs/benchmarks.md, "The writer's cache").
const WRITER_CACHE_BYTES: usize = 8 << 20;

/// Creates a new redb file for writing a run, whose written pages `cached` says what to do
/// with.
fn create_db(path: &Path, cached: Cached, syncs: DeferredSyncs) -> Result<Database> {
    open_db(path, cached, true, syncs)
}

/// Opens a redb file for writing a run: a new one, or (`new` false) one a writer closed. Its
/// syncs are skipped until `syncs` ends their deferral.
fn open_db(path: &Path, cached: Cached, new: bool, syncs: DeferredSyncs) -> Result<Database> {
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(new)
        .open(path)
        .map_err(|e| Error::io(path, e))?;
    Database::builder()
        .set_cache_size(WRITER_CACHE_BYTES)
        .create_with_backend(file_backend::backend(path, file, cached, syncs)?)
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
    /// Ended when the file is finished.
    syncs: DeferredSyncs,
}

impl RunFile {
    /// The file at `path`, created now; its written pages are `cached` as it says.
    pub(crate) fn create(path: &Path, cached: Cached) -> Result<RunFile> {
        let syncs = DeferredSyncs::default();
        Ok(RunFile {
            path: path.to_path_buf(),
            db: Mutex::new(Some(Some(create_db(path, cached, syncs.clone())?))),
            cached,
            syncs,
        })
    }

    /// The redb file at `path`, which a writer closed, opened to take more tables (a copy of
    /// a committed run's file, being made into a new run's).
    pub(crate) fn reopen(path: &Path, cached: Cached) -> Result<RunFile> {
        let syncs = DeferredSyncs::default();
        Ok(RunFile {
            path: path.to_path_buf(),
            db: Mutex::new(Some(Some(open_db(path, cached, false, syncs.clone())?))),
            cached,
            syncs,
        })
    }

    /// The file at `path`, created when its first block comes.
    pub(crate) fn when_written(path: PathBuf, cached: Cached) -> RunFile {
        RunFile {
            path,
            db: Mutex::new(None),
            cached,
            syncs: DeferredSyncs::default(),
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
            *db = Some(Some(create_db(
                &self.path,
                self.cached,
                self.syncs.clone(),
            )?));
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
                // An empty transaction with immediate durability persists the ones before:
                // its sync is the first to reach the disk.
                self.syncs.end();
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

    /// Calls `f` on each block, which it may change but not resize.
    pub(crate) fn for_each_block_mut(
        &mut self,
        mut f: impl FnMut(&mut [u8]) -> Result<()>,
    ) -> Result<()> {
        let mut start = 0;
        for &(key_end, end) in &self.ends {
            f(&mut self.bytes[key_end..end])?;
            start = end;
        }
        debug_assert_eq!(start, self.bytes.len());
        Ok(())
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

/// The sketch area (format 10) of a docs file being written: sketches cut into its blocks in
/// order, as they come from the docs entries' writers.
pub(crate) struct AreaAppender<'f> {
    out: Appender<'f>,
    writer: AreaWriter,
}

impl<'f> AreaAppender<'f> {
    /// The sketch area of `file`, of `sketch_bytes`-byte sketches.
    pub(crate) fn new(file: &'f RunFile, sketch_bytes: usize) -> Self {
        AreaAppender {
            out: file.entries(SKETCH_AREA),
            writer: AreaWriter::new(sketch_bytes),
        }
    }

    /// Appends `sketches`, whole sketches one after another.
    pub(crate) fn push(&mut self, sketches: &[u8]) -> Result<()> {
        let out = &mut self.out;
        self.writer
            .push(sketches, &mut |key, block| out.push(key, block))
    }

    /// Appends the sketches `docs` has gathered.
    pub(crate) fn take(&mut self, docs: &mut EntryWriter) -> Result<()> {
        docs.drain_sketches(|sketches| self.push(sketches))
    }

    /// The sketches appended so far.
    pub(crate) fn written(&self) -> u64 {
        self.writer.written()
    }

    /// Writes the last block; returns the area's block bytes.
    pub(crate) fn finish(mut self) -> Result<u64> {
        let out = &mut self.out;
        self.writer.finish(&mut |key, block| out.push(key, block))?;
        self.out.finish()
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::layout;
    use crate::run::DOCS;
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

    /// The syncs redb makes while a run file is written (at its creation and each time it
    /// grows) wait until it is finished, and finishing it syncs it.
    #[test]
    fn a_run_file_is_synced_once_finished_and_not_before() {
        let _serial = plan::SERIAL.lock().unwrap_or_else(|e| e.into_inner());
        // A plan that never fires counts the syncs redb asks for.
        let plan = plan::install(Fault::FailWrite(u64::MAX));
        let dir = tempfile::tempdir().unwrap();
        let writer = RunFile::when_written(layout::shard_file(dir.path(), 0), Cached::Keep);
        let syncs = writer.syncs.clone();
        // Enough keys for the file to grow many times (each growth syncs in redb).
        let keys: Vec<u64> = (0..2_000_000u64).map(|k| k * 0x9E37_79B9).collect();
        for t in 0..4 {
            writer.append_keys(t, &keys, KeyCodec::EliasFano).unwrap();
        }
        let asked = plan.counts().1;
        assert!(asked > 0, "redb asked for no sync: the test shows nothing");
        assert_eq!(syncs.made(), 0);
        let finished = writer.finish();
        plan::clear();
        assert!(finished.unwrap());
        assert!(syncs.made() >= 1);
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
