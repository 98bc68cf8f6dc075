//! The docs file's tables of a merge (docs, postings, sketches): merged in ranges of the key
//! space in parallel, each range's blocks appended in key order.

use std::collections::HashMap;
use std::hash::BuildHasherDefault;

use super::cursor::{smallest, Cursor};
use super::dead::{Dead, MulHasher};
use crate::error::Result;
use crate::format::block::docs::{DocPayload, DocState, SketchedDoc};
use crate::format::block::entries::{Keys, Payload};
use crate::format::block::entry_writer::EntryWriter;
use crate::format::block::id_filter;
use crate::format::block::keys;
use crate::format::block::named_postings;
use crate::format::block::postings::{self, Posting, SketchedPosting};
use crate::format::block::sketches::SketchEntry;
use crate::format::catalog::RunFormat;
use crate::run::run_file::{Appender, EncodedBlocks};
use crate::run::RunReader;
use crate::sys::ordered;

/// Counts of one merged entry table.
#[derive(Default)]
pub(super) struct EntryCounts {
    pub(super) read: u64,
    pub(super) written: u64,
    pub(super) bytes: u64,
}

impl EntryCounts {
    pub(super) fn add(&mut self, other: &EntryCounts) {
        self.read += other.read;
        self.written += other.written;
        self.bytes += other.bytes;
    }
}

/// The sketches of a key range of a merge, encoded, waiting for the ranges before them.
pub(super) struct SketchPart {
    pub(super) blocks: EncodedBlocks,
    pub(super) counts: EntryCounts,
}

/// Where a merged entry table goes: blocks built and handed to `emit`, counted.
struct EntrySink<'e, 'a> {
    writer: EntryWriter,
    counts: EntryCounts,
    emit: &'e mut Emit<'a>,
}

impl<'e, 'a> EntrySink<'e, 'a> {
    fn new(emit: &'e mut Emit<'a>, writer: EntryWriter) -> Self {
        EntrySink {
            writer,
            counts: EntryCounts {
                read: 0,
                written: 0,
                bytes: 0,
            },
            emit,
        }
    }

    fn push(&mut self, key: u64, id: &str, payload: &impl Payload) -> Result<()> {
        let (bytes, emit) = (&mut self.counts.bytes, &mut self.emit);
        self.writer
            .push(key, id.as_bytes(), payload, &mut |k, block| {
                *bytes += block.len() as u64;
                emit(k, block)
            })?;
        self.counts.written += 1;
        Ok(())
    }

    fn finish(self) -> Result<EntryCounts> {
        Ok(self.finish_with_sketches()?.0)
    }

    /// [`EntrySink::finish`], and the sketches its writer keeps for the sketch area (docs,
    /// format 10), in order.
    fn finish_with_sketches(mut self) -> Result<(EntryCounts, Vec<u8>)> {
        let mut sketches = Vec::new();
        self.writer.drain_sketches(|s| {
            sketches.extend_from_slice(s);
            Ok(())
        })?;
        let mut counts = self.counts;
        let emit = self.emit;
        self.writer.finish(&mut |k, block| {
            counts.bytes += block.len() as u64;
            emit(k, block)
        })?;
        Ok((counts, sketches))
    }
}

/// An id's final state, for ids that more than one input mentions: `Some(fingerprint)` when it
/// is live. A posting of such an id lives only if it has that fingerprint.
pub(super) type Changed = HashMap<String, Option<u64>, BuildHasherDefault<MulHasher>>;

/// For named postings (format 8), the id-hash prefixes of which more than one input mentions
/// an id, each with the fingerprints of its live documents after the merge (one per
/// document, ascending): the postings of such a prefix are those fingerprints'.
pub(super) type ChangedGroups = HashMap<u64, Vec<u64>, BuildHasherDefault<MulHasher>>;

/// What the docs' merge learns that the postings' merge needs: [`Changed`] ids, or with named
/// postings (format 8) [`ChangedGroups`].
#[derive(Default)]
pub(super) struct Changes {
    pub(super) ids: Changed,
    pub(super) groups: ChangedGroups,
}

impl Changes {
    pub(super) fn extend(&mut self, other: Changes) {
        self.ids.extend(other.ids);
        // Parts start at prefix boundaries (see merge_runs): each prefix comes from one.
        self.groups.extend(other.groups);
    }
}

/// The live documents of one id-hash prefix as the docs' merge passes them (format 8).
#[derive(Default)]
struct Group {
    prefix: Option<u64>,
    changed: bool,
    fingerprints: Vec<u64>,
}

impl Group {
    /// Starts the group of `prefix` if this is not it, closing the one before into `groups`.
    fn enter(&mut self, prefix: u64, groups: &mut ChangedGroups) {
        if self.prefix != Some(prefix) {
            self.close(groups);
            self.prefix = Some(prefix);
        }
    }

    fn close(&mut self, groups: &mut ChangedGroups) {
        if let (Some(prefix), true) = (self.prefix.take(), self.changed) {
            self.fingerprints.sort_unstable();
            groups.insert(prefix, std::mem::take(&mut self.fingerprints));
        }
        self.fingerprints.clear();
        self.changed = false;
    }
}

pub(super) type Emit<'a> = dyn FnMut(&[u8], &[u8]) -> Result<()> + 'a;

/// Entry tables are merged in key ranges of about this many entries, a few at a time in
/// parallel; a range's blocks wait in memory until the ranges before it are written.
pub(super) const PART_ENTRIES: u64 = 1 << 17;

/// Merges an entry table in `parts` equal ranges of the u64 key space (ids are hashed and
/// fingerprints are hashes, so the ranges hold about as many entries each), in parallel, and
/// hands each range's blocks to `out` in key order, after `each` has seen them with its
/// other result (in the same order, on the calling thread, while the ranges after it are
/// being merged; it may change the blocks, not their sizes). That thread sets the pace; appending groups of ranges in turn with merging the next group left the
/// cores waiting for each group's slowest range.
///
/// With `align` > 0, each range starts at a multiple of 2^`align` (so that each prefix of an
/// id filter falls within one range); `parts` must then be at most 2^(64 - `align`).
pub(super) fn merge_in_parts<T: Send>(
    (parts, align): (u64, u32),
    merge_part: impl Fn((u64, u64), &mut Emit<'_>) -> Result<(EntryCounts, T)> + Sync,
    out: &mut Appender<'_>,
    mut each: impl FnMut(&mut EncodedBlocks, T) -> Result<()>,
) -> Result<EntryCounts> {
    let merge = |i: usize| -> Result<(EncodedBlocks, EntryCounts, T)> {
        let mut blocks = EncodedBlocks::default();
        let bounds = part_bounds((parts, align), i as u64);
        let (counts, extra) = merge_part(bounds, &mut |key, block| {
            blocks.push(key, block);
            Ok(())
        })?;
        Ok((blocks, counts, extra))
    };
    let mut total = EntryCounts::default();
    // Memory: the blocks of at most two ranges per thread, merged and waiting or being merged.
    // The ranges merge as tasks of the calling thread's pool (a background compaction's pool,
    // whose threads yield to queries).
    let ahead = 2 * rayon::current_num_threads();
    ordered::in_order(parts as usize, ahead, merge, |merged| {
        let (mut blocks, counts, extra) = merged?;
        each(&mut blocks, extra)?;
        out.push_all(blocks)?;
        total.add(&counts);
        Ok(())
    })?;
    Ok(total)
}

/// The key range `lo..=hi` of part `i` of `parts` equal parts of the u64 key space, each
/// starting at a multiple of 2^`align` (`parts` at most 2^(64 - `align`)).
fn part_bounds((parts, align): (u64, u32), i: u64) -> (u64, u64) {
    let start = |i: u64| (((u128::from(i) << 64) / u128::from(parts)) as u64 >> align) << align;
    let end = if i + 1 == parts {
        u64::MAX
    } else {
        start(i + 1) - 1
    };
    (start(i), end)
}

/// Merges the documents whose id hashes are within `lo..=hi` into blocks whose keys are as
/// `format` says; where it has an id filter (of `id_bits`), also encodes the filter's blocks
/// of the range (which must hold whole prefixes).
pub(super) fn merge_documents(
    inputs: &[RunReader],
    full: bool,
    range: (u64, u64),
    (format, id_bits): (RunFormat, u8),
    emit: &mut Emit<'_>,
) -> Result<(EntryCounts, DocsPart)> {
    if format.sketches_in_docs {
        merge_documents_as::<SketchedDoc>(inputs, full, range, (format, id_bits), emit)
    } else {
        merge_documents_as::<DocState>(inputs, full, range, (format, id_bits), emit)
    }
}

/// What the merge of a range of the documents learned besides its blocks: the changes the
/// postings' merge needs, the id filter's blocks, and the sketches reached through the docs
/// entries (format 9 on; `written` of [`EntryCounts`], their bytes the docs blocks' in format
/// 9) with, for the sketch area (format 10), their bytes in order: the range's docs blocks
/// count their ordinals from 0.
pub(super) type DocsPart = (Changes, EncodedBlocks, (EntryCounts, Vec<u8>));

/// [`merge_documents`] read and written as payload `P`, which carries what the output's docs
/// entries hold.
fn merge_documents_as<P: DocPayload>(
    inputs: &[RunReader],
    full: bool,
    (lo, hi): (u64, u64),
    (format, id_bits): (RunFormat, u8),
    emit: &mut Emit<'_>,
) -> Result<(EntryCounts, DocsPart)> {
    let filter = format.id_filter.then_some((id_bits, format.codec));
    let mut cursors = inputs
        .iter()
        .map(|r| Cursor::new(r.docs()?.scan_documents_as::<P>(lo, hi)?))
        .collect::<Result<Vec<_>>>()?;
    let mut sketches = EntryCounts::default();
    let mut sink = EntrySink::new(emit, format.docs_writer());
    let mut changes = Changes::default();
    let mut group = Group::default();
    let mut prefixes: Vec<u64> = Vec::new();
    let mut same = Vec::new();
    loop {
        smallest(&cursors, &mut same);
        let Some(&newest) = same.last() else { break };
        let (hash, id, payload) = cursors[newest].peek().expect("a head");
        let state = payload.state();
        let live = match state {
            DocState::Live { fingerprint, .. } => Some(fingerprint),
            DocState::Deleted { .. } => None,
        };
        if format.named_postings {
            group.enter(
                u64::from(named_postings::prefix_of(*hash)),
                &mut changes.groups,
            );
            group.changed |= same.len() > 1;
            group.fingerprints.extend(live);
        } else if same.len() > 1 {
            changes.ids.insert(id.clone(), live);
        }
        let keep = !(full && matches!(state, DocState::Deleted { .. }));
        if keep {
            sink.push(*hash, id, payload)?;
            sketches.written += u64::from(payload.has_sketch());
            if let Some((bits, _)) = filter {
                let prefix = id_filter::prefix(*hash, bits);
                if prefixes.last() != Some(&prefix) {
                    prefixes.push(prefix);
                }
            }
        }
        sink.counts.read += same.len() as u64;
        for &i in &same {
            cursors[i].advance()?;
        }
    }
    group.close(&mut changes.groups);
    let mut ids = EncodedBlocks::default();
    if let Some((_, codec)) = filter {
        keys::encode(codec, &prefixes, |last, block| {
            ids.push(&<u64 as redb::Value>::as_bytes(&last), block);
            Ok(())
        })?;
    }
    let (counts, area) = sink.finish_with_sketches()?;
    Ok((counts, (changes, ids, (sketches, area))))
}

/// Writes the live postings of fingerprints within `lo..=hi`; returns their counts, the
/// dead fingerprints, ascending, and the sketches of the live postings: each comes from the
/// run whose posting is kept, with the posting's batch. With `in_postings` (format 7) each
/// goes into its posting and the sketches' part holds only their counts; else (when
/// `sketched`) into blocks of the sketches table.
pub(super) fn merge_postings(
    inputs: &[RunReader],
    changed: &Changed,
    (sketched, in_postings): (bool, bool),
    (lo, hi): (u64, u64),
    emit: &mut Emit<'_>,
) -> Result<(EntryCounts, (Vec<u64>, SketchPart))> {
    let mut cursors = inputs
        .iter()
        .map(|r| Cursor::new(r.docs()?.scan_postings_as::<SketchedPosting>(lo, hi)?))
        .collect::<Result<Vec<_>>>()?;
    let mut sketch_cursors = inputs
        .iter()
        .map(|r| match r.docs()?.scan_sketches_in(lo, hi)? {
            Some(scan) if sketched => Cursor::new(scan).map(Some),
            _ => Ok(None),
        })
        .collect::<Result<Vec<_>>>()?;
    let mut sketch_blocks = EncodedBlocks::default();
    let mut keep_block = |key: &[u8], block: &[u8]| {
        sketch_blocks.push(key, block);
        Ok(())
    };
    let mut sketch_sink = EntrySink::new(&mut keep_block, EntryWriter::new(Keys::Stored));
    let mut writer = EntryWriter::new(Keys::Stored);
    if in_postings {
        writer = writer.with_sketch_flags();
    }
    let mut sink = EntrySink::new(emit, writer);
    // Sketches kept in the postings: their count and bytes.
    let mut in_posting_counts = EntryCounts::default();
    let mut dead = Dead::default();
    let mut same = Vec::new();
    loop {
        smallest(&cursors, &mut same);
        // The newest input's posting: an id given the same fingerprint again later (after
        // another one in between) is posted by both runs, and the newest has its batch.
        let Some(&newest) = same.last() else { break };
        let (fp, id, posting) = cursors[newest].peek().expect("a head");
        let fp = *fp;
        let live = match changed.get(id.as_str()) {
            None => true,
            Some(state) => *state == Some(fp),
        };
        dead.see(fp, live);
        if live {
            // The posting's sketch: in it (format 7), or in its run's sketches table.
            let mut from_table = None;
            if let Some(sketches) = &mut sketch_cursors[newest] {
                from_table = sketches.seek(fp, id)?.filter(|e| e.batch == posting.batch);
            }
            let sketch = posting
                .sketch
                .as_deref()
                .or(from_table.map(|e| &e.sketch[..]));
            if in_postings {
                if let Some(sketch) = sketch {
                    in_posting_counts.written += 1;
                    in_posting_counts.bytes += postings::sketch_bytes_in_posting(sketch.len());
                }
                if from_table.is_none() {
                    sink.push(fp, id, posting)?;
                } else {
                    let sketch = sketch.map(<[u8]>::to_vec);
                    let batch = posting.batch;
                    sink.push(fp, id, &SketchedPosting { batch, sketch })?;
                }
            } else {
                sink.push(
                    fp,
                    id,
                    &Posting {
                        batch: posting.batch,
                    },
                )?;
                if let Some(entry) = from_table {
                    sketch_sink.push(fp, id, entry)?;
                } else if let Some(sketch) = &posting.sketch {
                    let (batch, sketch) = (posting.batch, sketch.clone());
                    sketch_sink.push(fp, id, &SketchEntry { batch, sketch })?;
                }
            }
        }
        sink.counts.read += same.len() as u64;
        for &i in &same {
            cursors[i].advance()?;
        }
    }
    let dead = dead.finish();
    let mut counts = sketch_sink.finish()?;
    counts.add(&in_posting_counts);
    let sketches = SketchPart {
        blocks: sketch_blocks,
        counts,
    };
    let mut postings = sink.finish()?;
    postings.bytes -= in_posting_counts.bytes;
    Ok((postings, (dead, sketches)))
}

#[cfg(test)]
mod tests {
    use super::part_bounds;

    /// Parts tile the key space in order, each starting where an id filter's prefix does.
    #[test]
    fn parts_tile_the_keys_and_start_at_prefix_boundaries() {
        for bits in [9u32, 20, 63, 64] {
            let align = 64 - bits;
            // As merge_runs caps them: at most one part per prefix.
            let most = 1u64 << bits.min(20);
            for parts in [1u64, 2, 3, 5, 7, 1000, most].map(|p| p.min(most)) {
                let mut next = 0u64;
                for i in 0..parts {
                    let (lo, hi) = part_bounds((parts, align), i);
                    assert_eq!(lo, next, "bits {bits}, parts {parts}, part {i}");
                    assert!(lo <= hi, "bits {bits}, parts {parts}, part {i}");
                    if align > 0 {
                        assert_eq!(lo % (1 << align), 0, "bits {bits}, parts {parts}");
                    }
                    if i + 1 == parts {
                        assert_eq!(hi, u64::MAX);
                    } else {
                        next = hi + 1;
                    }
                }
            }
        }
    }
}
