//! Near-duplicates at real-web skew: what an audit finds, held so that memory never grows with
//! the pairs of a hot cluster.
//!
//! Documents that share a fingerprint are one node; the graph's edges are the fingerprint pairs
//! within the distance. A page copied 1e5 times is one node of 1e5 ids, not 5e9 pairs: document
//! pairs are expanded only as they are handed out ([`NearDuplicates::for_each_pair`]), in a
//! fixed order, and counted without being expanded. Clusters (connected components) come from
//! union-find over the documents of the nodes, and each keeps one document: the one from the
//! earliest batch, ties broken by the smallest id (byte order).
//!
//! Memory: the fingerprint pairs (16 bytes each), the nodes' fingerprints, and the id and batch
//! of each document that has a near duplicate (plus one u32 per such document for its
//! cluster); with verification, those documents' shingle sets (`--verify-text`) or sketches
//! (N bytes each, from the store).

use std::collections::{HashMap, HashSet};
use std::path::Path;

use rayon::prelude::*;

use crate::error::{Error, Result};
use crate::io::document::ReadOptions;
use crate::io::input::read_corpus_shingles;
use crate::similarity::clusters::UnionFind;
use crate::similarity::find_all::{find_all_in, find_all_settings, FingerprintPair};
use crate::similarity::jaccard::{check_min_jaccard, jaccard};
use crate::similarity::sketch;
use crate::sys::progress::{Phase, Progress};

/// Candidate pairs a verification holds at once (24 bytes each).
const CANDIDATES: usize = 1 << 20;

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
    /// Documents of the clusters, cluster after cluster (ordered by their smallest id), each
    /// cluster's sorted by id; `cluster_starts[c]..cluster_starts[c + 1]` is cluster c.
    members: Vec<u32>,
    cluster_starts: Vec<usize>,
    /// Pairs by distance (0..=64), counted without expanding them.
    pairs_at: Vec<u64>,
    /// Pairs kept unverified: verified by sketches, a side had none.
    unverified: u64,
    /// `(id, batch)` of every live document outside the clusters, sorted by id, when
    /// singletons were asked for.
    singletons: Option<Vec<(Box<str>, u64)>>,
}

#[derive(Debug)]
struct Verified {
    evidence: Evidence,
    /// Per document, the number of its class: documents of one class have the same shingle
    /// set or the same sketch (copies of a page), so every pair among them has J = 1 (or is
    /// unverified alike) and a block of them is judged once, not pair by pair.
    classes: Vec<u32>,
    min_jaccard: f64,
}

impl Verified {
    /// [`Evidence::jaccard`], by class: two documents of one class are as alike as a
    /// document with itself.
    fn jaccard(&self, i: usize, j: usize) -> Option<f64> {
        match self.classes[i] == self.classes[j] {
            true => self.evidence.jaccard(i, i),
            false => self.evidence.jaccard(i, j),
        }
    }

    fn new(evidence: Evidence, min_jaccard: f64) -> Self {
        let classes = match &evidence {
            Evidence::Texts(sets) => classes_of(sets.iter().map(|s| &s[..])),
            Evidence::Sketches(sketches) => classes_of(sketches.iter().map(|s| s.as_deref())),
        };
        Verified {
            evidence,
            classes,
            min_jaccard,
        }
    }
}

/// The class of each item: equal items share one.
fn classes_of<T: std::hash::Hash + Eq>(items: impl Iterator<Item = T>) -> Vec<u32> {
    let mut seen: HashMap<T, u32> = HashMap::new();
    items
        .map(|item| {
            let next = seen.len() as u32;
            *seen.entry(item).or_insert(next)
        })
        .collect()
}

/// What a pair's Jaccard similarity is computed from, per document of a node.
#[derive(Debug)]
enum Evidence {
    /// Exact: each document's shingle set, from the corpus's text.
    Texts(Vec<Vec<u64>>),
    /// Estimated: each document's sketch from the store; None for a document that has none,
    /// whose pairs stay unverified.
    Sketches(Vec<Option<Vec<u8>>>),
}

impl Evidence {
    /// The Jaccard similarity of documents i and j, or None when it cannot be told.
    fn jaccard(&self, i: usize, j: usize) -> Option<f64> {
        match self {
            Evidence::Texts(sets) => Some(jaccard(&sets[i], &sets[j])),
            Evidence::Sketches(sketches) => match (&sketches[i], &sketches[j]) {
                (Some(a), Some(b)) => Some(sketch::estimate(a, b)),
                _ => None,
            },
        }
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
    /// The member that deduplication keeps: the earliest batch, then the smallest id.
    pub kept: usize,
}

impl Cluster<'_> {
    /// The id of the member kept.
    pub fn kept_id(&self) -> &str {
        self.members[self.kept].0
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
    /// Documents a dedup drops: every member of a cluster but the one it keeps.
    pub duplicates: u64,
    /// Documents a dedup keeps from the clusters: one per cluster.
    pub kept: u64,
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
        let _phase = Phase::start(progress, "clusters", 1);
        ids.par_sort_unstable_by(|a, b| (a.0, &a.1).cmp(&(b.0, &b.1)));
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
            members: Vec::new(),
            cluster_starts: vec![0],
            pairs_at: vec![0; 65],
            unverified: 0,
            singletons: None,
        };
        near.cluster_unverified();
        progress.advance(1);
        near
    }

    /// The near duplicates among `documents` (id, fingerprint) within `distance` bits,
    /// without a store (`find-all` on documents): the fingerprint pairs from in-memory
    /// permuted tables of `blocks` blocks (or those [`crate::Settings::for_size`] picks), the
    /// ids sharing a fingerprint at distance 0. A later document with the same id replaces an
    /// earlier one, as in a batch; every document counts as batch 0, so a cluster keeps its
    /// smallest id.
    pub fn of_documents(
        documents: &[(String, u64)],
        distance: u8,
        blocks: Option<u8>,
        progress: &dyn Progress,
    ) -> Result<NearDuplicates> {
        let mut latest: HashMap<&str, u64> = HashMap::with_capacity(documents.len());
        for (id, fp) in documents {
            latest.insert(id, *fp);
        }
        let mut fingerprints: Vec<u64> = latest.values().copied().collect();
        fingerprints.par_sort_unstable();
        fingerprints.dedup();
        let pairs = if distance == 0 {
            Vec::new()
        } else {
            let settings = find_all_settings(distance, fingerprints.len() as u64, blocks)?;
            find_all_in(&fingerprints, &settings, progress)
        };
        let ids = latest
            .iter()
            .map(|(id, fp)| (*fp, Box::from(*id), 0))
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
    /// of `corpus` (read as `options` says, only the documents that have a candidate pair
    /// kept), is at least `min_jaccard`; clusters, duplicates and counts follow the verified
    /// pairs. A document of a pair that the corpus lacks is an error naming the corpus and the
    /// id.
    pub fn verify_text(
        &mut self,
        corpus: &Path,
        options: &ReadOptions,
        min_jaccard: f64,
        progress: &dyn Progress,
    ) -> Result<()> {
        // Before the corpus is read: a wrong threshold should not cost a read of it.
        check_min_jaccard(min_jaccard)?;
        let wanted: HashSet<&str> = self.docs.iter().map(|(id, _)| &**id).collect();
        let mut read = read_corpus_shingles(corpus, options, |id| wanted.contains(id))?;
        drop(wanted);
        let sets = self
            .docs
            .iter()
            .map(|(id, _)| {
                read.remove(&**id).ok_or_else(|| {
                    Error::input_at(
                        &corpus.display().to_string(),
                        None,
                        format!("no text for document {id:?}"),
                    )
                })
            })
            .collect::<Result<_>>()?;
        self.verified = Some(Verified::new(Evidence::Texts(sets), min_jaccard));
        self.cluster_verified(progress)
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
        let sketches = {
            let _phase = Phase::start(progress, "reading sketches", 0);
            snapshot.sketches_of(&documents)?
        };
        self.verified = Some(Verified::new(Evidence::Sketches(sketches), min_jaccard));
        self.cluster_verified(progress)
    }

    /// Also lists, as clusters of one, every live document that has no (verified) near
    /// duplicate: `others` are every live document's `(id, batch)`, in any order.
    pub(crate) fn set_singletons(&mut self, mut others: Vec<(Box<str>, u64)>) {
        let clustered: HashSet<&str> = self
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
    /// many a dedup drops and keeps.
    pub fn summary(&self) -> AuditSummary {
        let sizes = self.cluster_starts.windows(2).map(|w| (w[1] - w[0]) as u64);
        let clusters = self.cluster_starts.len() as u64 - 1;
        let clustered = self.members.len() as u64;
        AuditSummary {
            documents: self.documents,
            distinct_fingerprints: self.distinct_fingerprints,
            pairs: self.pairs_at.iter().sum(),
            clusters,
            largest_cluster: sizes.max().unwrap_or(0),
            duplicates: clustered - clusters,
            kept: clusters,
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
        self.walk(cursor, max, |i, j, distance| match self.pair(i, j) {
            Some((a, b, jaccard)) => f(a, b, distance, jaccard).map(|()| true),
            None => Ok(false),
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
    fn pair(&self, i: usize, j: usize) -> Option<(&str, &str, Option<f64>)> {
        let jaccard = match &self.verified {
            None => None,
            Some(v) => match v.jaccard(i, j) {
                Some(j) if j < v.min_jaccard => return None,
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
        let clusters = self.cluster_starts.len() - 1;
        while c < clusters || s < alone.len() {
            number += 1;
            let first = |c: usize| &*self.docs[self.members[self.cluster_starts[c]] as usize].0;
            if s < alone.len() && (c == clusters || *alone[s].0 < *first(c)) {
                f(&Cluster {
                    number,
                    members: vec![(&alone[s].0, alone[s].1)],
                    kept: 0,
                })?;
                s += 1;
                continue;
            }
            let members: Vec<(&str, u64)> = self.members
                [self.cluster_starts[c]..self.cluster_starts[c + 1]]
                .iter()
                .map(|&d| {
                    let (id, batch) = &self.docs[d as usize];
                    (&**id, *batch)
                })
                .collect();
            let kept = (0..members.len())
                .min_by_key(|&m| (members[m].1, members[m].0))
                .expect("a cluster has members");
            f(&Cluster {
                number,
                members,
                kept,
            })?;
            c += 1;
        }
        Ok(())
    }

    /// Clusters and counts from the fingerprint graph: every document of a node is in its
    /// node's cluster, and every edge joins two nodes' clusters.
    fn cluster_unverified(&mut self) {
        let mut sets = UnionFind::new(self.docs.len());
        for n in 0..self.nodes.len() {
            let k = (self.starts[n + 1] - self.starts[n]) as u64;
            self.pairs_at[0] += k * k.saturating_sub(1) / 2;
            for d in self.starts[n] + 1..self.starts[n + 1] {
                sets.union(self.starts[n], d);
            }
        }
        for &(a, b, distance) in &self.edges {
            let (a, b) = (a as usize, b as usize);
            let (ka, kb) = (
                (self.starts[a + 1] - self.starts[a]) as u64,
                (self.starts[b + 1] - self.starts[b]) as u64,
            );
            self.pairs_at[distance as usize] += ka * kb;
            sets.union(self.starts[a], self.starts[b]);
        }
        self.set_clusters(sets);
    }

    /// Clusters and counts from the verified document pairs, in one pass over the candidates
    /// (the unverified pairs, in [`NearDuplicates::for_each_pair`]'s order), checked
    /// [`CANDIDATES`] at a time in parallel.
    fn cluster_verified(&mut self, progress: &dyn Progress) -> Result<()> {
        let _phase = Phase::start(progress, "verifying", self.pairs_at.iter().sum());
        let v = self.verified.as_ref().expect("verified");
        let mut sets = UnionFind::new(self.docs.len());
        let mut pairs_at = vec![0u64; 65];
        let mut unverified = 0u64;
        // Nodes whose documents are all of one class (a page's copies): their own pairs and
        // their edges to other such nodes are judged once, whatever their number of pairs.
        let node_of: Vec<u32> = (0..self.nodes.len())
            .flat_map(|n| std::iter::repeat_n(n as u32, self.starts[n + 1] - self.starts[n]))
            .collect();
        let uniform: Vec<bool> = (0..self.nodes.len())
            .map(|n| {
                let own = &v.classes[self.starts[n]..self.starts[n + 1]];
                own.iter().all(|&c| c == own[0])
            })
            .collect();
        let size = |n: usize| (self.starts[n + 1] - self.starts[n]) as u64;
        let mut judge =
            |i: usize, j: usize, distance: u32, pairs: u64, sets: &mut UnionFind| match v
                .jaccard(i, j)
            {
                Some(similarity) if similarity < v.min_jaccard => {}
                similarity => {
                    pairs_at[distance as usize] += pairs;
                    unverified += if similarity.is_none() { pairs } else { 0 };
                    sets.union(i, j);
                }
            };
        for n in (0..self.nodes.len()).filter(|&n| uniform[n] && size(n) > 1) {
            let first = self.starts[n];
            judge(first, first + 1, 0, size(n) * (size(n) - 1) / 2, &mut sets);
            for d in first + 2..self.starts[n + 1] {
                sets.union(first, d);
            }
        }
        for &(a, b, distance) in &self.edges {
            let (a, b) = (a as usize, b as usize);
            if uniform[a] && uniform[b] {
                let pairs = size(a) * size(b);
                judge(self.starts[a], self.starts[b], distance, pairs, &mut sets);
            }
        }
        let judged_whole = |i: usize, j: usize| {
            let (a, b) = (node_of[i] as usize, node_of[j] as usize);
            uniform[a] && uniform[b]
        };
        let mut candidates: Vec<(usize, usize, u32)> = Vec::with_capacity(CANDIDATES);
        let mut cursor = PairCursor::default();
        loop {
            candidates.clear();
            let walked = self
                .walk(&mut cursor, CANDIDATES, |i, j, distance| {
                    if judged_whole(i, j) {
                        return Ok::<_, std::convert::Infallible>(false);
                    }
                    candidates.push((i, j, distance));
                    Ok(true)
                })
                .unwrap_or_else(|never| match never {});
            // (i, j, distance, verified) of the pairs kept.
            let kept: Vec<(usize, usize, u32, bool)> = candidates
                .par_chunks(4096)
                .flat_map_iter(|chunk| {
                    chunk
                        .iter()
                        .filter_map(|&(i, j, distance)| match v.jaccard(i, j) {
                            Some(similarity) if similarity < v.min_jaccard => None,
                            similarity => Some((i, j, distance, similarity.is_some())),
                        })
                        .collect::<Vec<_>>()
                })
                .collect();
            for (i, j, distance, verified) in kept {
                pairs_at[distance as usize] += 1;
                unverified += u64::from(!verified);
                sets.union(i, j);
            }
            progress.advance(walked as u64);
            if walked < CANDIDATES {
                break;
            }
        }
        self.pairs_at = pairs_at;
        self.unverified = unverified;
        self.set_clusters(sets);
        Ok(())
    }

    /// Orders the components of two or more documents by their smallest id, each sorted.
    fn set_clusters(&mut self, mut sets: UnionFind) {
        let roots: Vec<usize> = (0..self.docs.len()).map(|d| sets.find(d)).collect();
        let mut in_cluster: Vec<u32> = (0..self.docs.len() as u32)
            .filter(|&d| sets.size_of(roots[d as usize]) > 1)
            .collect();
        // The document with the smallest id of each root's set.
        let mut smallest: Vec<u32> = vec![u32::MAX; self.docs.len()];
        for &d in &in_cluster {
            let first = &mut smallest[roots[d as usize]];
            if *first == u32::MAX || self.docs[d as usize].0 < self.docs[*first as usize].0 {
                *first = d;
            }
        }
        let docs = &self.docs;
        in_cluster.par_sort_unstable_by_key(|&d| {
            let first = smallest[roots[d as usize]];
            (&docs[first as usize].0, first, &docs[d as usize].0)
        });
        let mut starts = vec![0];
        for w in 1..in_cluster.len() {
            if roots[in_cluster[w] as usize] != roots[in_cluster[w - 1] as usize] {
                starts.push(w);
            }
        }
        if !in_cluster.is_empty() {
            starts.push(in_cluster.len());
        }
        self.members = in_cluster;
        self.cluster_starts = starts;
    }
}
