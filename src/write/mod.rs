//! Writing a store: the writer handle ([`store`]) and the batches it takes ([`batch`]); an
//! insert ([`insertion`]) and its [`tally`], deletes and expiry ([`deletion`]), the merge of runs
//! ([`compaction`]) under a pure merge policy ([`policy`]), all committed by [`commit`].
//!
//! Depends on [`crate::read`] (a write reads the committed state it changes) and below.

pub(crate) mod batch;
pub(crate) mod commit;
pub(crate) mod compaction;
pub(crate) mod deletion;
pub(crate) mod insertion;
pub(crate) mod policy;
#[cfg(test)]
mod scan_tests;
pub(crate) mod store;
mod tally;
