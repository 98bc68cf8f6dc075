//! Writing a run's files: the docs file and the shard files of the permuted tables.
//!
//! A run is written whole, each file made durable with redb's immediate durability and the
//! run directory fsynced, before any catalog names it. Blocks reach each file through a
//! [`RunFile`] (see [`super::run_file`]).

use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

use rayon::prelude::*;
use redb::TableDefinition;

use super::run_file::{AreaAppender, KeyStream, RunFile};
use super::{RunContents, DOCS, IDS, POSTINGS, SKETCHES};
use crate::error::{all_or_cause, Result};
use crate::format::block::docs::SketchedDoc;
use crate::format::block::entries::{self, Keys};
use crate::format::block::entry_writer::{self, EntryWriter};
use crate::format::block::id_filter;
use crate::format::block::id_hash::id_hash;
use crate::format::block::keys::KeyCodec;
use crate::format::block::named_postings::{self, NamedWriter};
use crate::format::block::postings::{self, Posting, SketchedPosting};
use crate::format::block::sketches::SketchEntry;
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

/// What [`write_docs`] wrote: (docs bytes, postings bytes, (sketches, sketches bytes)) and
/// (the id filter's prefix bits, its bytes).
type DocsWritten = ((u64, u64, (u64, u64)), (u8, u64));

/// Writes docs.redb. Documents, postings, sketches and the id filter (where `format` has one)
/// are tables of one file, written at once from several threads. Sketches go into the sketch
/// area (format 10), the docs entries (format 9) or the postings (formats 7 and 8) where `format` says so, else into a
/// sketches table, which a run without sketches does not have.
fn write_docs(
    run_dir: &Path,
    contents: &RunContents<'_>,
    format: RunFormat,
) -> Result<DocsWritten> {
    let path = layout::docs_file(run_dir);
    let file = RunFile::create(&path, Cached::Keep)?;
    let documents = prefetch::ahead(contents.documents, |d| d.1.as_bytes())
        .map(|&(hash, id, state)| (hash, id.as_bytes(), state));
    let write_postings = || -> Result<(u64, (u64, u64))> {
        if format.named_postings {
            debug_assert!(format.sketches_in_docs || contents.sketches.iter().all(Option::is_none));
            write_named_postings(&file, contents).map(|bytes| (bytes, (0, 0)))
        } else if format.sketches_in_postings {
            write_sketched_postings(&file, contents)
        } else {
            let (postings, sketches) = rayon::join(
                || write_postings(&file, contents),
                || write_sketches(&file, contents),
            );
            match (postings, sketches) {
                (Ok(postings), Ok(sketches)) => Ok((postings, sketches)),
                (postings, sketches) => {
                    Err(all_or_cause([postings.map(drop), sketches.map(drop)])
                        .expect_err("one failed"))
                }
            }
        }
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
    let ((docs_bytes, ids), postings) = rayon::join(
        || {
            rayon::join(
                || {
                    let mut appender = file.entries(DOCS);
                    let mut writer = format.docs_writer();
                    let mut emit = |key: &[u8], block: &[u8]| appender.push(key, block);
                    let mut area = (format.sketch_area)
                        .then(|| AreaAppender::new(&file, usize::from(format.sketch_bytes)));
                    if format.sketches_in_docs {
                        let order = sketched_in_document_order(contents);
                        let mut next = gather_sketched(&order, contents).peekable();
                        for (hash, id, state) in documents {
                            let sketch = next
                                .next_if(|&(h, posted, _)| h == hash && same(posted, id))
                                .map(|(_, _, sketch)| sketch.to_vec());
                            writer.push(hash, id, &SketchedDoc { state, sketch }, &mut emit)?;
                            if let Some(area) = area.as_mut() {
                                if writer.undrained_sketch_bytes() >= AREA_CHUNK_BYTES {
                                    area.take(&mut writer)?;
                                }
                            }
                        }
                        debug_assert!(next.next().is_none(), "every sketch has its document");
                    } else {
                        for (hash, id, state) in documents {
                            writer.push(hash, id, &state, &mut emit)?;
                        }
                    }
                    let area_bytes = match area {
                        Some(mut area) => {
                            area.take(&mut writer)?;
                            area.finish()?
                        }
                        None => 0,
                    };
                    writer.finish(&mut emit)?;
                    Ok((appender.finish()?, area_bytes))
                },
                write_ids,
            )
        },
        write_postings,
    );
    let bytes = match (docs_bytes, postings, ids) {
        // The sketches' bytes are the sketch area's (format 10), else the docs blocks',
        // compressed with their entries.
        (Ok((docs, area_bytes)), Ok((postings, sketches)), Ok(ids)) if format.sketches_in_docs => {
            debug_assert_eq!(sketches, (0, 0));
            let sketched = contents.sketches.iter().filter(|s| s.is_some()).count();
            ((docs, postings, (sketched as u64, area_bytes)), ids)
        }
        (Ok((docs, _)), Ok((postings, sketches)), Ok(ids)) => ((docs, postings, sketches), ids),
        (docs, postings, ids) => {
            return Err(
                all_or_cause(vec![docs.map(drop), postings.map(drop), ids.map(drop)])
                    .expect_err("one failed"),
            )
        }
    };
    file.finish()?;
    Ok(bytes)
}

/// Sketch bytes a docs writer gathers before they go to the sketch area.
const AREA_CHUNK_BYTES: usize = 64 << 10;

/// The postings of `contents` that have a sketch (its sketches are aligned with its postings)
/// in its documents' order: `(id hash, posting index)`, sorted by `(id hash, id)`. Memory:
/// 16 bytes a sketch.
fn sketched_in_document_order(contents: &RunContents<'_>) -> Vec<(u64, usize)> {
    let mut sketched: Vec<(u64, usize)> = (contents.sketches.iter().enumerate())
        .filter(|(_, sketch)| sketch.is_some())
        .map(|(i, _)| (id_hash(contents.postings[i].1.as_bytes()), i))
        .collect();
    let id = |i: usize| contents.postings[i].1;
    sketched.par_sort_unstable_by(|a, b| a.0.cmp(&b.0).then_with(|| id(a.1).cmp(id(b.1))));
    sketched
}

/// Whether `posted` is the id `id`: most often the very bytes (a batch's postings and
/// documents borrow its ids), which need no reading.
fn same(posted: &str, id: &[u8]) -> bool {
    std::ptr::eq(posted.as_bytes(), id) || posted.as_bytes() == id
}

/// `order`'s sketched postings in order (see [`sketched_in_document_order`]) as `(id hash,
/// id, sketch)`. Each is a jump to a random posting, its slot in the sketches and the
/// sketch's bytes: looked up a chunk at a time in a loop that does nothing else, the misses
/// overlap, where the writing between them would keep them apart.
fn gather_sketched<'a>(
    order: &'a [(u64, usize)],
    contents: &'a RunContents<'a>,
) -> impl Iterator<Item = (u64, &'a str, &'a [u8])> + 'a {
    /// Postings looked up together.
    const CHUNK: usize = 256;
    order.chunks(CHUNK).flat_map(|chunk| {
        let gathered: Vec<(u64, &str, &[u8])> = chunk
            .iter()
            .filter_map(|&(hash, i)| {
                let sketch = contents.sketches[i]?;
                prefetch::slice(sketch);
                Some((hash, contents.postings[i].1, sketch))
            })
            .collect();
        gathered
    })
}

/// Writes the postings table without sketches; returns its block bytes.
fn write_postings(file: &RunFile, contents: &RunContents<'_>) -> Result<u64> {
    let postings = prefetch::ahead(contents.postings, |p| p.1.as_bytes())
        .map(|&(fp, id, batch)| (fp, id.as_bytes(), Posting { batch }));
    append_all_entries(file, (POSTINGS, Keys::Stored), postings)
}

/// Writes the postings table naming each document by its id-hash prefix (format 8 in a store
/// without sketches, format 9 on); returns its block bytes.
fn write_named_postings(file: &RunFile, contents: &RunContents<'_>) -> Result<u64> {
    let postings = named_postings::of_documents(
        prefetch::ahead(contents.postings, |p| p.1.as_bytes())
            .map(|&(fp, id, _)| (fp, id_hash(id.as_bytes()))),
    );
    let mut appender = file.entries(POSTINGS);
    let mut writer = NamedWriter::default();
    let mut emit = |key: &[u8], block: &[u8]| appender.push(key, block);
    for posting in postings {
        writer.push(posting, &mut emit)?;
    }
    writer.finish(&mut emit)?;
    appender.finish()
}

/// Writes the sketches table (formats 4 to 6), where the run has sketches; returns the
/// sketches written and their block bytes.
fn write_sketches(file: &RunFile, contents: &RunContents<'_>) -> Result<(u64, u64)> {
    let sketched = contents.sketches.iter().filter(|s| s.is_some()).count() as u64;
    if sketched == 0 {
        return Ok((0, 0));
    }
    let entries =
        contents
            .postings
            .iter()
            .zip(contents.sketches)
            .filter_map(|(&(fp, id, batch), sketch)| {
                let sketch = (*sketch)?.to_vec();
                Some((fp, id.as_bytes(), SketchEntry { batch, sketch }))
            });
    Ok((
        sketched,
        append_all_entries(file, (SKETCHES, Keys::Stored), entries)?,
    ))
}

/// Writes the postings table with each posting's sketch, where it has one (format 7);
/// returns the postings' block bytes less their sketches', the sketches written and their
/// bytes.
fn write_sketched_postings(
    file: &RunFile,
    contents: &RunContents<'_>,
) -> Result<(u64, (u64, u64))> {
    let (mut sketched, mut sketch_bytes) = (0u64, 0u64);
    let sketches = contents
        .sketches
        .iter()
        .copied()
        .chain(std::iter::repeat(None));
    let entries = prefetch::ahead(contents.postings, |p| p.1.as_bytes())
        .zip(sketches)
        .map(|(&(fp, id, batch), sketch)| {
            if let Some(sketch) = sketch {
                sketched += 1;
                sketch_bytes += postings::sketch_bytes_in_posting(sketch.len());
            }
            let sketch = sketch.map(<[u8]>::to_vec);
            (fp, id.as_bytes(), SketchedPosting { batch, sketch })
        });
    let mut appender = file.entries(POSTINGS);
    let mut writer = EntryWriter::new(Keys::Stored).with_sketch_flags();
    let mut emit = |key: &[u8], block: &[u8]| appender.push(key, block);
    for (fp, id, posting) in entries {
        writer.push(fp, id, &posting, &mut emit)?;
    }
    writer.finish(&mut emit)?;
    let bytes = appender.finish()?;
    Ok((bytes - sketch_bytes, (sketched, sketch_bytes)))
}

/// Appends `entries` (ascending, after any the table holds) to table `def` as entry blocks
/// whose keys are as `keys` says; returns the bytes of blocks written.
fn append_all_entries<'e, P: entries::Payload + 'e>(
    file: &RunFile,
    (def, keys): (TableDefinition<'static, &'static [u8], &'static [u8]>, Keys),
    entries: impl IntoIterator<Item = (u64, &'e [u8], P)>,
) -> Result<u64> {
    let mut appender = file.entries(def);
    entry_writer::encode(keys, entries, |key, block| appender.push(key, block))?;
    appender.finish()
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
        // Each shard file's slice of the ascending keys goes to that file, the slices in
        // parallel: the last tables to be sorted are written while no other work is left.
        let mut slices = Vec::new();
        let mut start = 0;
        while start < keys.len() {
            let file = perms.shard_of(keys[start]) / shards_per_file;
            let end = start
                + keys[start..].partition_point(|&k| perms.shard_of(k) / shards_per_file == file);
            slices.push((file, &keys[start..end]));
            start = end;
        }
        let written: Vec<Result<u64>> = (slices.into_par_iter())
            .map(|(file, keys)| writers[file].append_keys(t, keys, codec))
            .collect();
        // A file whose write failed fails the others as a consequence: report the cause.
        let written: u64 = all_or_cause(written)?.into_iter().sum();
        bytes[t].fetch_add(written, Ordering::Relaxed);
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
