//! Every operation a client runs, as one call with an options struct and a serde answer, on
//! the handle the client holds ([`Store`](crate::Store) for one-shot use,
//! [`Database`](crate::Database) for a long-running process): insert from a source, dedup
//! from a source, queries (many at once, fingerprints or texts, verified when asked), the audit
//! with its verification. The CLI, the server and the Python
//! package map their arguments onto these and call nothing below them, so a default or a rule
//! exists once.
//!
//! Depends on [`crate::database`], [`crate::dedup`], [`crate::io`] (where a [`crate::Source`]
//! is read), [`crate::write`], [`crate::read`] and below.

pub(crate) mod audit;
pub(crate) mod dedup;
pub(crate) mod insert;
pub(crate) mod query;
