//! Runs: the immutable files one batch (or one compaction) writes, and the one place that
//! reads and merges them.
//!
//! A run holds a docs file (tables "docs", "postings" and, with sketches, "sketches": entry
//! blocks; from format 6 "ids", the id filter: key blocks; from format 10, with sketches,
//! "sketch_area": the sketches, raw) and shard files
//! (tables "t000".."tNNN": key blocks of the permuted keys whose leading log2(S) bits fall in
//! the file's shards); [`crate::format::layout`] names them. Every table maps a block's last key to the
//! block (see [`crate::format::block`]). A run is never modified after it is written, so readers need
//! no locks, and a file a reader has opened stays readable even after a compaction deletes it.
//!
//! - [`write`]: writing a new run's files, each through a [`run_file::RunFile`];
//! - [`read`]: [`RunReader`], a committed run's files opened on first use;
//! - [`scan`]: block-at-a-time scans of a table, for merges and `verify`;
//! - [`merge`]: the k-way merge of runs behind compaction;
//! - [`salvage`]: what is intact in a damaged run, for repair;
//! - [`reformat`]: a committed run rewritten in the next format version, for migrate.

pub(crate) mod merge;
pub(crate) mod pin;
pub(crate) mod pinned;
pub(crate) mod read;
pub(crate) mod reformat;
pub(crate) mod run_file;
pub(crate) mod salvage;
pub(crate) mod scan;
pub(crate) mod write;

use redb::TableDefinition;

use crate::format::block::docs::DocState;

pub(crate) use read::{FileCaches, RunReader};
pub(crate) use scan::{EntryScan, KeyScan, NamedScan};
pub(crate) use write::write_run;

/// The redb table of a docs file that maps ids to their state.
pub(crate) const DOCS_TABLE: &str = "docs";
/// The redb table of a docs file that lists the ids of each fingerprint.
pub(crate) const POSTINGS_TABLE: &str = "postings";
pub(crate) const DOCS: TableDefinition<&[u8], &[u8]> = TableDefinition::new(DOCS_TABLE);
pub(crate) const POSTINGS: TableDefinition<&[u8], &[u8]> = TableDefinition::new(POSTINGS_TABLE);
/// The redb table of a docs file that holds the documents' sketches (format 4; absent when the
/// run holds none).
pub(crate) const SKETCHES_TABLE: &str = "sketches";
pub(crate) const SKETCHES: TableDefinition<&[u8], &[u8]> = TableDefinition::new(SKETCHES_TABLE);

/// The redb table of a docs file that holds its sketch area (format 10, a run with
/// sketches; see [`crate::format::block::sketch_area`]).
pub(crate) const SKETCH_AREA_TABLE: &str = "sketch_area";
pub(crate) const SKETCH_AREA: TableDefinition<&[u8], &[u8]> =
    TableDefinition::new(SKETCH_AREA_TABLE);

/// The redb key table of a docs file that holds the run's id filter (format 6; see
/// [`crate::format::block::id_filter`]).
pub(crate) const IDS: &str = "ids";

/// The redb table name of permuted table `t`.
pub(crate) fn table_name(t: usize) -> String {
    format!("t{t:03}")
}

/// What a new run holds. Documents are ordered by `(id_hash(id), id)`, postings
/// `(fingerprint, id, batch)` by `(fingerprint, id)`, and `fingerprints` ascending; none
/// repeats. `sketches` is empty, or holds each posting's sketch (if it has one) in the
/// postings' order.
pub(crate) struct RunContents<'a> {
    pub(crate) documents: &'a [(u64, &'a str, DocState)],
    pub(crate) postings: &'a [(u64, &'a str, u64)],
    pub(crate) sketches: &'a [Option<&'a [u8]>],
    pub(crate) fingerprints: &'a [u64],
}
