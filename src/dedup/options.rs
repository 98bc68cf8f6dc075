//! How a dedup compares, what it writes and whether it inserts: one options value for a dedup
//! of a source ([`crate::Store::dedup_from`]) and of files ([`crate::Store::dedup_files`]).

use std::path::PathBuf;

use crate::error::{Error, Result};
use crate::write::insertion::InsertOptions;

/// How a dedup compares, what it writes and whether it inserts what it keeps.
#[derive(Clone, Debug, Default)]
pub struct DedupOptions {
    /// The distance as the user gave it, checked by [`crate::Snapshot::distance`]; None is
    /// the store's K.
    pub distance: Option<i64>,
    /// With sketches (a store made with `init --sketch`): a match makes a duplicate only when
    /// the sketches of the document and of the match estimate at least this word 3-shingle
    /// Jaccard similarity. A match where either side has no sketch is taken unverified (as
    /// the fingerprints alone would decide), and its verdict says so. The documents' sketches
    /// are those the source gives (text read for a store with sketches has them).
    pub min_jaccard: Option<f64>,
    /// Inserts the kept documents as one batch in the same write, as these options say;
    /// None only reads the store. Only a [`crate::Store`] or a [`crate::Database`] inserts.
    pub insert: Option<InsertOptions>,
    /// A dedup of files: where the kept records go: the input lines as read (TSV, JSON
    /// Lines), the rows with every column (Parquet: needs a file), or the ids (text files).
    /// None or `-`: the `stdout` writer given.
    pub output: Option<PathBuf>,
    /// A dedup of files: where the dropped documents go, one line
    /// `ID<TAB>DUPLICATE_OF<TAB>DISTANCE` each (and with `min_jaccard` a fourth column: the
    /// estimated Jaccard, or `unverified`), then the match's `BATCH<TAB>LABEL<TAB>COMMITTED`
    /// ([`crate::Verdict::duplicate_batch`] and the two after it; empty for a match of the
    /// input); `-`: the `stdout` writer given. None: not written.
    pub duplicates: Option<PathBuf>,
}

impl DedupOptions {
    /// Refuses an insert where only a read can run (a [`crate::Snapshot`] is one state).
    pub(crate) fn check_reads_only(&self) -> Result<()> {
        match self.insert {
            Some(_) => Err(Error::input(
                "a snapshot only reads: dedup through a Store or a Database to insert the kept \
                 documents",
            )),
            None => Ok(()),
        }
    }

    /// Refuses outputs where the answer holds the verdicts (a dedup of a source).
    pub(crate) fn check_no_files(&self) -> Result<()> {
        match (&self.output, &self.duplicates) {
            (None, None) => Ok(()),
            _ => Err(Error::input(
                "output and duplicates are a dedup of files' (dedup_files); a dedup of a source \
                 answers with its verdicts",
            )),
        }
    }
}
