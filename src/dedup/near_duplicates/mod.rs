//! Near-duplicates at real-web skew: what an audit finds, held so that memory never grows with
//! the pairs of a hot cluster.
//!
//! Documents that share a fingerprint are one node; the graph's edges are the fingerprint pairs
//! within the distance. A page copied 1e5 times is one node of 1e5 ids, not 5e9 pairs: document
//! pairs are expanded only as they are handed out ([`NearDuplicates::for_each_pair`]), in a
//! fixed order, and counted without being expanded. Clusters (connected components) come from
//! union-find over the documents of the nodes, for looking at; what a dedup keeps and drops is
//! the keep rule's ([`keep`]: `dedup`'s greedy, earliest batch then smallest id first), and a
//! cluster may keep several documents.
//!
//! Memory: the fingerprint pairs (16 bytes each), the nodes' fingerprints, and the id and batch
//! of each document that has a near duplicate (plus one u32 per such document for its
//! cluster, and the keep rule's decision: see [`keep`]); with verification, those documents' shingle sets (`--verify-text`) or sketches
//! (N bytes each, from the store).

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::OnceLock;

use rayon::prelude::*;

use crate::error::{Error, Result};
use crate::io::document::ReadOptions;
use crate::io::input::read_corpus_shingles;
use crate::similarity::clusters::UnionFind;
use crate::similarity::find_all::{find_all_in, find_all_settings, FingerprintPair};
use crate::similarity::jaccard::{check_min_jaccard, jaccard};
use crate::similarity::sketch::{SketchRows, SketchTable};
use crate::sys::progress::{Phase, Progress};

mod keep;

use keep::Decisions;
pub use keep::Duplicate;

/// Fingerprints up to which [`NearDuplicates::of_ranked_documents`] compares every pair
/// instead of building permuted tables: a distributed job decides millions of components of
/// two or three documents, where the tables cost more than the comparisons.
const COMPARED_ALL: usize = 64;

/// Every pair of `fingerprints` (sorted, distinct) within `distance` bits, by comparing all.
fn pairs_compared_all(fingerprints: &[u64], distance: u32) -> Vec<FingerprintPair> {
    let mut pairs = Vec::new();
    for (i, &a) in fingerprints.iter().enumerate() {
        for &b in &fingerprints[i + 1..] {
            let d = (a ^ b).count_ones();
            if d <= distance {
                pairs.push(FingerprintPair { a, b, distance: d });
            }
        }
    }
    pairs
}

/// Candidate pairs per segment of [`NearDuplicates::for_each_pair_parallel`].
const SEGMENT: usize = 1 << 15;

/// The near duplicates of a store or of a list of documents: see the module docs. Made by
/// [`crate::Snapshot::near_duplicates`] or [`NearDuplicates::of_documents`].

#[derive(Debug)]
pub struct NearDuplicates {
    /// Documents the audit looked at, and their distinct fingerprints.
    documents: u64,
    distinct_fingerprints: u64,
    /// Fingerprints with a near duplicate (another id, or an edge), ascending.
    nodes: Vec<u64>,
    /// Node n's documents are `docs[starts[n]..starts[n + 1]]`, sorted by id.
    starts: Vec<usize>,
    /// `(id, batch)` of each document of a node.
    docs: Vec<(Box<str>, u64)>,
    /// Fingerprint pairs as `(node a, node b, distance)` with a < b, ascending.
    edges: Vec<(u32, u32, u32)>,
    /// When verified: each document's shingle set and the least Jaccard a pair keeps.
    verified: Option<Verified>,
    /// The clusters, found on first use (an audit verified next never needs its unverified
    /// clusters), or set by verification.
    clusters: OnceLock<Clusters>,
    /// What the keep rule keeps and drops, decided on first use.
    decisions: OnceLock<Decisions>,
    /// Each document's place in id order (byte order), found on first use: clusters and the
    /// keep rule sort by it instead of comparing ids.
    ranks: OnceLock<Vec<u32>>,
    /// Pairs by distance (0..=64), counted without expanding them.
    pairs_at: Vec<u64>,
    /// Pairs kept unverified: verified by sketches, a side had none.
    unverified: u64,
    /// `(id, batch)` of every live document outside the clusters, sorted by id, when
    /// singletons were asked for.
    singletons: Option<Vec<(Box<str>, u64)>>,
}

/// Documents of the clusters, cluster after cluster (ordered by their smallest id), each
/// cluster's sorted by id; `starts[c]..starts[c + 1]` is cluster c.
#[derive(Debug)]
struct Clusters {
    members: Vec<u32>,
    starts: Vec<usize>,
}

/// What verification keeps: each document's evidence, its class, and the least Jaccard.
#[derive(Debug)]
struct Verified {
    evidence: Evidence,
    /// Per document, its class: the first document of its node (by id) whose evidence is
    /// the same (a page's copies share a fingerprint and their text), so every pair of one
    /// class has J = 1 and a block of them is judged once; [`NO_EVIDENCE`] for a document
    /// without a sketch.
    classes: Vec<u32>,
    /// Each node's documents grouped by class (those without evidence last, as one group):
    /// node n's groups are `groups[group_starts[n]..group_starts[n + 1]]`.
    groups: Vec<ClassGroup>,
    group_starts: Vec<usize>,
    min_jaccard: f64,
}

/// The class of a document that has no sketch: its pairs stay unverified.
const NO_EVIDENCE: u32 = u32::MAX;

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
    fn groups_of(&self, n: usize) -> &[ClassGroup] {
        &self.groups[self.group_starts[n]..self.group_starts[n + 1]]
    }

    /// The Jaccard similarity of documents of classes `a` and `b`, or None when a side has no
    /// evidence. Two documents of one class are as alike as a document with itself.
    fn jaccard_of_classes(&self, a: u32, b: u32) -> Option<f64> {
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
    fn jaccard(&self, i: usize, j: usize, recent: &mut Recent) -> Option<f64> {
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
    fn keeps(&self, similarity: Option<f64>) -> bool {
        similarity.is_none_or(|s| s >= self.min_jaccard)
    }
}

/// The similarities of the class pairs a walk asked for last, in slots chosen by hash: a
/// block's rows repeat the same class pairs (a page's copies against another page's), and
/// an estimate costs several times a look here.
struct Recent {
    /// `((a, b), similarity)` with a < b; `(NO_EVIDENCE, NO_EVIDENCE)` marks an empty slot.
    slots: Box<[((u32, u32), f64)]>,
}

impl Recent {
    const SLOTS: usize = 256;

    fn new() -> Self {
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
struct ClassGroup {
    class: u32,
    count: u32,
    first: u32,
}

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

/// Where a walk over the pairs of a [`NearDuplicates`] stands ([`NearDuplicates::next_pairs`]):
/// start from `PairCursor::default()`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PairCursor {
    /// The node whose pairs are being handed out.
    node: usize,
    /// None: the node's own pairs; Some(e): those of edge e (from this node).
    edge: Option<usize>,
    /// The next pair: the node's i-th document with the other side's j-th.
    i: usize,
    j: usize,
}

/// One cluster as [`NearDuplicates::for_each_cluster`] hands it out.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cluster<'a> {
    /// From 1, in the order of the clusters' smallest ids.
    pub number: u64,
    /// `(id, batch)` of each member, sorted by id (byte order).
    pub members: Vec<(&'a str, u64)>,
    /// The members the keep rule keeps (indexes into `members`, ascending): at least one, and
    /// several where the cluster is a chain of near copies whose ends are far apart.
    pub kept: Vec<usize>,
}

impl Cluster<'_> {
    /// The ids of the members kept, sorted.
    pub fn kept_ids(&self) -> impl Iterator<Item = &str> + '_ {
        self.kept.iter().map(|&m| self.members[m].0)
    }
}

/// What an audit found, in numbers (`audit --json`'s summary line).
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
#[non_exhaustive]
pub struct AuditSummary {
    /// Live documents audited.
    pub documents: u64,
    /// Their distinct fingerprints (of a store: those its postings list, so a fingerprint
    /// whose every document was replaced or deleted since the last compaction still counts).
    pub distinct_fingerprints: u64,
    /// Document pairs within the distance (verified ones only, when verified).
    pub pairs: u64,
    /// Clusters of two or more documents.
    pub clusters: u64,
    /// Members of the largest cluster (0 when there is none).
    pub largest_cluster: u64,
    /// Documents the keep rule drops: each has a kept document within the distance (see
    /// [`NearDuplicates::for_each_duplicate`]).
    pub duplicates: u64,
    /// Documents the keep rule keeps of the clusters: one or more per cluster.
    pub kept: u64,
    /// Clusters that keep more than one document (chains of near copies).
    pub clusters_keeping_several: u64,
    /// Pairs kept without verification: verified by sketches, one document had none (it was
    /// inserted as a bare fingerprint). They count in `pairs` and join clusters as the
    /// fingerprints alone would.
    pub unverified_pairs: u64,
}

impl NearDuplicates {
    /// The near duplicates given the documents of each fingerprint that may have some: `ids`
    /// of `(fingerprint, id, batch)` (any order; fingerprints with no live document absent),
    /// and `pairs`, the fingerprint pairs within the distance (those with a fingerprint absent
    /// from `ids` are ignored).
    pub(crate) fn build(
        documents: u64,
        distinct_fingerprints: u64,
        mut ids: Vec<(u64, Box<str>, u64)>,
        pairs: &[FingerprintPair],
        progress: &dyn Progress,
    ) -> NearDuplicates {
        ids.par_sort_unstable_by(|a, b| (a.0, &a.1).cmp(&(b.0, &b.1)));
        Self::from_sorted(documents, distinct_fingerprints, ids, pairs, progress)
    }

    /// [`NearDuplicates::build`] of `ids` already sorted by `(fingerprint, id)`.
    pub(crate) fn from_sorted(
        documents: u64,
        distinct_fingerprints: u64,
        ids: Vec<(u64, Box<str>, u64)>,
        pairs: &[FingerprintPair],
        progress: &dyn Progress,
    ) -> NearDuplicates {
        let _phase = Phase::start(progress, "clusters", 1);
        debug_assert!(ids.is_sorted_by(|a, b| (a.0, &a.1) < (b.0, &b.1)));
        let mut nodes: Vec<u64> = Vec::new();
        let mut starts: Vec<usize> = Vec::new();
        let mut docs: Vec<(Box<str>, u64)> = Vec::with_capacity(ids.len());
        for (fp, id, batch) in ids {
            if nodes.last() != Some(&fp) {
                nodes.push(fp);
                starts.push(docs.len());
            }
            docs.push((id, batch));
        }
        starts.push(docs.len());
        let node_of = |fp: u64| nodes.binary_search(&fp).ok().map(|n| n as u32);
        let mut edges: Vec<(u32, u32, u32)> = pairs
            .par_iter()
            .filter_map(|p| Some((node_of(p.a)?, node_of(p.b)?, p.distance)))
            .collect();
        edges.par_sort_unstable();
        let mut near = NearDuplicates {
            documents,
            distinct_fingerprints,
            nodes,
            starts,
            docs,
            edges,
            verified: None,
            clusters: OnceLock::new(),
            decisions: OnceLock::new(),
            ranks: OnceLock::new(),
            pairs_at: vec![0; 65],
            unverified: 0,
            singletons: None,
        };
        near.count_unverified();
        progress.advance(1);
        near
    }

    /// The near duplicates among `documents` (id, fingerprint) within `distance` bits,
    /// without a store (`find-all` on documents): the fingerprint pairs from in-memory
    /// permuted tables of `blocks` blocks (or those [`crate::Settings::for_size`] picks), the
    /// ids sharing a fingerprint at distance 0. A later document with the same id replaces an
    /// earlier one, as in a batch; every document counts as batch 0, so the keep rule takes
    /// them by id.
    pub fn of_documents(
        documents: &[(String, u64)],
        distance: u8,
        blocks: Option<u8>,
        progress: &dyn Progress,
    ) -> Result<NearDuplicates> {
        let ranked: Vec<(&str, u64, u64)> = documents
            .iter()
            .map(|(id, fp)| (id.as_str(), *fp, 0))
            .collect();
        Self::of_ranked_documents(&ranked, distance, blocks, progress)
    }

    /// [`NearDuplicates::of_documents`] of `(id, fingerprint, rank)`: the keep rule takes the
    /// documents by rank (as a store's by batch), then by id. A distributed job that sorted a
    /// group of documents in its own order gives each its place in that order.
    pub fn of_ranked_documents(
        documents: &[(&str, u64, u64)],
        distance: u8,
        blocks: Option<u8>,
        progress: &dyn Progress,
    ) -> Result<NearDuplicates> {
        let mut latest: HashMap<&str, (u64, u64)> = HashMap::with_capacity(documents.len());
        for &(id, fp, rank) in documents {
            latest.insert(id, (fp, rank));
        }
        let mut fingerprints: Vec<u64> = latest.values().map(|&(fp, _)| fp).collect();
        fingerprints.par_sort_unstable();
        fingerprints.dedup();
        let pairs = if distance == 0 {
            Vec::new()
        } else {
            let settings = find_all_settings(distance, fingerprints.len() as u64, blocks)?;
            if fingerprints.len() <= COMPARED_ALL {
                pairs_compared_all(&fingerprints, u32::from(distance))
            } else {
                find_all_in(&fingerprints, &settings, progress)
            }
        };
        let ids = latest
            .iter()
            .map(|(id, &(fp, rank))| (fp, Box::from(*id), rank))
            .collect();
        Ok(NearDuplicates::build(
            latest.len() as u64,
            fingerprints.len() as u64,
            ids,
            &pairs,
            progress,
        ))
    }

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
    /// None and [`AuditSummary::unverified_pairs`] counts it. A store without sketches is an
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
        check_min_jaccard(min_jaccard)?;
        let sketches: Vec<Option<&[u8]>> = self.docs.iter().map(|(id, _)| sketch_of(id)).collect();
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

    /// Also lists, as clusters of one, every live document that has no (verified) near
    /// duplicate: `others` are every live document's `(id, batch)`, in any order.
    pub(crate) fn set_singletons(&mut self, mut others: Vec<(Box<str>, u64)>) {
        let clustered: HashSet<&str> = self
            .clusters()
            .members
            .iter()
            .map(|&d| &*self.docs[d as usize].0)
            .collect();
        others.retain(|(id, _)| !clustered.contains(&**id));
        others.par_sort_unstable();
        others.dedup();
        self.singletons = Some(others);
    }

    /// The numbers: documents, distinct fingerprints, pairs, clusters, the largest, and how
    /// many the keep rule drops and keeps.
    pub fn summary(&self) -> AuditSummary {
        let found = self.clusters();
        let sizes = found.starts.windows(2).map(|w| (w[1] - w[0]) as u64);
        let clusters = found.starts.len() as u64 - 1;
        let clustered = found.members.len() as u64;
        let decisions = self.decisions();
        let duplicates = decisions.dropped();
        let clusters_keeping_several = found
            .starts
            .windows(2)
            .filter(|w| {
                let members = &found.members[w[0]..w[1]];
                members
                    .iter()
                    .filter(|&&d| decisions.is_kept(d as usize))
                    .nth(1)
                    .is_some()
            })
            .count() as u64;
        AuditSummary {
            documents: self.documents,
            distinct_fingerprints: self.distinct_fingerprints,
            pairs: self.pairs_at.iter().sum(),
            clusters,
            largest_cluster: sizes.max().unwrap_or(0),
            duplicates,
            kept: clustered - duplicates,
            clusters_keeping_several,
            unverified_pairs: self.unverified,
        }
    }

    /// How many pairs are at each distance 0..=64 (verified ones only, when verified).
    pub fn pairs_by_distance(&self) -> &[u64] {
        &self.pairs_at
    }

    /// Whether the pairs were verified, against the texts ([`NearDuplicates::verify_text`]) or
    /// the store's sketches ([`NearDuplicates::verify_sketches`]).
    pub fn is_verified(&self) -> bool {
        self.verified.is_some()
    }

    /// Calls `f(a, b, distance, jaccard)` on every document pair (a < b by bytes; `jaccard`
    /// when verified, None for a pair kept unverified), expanded one at a time, in this order: fingerprints ascending; for
    /// each, first the pairs of the documents that share it (distance 0), then its pairs with
    /// each larger fingerprint in turn, ascending; within those, the documents of each
    /// fingerprint in id order. The same store gives the same order.
    pub fn for_each_pair<E>(
        &self,
        f: impl FnMut(&str, &str, u32, Option<f64>) -> std::result::Result<(), E>,
    ) -> std::result::Result<(), E> {
        self.next_pairs(&mut PairCursor::default(), usize::MAX, f)
            .map(|_| ())
    }

    /// [`NearDuplicates::for_each_pair`]'s pairs, in its order, handed out in parallel: the
    /// candidates are cut into segments of about 32,768 pairs (whole rows of a block),
    /// each segment's pairs are given to `f` on a worker thread with a buffer of its own from
    /// `new`, and the buffers are handed to `emit` in order, on the calling thread, while the
    /// next segments are being formatted. For writers whose formatting costs as much as the
    /// write (a pair list of 1e8 lines); memory: two windows of a few segments per thread.
    pub fn for_each_pair_parallel<B: Send, E: Send>(
        &self,
        new: impl Fn() -> B + Sync,
        f: impl Fn(&mut B, &str, &str, u32, Option<f64>) -> std::result::Result<(), E> + Sync,
        mut emit: impl FnMut(B) -> std::result::Result<(), E>,
    ) -> std::result::Result<(), E> {
        let window = 4 * rayon::current_num_threads().max(1);
        let format = |batch: Vec<(PairCursor, usize)>| {
            batch
                .into_par_iter()
                .map(|(mut cursor, candidates)| {
                    let mut buffer = new();
                    let mut recent = Recent::new();
                    self.walk(&mut cursor, candidates, |i, j, distance| {
                        if let Some((a, b, jaccard)) = self.pair(i, j, &mut recent) {
                            f(&mut buffer, a, b, distance, jaccard)?;
                        }
                        Ok(true)
                    })?;
                    Ok(buffer)
                })
                .collect::<std::result::Result<Vec<B>, E>>()
        };
        let mut segments = self.segments();
        let mut formatted: Vec<B> = Vec::new();
        std::thread::scope(|scope| loop {
            let batch: Vec<(PairCursor, usize)> = segments.by_ref().take(window).collect();
            let last = batch.is_empty();
            let next = (!last).then(|| scope.spawn(|| format(batch)));
            let emitted = formatted.drain(..).try_for_each(&mut emit);
            let Some(next) = next else { return emitted };
            let next = next
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
            emitted?;
            formatted = next?;
        })
    }

    /// The candidates cut into segments `(start, candidates)` of at least [`SEGMENT`]
    /// candidates (but the last), each starting at a row of a block, in the walk's order.
    fn segments(&self) -> impl Iterator<Item = (PairCursor, usize)> + '_ {
        let size = |n: usize| self.starts[n + 1] - self.starts[n];
        // Every row of every block, as (start of the row, candidates in it).
        let rows = (0..self.nodes.len()).flat_map(move |n| {
            let own = (0..size(n)).map(move |i| {
                let start = PairCursor {
                    node: n,
                    edge: None,
                    i,
                    j: 0,
                };
                (start, size(n) - 1 - i)
            });
            let first = self.edges.partition_point(|e| (e.0 as usize) < n);
            let edges = self.edges[first..]
                .iter()
                .take_while(move |e| e.0 as usize == n)
                .enumerate()
                .flat_map(move |(k, &(_, b, _))| {
                    (0..size(n)).map(move |i| {
                        let start = PairCursor {
                            node: n,
                            edge: Some(first + k),
                            i,
                            j: 0,
                        };
                        (start, size(b as usize))
                    })
                });
            own.chain(edges)
        });
        let mut rows = rows.filter(|&(_, candidates)| candidates > 0).peekable();
        std::iter::from_fn(move || {
            let (start, mut candidates) = rows.next()?;
            while candidates < SEGMENT {
                match rows.next() {
                    Some((_, more)) => candidates += more,
                    None => break,
                }
            }
            Some((start, candidates))
        })
    }

    /// Hands at most `max` pairs from where `cursor` stands to `f`, in
    /// [`NearDuplicates::for_each_pair`]'s order, and moves `cursor` past them; returns how
    /// many it handed out (fewer than `max` only at the end). For clients that pull pairs in
    /// batches (Python's iterator) instead of being called for each.
    pub fn next_pairs<E>(
        &self,
        cursor: &mut PairCursor,
        max: usize,
        mut f: impl FnMut(&str, &str, u32, Option<f64>) -> std::result::Result<(), E>,
    ) -> std::result::Result<usize, E> {
        let mut recent = Recent::new();
        self.walk(cursor, max, |i, j, distance| {
            match self.pair(i, j, &mut recent) {
                Some((a, b, jaccard)) => f(a, b, distance, jaccard).map(|()| true),
                None => Ok(false),
            }
        })
    }

    /// Walks the candidate pairs `(i, j, distance)` (documents i and j) from `cursor` in
    /// [`NearDuplicates::for_each_pair`]'s order, calling `f` on each until `max` of them were
    /// counted (`f` says whether a candidate counts); returns how many were.
    fn walk<E>(
        &self,
        cursor: &mut PairCursor,
        max: usize,
        mut f: impl FnMut(usize, usize, u32) -> std::result::Result<bool, E>,
    ) -> std::result::Result<usize, E> {
        let mut counted = 0;
        while cursor.node < self.nodes.len() {
            let n = cursor.node;
            let own = self.starts[n]..self.starts[n + 1];
            // The block of pairs the cursor is in: the node's own, or one edge's.
            let (other, distance) = match cursor.edge {
                None => (own.clone(), 0),
                Some(e) => {
                    let (_, b, distance) = self.edges[e];
                    (
                        self.starts[b as usize]..self.starts[b as usize + 1],
                        distance,
                    )
                }
            };
            while cursor.i < own.len() {
                let first_j = if cursor.edge.is_none() {
                    cursor.i + 1
                } else {
                    0
                };
                cursor.j = cursor.j.max(first_j);
                while cursor.j < other.len() {
                    if counted == max {
                        return Ok(counted);
                    }
                    let (i, j) = (own.start + cursor.i, other.start + cursor.j);
                    cursor.j += 1;
                    if f(i, j, distance)? {
                        counted += 1;
                    }
                }
                cursor.i += 1;
                cursor.j = 0;
            }
            cursor.i = 0;
            let next = match cursor.edge {
                None => self.edges.partition_point(|e| (e.0 as usize) < n),
                Some(e) => e + 1,
            };
            if self.edges.get(next).is_some_and(|e| e.0 as usize == n) {
                cursor.edge = Some(next);
            } else {
                cursor.edge = None;
                cursor.node += 1;
            }
        }
        Ok(counted)
    }

    /// Documents `i` and `j` as a pair `(a, b, jaccard)` with a < b, unless verification
    /// drops it.
    fn pair(&self, i: usize, j: usize, recent: &mut Recent) -> Option<(&str, &str, Option<f64>)> {
        let jaccard = match &self.verified {
            None => None,
            Some(v) => match v.jaccard(i, j, recent) {
                similarity if !v.keeps(similarity) => return None,
                similarity => similarity,
            },
        };
        let (x, y) = (&*self.docs[i].0, &*self.docs[j].0);
        let (a, b) = if x < y { (x, y) } else { (y, x) };
        Some((a, b, jaccard))
    }

    /// Calls `f` on every cluster of two or more documents, numbered from 1 in the order of
    /// their smallest ids (with singletons asked for, every other live document is a cluster
    /// of one, in the same order and numbering).
    pub fn for_each_cluster<E>(
        &self,
        mut f: impl FnMut(&Cluster<'_>) -> std::result::Result<(), E>,
    ) -> std::result::Result<(), E> {
        let alone: &[(Box<str>, u64)] = self.singletons.as_deref().unwrap_or(&[]);
        let (mut c, mut s, mut number) = (0, 0, 0u64);
        let Clusters { members, starts } = self.clusters();
        let decisions = self.decisions();
        let clusters = starts.len() - 1;
        while c < clusters || s < alone.len() {
            number += 1;
            let first = |c: usize| &*self.docs[members[starts[c]] as usize].0;
            if s < alone.len() && (c == clusters || *alone[s].0 < *first(c)) {
                f(&Cluster {
                    number,
                    members: vec![(&alone[s].0, alone[s].1)],
                    kept: vec![0],
                })?;
                s += 1;
                continue;
            }
            let docs = &members[starts[c]..starts[c + 1]];
            let kept = (0..docs.len())
                .filter(|&m| decisions.is_kept(docs[m] as usize))
                .collect();
            let members: Vec<(&str, u64)> = docs
                .iter()
                .map(|&d| {
                    let (id, batch) = &self.docs[d as usize];
                    (&**id, *batch)
                })
                .collect();
            f(&Cluster {
                number,
                members,
                kept,
            })?;
            c += 1;
        }
        Ok(())
    }

    /// The pairs at each distance of the fingerprint graph: a node's own, and each edge's.
    fn count_unverified(&mut self) {
        let size = |n: usize| (self.starts[n + 1] - self.starts[n]) as u64;
        for n in 0..self.nodes.len() {
            self.pairs_at[0] += size(n) * size(n).saturating_sub(1) / 2;
        }
        for &(a, b, distance) in &self.edges {
            self.pairs_at[distance as usize] += size(a as usize) * size(b as usize);
        }
    }

    /// The clusters, found from the fingerprint graph on first use (every document of a node
    /// is in its node's cluster, and every edge joins two nodes' clusters) unless verification
    /// set them.
    fn clusters(&self) -> &Clusters {
        self.clusters.get_or_init(|| {
            let mut sets = UnionFind::new(self.docs.len());
            for n in 0..self.nodes.len() {
                for d in self.starts[n] + 1..self.starts[n + 1] {
                    sets.union(self.starts[n], d);
                }
            }
            for &(a, b, _) in &self.edges {
                sets.union(self.starts[a as usize], self.starts[b as usize]);
            }
            self.clusters_of(sets)
        })
    }

    /// Clusters and counts from the verified document pairs. The candidates come in blocks
    /// (a node's own pairs, an edge's), and a block's documents are grouped by class, so each
    /// pair of classes is judged once for all its document pairs: a page's 1e5 identical
    /// copies cost one judgement, not 5e9. Blocks are judged in parallel.
    fn cluster_verified(&mut self, progress: &dyn Progress) -> Result<()> {
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

    /// Each document's place in the order of ids (byte order; ids are distinct, the index
    /// breaks ties all the same). Sorted by the ids' first 16 bytes as two integers (read
    /// big-endian, zero-padded: a strict order there is the ids' order), the ids themselves
    /// compared only where those agree: a sort of millions of ids through pointers spent most
    /// of its time in memcmp.
    fn ranks(&self) -> &[u32] {
        self.ranks.get_or_init(|| {
            let prefix = |id: &str, from: usize| {
                let mut bytes = [0u8; 8];
                let tail = id.as_bytes().get(from..).unwrap_or_default();
                let n = tail.len().min(8);
                bytes[..n].copy_from_slice(&tail[..n]);
                u64::from_be_bytes(bytes)
            };
            let mut keys: Vec<(u64, u64, u32)> = self
                .docs
                .par_iter()
                .enumerate()
                .map(|(d, (id, _))| (prefix(id, 0), prefix(id, 8), d as u32))
                .collect();
            let docs = &self.docs;
            keys.par_sort_unstable_by(|a, b| {
                (a.0, a.1)
                    .cmp(&(b.0, b.1))
                    .then_with(|| docs[a.2 as usize].0.cmp(&docs[b.2 as usize].0))
                    .then(a.2.cmp(&b.2))
            });
            let mut ranks = vec![0u32; docs.len()];
            for (rank, &(_, _, d)) in keys.iter().enumerate() {
                ranks[d as usize] = rank as u32;
            }
            ranks
        })
    }

    /// The components of two or more documents, ordered by their smallest id, each sorted.
    fn clusters_of(&self, mut sets: UnionFind) -> Clusters {
        let roots: Vec<usize> = (0..self.docs.len()).map(|d| sets.find(d)).collect();
        let mut in_cluster: Vec<u32> = (0..self.docs.len() as u32)
            .filter(|&d| sets.size_of(roots[d as usize]) > 1)
            .collect();
        // The smallest id's rank in each root's set.
        let ranks = self.ranks();
        let mut smallest: Vec<u32> = vec![u32::MAX; self.docs.len()];
        for &d in &in_cluster {
            let first = &mut smallest[roots[d as usize]];
            *first = (*first).min(ranks[d as usize]);
        }
        in_cluster.par_sort_unstable_by_key(|&d| (smallest[roots[d as usize]], ranks[d as usize]));
        let mut starts = vec![0];
        for w in 1..in_cluster.len() {
            if roots[in_cluster[w] as usize] != roots[in_cluster[w - 1] as usize] {
                starts.push(w);
            }
        }
        if !in_cluster.is_empty() {
            starts.push(in_cluster.len());
        }
        Clusters {
            members: in_cluster,
            starts,
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        /// Ranks by the ids' padded 16-byte prefixes, then the ids, are the ids' byte order:
        /// ids that share long prefixes, end in NUL bytes or are prefixes of each other.
        #[test]
        fn ranks_are_the_order_of_the_ids(
            ids in proptest::collection::btree_set("(https://example\\.com/)?[a\\x00b]{0,20}", 1..60)
        ) {
            let documents: Vec<(String, u64)> =
                ids.iter().rev().enumerate().map(|(i, id)| (id.clone(), i as u64)).collect();
            let near = NearDuplicates::of_documents(&documents, 3, None, &()).unwrap();
            let mut by_rank: Vec<(u32, &str)> = near
                .docs
                .iter()
                .zip(near.ranks())
                .map(|((id, _), &rank)| (rank, &**id))
                .collect();
            by_rank.sort_unstable();
            let ordered: Vec<&str> = by_rank.into_iter().map(|(_, id)| id).collect();
            let mut expected: Vec<&str> = near.docs.iter().map(|(id, _)| &**id).collect();
            expected.sort_unstable();
            proptest::prop_assert_eq!(ordered, expected);
        }
    }

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

    /// Pairs handed out in parallel segments come in the order, and are the pairs, of the
    /// serial walk, also when a hot fingerprint's pairs span many segments and when its
    /// documents have edges of their own.
    #[test]
    fn parallel_pairs_are_the_serial_ones_in_order() {
        let mut documents: Vec<(String, u64)> = Vec::new();
        let mut state = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        // A hot page (700 copies: 244,650 pairs), near copies of it, and random pages with
        // near copies of their own.
        let hot = 0x0123_4567_89ab_cdef;
        for i in 0..700 {
            documents.push((format!("hot-{i:04}"), hot));
        }
        for i in 0..40 {
            documents.push((format!("near-{i:02}"), hot ^ (1 << (i % 64)) ^ (1 << 7)));
        }
        for i in 0..3000 {
            let fp = next();
            documents.push((format!("page-{i:04}"), fp));
            if i % 3 == 0 {
                documents.push((format!("page-{i:04}-b"), fp ^ (1 << (next() % 64))));
            }
        }
        let near = NearDuplicates::of_documents(&documents, 3, None, &()).unwrap();
        let mut serial: Vec<String> = Vec::new();
        near.for_each_pair(|a, b, d, j| {
            serial.push(format!("{a} {b} {d} {j:?}"));
            Ok::<_, ()>(())
        })
        .unwrap();
        assert_eq!(serial.len() as u64, near.summary().pairs);
        assert!(
            serial.len() > 8 * SEGMENT,
            "many segments: {}",
            serial.len()
        );
        let mut parallel: Vec<String> = Vec::new();
        let mut buffers = 0;
        near.for_each_pair_parallel(
            Vec::new,
            |buffer: &mut Vec<String>, a, b, d, j| {
                buffer.push(format!("{a} {b} {d} {j:?}"));
                Ok::<_, ()>(())
            },
            |buffer| {
                buffers += 1;
                parallel.extend(buffer);
                Ok(())
            },
        )
        .unwrap();
        assert!(buffers > 8);
        assert_eq!(parallel, serial);

        // An error from a worker stops the walk and is returned.
        let failed = near.for_each_pair_parallel(
            || (),
            |_, a, _, _, _| {
                if a == "page-2001" {
                    Err(a.to_string())
                } else {
                    Ok(())
                }
            },
            |()| Ok(()),
        );
        assert_eq!(failed, Err("page-2001".to_string()));
    }
}
