//! Clusters: the connected components of the (verified) pair graph over documents, by the
//! crate's one union-find, numbered in the order of their smallest ids; with singletons asked
//! for, every other live document is a cluster of one.

use std::collections::HashSet;

use rayon::prelude::*;

use super::NearDuplicates;
use crate::similarity::clusters::UnionFind;

/// Documents of the clusters, cluster after cluster (ordered by their smallest id), each
/// cluster's sorted by id; `starts[c]..starts[c + 1]` is cluster c.
#[derive(Debug)]
pub(super) struct Clusters {
    pub(super) members: Vec<u32>,
    pub(super) starts: Vec<usize>,
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

impl NearDuplicates {
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

    /// The clusters, found from the fingerprint graph on first use (every document of a node
    /// is in its node's cluster, and every edge joins two nodes' clusters) unless verification
    /// set them.
    pub(super) fn clusters(&self) -> &Clusters {
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

    /// The components of two or more documents, ordered by their smallest id, each sorted.
    pub(super) fn clusters_of(&self, mut sets: UnionFind) -> Clusters {
        let roots: Vec<usize> = (0..self.docs.len()).map(|d| sets.find(d)).collect();
        drop(sets);
        let mut sizes = vec![0u32; self.docs.len()];
        for &root in &roots {
            sizes[root] += 1;
        }
        let mut in_cluster: Vec<u32> = (0..self.docs.len() as u32)
            .filter(|&d| sizes[roots[d as usize]] > 1)
            .collect();
        drop(sizes);
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
