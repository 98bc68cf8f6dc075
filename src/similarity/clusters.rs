//! Clusters: the connected components of the graph near-duplicate pairs draw, by union-find.

use std::collections::HashMap;

use crate::similarity::find_all::{DocumentPair, FingerprintPair};

/// The connected components of the graph the pairs draw, each with at least two members:
/// members sorted, clusters ordered by their first member.
pub fn clusters(pairs: &[DocumentPair]) -> Vec<Vec<String>> {
    components(pairs.iter().map(|p| (p.a.as_str(), p.b.as_str())))
        .into_iter()
        .map(|c| c.into_iter().map(str::to_string).collect())
        .collect()
}

/// [`clusters`] of fingerprint pairs: the groups of fingerprints the pairs connect.
pub(crate) fn fingerprint_clusters(pairs: &[FingerprintPair]) -> Vec<Vec<u64>> {
    components(pairs.iter().map(|p| (p.a, p.b)))
}

/// The connected components of the graph of `edges`: members sorted, components ordered by
/// their first member.
fn components<T: Copy + Ord + std::hash::Hash>(edges: impl Iterator<Item = (T, T)>) -> Vec<Vec<T>> {
    let mut index: HashMap<T, usize> = HashMap::new();
    let mut names: Vec<T> = Vec::new();
    let mut sets = UnionFind::new();
    for (a, b) in edges {
        let [a, b] = [a, b].map(|node| {
            *index.entry(node).or_insert_with(|| {
                names.push(node);
                sets.push()
            })
        });
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

/// Disjoint sets over 0..n with path halving and union by size.
struct UnionFind {
    parent: Vec<usize>,
    size: Vec<usize>,
}

impl UnionFind {
    fn new() -> Self {
        UnionFind {
            parent: Vec::new(),
            size: Vec::new(),
        }
    }

    /// Adds a set of one new element; returns the element.
    fn push(&mut self) -> usize {
        self.parent.push(self.parent.len());
        self.size.push(1);
        self.parent.len() - 1
    }

    fn find(&mut self, mut x: usize) -> usize {
        while self.parent[x] != x {
            self.parent[x] = self.parent[self.parent[x]];
            x = self.parent[x];
        }
        x
    }

    fn union(&mut self, a: usize, b: usize) {
        let (mut a, mut b) = (self.find(a), self.find(b));
        if a == b {
            return;
        }
        if self.size[a] < self.size[b] {
            std::mem::swap(&mut a, &mut b);
        }
        self.parent[b] = a;
        self.size[a] += self.size[b];
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pair(a: &str, b: &str) -> DocumentPair {
        DocumentPair {
            a: a.into(),
            b: b.into(),
            distance: 1,
        }
    }

    #[test]
    fn clusters_are_connected_components() {
        let pairs = [
            pair("a", "b"),
            pair("c", "d"),
            pair("b", "e"),
            pair("x", "y"),
        ];
        assert_eq!(
            clusters(&pairs),
            vec![
                vec!["a".to_string(), "b".into(), "e".into()],
                vec!["c".into(), "d".into()],
                vec!["x".into(), "y".into()],
            ]
        );
    }
}
