//! What each document of an insert's run does to its id: inserted, replaced, unchanged or
//! superseded, counted for the summary, and whether it must be written.

use rayon::prelude::*;

use crate::format::block::docs::DocState;
use crate::sys::prefetch;
use crate::write::batch::Batch;

/// Tallies the run's documents `order` (`(id hash, batch index)`, one per id, in id hash
/// order): returns their counts and whether each must be written. `before` and `earlier` are
/// the states the committed runs and this batch's earlier runs give each id, aligned with
/// `order`, or empty where there are no such runs. With neither (the first run into an
/// empty store) every document is inserted, and no document is read.
pub(super) fn tally_batch(
    order: &[(u64, u32)],
    documents: &Batch,
    (before, earlier): (&[Option<DocState>], &[Option<DocState>]),
) -> (Counts, Vec<bool>) {
    if before.is_empty() && earlier.is_empty() {
        let inserted = order.len() as i64;
        return (
            Counts {
                inserted,
                ..Counts::default()
            },
            vec![true; order.len()],
        );
    }
    let live = |states: &[Option<DocState>], j: usize| match states.get(j) {
        Some(Some(DocState::Live { fingerprint, .. })) => Some(*fingerprint),
        _ => None,
    };
    // Tallied in parallel chunks, each with its own counts.
    let parts: Vec<(Counts, Vec<bool>)> = order
        .par_chunks(TALLY_CHUNK)
        .enumerate()
        .map(|(c, chunk)| {
            let mut counts = Counts::default();
            let writes = chunk
                .iter()
                .enumerate()
                .map(|(k, &(_, i))| {
                    let j = c * TALLY_CHUNK + k;
                    if let Some(&(_, later)) = chunk.get(k + prefetch::AHEAD) {
                        documents.prefetch(later as usize);
                    }
                    // Every document is asked for: asking only for those whose fingerprint
                    // is read (ids a run holds) measured slower.
                    let fingerprint = || documents.fingerprint(i as usize);
                    let (before, earlier) = (live(before, j), live(earlier, j));
                    tally(&mut counts, before, earlier, fingerprint)
                })
                .collect();
            (counts, writes)
        })
        .collect();
    let (mut total, mut writes) = (Counts::default(), Vec::with_capacity(order.len()));
    for (counts, part) in parts {
        total.add(counts);
        writes.extend(part);
    }
    (total, writes)
}

/// Documents per parallel tally task.
const TALLY_CHUNK: usize = 1 << 16;

/// A part of the batch's counts. Signed: a run may take back what an earlier run counted.
#[derive(Default)]
pub(super) struct Counts {
    pub(super) inserted: i64,
    pub(super) replaced: i64,
    pub(super) unchanged: i64,
    pub(super) superseded: i64,
}

impl Counts {
    fn add(&mut self, part: Counts) {
        self.inserted += part.inserted;
        self.replaced += part.replaced;
        self.unchanged += part.unchanged;
        self.superseded += part.superseded;
    }
}

/// Counts a document of the batch in `summary` by what it does to its id, and says whether it
/// must be written. `before` is the id's fingerprint in the committed store, `earlier` the one
/// an earlier run of this batch gave it (that run counted the id against `before`);
/// `fingerprint` reads the document's, which an id no run holds does not need (read out of
/// order, it is a cache miss).
fn tally(
    summary: &mut Counts,
    before: Option<u64>,
    earlier: Option<u64>,
    fingerprint: impl FnOnce() -> u64,
) -> bool {
    let versus_before = |summary: &mut Counts, fp: u64, add: bool| {
        let count = match before {
            Some(b) if b == fp => &mut summary.unchanged,
            Some(_) => &mut summary.replaced,
            None => return,
        };
        if add {
            *count += 1;
        } else {
            *count -= 1;
        }
    };
    match (earlier, before) {
        (None, None) => {
            summary.inserted += 1;
            true
        }
        // Superseded, as within one run; counted by what it now becomes instead of what it
        // became then (the batch may change it back, or away again).
        (Some(written), _) => {
            summary.superseded += 1;
            let fingerprint = fingerprint();
            if written == fingerprint {
                return false;
            }
            versus_before(summary, written, false);
            versus_before(summary, fingerprint, true);
            true
        }
        (None, Some(before)) if before == fingerprint() => {
            summary.unchanged += 1;
            false
        }
        (None, Some(_)) => {
            summary.replaced += 1;
            true
        }
    }
}
