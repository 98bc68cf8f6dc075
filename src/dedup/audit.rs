//! Audit: every pair of stored documents within D bits, and the clusters they form.
//!
//! The permuted tables are already sorted, so the audit streams them: for each needed table
//! and each of 256 key ranges (the keys' leading byte; every table's prefix is at least 8 bits,
//! so a range never splits a prefix group), it merges the runs' keys, and compares the keys
//! within each group sharing the table's leading blocks. A pair is kept only by the first table
//! whose leading blocks both share ([`Permutations::reports`]), so every pair comes out once
//! with no global set. Permuting bits keeps Hamming distances, so keys compare as they are.
//!
//! Memory: one range's keys per thread, the fingerprint pairs found, and for documents the
//! fingerprints of every posting (to find fingerprints stored under several ids).

use std::collections::HashMap;
use std::sync::Mutex;

use rayon::prelude::*;

use crate::error::{guard_redb, Result};
use crate::format::settings::Settings;
use crate::read::snapshot::Snapshot;
use crate::tables::permutation::Permutations;
use crate::tables::sorted_tables;

/// Two distinct fingerprints within the audit's distance; `a < b`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct FingerprintPair {
    /// The smaller fingerprint.
    pub a: u64,
    /// The larger fingerprint.
    pub b: u64,
    /// Their Hamming distance.
    pub distance: u32,
}

/// Two stored documents within the audit's distance; `a < b`.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct DocumentPair {
    /// The smaller id.
    pub a: String,
    /// The larger id.
    pub b: String,
    /// The Hamming distance between their fingerprints.
    pub distance: u32,
}

/// Key ranges per table that audit tasks split the work into: one per leading byte.
const RANGES: usize = 256;

/// Appends to `out` the pairs of `keys` (table `t`'s keys, ascending, distinct) within
/// `distance` bits that table `t` reports.
fn close_pairs_in_sorted(
    perms: &Permutations,
    t: usize,
    keys: &[u64],
    distance: u32,
    out: &mut Vec<FingerprintPair>,
) {
    let table = &perms.tables()[t];
    let shift = 64 - table.prefix_bits();
    for group in keys.chunk_by(|a, b| a >> shift == b >> shift) {
        for (i, &x) in group.iter().enumerate() {
            for &y in &group[i + 1..] {
                let d = (x ^ y).count_ones();
                if d <= distance {
                    let (x, y) = (table.unpermute(x), table.unpermute(y));
                    if perms.reports(t, x, y) {
                        out.push(FingerprintPair {
                            a: x.min(y),
                            b: x.max(y),
                            distance: d,
                        });
                    }
                }
            }
        }
    }
}

/// The document pairs of `fingerprint_pairs`, given the ids of each fingerprint (`ids[i]` for
/// `fingerprints[i]`, which ascend and hold every fingerprint of a pair): the ids that share a
/// fingerprint at distance 0, and every id of `a` with every id of `b`. Each pair has `a < b`;
/// sorted.
fn expand_pairs(
    fingerprints: &[u64],
    ids: &[Vec<String>],
    fingerprint_pairs: &[FingerprintPair],
) -> Vec<DocumentPair> {
    let ids_of = |fp: u64| {
        &ids[fingerprints
            .binary_search(&fp)
            .expect("a pair's fingerprint")]
    };
    let mut pairs = Vec::new();
    let mut push = |x: &str, y: &str, distance| {
        let (a, b) = if x < y { (x, y) } else { (y, x) };
        pairs.push(DocumentPair {
            a: a.to_string(),
            b: b.to_string(),
            distance,
        });
    };
    for same in ids {
        for i in 0..same.len() {
            for j in i + 1..same.len() {
                push(&same[i], &same[j], 0);
            }
        }
    }
    for p in fingerprint_pairs {
        for x in ids_of(p.a) {
            for y in ids_of(p.b) {
                push(x, y, p.distance);
            }
        }
    }
    pairs.par_sort_unstable();
    pairs
}

/// The settings [`find_all`] uses for `distance` over `fingerprints` distinct fingerprints:
/// `blocks` when given, else the blocks [`Settings::for_size`] picks for that many; one shard.
pub fn find_all_settings(distance: u8, fingerprints: u64, blocks: Option<u8>) -> Result<Settings> {
    let settings = match blocks {
        Some(blocks) => Settings {
            blocks,
            distance,
            shards: 1,
        },
        None => Settings {
            shards: 1,
            ..Settings::for_size(distance, fingerprints.max(1))?
        },
    };
    settings.validate()?;
    Ok(settings)
}

/// Every pair of `documents` (id, fingerprint) within `distance` bits, as an audit lists them:
/// [`find_all`] on their distinct fingerprints with `blocks` (or those [`find_all_settings`]
/// picks), each pair of fingerprints expanded to the pairs of their ids, and the ids sharing a
/// fingerprint paired at distance 0 (so distance 0 lists exact duplicates). A later document
/// with the same id replaces an earlier one, as in a batch.
pub fn find_all_documents(
    documents: &[(String, u64)],
    distance: u8,
    blocks: Option<u8>,
    progress: impl Fn(u64) + Sync,
) -> Result<Vec<DocumentPair>> {
    let mut latest: HashMap<&str, u64> = HashMap::with_capacity(documents.len());
    for (id, fp) in documents {
        latest.insert(id, *fp);
    }
    let mut by_fingerprint: Vec<(u64, &str)> =
        latest.into_iter().map(|(id, fp)| (fp, id)).collect();
    by_fingerprint.par_sort_unstable();
    let mut fingerprints: Vec<u64> = Vec::new();
    let mut ids: Vec<Vec<String>> = Vec::new();
    for (fp, id) in by_fingerprint {
        if fingerprints.last() != Some(&fp) {
            fingerprints.push(fp);
            ids.push(Vec::new());
        }
        ids.last_mut().expect("pushed").push(id.to_string());
    }
    let fingerprint_pairs = if distance == 0 {
        Vec::new()
    } else {
        let settings = find_all_settings(distance, fingerprints.len() as u64, blocks)?;
        find_all(&fingerprints, &settings, progress)
    };
    Ok(expand_pairs(&fingerprints, &ids, &fingerprint_pairs))
}

/// Every pair of distinct fingerprints in `fingerprints` within `settings.distance` bits,
/// computed in memory with the permuted tables of `settings` (seomoz's `find_all`, without
/// its collapse of equal values: equal fingerprints are one value here too, as in seomoz).
/// Sorted by (a, b).
///
/// ```
/// use simhashdb::{find_all, Settings};
/// let settings = Settings { blocks: 6, distance: 3, shards: 1 };
/// let pairs = find_all(&[0b1111, 0b0111, 1 << 63], &settings, |_| {});
/// assert_eq!(pairs.len(), 1);
/// assert_eq!((pairs[0].a, pairs[0].b, pairs[0].distance), (0b0111, 0b1111, 1));
/// ```
pub fn find_all(
    fingerprints: &[u64],
    settings: &Settings,
    progress: impl Fn(u64) + Sync,
) -> Vec<FingerprintPair> {
    let perms = Permutations::new(settings);
    let distance = u32::from(settings.distance);
    let mut unique = fingerprints.to_vec();
    unique.par_sort_unstable();
    unique.dedup();
    let parts = Mutex::new(Vec::new());
    sorted_tables::for_each(&perms, &unique, |t, keys| {
        let mut out = Vec::new();
        close_pairs_in_sorted(&perms, t, keys, distance, &mut out);
        progress(1);
        parts.lock().expect("no visit panicked").push(out);
        Ok(())
    })
    .expect("the visits do not fail");
    let mut pairs: Vec<FingerprintPair> = parts
        .into_inner()
        .expect("no visit panicked")
        .into_iter()
        .flatten()
        .collect();
    pairs.par_sort_unstable();
    pairs
}

impl Snapshot {
    /// The number of steps [`Snapshot::fingerprint_pairs`] reports to its progress callback.
    pub fn audit_steps(&self, distance: u32) -> u64 {
        let needed = (0..self.permutations().tables().len())
            .filter(|&t| self.permutations().is_needed(t, distance))
            .count();
        (needed * RANGES) as u64
    }

    /// Every pair of distinct fingerprints in the tables within `distance` bits, sorted by
    /// (a, b). Fingerprints whose documents were all replaced are included (see
    /// [`Snapshot::audit`], which drops them). `progress(n)` is called as steps complete.
    pub fn fingerprint_pairs(
        &self,
        distance: u32,
        progress: impl Fn(u64) + Sync,
    ) -> Result<Vec<FingerprintPair>> {
        self.check_distance(distance)?;
        let perms = self.permutations();
        let tasks: Vec<(usize, usize)> = (0..perms.tables().len())
            .filter(|&t| perms.is_needed(t, distance))
            .flat_map(|t| (0..RANGES).map(move |r| (t, r)))
            .collect();
        let parts: Vec<Vec<FingerprintPair>> = tasks
            .par_iter()
            .map(|&(t, r)| {
                let lo = (r as u64) << 56;
                let hi = lo | (u64::MAX >> 8);
                let shard = perms.shard_of(lo);
                let mut keys = Vec::new();
                for run in self.runs() {
                    if let Some(file) = run.shard(shard)? {
                        file.probe(t, lo, hi, |k| keys.push(k))?;
                    }
                }
                if self.runs().len() > 1 {
                    keys.sort_unstable(); // a fingerprint is in one run's tables only
                }
                let mut out = Vec::new();
                close_pairs_in_sorted(perms, t, &keys, distance, &mut out);
                progress(1);
                Ok(out)
            })
            .collect::<Result<_>>()?;
        let mut pairs: Vec<FingerprintPair> = parts.into_iter().flatten().collect();
        pairs.par_sort_unstable();
        Ok(pairs)
    }

    /// Every pair of live documents within `distance` bits, each once with `a < b`, sorted;
    /// documents sharing a fingerprint pair with each other at distance 0.
    pub fn audit(&self, distance: u32, progress: impl Fn(u64) + Sync) -> Result<Vec<DocumentPair>> {
        guard_redb(self.dir(), || self.audit_unguarded(distance, progress))
    }

    fn audit_unguarded(
        &self,
        distance: u32,
        progress: impl Fn(u64) + Sync,
    ) -> Result<Vec<DocumentPair>> {
        let fingerprint_pairs = self.fingerprint_pairs(distance, progress)?;
        // The fingerprints whose ids are needed: those in a pair, and those with two or more
        // postings (possibly several live ids).
        let mut wanted: Vec<u64> = fingerprint_pairs.iter().flat_map(|p| [p.a, p.b]).collect();
        wanted.extend(self.shared_fingerprints()?);
        wanted.par_sort_unstable();
        wanted.dedup();
        let ids: Vec<Vec<String>> = wanted
            .par_iter()
            .map(|&fp| {
                let mut ids = Vec::new();
                self.live_ids(fp, |id| ids.push(id.to_string()))?;
                Ok(ids)
            })
            .collect::<Result<_>>()?;
        Ok(expand_pairs(&wanted, &ids, &fingerprint_pairs))
    }

    /// Fingerprints listed by two or more postings across the live runs, ascending.
    fn shared_fingerprints(&self) -> Result<Vec<u64>> {
        let mut all: Vec<u64> = Vec::new();
        for run in self.runs() {
            run.docs()?.for_each_posting(|fp| all.push(fp))?;
        }
        if self.runs().len() > 1 {
            all.par_sort_unstable();
        }
        let mut shared = Vec::new();
        for w in all.windows(2) {
            if w[0] == w[1] && shared.last() != Some(&w[0]) {
                shared.push(w[0]);
            }
        }
        Ok(shared)
    }

    /// The clusters of `pairs` ([`clusters`]), and with `singletons` every other live document
    /// as a cluster of one: every cluster's members sorted, clusters ordered by their first.
    pub fn clusters_with_singletons(
        &self,
        pairs: &[DocumentPair],
        singletons: bool,
    ) -> Result<Vec<Vec<String>>> {
        let mut groups = clusters(pairs);
        if singletons {
            let mut members: Vec<&str> = groups.iter().flatten().map(String::as_str).collect();
            members.sort_unstable();
            let mut alone = Vec::new();
            self.for_each_live_document(|id, _, _| {
                if members.binary_search(&id).is_err() {
                    alone.push(vec![id.to_string()]);
                }
            })?;
            groups.extend(alone);
            groups.sort_unstable();
        }
        Ok(groups)
    }
}

/// The connected components of the graph the pairs draw, each with at least two members:
/// members sorted, clusters ordered by their first member.
pub fn clusters(pairs: &[DocumentPair]) -> Vec<Vec<String>> {
    components(pairs.iter().map(|p| (p.a.as_str(), p.b.as_str())))
        .into_iter()
        .map(|c| c.into_iter().map(str::to_string).collect())
        .collect()
}

/// [`clusters`] of fingerprint pairs: the groups of fingerprints the pairs connect.
pub fn fingerprint_clusters(pairs: &[FingerprintPair]) -> Vec<Vec<u64>> {
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
