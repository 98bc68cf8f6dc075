//! Reading a store: one consistent committed state ([`snapshot`]), a long-lived reader that
//! follows commits and may hold tables in memory ([`reader`]), and what a store holds and
//! costs ([`stats`]).
//!
//! Depends on [`crate::run`], [`crate::tables`], [`crate::format`], [`crate::sys`].

pub(crate) mod reader;
pub(crate) mod snapshot;
pub(crate) mod stats;
