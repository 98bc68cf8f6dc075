//! Insert from a source: the one recipe every client's insert runs.

use crate::database::Database;
use crate::error::Result;
use crate::io::document::ReadOptions;
use crate::io::source::Source;
use crate::sys::progress::Progress;
use crate::write::insertion::{InsertOptions, InsertSummary};
use crate::write::store::Store;

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
        let read = read.with_store_scheme(self.text_scheme(), self.dir());
        let mut insertion = self.begin_insert_as(options);
        for source in sources {
            let summary = source.read_into(&read, &mut insertion, progress)?;
            insertion.record_read(summary);
        }
        insertion.commit()
    }
}

impl Database {
    /// [`Store::insert_from`] as one write of this handle (merging as its
    /// [`crate::DatabaseOptions::compact_in_background`] says).
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
