//! The operations that read a client's input or combine steps, as one call with an options
//! struct and a serde answer, on the handle the client holds ([`Store`](crate::Store) for
//! one-shot use, [`Database`](crate::Database) for a long-running process): insert from a
//! source, dedup from a source (and a `Database`'s dedup of files), queries (many at once,
//! fingerprints or texts, verified when asked), the audit with its verification. The
//! operations of one step live with their wing and are called as they are: delete and expire
//! (write/deletion.rs), compact (write/compaction.rs), verify, repair and migrate
//! (maintenance/), stats (read/stats.rs), a dedup of files (dedup/files.rs).
//!
//! Depends on [`crate::database`], [`crate::dedup`], [`crate::io`] (where a [`crate::Source`]
//! is read), [`crate::write`], [`crate::read`] and below.

pub(crate) mod audit;
pub(crate) mod dedup;
pub(crate) mod insert;
pub(crate) mod query;
