//! Keeping a store healthy: checking every block and invariant ([`verify`]), rebuilding
//! damaged runs from the copies each run keeps ([`repair`]), and upgrading older formats
//! ([`migrate`]).
//!
//! Depends on [`crate::write`], [`crate::read`] and below.

#[cfg(test)]
mod fault_tests;
mod lost_ranges;
pub(crate) mod migrate;
pub(crate) mod repair;
pub(crate) mod verify;
