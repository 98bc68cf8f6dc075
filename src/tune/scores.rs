//! Precision, recall and F1 of one scheme at every distance, from fingerprints alone, verified
//! by exact Jaccard, and verified by sketches of each size measured.

use std::collections::HashSet;

use rayon::prelude::*;

use super::truth::{pair_components, IndexPair};
use crate::similarity::find_all::{find_all_in, find_all_settings};
use crate::similarity::fingerprint::Scheme;
use crate::similarity::sketch::SketchTable;

/// The quality of the pairs one setting finds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Score {
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
    /// Verified by sketches: their size in bytes, and the least estimated Jaccard a pair
    /// keeps (the threshold of those tried that scores best at this distance); None for the
    /// other uses.
    pub sketch: Option<(u16, f64)>,
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
            sketch: None,
        }
    }
}

/// A score's JSON form (`tune --json`): its fields, the interval as `recall_low` and
/// `recall_high`, and for sketches `sketch_bytes` and `min_jaccard`.
impl serde::Serialize for Score {
    fn serialize<S: serde::Serializer>(
        &self,
        serializer: S,
    ) -> std::result::Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let fields = if self.sketch.is_some() { 11 } else { 9 };
        let mut out = serializer.serialize_struct("Score", fields)?;
        out.serialize_field("distance", &self.distance)?;
        out.serialize_field("pairs", &self.pairs)?;
        out.serialize_field("true_positives", &self.true_positives)?;
        out.serialize_field("true_pairs", &self.true_pairs)?;
        out.serialize_field("precision", &self.precision)?;
        out.serialize_field("recall", &self.recall)?;
        out.serialize_field("recall_low", &self.recall_interval.0)?;
        out.serialize_field("recall_high", &self.recall_interval.1)?;
        out.serialize_field("f1", &self.f1)?;
        if let Some((bytes, min_jaccard)) = self.sketch {
            out.serialize_field("sketch_bytes", &bytes)?;
            out.serialize_field("min_jaccard", &min_jaccard)?;
        }
        out.end()
    }
}

/// One scheme's scores, indexed by distance 0..=max.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct SchemeScores {
    /// The scheme.
    pub scheme: Scheme,
    /// The pairs within k bits.
    pub fingerprints: Vec<Score>,
    /// The pairs within k bits whose exact Jaccard reaches the threshold (an audit's
    /// `--verify-text`).
    pub verified: Vec<Score>,
    /// Per sketch size measured, in the order asked: the pairs within k bits whose sketches
    /// estimate a Jaccard of at least the score's threshold (an audit's `--min-jaccard` on a
    /// store made with `init --sketch`).
    pub sketched: Vec<Vec<Score>>,
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
/// distances 0..=max_distance; `similar` are the pairs verification keeps; `sketches` the
/// documents' sketches of each size to score, verified at each of `thresholds`.
pub fn score_scheme(
    scheme: Scheme,
    fingerprints: &[u64],
    truth: &Truth,
    similar: &HashSet<IndexPair>,
    max_distance: u8,
    sketches: &[Sketches],
    thresholds: &Thresholds,
) -> SchemeScores {
    let bins = usize::from(max_distance) + 1;
    let candidates = close_pairs(fingerprints, max_distance);
    // Per distance: predicted, true, verified, verified and true.
    let mut counts = vec![[0u64; 4]; bins];
    let mut is_true = Vec::with_capacity(candidates.len());
    for &(a, b, d) in &candidates {
        let pair = (a, b);
        let (true_pair, kept) = (truth.set.contains(&pair), similar.contains(&pair));
        is_true.push(true_pair);
        let c = &mut counts[usize::from(d)];
        c[0] += 1;
        c[1] += u64::from(true_pair);
        c[2] += u64::from(kept);
        c[3] += u64::from(kept && true_pair);
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
        sketched: Vec::with_capacity(sketches.len()),
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
    for sketches in sketches {
        scores.sketched.push(score_sketched(
            &candidates,
            &is_true,
            &distance_of,
            truth,
            sketches,
            bins,
            thresholds,
        ));
    }
    scores
}

/// The least estimated Jaccard similarities a sketch verification is scored at: the truth's
/// J and steps of 0.01 from 0.10 below it to 0.05 above (within 0..=1). An estimate is noisy
/// (standard error ~0.019 at J = 0.8 with 128 bytes), so a threshold a little off J can trade
/// a few false pairs for more true ones; the grid spans about five standard errors of the
/// smallest sketch.
pub struct Thresholds {
    /// Ascending.
    values: Vec<f64>,
    /// The truth's J.
    target: f64,
}

impl Thresholds {
    pub fn around(target: f64) -> Self {
        let mut values: Vec<f64> = (-10..=5)
            .map(|step| target + f64::from(step) * 0.01)
            .filter(|t| (0.0..=1.0).contains(t))
            .collect();
        values.dedup();
        Thresholds { values, target }
    }
}

/// The documents' sketches of one size, for scoring verification by them.
pub struct Sketches {
    /// Bytes per sketch.
    pub bytes: u16,
    /// Row i: document i's sketch.
    pub table: SketchTable,
}

/// For each distance k < `bins`, the score of the candidates within k bits whose sketches
/// estimate at least a threshold, at the threshold of `thresholds` that scores the best F1
/// (ties: the one nearest the truth's J, then the lower). `is_true[p]`
/// says whether candidate p is a true pair; `distance_of[i]` is true pair i's distance.
fn score_sketched(
    candidates: &[(u32, u32, u8)],
    is_true: &[bool],
    distance_of: &[u32],
    truth: &Truth,
    sketches: &Sketches,
    bins: usize,
    thresholds: &Thresholds,
) -> Vec<Score> {
    let (target, thresholds) = (thresholds.target, &thresholds.values[..]);
    let passed = |estimate: f64| thresholds.partition_point(|&t| t <= estimate);
    // Per distance and number of thresholds passed: candidates, and true ones among them.
    let width = thresholds.len() + 1;
    let mut counts = vec![[0u64; 2]; bins * width];
    let table = &sketches.table;
    let tallies: Vec<(usize, bool)> = candidates
        .par_iter()
        .zip(is_true)
        .map(|(&(a, b, d), &true_pair)| {
            let estimate = table.estimate(a as usize, b as usize);
            (usize::from(d) * width + passed(estimate), true_pair)
        })
        .collect();
    for (cell, true_pair) in tallies {
        counts[cell][0] += 1;
        counts[cell][1] += u64::from(true_pair);
    }
    let true_estimates: Vec<f64> = truth
        .pairs
        .iter()
        .map(|&(a, b)| table.estimate(a as usize, b as usize))
        .collect();
    // cumulative[t]: candidates within the distances so far passing threshold t.
    let mut cumulative = vec![[0u64; 2]; thresholds.len()];
    let mut scores = Vec::with_capacity(bins);
    for k in 0..bins {
        for (t, sum) in cumulative.iter_mut().enumerate() {
            for cell in &counts[k * width + t + 1..(k + 1) * width] {
                sum[0] += cell[0];
                sum[1] += cell[1];
            }
        }
        let pick = |t: usize| {
            Score::new(
                k as u8,
                cumulative[t][0],
                cumulative[t][1],
                truth,
                (0.0, 1.0),
            )
        };
        let nearest = |t: usize| (thresholds[t] - target).abs();
        let best = (0..thresholds.len())
            .max_by(|&x, &y| {
                let (sx, sy) = (pick(x), pick(y));
                sx.f1
                    .total_cmp(&sy.f1)
                    .then(nearest(y).total_cmp(&nearest(x)))
                    .then(y.cmp(&x))
            })
            .expect("at least one threshold");
        let t = thresholds[best];
        let interval =
            truth.recall_interval(|i| distance_of[i] <= k as u32 && true_estimates[i] >= t);
        let mut score = Score::new(
            k as u8,
            cumulative[best][0],
            cumulative[best][1],
            truth,
            interval,
        );
        score.sketch = Some((sketches.bytes, t));
        scores.push(score);
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
