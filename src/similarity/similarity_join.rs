//! Every pair of sets whose Jaccard similarity reaches a threshold, exactly: the ground truth
//! `tune` scores fingerprints against.
//!
//! The prefix filter of AllPairs and PPJoin (Bayardo et al. 2007, Xiao et al. 2008): order the
//! elements from rarest to commonest; two sets x, y with J >= t share at least
//! `alpha = ceil(t * max(|x|, |y|))` elements, so the first `|x| - alpha + 1` elements of x
//! and of y (their prefixes) share at least one. Each set is compared only with the sets found
//! through its prefix in an inverted index of prefixes, of sizes in `[t|x|, |x|]` (the size
//! filter), and each candidate's Jaccard is then computed exactly. Nothing is sampled: the
//! result equals the brute force over all pairs (a property test checks it).
//!
//! Sets equal as sets are collapsed first (each such group is all pairs at J = 1), so corpora
//! with many exact duplicates cost no more than their distinct documents.

use std::collections::HashMap;

use rayon::prelude::*;

use crate::similarity::jaccard::jaccard;

/// Two sets at or above the join's threshold: indexes `a < b` into the joined sets.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SimilarPair {
    /// The smaller index.
    pub a: u32,
    /// The larger index.
    pub b: u32,
    /// Their Jaccard similarity, as [`jaccard`] computes it.
    pub jaccard: f64,
}

/// Slack for floating-point rounding in the filters: a prefix one element longer, or a size
/// bound a hair lower, only adds candidates, never loses a pair.
const SLACK: f64 = 1e-9;

/// Every pair of `sets` (each sorted and distinct, as [`crate::shingle_set`] makes them) whose
/// [`jaccard`] is at least `min_jaccard` (in (0, 1]), sorted by (a, b). `progress(n)` is told
/// of every `n` sets probed.
pub fn similar_pairs(
    sets: &[Vec<u64>],
    min_jaccard: f64,
    progress: impl Fn(u64) + Sync,
) -> Vec<SimilarPair> {
    assert!(
        min_jaccard > 0.0 && min_jaccard <= 1.0,
        "a threshold in (0, 1]"
    );
    // Collapse equal sets: `members[u]` are the indexes whose set is distinct set u.
    let mut by_set: HashMap<&[u64], u32> = HashMap::with_capacity(sets.len());
    let mut members: Vec<Vec<u32>> = Vec::new();
    for (i, set) in sets.iter().enumerate() {
        let next = members.len() as u32;
        let u = *by_set.entry(set.as_slice()).or_insert(next);
        if u == next {
            members.push(Vec::new());
        }
        members[u as usize].push(i as u32);
    }
    let mut distinct: Vec<&[u64]> = vec![&[]; members.len()];
    for (set, &u) in &by_set {
        distinct[u as usize] = set;
    }
    drop(by_set);

    let ranked = ranked_by_rarity(&distinct);
    // Probe order: by size, so a set's partners of size at least t|x| that come before it are
    // all indexed, and an inverted list is sorted by size.
    let mut order: Vec<u32> = (0..distinct.len() as u32).collect();
    order.sort_by_key(|&u| (ranked[u as usize].len(), u));
    let prefix_len = |len: usize| {
        let alpha = ((min_jaccard * len as f64) - SLACK).ceil().max(1.0) as usize;
        len.saturating_sub(alpha) + 1
    };
    let mut index: HashMap<u32, Vec<u32>> = HashMap::new();
    for (position, &u) in order.iter().enumerate() {
        let set = &ranked[u as usize];
        for &element in &set[..prefix_len(set.len()).min(set.len())] {
            index.entry(element).or_default().push(position as u32);
        }
    }

    let found: Vec<(u32, u32, f64)> = order
        .par_iter()
        .enumerate()
        .map_init(
            || vec![u32::MAX; order.len()],
            |seen, (position, &u)| {
                let set = &ranked[u as usize];
                let min_len = (min_jaccard * set.len() as f64 - SLACK).ceil() as usize;
                let mut pairs = Vec::new();
                for element in &set[..prefix_len(set.len()).min(set.len())] {
                    let list = &index[element];
                    let start = list
                        .partition_point(|&p| ranked[order[p as usize] as usize].len() < min_len);
                    for &p in &list[start..] {
                        if p as usize >= position {
                            break;
                        }
                        if seen[p as usize] == position as u32 {
                            continue;
                        }
                        seen[p as usize] = position as u32;
                        let v = order[p as usize];
                        let j = jaccard(distinct[u as usize], distinct[v as usize]);
                        if j >= min_jaccard {
                            pairs.push((u.min(v), u.max(v), j));
                        }
                    }
                }
                progress(1);
                pairs
            },
        )
        .flatten()
        .collect();

    let mut pairs = Vec::new();
    let mut push = |x: u32, y: u32, jaccard: f64| {
        pairs.push(SimilarPair {
            a: x.min(y),
            b: x.max(y),
            jaccard,
        })
    };
    for same in &members {
        for (i, &x) in same.iter().enumerate() {
            for &y in &same[i + 1..] {
                push(x, y, 1.0);
            }
        }
    }
    for (u, v, j) in found {
        for &x in &members[u as usize] {
            for &y in &members[v as usize] {
                push(x, y, j);
            }
        }
    }
    pairs.par_sort_unstable_by_key(|p| (p.a, p.b));
    pairs
}

/// Each set with its elements replaced by their rank from rarest (in fewest sets) to
/// commonest, ties by value, sorted: the global order the prefix filter needs, chosen so
/// prefixes hold rare elements and inverted lists stay short.
fn ranked_by_rarity(sets: &[&[u64]]) -> Vec<Vec<u32>> {
    let mut all: Vec<u64> = sets.iter().flat_map(|s| s.iter().copied()).collect();
    all.par_sort_unstable();
    let mut counted: Vec<(u32, u64)> = Vec::new();
    for run in all.chunk_by(|a, b| a == b) {
        counted.push((run.len() as u32, run[0]));
    }
    drop(all);
    counted.par_sort_unstable();
    let rank: HashMap<u64, u32> = counted
        .iter()
        .enumerate()
        .map(|(r, &(_, value))| (value, r as u32))
        .collect();
    sets.par_iter()
        .map(|set| {
            let mut ranked: Vec<u32> = set.iter().map(|v| rank[v]).collect();
            ranked.sort_unstable();
            ranked
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn brute_force(sets: &[Vec<u64>], t: f64) -> Vec<(u32, u32)> {
        let mut pairs = Vec::new();
        for a in 0..sets.len() {
            for b in a + 1..sets.len() {
                if jaccard(&sets[a], &sets[b]) >= t {
                    pairs.push((a as u32, b as u32));
                }
            }
        }
        pairs
    }

    fn set(values: &[u64]) -> Vec<u64> {
        let mut v = values.to_vec();
        v.sort_unstable();
        v.dedup();
        v
    }

    #[test]
    fn finds_pairs_at_the_threshold_and_duplicates() {
        let sets = vec![
            set(&[1, 2, 3, 4, 5]),
            set(&[1, 2, 3, 4, 6]), // J = 4/6 with 0
            set(&[1, 2, 3, 4, 5]), // equal to 0
            set(&[7, 8]),
        ];
        let pairs = similar_pairs(&sets, 2.0 / 3.0, |_| {});
        let got: Vec<(u32, u32, f64)> = pairs.iter().map(|p| (p.a, p.b, p.jaccard)).collect();
        assert_eq!(got, vec![(0, 1, 4.0 / 6.0), (0, 2, 1.0), (1, 2, 4.0 / 6.0)]);
        assert_eq!(similar_pairs(&sets, 0.7, |_| {}).len(), 1);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]
        #[test]
        fn equals_brute_force(
            raw in proptest::collection::vec(
                proptest::collection::vec(0u64..40, 1..25), 0..40),
            t in prop_oneof![Just(1.0), Just(0.8), Just(0.5), 0.05f64..1.0],
        ) {
            // Near-duplicates: each set may copy much of the one before it.
            let mut sets: Vec<Vec<u64>> = Vec::new();
            for (i, r) in raw.iter().enumerate() {
                let mut s = r.clone();
                if i % 2 == 1 {
                    s.extend(raw[i - 1].iter().skip(1));
                }
                sets.push(set(&s));
            }
            let got: Vec<(u32, u32)> =
                similar_pairs(&sets, t, |_| {}).iter().map(|p| (p.a, p.b)).collect();
            prop_assert_eq!(got, brute_force(&sets, t));
        }
    }
}
