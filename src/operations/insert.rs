//! Insert from a source: the one recipe every client's insert runs.

use std::sync::Arc;

use crate::database::Database;
use crate::error::{Error, Result};
use crate::io::document::ReadOptions;
use crate::operations::source::Source;
use crate::sys::progress::Progress;
use crate::write::batch::check_label;
use crate::write::insertion::{InsertSummary, DEFAULT_RUN_DOCUMENTS};
use crate::write::store::Store;

/// How an insert writes its batch.
#[derive(Clone, Debug)]
pub struct InsertOptions {
    /// A label recorded with the batch (at most [`crate::Batch::MAX_LABEL_BYTES`] bytes, no
    /// control characters), for `batches` and `expire --batch`.
    pub label: Option<String>,
    /// Documents per run (see [`crate::Insertion::run_documents`]).
    pub run_documents: usize,
    /// Whether runs are merged after the commit when the store's compaction policy asks
    /// (see [`crate::Insertion::compact_after`]); a [`Database`] merges as its own options say.
    pub compact: bool,
}

impl Default for InsertOptions {
    /// No label, [`crate::Insertion::DEFAULT_RUN_DOCUMENTS`] per run, merging as the policy
    /// asks.
    fn default() -> Self {
        InsertOptions {
            label: None,
            run_documents: DEFAULT_RUN_DOCUMENTS,
            compact: true,
        }
    }
}

impl InsertOptions {
    /// Checks what can be checked before any input is read: the label.
    pub fn check(&self) -> Result<()> {
        match &self.label {
            Some(label) => check_label(label),
            None => Ok(()),
        }
    }
}

/// `options` with the store's scheme for the documents given as text: the store's scheme is
/// the only one its fingerprints can be compared under.
pub(crate) fn with_store_scheme(
    store_scheme: Result<crate::Scheme>,
    dir: &std::path::Path,
    options: &ReadOptions,
) -> ReadOptions {
    ReadOptions {
        scheme: store_scheme
            .map_err(|e| Arc::new(Error::Scheme(format!("{}: {e}", dir.display())))),
        ..options.clone()
    }
}

impl Store {
    /// Inserts every document of `sources`, read as `read` says (text fingerprinted with the
    /// store's scheme), as one batch, all or nothing: any failure before the commit leaves
    /// the store as it was.
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let path = dir.path().join("store");
    /// use simhashdb::{InsertOptions, ReadOptions, Settings, Source, Store};
    ///
    /// let mut store = Store::create(&path, Settings::default())?;
    /// let body = b"a\t0123456789abcdef\nb\t0123456789abcdee\n";
    /// let options = InsertOptions { label: Some("day-1".into()), ..InsertOptions::default() };
    /// let source = Source::Bytes { bytes: body, name: "body" };
    /// let summary = store.insert_from([source], &options, &ReadOptions::default(), &())?;
    /// assert_eq!((summary.inserted, summary.read.lines), (2, 2));
    /// # Ok::<(), simhashdb::Error>(())
    /// ```
    pub fn insert_from<'a>(
        &mut self,
        sources: impl IntoIterator<Item = Source<'a>>,
        options: &InsertOptions,
        read: &ReadOptions,
        progress: &dyn Progress,
    ) -> Result<InsertSummary> {
        options.check()?;
        let read = with_store_scheme(self.text_scheme(), self.dir(), read);
        // A store whose merges a Database runs in the background leaves them to it.
        let compact = options.compact && self.compact_inserts;
        let mut insertion = self
            .begin_insert(options.label.as_deref())
            .run_documents(options.run_documents)
            .compact_after(compact);
        for source in sources {
            let summary = source.read(&read, &mut insertion, progress)?;
            insertion.record_read(summary);
        }
        insertion.commit()
    }
}

impl Database {
    /// [`Store::insert_from`] as one write of this handle (merging as its
    /// [`crate::DatabaseOptions::compaction`] says).
    pub fn insert_from<'a>(
        &self,
        sources: impl IntoIterator<Item = Source<'a>>,
        options: &InsertOptions,
        read: &ReadOptions,
    ) -> Result<InsertSummary> {
        options.check()?;
        self.write(|store| store.insert_from(sources, options, read, &()))
    }
}
