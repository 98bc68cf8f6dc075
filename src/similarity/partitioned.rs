//! find_all cut into pieces that run apart: the audit of a list too large for one machine,
//! as a cluster runs it (the Spark jobs of the Python package, docs/distributed.md).
//!
//! A [`Plan`] cuts each permuted table into 2^`range_bits` ranges of its keys. Each part of
//! the input (a Spark partition) turns its fingerprints into **slices**
//! ([`PartSlices`]): for every table and range, the part's distinct keys in it, sorted and
//! delta-encoded; table 0's also carry how many documents hold each fingerprint, and the
//! part's id hashes go into slices of their own. A cluster moves slices, not rows: one
//! shuffle of about 6 bytes per distinct fingerprint per table. All the slices of one number
//! from every part meet in one task ([`Plan::find`]), which merges them and compares the
//! keys that share the table's leading blocks, as the local audit does: every pair within the
//! distance is found by exactly one table ([`crate::find_all`]'s rule). Copies of a page
//! collapse twice before they cost anything: to one key per part, then to one key per slice.
//!
//! Slice bytes (version 1): a version byte (1), then one entry per key, ascending: LEB128 of
//! the key minus the previous one (the first: minus 0), and in table 0's slices LEB128 of the
//! number of documents holding the fingerprint minus one. Id slices hold the id hashes
//! ([`PartSlices::id_hash`]) the same way, repeats kept (as deltas of 0), without counts.

use crate::error::{Error, Result, Setting};
use crate::format::block::varint;
use crate::format::settings::{binomial, Settings};
use crate::similarity::clusters::UnionFind;
use crate::similarity::find_all::{close_pairs_in_sorted, FingerprintPair};
use crate::tables::permutation::Permutations;
use crate::tables::{radix, sorted_tables};

/// The version byte every slice starts with.
const SLICE_VERSION: u8 = 1;

/// The most range bits a plan takes: 65,536 ranges per table.
const MAX_RANGE_BITS: u8 = 16;

/// How a partitioned audit is cut: the permuted tables of `blocks` blocks at `distance`, each
/// cut into `2^range_bits` ranges of keys, and as many ranges of id hashes. Distance 0 needs
/// no table: its one "table" is the fingerprints themselves, for the copies.
#[derive(Clone, Debug)]
pub struct Plan {
    blocks: u8,
    distance: u8,
    range_bits: u8,
    /// The permuted tables (None at distance 0).
    perms: Option<Permutations>,
}

impl PartialEq for Plan {
    fn eq(&self, other: &Self) -> bool {
        (self.blocks, self.distance, self.range_bits)
            == (other.blocks, other.distance, other.range_bits)
    }
}

impl Plan {
    /// The plan of `blocks` blocks at `distance`, each table cut into 2^`range_bits` key
    /// ranges. Fails for settings a store could not have (docs/design.md) and for more range
    /// bits than the narrowest table's leading blocks span (a range must never split a group
    /// of keys that share them) or than 16.
    pub fn new(blocks: u8, distance: u8, range_bits: u8) -> Result<Plan> {
        let perms = match distance {
            0 => None,
            _ => {
                let settings = Settings {
                    blocks,
                    distance,
                    shards: 1,
                };
                settings.validate()?;
                if u32::from(range_bits) > settings.min_prefix_bits() {
                    return Err(Error::settings(
                        Setting::Blocks,
                        format!(
                            "{range_bits} range bits split groups of keys that share the \
                             {} leading bits of the narrowest table",
                            settings.min_prefix_bits()
                        ),
                    ));
                }
                Some(Permutations::new(&settings))
            }
        };
        if range_bits > MAX_RANGE_BITS {
            return Err(Error::settings(
                Setting::Blocks,
                format!("{range_bits} range bits: at most {MAX_RANGE_BITS}"),
            ));
        }
        Ok(Plan {
            blocks,
            distance,
            range_bits,
            perms,
        })
    }

    /// The plan for `fingerprints` distinct fingerprints at `distance`, cut for about
    /// `tasks` reduce tasks: the blocks that move the fewest rows (each table holds every
    /// fingerprint once, and compares the pairs that share its leading blocks, about
    /// n^2 / 2^(leading bits + 1) for random fingerprints), and enough ranges that every task
    /// gets a few slices.
    pub fn for_size(fingerprints: u64, distance: u8, tasks: usize) -> Result<Plan> {
        if distance == 0 {
            return Plan::for_blocks(2, 0, tasks);
        }
        let n = fingerprints.max(1) as f64;
        let mut best: Option<(f64, u8)> = None;
        for blocks in distance.saturating_add(1)..=64u8.min(distance.saturating_add(24)) {
            let settings = Settings {
                blocks,
                distance,
                shards: 1,
            };
            if settings.validate().is_err() {
                continue;
            }
            let tables = binomial(u32::from(blocks), u32::from(distance)) as f64;
            let compared = n * n / 2f64.powi(settings.min_prefix_bits() as i32 + 1);
            let cost = tables * (n + compared);
            if best.is_none_or(|(c, _)| cost < c) {
                best = Some((cost, blocks));
            }
        }
        let Some((_, blocks)) = best else {
            return Err(Error::settings(
                Setting::Distance,
                format!("no number of blocks works at distance {distance}"),
            ));
        };
        Plan::for_blocks(blocks, distance, tasks)
    }

    /// The plan of `blocks` blocks at `distance`, cut for about `tasks` reduce tasks (see
    /// [`Plan::for_size`]).
    pub fn for_blocks(blocks: u8, distance: u8, tasks: usize) -> Result<Plan> {
        if distance == 0 {
            return Plan::new(blocks, 0, range_bits_for(1, tasks, MAX_RANGE_BITS));
        }
        let settings = Settings {
            blocks,
            distance,
            shards: 1,
        };
        settings.validate()?;
        let most = (settings.min_prefix_bits().min(u32::from(MAX_RANGE_BITS))) as u8;
        Plan::new(
            blocks,
            distance,
            range_bits_for(settings.table_count(), tasks, most),
        )
    }

    /// m.
    pub fn blocks(&self) -> u8 {
        self.blocks
    }

    /// D.
    pub fn distance(&self) -> u8 {
        self.distance
    }

    /// log2 of the ranges each table is cut into.
    pub fn range_bits(&self) -> u8 {
        self.range_bits
    }

    /// The number of tables (1 at distance 0: the fingerprints themselves).
    pub fn tables(&self) -> usize {
        self.perms.as_ref().map_or(1, |p| p.tables().len())
    }

    fn ranges(&self) -> usize {
        1 << self.range_bits
    }

    /// The number of slices a part makes at most: every table's ranges, then the id ranges.
    pub fn slices(&self) -> u32 {
        ((self.tables() + 1) * self.ranges()) as u32
    }

    /// The range of a key (or id hash): its leading `range_bits` bits.
    fn range_of(&self, key: u64) -> usize {
        match self.range_bits {
            0 => 0,
            bits => (key >> (64 - u32::from(bits))) as usize,
        }
    }
}

/// The range bits that give `tables` tables at least four slices per task for `tasks` tasks.
fn range_bits_for(tables: usize, tasks: usize, most: u8) -> u8 {
    let wanted = (4 * tasks.max(1)).div_ceil(tables.max(1));
    (wanted.next_power_of_two().trailing_zeros() as u8).min(most)
}

/// One part's fingerprints and id hashes, cut into slices: see the module docs.
#[derive(Debug)]
pub struct PartSlices {
    plan: Plan,
    fingerprints: Vec<u64>,
    id_hashes: Vec<u64>,
}

impl PartSlices {
    /// An empty part of `plan`.
    pub fn new(plan: &Plan) -> Self {
        PartSlices {
            plan: plan.clone(),
            fingerprints: Vec::new(),
            id_hashes: Vec::new(),
        }
    }

    /// The hash of a document id that id slices carry (XXH3-64 of its bytes): equal ids have
    /// equal hashes, so two documents of one id meet in one slice.
    pub fn id_hash(id: &[u8]) -> u64 {
        xxhash_rust::xxh3::xxh3_64(id)
    }

    /// Adds a document.
    pub fn push(&mut self, fingerprint: u64, id: &[u8]) {
        self.fingerprints.push(fingerprint);
        self.id_hashes.push(Self::id_hash(id));
    }

    /// The documents added.
    pub fn len(&self) -> usize {
        self.fingerprints.len()
    }

    /// Whether no document was added.
    pub fn is_empty(&self) -> bool {
        self.fingerprints.is_empty()
    }

    /// Calls `emit(slice, bytes)` on every non-empty slice of the part, the tables' in
    /// parallel, so in no set order.
    pub fn finish(mut self, emit: impl Fn(u32, &[u8]) -> Result<()> + Sync) -> Result<()> {
        let plan = &self.plan;
        let ranges = plan.ranges();
        self.fingerprints.sort_unstable();
        let mut distinct: Vec<u64> = Vec::with_capacity(self.fingerprints.len());
        let mut counts: Vec<u64> = Vec::with_capacity(self.fingerprints.len());
        for run in self.fingerprints.chunk_by(|a, b| a == b) {
            distinct.push(run[0]);
            counts.push(run.len() as u64);
        }
        drop(std::mem::take(&mut self.fingerprints));
        let cut = |t: usize, keys: &[u64], counts: Option<&[u64]>| -> Result<()> {
            let mut start = 0;
            while start < keys.len() {
                let range = plan.range_of(keys[start]);
                let end = start + keys[start..].partition_point(|&k| plan.range_of(k) == range);
                let bytes = encode(&keys[start..end], counts.map(|c| &c[start..end]));
                emit((t * ranges + range) as u32, &bytes)?;
                start = end;
            }
            Ok(())
        };
        match &plan.perms {
            None => cut(0, &distinct, Some(&counts))?,
            Some(perms) => sorted_tables::for_each(perms, &distinct, |t, keys| {
                cut(t, keys, (t == 0).then_some(&counts[..]))
            })?,
        }
        self.id_hashes.sort_unstable();
        cut(plan.tables(), &self.id_hashes, None)
    }
}

/// A slice's bytes: see the module docs.
fn encode(keys: &[u64], counts: Option<&[u64]>) -> Vec<u8> {
    let mut out = Vec::with_capacity(1 + keys.len() * 7);
    out.push(SLICE_VERSION);
    let mut previous = 0;
    for (i, &key) in keys.iter().enumerate() {
        varint::encode(key - previous, &mut out);
        previous = key;
        if let Some(counts) = counts {
            varint::encode(counts[i] - 1, &mut out);
        }
    }
    out
}

/// Appends a slice's keys (and counts, when `counts` is given) to `keys` (and `counts`).
fn decode(bytes: &[u8], keys: &mut Vec<u64>, mut counts: Option<&mut Vec<u64>>) -> Result<()> {
    let bad = |what: &str| Error::corrupt(format!("slice: {what}"));
    match bytes.first() {
        Some(&SLICE_VERSION) => {}
        Some(v) => {
            return Err(bad(&format!(
                "version {v}, this build reads {SLICE_VERSION}"
            )))
        }
        None => return Err(bad("no version byte")),
    }
    let mut rest = &bytes[1..];
    let mut key = 0u64;
    let next = |rest: &mut &[u8]| -> Result<u64> {
        let (value, used) = varint::decode(rest).ok_or_else(|| bad("a truncated number"))?;
        *rest = &rest[used..];
        Ok(value)
    };
    while !rest.is_empty() {
        key = key
            .checked_add(next(&mut rest)?)
            .ok_or_else(|| bad("a key past 2^64"))?;
        keys.push(key);
        if let Some(counts) = counts.as_deref_mut() {
            counts.push(next(&mut rest)?.saturating_add(1));
        }
    }
    Ok(())
}

/// What the slices of one number hold, merged: the fingerprint pairs their table reports
/// (table slices), the fingerprints held by two or more documents and how many (table 0's
/// slices), and the id hashes held by two or more documents (id slices: an id given twice,
/// or two ids of one hash, which the caller tells apart).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Found {
    /// Pairs of distinct fingerprints within the distance, each reported by exactly one table.
    pub pairs: Vec<FingerprintPair>,
    /// `(fingerprint, documents)` for fingerprints of two or more documents, ascending.
    pub copies: Vec<(u64, u64)>,
    /// Id hashes of two or more documents, ascending.
    pub repeated_ids: Vec<u64>,
}

impl Plan {
    /// Merges the slices numbered `slice` of every part (`parts`: their bytes, any order) and
    /// finds what they hold ([`Found`]).
    pub fn find<'a>(&self, slice: u32, parts: impl IntoIterator<Item = &'a [u8]>) -> Result<Found> {
        find_in_slices(self, slice, parts)
    }
}

fn find_in_slices<'a>(
    plan: &Plan,
    slice: u32,
    parts: impl IntoIterator<Item = &'a [u8]>,
) -> Result<Found> {
    if slice >= plan.slices() {
        return Err(Error::corrupt(format!(
            "slice {slice} of a plan of {} slices",
            plan.slices()
        )));
    }
    let (t, ranges) = (slice as usize / plan.ranges(), plan.ranges());
    let mut keys = Vec::new();
    let mut counts = Vec::new();
    let with_counts = t == 0;
    for part in parts {
        decode(part, &mut keys, with_counts.then_some(&mut counts))?;
    }
    let mut found = Found::default();
    if t == plan.tables() {
        keys.sort_unstable();
        found.repeated_ids = keys
            .chunk_by(|a, b| a == b)
            .filter(|run| run.len() > 1)
            .map(|run| run[0])
            .collect();
        return Ok(found);
    }
    let expected = (slice as usize % ranges) as u64;
    if keys
        .iter()
        .any(|&k| plan.range_bits > 0 && (k >> (64 - u32::from(plan.range_bits))) != expected)
    {
        return Err(Error::corrupt(format!(
            "slice {slice} holds a key of another range"
        )));
    }
    // Distinct keys, ascending; table 0's with the documents of each summed.
    if with_counts {
        let mut order: Vec<(u64, u64)> = keys.into_iter().zip(counts).collect();
        order.sort_unstable_by_key(|&(k, _)| k);
        keys = Vec::with_capacity(order.len());
        for run in order.chunk_by(|a, b| a.0 == b.0) {
            keys.push(run[0].0);
            let documents: u64 = run.iter().map(|&(_, c)| c).sum();
            if documents > 1 {
                found.copies.push((run[0].0, documents));
            }
        }
    } else {
        let mut scratch = Vec::new();
        radix::sort_below(&mut keys, u32::from(plan.range_bits), &mut scratch);
        keys.dedup();
    }
    if let Some(perms) = &plan.perms {
        close_pairs_in_sorted(perms, t, &keys, u32::from(plan.distance), &mut found.pairs);
        found.pairs.sort_unstable();
    }
    Ok(found)
}

/// A block of document pairs and one side of it, as the first round of expanding fingerprint
/// pairs into document pairs routes it ([`Router`]). The block `(a, b, i, j)` holds the pairs
/// of chunk `i` of fingerprint `a`'s documents with chunk `j` of fingerprint `b`'s; with `a ==
/// b` it is a fingerprint's copies: chunk `i` with chunk `j > i`, or with `i == j` the pairs
/// within chunk `i` (a block of one half). A fingerprint's documents are sorted by id and cut
/// into [`Router::chunks_of`] chunks of equal size, so no block holds more than about
/// `chunk_rows`^2 pairs, and the blocks of a hot page spread over many tasks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Half {
    /// The block's first fingerprint (`a <= b`).
    pub a: u64,
    /// The block's second fingerprint.
    pub b: u64,
    /// The chunk of `a`'s documents.
    pub i: u32,
    /// The chunk of `b`'s documents.
    pub j: u32,
    /// Whose ids these are: `b`'s chunk `j` (true) or `a`'s chunk `i` (false).
    pub of_b: bool,
    /// The ids of the chunk.
    pub ids: Vec<String>,
    /// The distance between `a` and `b`.
    pub distance: u32,
}

impl Half {
    /// The block this half belongs to: rows of one block must meet in one task.
    pub fn block(&self) -> (u64, u64, u32, u32) {
        (self.a, self.b, self.i, self.j)
    }
}

/// The first round of expanding fingerprint pairs into document pairs, in one part of the
/// work: the part's documents, the ends of the fingerprint pairs whose fingerprint falls in the
/// part (each pair has an end at each of its fingerprints), and the fingerprints whose copies
/// pair among themselves; out come [`Half`]s. Parts are cut by fingerprint, so every document
/// of a fingerprint is in the part its ends are.
#[derive(Debug, Default)]
pub struct Router {
    /// Chunks of the fingerprints of more than `chunk_rows` documents.
    hot: std::collections::HashMap<u64, u32>,
    /// The part's documents: fingerprint and the range of its id in `ids` (no allocation per
    /// document: a part holds millions, and most have no pair).
    documents: Vec<(u64, usize, usize)>,
    ids: Vec<u8>,
    ends: Vec<(u64, u64, u32)>,
    copied: Vec<u64>,
}

impl Router {
    /// A router cutting documents into chunks of about `chunk_rows`, given `(fingerprint,
    /// documents)` for (at least) every fingerprint of more than `chunk_rows` documents (what
    /// [`Found::copies`] lists), the same in every part.
    pub fn new(chunk_rows: usize, copies: impl IntoIterator<Item = (u64, u64)>) -> Router {
        let chunk_rows = chunk_rows.max(1);
        let hot = copies
            .into_iter()
            .filter(|&(_, n)| n > chunk_rows as u64)
            .map(|(fp, n)| {
                (
                    fp,
                    n.div_ceil(chunk_rows as u64).min(u64::from(u32::MAX)) as u32,
                )
            })
            .collect();
        Router {
            hot,
            ..Router::default()
        }
    }

    /// The chunks fingerprint `fp`'s documents are cut into.
    pub fn chunks_of(&self, fp: u64) -> u32 {
        self.hot.get(&fp).copied().unwrap_or(1)
    }

    /// Adds a document of the part.
    pub fn add_document(&mut self, fingerprint: u64, id: &str) {
        let start = self.ids.len();
        self.ids.extend_from_slice(id.as_bytes());
        self.documents.push((fingerprint, start, self.ids.len()));
    }

    /// Adds the end at `fingerprint` of the pair (`fingerprint`, `other`) at `distance`.
    pub fn add_end(&mut self, fingerprint: u64, other: u64, distance: u32) {
        self.ends.push((fingerprint, other, distance));
    }

    /// Adds a fingerprint whose documents pair among themselves (at distance 0).
    pub fn add_copies(&mut self, fingerprint: u64) {
        self.copied.push(fingerprint);
    }

    /// Calls `emit` on every half the part's ends and copies make (documents no end or copy
    /// names are dropped). Fails when an end's fingerprint has no document in the part (the
    /// part was not cut by fingerprint).
    pub fn finish(mut self, mut emit: impl FnMut(&Half) -> Result<()>) -> Result<()> {
        self.ends.sort_unstable();
        self.copied.sort_unstable();
        self.copied.dedup();
        // Only the documents of a fingerprint with an end or copies, by fingerprint and id.
        let named: std::collections::HashSet<u64> = self
            .ends
            .iter()
            .map(|e| e.0)
            .chain(self.copied.iter().copied())
            .collect();
        let ids = &self.ids;
        let text = |&(_, start, end): &(u64, usize, usize)| {
            std::str::from_utf8(&ids[start..end]).expect("ids are added as strings")
        };
        let mut documents: Vec<(u64, &str)> = self
            .documents
            .iter()
            .filter(|d| named.contains(&d.0))
            .map(|d| (d.0, text(d)))
            .collect();
        documents.sort_unstable();
        let documents = &documents;
        let chunks = |fp: u64| -> Result<Vec<Vec<String>>> {
            let start = documents.partition_point(|d| d.0 < fp);
            let end = documents.partition_point(|d| d.0 <= fp);
            if start == end {
                return Err(Error::input(format!(
                    "no document of fingerprint {fp:016x} in the part that holds its pairs"
                )));
            }
            let n = self.chunks_of(fp) as usize;
            let size = (end - start).div_ceil(n).max(1);
            let mut out: Vec<Vec<String>> = documents[start..end]
                .chunks(size)
                .map(|chunk| chunk.iter().map(|d| d.1.to_string()).collect())
                .collect();
            out.resize(n, Vec::new());
            Ok(out)
        };
        for run in self.ends.chunk_by(|x, y| x.0 == y.0) {
            let fp = run[0].0;
            let mine = chunks(fp)?;
            for &(_, other, distance) in run {
                let (a, b) = (fp.min(other), fp.max(other));
                let of_b = fp == b;
                let theirs = self.chunks_of(other);
                for (c, ids) in mine.iter().enumerate() {
                    for o in 0..theirs {
                        let (i, j) = if of_b { (o, c as u32) } else { (c as u32, o) };
                        emit(&Half {
                            a,
                            b,
                            i,
                            j,
                            of_b,
                            ids: ids.clone(),
                            distance,
                        })?;
                    }
                }
            }
        }
        for &fp in &self.copied {
            let mine = chunks(fp)?;
            for (i, ids) in mine.iter().enumerate() {
                for (j, theirs) in mine.iter().enumerate().skip(i) {
                    let half = |of_b, ids: &Vec<String>| Half {
                        a: fp,
                        b: fp,
                        i: i as u32,
                        j: j as u32,
                        of_b,
                        ids: ids.clone(),
                        distance: 0,
                    };
                    emit(&half(false, ids))?;
                    if j > i {
                        emit(&half(true, theirs))?;
                    }
                }
            }
        }
        Ok(())
    }
}

/// The second round: the halves of one part of the work (every half of a block in the same
/// part), their document pairs handed out a batch at a time ([`Blocks::next_pairs`]).
#[derive(Debug, Default)]
pub struct Blocks {
    halves: Vec<Half>,
    /// Where the hand-out stands: the next block (its first half), and the pairs of it done.
    block: usize,
    done: u64,
    sorted: bool,
}

impl Blocks {
    /// No halves yet.
    pub fn new() -> Self {
        Blocks::default()
    }

    /// Adds a half.
    pub fn push(&mut self, half: Half) {
        self.halves.push(half);
        self.sorted = false;
    }

    /// Calls `f(a, b, distance)` (`a < b` by bytes) on at most `most` more document pairs;
    /// returns how many (fewer than `most` only at the end). Fails when a block misses a half.
    pub fn next_pairs(&mut self, most: usize, mut f: impl FnMut(&str, &str, u32)) -> Result<usize> {
        if !self.sorted {
            self.halves
                .sort_unstable_by_key(|h| (h.a, h.b, h.i, h.j, h.of_b));
            self.sorted = true;
        }
        let mut given = 0usize;
        while self.block < self.halves.len() && given < most {
            let first = &self.halves[self.block];
            let own_chunk = first.a == first.b && first.i == first.j;
            let (other, width) = if own_chunk {
                (None, 1)
            } else {
                match self.halves.get(self.block + 1) {
                    Some(h) if h.block() == first.block() && h.of_b && !first.of_b => (Some(h), 2),
                    _ => {
                        return Err(Error::input(format!(
                            "block ({:016x}, {:016x}, {}, {}) misses a half",
                            first.a, first.b, first.i, first.j
                        )))
                    }
                }
            };
            let xs: Vec<&str> = first.ids.iter().map(String::as_str).collect();
            let ys: Option<Vec<&str>> = other.map(|h| h.ids.iter().map(String::as_str).collect());
            let mut index = 0u64;
            let skip = self.done;
            let finished = document_pairs(&xs, ys.as_deref(), first.distance, |x, y, d| {
                if index >= skip {
                    if given == most {
                        return Err(());
                    }
                    f(x, y, d);
                    given += 1;
                }
                index += 1;
                Ok(())
            });
            match finished {
                Ok(()) => {
                    self.block += width;
                    self.done = 0;
                }
                Err(()) => self.done = index,
            }
        }
        Ok(given)
    }
}

/// Calls `f(a, b, distance)` on every pair of documents with ids `ids_a` and `ids_b` (the
/// documents of two fingerprints at `distance`), or with `ids_b` None on every pair within
/// `ids_a` (the copies of one fingerprint, at distance 0); `a < b` by bytes.
pub fn document_pairs<E>(
    ids_a: &[&str],
    ids_b: Option<&[&str]>,
    distance: u32,
    mut f: impl FnMut(&str, &str, u32) -> std::result::Result<(), E>,
) -> std::result::Result<(), E> {
    let mut pair = |x: &str, y: &str| {
        if x < y {
            f(x, y, distance)
        } else {
            f(y, x, distance)
        }
    };
    match ids_b {
        Some(ids_b) => {
            for x in ids_a {
                for y in ids_b {
                    pair(x, y)?;
                }
            }
        }
        None => {
            for (i, x) in ids_a.iter().enumerate() {
                for y in &ids_a[i + 1..] {
                    pair(x, y)?;
                }
            }
        }
    }
    Ok(())
}

/// The connected components of the graph of `edges` (pairs of nodes: fingerprints, ids...):
/// each node of an edge with the least node of its component, ascending by node.
pub fn components<T: Ord + Clone>(edges: &[(T, T)]) -> Vec<(T, T)> {
    let mut nodes: Vec<&T> = edges.iter().flat_map(|(a, b)| [a, b]).collect();
    nodes.sort_unstable();
    nodes.dedup();
    let index = |n: &T| nodes.binary_search(&n).expect("a node of an edge");
    let mut sets = UnionFind::new(nodes.len());
    for (a, b) in edges {
        sets.union(index(a), index(b));
    }
    // Nodes ascending: the first node met of each set is its least.
    let mut least: Vec<Option<usize>> = vec![None; nodes.len()];
    (0..nodes.len())
        .map(|i| {
            let root = sets.find(i);
            let first = *least[root].get_or_insert(i);
            (nodes[i].clone(), nodes[first].clone())
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::similarity::find_all::find_all;
    use proptest::prelude::*;

    /// Runs a whole partitioned audit in memory: the parts' slices grouped by number, each
    /// group found; returns everything found, merged and sorted.
    fn run(plan: &Plan, parts: &[Vec<(u64, String)>]) -> Found {
        let slices = std::sync::Mutex::new(std::collections::BTreeMap::<u32, Vec<Vec<u8>>>::new());
        for part in parts {
            let mut p = PartSlices::new(plan);
            for (fp, id) in part {
                p.push(*fp, id.as_bytes());
            }
            p.finish(|s, bytes| {
                assert!(s < plan.slices());
                slices
                    .lock()
                    .unwrap()
                    .entry(s)
                    .or_default()
                    .push(bytes.to_vec());
                Ok(())
            })
            .unwrap();
        }
        let mut all = Found::default();
        for (s, blobs) in slices.into_inner().unwrap() {
            let found = plan.find(s, blobs.iter().map(|b| &b[..])).unwrap();
            all.pairs.extend(found.pairs);
            all.copies.extend(found.copies);
            all.repeated_ids.extend(found.repeated_ids);
        }
        all.pairs.sort_unstable();
        all.copies.sort_unstable();
        all.repeated_ids.sort_unstable();
        all
    }

    fn documents() -> impl Strategy<Value = Vec<(u64, String)>> {
        // Few base fingerprints with near copies and exact copies, and random ones.
        (
            proptest::collection::vec(any::<u64>(), 1..40),
            proptest::collection::vec((0usize..40, 0u32..64, 0u32..64, 0u8..4), 0..200),
        )
            .prop_map(|(bases, variants)| {
                let mut docs: Vec<u64> = bases.clone();
                for (b, x, y, kind) in variants {
                    let base = bases[b % bases.len()];
                    docs.push(match kind {
                        0 => base,
                        1 => base ^ (1 << x),
                        2 => base ^ (1 << x) ^ (1 << y),
                        _ => base ^ (1 << x) ^ (1 << y) ^ (1 << ((x + y + 1) % 64)),
                    });
                }
                docs.into_iter()
                    .enumerate()
                    .map(|(i, fp)| (fp, format!("doc-{i}")))
                    .collect()
            })
    }

    proptest! {
        /// The pairs, copies and repeated ids of any cut of any list equal brute force.
        #[test]
        fn a_partitioned_audit_equals_brute_force(
            docs in documents(),
            distance in 0u8..5,
            parts in 1usize..5,
            range_bits in 0u8..4,
            extra_blocks in 1u8..4,
            repeat in proptest::option::of(0usize..200),
        ) {
            let blocks = distance + extra_blocks + if distance == 0 { 1 } else { 0 };
            let Ok(plan) = Plan::new(blocks.max(2), distance, range_bits) else {
                return Ok(());
            };
            let mut docs = docs;
            if let Some(r) = repeat {
                let (fp, id) = docs[r % docs.len()].clone();
                docs.push((fp ^ 1, id));
            }
            let cut: Vec<Vec<(u64, String)>> = (0..parts)
                .map(|p| docs.iter().skip(p).step_by(parts).cloned().collect())
                .collect();
            let found = run(&plan, &cut);
            let fps: Vec<u64> = docs.iter().map(|d| d.0).collect();
            let want = if distance == 0 { Vec::new() } else {
                find_all(&fps, distance, Some(plan.blocks()), &()).unwrap()
            };
            prop_assert_eq!(&found.pairs, &want);
            let mut copies: Vec<(u64, u64)> = Vec::new();
            let mut sorted = fps.clone();
            sorted.sort_unstable();
            for run in sorted.chunk_by(|a, b| a == b) {
                if run.len() > 1 {
                    copies.push((run[0], run.len() as u64));
                }
            }
            prop_assert_eq!(&found.copies, &copies);
            let want_ids: Vec<u64> = match repeat {
                Some(r) => vec![PartSlices::id_hash(docs[r % (docs.len() - 1)].1.as_bytes())],
                None => Vec::new(),
            };
            prop_assert_eq!(&found.repeated_ids, &want_ids);
        }
    }

    /// Document pairs through the two rounds: documents and pair ends cut into parts by
    /// fingerprint, halves into parts by block; every pair once, equal to brute force.
    fn document_pairs_in_rounds(
        docs: &[(u64, String)],
        found: &Found,
        chunk_rows: usize,
        parts: usize,
    ) -> Vec<(String, String, u32)> {
        let part_of = |fp: u64| (fp.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 60) as usize % parts;
        let mut routers: Vec<Router> = (0..parts)
            .map(|_| Router::new(chunk_rows, found.copies.iter().copied()))
            .collect();
        for (fp, id) in docs {
            routers[part_of(*fp)].add_document(*fp, id);
        }
        for p in &found.pairs {
            routers[part_of(p.a)].add_end(p.a, p.b, p.distance);
            routers[part_of(p.b)].add_end(p.b, p.a, p.distance);
        }
        for &(fp, _) in &found.copies {
            routers[part_of(fp)].add_copies(fp);
        }
        let mut blocks: Vec<Blocks> = (0..parts).map(|_| Blocks::new()).collect();
        for router in routers {
            router
                .finish(|h| {
                    let (a, b, i, j) = h.block();
                    let at = (a ^ b.rotate_left(17) ^ u64::from(i) << 40 ^ u64::from(j) << 20)
                        .wrapping_mul(0x9E37_79B9_7F4A_7C15)
                        >> 61;
                    blocks[at as usize % parts].push(h.clone());
                    Ok(())
                })
                .unwrap();
        }
        let mut out = Vec::new();
        for mut part in blocks {
            while part
                .next_pairs(7, |a, b, d| out.push((a.to_string(), b.to_string(), d)))
                .unwrap()
                == 7
            {}
        }
        out.sort_unstable();
        out
    }

    proptest! {
        #[test]
        fn document_pairs_in_two_rounds_equal_brute_force(
            docs in documents(),
            hot in 0usize..60,
            chunk_rows in 1usize..9,
            parts in 1usize..4,
        ) {
            let mut docs = docs;
            let base = docs[0].0;
            for i in 0..hot {
                docs.push((base, format!("hot-{i}")));
                docs.push((base ^ 0b101, format!("near-hot-{i}")));
            }
            let plan = Plan::new(5, 3, 1).unwrap();
            let found = run(&plan, std::slice::from_ref(&docs));
            let got = document_pairs_in_rounds(&docs, &found, chunk_rows, parts);
            let mut want = Vec::new();
            for (x, (fx, ix)) in docs.iter().enumerate() {
                for (fy, iy) in &docs[x + 1..] {
                    let d = (fx ^ fy).count_ones();
                    if d <= 3 {
                        let (a, b) = if ix < iy { (ix, iy) } else { (iy, ix) };
                        want.push((a.clone(), b.clone(), d));
                    }
                }
            }
            want.sort_unstable();
            prop_assert_eq!(got, want);
        }
    }

    #[test]
    fn a_block_missing_a_half_is_an_error() {
        let mut blocks = Blocks::new();
        blocks.push(Half {
            a: 1,
            b: 2,
            i: 0,
            j: 0,
            of_b: false,
            ids: vec!["x".into()],
            distance: 1,
        });
        let e = blocks.next_pairs(10, |_, _, _| {}).unwrap_err();
        assert!(e.to_string().contains("misses a half"), "{e}");
        let router = {
            let mut r = Router::new(4, []);
            r.add_end(5, 6, 1);
            r
        };
        let e = router.finish(|_| Ok(())).unwrap_err();
        assert!(e.to_string().contains("no document"), "{e}");
    }

    #[test]
    fn a_hot_fingerprint_is_one_key_per_part_and_per_slice() {
        let plan = Plan::new(5, 3, 2).unwrap();
        let hot = 0x0123_4567_89ab_cdef;
        let mut part = PartSlices::new(&plan);
        for i in 0..100_000 {
            part.push(hot, format!("copy-{i}").as_bytes());
        }
        let sizes = std::sync::Mutex::new(Vec::new());
        part.finish(|s, bytes| {
            if (s as usize) < plan.tables() * 4 {
                sizes.lock().unwrap().push(bytes.len());
            }
            Ok(())
        })
        .unwrap();
        // One key per table (at most 10 bytes of delta and 3 of count, and the version).
        let sizes = sizes.into_inner().unwrap();
        assert_eq!(sizes.len(), plan.tables());
        assert!(sizes.iter().all(|&n| n <= 14), "{sizes:?}");
    }

    #[test]
    fn plans_and_bad_slices_are_refused_clearly() {
        assert!(Plan::new(5, 3, 17).is_err());
        assert!(Plan::new(4, 4, 0).is_err());
        let plan = Plan::for_size(10_000_000, 3, 8).unwrap();
        assert_eq!((plan.blocks(), plan.distance()), (5, 3));
        assert!(plan.tables() * (1 << plan.range_bits()) >= 32);
        assert_eq!(Plan::for_size(1_000, 0, 8).unwrap().tables(), 1);
        let e = plan.find(0, [&[9u8, 1][..]]).unwrap_err();
        assert!(e.to_string().contains("version 9"), "{e}");
        let e = plan.find(0, [&[1u8, 0x80][..]]).unwrap_err();
        assert!(e.to_string().contains("truncated"), "{e}");
        assert!(plan.find(plan.slices(), [&[1u8][..]]).is_err());
    }

    #[test]
    fn document_pairs_and_components() {
        let mut out = Vec::new();
        document_pairs(&["b", "a", "c"], None, 0, |x, y, d| {
            out.push(format!("{x}{y}{d}"));
            Ok::<_, ()>(())
        })
        .unwrap();
        document_pairs(&["z"], Some(&["y", "zz"]), 2, |x, y, d| {
            out.push(format!("{x}{y}{d}"));
            Ok::<_, ()>(())
        })
        .unwrap();
        assert_eq!(out, ["ab0", "bc0", "ac0", "yz2", "zzz2"]);
        assert_eq!(
            components(&[(5u64, 9), (9, 2), (7, 8)]),
            [(2, 2), (5, 2), (7, 7), (8, 7), (9, 2)]
        );
        assert_eq!(
            components(&[("b", "c"), ("a", "c"), ("x", "x")]),
            [("a", "a"), ("b", "a"), ("c", "a"), ("x", "x")]
        );
    }
}
