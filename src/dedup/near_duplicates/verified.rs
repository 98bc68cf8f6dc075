//! Verification: each candidate pair's Jaccard similarity, exact from the texts' shingle sets
//! or estimated from sketches, and the least a pair keeps. A node's documents are grouped into
//! classes of equal evidence, so a pair of classes is judged once for all its documents.

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::OnceLock;

use rayon::prelude::*;

use super::NearDuplicates;
use crate::error::{Error, Result};
use crate::io::document::ReadOptions;
use crate::io::input::read_corpus_shingles;
use crate::similarity::jaccard::{check_min_jaccard, jaccard};
use crate::similarity::sketch::{SketchRows, SketchTable};
use crate::sys::progress::{Phase, Progress};

/// What verification keeps: each document's evidence, its class, and the least Jaccard.
#[derive(Debug)]
pub(super) struct Verified {
    evidence: Evidence,
    /// Per document, its class: the first document of its node (by id) whose evidence is
    /// the same (a page's copies share a fingerprint and their text), so every pair of one
    /// class has J = 1 and a block of them is judged once; [`NO_EVIDENCE`] for a document
    /// without a sketch.
    pub(super) classes: Vec<u32>,
    /// Each node's documents grouped by class (those without evidence last, as one group):
    /// node n's groups are `groups[group_starts[n]..group_starts[n + 1]]`.
    pub(super) groups: Vec<ClassGroup>,
    group_starts: Vec<usize>,
    min_jaccard: f64,
}

/// The class of a document that has no sketch: its pairs stay unverified.
pub(super) const NO_EVIDENCE: u32 = u32::MAX;

/// What a pair's Jaccard similarity is computed from, per document.
#[derive(Debug)]
enum Evidence {
    /// Exact: each document's shingle set, from the corpus's text.
    Texts(Vec<Vec<u64>>),
    /// Estimated: each document's sketch from the store, where `found` says it has one.
    Sketches {
        table: SketchTable,
        found: Vec<bool>,
    },
}

impl Evidence {
    fn has(&self, d: usize) -> bool {
        match self {
            Evidence::Texts(_) => true,
            Evidence::Sketches { found, .. } => found[d],
        }
    }

    /// Orders documents by their evidence (any fixed order; equal evidence compares equal).
    fn cmp(&self, a: usize, b: usize) -> std::cmp::Ordering {
        match self {
            Evidence::Texts(sets) => sets[a].cmp(&sets[b]),
            Evidence::Sketches { table, .. } => table.sketch(a).cmp(table.sketch(b)),
        }
    }
}

impl Verified {
    /// The verification of `near`'s documents by `evidence` (one per document): each node's
    /// documents sorted by evidence into classes, nodes in parallel.
    fn new(near: &NearDuplicates, evidence: Evidence, min_jaccard: f64) -> Self {
        /// Nodes one task groups.
        const NODES: usize = 1 << 12;
        let firsts: Vec<usize> = (0..near.nodes.len()).step_by(NODES).collect();
        let parts: Vec<(Vec<u32>, Vec<ClassGroup>, Vec<usize>)> = firsts
            .into_par_iter()
            .map(|first| {
                let last = (first + NODES).min(near.nodes.len());
                let offset = near.starts[first];
                let mut classes = vec![NO_EVIDENCE; near.starts[last] - offset];
                let mut groups = Vec::new();
                let mut counts = Vec::with_capacity(last - first);
                let mut order: Vec<usize> = Vec::new();
                for n in first..last {
                    let before = groups.len();
                    let docs = near.starts[n]..near.starts[n + 1];
                    order.clear();
                    order.extend(docs.clone().filter(|&d| evidence.has(d)));
                    if order.len() > 1 {
                        order.sort_unstable_by(|&a, &b| evidence.cmp(a, b).then(a.cmp(&b)));
                    }
                    for run in order.chunk_by(|&a, &b| evidence.cmp(a, b).is_eq()) {
                        for &d in run {
                            classes[d - offset] = run[0] as u32;
                        }
                        groups.push(ClassGroup {
                            class: run[0] as u32,
                            count: run.len() as u32,
                            first: run[0] as u32,
                        });
                    }
                    let without = docs.len() - order.len();
                    if without > 0 {
                        let first = docs.clone().find(|&d| !evidence.has(d)).expect("counted");
                        groups.push(ClassGroup {
                            class: NO_EVIDENCE,
                            count: without as u32,
                            first: first as u32,
                        });
                    }
                    counts.push(groups.len() - before);
                }
                (classes, groups, counts)
            })
            .collect();
        let mut classes = Vec::with_capacity(near.docs.len());
        let mut groups = Vec::new();
        let mut group_starts = Vec::with_capacity(near.nodes.len() + 1);
        group_starts.push(0);
        for (part_classes, part_groups, counts) in parts {
            classes.extend(part_classes);
            groups.extend(part_groups);
            for count in counts {
                group_starts.push(group_starts.last().expect("pushed") + count);
            }
        }
        Verified {
            evidence,
            classes,
            groups,
            group_starts,
            min_jaccard,
        }
    }

    /// Node n's documents grouped by class.
    pub(super) fn groups_of(&self, n: usize) -> &[ClassGroup] {
        &self.groups[self.group_starts[n]..self.group_starts[n + 1]]
    }

    /// The Jaccard similarity of documents of classes `a` and `b`, or None when a side has no
    /// evidence. Two documents of one class are as alike as a document with itself.
    pub(super) fn jaccard_of_classes(&self, a: u32, b: u32) -> Option<f64> {
        if a == NO_EVIDENCE || b == NO_EVIDENCE {
            return None;
        }
        if a == b {
            return Some(1.0);
        }
        let (a, b) = (a as usize, b as usize);
        Some(match &self.evidence {
            Evidence::Texts(sets) => jaccard(&sets[a], &sets[b]),
            Evidence::Sketches { table, .. } => table.estimate(a, b),
        })
    }

    /// The Jaccard similarity of documents `i` and `j`, or None when it cannot be told;
    /// `recent` remembers the last class pairs asked for.
    pub(super) fn jaccard(&self, i: usize, j: usize, recent: &mut Recent) -> Option<f64> {
        let (a, b) = (self.classes[i], self.classes[j]);
        if a == NO_EVIDENCE || b == NO_EVIDENCE || a == b {
            return self.jaccard_of_classes(a, b);
        }
        let key = (a.min(b), a.max(b));
        let slot = &mut recent.slots[Recent::slot(key)];
        if slot.0 != key {
            *slot = (
                key,
                self.jaccard_of_classes(a, b).expect("both have evidence"),
            );
        }
        Some(slot.1)
    }

    /// Whether a pair of this similarity is kept: at least the least Jaccard, or unverified.
    pub(super) fn keeps(&self, similarity: Option<f64>) -> bool {
        similarity.is_none_or(|s| s >= self.min_jaccard)
    }
}

/// The similarities of the class pairs a walk asked for last, in slots chosen by hash: a
/// block's rows repeat the same class pairs (a page's copies against another page's), and
/// an estimate costs several times a look here.
pub(super) struct Recent {
    /// `((a, b), similarity)` with a < b; `(NO_EVIDENCE, NO_EVIDENCE)` marks an empty slot.
    slots: Box<[((u32, u32), f64)]>,
}

impl Recent {
    const SLOTS: usize = 256;

    pub(super) fn new() -> Self {
        Recent {
            slots: vec![((NO_EVIDENCE, NO_EVIDENCE), 0.0); Self::SLOTS].into_boxed_slice(),
        }
    }

    fn slot((a, b): (u32, u32)) -> usize {
        let hash = (u64::from(a) << 32 | u64::from(b)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        (hash >> 56) as usize % Self::SLOTS
    }
}

/// The documents of one node that share a class: how many, and the first (smallest id).
#[derive(Clone, Copy, Debug)]
pub(super) struct ClassGroup {
    pub(super) class: u32,
    pub(super) count: u32,
    pub(super) first: u32,
}

impl NearDuplicates {
    /// Keeps only the pairs whose documents' word 3-shingle Jaccard, computed from the texts
    /// of `corpora` (files or directories, read as `options` says, only the documents that
    /// have a candidate pair kept; an id's first text wins), is at least `min_jaccard`;
    /// clusters, duplicates and counts follow the verified pairs. A document of a pair that
    /// no corpus holds is an error naming the corpora and the id.
    pub fn verify_text(
        &mut self,
        corpora: &[PathBuf],
        options: &ReadOptions,
        min_jaccard: f64,
        progress: &dyn Progress,
    ) -> Result<()> {
        // Before the corpus is read: a wrong threshold should not cost a read of it.
        check_min_jaccard(min_jaccard)?;
        let wanted: HashSet<&str> = self.docs.iter().map(|(id, _)| &**id).collect();
        // An id's first text wins: a later corpus adds the ids the earlier ones lack.
        let mut read = HashMap::new();
        for corpus in corpora {
            let texts = read_corpus_shingles(corpus, options, |id| {
                wanted.contains(id) && !read.contains_key(id)
            })?;
            read.extend(texts);
        }
        drop(wanted);
        let named = corpora
            .iter()
            .map(|c| c.display().to_string())
            .collect::<Vec<_>>()
            .join(", ");
        let sets = self
            .docs
            .iter()
            .map(|(id, _)| {
                read.remove(&**id).ok_or_else(|| {
                    Error::input_at(&named, None, format!("no text for document {id:?}"))
                })
            })
            .collect::<Result<_>>()?;
        self.verify_with(Evidence::Texts(sets), min_jaccard, progress)
    }

    /// Keeps only the pairs whose documents' sketches, read from `snapshot` (the store these
    /// near duplicates are of, made with `init --sketch`), estimate a word 3-shingle Jaccard of
    /// at least `min_jaccard`: [`NearDuplicates::verify_text`] without the text. A pair where a
    /// side has no sketch (inserted as a bare fingerprint) is kept unverified: its Jaccard is
    /// None and [`crate::AuditSummary::unverified_pairs`] counts it. A store without sketches is an
    /// error that says how to get them.
    pub fn verify_sketches(
        &mut self,
        snapshot: &crate::Snapshot,
        min_jaccard: f64,
        progress: &dyn Progress,
    ) -> Result<()> {
        check_min_jaccard(min_jaccard)?;
        snapshot.check_sketches()?;
        let documents: Vec<(u64, &str, u64)> = (0..self.nodes.len())
            .flat_map(|n| (self.starts[n]..self.starts[n + 1]).map(move |d| (n, d)))
            .map(|(n, d)| (self.nodes[n], &*self.docs[d].0, self.docs[d].1))
            .collect();
        let (table, found) = {
            let _phase = Phase::start(progress, "reading sketches", 0);
            snapshot.sketch_table_of(&documents)?
        };
        drop(documents);
        self.verify_with(Evidence::Sketches { table, found }, min_jaccard, progress)
    }

    /// [`NearDuplicates::verify_sketches`] with sketches from the caller: `sketch_of(id)` is
    /// the document's sketch (as [`crate::Scheme::sketch`] makes it; all of one size), None
    /// for a document without one (its pairs are kept unverified). For documents verified
    /// outside a store, as a distributed job's tasks do.
    pub fn verify_sketches_of<'a>(
        &mut self,
        sketch_of: impl Fn(&str) -> Option<&'a [u8]>,
        min_jaccard: f64,
        progress: &dyn Progress,
    ) -> Result<()> {
        let sketches = self.docs.iter().map(|(id, _)| sketch_of(id)).collect();
        self.verify_sketch_rows(sketches, min_jaccard, progress)
    }

    /// [`NearDuplicates::verify_sketches_of`] with `sketches[d]` document d's (the order of
    /// `docs`), None for a document without one.
    pub(crate) fn verify_sketch_rows(
        &mut self,
        sketches: Vec<Option<&[u8]>>,
        min_jaccard: f64,
        progress: &dyn Progress,
    ) -> Result<()> {
        check_min_jaccard(min_jaccard)?;
        assert_eq!(sketches.len(), self.docs.len(), "a row for every document");
        let bytes = sketches
            .iter()
            .flatten()
            .map(|s| s.len())
            .next()
            .unwrap_or(0);
        if let Some(other) = sketches.iter().flatten().find(|s| s.len() != bytes) {
            return Err(Error::input(format!(
                "sketches of {bytes} and {} bytes: every sketch must be of one size",
                other.len()
            )));
        }
        let mut rows = SketchRows::with_capacity(bytes, sketches.len());
        let none = vec![0; bytes];
        for sketch in &sketches {
            rows.push(sketch.unwrap_or(&none));
        }
        let found = sketches.iter().map(Option::is_some).collect();
        let table = rows.into_table();
        self.verify_with(Evidence::Sketches { table, found }, min_jaccard, progress)
    }

    /// [`NearDuplicates::verify_sketches`] with `table`, the sketches of every document
    /// already read, row d document d's (the order of `docs`).
    pub(crate) fn verify_with_sketches(
        &mut self,
        table: SketchTable,
        min_jaccard: f64,
        progress: &dyn Progress,
    ) -> Result<()> {
        assert_eq!(table.len(), self.docs.len(), "a sketch for every document");
        let found = vec![true; self.docs.len()];
        self.verify_with(Evidence::Sketches { table, found }, min_jaccard, progress)
    }

    /// Keeps only the pairs that `evidence` says have a Jaccard of at least `min_jaccard`.
    fn verify_with(
        &mut self,
        evidence: Evidence,
        min_jaccard: f64,
        progress: &dyn Progress,
    ) -> Result<()> {
        self.verified = Some(Verified::new(self, evidence, min_jaccard));
        self.decisions = OnceLock::new();
        self.cluster_verified(progress)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The classes and groups found for nodes in parallel chunks are those of each node on
    /// its own: every document's class is the first of its node with the same sketch (none
    /// without one), and the groups count them, over more nodes than one chunk holds.
    #[test]
    fn classes_found_in_parallel_are_each_nodes_own() {
        // 5,000 nodes of 4 copies; copies 0 and 2 share a sketch, copy 3 has none.
        let mut documents: Vec<(String, u64)> = Vec::new();
        for n in 0..5000u64 {
            let fp = (n + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
            for c in 0..4 {
                documents.push((format!("n{n:05}-{c}"), fp));
            }
        }
        let near = NearDuplicates::of_documents(&documents, 3, None, &()).unwrap();
        assert_eq!(near.nodes.len(), 5000);
        let copy = |d: usize| near.docs[d].0.as_bytes().last().map(|b| b - b'0').unwrap();
        let mut table = SketchTable::new(8, near.docs.len());
        let (rows, stride) = table.rows_mut();
        for d in 0..near.docs.len() {
            rows[d * stride] = copy(d) % 2;
        }
        let found: Vec<bool> = (0..near.docs.len()).map(|d| copy(d) != 3).collect();
        let v = Verified::new(&near, Evidence::Sketches { table, found }, 0.5);
        for n in 0..near.nodes.len() {
            let docs = near.starts[n]..near.starts[n + 1];
            let first_of = |c: u8| docs.clone().find(|&d| copy(d) == c).unwrap() as u32;
            for d in docs.clone() {
                let want = match copy(d) {
                    3 => NO_EVIDENCE,
                    c => first_of(c % 2),
                };
                assert_eq!(v.classes[d], want, "document {}", near.docs[d].0);
            }
            let mut groups: Vec<(u32, u32, u32)> = v
                .groups_of(n)
                .iter()
                .map(|g| (g.class, g.count, g.first))
                .collect();
            groups.sort_unstable();
            let mut want = vec![
                (first_of(0), 2, first_of(0)),
                (first_of(1), 1, first_of(1)),
                (NO_EVIDENCE, 1, first_of(3)),
            ];
            want.sort_unstable();
            assert_eq!(groups, want, "node {n}");
        }
    }
}
