//! The keep rule: `dedup`'s greedy, over the near-duplicate graph.
//!
//! Documents are taken in order: the earliest batch first, then the smallest id (byte order).
//! A document is dropped when a document kept before it is within the distance (and, when the
//! pairs are verified, their Jaccard passes, or a side has no sketch); it names the nearest
//! such kept document (the smallest distance, then the smallest id). Otherwise it is kept.
//!
//! A distributed dedup against reference documents (`simhashdb::partitioned::keep_rule`) adds
//! references: documents that come first, are always kept, and at equal distance are matched
//! before any other (by batch, then id), as a store's documents are by `dedup`.
//!
//! Invariants:
//! 1. The decisions are those of `dedup` of the same documents replayed in that order into an
//!    empty store with the same settings: the lexicographically first maximal independent
//!    set of the (verified) pair graph in that order.
//! 2. Every dropped document names a kept document that is near it: nothing is dropped for a
//!    chain. (Connected components are not a keep rule: of a chain A~B~C with A and C far
//!    apart, one document per component would drop C, near nothing kept.)
//! 3. A cluster (component) keeps at least one document and may keep several.
//!
//! Memory: per document of the graph its place in the order and its decision (17 bytes), while
//! deciding 8 bytes more and two links per node to its kept documents, and both ends of each
//! edge (16 bytes an edge): never the document pairs. Time: per document, the kept documents of its node and of the nodes it has
//! an edge to, nearest first; a page's 1e5 copies keep one and each copy looks at that one.

use rayon::prelude::*;

use super::verified::Recent;
use super::NearDuplicates;

/// No document: the end of a node's list of kept documents, or a kept document's match.
const NONE: u32 = u32::MAX;

/// What the keep rule decided for every document of a [`NearDuplicates`].
#[derive(Debug)]
pub(super) struct Decisions {
    /// The documents in the rule's order: (batch, id).
    order: Vec<u32>,
    /// Per document, the kept document it duplicates, or [`NONE`] when it is kept.
    matched: Vec<u32>,
    /// Per dropped document, the distance to its match.
    distance: Vec<u8>,
    /// Per dropped document, the Jaccard similarity verification found (NaN: none, because the
    /// pairs are not verified or a side has no sketch).
    jaccard: Vec<f64>,
}

/// A dropped document as [`NearDuplicates::for_each_duplicate`] hands it out.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
#[non_exhaustive]
pub struct Duplicate<'a> {
    /// The dropped document's id.
    pub id: &'a str,
    /// The kept document it is a near duplicate of: the nearest kept before it.
    pub kept: &'a str,
    /// The distance between the two.
    pub distance: u32,
    /// Their Jaccard similarity, when verified.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub jaccard: Option<f64>,
    /// Whether the match was taken without verification in a verified audit (a side has no
    /// sketch).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub unverified: bool,
}

impl Decisions {
    /// Whether document `d` is kept.
    pub(super) fn is_kept(&self, d: usize) -> bool {
        self.matched[d] == NONE
    }

    /// How many documents were dropped.
    pub(super) fn dropped(&self) -> u64 {
        self.matched.iter().filter(|&&m| m != NONE).count() as u64
    }
}

impl NearDuplicates {
    /// The keep rule's decisions (see the module docs), computed once.
    pub(super) fn decisions(&self) -> &Decisions {
        self.decisions.get_or_init(|| self.decide())
    }

    fn decide(&self) -> Decisions {
        let n_docs = self.docs.len();
        let (docs, ranks) = (&self.docs, self.ranks());
        let mut order: Vec<u32> = (0..n_docs as u32).collect();
        order.par_sort_unstable_by_key(|&d| (docs[d as usize].1, ranks[d as usize]));
        let (neighbours, neighbour_starts) = self.adjacency();
        let mut node_of = vec![0u32; n_docs];
        for n in 0..self.nodes.len() {
            node_of[self.starts[n]..self.starts[n + 1]].fill(n as u32);
        }
        // Each node's kept documents as a list (`first_kept`, then `next_kept`), and the
        // smallest of them (docs of a node are sorted by id, so the least index).
        let mut first_kept = vec![NONE; self.nodes.len()];
        let mut least_kept = vec![NONE; self.nodes.len()];
        let mut next_kept = vec![NONE; n_docs];
        let mut matched = vec![NONE; n_docs];
        let mut distance = vec![0u8; n_docs];
        let mut jaccard = vec![f64::NAN; n_docs];
        let mut recent = Recent::new();
        // At equal distance: a reference first, by batch; then the smallest id.
        let references = self.references;
        let tie = |k: u32| {
            let batch = docs[k as usize].1;
            if batch < references {
                (0, batch)
            } else {
                (1, u64::from(ranks[k as usize]))
            }
        };
        for &d in &order {
            let d = d as usize;
            let n = node_of[d] as usize;
            if docs[d].1 < self.references {
                keep(d, n, &mut first_kept, &mut least_kept, &mut next_kept);
                continue;
            }
            let own = std::iter::once((n as u32, 0u32));
            let near = &neighbours[neighbour_starts[n]..neighbour_starts[n + 1]];
            // (distance, kept document, similarity) of the best match so far.
            let mut best: Option<(u32, u32, Option<f64>)> = None;
            let better = |best: &Option<(u32, u32, Option<f64>)>, at: u32, k: u32| match best {
                None => true,
                Some((bd, bk, _)) => (at, tie(k)) < (*bd, tie(*bk)),
            };
            for (other, at) in own.chain(near.iter().copied()) {
                if best.is_some_and(|(bd, ..)| at > bd) {
                    break; // neighbours come nearest first
                }
                let other = other as usize;
                match &self.verified {
                    None => {
                        let k = least_kept[other];
                        if k != NONE && better(&best, at, k) {
                            best = Some((at, k, None));
                        }
                    }
                    Some(v) => {
                        let mut k = first_kept[other];
                        while k != NONE {
                            if better(&best, at, k) {
                                let similarity = v.jaccard(d, k as usize, &mut recent);
                                if v.keeps(similarity) {
                                    best = Some((at, k, similarity));
                                }
                            }
                            k = next_kept[k as usize];
                        }
                    }
                }
            }
            match best {
                Some((at, k, similarity)) => {
                    matched[d] = k;
                    distance[d] = at as u8;
                    jaccard[d] = similarity.unwrap_or(f64::NAN);
                }
                None => keep(d, n, &mut first_kept, &mut least_kept, &mut next_kept),
            }
        }
        Decisions {
            order,
            matched,
            distance,
            jaccard,
        }
    }

    /// Documents of a batch below `references` are references (see the module docs).
    #[cfg(feature = "partitioned")]
    pub(crate) fn set_references(&mut self, references: u64) {
        self.references = references;
        self.decisions = std::sync::OnceLock::new();
    }

    /// Calls `f(document, kept, distance, jaccard)` on every document the keep rule drops,
    /// by their places in the node order: for callers that name documents by their batch.
    #[cfg(feature = "partitioned")]
    pub(crate) fn for_each_dropped(&self, mut f: impl FnMut(usize, usize, u32, Option<f64>)) {
        let decisions = self.decisions();
        for &d in &decisions.order {
            let k = decisions.matched[d as usize];
            if k != NONE {
                let jaccard = Some(decisions.jaccard[d as usize]).filter(|j| !j.is_nan());
                f(
                    d as usize,
                    k as usize,
                    u32::from(decisions.distance[d as usize]),
                    jaccard,
                );
            }
        }
    }

    /// The batch of the document at place `d` of the node order.
    #[cfg(feature = "partitioned")]
    pub(crate) fn batch_of(&self, d: usize) -> u64 {
        self.docs[d].1
    }

    /// Each node's neighbours `(node, distance)`, nearest first (then by node): node n's are
    /// `neighbours[starts[n]..starts[n + 1]]`.
    fn adjacency(&self) -> (Vec<(u32, u32)>, Vec<usize>) {
        let mut starts = vec![0usize; self.nodes.len() + 1];
        for &(a, b, _) in &self.edges {
            starts[a as usize + 1] += 1;
            starts[b as usize + 1] += 1;
        }
        for n in 0..self.nodes.len() {
            starts[n + 1] += starts[n];
        }
        let mut filled = starts.clone();
        let mut neighbours = vec![(0u32, 0u32); starts[self.nodes.len()]];
        for &(a, b, distance) in &self.edges {
            for (from, to) in [(a, b), (b, a)] {
                let slot = &mut filled[from as usize];
                neighbours[*slot] = (to, distance);
                *slot += 1;
            }
        }
        let mut rest = &mut neighbours[..];
        let mut lists = Vec::with_capacity(self.nodes.len());
        for n in 0..self.nodes.len() {
            let (list, after) = rest.split_at_mut(starts[n + 1] - starts[n]);
            lists.push(list);
            rest = after;
        }
        lists
            .into_par_iter()
            .for_each(|list| list.sort_unstable_by_key(|&(node, distance)| (distance, node)));
        (neighbours, starts)
    }

    /// Calls `f` on every document the keep rule drops, in the rule's order (the earliest
    /// batch, then the smallest id): what `dedup` of the documents replayed in that order
    /// into an empty store lists as duplicates, line for line.
    pub fn for_each_duplicate<E>(
        &self,
        mut f: impl FnMut(&Duplicate<'_>) -> std::result::Result<(), E>,
    ) -> std::result::Result<(), E> {
        let decisions = self.decisions();
        for &d in &decisions.order {
            let d = d as usize;
            let k = decisions.matched[d];
            if k == NONE {
                continue;
            }
            let jaccard = Some(decisions.jaccard[d]).filter(|j| !j.is_nan());
            f(&Duplicate {
                id: &self.docs[d].0,
                kept: &self.docs[k as usize].0,
                distance: u32::from(decisions.distance[d]),
                jaccard,
                unverified: self.verified.is_some() && jaccard.is_none(),
            })?;
        }
        Ok(())
    }

    /// Calls `f` on the id of every document the keep rule keeps of the clusters (with
    /// singletons asked for, of every live document), in the rule's order: the kept records'
    /// ids of `dedup`'s replay.
    pub fn for_each_kept<E>(
        &self,
        mut f: impl FnMut(&str) -> std::result::Result<(), E>,
    ) -> std::result::Result<(), E> {
        let decisions = self.decisions();
        let clustered = self.clustered();
        let mut kept: Vec<(u64, &str)> = decisions
            .order
            .iter()
            .map(|&d| d as usize)
            .filter(|&d| decisions.is_kept(d) && clustered[d])
            .map(|d| (self.docs[d].1, &*self.docs[d].0))
            .collect();
        if let Some(alone) = &self.singletons {
            kept.extend(alone.iter().map(|(id, batch)| (*batch, &**id)));
            kept.par_sort_unstable();
        }
        kept.into_iter().try_for_each(|(_, id)| f(id))
    }

    /// Per document, whether it is in a cluster (has a near duplicate verification kept).
    fn clustered(&self) -> Vec<bool> {
        let mut clustered = vec![false; self.docs.len()];
        for &d in &self.clusters().members {
            clustered[d as usize] = true;
        }
        clustered
    }
}

/// Adds document `d` of node `n` to the node's kept documents.
fn keep(d: usize, n: usize, first: &mut [u32], least: &mut [u32], next: &mut [u32]) {
    next[d] = first[n];
    first[n] = d as u32;
    least[n] = least[n].min(d as u32);
}
