//! Where an operation's documents come from.

use std::path::PathBuf;

use crate::error::Result;
use crate::io::document::ReadOptions;
use crate::io::input::{read_documents, read_sources};
use crate::sys::progress::Progress;
use crate::write::batch::{Batch, DocumentSink, ReadSummary};

/// Where the documents of an insert or a dedup come from.
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
    /// Reads every document into `sink`, as `options` says, telling `progress` of the bytes
    /// read; the summary counts the lines read, skipped and warned of.
    pub fn read(
        self,
        options: &ReadOptions,
        sink: &mut dyn DocumentSink,
        progress: &dyn Progress,
    ) -> Result<ReadSummary> {
        match self {
            Source::Files(paths) => read_sources(paths, options, sink, progress),
            Source::Bytes { bytes, name } => read_documents(bytes, name, options, sink, progress),
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
}
