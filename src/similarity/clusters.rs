//! Clusters: the connected components of a graph, by the crate's one union-find
//! ([`UnionFind`]). Every graph is joined through it: fingerprint pairs here (seomoz's
//! `find_clusters`), any nodes for a cluster's tasks ([`components`], re-exported as
//! `simhashdb::partitioned::components`), the documents of [`crate::NearDuplicates`], and
//! `tune`'s groups of true pairs.

#[cfg(feature = "seomoz")]
use crate::similarity::find_all::FingerprintPair;

/// The groups of fingerprints the pairs connect (seomoz's `find_clusters`): members sorted,
/// groups ordered by their first member.
#[cfg(feature = "seomoz")]
#[cfg(feature = "seomoz")]
pub(crate) fn fingerprint_clusters(pairs: &[FingerprintPair]) -> Vec<Vec<u64>> {
    let edges: Vec<(u64, u64)> = pairs.iter().map(|p| (p.a, p.b)).collect();
    let (nodes, least) = labelled(&edges);
    // Nodes ascending: each component's least node comes first and opens its group.
    let mut group_of = vec![0u32; nodes.len()];
    let mut groups: Vec<Vec<u64>> = Vec::new();
    for (i, &node) in nodes.iter().enumerate() {
        if least[i] as usize == i {
            group_of[i] = groups.len() as u32;
            groups.push(vec![*node]);
        } else {
            groups[group_of[least[i] as usize] as usize].push(*node);
        }
    }
    groups
}

/// The connected components of the graph of `edges` (pairs of nodes: fingerprints, ids...):
/// each node of an edge with the least node of its component, ascending by node.
#[cfg(feature = "partitioned")]
#[cfg(feature = "partitioned")]
pub fn components<T: Ord + Clone>(edges: &[(T, T)]) -> Vec<(T, T)> {
    let (nodes, least) = labelled(edges);
    nodes
        .iter()
        .zip(&least)
        .map(|(&node, &l)| (node.clone(), nodes[l as usize].clone()))
        .collect()
}

/// The nodes of `edges`, ascending and distinct, and for each the index of the least node of
/// its component. Nodes are numbered by one sort of the edges' ends, which leaves each end's
/// number in place for its edge: a search per end (through a pointer per comparison) or a
/// hash table of the nodes costs more than that sort.
#[cfg(any(feature = "partitioned", feature = "seomoz"))]
#[cfg(any(feature = "partitioned", feature = "seomoz"))]
fn labelled<T: Ord>(edges: &[(T, T)]) -> (Vec<&T>, Vec<u32>) {
    let mut ends: Vec<(&T, usize)> = edges
        .iter()
        .enumerate()
        .flat_map(|(e, (a, b))| [(a, 2 * e), (b, 2 * e + 1)])
        .collect();
    ends.sort_unstable();
    let mut nodes: Vec<&T> = Vec::new();
    let mut number = vec![0u32; ends.len()];
    for &(node, end) in &ends {
        if nodes.last() != Some(&node) {
            nodes.push(node);
        }
        number[end] = nodes.len() as u32 - 1;
    }
    drop(ends);
    let mut sets = UnionFind::new(nodes.len());
    for edge in number.chunks_exact(2) {
        sets.union(edge[0] as usize, edge[1] as usize);
    }
    // A set's representative is its least member, so its least node.
    let least = (0..nodes.len()).map(|i| sets.find(i) as u32).collect();
    (nodes, least)
}

/// Disjoint sets over 0..n (n < 2^32) with path halving; a union links the greater
/// representative under the less, so every set's representative is its least member. Linking
/// by index keeps no size per member: a union touches only the parents, where union by size
/// also reads two sizes and writes one (and holds 4 bytes more per member).
pub(crate) struct UnionFind {
    parent: Vec<u32>,
}

impl UnionFind {
    pub(crate) fn new(n: usize) -> Self {
        UnionFind {
            parent: (0..n as u32).collect(),
        }
    }

    /// The representative of `x`'s set: its least member.
    pub(crate) fn find(&mut self, x: usize) -> usize {
        let mut x = x as u32;
        while self.parent[x as usize] != x {
            self.parent[x as usize] = self.parent[self.parent[x as usize] as usize];
            x = self.parent[x as usize];
        }
        x as usize
    }

    pub(crate) fn union(&mut self, a: usize, b: usize) {
        let (a, b) = (self.find(a), self.find(b));
        if a != b {
            self.parent[a.max(b)] = a.min(b) as u32;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[cfg(all(feature = "partitioned", feature = "seomoz"))]
    use proptest::prelude::*;

    /// Each node's least connected node, by a search from every node.
    #[cfg(all(feature = "partitioned", feature = "seomoz"))]
    fn brute_force(edges: &[(u8, u8)]) -> Vec<(u8, u8)> {
        let mut nodes: Vec<u8> = edges.iter().flat_map(|&(a, b)| [a, b]).collect();
        nodes.sort_unstable();
        nodes.dedup();
        nodes
            .iter()
            .map(|&start| {
                let mut seen = vec![start];
                let mut at = 0;
                while at < seen.len() {
                    let x = seen[at];
                    for &(a, b) in edges {
                        for (from, to) in [(a, b), (b, a)] {
                            if from == x && !seen.contains(&to) {
                                seen.push(to);
                            }
                        }
                    }
                    at += 1;
                }
                (start, *seen.iter().min().unwrap())
            })
            .collect()
    }

    #[cfg(all(feature = "partitioned", feature = "seomoz"))]
    proptest! {
        /// Components and fingerprint clusters are those a search finds, on graphs with
        /// self loops, repeated edges and long chains.
        #[test]
        fn components_are_the_connected_nodes(
            edges in proptest::collection::vec((0u8..40, 0u8..40), 0..60),
        ) {
            let want = brute_force(&edges);
            prop_assert_eq!(components(&edges), want.clone());
            let pairs: Vec<FingerprintPair> = edges
                .iter()
                .map(|&(a, b)| FingerprintPair { a: u64::from(a), b: u64::from(b), distance: 0 })
                .collect();
            let mut groups: Vec<Vec<u64>> = Vec::new();
            for &(node, least) in &want {
                match groups.iter_mut().find(|g| g[0] == u64::from(least)) {
                    Some(group) => group.push(u64::from(node)),
                    None => groups.push(vec![u64::from(node)]),
                }
            }
            prop_assert_eq!(fingerprint_clusters(&pairs), groups);
        }
    }

    #[test]
    fn a_sets_representative_is_its_least_member() {
        let mut sets = UnionFind::new(10);
        for (a, b) in [(9, 7), (7, 8), (3, 9), (5, 6), (6, 4)] {
            sets.union(a, b);
        }
        let found: Vec<usize> = (0..10).map(|x| sets.find(x)).collect();
        assert_eq!(found, [0, 1, 2, 3, 4, 4, 4, 3, 3, 3]);
    }
}
