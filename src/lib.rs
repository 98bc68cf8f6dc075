//! simhashdb: a persistent, on-disk database of 64-bit simhash fingerprints that finds every
//! stored fingerprint within k bits of a query.
//!
//! It implements the permuted tables of Manku, Jain and Das Sarma (WWW 2007): fingerprints are
//! split into m blocks, and C(m, K) tables each keep the fingerprints sorted with a different
//! choice of m-K blocks leading, so a query within K bits scans only the keys that share its
//! leading blocks in each table. Here each table is a set of sorted, checksummed blocks in
//! redb files, written one immutable run per batch (see docs/design.md).
//!
//! ```
//! # let dir = tempfile::tempdir().unwrap();
//! # let path = dir.path().join("store");
//! use simhashdb::{Batch, Settings, Snapshot, Store};
//!
//! let mut store = Store::create(&path, Settings::default())?; // m = 5, K = 3
//! let mut batch = Batch::new();
//! batch.push("a", 0x0123_4567_89ab_cdef)?;
//! batch.push("b", 0x0123_4567_89ab_cdee)?; // 1 bit from "a"
//! batch.push("c", 0xfedc_ba98_7654_3210)?;
//! let summary = store.insert(&batch, None)?;
//! assert_eq!(summary.inserted, 3);
//!
//! let snapshot = Snapshot::open(&path)?;
//! let ids: Vec<String> = snapshot
//!     .query(0x0123_4567_89ab_cdef, 3)?
//!     .into_iter()
//!     .map(|m| m.id)
//!     .collect();
//! assert_eq!(ids, ["a", "b"]);
//! # Ok::<(), simhashdb::Error>(())
//! ```
//!
//! # Invariants
//! 1. The catalog names every live run; files of runs it does not name are never read.
//! 2. A fingerprint is in the permuted tables of at most one live run, and in every table of
//!    that run.
//! 3. An id's current state is what the newest live run that mentions it says.
//! 4. Every block's CRC-32 is checked before it is decoded.
//!
//! # Quirks and limits
//! - A fingerprint whose last id was replaced or deleted stays in the tables (it matches
//!   nothing) until a compaction that includes its run drops it.
//! - Each batch adds a run (a batch larger than [`Insertion::DEFAULT_RUN_DOCUMENTS`] adds one
//!   per that many documents, see [`Insertion`]) and queries probe every run. After each
//!   insert the library merges runs as the store's [`CompactionPolicy`] asks
//!   ([`Insertion::commit`]; [`Insertion::compact_after`] leaves that to
//!   [`Store::compact_if_due`]), and [`Store::compact`] merges them all.
//!
//! # The API
//! Every item is listed in tests/public_api.rs (the opt-in features' apart); methods, fields
//! and associated constants belong to their type.
//! - Operations, one call each with an options struct and a serde answer, for every client:
//!   [`Store::insert_from`] / [`Database::insert_from`] ([`InsertOptions`]) and
//!   [`Store::dedup_from`] / [`Database::dedup_from`] ([`DedupOptions`], a [`DedupSummary`]
//!   with each document's [`Verdict`]) read a [`Source`]; [`Snapshot::near_duplicates`]
//!   verifies as a [`Verification`] says; every file a command writes appears whole or not at all ([`OutputFile`]).
//! - Writing: [`Store`] (create, open, [`Store::insert`], [`Store::begin_insert`] for batches
//!   of any size ([`Insertion`]), [`Store::delete`], [`Store::expire`], [`Store::compact`],
//!   [`Store::repair`], [`Store::verify`], [`Store::migrate`]), fed by a [`Batch`] or a
//!   [`Source`] ([`Store::insert_from`]).
//! - Dry runs: every write that can be previewed has a `preview_*` method on [`Snapshot`]
//!   ([`Snapshot::preview_delete`], [`Snapshot::preview_expire`],
//!   [`Snapshot::preview_compaction`]): it reads one state, takes no lock and changes no byte.
//! - One handle for a long-running process: [`Database`] (reads from any thread, one write
//!   at a time, commits visible when a write returns, merges by the store's policy inline or
//!   in the background); the server and the Python package are thin over it.
//! - Reading: [`Snapshot`] (opened with the cache [`OpenOptions`] choose; [`Snapshot::query`],
//!   [`Snapshot::query_many`] of [`Query`] values, verified when asked, each answer a
//!   [`Match`]; [`Snapshot::text_query`], [`Snapshot::get`], [`Snapshot::batches`]), [`Stats`].
//! - Near duplicates at any skew: [`NearDuplicates`] of a store
//!   ([`Snapshot::near_duplicates`]) or of loose documents ([`NearDuplicates::of_documents`]):
//!   pairs handed out one at a time, [`Cluster`]s, the keep rule's drops
//!   ([`NearDuplicates::for_each_duplicate`]: `dedup`'s greedy, each a [`Duplicate`]), an
//!   [`AuditSummary`]; pairs verified against a corpus's text or the store's sketches, as a
//!   [`Verification`] says.
//! - Dedup on ingest: [`Snapshot::dedup_from`] keeps the documents of a new input that no
//!   stored document and no earlier kept one is near ([`Verdict`]s, a [`DedupSummary`]);
//!   [`Store::dedup_from`] inserts them in the same write; [`Store::dedup_files`] streams files
//!   through, the kept records written unchanged.
//! - Without a store: [`find_all`], [`Scheme`] (text to fingerprints); [`tune`] picks a
//!   scheme and distance for a corpus.
//! - Opt-in features, each a module of its own: `partitioned` (`simhashdb::partitioned`
//!   cuts find_all into pieces a cluster runs: the protocol of the Spark jobs) and `seomoz`
//!   (`simhashdb::seomoz`: simhash-py's functions, bit for bit).
//! - Input as users write it: a [`Source`] (files, directories, stdin, bytes in memory) read
//!   into a [`Batch`] (or as queries, [`Source::queries`], or ids, [`Source::ids`]),
//!   the one fingerprint parser ([`FingerprintFormat`]), one
//!   format detector ([`InputFormat::detect`]).
//! - Parquet (feature `parquet`, on by default): inputs above read it; [`parquet`] writes the
//!   tables simhashdb writes (documents, pairs, clusters).
//! - Output: every result a client prints is a library value whose serde form is the JSON
//!   every client answers with (fingerprints as 16 hex digits), so the CLI, the HTTP API and
//!   Python cannot drift apart.
//! - Progress: long operations tell a [`Progress`] (a closure of the steps done, or `&()`).
//! - Errors: [`Error`], whose variants say what to do; damaged bytes are a
//!   [`Error::Corruption`] naming the file, table and block. [`Error::kind`] is what the
//!   caller can do about one, and [`ErrorKind`]'s one table gives the CLI's exit code, the
//!   HTTP status and the Python exception for it.

#![deny(missing_docs)]
// The library reports; only its clients print.
#![deny(clippy::print_stdout, clippy::print_stderr)]

mod database;
mod dedup;
mod error;
mod format;
mod io;
mod maintenance;
mod operations;
#[cfg(feature = "partitioned")]
pub mod partitioned;
mod read;
mod run;
mod similarity;
mod sys;
mod tables;
pub mod tune;
mod write;

#[cfg(feature = "parquet")]
pub use io::parquet;
#[cfg(feature = "seomoz")]
pub use similarity::fingerprint::seomoz;

pub use database::{Database, DatabaseOptions, Event};
pub use dedup::ingest::{DedupSummary, Verdict};
pub use dedup::near_duplicates::{AuditSummary, Cluster, Duplicate, NearDuplicates, PairCursor};
pub use dedup::options::DedupOptions;
pub use error::{Error, ErrorKind, Result, Setting};
pub use format::catalog::BatchInfo;
pub use format::settings::{CompactionPolicy, Settings};
pub use io::document::{InputFormat, ReadOptions};
pub use io::input::Query;
pub use io::notation::FingerprintFormat;
pub use io::output_file::OutputFile;
pub use io::rejects::{MaxSkipped, Rejects};
pub use io::source::Source;
pub use maintenance::repair::{RepairReport, RunRepair};
pub use maintenance::verify::{Finding, Report};
pub use operations::audit::Verification;
pub use read::debris::Debris;
pub use read::reader::ReaderStats;
pub use read::snapshot::{Document, Match, OpenOptions, Snapshot};
pub use read::stats::{Stats, TableStats};
pub use similarity::find_all::{find_all, Pair};
pub use similarity::fingerprint::Scheme;
pub use sys::progress::Progress;
pub use write::batch::{Batch, ReadSummary};
pub use write::compaction::{CompactSummary, CompactionPreview};
pub use write::deletion::{DeleteSummary, ExpireSelector};
pub use write::insertion::{InsertOptions, InsertSummary, Insertion};
pub use write::store::{CreateOptions, Store};

/// Internals that the benchmarks measure on their own (the key block codec). Not part of the
/// API: it may change in any release.
#[cfg(feature = "internals")]
#[doc(hidden)]
pub mod internals {
    pub use crate::format::block::keys::{encode as encode_key_blocks, KeyBlock, KeyCodec};
}
