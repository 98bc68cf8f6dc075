//! Audit: every pair of stored documents within D bits, and the clusters they form.
//!
//! The permuted tables are already sorted, so the audit streams them: for each needed table
//! and each of 256 key ranges (the keys' leading byte; every table's prefix is at least 8 bits,
//! so a range never splits a prefix group), it merges the runs' keys, and compares the keys
//! within each group sharing the table's leading blocks. A pair is kept only by the first table
//! whose leading blocks both share, so every pair comes out once with no global set (see
//! [`crate::similarity::find_all`]).
//!
//! Memory: one range's keys per thread, the fingerprint pairs found, and for documents the
//! fingerprints of every posting (to find fingerprints stored under several ids).

use rayon::prelude::*;

use crate::error::{guard_redb, Result};
use crate::read::snapshot::Snapshot;
use crate::similarity::clusters::clusters;
use crate::similarity::find_all::{
    close_pairs_in_sorted, expand_pairs, DocumentPair, FingerprintPair,
};
use crate::sys::progress::{Phase, Progress};

/// Key ranges per table that audit tasks split the work into: one per leading byte.
const RANGES: usize = 256;

impl Snapshot {
    /// The number of steps [`Snapshot::fingerprint_pairs`] reports to its progress.
    fn audit_steps(&self, distance: u32) -> u64 {
        let needed = (0..self.permutations().tables().len())
            .filter(|&t| self.permutations().is_needed(t, distance))
            .count();
        (needed * RANGES) as u64
    }

    /// Every pair of distinct fingerprints in the tables within `distance` bits, sorted by
    /// (a, b). Fingerprints whose documents were all replaced are included (see
    /// [`Snapshot::audit`], which drops them). `progress` is told of a phase "audit" and its
    /// steps as they complete.
    pub fn fingerprint_pairs(
        &self,
        distance: u32,
        progress: &dyn Progress,
    ) -> Result<Vec<FingerprintPair>> {
        self.check_distance(distance)?;
        let _phase = Phase::start(progress, "audit", self.audit_steps(distance));
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
                progress.advance(1);
                Ok(out)
            })
            .collect::<Result<_>>()?;
        let mut pairs: Vec<FingerprintPair> = parts.into_iter().flatten().collect();
        pairs.par_sort_unstable();
        Ok(pairs)
    }

    /// Every pair of live documents within `distance` bits, each once with `a < b`, sorted;
    /// documents sharing a fingerprint pair with each other at distance 0.
    pub fn audit(&self, distance: u32, progress: &dyn Progress) -> Result<Vec<DocumentPair>> {
        guard_redb(self.dir(), || self.audit_unguarded(distance, progress))
    }

    fn audit_unguarded(&self, distance: u32, progress: &dyn Progress) -> Result<Vec<DocumentPair>> {
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
