//! Writing a run's files: the docs file and the shard files of the permuted tables.
//!
//! A run is written whole, each file committed with redb's immediate durability and the run
//! directory fsynced, before any catalog names it.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};

use rayon::prelude::*;
use redb::{Database, TableDefinition};

use super::{table_name, RunContents, DOCS, POSTINGS, SKETCHES};
use crate::error::{all_or_cause, Error, Result};
use crate::format::block::entries;
use crate::format::block::keys;
use crate::format::block::postings::Posting;
use crate::format::block::sketches::SketchEntry;
use crate::format::catalog::RunMeta;
use crate::format::layout::{self, sync_dir};
use crate::sys::progress::{Phase, Progress};
use crate::tables::permutation::Permutations;
use crate::tables::sorted_tables;

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

/// Writes run `id` into `run_dir` and returns its description for the catalog.
pub(crate) fn write_run(
    run_dir: &Path,
    id: u64,
    perms: &Permutations,
    shards: usize,
    contents: &RunContents<'_>,
    progress: &dyn Progress,
) -> Result<RunMeta> {
    let (docs, tables) = rayon::join(
        || write_docs(run_dir, contents),
        || {
            let tables = perms.tables().len() as u64;
            let _phase = Phase::start(progress, "writing tables", tables);
            write_tables(run_dir, perms, shards, contents.fingerprints, progress)
        },
    );
    let (docs_bytes, postings_bytes, (sketches, sketches_bytes)) = docs?;
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
        .create_with_backend(crate::sys::file_backend::backend(path, file)?)
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

/// Writes docs.redb; returns (docs bytes, postings bytes, (sketches, sketches bytes)).
/// Documents, postings and sketches are tables of one write transaction, written at once from
/// several threads; a run without sketches has no sketches table.
fn write_docs(run_dir: &Path, contents: &RunContents<'_>) -> Result<(u64, u64, (u64, u64))> {
    let path = layout::docs_file(run_dir);
    let db = create_db(&path)?;
    let txn = db.begin_write().map_err(|e| Error::redb(&path, e))?;
    let documents = contents
        .documents
        .iter()
        .map(|&(hash, id, state)| (hash, id.as_bytes(), state));
    let postings = contents
        .postings
        .iter()
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
            append_all_entries(&txn, &path, SKETCHES, entries)?,
        ))
    };
    let (docs_bytes, (postings_bytes, sketches)) = rayon::join(
        || append_all_entries(&txn, &path, DOCS, documents),
        || {
            rayon::join(
                || append_all_entries(&txn, &path, POSTINGS, postings),
                write_sketches,
            )
        },
    );
    let bytes = match (docs_bytes, postings_bytes, sketches) {
        (Ok(docs), Ok(postings), Ok(sketches)) => (docs, postings, sketches),
        (docs, postings, sketches) => {
            return Err(all_or_cause(vec![
                docs.map(|_| ()),
                postings.map(|_| ()),
                sketches.map(|_| ()),
            ])
            .expect_err("one failed"))
        }
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
    Error::AfterEarlierFailure {
        path: path.to_path_buf(),
    }
}

/// Writes every permuted table into the shard files; returns (shard files, files present,
/// bytes per table).
fn write_tables(
    run_dir: &Path,
    perms: &Permutations,
    shards: usize,
    fingerprints: &[u64],
    progress: &dyn Progress,
) -> Result<(u16, Vec<u16>, Vec<u64>)> {
    let files = shard_file_count(fingerprints.len(), perms.tables().len(), shards);
    let shards_per_file = shards / files;
    let writers: Vec<ShardWriter> = (0..files)
        .map(|s| ShardWriter::new(layout::shard_file(run_dir, s)))
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
        let writer = ShardWriter::new(layout::shard_file(dir.path(), 0));
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
