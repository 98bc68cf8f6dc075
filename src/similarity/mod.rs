//! Similarity without a store: text to fingerprints ([`fingerprint`]), every pair within K bits
//! of a list ([`find_all`]) and the clusters pairs form ([`clusters`]: the crate's one
//! union-find), exact Jaccard of word shingles ([`jaccard`]) and the exact similarity join
//! `tune` scores against ([`similarity_join`]). find_all cut into pieces that run on a
//! cluster is a wing of its own, above this one (`crate::partitioned`, feature `partitioned`).
//!
//! Depends on [`crate::tables`] and [`crate::format`] (the settings of the permuted tables).

pub(crate) mod clusters;
pub(crate) mod find_all;
pub(crate) mod fingerprint;
pub(crate) mod jaccard;
pub(crate) mod similarity_join;
pub(crate) mod sketch;
