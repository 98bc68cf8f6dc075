//! The records documents were read from, for a caller that passes them on unchanged (dedup
//! writes the kept ones out as they came in).

use std::ops::Range;

use crate::error::{Error, Result};
use crate::io::document::{InputFormat, ReadOptions};
use crate::io::rejects;
use crate::write::batch::{Batch, DocumentSink, ReadSummary};

/// Where the documents of one appended [`Batch`] came from, document `i` by `i`.
pub(crate) enum Records<'a> {
    /// Line formats (`format` tsv or jsonl): document `i`'s line is `bytes[spans[i]]`, its
    /// line end (`\n` or `\r\n`, none on a last line without one) included. `spans` is empty
    /// unless the sink [`RecordSink::wants_records`].
    Lines {
        format: InputFormat,
        bytes: &'a [u8],
        spans: &'a [Range<usize>],
    },
    /// Parquet: document `i` is row `rows[i]` of `batch`, which holds every column of the
    /// file when the sink [`RecordSink::wants_records`], else only the ones read.
    #[cfg(feature = "parquet")]
    Rows {
        batch: &'a arrow_array::RecordBatch,
        rows: &'a [usize],
    },
    /// Text files and directories: a document is a whole file, named by its id.
    Files,
}

/// Where documents go with their records.
pub(crate) trait RecordSink {
    /// Whether the records are used (a Parquet file is then read whole, every column).
    #[cfg_attr(not(feature = "parquet"), allow(dead_code))]
    fn wants_records(&self) -> bool;
    /// Takes the header line of a TSV input (`line`, its line end included), read before
    /// its documents. Ignored unless the sink passes records on.
    fn header(&mut self, _source: &str, _line: &[u8]) -> Result<()> {
        Ok(())
    }
    /// Adds every document of `documents`, read from `source` (a file's path, or
    /// `<stdin>`), in order; `records` says where each came from.
    fn append_records(
        &mut self,
        source: &str,
        documents: Batch,
        records: Records<'_>,
    ) -> Result<()>;
}

/// A [`DocumentSink`], which takes the documents and no records.
pub(crate) struct Documents<'a>(pub &'a mut dyn DocumentSink);

impl RecordSink for Documents<'_> {
    fn wants_records(&self) -> bool {
        false
    }

    fn append_records(&mut self, _: &str, documents: Batch, _: Records<'_>) -> Result<()> {
        self.0.append(documents)
    }
}

/// A whole file as one document: id, fingerprint, and sketch when the scheme sketches.
pub(crate) type TextDocument = (String, u64, Option<Vec<u8>>);

/// Adds one whole-file document's outcome to `summary`: the document to `sink`, or a skip, or
/// the error.
pub(crate) fn record_file(
    summary: &mut ReadSummary,
    result: Result<TextDocument>,
    sink: &mut dyn RecordSink,
    options: &ReadOptions,
) -> Result<()> {
    summary.lines += 1;
    match result {
        Ok((id, fp, sketch)) => {
            let mut document = Batch::new();
            match sketch {
                Some(sketch) => document.push_sketched(&id, fp, &sketch)?,
                None => document.push(&id, fp)?,
            }
            sink.append_records(&id, document, Records::Files)?;
            summary.documents += 1;
        }
        // A whole file is its record: the rejects name it, and hold no copy.
        Err(e @ Error::Input { .. }) if options.skip_invalid => {
            summary.skipped_files += 1;
            rejects::skip(summary, options.rejects.as_ref(), e, b"")?
        }
        Err(e) => return Err(e),
    }
    Ok(())
}
