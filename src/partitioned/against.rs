//! The fingerprint pairs between new data and a reference corpus, with the reference never
//! moved: the new side's distinct fingerprints, as permuted tables, go to every task, and
//! each task matches its part of the reference against them where it was read.
//!
//! A part's fingerprints are sorted in every table's order and walked beside the new side's
//! keys of that table: two fingerprints within the distance share some table's leading
//! blocks, and a pair is kept only by the first such table ([`Permutations::reports`]), so
//! every pair comes out once per part that holds its reference fingerprint.

use std::sync::Mutex;

use crate::error::{Error, Result};
use crate::similarity::find_all::find_all_settings;
use crate::tables::permutation::Permutations;
use crate::tables::sorted_tables;

/// The new side's distinct fingerprints, held for matching reference parts against them:
/// one sorted copy per permuted table (8 bytes a fingerprint a table).
#[derive(Debug)]
pub struct Against {
    distance: u32,
    /// The tables, None at distance 0 (equal fingerprints only: `keys` is then the sorted
    /// fingerprints).
    perms: Option<Permutations>,
    /// Per table, its keys ascending.
    keys: Vec<Vec<u64>>,
}

impl Against {
    /// The tables of `fingerprints` (any order, repeats allowed) for pairs within `distance`
    /// bits, with `blocks` blocks (None: those the audit of that many would use).
    pub fn new(fingerprints: &[u64], distance: u8, blocks: Option<u8>) -> Result<Against> {
        if distance > 63 {
            return Err(Error::input(format!(
                "distance {distance}: expected 0 to 63"
            )));
        }
        let mut unique = fingerprints.to_vec();
        unique.sort_unstable();
        unique.dedup();
        if distance == 0 {
            return Ok(Against {
                distance: 0,
                perms: None,
                keys: vec![unique],
            });
        }
        let settings = find_all_settings(distance, unique.len() as u64, blocks)?;
        let perms = Permutations::new(&settings);
        let keys = Mutex::new(vec![Vec::new(); perms.tables().len()]);
        sorted_tables::for_each(&perms, &unique, |t, sorted| {
            keys.lock().expect("no visit panicked")[t] = sorted.to_vec();
            Ok(())
        })?;
        Ok(Against {
            distance: u32::from(distance),
            perms: Some(perms),
            keys: keys.into_inner().expect("no visit panicked"),
        })
    }

    /// How many distinct new fingerprints it holds.
    pub fn len(&self) -> usize {
        self.keys[0].len()
    }

    /// Whether it holds none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Calls `f(reference, fingerprint, distance)` for every pair of a fingerprint of
    /// `references` (a part of the reference, any order, repeats allowed) and a new one
    /// within the distance, each once, in ascending order.
    pub fn pairs(&self, references: &[u64], mut f: impl FnMut(u64, u64, u32)) -> Result<()> {
        let mut unique = references.to_vec();
        unique.sort_unstable();
        unique.dedup();
        let Some(perms) = &self.perms else {
            let new = &self.keys[0];
            for fp in unique {
                if new.binary_search(&fp).is_ok() {
                    f(fp, fp, 0);
                }
            }
            return Ok(());
        };
        let found = Mutex::new(Vec::new());
        sorted_tables::for_each(perms, &unique, |t, theirs| {
            let mut out = Vec::new();
            self.walk(perms, t, theirs, &mut out);
            found.lock().expect("no visit panicked").extend(out);
            Ok(())
        })?;
        let mut found = found.into_inner().expect("no visit panicked");
        found.sort_unstable();
        for (reference, fingerprint, distance) in found {
            f(reference, fingerprint, distance);
        }
        Ok(())
    }

    /// Appends the pairs table `t` reports between `theirs` (its reference keys, ascending)
    /// and the new side's keys of that table.
    fn walk(&self, perms: &Permutations, t: usize, theirs: &[u64], out: &mut Vec<(u64, u64, u32)>) {
        let table = &perms.tables()[t];
        let shift = 64 - table.prefix_bits();
        let ours = &self.keys[t];
        let mut at = 0;
        for group in theirs.chunk_by(|a, b| a >> shift == b >> shift) {
            let prefix = group[0] >> shift;
            // The new keys of the same prefix, found by galloping from the last group's end:
            // both sides ascend, and a binary search over all of them missed the cache.
            at = gallop(ours, at, |k| k >> shift < prefix);
            let end = gallop(ours, at, |k| k >> shift == prefix);
            for &x in group {
                for &y in &ours[at..end] {
                    let distance = (x ^ y).count_ones();
                    if distance <= self.distance {
                        let (x, y) = (table.unpermute(x), table.unpermute(y));
                        if perms.reports(t, x, y) {
                            out.push((x, y, distance));
                        }
                    }
                }
            }
            at = end;
        }
    }
}

/// The first index from `from` on where `before` stops holding (it holds for a prefix of
/// `keys[from..]`): steps of 1, 2, 4, ... then halving, so a short skip costs a few looks.
fn gallop(keys: &[u64], from: usize, before: impl Fn(u64) -> bool) -> usize {
    let mut step = 1;
    let mut low = from;
    while low + step <= keys.len() && before(keys[low + step - 1]) {
        low += step;
        step *= 2;
    }
    let high = (low + step).min(keys.len());
    low + keys[low..high].partition_point(|&k| before(k))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Every pair within the distance once, equal to comparing all, for any blocks.
        #[test]
        fn pairs_equal_brute_force(
            docs in super::super::tests::documents(),
            split in 0usize..240,
            distance in 0u8..5,
            extra in 1u8..4,
        ) {
            let both: Vec<u64> = docs.iter().map(|d| d.0).collect();
            let split = split.min(both.len());
            let (new, references) = both.split_at(split);
            let blocks = if distance == 0 { None } else { Some(distance + extra) };
            let against = Against::new(new, distance, blocks).unwrap();
            let mut got = Vec::new();
            against.pairs(references, |r, n, d| got.push((r, n, d))).unwrap();
            let mut want = Vec::new();
            for &r in references {
                for &n in new {
                    let d = (r ^ n).count_ones();
                    if d <= u32::from(distance) {
                        want.push((r, n, d));
                    }
                }
            }
            want.sort_unstable();
            want.dedup();
            prop_assert_eq!(got, want);
        }
    }

    #[test]
    fn a_distance_past_63_is_refused() {
        assert!(Against::new(&[1], 64, None).is_err());
        let against = Against::new(&[], 3, None).unwrap();
        assert!(against.is_empty());
        against.pairs(&[1, 2], |_, _, _| panic!("no pair")).unwrap();
    }
}
