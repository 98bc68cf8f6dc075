//! Clusters: the connected components of the graph near-duplicate pairs draw, by union-find
//! (for documents, see [`crate::NearDuplicates`], which uses the same [`UnionFind`]).

use std::collections::HashMap;

use crate::similarity::find_all::FingerprintPair;

/// The groups of fingerprints the pairs connect (seomoz's `find_clusters`): members sorted,
/// groups ordered by their first member.
pub(crate) fn fingerprint_clusters(pairs: &[FingerprintPair]) -> Vec<Vec<u64>> {
    components(pairs.iter().map(|p| (p.a, p.b)))
}

/// The connected components of the graph of `edges`: members sorted, components ordered by
/// their first member.
fn components<T: Copy + Ord + std::hash::Hash>(edges: impl Iterator<Item = (T, T)>) -> Vec<Vec<T>> {
    let mut index: HashMap<T, usize> = HashMap::new();
    let mut names: Vec<T> = Vec::new();
    let mut edge_list = Vec::new();
    for (a, b) in edges {
        let [a, b] = [a, b].map(|node| {
            *index.entry(node).or_insert_with(|| {
                names.push(node);
                names.len() - 1
            })
        });
        edge_list.push((a, b));
    }
    let mut sets = UnionFind::new(names.len());
    for (a, b) in edge_list {
        sets.union(a, b);
    }
    let mut members: HashMap<usize, Vec<T>> = HashMap::new();
    for (i, &name) in names.iter().enumerate() {
        members.entry(sets.find(i)).or_default().push(name);
    }
    let mut out: Vec<Vec<T>> = members
        .into_values()
        .map(|mut m| {
            m.sort_unstable();
            m
        })
        .collect();
    out.sort_unstable();
    out
}

/// Disjoint sets over 0..n (n < 2^32) with path halving and union by size.
pub(crate) struct UnionFind {
    parent: Vec<u32>,
    size: Vec<u32>,
}

impl UnionFind {
    pub(crate) fn new(n: usize) -> Self {
        UnionFind {
            parent: (0..n as u32).collect(),
            size: vec![1; n],
        }
    }

    /// The representative of `x`'s set.
    pub(crate) fn find(&mut self, x: usize) -> usize {
        let mut x = x as u32;
        while self.parent[x as usize] != x {
            self.parent[x as usize] = self.parent[self.parent[x as usize] as usize];
            x = self.parent[x as usize];
        }
        x as usize
    }

    /// The number of members of the set whose representative is `root`.
    pub(crate) fn size_of(&self, root: usize) -> usize {
        self.size[root] as usize
    }

    pub(crate) fn union(&mut self, a: usize, b: usize) {
        let (mut a, mut b) = (self.find(a), self.find(b));
        if a == b {
            return;
        }
        if self.size[a] < self.size[b] {
            std::mem::swap(&mut a, &mut b);
        }
        self.parent[b] = a as u32;
        self.size[a] += self.size[b];
    }
}
