//! Where an operation's documents come from.

use std::path::PathBuf;

use crate::error::Result;
use crate::io::document::ReadOptions;
use crate::io::input::{
    decompressed, nothing_taken, push_documents, read_documents, read_ids, read_ids_from,
    read_queries, read_query_bytes, read_sources, Query, NO_DOCUMENTS,
};
use crate::sys::progress::Progress;
use crate::write::batch::{Batch, DocumentSink, ReadSummary};

/// Where the documents of an insert or a dedup come from.
///
/// ```
/// use simhashdb::{Batch, ReadOptions, Source};
///
/// let body = b"{\"id\": \"a\", \"fingerprint\": \"0123456789abcdef\"}\n";
/// let mut batch = Batch::new();
/// let source = Source::Bytes { bytes: body, name: "body" }; // JSON Lines, detected
/// let summary = source.read(&ReadOptions::default(), &mut batch, &())?;
/// assert_eq!((summary.lines, batch.id(0), batch.fingerprint(0)), (1, "a", 0x0123456789abcdef));
/// # Ok::<(), simhashdb::Error>(())
/// ```
pub enum Source<'a> {
    /// Files and directories in any format the reader detects or is told, `-` for stdin.
    Files(&'a [PathBuf]),
    /// One whole input in memory (a request body, gzip or zstd decompressed already), named
    /// `name` in messages.
    Bytes {
        /// The input.
        bytes: &'a [u8],
        /// What messages call it (`request body`).
        name: &'a str,
    },
    /// Documents already fingerprinted (and sketched, where the store keeps sketches). Each
    /// counts as a line read.
    Documents(Batch),
}

impl Source<'_> {
    /// Reads every document into `batch`, as `options` says, telling `progress` of the bytes
    /// read; the summary counts the lines read, skipped and warned of. (An insert of any size
    /// reads its sources a run at a time: [`crate::Store::insert_from`].)
    pub fn read(
        self,
        options: &ReadOptions,
        batch: &mut Batch,
        progress: &dyn Progress,
    ) -> Result<ReadSummary> {
        self.read_into(options, batch, progress)
    }

    /// [`Source::read`] into any sink (an insertion writes a run at a time).
    pub(crate) fn read_into(
        self,
        options: &ReadOptions,
        sink: &mut dyn DocumentSink,
        progress: &dyn Progress,
    ) -> Result<ReadSummary> {
        match self {
            Source::Files(paths) => read_sources(paths, options, sink, progress),
            Source::Bytes { bytes, name } => {
                let mut summary = read_documents(bytes, name, options, sink, progress)?;
                if summary.lines == 0 {
                    nothing_taken(name, NO_DOCUMENTS, options, &mut summary)?;
                }
                Ok(summary)
            }
            Source::Documents(documents) => {
                let given = documents.len() as u64;
                sink.append(documents)?;
                Ok(ReadSummary {
                    lines: given,
                    documents: given,
                    ..ReadSummary::default()
                })
            }
        }
    }

    /// Reads the queries of every input: a list of fingerprints (`FINGERPRINT` or
    /// `ID<TAB>FINGERPRINT` lines), or documents in any format `insert` reads (text
    /// fingerprinted with `options.scheme`), as `options.format` says or detection finds
    /// ([`InputFormat::detect`](crate::InputFormat::detect), a list of fingerprints when
    /// nothing else fits). A directory holds documents.
    pub fn queries(self, options: &ReadOptions, queries: &mut Vec<Query>) -> Result<ReadSummary> {
        match self {
            Source::Files(paths) => {
                let mut summary = ReadSummary::default();
                for path in paths {
                    summary.add(read_queries(path, options, queries)?);
                }
                Ok(summary)
            }
            Source::Bytes { bytes, name } => read_query_bytes(bytes, name, None, options, queries),
            Source::Documents(documents) => {
                push_documents(&documents, queries);
                let given = documents.len() as u64;
                Ok(ReadSummary {
                    lines: given,
                    documents: given,
                    ..ReadSummary::default()
                })
            }
        }
    }

    /// Reads ids (to delete), one per line, blank lines skipped: a bare id, the first column
    /// of a tab-separated line (so an `insert` file deletes what it inserted), or a JSON
    /// object with an "id" (a string, or an integer as its decimal text, as `insert` takes
    /// it). Files may be gzip or zstd.
    pub fn ids(self) -> Result<Vec<String>> {
        match self {
            Source::Files(paths) => {
                let mut ids = Vec::new();
                for path in paths {
                    ids.extend(read_ids(path)?);
                }
                Ok(ids)
            }
            Source::Bytes { bytes, name } => read_ids_from(bytes, name),
            Source::Documents(documents) => Ok((0..documents.len())
                .map(|i| documents.id(i).to_string())
                .collect()),
        }
    }

    /// `bytes` as their sender meant them: gzip or zstd (recognised by their first bytes)
    /// decompressed, refused past `limit` bytes once decompressed ([`crate::Error::TooLarge`],
    /// a small body must not become gigabytes); other bytes as they are.
    pub fn decompressed<'b>(
        bytes: &'b [u8],
        name: &str,
        limit: u64,
    ) -> Result<std::borrow::Cow<'b, [u8]>> {
        decompressed(bytes, name, limit)
    }
}
