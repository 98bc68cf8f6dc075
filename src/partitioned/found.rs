//! What the slices of one number hold once merged: the fingerprint pairs their table reports,
//! the fingerprints of several documents, the id hashes of several documents.

use super::plan::Plan;
use super::slices::decode;
use crate::error::{Error, Result};
use crate::similarity::find_all::{close_pairs_in_sorted, FingerprintPair};
use crate::tables::radix;

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
