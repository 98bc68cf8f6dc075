//! Merging runs into one: the streaming k-way merge behind compaction.
//!
//! The inputs are always the newest runs of the store (a suffix of the catalog's list), so no
//! run outside the merge can override what they say. The merged run keeps, in one pass over
//! each table:
//! - **docs**: each id's newest entry; a deletion is dropped when the merge is full (no older
//!   run is left for it to override);
//! - **postings**: the `(fingerprint, id)` pairs that are still live;
//! - **tables**: every key except those of *dead* fingerprints, whose every posting is gone.
//!
//! Dropping dead fingerprints is safe in a suffix merge: a fingerprint's table entry is written
//! by the first run that posts it (or the first after it was dropped), so every live posting of
//! a fingerprint is in the run that holds its keys or a newer one, i.e. inside the merge.
//!
//! Memory is one block per input and table being merged, plus the ids that more than one input
//! mentions (their final state decides which postings live) and the dead fingerprints.

use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hasher};
use std::path::Path;

use rayon::prelude::*;

use super::write::{shard_file_count, Appender, EncodedBlocks, RunFile};
use super::{EntryScan, KeyScan, RunReader, DOCS, POSTINGS, SKETCHES};
use crate::error::{all_or_cause, Error, Result};
use crate::format::block::docs::DocState;
use crate::format::block::entries::{EntryWriter, Payload};
use crate::format::block::sketches::SketchEntry;
use crate::format::catalog::RunMeta;
use crate::format::layout::{self, sync_dir};
use crate::sys::ordered;
use crate::sys::progress::{Phase, Progress};
use crate::sys::writeback::Cached;
use crate::tables::permutation::Permutations;

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

/// A source of sorted items, a block at a time.
trait Blocks<T> {
    /// Replaces `out` with the next block's items; false at the end.
    fn next_block(&mut self, out: &mut Vec<T>) -> Result<bool>;
}

impl<P: Payload> Blocks<(u64, String, P)> for EntryScan<P> {
    fn next_block(&mut self, out: &mut Vec<(u64, String, P)>) -> Result<bool> {
        EntryScan::next_block(self, out)
    }
}

/// One run's keys of a table over several shard files, in order.
struct KeyChain(std::vec::IntoIter<KeyScan>, Option<KeyScan>);

impl Blocks<u64> for KeyChain {
    fn next_block(&mut self, out: &mut Vec<u64>) -> Result<bool> {
        loop {
            if let Some(scan) = &mut self.1 {
                if scan.next_block(out)? {
                    return Ok(true);
                }
            }
            match self.0.next() {
                Some(scan) => self.1 = Some(scan),
                None => return Ok(false),
            }
        }
    }
}

/// The head of one sorted input.
struct Cursor<B, T> {
    source: B,
    block: Vec<T>,
    at: usize,
}

impl<B: Blocks<T>, T> Cursor<B, T> {
    fn new(source: B) -> Result<Self> {
        let mut cursor = Cursor {
            source,
            block: Vec::new(),
            at: 0,
        };
        cursor.fill()?;
        Ok(cursor)
    }

    fn peek(&self) -> Option<&T> {
        self.block.get(self.at)
    }

    fn advance(&mut self) -> Result<()> {
        self.at += 1;
        self.fill()
    }

    /// Skips empty blocks so that `peek` is None only at the end.
    fn fill(&mut self) -> Result<()> {
        while self.at >= self.block.len() {
            self.at = 0;
            if !self.source.next_block(&mut self.block)? {
                self.block.clear();
                return Ok(());
            }
        }
        Ok(())
    }
}

/// Merges the sorted `lists` into `out` (replacing what it held), equal keys in list order:
/// pairs of lists are merged a level at a time, through `scratch`. A merge of two lists
/// picks each key without a branch on the keys; a tournament over k heads compared keys on
/// a branch that random keys mispredict half the time, a quarter of a compaction's CPU.
fn merge_sorted(lists: &[&[u64]], out: &mut Vec<u64>, scratch: &mut Vec<u64>) {
    out.clear();
    // Where each merged list ends in `out`.
    let mut ends = Vec::with_capacity(lists.len().div_ceil(2));
    for pair in lists.chunks(2) {
        match pair {
            [a, b] => merge_two(a, b, out),
            [a] => out.extend_from_slice(a),
            _ => unreachable!("chunks of one or two"),
        }
        ends.push(out.len());
    }
    while ends.len() > 1 {
        scratch.clear();
        let mut start = 0;
        let mut next_ends = Vec::with_capacity(ends.len().div_ceil(2));
        for pair in ends.chunks(2) {
            match *pair {
                [middle, end] => {
                    merge_two(&out[start..middle], &out[middle..end], scratch);
                    start = end;
                }
                [end] => {
                    scratch.extend_from_slice(&out[start..end]);
                    start = end;
                }
                _ => unreachable!("chunks of one or two"),
            }
            next_ends.push(scratch.len());
        }
        std::mem::swap(out, scratch);
        ends = next_ends;
    }
}

/// Appends the merge of sorted `a` and `b` to `out`. The merge runs from both ends at once:
/// the front takes the least key and the back the greatest, two chains of dependent loads
/// and compares that the CPU overlaps (about twice as fast as from the front alone). Among
/// equal keys the front takes a's first and the back b's first, so the two never take the same
/// key and the middle they leave is exactly the keys neither took.
fn merge_two(a: &[u64], b: &[u64], out: &mut Vec<u64>) {
    let start = out.len();
    out.resize(start + a.len() + b.len(), 0);
    let merged = &mut out[start..];
    // a[..i] and b[..j] are merged at the front, a[ia..] and b[jb..] at the back.
    let (mut i, mut j) = (0, 0);
    let (mut ia, mut jb) = (a.len(), b.len());
    // Each step takes one key at each end: at most half the keys, so the ends never cross.
    for _ in 0..merged.len() / 2 {
        if i == a.len() || j == b.len() || ia == 0 || jb == 0 {
            break;
        }
        let (x, y) = (a[i], b[j]);
        let from_a = x <= y;
        merged[i + j] = if from_a { x } else { y };
        i += usize::from(from_a);
        j += usize::from(!from_a);
        let (x, y) = (a[ia - 1], b[jb - 1]);
        let from_b = x <= y;
        merged[ia + jb - 1] = if from_b { y } else { x };
        ia -= usize::from(!from_b);
        jb -= usize::from(from_b);
    }
    merge_from_front(&a[i..ia], &b[j..jb], &mut merged[i + j..ia + jb]);
}

/// Writes the merge of sorted `a` and `b` into `merged`, which is as long as both.
fn merge_from_front(a: &[u64], b: &[u64], merged: &mut [u64]) {
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        let (x, y) = (a[i], b[j]);
        let from_a = x <= y;
        merged[i + j] = if from_a { x } else { y };
        i += usize::from(from_a);
        j += usize::from(!from_a);
    }
    merged[i + j..i + j + a.len() - i].copy_from_slice(&a[i..]);
    merged[a.len() + j..].copy_from_slice(&b[j..]);
}

/// The indices of the entry cursors whose heads are smallest by `(key, id)` (equal heads of
/// several inputs), in input order; empty when every cursor is exhausted.
fn smallest<B, P>(cursors: &[Cursor<B, (u64, String, P)>], out: &mut Vec<usize>)
where
    B: Blocks<(u64, String, P)>,
{
    out.clear();
    let mut best: Option<(u64, &str)> = None;
    for (i, c) in cursors.iter().enumerate() {
        let Some((key, id, _)) = c.peek() else {
            continue;
        };
        let k = (*key, id.as_str());
        match best {
            Some(b) if k > b => {}
            Some(b) if k == b => out.push(i),
            _ => {
                best = Some(k);
                out.clear();
                out.push(i);
            }
        }
    }
}

/// Fingerprints to drop from the tables: a hash set behind a bitmap of their leading bits.
/// Every table key is looked up, and the bitmap (about 16 bits per dead fingerprint, so it
/// stays in cache) turns away all but about 1 in 16 live ones without touching the set.
struct DeadSet {
    bitmap: Vec<u64>,
    shift: u32,
    set: HashSet<u64, BuildHasherDefault<MulHasher>>,
}

impl DeadSet {
    fn new(dead: Vec<u64>) -> Self {
        let bits = (dead.len() * 16)
            .next_power_of_two()
            .clamp(1 << 12, 1 << 30);
        let shift = 64 - bits.trailing_zeros();
        let mut bitmap = vec![0u64; bits / 64];
        for &fp in &dead {
            let i = (fp >> shift) as usize;
            bitmap[i / 64] |= 1 << (i % 64);
        }
        DeadSet {
            bitmap,
            shift,
            set: dead.into_iter().collect(),
        }
    }

    fn contains(&self, fingerprint: u64) -> bool {
        let i = (fingerprint >> self.shift) as usize;
        self.bitmap[i / 64] >> (i % 64) & 1 == 1 && self.set.contains(&fingerprint)
    }

    fn is_empty(&self) -> bool {
        self.set.is_empty()
    }
}

/// Fingerprints and ids hash by multiplication: fingerprints are uniform hashes already.
#[derive(Default)]
struct MulHasher(u64);

impl Hasher for MulHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(0x100_0000_01b3);
        }
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = n.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

/// Keys gathered before they are encoded and appended: bounds the memory of a table merge.
const FLUSH_KEYS: usize = 1 << 20;

/// Merges `inputs` (the store's newest runs, oldest first) into run `id` at `out_dir`. `full`
/// says the inputs are all the store's runs, so deletions need not be kept.
pub(crate) fn merge_runs(
    inputs: &[RunReader],
    full: bool,
    out_dir: &Path,
    id: u64,
    perms: &Permutations,
    shards: usize,
    progress: &dyn Progress,
) -> Result<Merged> {
    let _phase = Phase::start(progress, &format!("merging {} runs", inputs.len()), 0);
    // The output is at most the inputs' size.
    let cached = Cached::for_output(inputs.iter().map(|r| r.meta().bytes()).sum());
    let docs_path = layout::docs_file(out_dir);
    let docs_file = RunFile::create(&docs_path, cached)?;
    let documents: u64 = inputs.iter().map(|r| r.meta().documents).sum();
    // At least two ranges per thread, so that small merges (and the tests) split too.
    let parts = documents
        .div_ceil(PART_ENTRIES)
        .max(2 * rayon::current_num_threads() as u64);
    let mut changed = Changed::default();
    let mut appender = docs_file.entries(DOCS);
    let docs = merge_in_parts(
        parts,
        |keys, emit| merge_documents(inputs, full, keys, emit),
        &mut appender,
        |part| {
            changed.extend(part);
            Ok(())
        },
    )?;
    appender.finish()?;
    let mut dead = Vec::new();
    // Sketches are merged with the postings they belong to, into their own table.
    let sketched = inputs.iter().any(|r| r.meta().sketches > 0);
    let mut sketches = EntryCounts::default();
    let mut postings_out = docs_file.entries(POSTINGS);
    let mut sketches_out = sketched.then(|| docs_file.entries(SKETCHES));
    let postings = merge_in_parts(
        parts,
        |keys, emit| merge_postings(inputs, &changed, sketched, keys, emit),
        &mut postings_out,
        |(part_dead, part_sketches): (Vec<u64>, SketchPart)| {
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
                        RunFile::when_written(layout::shard_file(out_dir, f), cached),
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

/// Counts of one merged entry table.
#[derive(Default)]
struct EntryCounts {
    read: u64,
    written: u64,
    bytes: u64,
}

impl EntryCounts {
    fn add(&mut self, other: &EntryCounts) {
        self.read += other.read;
        self.written += other.written;
        self.bytes += other.bytes;
    }
}

/// The sketches of a key range of a merge, encoded, waiting for the ranges before them.
struct SketchPart {
    blocks: EncodedBlocks,
    counts: EntryCounts,
}

/// Where a merged entry table goes: blocks built and handed to `emit`, counted.
struct EntrySink<'e, 'a> {
    writer: EntryWriter,
    counts: EntryCounts,
    emit: &'e mut Emit<'a>,
}

impl<'e, 'a> EntrySink<'e, 'a> {
    fn new(emit: &'e mut Emit<'a>) -> Self {
        EntrySink {
            writer: EntryWriter::new(),
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
        let mut counts = self.counts;
        let emit = self.emit;
        self.writer.finish(&mut |k, block| {
            counts.bytes += block.len() as u64;
            emit(k, block)
        })?;
        Ok(counts)
    }
}

/// An id's final state, for ids that more than one input mentions: `Some(fingerprint)` when it
/// is live. A posting of such an id lives only if it has that fingerprint.
type Changed = HashMap<String, Option<u64>, BuildHasherDefault<MulHasher>>;

type Emit<'a> = dyn FnMut(&[u8], &[u8]) -> Result<()> + 'a;

/// Entry tables are merged in key ranges of about this many entries, a few at a time in
/// parallel; a range's blocks wait in memory until the ranges before it are written.
const PART_ENTRIES: u64 = 1 << 17;

/// Merges an entry table in `parts` equal ranges of the u64 key space (ids are hashed and
/// fingerprints are hashes, so the ranges hold about as many entries each), in parallel, and
/// hands each range's blocks to `out` in key order and its other result to `each`, in the
/// same order, on the calling thread while the ranges after it are being merged. That thread
/// sets the pace; appending groups of ranges in turn with merging the next group left the
/// cores waiting for each group's slowest range.
fn merge_in_parts<T: Send>(
    parts: u64,
    merge_part: impl Fn((u64, u64), &mut Emit<'_>) -> Result<(EntryCounts, T)> + Sync,
    out: &mut Appender<'_>,
    mut each: impl FnMut(T) -> Result<()>,
) -> Result<EntryCounts> {
    let bounds = |i: u64| {
        let start = |i: u64| ((u128::from(i) << 64) / u128::from(parts)) as u64;
        let end = if i + 1 == parts {
            u64::MAX
        } else {
            start(i + 1) - 1
        };
        (start(i), end)
    };
    let merge = |i: usize| -> Result<(EncodedBlocks, EntryCounts, T)> {
        let mut blocks = EncodedBlocks::default();
        let (counts, extra) = merge_part(bounds(i as u64), &mut |key, block| {
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
        let (blocks, counts, extra) = merged?;
        out.push_all(blocks)?;
        total.add(&counts);
        each(extra)
    })?;
    Ok(total)
}

/// Merges the documents whose id hashes are within `lo..=hi`.
fn merge_documents(
    inputs: &[RunReader],
    full: bool,
    (lo, hi): (u64, u64),
    emit: &mut Emit<'_>,
) -> Result<(EntryCounts, Changed)> {
    let mut cursors = inputs
        .iter()
        .map(|r| Cursor::new(r.docs()?.scan_documents_in(lo, hi)?))
        .collect::<Result<Vec<_>>>()?;
    let mut sink = EntrySink::new(emit);
    let mut changed = Changed::default();
    let mut same = Vec::new();
    loop {
        smallest(&cursors, &mut same);
        let Some(&newest) = same.last() else { break };
        let (hash, id, state) = cursors[newest].peek().expect("a head");
        let state = *state;
        if same.len() > 1 {
            let live = match state {
                DocState::Live { fingerprint, .. } => Some(fingerprint),
                DocState::Deleted { .. } => None,
            };
            changed.insert(id.clone(), live);
        }
        let keep = !(full && matches!(state, DocState::Deleted { .. }));
        if keep {
            sink.push(*hash, id, &state)?;
        }
        sink.counts.read += same.len() as u64;
        for &i in &same {
            cursors[i].advance()?;
        }
    }
    Ok((sink.finish()?, changed))
}

/// Writes the live postings of fingerprints within `lo..=hi`; returns their counts, the
/// dead fingerprints, ascending, and (when `sketched`) the sketches of the live postings: each
/// comes from the run whose posting is kept, with the posting's batch.
fn merge_postings(
    inputs: &[RunReader],
    changed: &Changed,
    sketched: bool,
    (lo, hi): (u64, u64),
    emit: &mut Emit<'_>,
) -> Result<(EntryCounts, (Vec<u64>, SketchPart))> {
    let mut cursors = inputs
        .iter()
        .map(|r| Cursor::new(r.docs()?.scan_postings_in(lo, hi)?))
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
    let mut sketch_sink = EntrySink::new(&mut keep_block);
    let mut sink = EntrySink::new(emit);
    let mut dead = Vec::new();
    // The fingerprint being walked, and whether it has a live posting so far.
    let mut current: Option<(u64, bool)> = None;
    let mut same = Vec::new();
    loop {
        smallest(&cursors, &mut same);
        // The newest input's posting: an id given the same fingerprint again later (after
        // another one in between) is posted by both runs, and the newest has its batch.
        let Some(&newest) = same.last() else { break };
        let (fp, id, posting) = cursors[newest].peek().expect("a head");
        let (fp, posting) = (*fp, *posting);
        let live = match changed.get(id.as_str()) {
            None => true,
            Some(state) => *state == Some(fp),
        };
        match &mut current {
            Some((cur, any)) if *cur == fp => *any |= live,
            _ => {
                if let Some((cur, false)) = current {
                    dead.push(cur);
                }
                current = Some((fp, live));
            }
        }
        if live {
            sink.push(fp, id, &posting)?;
            if let Some(sketches) = &mut sketch_cursors[newest] {
                if let Some(entry) = sketches.seek(fp, id)? {
                    if entry.batch == posting.batch {
                        sketch_sink.push(fp, id, entry)?;
                    }
                }
            }
        }
        sink.counts.read += same.len() as u64;
        for &i in &same {
            cursors[i].advance()?;
        }
    }
    if let Some((cur, false)) = current {
        dead.push(cur);
    }
    let counts = sketch_sink.finish()?;
    let sketches = SketchPart {
        blocks: sketch_blocks,
        counts,
    };
    Ok((sink.finish()?, (dead, sketches)))
}

impl Cursor<EntryScan<SketchEntry>, (u64, String, SketchEntry)> {
    /// Moves past the entries before `(key, id)`; returns the entry at it, if there is one.
    fn seek(&mut self, key: u64, id: &str) -> Result<Option<&SketchEntry>> {
        while let Some((k, i, _)) = self.peek() {
            if (*k, i.as_str()) >= (key, id) {
                break;
            }
            self.advance()?;
        }
        Ok(match self.peek() {
            Some((k, i, entry)) if *k == key && i == id => Some(entry),
            _ => None,
        })
    }
}

/// Merges every table's keys of shards `first..end` into the shard `file`. Returns
/// None when no key is left there, else the keys and bytes written per table.
///
/// The tables are merged in parallel, each appending to the file in its own transactions.
fn merge_shard_file(
    inputs: &[RunReader],
    perms: &Permutations,
    shards: (usize, usize),
    dead: &DeadSet,
    file: RunFile,
) -> Result<Option<(Vec<u64>, Vec<u64>)>> {
    let results: Vec<Result<(u64, u64)>> = (0..perms.tables().len())
        .into_par_iter()
        .map(|t| merge_table(inputs, perms, t, shards, dead, &file))
        .collect();
    let written = all_or_cause(results)?;
    Ok(file.finish()?.then(|| written.into_iter().unzip()))
}

/// Merges table `t`'s keys of shards `first..end` from every input into `file`, dropping dead
/// fingerprints; returns the keys and bytes written.
fn merge_table(
    inputs: &[RunReader],
    perms: &Permutations,
    t: usize,
    (first, end): (usize, usize),
    dead: &DeadSet,
    file: &RunFile,
) -> Result<(u64, u64)> {
    let (lo, hi) = perms.shard_keys(first, end);
    let table = &perms.tables()[t];
    let mut cursors = inputs
        .iter()
        .map(|run| {
            let scans = run
                .shard_files(first, end)?
                .into_iter()
                .map(|file| file.scan(t, lo, hi))
                .collect::<Result<Vec<_>>>()?;
            Cursor::new(KeyChain(scans.into_iter(), None))
        })
        .collect::<Result<Vec<_>>>()?;
    let (mut count, mut bytes) = (0u64, 0u64);
    let mut pending: Vec<u64> = Vec::with_capacity(FLUSH_KEYS);
    let mut flush = |pending: &mut Vec<u64>| -> Result<()> {
        if pending.is_empty() {
            return Ok(());
        }
        bytes += file.append_keys(t, pending)?;
        count += pending.len() as u64;
        pending.clear();
        Ok(())
    };
    let (mut merged, mut scratch) = (Vec::new(), Vec::new());
    let mut ends = Vec::with_capacity(cursors.len());
    let mut previous: Option<u64> = None;
    loop {
        cursors.retain(|c| c.peek().is_some());
        // Every key up to the least of the inputs' block ends is in the blocks at hand:
        // merge those, then read on.
        let Some(bound) = cursors.iter().filter_map(|c| c.block.last()).min().copied() else {
            break;
        };
        ends.clear();
        ends.extend(
            cursors
                .iter()
                .map(|c| c.at + c.block[c.at..].partition_point(|&k| k <= bound)),
        );
        let lists: Vec<&[u64]> = cursors
            .iter()
            .zip(&ends)
            .map(|(c, &end)| &c.block[c.at..end])
            .collect();
        merge_sorted(&lists, &mut merged, &mut scratch);
        for (cursor, &end) in cursors.iter_mut().zip(&ends) {
            cursor.at = end;
            cursor.fill()?;
        }
        if !dead.is_empty() {
            merged.retain(|&key| !dead.contains(table.unpermute(key)));
        }
        // Invariant 2 says no fingerprint is in two runs; a repeat is written once.
        merged.dedup();
        let repeat = previous.is_some() && merged.first() == previous.as_ref();
        let mut rest = &merged[usize::from(repeat)..];
        previous = merged.last().copied().or(previous);
        while !rest.is_empty() {
            let take = rest.len().min(FLUSH_KEYS - pending.len());
            pending.extend_from_slice(&rest[..take]);
            rest = &rest[take..];
            if pending.len() == FLUSH_KEYS {
                flush(&mut pending)?;
            }
        }
    }
    flush(&mut pending)?;
    Ok((count, bytes))
}

#[cfg(test)]
mod tests {
    use super::merge_sorted;
    use proptest::prelude::*;

    proptest! {
        /// Merging sorted lists gives their keys sorted, repeats kept, for any number of
        /// lists (none, one, odd), empty ones and u64::MAX included.
        #[test]
        fn merged_lists_are_their_keys_sorted(
            lists in proptest::collection::vec(
                proptest::collection::vec(prop_oneof![0u64..8, Just(u64::MAX), any::<u64>()], 0..40),
                0..11,
            ),
        ) {
            let lists: Vec<Vec<u64>> = lists
                .into_iter()
                .map(|mut list| {
                    list.sort_unstable();
                    list
                })
                .collect();
            let slices: Vec<&[u64]> = lists.iter().map(Vec::as_slice).collect();
            let (mut out, mut scratch) = (vec![7, 7], vec![9]);
            merge_sorted(&slices, &mut out, &mut scratch);
            let mut expected: Vec<u64> = lists.concat();
            expected.sort_unstable();
            prop_assert_eq!(out, expected);
        }
    }
}
