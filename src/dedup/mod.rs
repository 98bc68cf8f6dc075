//! Near duplicates over a whole store or a list of documents: the fingerprint pairs from the
//! permuted tables ([`audit`]), and what they mean for documents at any skew: pairs handed out
//! one at a time, clusters, the documents a dedup keeps and drops, verification against the
//! texts ([`near_duplicates`]).
//!
//! Depends on [`crate::io`], [`crate::write`], [`crate::read`], [`crate::similarity`] and below.

pub(crate) mod audit;
mod duplicate_list;
pub(crate) mod files;
pub(crate) mod ingest;
mod kept;
pub(crate) mod near_duplicates;
pub(crate) mod options;
mod output;
#[cfg(feature = "plot")]
mod report;
