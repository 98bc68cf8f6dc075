//! What every reader of documents shares, whatever the format: the formats and their
//! detection ([`InputFormat`]), how documents are read ([`ReadOptions`]), and the one parser of a fingerprint as users write it
//! ([`parse_fingerprint`]).
//!
//! A fingerprint is written as exactly 16 hex digits, as `0x` followed by 1 to 16 hex digits,
//! or as a decimal u64 (in JSON also as a number); 16 decimal digits read as hex unless the
//! reader is told [`FingerprintFormat::Decimal`].

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
        named(&Self::NAMES, name).ok_or_else(|| {
            Error::input(format!(
                "unknown format {name:?}: use tsv, jsonl, text, parquet or fingerprints"
            ))
        })
    }

    /// The format's name ([`InputFormat::parse`] reads it back).
    pub fn name(self) -> &'static str {
        name_of(&Self::NAMES, self)
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
    /// How fingerprints written as text are read (TSV fields, JSON strings, Parquet strings,
    /// query lines).
    pub fingerprint_format: FingerprintFormat,
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
            fingerprint_format: FingerprintFormat::Auto,
            text_field: "text".to_string(),
        }
    }
}

/// The value `name` names in `names`.
fn named<T: Copy>(names: &[(&'static str, T)], name: &str) -> Option<T> {
    names
        .iter()
        .find(|(n, _)| *n == name)
        .map(|&(_, value)| value)
}

/// The name of `value` in `names`, which names every value.
fn name_of<T: Copy + PartialEq>(names: &[(&'static str, T)], value: T) -> &'static str {
    names
        .iter()
        .find(|&&(_, v)| v == value)
        .map(|&(n, _)| n)
        .expect("every value has a name")
}

/// Parses a fingerprint as [`FingerprintFormat::Auto`] reads it: exactly 16 characters are
/// hex, `0x` starts hex, other digit strings are decimal.
pub fn parse_fingerprint(text: &str) -> Result<u64> {
    FingerprintFormat::Auto.read(text)
}

/// How a fingerprint written as text is read. JSON numbers (and Parquet integer columns)
/// are numbers whatever the format: u64, or i64 taken as the same 64 bits.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum FingerprintFormat {
    /// The rule: exactly 16 characters are hex digits (as simhashdb writes fingerprints), `0x`
    /// followed by 1 to 16 hex digits is hex, any other string of digits is a decimal number
    /// below 2^64. So a 16-digit decimal number reads as hex: say `decimal` for those.
    #[default]
    Auto,
    /// 1 to 16 hex digits, with or without `0x`.
    Hex,
    /// A decimal number below 2^64 (at most 20 digits).
    Decimal,
}

impl FingerprintFormat {
    /// Every format, by name.
    const NAMES: [(&'static str, FingerprintFormat); 3] = [
        ("auto", FingerprintFormat::Auto),
        ("hex", FingerprintFormat::Hex),
        ("decimal", FingerprintFormat::Decimal),
    ];

    /// The format named `name`: `auto`, `hex` or `decimal`, as every client spells it (the
    /// CLI's `--fingerprint-format`, the server's `?fingerprint_format=`, Python's
    /// `fingerprint_format=`).
    pub fn parse(name: &str) -> Result<FingerprintFormat> {
        named(&Self::NAMES, name).ok_or_else(|| {
            Error::input(format!(
                "unknown fingerprint format {name:?}: use auto, hex or decimal"
            ))
        })
    }

    /// The format's name ([`FingerprintFormat::parse`] reads it back).
    pub fn name(self) -> &'static str {
        name_of(&Self::NAMES, self)
    }

    /// `text` as this format reads exactly 16 hex digits (as simhashdb writes fingerprints),
    /// or None when the format reads them otherwise (decimal) or they are not 16 hex digits;
    /// [`FingerprintFormat::read`] gives the same value for each Some, and says why for the rest.
    pub(crate) fn read_16_hex_digits(self, text: &[u8]) -> Option<u64> {
        match self {
            FingerprintFormat::Auto | FingerprintFormat::Hex if text.len() == 16 => parse_hex(text),
            _ => None,
        }
    }

    /// Reads `text` as a fingerprint written in this format.
    ///
    /// ```
    /// use simhashdb::FingerprintFormat;
    /// assert_eq!(FingerprintFormat::Auto.read("0000000000000100")?, 256);
    /// assert_eq!(FingerprintFormat::Decimal.read("0000000000000100")?, 100);
    /// assert_eq!(FingerprintFormat::Hex.read("ff")?, 255);
    /// # Ok::<(), simhashdb::Error>(())
    /// ```
    pub fn read(self, text: &str) -> Result<u64> {
        let bad = |expected: &str| {
            Error::input(format!(
                "{text:?} is not a fingerprint: expected {expected}"
            ))
        };
        let hex_digits = text.strip_prefix("0x").or_else(|| text.strip_prefix("0X"));
        let decimal = |text: &str| {
            (!text.is_empty() && text.len() <= 20 && text.bytes().all(|b| b.is_ascii_digit()))
                .then(|| text.parse::<u64>().ok())
                .flatten()
        };
        match self {
            FingerprintFormat::Auto => {
                let expected = "16 hex digits, 0x and 1 to 16 hex digits, or a decimal number \
                                below 2^64";
                match hex_digits {
                    Some(digits) => parse_hex(digits.as_bytes()),
                    None if text.len() == 16 => parse_hex(text.as_bytes()),
                    None => decimal(text),
                }
                .ok_or_else(|| bad(expected))
            }
            FingerprintFormat::Hex => {
                parse_hex(hex_digits.unwrap_or(text).as_bytes()).ok_or_else(|| {
                    bad("1 to 16 hex digits, with or without 0x (--fingerprint-format hex)")
                })
            }
            FingerprintFormat::Decimal => decimal(text)
                .ok_or_else(|| bad("a decimal number below 2^64 (--fingerprint-format decimal)")),
        }
    }

    /// A JSON value as a fingerprint: a number (u64, or i64 taken as the same 64 bits) or a
    /// string read in this format.
    pub fn read_json(self, value: &serde_json::Value) -> Result<u64> {
        match value {
            serde_json::Value::String(text) => self.read(text),
            serde_json::Value::Number(n) => n
                .as_u64()
                .or_else(|| n.as_i64().map(|v| v as u64))
                .ok_or_else(|| {
                    Error::input(format!(
                        "fingerprint {n} is not an integer in -2^63..2^64 (a u64, or an i64 \
                         taken as the same 64 bits)"
                    ))
                }),
            other => Err(Error::input(format!(
                "a fingerprint is a string or a number, found {other}"
            ))),
        }
    }
}

/// 1 to 16 hex digits (either case), in one pass.
fn parse_hex(digits: &[u8]) -> Option<u64> {
    if !(1..=16).contains(&digits.len()) {
        return None;
    }
    // A table lookup per digit and one check at the end: a branch per digit on which range
    // it falls in was mispredicted for random fingerprints (a quarter of a TSV read's CPU).
    let (mut value, mut invalid) = (0u64, 0u8);
    for &b in digits {
        let nibble = HEX_VALUE[usize::from(b)];
        invalid |= nibble;
        value = value << 4 | u64::from(nibble & 0x0f);
    }
    (invalid & 0xf0 == 0).then_some(value)
}

/// Each byte's value as a hex digit, or 0xff for a byte that is not one.
const HEX_VALUE: [u8; 256] = {
    let mut table = [0xff; 256];
    let mut b = 0;
    while b < 256 {
        table[b] = match b as u8 {
            c @ b'0'..=b'9' => c - b'0',
            c @ b'a'..=b'f' => c - b'a' + 10,
            c @ b'A'..=b'F' => c - b'A' + 10,
            _ => 0xff,
        };
        b += 1;
    }
    table
};

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

    #[test]
    fn fingerprint_formats() {
        use FingerprintFormat::{Auto, Decimal, Hex};
        let cases: [(&str, FingerprintFormat, Option<u64>); 10] = [
            ("1234567890123456", Auto, Some(0x1234567890123456)),
            ("1234567890123456", Decimal, Some(1234567890123456)),
            ("1234567890123456", Hex, Some(0x1234567890123456)),
            ("ff", Hex, Some(255)),
            ("0XfF", Hex, Some(255)),
            ("ff", Decimal, None),
            ("0x10", Decimal, None),
            ("12345678901234567", Hex, None),
            ("18446744073709551615", Decimal, Some(u64::MAX)),
            ("18446744073709551616", Decimal, None),
        ];
        for (text, format, expected) in cases {
            assert_eq!(format.read(text).ok(), expected, "{text:?} as {format:?}");
        }
        for format in [Auto, Hex, Decimal] {
            assert_eq!(FingerprintFormat::parse(format.name()).ok(), Some(format));
            // JSON numbers are numbers whatever the format; int64 keeps its bits.
            assert_eq!(
                format.read_json(&serde_json::json!(-1)).ok(),
                Some(u64::MAX)
            );
            assert_eq!(
                format.read_json(&serde_json::json!(u64::MAX)).ok(),
                Some(u64::MAX)
            );
            assert!(format.read_json(&serde_json::json!(1.5)).is_err());
            assert!(format.read_json(&serde_json::json!(null)).is_err());
        }
        assert!(FingerprintFormat::parse("HEX").is_err());
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
