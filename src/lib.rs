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
//! - Each batch adds a run (a batch larger than [`insertion::DEFAULT_RUN_DOCUMENTS`] adds one
//!   per that many documents, see [`Insertion`]) and queries probe every run; inserts merge the
//!   newest runs past the store's `max_runs` (see [`compaction`]), and `Store::compact` merges
//!   them all.

pub mod audit;
pub mod batch;
pub mod block;
pub mod catalog;
pub mod compaction;
pub mod error;
mod fault;
pub mod fingerprint;
pub mod input;
pub mod insertion;
pub mod jaccard;
pub mod lock;
mod merge;
pub mod migrate;
pub mod permutation;
mod radix;
pub mod run;
pub mod settings;
pub mod snapshot;
mod sorted_tables;
pub mod stats;
pub mod store;
pub mod verify;

pub use batch::{Batch, DocumentSink};
pub use error::{Error, Result};
pub use input::{format_fingerprint, parse_fingerprint, InputFormat};
pub use insertion::{InsertSummary, Insertion};
pub use settings::Settings;
pub use snapshot::{Match, Snapshot, DEFAULT_CACHE_BYTES};
pub use stats::Stats;
pub use store::Store;
