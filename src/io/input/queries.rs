//! Queries as users write them: fingerprints, or documents whose fingerprints are the queries.

use std::io::Read;
use std::path::Path;

use super::columns::TsvColumns;
use super::{
    open_input, parse_document, problem_of, read_documents, read_sources, NO_DOCUMENTS, STDIN,
};
use super::{read_parquet_input, InputFormat, ParquetInput, ReadOptions, ReadSummary};
use crate::error::{Error, Result};
use crate::io::notation::{self, Decider, Evidence, Kind, Notation};
use crate::io::rejects;
use crate::similarity::fingerprint::hex;
use crate::write::batch::Batch;

/// One query: a fingerprint, and the id of the document it was made from, if it was. Its
/// JSON form (`fingerprint --json`) is `{"id", "fingerprint" (16 hex digits)}`, without an
/// id when there is none.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Query {
    /// The document's id; None for a fingerprint given as such.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// The fingerprint to look for.
    #[serde(serialize_with = "hex::serialize")]
    pub fingerprint: u64,
    /// The sketch of the query's text, when it was given as text to a scheme that sketches
    /// (a store made with `init --sketch`): what `--min-jaccard` verifies matches with.
    #[serde(skip)]
    pub sketch: Option<Vec<u8>>,
}

impl Query {
    /// A query for `fingerprint`, with no id and no sketch.
    pub fn fingerprint(fingerprint: u64) -> Query {
        Query {
            id: None,
            fingerprint,
            sketch: None,
        }
    }
}

impl From<u64> for Query {
    /// [`Query::fingerprint`].
    fn from(fingerprint: u64) -> Query {
        Query::fingerprint(fingerprint)
    }
}

/// Reads the queries of `input` (a file, a directory of text documents, or `-` for stdin) and
/// appends them to `queries`, in input order.
///
/// The format is `options.format`, else detected by [`InputFormat::detect`] with
/// [`InputFormat::Fingerprints`] as the fallback: a file is read as JSON Lines documents when
/// its name or first byte says so, as tab-separated documents by its `.tsv` name, else as one
/// query per line, a fingerprint or `ID<TAB>FINGERPRINT`. Documents given as text are
/// fingerprinted with `options.scheme`.
pub fn read_queries(
    input: &Path,
    options: &ReadOptions,
    queries: &mut Vec<Query>,
) -> Result<ReadSummary> {
    let stdin = input.as_os_str() == "-";
    let name = if stdin {
        STDIN.to_string()
    } else {
        input.display().to_string()
    };
    if !stdin && input.is_dir() {
        if options.format == Some(InputFormat::Fingerprints) {
            return Err(Error::input_at(
                &name,
                None,
                "a directory holds documents, not a list of fingerprints",
            ));
        }
        let mut batch = Batch::new();
        let summary = read_sources(&[input.to_path_buf()], options, &mut batch, &())?;
        push_documents(&batch, queries);
        return Ok(summary);
    }
    let mut bytes = Vec::new();
    open_input(input)?
        .read_to_end(&mut bytes)
        .map_err(|e| Error::io(&name, e))?;
    read_query_bytes(&bytes, &name, (!stdin).then_some(input), options, queries)
}

/// The queries of one input's `bytes` (named `name`, read from `path` if a file), in the
/// format `options.format` gives or detection finds.
pub(crate) fn read_query_bytes(
    bytes: &[u8],
    name: &str,
    path: Option<&Path>,
    options: &ReadOptions,
    queries: &mut Vec<Query>,
) -> Result<ReadSummary> {
    let mut summary = query_bytes(bytes, name, path, options, queries)?;
    if summary.lines == 0 {
        // Queries are read, never stored: an empty input is no query, with a warning.
        summary
            .warnings
            .push(format!("warning: {name}: {NO_DOCUMENTS}"));
    }
    Ok(summary)
}

/// [`read_query_bytes`] but for the warning when there are none.
fn query_bytes(
    bytes: &[u8],
    name: &str,
    path: Option<&Path>,
    options: &ReadOptions,
    queries: &mut Vec<Query>,
) -> Result<ReadSummary> {
    let name = name.to_string();
    let format = options
        .format
        .unwrap_or_else(|| InputFormat::detect(path, false, bytes, InputFormat::Fingerprints));
    if format == InputFormat::Fingerprints {
        return read_query_lines(bytes, &name, options, queries);
    }
    if format == InputFormat::Parquet {
        let mut batch = Batch::new();
        let input = ParquetInput::Bytes(bytes.to_vec());
        let summary = read_parquet_input(
            input,
            &name,
            options,
            &mut super::records::Documents(&mut batch),
            &(),
        )?;
        rejects::check(&summary, options.max_skipped, options.rejects.as_ref())?;
        push_documents(&batch, queries);
        return Ok(summary);
    }
    let options = ReadOptions {
        format: Some(format),
        ..options.clone()
    };
    let mut batch = Batch::new();
    let summary = read_documents(bytes, &name, &options, &mut batch, &())?;
    push_documents(&batch, queries);
    Ok(summary)
}

/// Lines of [`InputFormat::Fingerprints`].
fn read_query_lines(
    bytes: &[u8],
    source: &str,
    options: &ReadOptions,
    queries: &mut Vec<Query>,
) -> Result<ReadSummary> {
    let columns =
        TsvColumns::of(options).map_err(|e| Error::input_at(source, None, problem_of(e)))?;
    let mut summary = ReadSummary::default();
    let mut evidence = Evidence::default();
    let first = queries.len();
    let mut ambiguous = Vec::new();
    for (i, raw) in bytes.split(|&b| b == b'\n').enumerate() {
        let raw = raw.strip_suffix(b"\r").unwrap_or(raw);
        if raw.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let parsed = std::str::from_utf8(raw)
            .map_err(|e| Error::input(format!("the line is not valid UTF-8 ({e})")))
            .and_then(|line| {
                if line.contains('\t') {
                    let (id, fingerprint, kind, _) =
                        parse_document(line, options, InputFormat::Tsv, columns)?;
                    let query = Query {
                        id: Some(id.into_owned()),
                        fingerprint,
                        sketch: None,
                    };
                    Ok((query, kind))
                } else {
                    let (fingerprint, kind) =
                        notation::read(options.fingerprint_format, line.trim())?;
                    Ok((Query::fingerprint(fingerprint), kind))
                }
            })
            .map_err(|e| Error::input_at(source, Some(i as u64 + 1), problem_of(e)));
        summary.lines += 1;
        match parsed {
            Ok((query, kind)) => {
                summary.documents += 1;
                evidence.note(kind, i as u64 + 1, query.fingerprint);
                if let Kind::Ambiguous { .. } = kind {
                    ambiguous.push(queries.len());
                }
                queries.push(query);
            }
            Err(e) if options.skip_invalid => {
                rejects::skip(&mut summary, options.rejects.as_ref(), e, raw)?
            }
            Err(e) => return Err(e),
        }
    }
    rejects::check(&summary, options.max_skipped, options.rejects.as_ref())?;
    let mut decider = Decider::new(source, "line");
    if decider.settle(evidence)? == Notation::Decimal {
        for i in ambiguous {
            let query = &mut queries[i];
            query.fingerprint = notation::decimal_of_hex_reading(query.fingerprint);
        }
    }
    debug_assert!(queries[first..].len() as u64 == summary.documents);
    summary.warnings.extend(decider.finish()?);
    Ok(summary)
}

pub(crate) fn push_documents(batch: &Batch, queries: &mut Vec<Query>) {
    queries.extend((0..batch.len()).map(|i| Query {
        id: Some(batch.id(i).to_string()),
        fingerprint: batch.fingerprint(i),
        sketch: batch.sketch(i).map(<[u8]>::to_vec),
    }));
}
