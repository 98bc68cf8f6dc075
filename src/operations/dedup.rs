//! Dedup from a source, and the handle's dedup of files: the one recipe every client's dedup
//! runs, with or without the insert.

use std::io::Write;
use std::path::PathBuf;

use crate::database::Database;
use crate::dedup::ingest::{Dedup, DedupSummary, Verdict};
use crate::dedup::options::DedupOptions;
use crate::error::Result;
use crate::io::document::ReadOptions;
use crate::io::source::Source;
use crate::read::snapshot::Snapshot;
use crate::sys::progress::Progress;
use crate::write::batch::{Batch, ReadSummary};
use crate::write::store::Store;

/// A dedup's answer: its counts, with what reading the input skipped and warned of, and
/// each document's verdict.
fn answer(verdicts: Vec<Verdict>, mut summary: DedupSummary, read: ReadSummary) -> DedupSummary {
    summary.record_read(read);
    summary.results = Some(verdicts);
    summary
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
    /// greedily in input order (see [`Verdict`]); nothing is inserted (an `options.insert` is
    /// refused: [`Store::dedup_from`] inserts).
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let path = dir.path().join("store");
    /// use simhashdb::{Batch, DedupOptions, ReadOptions, Settings, Snapshot, Source, Store};
    ///
    /// let mut store = Store::create(&path, Settings::default())?;
    /// let mut stored = Batch::new();
    /// stored.push("a", 0x0123_4567_89ab_cdef)?;
    /// store.insert(&stored, None)?;
    /// let mut day = Batch::new();
    /// day.push("b", 0x0123_4567_89ab_cdee)?; // 1 bit from the stored a
    /// day.push("c", 0xfedc_ba98_7654_3210)?; // new
    /// day.push("d", 0xfedc_ba98_7654_3211)?; // 1 bit from c, kept before it
    /// let snapshot = Snapshot::open(&path)?;
    /// let options = DedupOptions::default(); // the store's K
    /// let answer = snapshot.dedup_from(Source::Documents(day), &options, &ReadOptions::default(), &())?;
    /// let kept: Vec<bool> = answer.results.unwrap().iter().map(|v| v.kept).collect();
    /// assert_eq!(kept, [false, true, false]);
    /// assert_eq!((answer.duplicates_of_stored, answer.duplicates_within_input), (1, 1));
    /// # Ok::<(), simhashdb::Error>(())
    /// ```
    pub fn dedup_from(
        &self,
        source: Source<'_>,
        options: &DedupOptions,
        read: &ReadOptions,
        progress: &dyn Progress,
    ) -> Result<DedupSummary> {
        options.check_reads_only()?;
        options.check_no_files()?;
        let distance = self.distance(options.distance)?;
        let (batch, read) = read_all(source, self, read, progress)?;
        let mut dedup = Dedup::new(self, distance, options.min_jaccard)?;
        let verdicts = dedup.decide(&batch)?;
        Ok(answer(verdicts, dedup.summary(), read))
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
    /// assert_eq!((answer.kept, answer.inserted), (1, 1));
    /// let verdicts = answer.results.unwrap(); // one per document, in input order
    /// assert_eq!(verdicts[1].duplicate_of.as_deref(), Some("a"));
    /// # Ok::<(), simhashdb::Error>(())
    /// ```
    pub fn dedup_from(
        &mut self,
        source: Source<'_>,
        options: &DedupOptions,
        read: &ReadOptions,
        progress: &dyn Progress,
    ) -> Result<DedupSummary> {
        let Some(insert) = &options.insert else {
            return self.snapshot()?.dedup_from(source, options, read, progress);
        };
        insert.check()?;
        options.check_no_files()?;
        let snapshot = self.snapshot()?;
        let distance = snapshot.distance(options.distance)?;
        let (batch, read) = read_all(source, &snapshot, read, progress)?;
        drop(snapshot);
        let (verdicts, summary) =
            self.dedup_and_insert(&batch, distance, options.min_jaccard, insert)?;
        Ok(answer(verdicts, summary, read))
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
    ) -> Result<DedupSummary> {
        match &options.insert {
            Some(insert) => {
                insert.check()?;
                self.write(|store| store.dedup_from(source, options, read, &()))
            }
            None => self.snapshot()?.dedup_from(source, options, read, &()),
        }
    }

    /// [`Store::dedup_files`] as one write of this handle when it inserts; on the current
    /// state, with no lock, when it only reads.
    pub fn dedup_files(
        &self,
        inputs: &[PathBuf],
        options: &DedupOptions,
        read: &ReadOptions,
        stdout: &mut dyn Write,
    ) -> Result<DedupSummary> {
        match &options.insert {
            Some(insert) => {
                insert.check()?;
                self.write(|store| store.dedup_files(inputs, options, read, stdout, &()))
            }
            None => self
                .snapshot()?
                .dedup_files(inputs, options, read, stdout, &()),
        }
    }
}
