//! Merging runs into one: the streaming k-way merge behind compaction.
//!
//! The inputs are always the newest runs of the store (a suffix of the catalog's list), so no
//! run outside the merge can override what they say. The merged run keeps, in one pass over
//! each table:
//! - **docs**: each id's newest entry; a deletion is dropped when the merge is full (no older
//!   run is left for it to override); the id filter (format 6) is made of what is kept;
//! - **postings**: the `(fingerprint, id)` pairs that are still live;
//! - **tables**: every key except those of *dead* fingerprints, whose every posting is gone.
//!
//! Dropping dead fingerprints is safe in a suffix merge: a fingerprint's table entry is written
//! by the first run that posts it (or the first after it was dropped), so every live posting of
//! a fingerprint is in the run that holds its keys or a newer one, i.e. inside the merge.
//!
//! Memory is one block per input and table being merged, plus the ids that more than one input
//! mentions (their final state decides which postings live) and the dead fingerprints.
//!
//! Here, the run a merge writes ([`merge_runs`]); a file per part of it: cursor.rs (the heads
//! of the sorted inputs), entries.rs (the docs file's tables, merged in key ranges in
//! parallel), tables.rs (the permuted tables, file by file), sorted.rs (the merge of sorted
//! key lists), dead.rs (the fingerprints the tables drop).

use std::path::Path;

use rayon::prelude::*;

use super::run_file::{Appender, AreaAppender, RunFile};
use super::write::shard_file_count;
use super::{RunReader, DOCS, IDS, POSTINGS, SKETCHES};
use crate::error::{Error, Result};
use crate::format::block::entry_writer::shift_area;
use crate::format::block::{id_filter, named_postings};
use crate::format::catalog::{RunFormat, RunMeta};
use crate::format::layout::{self, sync_dir};
use crate::sys::progress::{Phase, Progress};
use crate::sys::writeback::Cached;
use crate::tables::permutation::Permutations;

mod cursor;
mod dead;
mod entries;
mod named;
mod sorted;
mod tables;

use dead::DeadSet;
use entries::{
    merge_documents, merge_in_parts, merge_postings, Changes, EntryCounts, SketchPart, PART_ENTRIES,
};
use named::merge_named_postings;
use tables::merge_shard_file;

/// What a merge wrote and dropped.
#[derive(Clone, Debug)]
pub(crate) struct Merged {
    pub meta: RunMeta,
    /// Document entries of the inputs not carried over (overridden, or deletions dropped).
    pub dropped_documents: u64,
    /// Fingerprints dropped from the tables because no id has them any more.
    pub dropped_fingerprints: u64,
    /// Table entries read from the inputs, over all tables.
    pub table_entries: u64,
}

/// Merges `inputs` (the store's newest runs, oldest first) into run `id` at `out_dir`. `full`
/// says the inputs are all the store's runs, so deletions need not be kept.
pub(crate) fn merge_runs(
    inputs: &[RunReader],
    full: bool,
    out_dir: &Path,
    id: u64,
    (perms, shards, format): (&Permutations, usize, RunFormat),
    progress: &dyn Progress,
) -> Result<Merged> {
    let codec = format.codec;
    let _phase = Phase::start(progress, &format!("merging {} runs", inputs.len()), 0);
    // The output is at most the inputs' size.
    let cached = Cached::for_output(inputs.iter().map(|r| r.meta().bytes()).sum());
    let docs_path = layout::docs_file(out_dir);
    let docs_file = RunFile::create(&docs_path, cached)?;
    let documents: u64 = inputs.iter().map(|r| r.meta().documents).sum();
    // The filter is sized for the inputs' entries, at least the output's.
    let id_bits = format.id_filter.then(|| id_filter::bits_for(documents));
    // At least two ranges per thread, so that small merges (and the tests) split too; no
    // more than the filter has prefixes, since ranges start where a prefix's hashes do.
    let mut parts = documents
        .div_ceil(PART_ENTRIES)
        .max(2 * rayon::current_num_threads() as u64);
    // Ranges start where a filter's prefix starts, and where a named posting's does (format
    // 8: the docs' merge learns what it needs of each prefix within one range).
    let mut align = id_bits.map_or(0, |b| 64 - u32::from(b));
    if format.named_postings {
        align = align.max(64 - named_postings::PREFIX_BITS);
    }
    if align > 0 {
        parts = parts.min(1 << (64 - align));
    }
    let mut changed = Changes::default();
    let mut sketches_in_docs = EntryCounts::default();
    let mut appender = docs_file.entries(DOCS);
    let mut area = (format.sketch_area)
        .then(|| AreaAppender::new(&docs_file, usize::from(format.sketch_bytes)));
    let mut ids_out = id_bits.map(|_| docs_file.keys(IDS));
    let docs = merge_in_parts(
        (parts, align),
        |keys, emit| {
            let filter = (format, id_bits.unwrap_or(0));
            merge_documents(inputs, full, keys, filter, emit)
        },
        &mut appender,
        |blocks, (part_changed, part_ids, (part_sketches, part_area))| {
            if let Some(area) = area.as_mut() {
                // The range's docs blocks count their sketches from 0: shift them to the
                // sketches of the ranges before it.
                let before = area.written();
                blocks.for_each_block_mut(|block| shift_area(block, before))?;
                area.push(&part_area)?;
            }
            changed.extend(part_changed);
            sketches_in_docs.add(&part_sketches);
            if let Some(out) = ids_out.as_mut() {
                out.push_all(part_ids)?;
            }
            Ok(())
        },
    )?;
    appender.finish()?;
    if let Some(bytes) = area.map(AreaAppender::finish).transpose()? {
        sketches_in_docs.bytes = bytes;
    }
    let ids_bytes = ids_out.map(Appender::finish).transpose()?.unwrap_or(0);
    let mut dead = Vec::new();
    // Sketches are merged with the documents they belong to, in their docs entries (format
    // 9), else with the postings, into them (formats 7 and 8) or into their own table.
    let sketched = inputs.iter().any(|r| r.meta().sketches > 0) && !format.sketches_in_docs;
    let mut sketches = sketches_in_docs;
    let mut postings_out = docs_file.entries(POSTINGS);
    let mut sketches_out =
        (sketched && !format.sketches_in_postings).then(|| docs_file.entries(SKETCHES));
    let postings = merge_in_parts(
        (parts, 0),
        |keys, emit| {
            if format.named_postings {
                let (counts, dead) = merge_named_postings(inputs, &changed.groups, keys, emit)?;
                let sketches = SketchPart {
                    blocks: Default::default(),
                    counts: EntryCounts::default(),
                };
                return Ok((counts, (dead, sketches)));
            }
            let sketches = (sketched, format.sketches_in_postings);
            merge_postings(inputs, &changed.ids, sketches, keys, emit)
        },
        &mut postings_out,
        |_, (part_dead, part_sketches): (Vec<u64>, SketchPart)| {
            dead.extend(part_dead);
            if let Some(out) = sketches_out.as_mut() {
                out.push_all(part_sketches.blocks)?;
            }
            sketches.add(&part_sketches.counts);
            Ok(())
        },
    )?;
    postings_out.finish()?;
    sketches_out.map(Appender::finish).transpose()?;
    drop(changed);

    // The docs file's sync (mostly waiting for the disk) overlaps the tables' merge.
    let dead = DeadSet::new(dead);
    let tables = perms.tables().len();
    let fingerprints: u64 = inputs.iter().map(|r| r.meta().fingerprints).sum();
    let files = shard_file_count(fingerprints as usize, tables, shards);
    let per_file = shards / files;
    let (docs_committed, written) = rayon::join(
        || {
            docs_file.finish()?;
            progress.advance(1);
            Ok(())
        },
        || {
            (0..files)
                .into_par_iter()
                .map(|f| {
                    let merged = merge_shard_file(
                        inputs,
                        perms,
                        (f * per_file, (f + 1) * per_file),
                        &dead,
                        (
                            RunFile::when_written(layout::shard_file(out_dir, f), cached),
                            codec,
                        ),
                    );
                    progress.advance(1);
                    merged
                })
                .collect::<Result<Vec<Option<(Vec<u64>, Vec<u64>)>>>>()
        },
    );
    docs_committed?;
    let written = written?;

    let mut meta = RunMeta {
        id,
        shard_files: files as u16,
        present_files: Vec::new(),
        fingerprints: 0,
        documents: docs.written,
        table_bytes: vec![0; tables],
        docs_bytes: docs.bytes,
        postings_bytes: postings.bytes,
        sketches: sketches.written,
        sketches_bytes: sketches.bytes,
        id_bits: id_bits.unwrap_or(0),
        ids_bytes,
    };
    let mut table_entries = 0;
    let mut keys = vec![0u64; tables];
    for (f, file) in written.into_iter().enumerate() {
        let Some((counts, bytes)) = file else {
            continue;
        };
        meta.present_files.push(f as u16);
        for t in 0..tables {
            keys[t] += counts[t];
            meta.table_bytes[t] += bytes[t];
        }
    }
    // Each file holds other fingerprints of each table (its shards are of permuted keys), but
    // every table holds them all.
    if keys.iter().any(|&k| k != keys[0]) {
        let runs: Vec<u64> = inputs.iter().map(|r| r.meta().id).collect();
        return Err(Error::corrupt(format!(
            "merging runs {runs:?}: the merged tables hold different numbers of keys \
             ({keys:?}), so an input run is damaged; verify the store"
        )));
    }
    meta.fingerprints = keys[0];
    for run in inputs {
        table_entries += run.meta().fingerprints * tables as u64;
    }
    sync_dir(out_dir)?;
    if let Some(parent) = out_dir.parent() {
        sync_dir(parent)?;
    }
    Ok(Merged {
        dropped_documents: docs.read - docs.written,
        dropped_fingerprints: fingerprints - meta.fingerprints,
        table_entries,
        meta,
    })
}
