//! Reading a store: one consistent committed state ([`snapshot`]), a long-lived reader that
//! follows commits and may hold tables in memory ([`reader`]), and what a store holds and
//! costs ([`stats`]), counted on disk by [`disk_usage`]; what killed writers left behind
//! ([`debris`]).
//!
//! Depends on [`crate::run`], [`crate::tables`], [`crate::format`], [`crate::sys`].

pub(crate) mod catalog_view;
pub(crate) mod debris;
pub(crate) mod disk_usage;
pub(crate) mod reader;
pub(crate) mod snapshot;
pub(crate) mod stats;
