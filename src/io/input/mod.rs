//! Input parsing: fingerprints and documents as users hand them over.
//!
//! A document is an id and either a fingerprint or a text, which is fingerprinted with the
//! [`ReadOptions::scheme`] (a store's scheme). Three formats:
//! - [`InputFormat::Tsv`]: lines `ID<TAB>FINGERPRINT`, or `ID<TAB>FINGERPRINT<TAB>BATCH` as
//!   `export` writes them (the batch is not part of the document);
//! - [`InputFormat::Jsonl`]: one JSON object per line, with the id in the id field (a string,
//!   or an integer taken as its decimal text) and a `fingerprint` (string or number) or, when
//!   it has none, a text in the text field; other fields are ignored;
//! - [`InputFormat::Text`]: a whole file is one document, its id the file's path.
//!
//! A fingerprint is written as exactly 16 hex digits, as `0x` followed by 1 to 16 hex digits,
//! or as a decimal u64 (in JSON also as a number); 16 decimal digits read as hex. Blank lines
//! are skipped; a trailing carriage return is dropped. Every error names `source:line` (or
//! the file, for text documents). [`sources`] reads files, directories and stdin.

mod chunks;
mod columns;
mod corpus;
mod decode;
mod queries;
pub(crate) mod records;
pub(crate) mod sources;

use std::borrow::Cow;
use std::io::BufRead;
use std::path::Path;

use rayon::prelude::*;

use crate::error::{Error, Result};
use crate::io::notation::{self, Decider, Evidence, Kind, Notation};
use crate::io::rejects;
use crate::sys::progress::{Phase, Progress};
use crate::write::batch::ReadSummary;
use crate::write::batch::{check_id, Batch, DocumentSink};
use chunks::{Chunk, ChunkReader};
use columns::{is_header, TsvColumns};
use records::{Documents, RecordSink, Records, TextDocument};

pub(crate) use crate::error::problem_of;
pub(crate) use crate::io::document::{is_parquet_head, InputFormat, ReadOptions, STDIN};
pub(crate) use corpus::{read_corpus_shingles, read_corpus_texts};
pub(crate) use decode::decompressed;
pub(crate) use queries::read_queries;
pub use queries::Query;
pub(crate) use queries::{push_documents, read_query_bytes};
pub use sources::read_sources;
pub(crate) use sources::{nothing_taken, open_input, NO_DOCUMENTS};

/// A parsed document: id, fingerprint (an ambiguous one as hex, see [`notation`]), what its
/// written form says of the input's notation, and the sketch of its text, if it was given as
/// text to a scheme that sketches.
type Parsed<'a> = (Cow<'a, str>, u64, Kind, Option<Vec<u8>>);

/// Why `line` is not a JSON object. A lone surrogate escape (`"\ud800"`, which Python's
/// json writes for a string holding a broken character) is named as what it is: invalid text.
fn not_json(line: &str, error: &serde_json::Error) -> Error {
    let lone_surrogate = error.to_string().contains("escape")
        && line.as_bytes().windows(4).any(|w| {
            w[0] == b'\\' && w[1] == b'u' && w[2].eq_ignore_ascii_case(&b'd') && {
                let c = w[3].to_ascii_lowercase();
                (b'8'..=b'9').contains(&c) || (b'a'..=b'f').contains(&c)
            }
        });
    if lone_surrogate {
        return Error::input(format!(
            "invalid text: a lone surrogate escape (such as \\ud800) is no Unicode character \
             (Python's json.dumps writes one for a string with a broken character: clean the \
             text, e.g. with .encode('utf-8', 'replace').decode()); {error}"
        ));
    }
    Error::input(format!("not a JSON object: {error}"))
}

/// One parsed document line; a TSV line's fields are where `columns` says.
fn parse_document<'a>(
    line: &'a str,
    options: &ReadOptions,
    format: InputFormat,
    columns: TsvColumns,
) -> Result<Parsed<'a>> {
    match format {
        InputFormat::Tsv | InputFormat::Text | InputFormat::Fingerprints | InputFormat::Parquet => {
            let (id, fp) = columns.fields(line)?;
            check_id(id)?;
            let (fp, kind) = notation::read(options.fingerprint_format, fp)?;
            Ok((Cow::Borrowed(id), fp, kind, None))
        }
        InputFormat::Jsonl => {
            let object: serde_json::Map<String, serde_json::Value> =
                serde_json::from_str(line).map_err(|e| not_json(line, &e))?;
            let id = json_id(&object, &options.id_field)?;
            let (fp, kind, sketch) = match (
                object.get(&options.fingerprint_field),
                object.get(&options.text_field),
            ) {
                (
                    Some(value @ (serde_json::Value::String(_) | serde_json::Value::Number(_))),
                    _,
                ) => {
                    let (fingerprint, kind) = match value {
                        serde_json::Value::String(text) => {
                            notation::read(options.fingerprint_format, text)?
                        }
                        number => (options.fingerprint_format.read_json(number)?, Kind::Settled),
                    };
                    (fingerprint, kind, exported_sketch(&object, options)?)
                }
                (Some(other), _) => {
                    return Err(Error::input(format!(
                        "{:?} must be a string or a number, found {other}",
                        options.fingerprint_field
                    )))
                }
                (None, Some(serde_json::Value::String(text))) => {
                    let scheme = options
                        .scheme
                        .as_ref()
                        .map_err(|why| Error::input(why.to_string()))?;
                    let (fp, sketch) = scheme.document(text)?;
                    (fp, Kind::Settled, sketch)
                }
                (None, Some(_)) => {
                    return Err(Error::input(format!(
                        "the {:?} field is not a string",
                        options.text_field
                    )))
                }
                (None, None) => {
                    return Err(Error::input(format!(
                        "no {:?} or {:?} field",
                        options.fingerprint_field, options.text_field
                    )))
                }
            };
            Ok((Cow::Owned(id), fp, kind, sketch))
        }
    }
}

/// The sketch of a JSON document given as a fingerprint, as `export --sketch` writes it: a
/// `sketch` field in base64, kept when the store keeps sketches of its size (a store without
/// sketches ignores it).
fn exported_sketch(
    object: &serde_json::Map<String, serde_json::Value>,
    options: &ReadOptions,
) -> Result<Option<Vec<u8>>> {
    use base64::Engine;
    let Some(value) = object.get("sketch") else {
        return Ok(None);
    };
    let Some(bytes) = options.scheme.as_ref().ok().and_then(|s| s.sketch_bytes()) else {
        return Ok(None);
    };
    let serde_json::Value::String(text) = value else {
        return Err(Error::input(format!(
            "\"sketch\" must be a base64 string, found {value}"
        )));
    };
    let sketch = base64::engine::general_purpose::STANDARD
        .decode(text)
        .map_err(|e| Error::input(format!("\"sketch\" is not base64: {e}")))?;
    if sketch.len() != usize::from(bytes) {
        return Err(Error::input(format!(
            "\"sketch\" holds {} bytes; the store keeps sketches of {bytes}",
            sketch.len()
        )));
    }
    Ok(Some(sketch))
}

/// The id of a JSON document: the `id_field` string, or an integer taken as its decimal
/// text, checked as [`Batch::push`] checks ids.
fn json_id(object: &serde_json::Map<String, serde_json::Value>, id_field: &str) -> Result<String> {
    let id = match object.get(id_field) {
        Some(serde_json::Value::String(id)) => id.clone(),
        Some(serde_json::Value::Number(n)) if n.is_u64() || n.is_i64() => n.to_string(),
        Some(other) => {
            return Err(Error::input(format!(
                "{id_field:?} must be a string or an integer, found {other}"
            )))
        }
        None => return Err(Error::input(format!("no {id_field:?} field"))),
    };
    check_id(&id)?;
    Ok(id)
}

/// Reads documents from `reader` into `sink`, and reports the bytes read to `progress`.
/// `source` names the input in errors and is the id of a text document. With no format in
/// `options` the input's first bytes decide ([`InputFormat::detect`], falling back to
/// `options.fallback`). An invalid document fails
/// the whole read with `source:line: what is wrong` unless `options.skip_invalid`, which
/// counts and skips it.
pub fn read_documents(
    reader: impl BufRead,
    source: &str,
    options: &ReadOptions,
    sink: &mut dyn DocumentSink,
    progress: &dyn Progress,
) -> Result<ReadSummary> {
    let _phase = Phase::start(progress, "reading", 0);
    let summary = read_stream(reader, source, options, &mut Documents(sink), progress)?;
    rejects::check(&summary, options.max_skipped, options.rejects.as_ref())?;
    Ok(summary)
}

/// [`read_documents`] within a phase its caller started.
pub(crate) fn read_stream(
    mut reader: impl BufRead,
    source: &str,
    options: &ReadOptions,
    sink: &mut dyn RecordSink,
    progress: &dyn Progress,
) -> Result<ReadSummary> {
    let mut summary = ReadSummary::default();
    let format = match options.format {
        Some(format) => format,
        None => {
            let head = reader.fill_buf().map_err(|e| Error::io(source, e))?;
            InputFormat::detect(None, false, head, options.fallback)
        }
    };
    match format {
        InputFormat::Text => {
            let mut bytes = Vec::new();
            reader
                .read_to_end(&mut bytes)
                .map_err(|e| Error::io(source, e))?;
            progress.advance(bytes.len() as u64);
            let result = text_document(source, &bytes, options);
            records::record_file(&mut summary, result, sink, options)?;
            return Ok(summary);
        }
        InputFormat::Fingerprints => {
            return Err(Error::input_at(
                source,
                None,
                "a list of fingerprints holds no documents (read it as queries)",
            ))
        }
        InputFormat::Parquet => {
            // Parquet's footer is at the end: a stream is read whole first.
            let mut bytes = Vec::new();
            reader
                .read_to_end(&mut bytes)
                .map_err(|e| Error::io(source, e))?;
            let input = ParquetInput::Bytes(bytes);
            return read_parquet_input(input, source, options, sink, progress);
        }
        InputFormat::Tsv | InputFormat::Jsonl => {}
    }
    // A TSV header names the columns: it is not a document, and dedup passes it on.
    let mut first_line = 0;
    let with_header;
    let options = match format {
        InputFormat::Tsv => {
            let head = reader.fill_buf().map_err(|e| Error::io(source, e))?;
            let end = memchr::memchr(b'\n', head).map_or(head.len(), |at| at + 1);
            match is_header(&head[..end], options) {
                Some(names) => {
                    sink.header(source, &head[..end])?;
                    reader.consume(end);
                    first_line = 1;
                    with_header = ReadOptions {
                        columns: Some(names),
                        ..options.clone()
                    };
                    &with_header
                }
                None => options,
            }
        }
        _ => options,
    };
    // Found once: every line of the input has its fields where they say.
    let columns = match format {
        InputFormat::Tsv => TsvColumns::of(options)
            .map_err(|e| Error::input_at(source, (first_line > 0).then_some(1), problem_of(e)))?,
        _ => TsvColumns::FIRST,
    };
    let spans = sink.wants_records();
    let mut decider = Decider::new(source, "line");
    let mut chunks = ChunkReader::new(reader, source, first_line);
    let mut group = chunks.next_group(progress)?;
    while !group.is_empty() {
        // The pool parses this group while this thread reads the next (an in-place scope:
        // the reader need not be Send, stdin is not, and the parsing goes to the pool this
        // thread is in, or the global one).
        let mut parsed = Vec::new();
        let next = rayon::in_place_scope(|scope| {
            scope.spawn(|_| {
                parsed = group
                    .par_iter()
                    .map(|chunk| {
                        let Chunk { first_line, bytes } = chunk;
                        parse_chunk(bytes, *first_line, source, options, format, columns, spans)
                    })
                    .collect::<Vec<ChunkResult>>();
            });
            chunks.next_group(progress)
        });
        // The group's errors come first: they are earlier in the input than the next read's.
        if let Some(err) = parsed.iter_mut().find_map(|result| result.error.take()) {
            return Err(err);
        }
        // The group's values decide the notation together (see `notation`).
        for result in &mut parsed {
            decider.observe(std::mem::take(&mut result.evidence));
        }
        let decimal = decider.notation()? == Notation::Decimal;
        for (mut result, chunk) in parsed.into_iter().zip(&group) {
            if decimal {
                result
                    .batch
                    .change_fingerprints(&result.ambiguous, notation::decimal_of_hex_reading);
            }
            summary.lines += result.lines;
            for (error, span) in result.skipped {
                let record = &chunk.bytes[span];
                rejects::skip(&mut summary, options.rejects.as_ref(), error, record)?;
            }
            summary.documents += result.batch.len() as u64;
            let records = Records::Lines {
                format,
                bytes: &chunk.bytes,
                spans: &result.spans,
            };
            sink.append_records(source, result.batch, records)?;
        }
        chunks.recycle(group);
        group = next?;
    }
    summary.warnings.extend(decider.finish()?);
    Ok(summary)
}

/// A whole input as one text document with id `source`, or an input error at `source`.
fn text_document(source: &str, bytes: &[u8], options: &ReadOptions) -> Result<TextDocument> {
    let invalid = |problem: String| Error::input_at(source, None, problem);
    let text = std::str::from_utf8(bytes)
        .map_err(|e| invalid(format!("not valid UTF-8 at byte {}", e.valid_up_to())))?;
    let scheme = options
        .scheme
        .as_ref()
        .map_err(|why| invalid(why.to_string()))?;
    check_id(source)
        .map_err(|e| invalid(format!("the path cannot be an id: {}", problem_of(e))))?;
    scheme
        .document(text)
        .map(|(fp, sketch)| (source.to_string(), fp, sketch))
        .map_err(|e| invalid(problem_of(e)))
}

/// A Parquet input: a file, or a stream read whole (Parquet's footer is at its end).
// Without the parquet feature an input is only refused, never read.
#[cfg_attr(not(feature = "parquet"), allow(dead_code))]
pub(crate) enum ParquetInput {
    File(std::fs::File),
    Bytes(Vec<u8>),
}

/// Reads the documents of a Parquet input (see [`crate::io::parquet`]).
pub(crate) fn read_parquet_input(
    input: ParquetInput,
    source: &str,
    options: &ReadOptions,
    sink: &mut dyn RecordSink,
    progress: &dyn Progress,
) -> Result<ReadSummary> {
    #[cfg(feature = "parquet")]
    {
        use crate::io::parquet::read_parquet;
        match input {
            ParquetInput::File(file) => read_parquet(file, source, options, sink, progress),
            ParquetInput::Bytes(bytes) => {
                read_parquet(bytes::Bytes::from(bytes), source, options, sink, progress)
            }
        }
    }
    #[cfg(not(feature = "parquet"))]
    {
        let _ = (input, options, sink, progress);
        Err(Error::input_at(
            source,
            None,
            "this is a Parquet file, and simhashdb was built without its parquet feature",
        ))
    }
}

struct ChunkResult {
    batch: Batch,
    /// What the chunk's fingerprints say of the input's notation.
    evidence: Evidence,
    /// The documents of `batch` whose fingerprints either notation reads (read as hex).
    ambiguous: Vec<usize>,
    /// Each document's line in the chunk, its line end included; empty unless asked for.
    spans: Vec<std::ops::Range<usize>>,
    lines: u64,
    /// The invalid lines skipped: why, and where in the chunk.
    skipped: Vec<(Error, std::ops::Range<usize>)>,
    error: Option<Error>,
}

/// The common TSV line, `ID<TAB>` and 16 hex digits, read without the general path's passes
/// over it. None for any other line: [`parse_document`] reads it, or says what is wrong.
fn parse_common_tsv<'a>(raw: &'a [u8], options: &ReadOptions) -> Option<(&'a str, u64, Kind)> {
    let tab = memchr::memchr(b'\t', raw)?;
    let written = &raw[tab + 1..];
    let fingerprint = options.fingerprint_format.read_16_hex_digits(written)?;
    let kind = match options.fingerprint_format {
        crate::FingerprintFormat::Auto => notation::kind_of_hex(written, fingerprint),
        _ => Kind::Settled,
    };
    let id = std::str::from_utf8(&raw[..tab]).ok()?;
    check_id(id).ok()?;
    Some((id, fingerprint, kind))
}

impl ChunkResult {
    /// Notes the kind of `fingerprint`, the document's about to be pushed, read from line
    /// `line`.
    fn note(&mut self, kind: Kind, line: u64, fingerprint: u64) {
        if kind == Kind::Settled {
            return;
        }
        if let Kind::Ambiguous { .. } = kind {
            self.ambiguous.push(self.batch.len());
        }
        self.evidence.note(kind, line, fingerprint);
    }
}

/// Parses `chunk`, whose first line is line `first_line` (from 0) of `source`.
fn parse_chunk(
    chunk: &[u8],
    first_line: u64,
    source: &str,
    options: &ReadOptions,
    format: InputFormat,
    columns: TsvColumns,
    spans: bool,
) -> ChunkResult {
    let mut out = ChunkResult {
        batch: Batch::new(),
        evidence: Evidence::default(),
        ambiguous: Vec::new(),
        spans: Vec::new(),
        lines: 0,
        skipped: Vec::new(),
        error: None,
    };
    // The common line's shortcut reads the first two fields only.
    let common_tsv = columns.are_first();
    let mut start = 0;
    for (i, end) in memchr::memchr_iter(b'\n', chunk)
        .chain((!chunk.ends_with(b"\n")).then_some(chunk.len()))
        .enumerate()
    {
        let span = start..(end + 1).min(chunk.len());
        let raw = &chunk[start..end];
        start = span.end;
        let raw = raw.strip_suffix(b"\r").unwrap_or(raw);
        if raw.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        out.lines += 1;
        let line = first_line + i as u64 + 1;
        if format == InputFormat::Tsv && common_tsv {
            if let Some((id, fp, kind)) = parse_common_tsv(raw, options) {
                out.note(kind, line, fp);
                out.batch.push_checked(id, fp);
                if spans {
                    out.spans.push(span);
                }
                continue;
            }
        }
        let parsed = std::str::from_utf8(raw)
            .map_err(|e| Error::input(format!("the line is not valid UTF-8 ({e})")))
            .and_then(|line| parse_document(line, options, format, columns));
        match parsed {
            Ok((id, fp, kind, sketch)) => {
                out.note(kind, line, fp);
                match sketch {
                    Some(sketch) => out
                        .batch
                        .push_sketched(&id, fp, &sketch)
                        .expect("id checked while parsing"),
                    None => out.batch.push_checked(&id, fp),
                }
                if spans {
                    out.spans.push(span);
                }
            }
            Err(e) => {
                let error = Error::input_at(source, Some(line), problem_of(e));
                if options.skip_invalid {
                    out.skipped.push((error, span));
                } else {
                    out.error = Some(error);
                    return out;
                }
            }
        }
    }
    out
}

/// Reads ids to delete from `input` (a file, gzip or zstd too, or `-` for stdin), one per
/// line (blank lines skipped): a bare id, the first column of a tab-separated line (so an
/// `insert` file deletes what it inserted), or a JSON object with an "id" (a string, or an
/// integer taken as its decimal text, as `insert` takes it).
pub(crate) fn read_ids(input: &Path) -> Result<Vec<String>> {
    let source = if input.as_os_str() == "-" {
        STDIN.to_string()
    } else {
        input.display().to_string()
    };
    read_ids_from(open_input(input)?, &source)
}

/// [`read_ids`] of `reader`, named `source` in errors.
pub(crate) fn read_ids_from(reader: impl BufRead, source: &str) -> Result<Vec<String>> {
    let mut out = Vec::new();
    for (i, line) in reader.split(b'\n').enumerate() {
        let at = |problem: String| Error::input_at(source, Some(i as u64 + 1), problem);
        let line = line.map_err(|e| Error::io(source, e))?;
        let line = line.strip_suffix(b"\r").unwrap_or(&line);
        let text =
            std::str::from_utf8(line).map_err(|_| at("the line is not valid UTF-8".into()))?;
        if text.trim().is_empty() {
            continue;
        }
        let id = if text.trim_start().starts_with('{') {
            let object: serde_json::Map<String, serde_json::Value> =
                serde_json::from_str(text).map_err(|e| at(format!("invalid JSON: {e}")))?;
            json_id(&object, "id")
        } else {
            let id = text.split('\t').next().unwrap_or(text).to_string();
            check_id(&id).map(|()| id)
        };
        let id = id.map_err(|e| at(problem_of(e)))?;
        out.push(id);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::chunks::CHUNK_BYTES;
    use super::*;
    use crate::similarity::fingerprint::Scheme;
    use proptest::prelude::*;

    #[test]
    fn an_empty_input_of_queries_is_no_query_with_a_warning() {
        for (bytes, format) in [(&b""[..], None), (b"\n \n", Some(InputFormat::Jsonl))] {
            let options = ReadOptions {
                format,
                ..ReadOptions::default()
            };
            let mut queries = Vec::new();
            let summary = read_query_bytes(bytes, "body", None, &options, &mut queries).unwrap();
            assert!(queries.is_empty());
            assert_eq!(summary.warnings, [format!("warning: body: {NO_DOCUMENTS}")]);
        }
    }

    fn read(text: &str, skip: bool) -> Result<(Batch, ReadSummary)> {
        let mut batch = Batch::new();
        let options = ReadOptions {
            skip_invalid: skip,
            ..ReadOptions::default()
        };
        let s = read_documents(text.as_bytes(), "in", &options, &mut batch, &|_| {})?;
        Ok((batch, s))
    }

    #[test]
    fn tsv_and_jsonl_are_detected() {
        let (b, s) = read("a\t00000000000000ff\r\n\nb\t0x1\n", false).unwrap();
        assert_eq!((b.len(), s.lines), (2, 2));
        let (b, _) = read(
            "{\"id\": \"a\", \"fingerprint\": 5}\n{\"id\":\"b\",\"fingerprint\":\"0x5\",\"x\":1}",
            false,
        )
        .unwrap();
        assert_eq!((b.id(1), b.fingerprint(1)), ("b", 5));
    }

    #[test]
    fn errors_name_the_line() {
        let err = read("a\t1\nb\tzz\n", false).unwrap_err().to_string();
        assert!(err.starts_with("in:2: "), "{err}");
        let err = read("{\"id\": true, \"fingerprint\": 1}", false)
            .unwrap_err()
            .to_string();
        assert!(err.contains("in:1") && err.contains("string"), "{err}");
        let (b, s) = read("a\t1\nb\tzz\nc\t2\n", true).unwrap();
        assert_eq!((b.len(), s.skipped), (2, 1));
        assert!(s.first_skipped[0].starts_with("in:2:"));
    }

    /// Inputs of several chunks: every line is read once, whole, wherever a chunk ends (a
    /// line cut by the end of a chunk, one longer than a chunk, a last line without its
    /// newline), and an error deep in names its line.
    #[test]
    fn lines_across_chunks_are_read_whole_and_numbered() {
        let mut text = String::new();
        let mut expected = Vec::new();
        let mut n = 0u64;
        while text.len() < 3 * CHUNK_BYTES + 100 {
            let id = format!("doc-{n}");
            text.push_str(&format!("{id}\t{n:016x}\n"));
            expected.push((id, n));
            n += 1;
        }
        // A line longer than a chunk (an id too long: skipped, named by its number), then a
        // last line without its newline.
        let long = "x".repeat(CHUNK_BYTES + 10);
        text.push_str(&format!("{long}\t00000000000000ff\nlast\t1"));
        expected.push(("last".to_string(), 1));
        // One thread reads two chunks a group: the text spans groups, so buffers are reused
        // and a line start is carried from one group to the next.
        let one_thread = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .unwrap();
        let (batch, summary) = one_thread.install(|| read(&text, true)).unwrap();
        assert_eq!((summary.lines, summary.skipped), (n + 2, 1));
        assert!(
            summary.first_skipped[0].starts_with(&format!("in:{}: ", n + 1)),
            "{}",
            &summary.first_skipped[0][..80]
        );
        let documents: Vec<(String, u64)> = (0..batch.len())
            .map(|i| (batch.id(i).to_string(), batch.fingerprint(i)))
            .collect();
        assert_eq!(documents, expected);

        let bad = format!(
            "{}zz\tzz\n",
            &text[..text.find(&format!("doc-{}\t", n - 1)).unwrap()]
        );
        let err = read(&bad, false).unwrap_err().to_string();
        assert!(err.starts_with(&format!("in:{}: ", n)), "{err}");
    }

    proptest! {
        #[test]
        fn readers_never_panic_on_any_bytes(
            bytes in proptest::collection::vec(any::<u8>(), 0..300),
            skip: bool,
            format in proptest::option::of(prop_oneof![
                Just(InputFormat::Tsv),
                Just(InputFormat::Jsonl),
                Just(InputFormat::Text),
            ]),
        ) {
            let _ = read_ids_from(&bytes[..], "fuzz");
            let options = ReadOptions {
                format,
                skip_invalid: skip,
                scheme: Ok(Scheme::default()),
                ..ReadOptions::default()
            };
            let _ = read_documents(&bytes[..], "fuzz", &options, &mut Batch::new(), &|_| {});
        }

        /// The common TSV line's shortcut reads what the general path reads, and takes the
        /// lines simhashdb writes.
        #[test]
        fn common_tsv_lines_read_as_the_general_path_reads_them(
            id in "[a-z\u{e9}\t\r -]{0,6}",
            fingerprint in prop_oneof!["[0-9a-fA-FxX]{14,17}", "[0-9]{16}"],
            written in any::<u64>(),
        ) {
            use crate::FingerprintFormat;
            for fingerprint_format in
                [FingerprintFormat::Auto, FingerprintFormat::Hex, FingerprintFormat::Decimal]
            {
                let options = ReadOptions { fingerprint_format, ..ReadOptions::default() };
                for line in [format!("{id}\t{fingerprint}"), format!("{id}\t{written:016x}")] {
                    let general = parse_document(&line, &options, InputFormat::Tsv, TsvColumns::FIRST)
                        .ok()
                        .map(|(id, fp, kind, _)| (id.into_owned(), fp, kind));
                    let common = parse_common_tsv(line.as_bytes(), &options)
                        .map(|(id, fp, kind)| (id.to_string(), fp, kind));
                    if common.is_some() {
                        prop_assert_eq!(&common, &general, "{:?}", line);
                    }
                    let simple = !id.is_empty() && !id.contains(['\t', '\r']);
                    if simple && fingerprint_format != FingerprintFormat::Decimal
                        && line.ends_with(&format!("{written:016x}"))
                    {
                        prop_assert_eq!(common.map(|(id, fp, _)| (id, fp)), Some((id.clone(), written)));
                    }
                }
            }
        }

        #[test]
        fn parsers_never_panic(text in "\\PC*") {
            let _ = read(&text, false);
            let _ = read(&text, true);
            use crate::FingerprintFormat;
            for format in [FingerprintFormat::Auto, FingerprintFormat::Hex, FingerprintFormat::Decimal] {
                let _ = format.read(&text);
            }
        }
    }
}
