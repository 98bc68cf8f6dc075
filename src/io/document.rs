//! What every reader of documents shares, whatever the format: the formats and their
//! detection ([`InputFormat`]), how documents are read ([`ReadOptions`]), and the one parser of a fingerprint as users write it
//! ([`parse_fingerprint`]).
//!
//! A fingerprint is written as exactly 16 hex digits, as `0x` followed by 1 to 16 hex digits,
//! or as a decimal u64 (in JSON also as a number); 16 decimal digits read as hex.

use std::path::Path;
use std::sync::Arc;

use crate::error::{Error, Result};
use crate::similarity::fingerprint::Scheme;

/// How errors name standard input.
pub(crate) const STDIN: &str = "<stdin>";

/// How documents (or queries) are written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InputFormat {
    /// `ID<TAB>FINGERPRINT` lines.
    Tsv,
    /// `{"id": ..., "fingerprint": ...}` or `{"id": ..., "text": ...}` lines.
    Jsonl,
    /// A whole input is one text document.
    Text,
    /// Queries only ([`crate::read_queries`]): one per line, a fingerprint or `ID<TAB>FINGERPRINT`.
    Fingerprints,
    /// A Parquet file with an id column and a fingerprint or a text column (feature
    /// `parquet`).
    Parquet,
}

impl InputFormat {
    /// Every format, by name.
    const NAMES: [(&'static str, InputFormat); 5] = [
        ("tsv", InputFormat::Tsv),
        ("jsonl", InputFormat::Jsonl),
        ("text", InputFormat::Text),
        ("parquet", InputFormat::Parquet),
        ("fingerprints", InputFormat::Fingerprints),
    ];

    /// The format named `name` (`tsv`, `jsonl`, `text`, `parquet` or `fingerprints`), as every
    /// client spells it (the CLI's `--format`, the server's `?format=`, Python's `format=`).
    ///
    /// ```
    /// use simhashdb::InputFormat;
    /// assert_eq!(InputFormat::parse("jsonl")?, InputFormat::Jsonl);
    /// assert!(InputFormat::parse("JSON").is_err());
    /// # Ok::<(), simhashdb::Error>(())
    /// ```
    pub fn parse(name: &str) -> Result<InputFormat> {
        Self::NAMES
            .iter()
            .find(|(n, _)| *n == name)
            .map(|&(_, format)| format)
            .ok_or_else(|| {
                Error::input(format!(
                    "unknown format {name:?}: use tsv, jsonl, text, parquet or fingerprints"
                ))
            })
    }

    /// The format's name ([`InputFormat::parse`] reads it back).
    pub fn name(self) -> &'static str {
        Self::NAMES
            .iter()
            .find(|&&(_, f)| f == self)
            .map(|&(n, _)| n)
            .expect("every format has a name")
    }

    /// The format of an input, by the first rule that applies: its name (`.jsonl`, `.tsv`,
    /// `.parquet`); parquet, when it starts with Parquet's magic bytes (`head` holds the
    /// input's first bytes); text, for a file found inside a directory; jsonl, when its first
    /// non-blank byte is `{`; else `fallback`.
    pub fn detect(
        path: Option<&Path>,
        in_directory: bool,
        head: &[u8],
        fallback: InputFormat,
    ) -> InputFormat {
        path.and_then(InputFormat::by_name)
            .or(is_parquet_head(head).then_some(InputFormat::Parquet))
            .or(in_directory.then_some(InputFormat::Text))
            .unwrap_or_else(|| match head.iter().find(|b| !b.is_ascii_whitespace()) {
                Some(b'{') => InputFormat::Jsonl,
                _ => fallback,
            })
    }

    /// The format a path's name says (`.jsonl`, `.tsv`, also before `.gz` or `.zst`), if it
    /// says one.
    pub(crate) fn by_name(path: &Path) -> Option<InputFormat> {
        let compressed = |e: &str| matches!(e, "gz" | "zst" | "zstd");
        let path = match path.extension().and_then(|e| e.to_str()) {
            Some(e) if compressed(e) => Path::new(path.file_stem()?),
            _ => path,
        };
        match path.extension().and_then(|e| e.to_str()) {
            Some("jsonl") => Some(InputFormat::Jsonl),
            Some("tsv") => Some(InputFormat::Tsv),
            Some("parquet") => Some(InputFormat::Parquet),
            _ => None,
        }
    }
}

/// How documents are read.
#[derive(Clone, Debug)]
pub struct ReadOptions {
    /// The format of every input; None detects it per input (see [`InputFormat::detect`]).
    pub format: Option<InputFormat>,
    /// The format of an input that detection does not recognise: tsv for `insert`, text for
    /// `fingerprint`.
    pub fallback: InputFormat,
    /// Skip (and count) invalid documents instead of failing.
    pub skip_invalid: bool,
    /// Fingerprints documents given as text; Err refuses them, saying why (shared, so the
    /// options stay cheap to clone).
    pub scheme: std::result::Result<Scheme, Arc<Error>>,
    /// The JSON field (or Parquet column) that holds the id.
    pub id_field: String,
    /// The JSON field (or Parquet column) that holds the fingerprint.
    pub fingerprint_field: String,
    /// The JSON field (or Parquet column) that holds the text, read when there is no
    /// fingerprint.
    pub text_field: String,
}

impl Default for ReadOptions {
    fn default() -> Self {
        ReadOptions {
            format: None,
            fallback: InputFormat::Tsv,
            skip_invalid: false,
            scheme: Err(Arc::new(Error::Scheme(
                "no fingerprint scheme was given for text documents".into(),
            ))),
            id_field: "id".to_string(),
            fingerprint_field: "fingerprint".to_string(),
            text_field: "text".to_string(),
        }
    }
}

/// Parses a fingerprint (see the module docs for the accepted forms).
pub fn parse_fingerprint(text: &str) -> Result<u64> {
    let bad = || {
        Error::input(format!(
            "{text:?} is not a fingerprint: expected 16 hex digits, 0x and 1 to 16 hex digits, \
             or a decimal number below 2^64"
        ))
    };
    let hex = |digits: &str| parse_hex(digits.as_bytes()).ok_or_else(bad);
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

/// 1 to 16 hex digits (either case), in one pass.
fn parse_hex(digits: &[u8]) -> Option<u64> {
    if !(1..=16).contains(&digits.len()) {
        return None;
    }
    digits.iter().try_fold(0u64, |value, &b| {
        let nibble = match b {
            b'0'..=b'9' => b - b'0',
            b'a'..=b'f' => b - b'a' + 10,
            b'A'..=b'F' => b - b'A' + 10,
            _ => return None,
        };
        Some(value << 4 | u64::from(nibble))
    })
}

/// Whether an input's first bytes are a Parquet file's magic bytes.
pub(crate) fn is_parquet_head(head: &[u8]) -> bool {
    head.starts_with(b"PAR1")
}

/// The problem an error states, without its place.
pub(crate) fn problem_of(e: Error) -> String {
    match e {
        Error::Input { problem, .. } => problem,
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn fingerprint_forms() {
        assert_eq!(parse_fingerprint("00000000000000ff").ok(), Some(255));
        assert_eq!(parse_fingerprint("0xFF").ok(), Some(255));
        assert_eq!(parse_fingerprint("255").ok(), Some(255));
        assert_eq!(
            parse_fingerprint("1234567890123456").ok(),
            Some(0x1234567890123456)
        );
        assert_eq!(
            parse_fingerprint("18446744073709551615").ok(),
            Some(u64::MAX)
        );
        assert_eq!(parse_fingerprint("ffffffffffffffff").ok(), Some(u64::MAX));
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

    proptest! {
        #[test]
        fn hex_parses_as_the_standard_parser_does(digits in "[0-9a-fA-FgxG ]{0,17}") {
            let standard = if (1..=16).contains(&digits.len())
                && digits.bytes().all(|b| b.is_ascii_hexdigit())
            {
                u64::from_str_radix(&digits, 16).ok()
            } else {
                None
            };
            prop_assert_eq!(parse_hex(digits.as_bytes()), standard);
        }

        #[test]
        fn hex_output_parses_back(fp: u64) {
            prop_assert_eq!(parse_fingerprint(&crate::similarity::fingerprint::hex::format(fp)).ok(), Some(fp));
        }
    }
}
