//! Precision, recall and F1 of one scheme at every distance, from fingerprints alone and
//! verified by exact Jaccard.

use std::collections::HashSet;

use rayon::prelude::*;

use super::truth::{pair_components, IndexPair};
use crate::similarity::find_all::{find_all_in, find_all_settings};
use crate::similarity::fingerprint::Scheme;

/// The quality of the pairs one setting finds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Score {
    /// k: pairs within this many bits are predicted.
    pub distance: u8,
    /// Pairs predicted.
    pub pairs: u64,
    /// Predicted pairs that are true.
    pub true_positives: u64,
    /// True pairs in the sample.
    pub true_pairs: u64,
    /// true_positives / pairs (0 when nothing is predicted, as ../shared/eval's scorer has it).
    pub precision: f64,
    /// true_positives / true_pairs.
    pub recall: f64,
    /// The harmonic mean of precision and recall (0 when both are 0).
    pub f1: f64,
    /// A 95% confidence interval of the recall on documents like these. Pairs are not
    /// independent (a group of near-duplicates is found or missed together), so the groups of
    /// connected true pairs are the units: the cluster-robust variance of the ratio estimate
    /// sum(found) / sum(true), normal approximation, clipped to [0, 1]; [0, 1] with fewer than
    /// two groups.
    pub recall_interval: (f64, f64),
}

impl Score {
    fn new(
        distance: u8,
        pairs: u64,
        true_positives: u64,
        truth: &Truth,
        interval: (f64, f64),
    ) -> Self {
        let ratio = |a: u64, b: u64| if b == 0 { 0.0 } else { a as f64 / b as f64 };
        let precision = ratio(true_positives, pairs);
        let recall = ratio(true_positives, truth.pairs.len() as u64);
        let f1 = if precision + recall > 0.0 {
            2.0 * precision * recall / (precision + recall)
        } else {
            0.0
        };
        Score {
            distance,
            pairs,
            true_positives,
            true_pairs: truth.pairs.len() as u64,
            precision,
            recall,
            f1,
            recall_interval: interval,
        }
    }
}

/// A score's JSON form (`tune --json`): its fields, the interval as `recall_low` and
/// `recall_high`.
impl serde::Serialize for Score {
    fn serialize<S: serde::Serializer>(
        &self,
        serializer: S,
    ) -> std::result::Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut out = serializer.serialize_struct("Score", 9)?;
        out.serialize_field("distance", &self.distance)?;
        out.serialize_field("pairs", &self.pairs)?;
        out.serialize_field("true_positives", &self.true_positives)?;
        out.serialize_field("true_pairs", &self.true_pairs)?;
        out.serialize_field("precision", &self.precision)?;
        out.serialize_field("recall", &self.recall)?;
        out.serialize_field("recall_low", &self.recall_interval.0)?;
        out.serialize_field("recall_high", &self.recall_interval.1)?;
        out.serialize_field("f1", &self.f1)?;
        out.end()
    }
}

/// One scheme's scores, indexed by distance 0..=max.
#[derive(Clone, Debug, PartialEq)]
pub struct SchemeScores {
    /// The scheme.
    pub scheme: Scheme,
    /// The pairs within k bits.
    pub fingerprints: Vec<Score>,
    /// The pairs within k bits whose exact Jaccard reaches the threshold (an audit's
    /// `--verify-text`).
    pub verified: Vec<Score>,
}

/// The true pairs of the sample, with what the estimates need.
pub struct Truth {
    /// The true pairs, sorted.
    pub pairs: Vec<IndexPair>,
    set: HashSet<IndexPair>,
    /// Each true pair's group of connected near-duplicates.
    components: Vec<u32>,
    /// The number of true pairs in each group.
    group_sizes: Vec<f64>,
    /// Whether each true pair passes verification (its exact Jaccard reaches the threshold).
    verifiable: Vec<bool>,
}

impl Truth {
    /// The truth `pairs` over `documents` documents; `similar` are the pairs verification
    /// keeps.
    pub fn new(pairs: Vec<IndexPair>, documents: usize, similar: &HashSet<IndexPair>) -> Truth {
        let (components, count) = pair_components(&pairs, documents);
        let mut group_sizes = vec![0.0; count];
        for &c in &components {
            group_sizes[c as usize] += 1.0;
        }
        let verifiable = pairs.iter().map(|p| similar.contains(p)).collect();
        Truth {
            set: pairs.iter().copied().collect(),
            pairs,
            components,
            group_sizes,
            verifiable,
        }
    }

    /// A 95% interval for the recall of a setting that finds the true pairs `hit` accepts
    /// (by their index in `pairs`). Pairs are not independent: a group of near-duplicate
    /// documents is found or missed together, so the groups (connected components of the true
    /// pairs) are the units, and the recall is their ratio estimate sum(found) / sum(true),
    /// whose variance is `n/(n-1) * sum_c (found_c - R true_c)^2 / (sum true)^2` over the n
    /// groups (the cluster-robust variance of a ratio). Normal approximation, clipped to
    /// [0, 1]; [0, 1] when there are fewer than two groups.
    pub fn recall_interval(&self, hit: impl Fn(usize) -> bool) -> (f64, f64) {
        let (n, size) = (self.group_sizes.len(), &self.group_sizes);
        let total = self.pairs.len() as f64;
        if n < 2 {
            return (0.0, 1.0);
        }
        let mut found = vec![0f64; n];
        for (i, &c) in self.components.iter().enumerate() {
            if hit(i) {
                found[c as usize] += 1.0;
            }
        }
        let recall = found.iter().sum::<f64>() / total;
        let squares: f64 = (0..n).map(|c| (found[c] - recall * size[c]).powi(2)).sum();
        let se = (n as f64 / (n as f64 - 1.0) * squares).sqrt() / total;
        ((recall - 1.96 * se).max(0.0), (recall + 1.96 * se).min(1.0))
    }
}

/// The scores of `scheme`, whose fingerprint of document i is `fingerprints[i]`, at
/// distances 0..=max_distance; `similar` are the pairs verification keeps.
pub fn score_scheme(
    scheme: Scheme,
    fingerprints: &[u64],
    truth: &Truth,
    similar: &HashSet<IndexPair>,
    max_distance: u8,
) -> SchemeScores {
    let bins = usize::from(max_distance) + 1;
    // Per distance: predicted, true, verified, verified and true.
    let mut counts = vec![[0u64; 4]; bins];
    for (a, b, d) in close_pairs(fingerprints, max_distance) {
        let pair = (a, b);
        let (is_true, kept) = (truth.set.contains(&pair), similar.contains(&pair));
        let c = &mut counts[usize::from(d)];
        c[0] += 1;
        c[1] += u64::from(is_true);
        c[2] += u64::from(kept);
        c[3] += u64::from(kept && is_true);
    }
    let distance_of: Vec<u32> = truth
        .pairs
        .iter()
        .map(|&(a, b)| (fingerprints[a as usize] ^ fingerprints[b as usize]).count_ones())
        .collect();
    let mut cumulative = [0u64; 4];
    let mut scores = SchemeScores {
        scheme,
        fingerprints: Vec::with_capacity(bins),
        verified: Vec::with_capacity(bins),
    };
    for (k, c) in counts.iter().enumerate() {
        for (sum, add) in cumulative.iter_mut().zip(c) {
            *sum += add;
        }
        let within = |i: usize| distance_of[i] <= k as u32;
        let interval = truth.recall_interval(within);
        scores.fingerprints.push(Score::new(
            k as u8,
            cumulative[0],
            cumulative[1],
            truth,
            interval,
        ));
        let interval = truth.recall_interval(|i| within(i) && truth.verifiable[i]);
        scores.verified.push(Score::new(
            k as u8,
            cumulative[2],
            cumulative[3],
            truth,
            interval,
        ));
    }
    scores
}

/// Every pair of documents whose fingerprints are within `max_distance` bits, with their
/// distance: `(a, b, d)` with `a < b` indexes into `fingerprints`.
pub fn close_pairs(fingerprints: &[u64], max_distance: u8) -> Vec<(u32, u32, u8)> {
    let mut by_value: Vec<(u64, u32)> = fingerprints
        .iter()
        .enumerate()
        .map(|(i, &fp)| (fp, i as u32))
        .collect();
    by_value.par_sort_unstable();
    let groups: Vec<&[(u64, u32)]> = by_value.chunk_by(|x, y| x.0 == y.0).collect();
    let values: Vec<u64> = groups.iter().map(|g| g[0].0).collect();
    let mut pairs = Vec::new();
    let mut push = |x: u32, y: u32, d: u32| pairs.push((x.min(y), x.max(y), d as u8));
    for group in &groups {
        for (i, &(_, x)) in group.iter().enumerate() {
            for &(_, y) in &group[i + 1..] {
                push(x, y, 0);
            }
        }
    }
    if max_distance > 0 && values.len() > 1 {
        let settings = find_all_settings(max_distance, values.len() as u64, None)
            .expect("settings exist for every distance up to 56");
        for p in find_all_in(&values, &settings, &()) {
            let group = |v: u64| groups[values.binary_search(&v).expect("a value")];
            for &(_, x) in group(p.a) {
                for &(_, y) in group(p.b) {
                    push(x, y, p.distance);
                }
            }
        }
    }
    pairs
}
