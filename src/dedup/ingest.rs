//! Dedup on ingest: which documents of a new input to keep, given what the store holds.
//!
//! Greedy in input order: a document is a duplicate when a stored document, or an earlier
//! kept document of the input, is within the distance; otherwise it is kept. A duplicate
//! names its nearest match: smallest distance; at equal distance a stored document before one
//! of the input, then the earliest batch, then the smallest id, then (an id the input gives
//! twice, both kept) the earlier in the input.
//!
//! With a least Jaccard similarity ([`Dedup::new`]'s `min_jaccard`, a store made with sketches) a
//! match must also pass verification: the sketches of the document and of the match estimate
//! a word 3-shingle Jaccard of at least that much. A stored fingerprint is represented by its
//! representative's sketch. A match where either side has no sketch is taken unverified (as
//! the fingerprints alone would decide) and the verdict says so.
//!
//! Documents are decided a group at a time ([`Dedup::decide`]): the group's distinct
//! fingerprints are looked up in the store in parallel, then each document in turn against
//! the documents kept so far ([`Kept`]). A stored fingerprint's representative (its earliest
//! batch's smallest live id) is found once and remembered, so a page the store holds 1e5
//! times costs one scan of its postings, not one per copy in the input.
//!
//! Memory: the kept documents' ids and fingerprints with their tables (see [`Kept`]), and one
//! id per distinct stored fingerprint matched; never the input's records.

use std::collections::HashMap;

use rayon::prelude::*;

use crate::dedup::kept::Kept;
use crate::error::{guard_redb, Error, Result};
use crate::format::catalog::BatchInfo;
use crate::read::snapshot::Snapshot;
use crate::similarity::jaccard::check_min_jaccard;
use crate::similarity::sketch;
use crate::write::batch::{Batch, ReadSummary};
use crate::write::insertion::InsertSummary;
use crate::write::store::Store;

/// What a dedup decided for one document, greedily in input order: a document is a duplicate
/// when a stored document, or an earlier kept document of the input, is within the distance;
/// otherwise it is kept. A duplicate names its nearest match: smallest distance; at equal
/// distance a stored document before one of the input, then the earliest batch, then the
/// smallest id. A duplicate of a stored document names the batch that stored its match (its
/// provenance); one of a document of the same input names none. Its JSON form (HTTP, Python)
/// is `{"id", "kept", "duplicate_of", "distance", "stored", "duplicate_batch",
/// "duplicate_label", "duplicate_committed_utc"}`, all but the first two null for a kept
/// document; a verified dedup adds `"jaccard"` to a duplicate verified by sketches, and
/// `"unverified": true` to one taken without (a side had no sketch).
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
#[non_exhaustive]
pub struct Verdict {
    /// The document's id.
    pub id: String,
    /// Whether it is kept (new): nothing stored or kept before it is within the distance.
    pub kept: bool,
    /// For a duplicate, the id of its nearest match.
    pub duplicate_of: Option<String>,
    /// For a duplicate, the distance to its nearest match.
    pub distance: Option<u32>,
    /// For a duplicate, whether its nearest match is a stored document (else one kept earlier
    /// from the same input).
    pub stored: Option<bool>,
    /// For a duplicate verified by sketches, the Jaccard similarity they estimate.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub jaccard: Option<f64>,
    /// For a duplicate in a verified dedup, whether it was taken without verification (the
    /// document or its match has no sketch).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub unverified: bool,
    /// For a duplicate of a stored document, the number of the batch that stored its match.
    pub duplicate_batch: Option<u64>,
    /// That batch's label, if it was given one.
    pub duplicate_label: Option<String>,
    /// When that batch was committed, as `YYYY-MM-DDTHH:MM:SSZ` (UTC).
    pub duplicate_committed_utc: Option<String>,
}

/// What a dedup did, and for a dedup of a source each document's verdict. Its JSON form is
/// `{"read", "skipped", "kept", "duplicates_of_stored", "duplicates_within_input",
/// "unverified", "inserted", "replaced", "superseded", "batch", "distance"}`, with
/// `"warnings"` when there are any and `"results"` when it holds them.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
#[non_exhaustive]
pub struct DedupSummary {
    /// Documents read (valid ones; invalid ones skipped are `skipped`).
    pub read: u64,
    /// Invalid records skipped (only when asked to skip them).
    pub skipped: u64,
    /// Of those, whole text files.
    #[serde(skip)]
    pub skipped_files: u64,
    /// The first few skipped records' errors, `source:line: message`.
    #[serde(skip)]
    pub first_skipped: Vec<String>,
    /// Warnings about the inputs (see [`ReadSummary::warnings`]).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    /// Documents kept.
    pub kept: u64,
    /// Documents dropped for a stored near duplicate.
    pub duplicates_of_stored: u64,
    /// Documents dropped for an earlier kept document of the input.
    pub duplicates_within_input: u64,
    /// Duplicates taken without verification in a verified dedup (a side had no sketch).
    pub unverified: u64,
    /// Kept documents inserted under an id the store did not hold (0 unless the dedup
    /// inserts; as `insert` counts them).
    pub inserted: u64,
    /// Kept documents inserted under an id the store held with another fingerprint.
    pub replaced: u64,
    /// Kept documents whose id a later kept document of the same input took over (the
    /// later one is stored, as `insert` does).
    pub superseded: u64,
    /// The batch the kept documents were inserted as (None unless one was committed).
    pub batch: Option<u64>,
    /// The distance documents were compared at.
    pub distance: u32,
    /// One verdict per document read, in input order: a dedup of a source
    /// ([`crate::Store::dedup_from`]) answers them; a dedup of files writes them out instead (None).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub results: Option<Vec<Verdict>>,
}

impl DedupSummary {
    /// Notes the invalid records skipped and the warnings of reading the input.
    pub(crate) fn record_read(&mut self, read: ReadSummary) {
        self.skipped += read.skipped;
        self.skipped_files += read.skipped_files;
        self.first_skipped.extend(read.first_skipped);
        self.warnings.extend(read.warnings);
    }

    /// Takes the counts of the insert of the kept documents.
    pub(crate) fn count_insert(&mut self, insert: &InsertSummary) {
        self.inserted = insert.inserted;
        self.replaced = insert.replaced;
        self.superseded = insert.superseded;
        self.batch = insert.batch;
    }
}

/// A stored fingerprint's representative: its earliest batch and smallest id there, and in
/// a verified dedup its sketch, if it has one.
type Representative = Option<(u64, Box<str>, Option<Box<[u8]>>)>;

/// How a candidate match fared against verification.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Check {
    /// Verified: the estimated Jaccard similarity (at least the least asked for).
    Passed(f64),
    /// Taken without verification: a side has no sketch (or none was asked for).
    Unverified,
}

/// Whether a match with sketch `theirs` passes for a document with sketch `ours`, at
/// `min_jaccard` (None: no verification, every match passes).
fn check(min_jaccard: Option<f64>, ours: Option<&[u8]>, theirs: Option<&[u8]>) -> Option<Check> {
    let Some(min) = min_jaccard else {
        return Some(Check::Unverified);
    };
    match (ours, theirs) {
        (Some(a), Some(b)) => {
            let j = sketch::estimate(a, b);
            (j >= min).then_some(Check::Passed(j))
        }
        _ => Some(Check::Unverified),
    }
}

/// A dedup under way against one snapshot of a store: documents are given in input order, a
/// group at a time, and each group's verdicts depend on every group given before (so input
/// of any size is decided a group at a time: [`Snapshot::dedup_files`]).
pub(crate) struct Dedup<'s> {
    snapshot: &'s Snapshot,
    distance: u32,
    kept: Kept,
    /// The representative of each stored fingerprint matched so far.
    representatives: HashMap<u64, Representative>,
    /// The least estimated Jaccard similarity a match needs, when verifying with sketches.
    min_jaccard: Option<f64>,
    /// The snapshot's batches by number, for the verdicts' provenance.
    batches: HashMap<u64, BatchInfo>,
    summary: DedupSummary,
}

impl<'s> Dedup<'s> {
    /// A dedup against `snapshot` at `distance` bits (at most the store's K; see
    /// [`Snapshot::distance`]), verified with sketches when `min_jaccard` is given: a document
    /// is then a duplicate of a match only when their sketches estimate a word 3-shingle
    /// Jaccard similarity of at least `min_jaccard` (or one of them has none: see the module
    /// docs). The documents' sketches are those of the batches given
    /// ([`Batch::push_sketched`]; text read for a store with sketches has them). A store
    /// without sketches is an error that says how to get them.
    pub(crate) fn new(
        snapshot: &'s Snapshot,
        distance: u32,
        min_jaccard: Option<f64>,
    ) -> Result<Self> {
        snapshot.check_distance(distance)?;
        if let Some(min) = min_jaccard {
            check_min_jaccard(min)?;
            snapshot.check_sketches()?;
        }
        Ok(Dedup {
            snapshot,
            distance,
            kept: Kept::new(snapshot.permutations(), distance),
            representatives: HashMap::new(),
            min_jaccard,
            batches: snapshot
                .batches()
                .into_iter()
                .map(|b| (b.batch, b))
                .collect(),
            summary: DedupSummary {
                distance,
                ..DedupSummary::default()
            },
        })
    }

    /// Decides every document of `documents`, in order, after every document given before.
    pub(crate) fn decide(&mut self, documents: &Batch) -> Result<Vec<Verdict>> {
        guard_redb(self.snapshot.dir(), || self.decide_unguarded(documents))
    }

    fn decide_unguarded(&mut self, documents: &Batch) -> Result<Vec<Verdict>> {
        let (snapshot, distance, min_jaccard) = (self.snapshot, self.distance, self.min_jaccard);
        let stored = nearest_stored(
            snapshot,
            distance,
            min_jaccard,
            &mut self.representatives,
            documents,
        )?;
        let accept = |kept: &Kept, i: usize, k: usize| {
            check(min_jaccard, documents.sketch(i), kept.sketch(k))
        };
        // The documents kept before this group, looked up in parallel; those this group
        // keeps, in turn. Nothing is nearer than a stored copy: its lookups are skipped.
        let earlier: Vec<Option<(u32, usize)>> = (0..documents.len())
            .into_par_iter()
            .with_min_len(1024)
            .map(|i| match stored[i] {
                Some((0, ..)) => None,
                _ => self.kept.nearest_where(documents.fingerprint(i), |k| {
                    accept(&self.kept, i, k).is_some()
                }),
            })
            .collect();
        let mut group = self.kept.empty_like();
        let mut verdicts = Vec::with_capacity(documents.len());
        for (i, stored) in stored.into_iter().enumerate() {
            let (id, fp) = (documents.id(i), documents.fingerprint(i));
            let earlier = earlier[i].map(|(d, k)| (d, self.kept.id(k), accept(&self.kept, i, k)));
            let in_group = match stored {
                Some((0, ..)) => None,
                _ => group
                    .nearest_where(fp, |k| accept(&group, i, k).is_some())
                    .map(|(d, k)| (d, group.id(k), accept(&group, i, k))),
            };
            // The nearest kept document (the smallest id at equal distance, then the earliest:
            // `earlier` comes first, and min_by keeps the first of equals); a stored match
            // wins a tie.
            let kept = [earlier, in_group]
                .into_iter()
                .flatten()
                .min_by(|a, b| (a.0, a.1).cmp(&(b.0, b.1)))
                .filter(|&(d, ..)| stored.is_none_or(|(ds, ..)| d < ds));
            let verdict = match (kept, stored) {
                (Some((d, of, check)), _) => {
                    self.summary.duplicates_within_input += 1;
                    duplicate(id, of, d, None, check, min_jaccard)
                }
                (None, Some((d, batch, representative, check))) => {
                    self.summary.duplicates_of_stored += 1;
                    let stored_by = self.batches.get(&batch).ok_or_else(|| {
                        Error::corrupt(format!(
                            "{representative} was stored by batch {batch}, which the catalog \
                             does not list"
                        ))
                    })?;
                    duplicate(
                        id,
                        representative,
                        d,
                        Some(stored_by),
                        Some(check),
                        min_jaccard,
                    )
                }
                (None, None) => {
                    self.summary.kept += 1;
                    group.push(id, fp, documents.sketch(i));
                    Verdict {
                        id: id.to_string(),
                        kept: true,
                        duplicate_of: None,
                        distance: None,
                        stored: None,
                        jaccard: None,
                        unverified: false,
                        duplicate_batch: None,
                        duplicate_label: None,
                        duplicate_committed_utc: None,
                    }
                }
            };
            self.summary.unverified += u64::from(verdict.unverified);
            verdicts.push(verdict);
        }
        self.kept.absorb(&group);
        self.summary.read += documents.len() as u64;
        Ok(verdicts)
    }

    /// What the dedup did so far (nothing inserted: see [`Store::dedup_from`]).
    pub(crate) fn summary(&self) -> DedupSummary {
        self.summary.clone()
    }

    /// Notes the invalid records skipped while reading the input.
    pub(crate) fn record_read(&mut self, read: ReadSummary) {
        self.summary.record_read(read);
    }
}

/// A document's stored match: (distance, batch, id, how verification went).
type StoredMatch<'r> = (u32, u64, &'r str, Check);
/// A stored candidate: (distance, batch, id, sketch).
type Candidate<'r> = (u32, u64, &'r str, Option<&'r [u8]>);

/// Each document's nearest stored document that passes verification: (distance, batch,
/// id, check). The distinct fingerprints are looked up once each; representatives found are
/// remembered in `representatives`.
fn nearest_stored<'r>(
    snapshot: &Snapshot,
    distance: u32,
    min_jaccard: Option<f64>,
    representatives: &'r mut HashMap<u64, Representative>,
    documents: &Batch,
) -> Result<Vec<Option<StoredMatch<'r>>>> {
    // (fingerprint, document) by fingerprint: the distinct fingerprints, and where each
    // document's answer is.
    let mut by_fingerprint: Vec<(u64, u32)> = (0..documents.len())
        .map(|i| (documents.fingerprint(i), i as u32))
        .collect();
    by_fingerprint.par_sort_unstable();
    let mut fingerprints: Vec<u64> = by_fingerprint.iter().map(|&(fp, _)| fp).collect();
    fingerprints.dedup();
    let close = snapshot.close_fingerprints_many(&fingerprints, distance)?;
    let mut unknown: Vec<u64> = close
        .iter()
        .flatten()
        .map(|&(fp, _)| fp)
        .filter(|fp| !representatives.contains_key(fp))
        .collect();
    unknown.par_sort_unstable();
    unknown.dedup();
    if min_jaccard.is_some() {
        let found: Vec<(u64, Representative)> = unknown
            .into_par_iter()
            .map(|fp| Ok((fp, representative(snapshot, fp)?)))
            .collect::<Result<_>>()?;
        representatives.extend(found);
    } else {
        // Without sketches, every fingerprint's documents are read together (each block
        // once), and the earliest batch, then smallest id, of each kept.
        for &fp in &unknown {
            representatives.insert(fp, None);
        }
        for (fp, id, batch) in snapshot.live_documents_of_all(&unknown, &())? {
            let best = representatives.get_mut(&fp).expect("each unknown is in");
            if best
                .as_ref()
                .is_none_or(|(b, i, _)| (batch, &*id) < (*b, &**i))
            {
                *best = Some((batch, id, None));
            }
        }
    }
    let representatives = &*representatives;
    // Each distinct fingerprint's stored candidates, nearest first: (distance, batch, id,
    // sketch).
    let candidates: Vec<Vec<Candidate<'_>>> = close
        .iter()
        .map(|close| {
            let mut found: Vec<_> = close
                .iter()
                .filter_map(|&(fp, d)| {
                    let (batch, id, sketch) = representatives[&fp].as_ref()?;
                    Some((d, *batch, &**id, sketch.as_deref()))
                })
                .collect();
            found.sort_unstable_by(|a, b| (a.0, a.1, a.2).cmp(&(b.0, b.1, b.2)));
            found
        })
        .collect();
    let mut answers = vec![None; documents.len()];
    let mut distinct = 0;
    for (n, &(fp, i)) in by_fingerprint.iter().enumerate() {
        if n > 0 && by_fingerprint[n - 1].0 != fp {
            distinct += 1;
        }
        let ours = documents.sketch(i as usize);
        answers[i as usize] = candidates[distinct]
            .iter()
            .find_map(|&(d, batch, id, theirs)| {
                check(min_jaccard, ours, theirs).map(|check| (d, batch, id, check))
            });
    }
    Ok(answers)
}

/// The verdict on a duplicate of `of`, stored by batch `stored_by` (None: a document of the
/// input), as `check` verified it (in a dedup verified at `min_jaccard`).
fn duplicate(
    id: &str,
    of: &str,
    distance: u32,
    stored_by: Option<&BatchInfo>,
    check: Option<Check>,
    min_jaccard: Option<f64>,
) -> Verdict {
    Verdict {
        id: id.to_string(),
        kept: false,
        duplicate_of: Some(of.to_string()),
        distance: Some(distance),
        stored: Some(stored_by.is_some()),
        duplicate_batch: stored_by.map(|b| b.batch),
        duplicate_label: stored_by.and_then(|b| b.label.clone()),
        duplicate_committed_utc: stored_by.map(|b| b.committed_utc.clone()),
        jaccard: match check {
            Some(Check::Passed(j)) => Some(j),
            _ => None,
        },
        unverified: min_jaccard.is_some() && check == Some(Check::Unverified),
    }
}

/// The live document of `fingerprint` a duplicate names, with its sketch: earliest batch,
/// then smallest id; None when every document of it was replaced or deleted.
fn representative(snapshot: &Snapshot, fingerprint: u64) -> Result<Representative> {
    let mut best: Option<(u64, String, Option<Vec<u8>>)> = None;
    let mut consider = |id: &str, batch: u64, sketch: Option<&[u8]>| {
        let better = match &best {
            None => true,
            Some((b, i, _)) => (batch, id) < (*b, i.as_str()),
        };
        if better {
            best = Some((batch, id.to_string(), sketch.map(<[u8]>::to_vec)));
        }
    };
    if snapshot.sketches_in_docs() {
        snapshot.live_sketched_documents_of(&[fingerprint], |_, id, batch, sketch| {
            consider(id, batch, sketch)
        })?;
    } else {
        // Only the chosen document's sketch is looked up: a page stored a million times is
        // one lookup, not a million.
        snapshot.live_documents_of(fingerprint, |id, batch| consider(id, batch, None))?;
        if let Some((batch, id, sketch)) = &mut best {
            *sketch = snapshot
                .sketches_of(&[(fingerprint, id, *batch)])?
                .pop()
                .flatten();
        }
    }
    let Some((batch, id, sketch)) = best else {
        return Ok(None);
    };
    Ok(Some((
        batch,
        id.into_boxed_str(),
        sketch.map(Vec::into_boxed_slice),
    )))
}

impl Store {
    /// Dedups `documents` against the store (verified with sketches at `min_jaccard`, when
    /// given) and inserts the kept ones, with their sketches, as one batch as `insert` says,
    /// atomically: the writer lock this handle holds keeps every other writer out between
    /// the check and the commit. Nothing kept, nothing inserted (no batch).
    pub(crate) fn dedup_and_insert(
        &mut self,
        documents: &Batch,
        distance: u32,
        min_jaccard: Option<f64>,
        insert: &crate::write::insertion::InsertOptions,
    ) -> Result<(Vec<Verdict>, DedupSummary)> {
        let snapshot = self.snapshot()?;
        let mut dedup = Dedup::new(&snapshot, distance, min_jaccard)?;
        let verdicts = dedup.decide(documents)?;
        let mut summary = dedup.summary();
        drop(dedup);
        drop(snapshot);
        let mut kept = Batch::new();
        for (i, verdict) in verdicts.iter().enumerate() {
            if verdict.kept {
                let (id, fingerprint) = (documents.id(i), documents.fingerprint(i));
                match documents.sketch(i) {
                    Some(sketch) => kept.push_sketched(id, fingerprint, sketch)?,
                    None => kept.push(id, fingerprint)?,
                }
            }
        }
        if !kept.is_empty() {
            let mut insertion = self.begin_insert_as(insert);
            insertion.write(&kept)?;
            summary.count_insert(&insertion.commit()?);
        }
        Ok((verdicts, summary))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::settings::Settings;
    use proptest::prelude::*;

    fn batch_of(docs: &[(u8, u64)]) -> Batch {
        let mut batch = Batch::new();
        for (id, fp) in docs {
            batch.push(&format!("d{id}"), *fp).unwrap();
        }
        batch
    }

    /// Fingerprints near each other often: a few bases with a few low bits flipped.
    fn fingerprint() -> impl Strategy<Value = u64> {
        (0u64..4, 0u64..16).prop_map(|(base, low)| base.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ low)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(32))]

        /// Input given in groups is decided as if given at once: each group sees every
        /// document kept before it (what lets dedup_files read any size a group at a time).
        #[test]
        fn groups_decide_as_one(
            stored in proptest::collection::vec((0u8..20, fingerprint()), 0..20),
            input in proptest::collection::vec((0u8..40, fingerprint()), 0..40),
            cuts in proptest::collection::vec(0usize..40, 0..4),
            distance in 0u32..4,
        ) {
            let dir = tempfile::tempdir().unwrap();
            let mut store = Store::create(&dir.path().join("s"), Settings::default()).unwrap();
            store.insert(&batch_of(&stored), None).unwrap();
            let snapshot = store.snapshot().unwrap();
            let mut whole = Dedup::new(&snapshot, distance, None).unwrap();
            let expected = whole.decide(&batch_of(&input)).unwrap();

            let mut cuts: Vec<usize> = cuts.into_iter().map(|c| c.min(input.len())).collect();
            cuts.sort();
            cuts.push(input.len());
            let mut grouped = Dedup::new(&snapshot, distance, None).unwrap();
            let (mut start, mut got) = (0, Vec::new());
            for cut in cuts {
                got.extend(grouped.decide(&batch_of(&input[start..cut])).unwrap());
                start = cut;
            }
            prop_assert_eq!(got, expected);
            prop_assert_eq!(grouped.summary(), whole.summary());
        }
    }
}
