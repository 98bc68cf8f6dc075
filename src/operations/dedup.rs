//! Dedup from a source: the one recipe every client's dedup runs, with or without the insert.

use crate::database::Database;
use crate::dedup::ingest::{Dedup, DedupSummary, Verdict};
use crate::error::Result;
use crate::io::document::ReadOptions;
use crate::io::source::Source;
use crate::read::snapshot::Snapshot;
use crate::sys::progress::Progress;
use crate::write::batch::{Batch, ReadSummary};
use crate::write::insertion::InsertOptions;
use crate::write::store::Store;

/// How a dedup compares, and whether it inserts what it keeps.
#[derive(Clone, Debug, Default)]
pub struct DedupOptions {
    /// The distance as the user gave it, checked by [`Snapshot::distance`]; None is the
    /// store's K.
    pub distance: Option<i64>,
    /// With sketches (a store made with `init --sketch`): a match makes a duplicate only when
    /// the sketches of the document and of the match estimate at least this word 3-shingle
    /// Jaccard similarity. A match where either side has no sketch is taken unverified (as
    /// the fingerprints alone would decide), and its verdict says so. The documents' sketches
    /// are those the source gives (text read for a store with sketches has them).
    pub min_jaccard: Option<f64>,
    /// Inserts the kept documents as one batch in the same write, as these options say;
    /// None only reads the store.
    pub insert: Option<InsertOptions>,
}

/// A dedup's answer: the counts, and each document's verdict in input order. Its JSON is the
/// summary's fields with `results` beside them.
#[derive(Clone, Debug, serde::Serialize)]
#[non_exhaustive]
pub struct Deduplicated {
    /// The counts, with what reading the input skipped and warned of.
    #[serde(flatten)]
    pub summary: DedupSummary,
    /// One verdict per document read, in input order.
    pub results: Vec<Verdict>,
}

impl Deduplicated {
    fn of(verdicts: Vec<Verdict>, mut summary: DedupSummary, read: ReadSummary) -> Self {
        summary.skipped = read.skipped;
        summary.skipped_files = read.skipped_files;
        summary.first_skipped = read.first_skipped;
        summary.warnings = read.warnings;
        Deduplicated {
            summary,
            results: verdicts,
        }
    }
}

/// The documents of `source`, text fingerprinted with the store's scheme.
fn read_all(
    source: Source<'_>,
    snapshot: &Snapshot,
    read: &ReadOptions,
    progress: &dyn Progress,
) -> Result<(Batch, ReadSummary)> {
    let read = read.with_store_scheme(snapshot.text_scheme(), snapshot.dir());
    let mut batch = Batch::new();
    let summary = source.read(&read, &mut batch, progress)?;
    Ok((batch, summary))
}

impl Snapshot {
    /// Dedups the documents of `source` against this state of the store and each other,
    /// greedily in input order (see [`Verdict`]); nothing is inserted (`options.insert` is
    /// [`Store::dedup_from`]'s).
    pub fn dedup_from(
        &self,
        source: Source<'_>,
        options: &DedupOptions,
        read: &ReadOptions,
        progress: &dyn Progress,
    ) -> Result<Deduplicated> {
        let distance = self.distance(options.distance)?;
        let (batch, read) = read_all(source, self, read, progress)?;
        let mut dedup = Dedup::new(self, distance, options.min_jaccard)?;
        let verdicts = dedup.decide(&batch)?;
        Ok(Deduplicated::of(verdicts, dedup.summary(), read))
    }
}

impl Store {
    /// Dedups the documents of `source` against the store and each other, and with
    /// `options.insert` inserts the kept ones as one batch atomically with the check (this
    /// handle's writer lock keeps every other writer out). Nothing kept, nothing inserted.
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let path = dir.path().join("store");
    /// use simhashdb::{DedupOptions, InsertOptions, ReadOptions, Settings, Source, Store};
    ///
    /// let mut store = Store::create(&path, Settings::default())?;
    /// let options = DedupOptions { insert: Some(InsertOptions::default()), ..DedupOptions::default() };
    /// let body = b"a\t0123456789abcdef\nb\t0123456789abcdee\n"; // b is 1 bit from a
    /// let source = Source::Bytes { bytes: body, name: "body" };
    /// let answer = store.dedup_from(source, &options, &ReadOptions::default(), &())?;
    /// assert_eq!((answer.summary.kept, answer.summary.inserted), (1, 1));
    /// assert_eq!(answer.results[1].duplicate_of.as_deref(), Some("a"));
    /// # Ok::<(), simhashdb::Error>(())
    /// ```
    pub fn dedup_from(
        &mut self,
        source: Source<'_>,
        options: &DedupOptions,
        read: &ReadOptions,
        progress: &dyn Progress,
    ) -> Result<Deduplicated> {
        let Some(insert) = &options.insert else {
            return self.snapshot()?.dedup_from(source, options, read, progress);
        };
        insert.check()?;
        let snapshot = self.snapshot()?;
        let distance = snapshot.distance(options.distance)?;
        let (batch, read) = read_all(source, &snapshot, read, progress)?;
        drop(snapshot);
        let (verdicts, summary) =
            self.dedup_and_insert(&batch, distance, options.min_jaccard, insert)?;
        Ok(Deduplicated::of(verdicts, summary, read))
    }
}

impl Database {
    /// [`Store::dedup_from`] as one write of this handle when it inserts; on the current
    /// state, with no lock, when it only reads.
    pub fn dedup_from(
        &self,
        source: Source<'_>,
        options: &DedupOptions,
        read: &ReadOptions,
    ) -> Result<Deduplicated> {
        match &options.insert {
            Some(insert) => {
                insert.check()?;
                self.write(|store| store.dedup_from(source, options, read, &()))
            }
            None => self.snapshot()?.dedup_from(source, options, read, &()),
        }
    }
}
