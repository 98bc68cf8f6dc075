//! Rewriting a committed run in the next format version, for `migrate`. Each step rewrites
//! only what changed and hard-links the rest (no bytes copied).
//!
//! Format 3 added the batch to each posting. So a format 2 run becomes a new run whose shard
//! files are hard links to the old ones and whose docs file holds the old docs blocks as they
//! were and the postings rebuilt with each document's batch, looked up in the docs table a
//! chunk of postings at a time: memory holds one chunk, whatever the run's size.
//!
//! Format 5 changed the layout of key blocks. So a format 3 or 4 run becomes a new run whose
//! docs file is a hard link to the old one and whose shard files are rewritten a table at a
//! time, the shard files in parallel: memory holds [`KEY_CHUNK`] keys per file at a time.
//!
//! Format 6 added each run's id filter, a table of the docs file. So a format 5 run becomes a
//! new run whose shard files are hard links to the old ones and whose docs file is a copy of
//! the old one with the filter added, made from a scan of its docs blocks (one at a time).
//!
//! Format 7 moved sketches into their postings, format 8 (without sketches) names each
//! posting's documents by id-hash prefix and compresses docs blocks, and format 9 (with
//! sketches) moves the sketches into the docs entries and names the postings' documents too.
//! Each makes a new run whose shard files are hard links to the old ones and whose docs file
//! holds the old id filter blocks as they were, the postings written again and the docs
//! blocks copied (7) or written again (8, 9), each read a block at a time (9: the sketches of
//! a chunk of documents at a time). Format 10 (with sketches) moves the sketches out of the
//! docs entries into the sketch area: see [`sketch_area`].

mod sketch_area;

pub(crate) use sketch_area::sketches_into_area;

use std::path::Path;

use rayon::prelude::*;
use redb::TableDefinition;

use super::read::DocsFile;
use super::run_file::{append_entries, KeyStream, RunFile};
use super::{RunReader, DOCS, DOCS_TABLE, IDS, POSTINGS};

use crate::error::{all_or_cause, Error, Result};
use crate::format::block::docs::{id_hash, DocState, SketchedDoc};
use crate::format::block::entries::{Keys, Payload, PayloadReader};
use crate::format::block::entry_writer::EntryWriter;
use crate::format::block::id_filter;
use crate::format::block::keys::KeyCodec;
use crate::format::block::named_postings::{self, NamedWriter};
use crate::format::block::postings::{self, Posting, SketchedPosting};
use crate::format::block::sketches::SketchEntry;
use crate::format::catalog::RunMeta;
use crate::format::layout;
use crate::sys::writeback::Cached;

/// Postings looked up and written per step: 1M, about 50 MB with their ids.
pub(crate) const CHUNK: usize = 1 << 20;

/// Keys gathered per shard file before they are encoded and appended: 8 MB.
const KEY_CHUNK: usize = 1 << 20;

/// A format 2 posting: no payload.
struct BarePosting;

impl Payload for BarePosting {
    fn encode(&self, _out: &mut Vec<u8>) {}

    fn decode(_reader: &mut PayloadReader<'_, '_>) -> Result<Self> {
        Ok(BarePosting)
    }
}

/// Writes `old`, a format 2 run stored in `old_dir`, as run `id` in `run_dir`, in format 3,
/// looking up `chunk` postings at a time ([`CHUNK`]); returns the new run's description.
pub(crate) fn postings_with_batches(
    old: &RunReader,
    old_dir: &Path,
    run_dir: &Path,
    id: u64,
    chunk_len: usize,
) -> Result<RunMeta> {
    let meta = old.meta();
    let (file, docs) = new_docs_file_linked(old, old_dir, run_dir)?;
    let postings_bytes = append_counted(&file, POSTINGS, |mut counted| {
        let mut writer = EntryWriter::new(Keys::Stored);
        let mut scan = docs.scan_postings_as::<BarePosting>(0, u64::MAX)?;
        let mut chunk: Vec<(u64, String)> = Vec::new();
        let mut block = Vec::new();
        loop {
            let more = scan.next_block(&mut block)?;
            chunk.extend(block.drain(..).map(|(fp, id, _)| (fp, id)));
            if chunk.len() >= chunk_len || (!more && !chunk.is_empty()) {
                for (fp, id, batch) in with_batches(old, old_dir, &chunk)? {
                    writer.push(fp, id.as_bytes(), &Posting { batch }, &mut counted)?;
                }
                chunk.clear();
            }
            if !more {
                break;
            }
        }
        writer.finish(&mut counted)
    })?;
    file.finish()?;
    layout::sync_dir(run_dir)?;
    Ok(RunMeta {
        id,
        postings_bytes,
        ..meta.clone()
    })
}

/// Writes `old`, a run stored in `old_dir`, as run `id` in `run_dir` with its key blocks in
/// `codec`'s layout; returns the new run's description.
pub(crate) fn tables_as(
    old: &RunReader,
    old_dir: &Path,
    run_dir: &Path,
    id: u64,
    codec: KeyCodec,
) -> Result<RunMeta> {
    let meta = old.meta();
    let (from, to) = (layout::docs_file(old_dir), layout::docs_file(run_dir));
    std::fs::hard_link(&from, &to).map_err(|e| Error::io(&to, e))?;
    let tables = old.tables();
    // As the reader groups shards into files.
    let files = usize::from(meta.shard_files).clamp(1, old.shards());
    let per_file = old.shards() / files;
    let written: Vec<Result<Vec<u64>>> = meta
        .present_files
        .par_iter()
        .map(|&f| {
            let f = usize::from(f);
            let lacking = || {
                Error::corrupt(format!(
                    "run {} lists shard file {f}, which it lacks (it has {files})",
                    meta.id
                ))
            };
            if f >= files {
                return Err(lacking());
            }
            let file = RunFile::when_written(layout::shard_file(run_dir, f), Cached::Keep);
            let old_file = old.shard(f * per_file)?.ok_or_else(lacking)?;
            let mut bytes = vec![0u64; tables];
            let (mut keys, mut pending) = (Vec::new(), Vec::with_capacity(KEY_CHUNK));
            for (t, bytes) in bytes.iter_mut().enumerate() {
                let mut scan = old_file.scan(t, 0, u64::MAX)?;
                loop {
                    let more = scan.next_block(&mut keys)?;
                    if pending.len() + keys.len() > KEY_CHUNK {
                        *bytes += file.append_keys(t, &pending, codec)?;
                        pending.clear();
                    }
                    pending.extend_from_slice(&keys);
                    if !more {
                        break;
                    }
                }
                if !pending.is_empty() {
                    *bytes += file.append_keys(t, &pending, codec)?;
                    pending.clear();
                }
            }
            // A present file held keys: a rewrite without any lost them.
            if !file.finish()? {
                return Err(lacking());
            }
            Ok(bytes)
        })
        .collect();
    let mut table_bytes = vec![0u64; tables];
    for bytes in all_or_cause(written)? {
        table_bytes
            .iter_mut()
            .zip(bytes)
            .for_each(|(sum, b)| *sum += b);
    }
    layout::sync_dir(run_dir)?;
    Ok(RunMeta {
        id,
        table_bytes,
        ..meta.clone()
    })
}

/// Writes `old`, a format 5 run stored in `old_dir`, as run `id` in `run_dir`, with an id
/// filter; returns the new run's description.
pub(crate) fn with_id_filter(
    old: &RunReader,
    old_dir: &Path,
    run_dir: &Path,
    id: u64,
) -> Result<RunMeta> {
    let meta = old.meta();
    link_shard_files(meta, old_dir, run_dir)?;
    let (from, to) = (layout::docs_file(old_dir), layout::docs_file(run_dir));
    std::fs::copy(&from, &to).map_err(|e| Error::io(&to, e))?;
    let file = RunFile::reopen(&to, Cached::Keep)?;
    let bits = id_filter::bits_for(meta.documents);
    let mut ids = KeyStream::new(&file, IDS, KeyCodec::EliasFano);
    let mut scan = old.docs()?.scan_documents()?;
    let mut block = Vec::new();
    loop {
        let more = scan.next_block(&mut block)?;
        for &(hash, _, _) in &block {
            ids.push(id_filter::prefix(hash, bits))?;
        }
        if !more {
            break;
        }
    }
    let ids_bytes = ids.finish()?;
    file.finish()?;
    layout::sync_dir(run_dir)?;
    Ok(RunMeta {
        id,
        id_bits: bits,
        ids_bytes,
        ..meta.clone()
    })
}

/// Writes `old`, a format 6 run of a store with sketches stored in `old_dir`, as run `id` in
/// `run_dir`, with each sketch in its posting; returns the new run's description. The docs
/// and id filter blocks are copied as they are; the postings and the sketches table are
/// walked together, a block of each at a time, both in `(fingerprint, id)` order.
pub(crate) fn sketches_into_postings(
    old: &RunReader,
    old_dir: &Path,
    run_dir: &Path,
    id: u64,
) -> Result<RunMeta> {
    let meta = old.meta();
    let (file, docs) = new_docs_file_linked(old, old_dir, run_dir)?;
    let mut ids = file.keys(IDS);
    docs.for_each_id_filter_block(|last, block| {
        ids.push(&<u64 as redb::Value>::as_bytes(&last), block)
    })?;
    ids.finish()?;
    let (mut sketches, mut sketch_bytes) = (0u64, 0u64);
    let bytes = append_counted(&file, POSTINGS, |mut counted| {
        let mut writer = EntryWriter::new(Keys::Stored).with_sketch_flags();
        let mut postings = docs.scan_postings()?;
        let mut table = docs.scan_sketches_in(0, u64::MAX)?;
        let (mut block, mut sketch_block) = (Vec::new(), Vec::<(u64, String, SketchEntry)>::new());
        let mut at = 0; // sketch_block[at] is the first sketch entry not passed
        loop {
            let more = postings.next_block(&mut block)?;
            for (fp, id, posting) in &block {
                // The sketch entry at (fp, id), reading the sketches' blocks as far as it.
                let mut sketch = None;
                while let Some(scan) = table.as_mut() {
                    match sketch_block.get(at) {
                        Some((k, i, _)) if (*k, i.as_str()) < (*fp, id.as_str()) => at += 1,
                        Some(_) => break,
                        None => {
                            at = 0;
                            if !scan.next_block(&mut sketch_block)? {
                                table = None;
                            }
                        }
                    }
                }
                if let Some((k, i, entry)) = sketch_block.get(at) {
                    if (*k, i.as_str(), entry.batch) == (*fp, id.as_str(), posting.batch) {
                        sketch = Some(entry.sketch.clone());
                        sketches += 1;
                        sketch_bytes += postings::sketch_bytes_in_posting(entry.sketch.len());
                    }
                }
                let batch = posting.batch;
                let payload = SketchedPosting { batch, sketch };
                writer.push(*fp, id.as_bytes(), &payload, &mut counted)?;
            }
            if !more {
                break;
            }
        }
        writer.finish(&mut counted)
    })?;
    file.finish()?;
    layout::sync_dir(run_dir)?;
    if sketches != meta.sketches {
        return Err(Error::corrupt(format!(
            "run {} holds {sketches} sketches of its postings; the catalog says {}",
            meta.id, meta.sketches
        ))
        .in_file(&layout::docs_file(old_dir)));
    }
    Ok(RunMeta {
        id,
        postings_bytes: bytes - sketch_bytes,
        sketches,
        sketches_bytes: sketch_bytes,
        ..meta.clone()
    })
}

/// Writes `old`, a format 7 run of a store without sketches stored in `old_dir`, as run `id`
/// in `run_dir`, its postings naming their documents (format 8); returns the new run's
/// description. The docs blocks are written again (compressed where that pays), the id
/// filter blocks copied as they are; the postings are read a block at a time and written
/// again, the ids of one fingerprint at a time in memory.
pub(crate) fn named_postings(
    old: &RunReader,
    old_dir: &Path,
    run_dir: &Path,
    id: u64,
) -> Result<RunMeta> {
    let meta = old.meta();
    link_shard_files(meta, old_dir, run_dir)?;
    let file = RunFile::create(&layout::docs_file(run_dir), Cached::Keep)?;
    let docs = old.docs()?;
    // The docs blocks written again as format 8 writes them (compressed where that pays),
    // from a scan of the old ones.
    let docs_bytes = append_counted(&file, DOCS, |mut counted| {
        let mut writer = EntryWriter::new(Keys::IdHashes).compressed();
        let mut scan = docs.scan_documents()?;
        let mut block = Vec::new();
        while scan.next_block(&mut block)? {
            for (hash, id, state) in &block {
                writer.push(*hash, id.as_bytes(), state, &mut counted)?;
            }
        }
        writer.finish(&mut counted)
    })?;
    let postings_bytes = finish_named(file, docs, run_dir)?;
    Ok(RunMeta {
        id,
        docs_bytes,
        postings_bytes,
        ..meta.clone()
    })
}

/// Documents whose sketches [`sketches_into_docs`] looks up at once: 32 MiB of 128-byte
/// sketches, 256 MiB of the largest.
const SKETCH_CHUNK: usize = 1 << 18;

/// Writes `old`, a format 8 run of a store with sketches (whose postings hold the ids and the
/// sketches) stored in `old_dir`, as run `id` in `run_dir` in format 9: each sketch in its
/// docs entry, the postings naming their documents; returns the new run's description. The
/// docs blocks are read a block at a time and written again with the sketches of
/// [`SKETCH_CHUNK`] documents at a time, looked up in the old postings (each postings block
/// read at most once per chunk that has a document in it: in a run much larger than a chunk,
/// about a block read a document); the id filter blocks are copied as they are; the postings
/// are written again as [`named_postings`] writes them. Memory: a chunk's documents, ids and
/// sketches (about 90 MB with 128-byte sketches and 60-byte ids).
pub(crate) fn sketches_into_docs(
    old: &RunReader,
    old_dir: &Path,
    run_dir: &Path,
    id: u64,
    sketch_bytes: u16,
) -> Result<RunMeta> {
    let meta = old.meta();
    link_shard_files(meta, old_dir, run_dir)?;
    let file = RunFile::create(&layout::docs_file(run_dir), Cached::Keep)?;
    let docs = old.docs()?;
    let bytes = usize::from(sketch_bytes);
    let mut sketches = 0u64;
    let docs_bytes = append_counted(&file, DOCS, |mut counted| {
        let mut writer = EntryWriter::new(Keys::IdHashes)
            .with_sketch_flags()
            .compressed();
        let mut scan = docs.scan_documents()?;
        let (mut chunk, mut block) = (Vec::new(), Vec::new());
        loop {
            let more = scan.next_block(&mut block)?;
            chunk.append(&mut block);
            if chunk.len() >= SKETCH_CHUNK || !more {
                // The live documents in (fingerprint, id) order, as the postings hold them.
                let mut live: Vec<(u64, &str, u64, usize)> = (chunk.iter().enumerate())
                    .filter_map(|(i, (_, id, state))| match *state {
                        DocState::Live { fingerprint, batch } => {
                            Some((fingerprint, id.as_str(), batch, i))
                        }
                        DocState::Deleted { .. } => None,
                    })
                    .collect();
                live.sort_unstable_by(|a, b| (a.0, a.1).cmp(&(b.0, b.1)));
                let keys: Vec<(u64, &str, u64)> = live
                    .iter()
                    .map(|&(fp, id, batch, _)| (fp, id, batch))
                    .collect();
                let mut rows = vec![0u8; keys.len() * bytes];
                let mut found = vec![false; keys.len()];
                docs.sketches_sorted(&keys, &mut rows, (bytes, bytes), &mut found)?;
                let mut sketch_of: Vec<Option<&[u8]>> = vec![None; chunk.len()];
                for (k, &(_, _, _, i)) in live.iter().enumerate() {
                    sketch_of[i] = found[k].then(|| &rows[k * bytes..][..bytes]);
                }
                for ((hash, id, state), sketch) in chunk.iter().zip(sketch_of) {
                    sketches += u64::from(sketch.is_some());
                    let payload = SketchedDoc {
                        state: *state,
                        sketch: sketch.map(<[u8]>::to_vec),
                    };
                    writer.push(*hash, id.as_bytes(), &payload, &mut counted)?;
                }
                chunk.clear();
            }
            if !more {
                break;
            }
        }
        writer.finish(&mut counted)
    })?;
    if sketches != meta.sketches {
        return Err(Error::corrupt(format!(
            "run {} holds {sketches} sketches of its documents; the catalog says {}",
            meta.id, meta.sketches
        ))
        .in_file(&layout::docs_file(old_dir)));
    }
    let postings_bytes = finish_named(file, docs, run_dir)?;
    Ok(RunMeta {
        id,
        docs_bytes,
        postings_bytes,
        sketches,
        sketches_bytes: 0,
        ..meta.clone()
    })
}

/// Ends a new docs file `file` (of a run in `run_dir`) whose docs blocks are written: the id
/// filter blocks of the old run's `docs` copied, its postings written again as named
/// postings, the file and directory made durable; returns the postings' block bytes.
fn finish_named(file: RunFile, docs: &DocsFile, run_dir: &Path) -> Result<u64> {
    copy_id_filter(&file, docs)?;
    let postings_bytes = append_named_postings(&file, docs)?;
    file.finish()?;
    layout::sync_dir(run_dir)?;
    Ok(postings_bytes)
}

/// Copies the id filter blocks of `docs` into `file` as they are.
fn copy_id_filter(file: &RunFile, docs: &DocsFile) -> Result<()> {
    let mut ids = file.keys(IDS);
    docs.for_each_id_filter_block(|last, block| {
        ids.push(&<u64 as redb::Value>::as_bytes(&last), block)
    })?;
    ids.finish()?;
    Ok(())
}

/// Writes the postings of `docs`, which hold their ids, into `file` as named postings (format
/// 8); returns their block bytes. The postings are read a block at a time, the ids of one
/// fingerprint at a time in memory.
fn append_named_postings(file: &RunFile, docs: &DocsFile) -> Result<u64> {
    append_counted(file, POSTINGS, |mut counted| {
        let mut writer = NamedWriter::default();
        let mut postings = docs.scan_postings()?;
        // The documents `(fingerprint, id hash)` of the fingerprint being read.
        let mut same: Vec<(u64, u64)> = Vec::new();
        let mut block = Vec::new();
        while postings.next_block(&mut block)? {
            for (fp, id, _) in &block {
                if same.first().is_some_and(|&(f, _)| f != *fp) {
                    for posting in named_postings::of_documents(same.drain(..)) {
                        writer.push(posting, &mut counted)?;
                    }
                }
                same.push((*fp, id_hash(id.as_bytes())));
            }
        }
        for posting in named_postings::of_documents(same.drain(..)) {
            writer.push(posting, &mut counted)?;
        }
        writer.finish(&mut counted)
    })
}

/// Starts the new run of `old` (stored in `old_dir`) in `run_dir`: its shard files hard links
/// to the old ones, and a new docs file holding the old docs blocks as they were. Returns the
/// file, for the tables a step writes again, and the old run's docs file.
fn new_docs_file_linked<'r>(
    old: &'r RunReader,
    old_dir: &Path,
    run_dir: &Path,
) -> Result<(RunFile, &'r DocsFile)> {
    link_shard_files(old.meta(), old_dir, run_dir)?;
    let file = RunFile::create(&layout::docs_file(run_dir), Cached::Keep)?;
    let docs = old.docs()?;
    append_entries(&file, DOCS, |emit| {
        docs.for_each_docs_block(|key, block| emit(key, block))
    })?;
    Ok((file, docs))
}

/// Hard-links the shard files of run `meta` in `old_dir` into `run_dir`, unchanged.
fn link_shard_files(meta: &RunMeta, old_dir: &Path, run_dir: &Path) -> Result<()> {
    for &f in &meta.present_files {
        let (from, to) = (
            layout::shard_file(old_dir, usize::from(f)),
            layout::shard_file(run_dir, usize::from(f)),
        );
        std::fs::hard_link(&from, &to).map_err(|e| Error::io(&to, e))?;
    }
    Ok(())
}

/// The batch of each posting `(fingerprint, id)` of `chunk`, from the run's docs entries.
fn with_batches<'c>(
    run: &RunReader,
    run_dir: &Path,
    chunk: &'c [(u64, String)],
) -> Result<Vec<(u64, &'c str, u64)>> {
    let mut by_id: Vec<(u64, &str, usize)> = chunk
        .iter()
        .enumerate()
        .map(|(i, (_, id))| (id_hash(id.as_bytes()), id.as_str(), i))
        .collect();
    by_id.sort_unstable();
    let keys: Vec<(u64, &str)> = by_id.iter().map(|&(h, id, _)| (h, id)).collect();
    let mut states = vec![None; keys.len()];
    run.docs()?.states_sorted(&keys, &mut states)?;
    let mut batches = vec![0u64; chunk.len()];
    for (&(_, id, i), state) in by_id.iter().zip(states) {
        match state {
            Some(DocState::Live { fingerprint, batch }) if fingerprint == chunk[i].0 => {
                batches[i] = batch;
            }
            _ => {
                return Err(Error::corrupt(format!(
                    "posting ({:016x}, {id}) has no live document entry",
                    chunk[i].0
                ))
                .at(&layout::docs_file(run_dir), DOCS_TABLE, None))
            }
        }
    }
    Ok(chunk
        .iter()
        .zip(batches)
        .map(|((fp, id), batch)| (*fp, id.as_str(), batch))
        .collect())
}

/// [`append_entries`] that returns the bytes of the blocks `fill` hands to the closure it gets.
fn append_counted(
    file: &RunFile,
    def: TableDefinition<'static, &'static [u8], &'static [u8]>,
    fill: impl FnOnce(&mut dyn FnMut(&[u8], &[u8]) -> Result<()>) -> Result<()>,
) -> Result<u64> {
    append_entries(file, def, |emit| {
        let mut bytes = 0u64;
        fill(&mut |key, block| {
            bytes += block.len() as u64;
            emit(key, block)
        })?;
        Ok(bytes)
    })
}
