//! Near duplicates over a whole store: every pair of stored documents within D bits and the
//! clusters they form ([`audit`]).
//!
//! Depends on [`crate::read`], [`crate::similarity`] and below.

pub(crate) mod audit;
