//! Input parsing: fingerprints and documents as users hand them over.
//!
//! Documents come as lines, either `ID<TAB>FINGERPRINT` (tsv) or JSON objects
//! `{"id": "...", "fingerprint": ...}` (jsonl, other fields ignored). A fingerprint is written
//! as exactly 16 hex digits, as `0x` followed by 1 to 16 hex digits, or as a decimal u64 (in
//! JSON also as a number); 16 decimal digits read as hex. Blank lines are skipped; a trailing
//! carriage return is dropped. Every error names `source:line`.

use std::io::BufRead;

use rayon::prelude::*;

use crate::batch::{check_id, Batch};
use crate::error::{Error, Result};

/// How document lines are written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InputFormat {
    /// `ID<TAB>FINGERPRINT`
    Tsv,
    /// `{"id": ..., "fingerprint": ...}`
    Jsonl,
}

impl InputFormat {
    /// The format of a line that starts an input: jsonl if it starts with `{`.
    pub fn detect(first_line: &[u8]) -> Self {
        if first_line.trim_ascii_start().first() == Some(&b'{') {
            InputFormat::Jsonl
        } else {
            InputFormat::Tsv
        }
    }
}

/// Formats a fingerprint as 16 lowercase hex digits, as everywhere in output.
pub fn format_fingerprint(fingerprint: u64) -> String {
    format!("{fingerprint:016x}")
}

/// Parses a fingerprint (see the module docs for the accepted forms).
pub fn parse_fingerprint(text: &str) -> std::result::Result<u64, String> {
    let bad = || {
        format!(
            "{text:?} is not a fingerprint: expected 16 hex digits, 0x and 1 to 16 hex digits, \
             or a decimal number below 2^64"
        )
    };
    let hex = |digits: &str| {
        if (1..=16).contains(&digits.len()) && digits.bytes().all(|b| b.is_ascii_hexdigit()) {
            u64::from_str_radix(digits, 16).map_err(|_| bad())
        } else {
            Err(bad())
        }
    };
    if let Some(digits) = text.strip_prefix("0x").or_else(|| text.strip_prefix("0X")) {
        hex(digits)
    } else if text.len() == 16 {
        hex(text)
    } else if !text.is_empty() && text.len() <= 20 && text.bytes().all(|b| b.is_ascii_digit()) {
        text.parse::<u64>().map_err(|_| bad())
    } else {
        Err(bad())
    }
}

/// One parsed document line, borrowing the id where it can.
fn parse_document(line: &str, format: InputFormat) -> std::result::Result<(String, u64), String> {
    match format {
        InputFormat::Tsv => {
            let mut fields = line.split('\t');
            let (Some(id), Some(fp), None) = (fields.next(), fields.next(), fields.next()) else {
                return Err(format!(
                    "expected ID<TAB>FINGERPRINT (2 tab-separated fields), found {}",
                    line.split('\t').count()
                ));
            };
            check_id(id).map_err(|e| e.to_string())?;
            Ok((id.to_string(), parse_fingerprint(fp)?))
        }
        InputFormat::Jsonl => {
            #[derive(serde::Deserialize)]
            struct Line {
                id: Option<serde_json::Value>,
                fingerprint: Option<serde_json::Value>,
            }
            let parsed: Line = serde_json::from_str(line)
                .map_err(|e| format!("not a JSON object with id and fingerprint: {e}"))?;
            let id = match parsed.id {
                Some(serde_json::Value::String(id)) => id,
                Some(other) => return Err(format!("\"id\" must be a string, found {other}")),
                None => return Err("the \"id\" field is missing".into()),
            };
            check_id(&id).map_err(|e| e.to_string())?;
            let fp = match parsed.fingerprint {
                Some(serde_json::Value::String(s)) => parse_fingerprint(&s)?,
                Some(serde_json::Value::Number(n)) => n
                    .as_u64()
                    .ok_or_else(|| format!("fingerprint {n} is not an integer in 0..2^64"))?,
                Some(other) => {
                    return Err(format!(
                        "\"fingerprint\" must be a string or a number, found {other}"
                    ))
                }
                None => return Err("the \"fingerprint\" field is missing".into()),
            };
            Ok((id, fp))
        }
    }
}

/// What reading one input did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ReadSummary {
    /// Non-blank lines read.
    pub lines: u64,
    /// Documents added to the batch.
    pub documents: u64,
    /// Invalid lines skipped (only with `skip_invalid`).
    pub skipped: u64,
    /// The first few skipped lines' errors, `source:line: message`.
    pub first_skipped: Vec<String>,
}

/// How many skipped-line messages a [`ReadSummary`] keeps.
const KEPT_SKIP_MESSAGES: usize = 5;
/// Input is parsed in parallel in chunks of about this many bytes.
const CHUNK_BYTES: usize = 4 << 20;

/// Reads document lines from `reader` into `batch`. `source` names the input in errors. With
/// `format` None the first non-blank line decides. An invalid line fails the whole read with
/// `source:line: what is wrong` unless `skip_invalid`, which counts and skips it.
pub fn read_documents(
    mut reader: impl BufRead,
    source: &str,
    format: Option<InputFormat>,
    skip_invalid: bool,
    batch: &mut Batch,
) -> Result<ReadSummary> {
    let mut summary = ReadSummary::default();
    let mut format = format;
    let mut line_no = 0u64;
    let mut chunks: Vec<(u64, Vec<u8>)> = Vec::new();
    loop {
        // Read a group of chunks, each ending at a line end, then parse them in parallel.
        let mut eof = false;
        let group = rayon::current_num_threads().max(1) * 2;
        chunks.clear();
        while chunks.len() < group {
            let mut chunk = Vec::with_capacity(CHUNK_BYTES + 4096);
            while chunk.len() < CHUNK_BYTES {
                let n = reader
                    .read_until(b'\n', &mut chunk)
                    .map_err(|e| Error::Input(format!("{source}: cannot read: {e}")))?;
                if n == 0 {
                    eof = true;
                    break;
                }
            }
            if chunk.is_empty() {
                break;
            }
            let lines = bytecount_newlines(&chunk) + u64::from(!chunk.ends_with(b"\n"));
            chunks.push((line_no, chunk));
            line_no += lines;
            if eof {
                break;
            }
        }
        if format.is_none() {
            format = chunks
                .iter()
                .flat_map(|(_, c)| c.split(|&b| b == b'\n'))
                .find(|l| !l.trim_ascii().is_empty())
                .map(InputFormat::detect);
        }
        let fmt = format.unwrap_or(InputFormat::Tsv);
        let parsed: Vec<ChunkResult> = chunks
            .par_iter()
            .map(|(first, chunk)| parse_chunk(chunk, *first, fmt, source, skip_invalid))
            .collect();
        for result in parsed {
            if let Some(err) = result.error {
                return Err(Error::Input(err));
            }
            summary.lines += result.lines;
            summary.skipped += result.skipped.len() as u64;
            for msg in result.skipped {
                if summary.first_skipped.len() < KEPT_SKIP_MESSAGES {
                    summary.first_skipped.push(msg);
                }
            }
            summary.documents += result.batch.len() as u64;
            batch.append(result.batch);
        }
        if eof || chunks.is_empty() {
            return Ok(summary);
        }
    }
}

struct ChunkResult {
    batch: Batch,
    lines: u64,
    skipped: Vec<String>,
    error: Option<String>,
}

fn parse_chunk(
    chunk: &[u8],
    first_line: u64,
    format: InputFormat,
    source: &str,
    skip_invalid: bool,
) -> ChunkResult {
    let mut out = ChunkResult {
        batch: Batch::new(),
        lines: 0,
        skipped: Vec::new(),
        error: None,
    };
    for (i, raw) in chunk.split(|&b| b == b'\n').enumerate() {
        let raw = raw.strip_suffix(b"\r").unwrap_or(raw);
        if raw.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        out.lines += 1;
        let parsed = std::str::from_utf8(raw)
            .map_err(|e| format!("the line is not valid UTF-8 ({e})"))
            .and_then(|line| parse_document(line, format));
        match parsed {
            Ok((id, fp)) => out.batch.push(&id, fp).expect("id checked while parsing"),
            Err(msg) => {
                let msg = format!("{source}:{}: {msg}", first_line + i as u64 + 1);
                if skip_invalid {
                    out.skipped.push(msg);
                } else {
                    out.error = Some(msg);
                    return out;
                }
            }
        }
    }
    out
}

fn bytecount_newlines(bytes: &[u8]) -> u64 {
    bytes.iter().filter(|&&b| b == b'\n').count() as u64
}

/// Reads fingerprints, one per line (blank lines skipped), for queries.
pub fn read_fingerprints(reader: impl BufRead, source: &str) -> Result<Vec<u64>> {
    let mut out = Vec::new();
    for (i, line) in reader.split(b'\n').enumerate() {
        let line = line.map_err(|e| Error::Input(format!("{source}: cannot read: {e}")))?;
        let line = line.strip_suffix(b"\r").unwrap_or(&line);
        let text = std::str::from_utf8(line)
            .map_err(|_| Error::Input(format!("{source}:{}: the line is not valid UTF-8", i + 1)))?
            .trim();
        if text.is_empty() {
            continue;
        }
        out.push(
            parse_fingerprint(text)
                .map_err(|msg| Error::Input(format!("{source}:{}: {msg}", i + 1)))?,
        );
    }
    Ok(out)
}

/// Reads ids to delete, one per line (blank lines skipped): a bare id, the first column of a
/// tab-separated line (so an `insert` file deletes what it inserted), or a JSON object with
/// an "id" string.
pub fn read_ids(reader: impl BufRead, source: &str) -> Result<Vec<String>> {
    let mut out = Vec::new();
    for (i, line) in reader.split(b'\n').enumerate() {
        let at = || format!("{source}:{}", i + 1);
        let line = line.map_err(|e| Error::Input(format!("{source}: cannot read: {e}")))?;
        let line = line.strip_suffix(b"\r").unwrap_or(&line);
        let text = std::str::from_utf8(line)
            .map_err(|_| Error::Input(format!("{}: the line is not valid UTF-8", at())))?;
        if text.trim().is_empty() {
            continue;
        }
        let id = if text.trim_start().starts_with('{') {
            let value: serde_json::Value = serde_json::from_str(text)
                .map_err(|e| Error::Input(format!("{}: invalid JSON: {e}", at())))?;
            match value.get("id") {
                Some(serde_json::Value::String(id)) => id.clone(),
                Some(other) => {
                    return Err(Error::Input(format!(
                        "{}: \"id\" must be a string, not {other}",
                        at()
                    )))
                }
                None => return Err(Error::Input(format!("{}: the object has no \"id\"", at()))),
            }
        } else {
            text.split('\t').next().unwrap_or(text).to_string()
        };
        crate::batch::check_id(&id).map_err(|e| Error::Input(format!("{}: {e}", at())))?;
        out.push(id);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn fingerprint_forms() {
        assert_eq!(parse_fingerprint("00000000000000ff"), Ok(255));
        assert_eq!(parse_fingerprint("0xFF"), Ok(255));
        assert_eq!(parse_fingerprint("255"), Ok(255));
        assert_eq!(
            parse_fingerprint("1234567890123456"),
            Ok(0x1234567890123456)
        );
        assert_eq!(parse_fingerprint("18446744073709551615"), Ok(u64::MAX));
        assert_eq!(parse_fingerprint("ffffffffffffffff"), Ok(u64::MAX));
        for bad in [
            "",
            "0x",
            "18446744073709551616",
            "12g4",
            "-1",
            " 1",
            "0x00000000000000001",
        ] {
            assert!(parse_fingerprint(bad).is_err(), "{bad:?}");
        }
    }

    fn read(text: &str, skip: bool) -> Result<(Batch, ReadSummary)> {
        let mut batch = Batch::new();
        let s = read_documents(text.as_bytes(), "in", None, skip, &mut batch)?;
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
        let err = read("{\"id\": 5, \"fingerprint\": 1}", false)
            .unwrap_err()
            .to_string();
        assert!(err.contains("in:1") && err.contains("string"), "{err}");
        let (b, s) = read("a\t1\nb\tzz\nc\t2\n", true).unwrap();
        assert_eq!((b.len(), s.skipped), (2, 1));
        assert!(s.first_skipped[0].starts_with("in:2:"));
    }

    proptest! {
        #[test]
        fn readers_never_panic_on_any_bytes(
            bytes in proptest::collection::vec(any::<u8>(), 0..300),
            skip: bool,
            format in proptest::option::of(prop_oneof![Just(InputFormat::Tsv), Just(InputFormat::Jsonl)]),
        ) {
            let _ = read_ids(&bytes[..], "fuzz");
            let _ = read_fingerprints(&bytes[..], "fuzz");
            let _ = read_documents(&bytes[..], "fuzz", format, skip, &mut Batch::new());
        }

        #[test]
        fn parsers_never_panic(text in "\\PC*") {
            let _ = read(&text, false);
            let _ = read(&text, true);
            let _ = parse_fingerprint(&text);
        }

        #[test]
        fn hex_output_parses_back(fp: u64) {
            prop_assert_eq!(parse_fingerprint(&format_fingerprint(fp)), Ok(fp));
        }
    }
}
