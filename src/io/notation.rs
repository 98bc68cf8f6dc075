//! The notation of an input's fingerprints under [`FingerprintFormat::Auto`]: hex or
//! decimal, decided once per input (a file, a request, a Parquet column) from all its
//! values, never value by value.
//!
//! A value that only one notation reads is evidence:
//! - hex: it holds a letter `a`-`f`, or it is 16 characters starting with `0` (zero-padded
//!   hex, as simhashdb writes it; decimal printers do not pad);
//! - decimal: it has 17 to 20 digits (hex holds at most 16).
//!
//! `0x` values are hex and JSON or Parquet integers are numbers; neither is evidence. The
//! rest are digit strings of at most 16 digits that both notations read: they follow the
//! evidence. An input with evidence of both is an error naming a line of each. An input
//! with none decides by length (16 digits read as hex, as simhashdb writes fingerprints;
//! fewer as decimal), is an error when it mixes the two lengths, and is an error when it
//! holds more than [`SHORT_INPUT`] values that either printer writes (15 or 16 digits);
//! a short one is a warning instead.
//!
//! Readers of streams read an ambiguous value as hex for a start and convert it when the
//! input turns out decimal. They decide once the first group of chunks is read (16 MiB on
//! two cores): evidence found after that which contradicts the decision is an error.

use crate::error::{problem_of, Error, Result};

/// Parses one fingerprint as [`FingerprintFormat::Auto`] reads an input of one value: hex
/// when it has a letter, `0x` or 16 characters; decimal otherwise. A list is read by
/// [`FingerprintFormat::read_many`], which decides its notation from all its values.
#[cfg(test)]
fn parse_fingerprint(text: &str) -> Result<u64> {
    FingerprintFormat::Auto.read(text)
}

/// How a fingerprint written as text is read. JSON numbers (and Parquet integer columns)
/// are numbers whatever the format: u64, or i64 taken as the same 64 bits.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum FingerprintFormat {
    /// Hex or decimal, decided once per input from all its values (see this module's
    /// comment and `docs/reliability.md`): a value with a letter, or 16 digits starting with
    /// 0, is hex; one of 17 to 20 digits is decimal; digit strings follow them. `0x` is
    /// always hex. [`FingerprintFormat::read`] reads one value alone: 16 characters as hex.
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
            FingerprintFormat::Auto => match read(self, text)? {
                (fp, Kind::Ambiguous { digits }) if digits < 16 => Ok(decimal_of_hex_reading(fp)),
                (fp, _) => Ok(fp),
            },
            FingerprintFormat::Hex => {
                parse_hex(hex_digits.unwrap_or(text).as_bytes()).ok_or_else(|| {
                    bad("1 to 16 hex digits, with or without 0x (--fingerprint-format hex)")
                })
            }
            FingerprintFormat::Decimal => decimal(text)
                .ok_or_else(|| bad("a decimal number below 2^64 (--fingerprint-format decimal)")),
        }
    }

    /// Reads a list of fingerprints given as one input (a command's arguments, a request's
    /// list): under `Auto` their notation is decided from all of them at once, as for a file
    /// (see `docs/reliability.md`). Returns the fingerprints and a warning when the list
    /// could have been written in either notation; an error names the value (counted from 1).
    ///
    /// ```
    /// use simhashdb::FingerprintFormat;
    /// // A 20-digit value shows the list is decimal: its 16-digit value is decimal too.
    /// let (fps, warning) = FingerprintFormat::Auto
    ///     .read_many(["12345678901234567890", "1234567890123456"])?;
    /// assert_eq!(fps, [12345678901234567890, 1234567890123456]);
    /// assert!(warning.is_none());
    /// # Ok::<(), simhashdb::Error>(())
    /// ```
    pub fn read_many<'t>(
        self,
        texts: impl IntoIterator<Item = &'t str>,
    ) -> Result<(Vec<u64>, Option<String>)> {
        let values = texts.into_iter().map(|text| Ok(Given::Text(text)));
        read_all(self, "value", values)
    }

    /// [`FingerprintFormat::read_many`] of JSON values, each a number or a string (see
    /// [`FingerprintFormat::read_json`]): numbers are numbers, the strings decide their
    /// notation together.
    pub fn read_json_many(
        self,
        values: &[serde_json::Value],
    ) -> Result<(Vec<u64>, Option<String>)> {
        let values = values.iter().map(|value| match value {
            serde_json::Value::String(text) => Ok(Given::Text(text)),
            number => self.read_json(number).map(Given::Number),
        });
        read_all(self, "value", values)
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

/// The value `name` names in `names`.
pub(crate) fn named<T: Copy>(names: &[(&'static str, T)], name: &str) -> Option<T> {
    names
        .iter()
        .find(|(n, _)| *n == name)
        .map(|&(_, value)| value)
}

/// The name of `value` in `names`, which names every value.
pub(crate) fn name_of<T: Copy + PartialEq>(names: &[(&'static str, T)], value: T) -> &'static str {
    names
        .iter()
        .find(|&&(_, v)| v == value)
        .map(|&(n, _)| n)
        .expect("every value has a name")
}

/// The most values an input without evidence may hold that either notation's printer writes
/// (15 or 16 digits) and still be read, with a warning: more is an error.
pub(crate) const SHORT_INPUT: u64 = 16;

/// What one value says about its input's notation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    /// Read by an explicit format, a `0x` prefix, or as a number: no evidence.
    Settled,
    /// Only hex reads it.
    Hex,
    /// Only decimal reads it.
    Decimal,
    /// A digit string of `digits` digits (at most 16, no leading zero unless it is `0`):
    /// read as hex until the input turns out decimal.
    Ambiguous { digits: u8 },
}

/// Reads `text` in `format`: the value (for an ambiguous one, its hex reading) and its kind.
pub(crate) fn read(format: FingerprintFormat, text: &str) -> Result<(u64, Kind)> {
    if format != FingerprintFormat::Auto {
        return format.read(text).map(|fp| (fp, Kind::Settled));
    }
    let bytes = text.as_bytes();
    if bytes.len() > 2 && bytes[0] == b'0' && matches!(bytes[1], b'x' | b'X') {
        return FingerprintFormat::Hex
            .read(text)
            .map(|fp| (fp, Kind::Settled));
    }
    if bytes.len() > 16 {
        return FingerprintFormat::Decimal
            .read(text)
            .map(|fp| (fp, Kind::Decimal))
            .map_err(|_| not_a_fingerprint(text));
    }
    let value = FingerprintFormat::Hex
        .read(text)
        .map_err(|_| not_a_fingerprint(text))?;
    Ok((value, kind_of_hex(bytes, value)))
}

/// The kind of 1 to 16 hex digits `bytes`, whose hex reading is `value`.
pub(crate) fn kind_of_hex(bytes: &[u8], value: u64) -> Kind {
    // A nibble is a letter (10..=15) when its bit 3 and its bit 2 or 1 are set.
    const BIT3: u64 = 0x8888_8888_8888_8888;
    let letters = (value & BIT3) & ((value << 1 | value << 2) & BIT3);
    if letters != 0 || (bytes.len() == 16 && bytes[0] == b'0') {
        Kind::Hex
    } else {
        Kind::Ambiguous {
            digits: bytes.len() as u8,
        }
    }
}

fn not_a_fingerprint(text: &str) -> Error {
    Error::input(format!(
        "{text:?} is not a fingerprint: expected 1 to 16 hex digits, 0x and 1 to 16 hex \
         digits, or a decimal number below 2^64"
    ))
}

/// A value as it was written, from what [`read`] gave for it (hex is given without the
/// leading zeros it may have had, unless it had 16 digits).
fn written(fingerprint: u64, kind: Kind) -> String {
    match kind {
        Kind::Decimal => fingerprint.to_string(),
        Kind::Hex if fingerprint.leading_zeros() >= 4 => format!("{fingerprint:016x}"),
        _ => format!("{fingerprint:x}"),
    }
}

/// The decimal reading of a digit string of at most 16 digits, given its hex reading.
pub(crate) fn decimal_of_hex_reading(hex: u64) -> u64 {
    let digits = 16 - (hex.leading_zeros() / 4) as usize;
    (0..digits.max(1))
        .rev()
        .fold(0, |value, i| value * 10 + (hex >> (4 * i) & 0xf))
}

/// A value of an input, where it is, as errors and warnings name it.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Sighting {
    line: u64,
    /// The value (or its line), quoted and cut short.
    text: String,
}

impl Sighting {
    fn new(line: u64, text: String) -> Sighting {
        const SHOWN: usize = 80;
        let text = match text.char_indices().nth(SHOWN) {
            Some((end, _)) => format!("{:?}...", &text[..end]),
            None => format!("{text:?}"),
        };
        Sighting { line, text }
    }
}

/// The notation evidence of part of an input: the first value of each kind and how many
/// ambiguous values there were. Parts merge in input order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Evidence {
    hex: Option<Sighting>,
    decimal: Option<Sighting>,
    sixteen: Option<Sighting>,
    shorter: Option<Sighting>,
    /// The first ambiguous value of 15 or 16 digits, and how many there were.
    printed: Option<Sighting>,
    printed_count: u64,
}

impl Evidence {
    /// Notes a value `fingerprint` (as [`read`] gave it) of `kind` at `line`.
    pub(crate) fn note(&mut self, kind: Kind, line: u64, fingerprint: u64) {
        let (slot, printed) = match kind {
            Kind::Settled => return,
            Kind::Hex => (&mut self.hex, false),
            Kind::Decimal => (&mut self.decimal, false),
            Kind::Ambiguous { digits: 16 } => (&mut self.sixteen, true),
            Kind::Ambiguous { digits } => (&mut self.shorter, digits == 15),
        };
        self.printed_count += u64::from(printed);
        let first_printed = printed && self.printed.is_none();
        if slot.is_none() || first_printed {
            let sighting = Sighting::new(line, written(fingerprint, kind));
            if first_printed {
                self.printed = Some(sighting.clone());
            }
            if slot.is_none() {
                *slot = Some(sighting);
            }
        }
    }

    /// Adds the evidence of the part of the input after this one.
    pub(crate) fn merge(&mut self, later: Evidence) {
        fn first(slot: &mut Option<Sighting>, later: Option<Sighting>) {
            if slot.is_none() {
                *slot = later;
            }
        }
        first(&mut self.hex, later.hex);
        first(&mut self.decimal, later.decimal);
        first(&mut self.sixteen, later.sixteen);
        first(&mut self.shorter, later.shorter);
        first(&mut self.printed, later.printed);
        self.printed_count += later.printed_count;
    }
}

/// The notation an input's ambiguous values are read in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Notation {
    Hex,
    Decimal,
}

/// Decides the notation of one input as its values arrive (see the module's comment).
#[derive(Debug)]
pub(crate) struct Decider {
    source: String,
    /// What "line" means in messages: "line" or "row".
    unit: &'static str,
    seen: Evidence,
    decided: Option<Notation>,
}

impl Decider {
    /// A decider for the input `source`, whose values are numbered by `unit` ("line", "row").
    pub(crate) fn new(source: &str, unit: &'static str) -> Decider {
        Decider {
            source: source.to_string(),
            unit,
            seen: Evidence::default(),
            decided: None,
        }
    }

    /// Adds evidence without deciding (a stream's first group, before its chunks settle).
    pub(crate) fn observe(&mut self, evidence: Evidence) {
        self.seen.merge(evidence);
    }

    /// The notation, decided from the evidence seen so far if it was not yet; an error when
    /// the evidence contradicts itself or an earlier decision.
    pub(crate) fn notation(&mut self) -> Result<Notation> {
        let now = self.decide()?;
        match self.decided {
            Some(earlier) if earlier != now => {
                // Only evidence changes a decision: `now`'s is there.
                let evidence = match now {
                    Notation::Hex => &self.seen.hex,
                    Notation::Decimal => &self.seen.decimal,
                };
                let sighting = evidence.as_ref().expect("a decision changes on evidence");
                Err(self.error_at(
                    sighting.line,
                    format!(
                        "{} reads only as {}, but the input was read as {} from its first \
                         values: one input holds one notation (say --fingerprint-format hex \
                         or decimal)",
                        sighting.text,
                        name(now),
                        name(earlier),
                    ),
                ))
            }
            _ => {
                self.decided = Some(now);
                Ok(now)
            }
        }
    }

    /// Adds a part's evidence and the notation its ambiguous values are read in.
    pub(crate) fn settle(&mut self, evidence: Evidence) -> Result<Notation> {
        self.seen.merge(evidence);
        self.notation()
    }

    /// Once the whole input is read: an error when it was ambiguous and long, else a
    /// warning when it was ambiguous, else None.
    pub(crate) fn finish(&mut self) -> Result<Option<String>> {
        let notation = self.notation()?;
        let seen = &self.seen;
        if seen.hex.is_some() || seen.decimal.is_some() {
            return Ok(None);
        }
        let Some(printed) = &seen.printed else {
            return Ok(None);
        };
        let problem = format!(
            "{} reads as {} ({} value{} of 15 or 16 digits and none that only hex or only \
             decimal reads: either notation could have written them); say \
             --fingerprint-format hex or decimal",
            printed.text,
            name(notation),
            seen.printed_count,
            if seen.printed_count == 1 { "" } else { "s" },
        );
        let at = self.error_at(printed.line, problem);
        match seen.printed_count > SHORT_INPUT {
            true => Err(at),
            false => Ok(Some(format!("warning: {at}"))),
        }
    }

    fn decide(&self) -> Result<Notation> {
        let seen = &self.seen;
        match (&seen.hex, &seen.decimal, &seen.sixteen, &seen.shorter) {
            (Some(hex), Some(decimal), ..) => {
                let (first, second) = match hex.line < decimal.line {
                    true => ((hex, Notation::Hex), (decimal, Notation::Decimal)),
                    false => ((decimal, Notation::Decimal), (hex, Notation::Hex)),
                };
                Err(self.error_at(
                    second.0.line,
                    format!(
                        "{} reads only as {}, but {} {} ({}) reads only as {}: one input holds \
                         one notation (split it, or say --fingerprint-format hex or decimal)",
                        second.0.text,
                        name(second.1),
                        self.unit,
                        first.0.line,
                        first.0.text,
                        name(first.1),
                    ),
                ))
            }
            (Some(_), None, ..) => Ok(Notation::Hex),
            (None, Some(_), ..) => Ok(Notation::Decimal),
            (None, None, Some(sixteen), Some(shorter)) => Err(self.error_at(
                sixteen.line.max(shorter.line),
                format!(
                    "the input mixes 16-digit values ({} {}: {}) with shorter ones ({} {}: \
                     {}) and holds none that only hex or only decimal reads, so its \
                     notation cannot be told; say --fingerprint-format hex or decimal",
                    self.unit, sixteen.line, sixteen.text, self.unit, shorter.line, shorter.text
                ),
            )),
            (None, None, Some(_), None) => Ok(Notation::Hex),
            (None, None, None, _) => Ok(Notation::Decimal),
        }
    }

    /// An error at value `line`: `source:line: problem`, or `source: row N: problem` (a
    /// list without a source: `value N: problem`).
    fn error_at(&self, line: u64, problem: String) -> Error {
        match (self.unit, self.source.as_str()) {
            ("line", source) => Error::input_at(source, Some(line), problem),
            (unit, "") => Error::input(format!("{unit} {line}: {problem}")),
            (unit, source) => Error::input_at(source, None, format!("{unit} {line}: {problem}")),
        }
    }
}

fn name(notation: Notation) -> &'static str {
    match notation {
        Notation::Hex => "hex",
        Notation::Decimal => "decimal",
    }
}

/// A value of a list of fingerprints: text, or a number already read.
pub(crate) enum Given<'t> {
    Text(&'t str),
    Number(u64),
}

/// Reads a whole list of fingerprints as one input (a request's list, a command's
/// arguments), value `i + 1` being `values[i]`. Returns the fingerprints and a warning, if
/// any; an error names the value's number, as "{unit} N".
pub(crate) fn read_all<'t>(
    format: FingerprintFormat,
    unit: &'static str,
    values: impl IntoIterator<Item = Result<Given<'t>>>,
) -> Result<(Vec<u64>, Option<String>)> {
    let mut evidence = Evidence::default();
    let mut fingerprints = Vec::new();
    let mut ambiguous = Vec::new();
    for (i, value) in values.into_iter().enumerate() {
        let line = i as u64 + 1;
        let at = |e: Error| Error::input(format!("{unit} {line}: {}", problem_of(e)));
        let fingerprint = match value.map_err(at)? {
            Given::Number(fingerprint) => fingerprint,
            Given::Text(text) => {
                let (fingerprint, kind) = read(format, text).map_err(at)?;
                evidence.note(kind, line, fingerprint);
                if let Kind::Ambiguous { .. } = kind {
                    ambiguous.push(i);
                }
                fingerprint
            }
        };
        fingerprints.push(fingerprint);
    }
    let mut decider = Decider::new("", unit);
    if decider.settle(evidence)? == Notation::Decimal {
        for i in ambiguous {
            fingerprints[i] = decimal_of_hex_reading(fingerprints[i]);
        }
    }
    Ok((fingerprints, decider.finish()?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn kinds() {
        let kind = |text| read(FingerprintFormat::Auto, text).map(|(_, k)| k).ok();
        assert_eq!(kind("00000000000000ff"), Some(Kind::Hex));
        assert_eq!(kind("0000000000000100"), Some(Kind::Hex));
        assert_eq!(kind("ab"), Some(Kind::Hex));
        assert_eq!(kind("12345678901234567"), Some(Kind::Decimal));
        assert_eq!(
            kind("1234567890123456"),
            Some(Kind::Ambiguous { digits: 16 })
        );
        assert_eq!(kind("255"), Some(Kind::Ambiguous { digits: 3 }));
        assert_eq!(kind("0xff"), Some(Kind::Settled));
        assert_eq!(kind("123456789012345678901"), None);
        assert_eq!(kind("18446744073709551616"), None);
        assert_eq!(kind(""), None);
    }

    proptest! {
        #[test]
        fn decimal_of_hex_reading_is_the_decimal_reading(n in 0u64..10_000_000_000_000_000) {
            let text = n.to_string();
            let hex = u64::from_str_radix(&text, 16).unwrap();
            prop_assert_eq!(decimal_of_hex_reading(hex), n);
        }

        #[test]
        fn letters_are_found(value: u64) {
            let text = format!("{value:x}");
            let letters = text.bytes().any(|b| b.is_ascii_alphabetic());
            let kind = kind_of_hex(text.as_bytes(), value);
            prop_assert_eq!(kind == Kind::Hex, letters);
        }
    }
}

#[cfg(test)]
mod format_tests {
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
