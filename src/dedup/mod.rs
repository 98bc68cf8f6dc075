//! Near duplicates over a whole store: every pair of stored documents within D bits and the
//! clusters they form ([`audit`]), and those pairs verified against the documents' text
//! ([`verified`]).
//!
//! Depends on [`crate::read`], [`crate::similarity`] and below.

pub(crate) mod audit;
pub(crate) mod verified;
