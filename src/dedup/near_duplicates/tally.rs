//! The tally of a verified audit: the candidates judged a block at a time (a node's own pairs,
//! an edge's), each pair of classes once for all its documents, blocks in parallel; the pairs
//! kept counted by distance and the clusters joined by a spanning forest of each block.

use std::sync::OnceLock;

use rayon::prelude::*;

use super::verified::{ClassGroup, Verified, NO_EVIDENCE};
use super::NearDuplicates;
use crate::error::Result;
use crate::similarity::clusters::UnionFind;
use crate::sys::progress::{Phase, Progress};

/// What judging blocks of candidate pairs found: pairs kept by distance, how many of them
/// unverified, and unions of documents that join the kept pairs' clusters (a spanning forest
/// of each block's kept class pairs, so never more than its classes).
struct Tally {
    pairs_at: Vec<u64>,
    unverified: u64,
    unions: Vec<(u32, u32)>,
}

impl Tally {
    fn new() -> Self {
        Tally {
            pairs_at: vec![0; 65],
            unverified: 0,
            unions: Vec::new(),
        }
    }

    fn merge(mut self, other: Tally) -> Tally {
        for (a, b) in self.pairs_at.iter_mut().zip(&other.pairs_at) {
            *a += b;
        }
        self.unverified += other.unverified;
        self.unions.extend(other.unions);
        self
    }
}

impl NearDuplicates {
    /// Clusters and counts from the verified document pairs. The candidates come in blocks
    /// (a node's own pairs, an edge's), and a block's documents are grouped by class, so each
    /// pair of classes is judged once for all its document pairs: a page's 1e5 identical
    /// copies cost one judgement, not 5e9. Blocks are judged in parallel.
    pub(super) fn cluster_verified(&mut self, progress: &dyn Progress) -> Result<()> {
        /// Blocks judged between two progress updates.
        const BLOCKS: usize = 1 << 16;
        let _phase = Phase::start(progress, "verifying", self.pairs_at.iter().sum());
        let v = self.verified.as_ref().expect("verified");
        let mut sets = UnionFind::new(self.docs.len());
        // Pairs of one class: J = 1 (or unverified alike), always kept.
        let mut total = Tally::new();
        for g in &v.groups {
            let pairs = u64::from(g.count) * u64::from(g.count.saturating_sub(1)) / 2;
            total.pairs_at[0] += pairs;
            total.unverified += if g.class == NO_EVIDENCE { pairs } else { 0 };
        }
        for n in 0..self.nodes.len() {
            let without = v.groups_of(n).last().filter(|g| g.class == NO_EVIDENCE);
            for d in self.starts[n]..self.starts[n + 1] {
                match v.classes[d] {
                    NO_EVIDENCE => sets.union(d, without.expect("a group").first as usize),
                    class => sets.union(d, class as usize),
                }
            }
        }
        // Pairs of two classes: a node's own, then its edges.
        let nodes: Vec<usize> = (0..self.nodes.len())
            .filter(|&n| v.groups_of(n).len() > 1)
            .collect();
        for chunk in nodes.chunks(BLOCKS) {
            let tally = chunk
                .par_iter()
                .fold(Tally::new, |mut t, &n| {
                    judge_block(v, v.groups_of(n), None, 0, &mut t);
                    t
                })
                .reduce(Tally::new, Tally::merge);
            apply(&mut sets, &tally);
            progress.advance(tally.pairs_at.iter().sum());
            total = total.merge(Tally {
                unions: Vec::new(),
                ..tally
            });
        }
        for chunk in self.edges.chunks(BLOCKS) {
            let tally = chunk
                .par_iter()
                .fold(Tally::new, |mut t, &(a, b, distance)| {
                    let (a, b) = (v.groups_of(a as usize), v.groups_of(b as usize));
                    judge_block(v, a, Some(b), distance, &mut t);
                    t
                })
                .reduce(Tally::new, Tally::merge);
            apply(&mut sets, &tally);
            progress.advance(tally.pairs_at.iter().sum());
            total = total.merge(Tally {
                unions: Vec::new(),
                ..tally
            });
        }
        self.pairs_at = total.pairs_at;
        self.unverified = total.unverified;
        self.clusters = OnceLock::from(self.clusters_of(sets));
        Ok(())
    }
}

/// Judges the pairs of one block of candidates: those between the classes of `a` and of `b`
/// (an edge's, at `distance`), or with `b` None those between distinct classes of `a` (a
/// node's own, at distance 0), each pair of classes once for all its documents. Adds to
/// `tally` the pairs kept and the unions that connect them, at most one fewer than the
/// classes involved.
fn judge_block(
    v: &Verified,
    a: &[ClassGroup],
    b: Option<&[ClassGroup]>,
    distance: u32,
    tally: &mut Tally,
) {
    let kept = |x: &ClassGroup, y: &ClassGroup, tally: &mut Tally| {
        let similarity = v.jaccard_of_classes(x.class, y.class);
        if !v.keeps(similarity) {
            return false;
        }
        let pairs = u64::from(x.count) * u64::from(y.count);
        tally.pairs_at[distance as usize] += pairs;
        tally.unverified += if similarity.is_none() { pairs } else { 0 };
        true
    };
    let other = b.unwrap_or(a);
    if a.len() == 1 && other.len() == 1 && b.is_some() {
        if kept(&a[0], &other[0], tally) {
            tally.unions.push((a[0].first, other[0].first));
        }
        return;
    }
    // A spanning forest of the kept class pairs: a's groups are 0.., b's follow.
    let offset = if b.is_some() { a.len() } else { 0 };
    let mut local = UnionFind::new(offset + other.len());
    for (x, gx) in a.iter().enumerate() {
        let ys = if b.is_some() { 0 } else { x + 1 };
        for (y, gy) in other.iter().enumerate().skip(ys) {
            if kept(gx, gy, tally) && local.find(x) != local.find(offset + y) {
                local.union(x, offset + y);
                tally.unions.push((gx.first, gy.first));
            }
        }
    }
}

/// Joins the clusters of the unions a tally found.
fn apply(sets: &mut UnionFind, tally: &Tally) {
    for &(x, y) in &tally.unions {
        sets.union(x as usize, y as usize);
    }
}
