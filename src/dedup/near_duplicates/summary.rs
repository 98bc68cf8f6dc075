//! What an audit found, in numbers: [`AuditSummary`], and the pairs by distance.

use super::NearDuplicates;

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
}
