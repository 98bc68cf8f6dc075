//! The keep rule in one task: `dedup`'s greedy over whole components of the fingerprint graph
//! that a job gathered in one place, optionally against reference documents, which are never
//! dropped (new data deduplicated against a corpus kept before).
//!
//! The answers are those of `simhashdb dedup` of the documents, in the order given, into a
//! store that holds the references: a document is dropped when a reference or a document
//! kept before it is within the distance (and, verified, their sketches pass); it names the
//! nearest, at equal distance a reference first (the earliest batch, then the smallest id),
//! then the smallest id. A reference fingerprint held by several references is represented,
//! as a store's is, by its earliest batch's smallest id: its sketch verifies the match.

use crate::dedup::near_duplicates::NearDuplicates;
use crate::error::{Error, Result};

/// A document as a task hands it to [`keep_rule`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Row<'a> {
    /// Its id.
    pub id: &'a str,
    /// Its fingerprint.
    pub fingerprint: u64,
    /// Its verification sketch (all of one size), None where it has none: its matches are
    /// then taken unverified.
    pub sketch: Option<&'a [u8]>,
    /// Whether it is a reference: never dropped, matched before a document at equal distance.
    pub reference: bool,
    /// A reference's batch in the store it came from (0 for none); ignored for the documents
    /// decided.
    pub batch: u64,
}

/// Calls `dropped(row, kept, distance, jaccard)` for every row of a document the keep rule
/// drops, in row order: `kept` is the row of its match (a reference or a document before it),
/// `jaccard` their estimate when verified (None for a match taken unverified). The documents
/// are taken in row order, against the reference rows: see the module docs. Verified at
/// `min_jaccard` when given; a job's task holds whole components, so each is decided as it
/// would be alone. Memory: the rows' ids and the fingerprint pairs among them.
pub fn keep_rule(
    rows: &[Row<'_>],
    distance: u8,
    min_jaccard: Option<f64>,
    mut dropped: impl FnMut(usize, usize, u32, Option<f64>),
) -> Result<()> {
    if distance > 63 {
        return Err(Error::input(format!(
            "distance {distance}: expected 0 to 63"
        )));
    }
    // The reference rows kept: one per fingerprint (its earliest batch's smallest id), in
    // (batch, id) order; a place there is its batch in the graph, so references come first.
    let (mut chosen, documents): (Vec<usize>, Vec<usize>) =
        (0..rows.len()).partition(|&r| rows[r].reference);
    chosen.sort_unstable_by_key(|&r| (rows[r].fingerprint, rows[r].batch, rows[r].id));
    chosen.dedup_by_key(|r| rows[*r].fingerprint);
    chosen.sort_unstable_by_key(|&r| (rows[r].batch, rows[r].id));
    let first = chosen.len() as u64;
    let ids: Vec<(u64, Box<str>, u64)> = chosen
        .iter()
        .chain(&documents)
        .enumerate()
        .map(|(place, &r)| (rows[r].fingerprint, rows[r].id.into(), place as u64))
        .collect();
    // A graph document's batch is its place in `chosen` then `documents`.
    let row_of = |batch: u64| -> usize {
        match batch.checked_sub(first) {
            Some(i) => documents[i as usize],
            None => chosen[batch as usize],
        }
    };
    let count = ids.len() as u64;
    let mut near = NearDuplicates::of_batched(count, ids, distance, None, &())?;
    near.set_references(first);
    if let Some(min) = min_jaccard {
        let sketches = (0..count as usize)
            .map(|d| rows[row_of(near.batch_of(d))].sketch)
            .collect();
        near.verify_sketch_rows(sketches, min, &())?;
    }
    near.for_each_dropped(|d, k, distance, jaccard| {
        dropped(
            row_of(near.batch_of(d)),
            row_of(near.batch_of(k)),
            distance,
            jaccard,
        );
    });
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// A dropped row: (row, kept row, distance, jaccard).
    type Dropped = (usize, usize, u32, Option<f64>);

    /// The rows `keep_rule` drops.
    fn dropped(rows: &[Row<'_>], distance: u8, min_jaccard: Option<f64>) -> Result<Vec<Dropped>> {
        let mut out = Vec::new();
        keep_rule(rows, distance, min_jaccard, |r, k, d, j| {
            out.push((r, k, d, j))
        })?;
        Ok(out)
    }

    /// `dedup` into a store of `references` as docs/cli.md words it, document by document; rows
    /// numbered references first.
    fn model(
        documents: &[Row<'_>],
        references: &[Row<'_>],
        distance: u32,
        min_jaccard: Option<f64>,
    ) -> Vec<Dropped> {
        let estimate = |a: Option<&[u8]>, b: Option<&[u8]>| match (a, b) {
            (Some(a), Some(b)) => Some(crate::similarity::sketch::estimate(a, b)),
            _ => None,
        };
        let passes =
            |j: Option<f64>| min_jaccard.is_none() || j.is_none_or(|j| j >= min_jaccard.unwrap());
        // A stored fingerprint's representative: its earliest batch's smallest id.
        let mut represented: Vec<usize> = Vec::new();
        for (r, row) in references.iter().enumerate() {
            match represented
                .iter_mut()
                .find(|s| references[**s].fingerprint == row.fingerprint)
            {
                Some(s) => {
                    if (row.batch, row.id) < (references[*s].batch, references[*s].id) {
                        *s = r;
                    }
                }
                None => represented.push(r),
            }
        }
        let first = references.len();
        let mut kept: Vec<usize> = Vec::new();
        let mut out = Vec::new();
        for (i, row) in documents.iter().enumerate() {
            let dist = |other: &Row<'_>| (other.fingerprint ^ row.fingerprint).count_ones();
            let verified = |other: &Row<'_>| {
                let j = if min_jaccard.is_some() {
                    estimate(row.sketch, other.sketch)
                } else {
                    None
                };
                passes(j).then_some(j)
            };
            let stored = represented
                .iter()
                .filter(|&&r| dist(&references[r]) <= distance)
                .filter_map(|&r| {
                    verified(&references[r]).map(|j| {
                        (
                            dist(&references[r]),
                            references[r].batch,
                            references[r].id,
                            r,
                            j,
                        )
                    })
                })
                .min_by(|a, b| (a.0, a.1, a.2).cmp(&(b.0, b.1, b.2)));
            let earlier = kept
                .iter()
                .filter(|&&k| dist(&documents[k]) <= distance)
                .filter_map(|&k| {
                    verified(&documents[k]).map(|j| (dist(&documents[k]), documents[k].id, k, j))
                })
                .min_by(|a, b| (a.0, a.1).cmp(&(b.0, b.1)));
            let found = match (stored, earlier) {
                (Some(s), Some(e)) if e.0 < s.0 => Some((first + e.2, e.0, e.3)),
                (Some(s), _) => Some((s.3, s.0, s.4)),
                (None, Some(e)) => Some((first + e.2, e.0, e.3)),
                (None, None) => None,
            };
            match found {
                Some((k, distance, jaccard)) => out.push((first + i, k, distance, jaccard)),
                None => kept.push(i),
            }
        }
        out
    }

    fn rows() -> impl Strategy<Value = Vec<(u64, u8, u64, u8)>> {
        // (fingerprint, id, batch, sketch): few base fingerprints and their near copies, ids
        // from a small set (a document may share a reference's id), four sketches.
        proptest::collection::vec(
            (0u64..6, 0u32..64, 0u8..4, 0u8..30, 0u64..3, 0u8..5).prop_map(
                |(b, bit, kind, id, batch, sketch)| {
                    let base = b.wrapping_mul(0x9E37_79B9_7F4A_7C15);
                    let fp = match kind {
                        0 => base,
                        1 => base ^ (1 << bit),
                        2 => base ^ (3 << (bit % 63)),
                        _ => base ^ (7 << (bit % 62)),
                    };
                    (fp, id, batch, sketch)
                },
            ),
            0..40,
        )
    }

    proptest! {
        /// The keep rule against references equals `dedup` into a store of them, verified or
        /// not, hot fingerprints and shared ids included.
        #[test]
        fn keep_rule_equals_dedup_into_a_store_of_the_references(
            docs in rows(),
            refs in rows(),
            hot in 0usize..300,
            distance in 0u8..4,
            verified in any::<bool>(),
        ) {
            let sketches: Vec<Vec<u8>> = (0..4u64)
                .map(|s| (0..8u64).flat_map(|w| (if w < 2 * s { w } else { 100 + w + s * 10 }).to_le_bytes()).collect())
                .collect();
            let names: Vec<String> = (0..30).map(|i| format!("d{i}")).collect();
            let hot_names: Vec<String> = (0..hot).map(|i| format!("hot{i:04}")).collect();
            let row = |(fp, id, batch, sketch): &(u64, u8, u64, u8), unique: Option<usize>| Row {
                id: match unique { Some(i) => &hot_names[i], None => &names[*id as usize] },
                fingerprint: *fp,
                sketch: sketches.get(*sketch as usize).map(|s| &s[..]),
                reference: false,
                batch: *batch,
            };
            let mut documents: Vec<Row<'_>> = Vec::new();
            let mut seen = std::collections::HashSet::new();
            for d in &docs {
                if seen.insert(d.1) {
                    documents.push(row(d, None));
                }
            }
            let mut references: Vec<Row<'_>> = Vec::new();
            let mut seen = std::collections::HashSet::new();
            for r in &refs {
                if seen.insert(r.1) {
                    references.push(Row { reference: true, ..row(r, None) });
                }
            }
            // A hot page: copies in the references and among the documents.
            for i in 0..hot {
                let hot = row(&(0, 0, (i % 3) as u64, (i % 5) as u8), Some(i));
                if i % 2 == 0 {
                    references.push(Row { reference: true, ..hot });
                } else {
                    documents.push(hot);
                }
            }
            let min = verified.then_some(0.5);
            let rows: Vec<Row<'_>> = references.iter().chain(&documents).copied().collect();
            let got = dropped(&rows, distance, min).unwrap();
            let want = model(&documents, &references, u32::from(distance), min);
            prop_assert_eq!(got, want);
        }
    }

    #[test]
    fn without_references_it_is_the_audits_rule() {
        let a = [(0b0u64, "a"), (0b1, "b"), (0b11, "c"), (0b111, "d")];
        let documents: Vec<Row<'_>> = a
            .iter()
            .map(|&(fingerprint, id)| Row {
                id,
                fingerprint,
                sketch: None,
                reference: false,
                batch: 0,
            })
            .collect();
        let out = dropped(&documents, 1, None).unwrap();
        // a kept, b drops to a, c kept (2 from a), d drops to c: no chain drops d.
        assert_eq!(out, [(1, 0, 1, None), (3, 2, 1, None)]);
        assert!(dropped(&documents, 64, None).is_err());
    }
}
