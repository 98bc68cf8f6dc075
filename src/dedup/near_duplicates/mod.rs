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
//!
//! The graph and its building are here; the rest is a file per concept: walk.rs (the pairs
//! handed out in order), verified.rs (verification: evidence, classes, the verify calls),
//! tally.rs (a verified audit's counts and clusters, judged a block at a time), clusters.rs
//! ([`Cluster`]s, by union-find), keep.rs (the keep rule) and summary.rs ([`AuditSummary`]).

use std::collections::HashMap;
use std::sync::OnceLock;

use rayon::prelude::*;

use crate::error::Result;
use crate::similarity::find_all::{find_all_in, find_all_settings, FingerprintPair};
use crate::sys::progress::{Phase, Progress};

mod clusters;
mod keep;
mod summary;
mod tally;
mod verified;
mod walk;

use clusters::Clusters;
use keep::Decisions;
use verified::Verified;

pub use clusters::Cluster;
pub use keep::Duplicate;
pub use summary::AuditSummary;
pub use walk::PairCursor;

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

/// The near duplicates of a store or of a list of documents: see the module docs. Made by
/// [`crate::Snapshot::near_duplicates`] or [`NearDuplicates::of_documents`].
///
/// ```
/// use simhashdb::NearDuplicates;
///
/// // A chain: a-b and b-c are 2 bits apart, a-c 4 bits: beyond the distance.
/// let documents = [("a".to_string(), 0b0000u64), ("b".into(), 0b0011), ("c".into(), 0b1111)];
/// let near = NearDuplicates::of_documents(&documents, 2, None, &())?;
/// let mut dropped = Vec::new();
/// near.for_each_duplicate(|d| {
///     dropped.push((d.id.to_string(), d.kept.to_string()));
///     Ok::<(), simhashdb::Error>(())
/// })?;
/// // b goes (a is kept); c stays: it is near no kept document.
/// assert_eq!(dropped, [("b".to_string(), "a".to_string())]);
/// assert_eq!(near.summary().clusters, 1);
/// # Ok::<(), simhashdb::Error>(())
/// ```
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
    /// Documents of a batch below this are references: always kept, and at equal distance
    /// matched before any other (see keep.rs). 0 for an audit.
    references: u64,
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
        debug_assert!(ids.is_sorted_by(|a, b| (a.0, &a.1) <= (b.0, &b.1)));
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
            references: 0,
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
        let ids = latest
            .iter()
            .map(|(id, &(fp, rank))| (fp, Box::from(*id), rank))
            .collect();
        Self::of_batched(latest.len() as u64, ids, distance, blocks, progress)
    }

    /// The near duplicates of `ids` `(fingerprint, id, batch)`, every one a document (an id
    /// may be given twice), their pairs found in memory as [`NearDuplicates::of_documents`]
    /// finds them.
    pub(crate) fn of_batched(
        documents: u64,
        ids: Vec<(u64, Box<str>, u64)>,
        distance: u8,
        blocks: Option<u8>,
        progress: &dyn Progress,
    ) -> Result<NearDuplicates> {
        let mut fingerprints: Vec<u64> = ids.iter().map(|&(fp, ..)| fp).collect();
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
        Ok(NearDuplicates::build(
            documents,
            fingerprints.len() as u64,
            ids,
            &pairs,
            progress,
        ))
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
}
