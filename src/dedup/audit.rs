//! Audit: every pair of stored documents within D bits, and the clusters they form.
//!
//! The permuted tables are already sorted, so the audit streams them: for each needed table
//! and each of 256 key ranges (the keys' leading byte; every table's prefix is at least 8 bits,
//! so a range never splits a prefix group), it merges the runs' keys, and compares the keys
//! within each group sharing the table's leading blocks. A pair is kept only by the first table
//! whose leading blocks both share, so every pair comes out once with no global set (see
//! [`crate::similarity::find_all`]).
//!
//! Memory: one range's keys per thread, the fingerprint pairs found, the fingerprints of every
//! posting (to find fingerprints stored under several ids), and what [`NearDuplicates`] holds.

use rayon::prelude::*;

use crate::dedup::near_duplicates::NearDuplicates;
use crate::error::{guard_redb, Result};
use crate::read::snapshot::Snapshot;
use crate::similarity::find_all::{close_pairs_in_sorted, FingerprintPair};
use crate::similarity::sketch::SketchRows;
use crate::sys::progress::{Phase, Progress};

/// Key ranges per table that audit tasks split the work into: one per leading byte.
const RANGES: usize = 256;

impl Snapshot {
    /// The number of steps [`Snapshot::fingerprint_pairs`] reports to its progress.
    fn audit_steps(&self, distance: u32) -> u64 {
        let needed = (0..self.permutations().tables().len())
            .filter(|&t| self.permutations().is_needed(t, distance))
            .count();
        (needed * RANGES) as u64
    }

    /// Every pair of distinct fingerprints in the tables within `distance` bits, sorted by
    /// (a, b). Fingerprints whose documents were all replaced are included (the audit,
    /// [`Snapshot::near_duplicates`], drops them). `progress` is told of a phase "audit" and its
    /// steps as they complete.
    pub fn fingerprint_pairs(
        &self,
        distance: u32,
        progress: &dyn Progress,
    ) -> Result<Vec<FingerprintPair>> {
        self.check_distance(distance)?;
        let _phase = Phase::start(progress, "audit", self.audit_steps(distance));
        let perms = self.permutations();
        let tasks: Vec<(usize, usize)> = (0..perms.tables().len())
            .filter(|&t| perms.is_needed(t, distance))
            .flat_map(|t| (0..RANGES).map(move |r| (t, r)))
            .collect();
        let parts: Vec<Vec<FingerprintPair>> = tasks
            .par_iter()
            .map(|&(t, r)| {
                let lo = (r as u64) << 56;
                let hi = lo | (u64::MAX >> 8);
                let shard = perms.shard_of(lo);
                let mut keys = Vec::new();
                for run in self.runs() {
                    if let Some(file) = run.shard(shard)? {
                        file.probe(t, lo, hi, |k| keys.push(k))?;
                    }
                }
                if self.runs().len() > 1 {
                    keys.sort_unstable(); // a fingerprint is in one run's tables only
                }
                let mut out = Vec::new();
                close_pairs_in_sorted(perms, t, &keys, distance, &mut out);
                progress.advance(1);
                Ok(out)
            })
            .collect::<Result<_>>()?;
        let mut pairs: Vec<FingerprintPair> = parts.into_iter().flatten().collect();
        pairs.par_sort_unstable();
        Ok(pairs)
    }

    /// The near duplicates of the live documents within `distance` bits (see
    /// [`NearDuplicates`]): memory grows with the fingerprint pairs and the documents that
    /// have a near duplicate, never with the document pairs. `progress` is told of the
    /// phases "audit", "reading postings", "reading ids" and "clusters".
    pub(crate) fn near_duplicates_unverified(
        &self,
        distance: u32,
        progress: &dyn Progress,
    ) -> Result<NearDuplicates> {
        guard_redb(self.dir(), || {
            let (pairs, distinct, wanted) = self.candidates(distance, progress)?;
            let reading = Phase::start(progress, "reading ids", wanted.len() as u64);
            let ids = self.live_documents_of_all(&wanted, progress)?;
            drop(reading);
            Ok(NearDuplicates::build(
                self.documents(),
                distinct,
                ids,
                &pairs,
                progress,
            ))
        })
    }

    /// [`Snapshot::near_duplicates_unverified`] verified with the store's sketches: the same answer as
    /// it followed by [`NearDuplicates::verify_sketches`]. Where every run keeps a sketch for
    /// each of its postings (a store made with `init --sketch` whose documents were inserted
    /// as text), the candidates' ids and sketches are read together in one pass (phase
    /// "reading ids and sketches"; see [`Snapshot::live_documents_with_sketches`]) instead of
    /// the postings first and the sketches after.
    pub(crate) fn near_duplicates_sketched(
        &self,
        distance: u32,
        min_jaccard: f64,
        progress: &dyn Progress,
    ) -> Result<NearDuplicates> {
        self.check_sketch_verification(min_jaccard)?;
        if !self.sketches_complete() {
            let mut near = self.near_duplicates_unverified(distance, progress)?;
            near.verify_sketches(self, min_jaccard, progress)?;
            return Ok(near);
        }
        let bytes = usize::from(self.sketch_bytes().unwrap_or(0));
        let (mut near, rows) = guard_redb(self.dir(), || {
            let (pairs, distinct, wanted) = self.candidates(distance, progress)?;
            let reading = Phase::start(progress, "reading ids and sketches", wanted.len() as u64);
            let parts = self.live_documents_with_sketches(
                &wanted,
                || Sketched::new(bytes),
                |part, fp, id, batch, sketch| {
                    part.ids.push((fp, id.into(), batch));
                    part.rows.push(sketch);
                },
                progress,
            )?;
            drop(reading);
            let all = Sketched::sorted(parts, bytes);
            let near =
                NearDuplicates::from_sorted(self.documents(), distinct, all.ids, &pairs, progress);
            Ok((near, all.rows))
        })?;
        near.verify_with_sketches(rows.into_table(), min_jaccard, progress)?;
        Ok(near)
    }

    /// What an audit within `distance` bits reads the documents of: the fingerprint pairs
    /// within it, the number of distinct posted fingerprints, and the fingerprints whose
    /// documents are needed (ascending): those in a pair, and those with two or more
    /// postings (possibly several live ids).
    fn candidates(
        &self,
        distance: u32,
        progress: &dyn Progress,
    ) -> Result<(Vec<FingerprintPair>, u64, Vec<u64>)> {
        let pairs = self.fingerprint_pairs(distance, progress)?;
        let (distinct, shared) = self.posted_fingerprints(progress)?;
        let mut wanted: Vec<u64> = pairs.iter().flat_map(|p| [p.a, p.b]).collect();
        wanted.extend(shared);
        wanted.par_sort_unstable();
        wanted.dedup();
        Ok((pairs, distinct, wanted))
    }

    /// The number of distinct fingerprints the postings of the live runs list, and those
    /// listed two or more times (possibly by several live ids), ascending.
    fn posted_fingerprints(&self, progress: &dyn Progress) -> Result<(u64, Vec<u64>)> {
        let _phase = Phase::start(progress, "reading postings", self.runs().len() as u64);
        let mut all: Vec<u64> = Vec::new();
        for run in self.runs() {
            run.docs()?.for_each_posting(|fp| all.push(fp))?;
            progress.advance(1);
        }
        if self.runs().len() > 1 {
            all.par_sort_unstable();
        }
        let mut distinct = 0;
        let mut shared = Vec::new();
        for (i, &fp) in all.iter().enumerate() {
            if i == 0 || all[i - 1] != fp {
                distinct += 1;
            } else if shared.last() != Some(&fp) {
                shared.push(fp);
            }
        }
        Ok((distinct, shared))
    }
}

impl NearDuplicates {
    /// Also lists every live document of `snapshot` (the one these near duplicates are of)
    /// that has no near duplicate, as a cluster of one. Memory: every such id.
    pub fn add_singletons(&mut self, snapshot: &Snapshot) -> Result<()> {
        let mut all: Vec<(Box<str>, u64)> = Vec::new();
        snapshot.for_each_live_document(|id, _, batch| all.push((id.into(), batch)))?;
        self.set_singletons(all);
        Ok(())
    }
}

/// A live document: `(fingerprint, id, batch)`.
type Document = (u64, Box<str>, u64);

/// Live documents with their sketches, row i document i's: sorted by `(fingerprint, id)` once
/// [`Sketched::sorted`] has put the parts read together.
struct Sketched {
    ids: Vec<Document>,
    rows: SketchRows,
}

impl Sketched {
    fn new(bytes: usize) -> Self {
        Sketched {
            ids: Vec::new(),
            rows: SketchRows::new(bytes),
        }
    }

    /// The documents of all `parts` in `(fingerprint, id)` order, with their sketches of
    /// `bytes` bytes. Parts that follow one another in order are put together as they are;
    /// else each document's row is copied to its place. Memory: the parts and the result
    /// (each sketch twice at the end), and 8 bytes a document to sort them.
    fn sorted(parts: Vec<Sketched>, bytes: usize) -> Sketched {
        let documents = parts.iter().map(|part| part.ids.len()).sum();
        let le = |a: &Document, b: &Document| (a.0, &a.1) <= (b.0, &b.1);
        let in_order = parts.iter().all(|part| part.ids.is_sorted_by(le))
            && parts
                .iter()
                .filter_map(|part| Some((part.ids.first()?, part.ids.last()?)))
                .collect::<Vec<_>>()
                .windows(2)
                .all(|w| le(w[0].1, w[1].0));
        // Reserved at once: the table is the audit's largest allocation.
        let mut all = Sketched {
            ids: Vec::with_capacity(documents),
            rows: SketchRows::with_capacity(bytes, documents),
        };
        if in_order {
            for part in parts {
                all.append(part);
            }
            return all;
        }
        // (part, row) of each document, in order.
        let mut order: Vec<(u32, u32)> = (parts.iter().enumerate())
            .flat_map(|(p, part)| {
                let (p, rows) = (u32::try_from(p), u32::try_from(part.ids.len()));
                let (p, rows) = (
                    p.expect("parts fit u32"),
                    rows.expect("a part's rows fit u32"),
                );
                (0..rows).map(move |i| (p, i))
            })
            .collect();
        order.par_sort_unstable_by(|&(p, i), &(q, j)| {
            let (a, b) = (
                &parts[p as usize].ids[i as usize],
                &parts[q as usize].ids[j as usize],
            );
            (a.0, &a.1).cmp(&(b.0, &b.1))
        });
        let mut ids: Vec<Vec<Option<Document>>> = Vec::with_capacity(parts.len());
        let mut rows = Vec::with_capacity(parts.len());
        for part in parts {
            ids.push(part.ids.into_iter().map(Some).collect());
            rows.push(part.rows);
        }
        for (p, i) in order {
            let (p, i) = (p as usize, i as usize);
            all.ids.push(ids[p][i].take().expect("each document once"));
            all.rows.push(rows[p].row(i));
        }
        all
    }

    /// Adds `other`'s documents, all above these, after them.
    fn append(&mut self, other: Sketched) {
        self.ids.extend(other.ids);
        self.rows.append(other.rows);
    }
}
