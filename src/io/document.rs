//! What every reader of documents shares, whatever the format: the formats and their
//! detection ([`InputFormat`]) and how documents are read ([`ReadOptions`]). Fingerprints
//! written as text are read by [`crate::io::notation`].

use std::path::Path;
use std::sync::Arc;

use crate::error::{Error, Result};
pub use crate::io::notation::FingerprintFormat;
use crate::io::notation::{name_of, named};
use crate::io::rejects::{MaxSkipped, Rejects};
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
    /// Queries only ([`crate::Source::queries`]): one per line, a fingerprint or `ID<TAB>FINGERPRINT`.
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

    /// The format of a body of documents sent over HTTP: `name` when given (`tsv`, `jsonl` or
    /// `parquet`: a body holds documents, not one text or a list of queries), else its media type (`content_type`, parameters
    /// ignored: JSON Lines or JSON as jsonl, `text/tab-separated-values` as tsv), else None:
    /// detected from its bytes.
    pub fn of_body(name: Option<&str>, content_type: Option<&str>) -> Result<Option<InputFormat>> {
        if let Some(name) = name {
            // An unknown name is refused as every client refuses it.
            let not = match InputFormat::parse(name)? {
                format @ (InputFormat::Tsv | InputFormat::Jsonl | InputFormat::Parquet) => {
                    return Ok(Some(format))
                }
                InputFormat::Text => "one text",
                InputFormat::Fingerprints => "a list of queries",
            };
            return Err(Error::input(format!(
                "a request body holds documents, not {not} ({name:?}): use tsv, jsonl or parquet"
            )));
        }
        let media_type = content_type.map(|v| {
            v.split(';')
                .next()
                .unwrap_or("")
                .trim()
                .to_ascii_lowercase()
        });
        Ok(match media_type.as_deref() {
            Some(
                "application/x-ndjson"
                | "application/jsonl"
                | "application/jsonlines"
                | "application/json-lines"
                | "application/json",
            ) => Some(InputFormat::Jsonl),
            Some("text/tab-separated-values") => Some(InputFormat::Tsv),
            _ => None,
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
    /// With `skip_invalid`, how many records a read may skip before it fails (all inputs of
    /// one call together): by default 1% of the records read, rounded up.
    pub max_skipped: MaxSkipped,
    /// Where skipped records go, each with its place and reason (see [`Rejects`]).
    pub rejects: Option<Rejects>,
    /// Whether an input file or stream with no record (empty, or only blank lines) is read
    /// with a warning (true, the default) or refused naming it (false: `insert` and
    /// `dedup --insert` without `--allow-empty`).
    pub allow_empty: bool,
    /// Fingerprints documents given as text; Err refuses them, saying why (shared, so the
    /// options stay cheap to clone).
    pub scheme: std::result::Result<Scheme, Arc<Error>>,
    /// The names of a TSV input's columns, to find the id and fingerprint by their field
    /// names in; None: the first line names them when it holds both field names (a header),
    /// else they are the first two. Other columns are the record's own.
    pub columns: Option<Vec<String>>,
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
            max_skipped: MaxSkipped::default(),
            rejects: None,
            allow_empty: true,
            scheme: Err(Arc::new(Error::Scheme(
                "no fingerprint scheme was given for text documents".into(),
            ))),
            columns: None,
            id_field: "id".to_string(),
            fingerprint_field: "fingerprint".to_string(),
            fingerprint_format: FingerprintFormat::Auto,
            text_field: "text".to_string(),
        }
    }
}

impl ReadOptions {
    /// These options with the store's scheme for the documents given as text: the store's
    /// scheme is the only one its fingerprints can be compared under.
    pub(crate) fn with_store_scheme(
        &self,
        store_scheme: Result<Scheme>,
        dir: &Path,
    ) -> ReadOptions {
        ReadOptions {
            scheme: store_scheme
                .map_err(|e| Arc::new(Error::Scheme(format!("{}: {e}", dir.display())))),
            ..self.clone()
        }
    }

    /// What becomes of invalid records, as every client's flags say it: skipped when
    /// `skip_invalid`, or when a limit or a rejects list is given (either implies it); at most
    /// `max_skipped` of them (default 1%); each written to `rejects`.
    pub fn skipping(
        self,
        skip_invalid: bool,
        max_skipped: Option<MaxSkipped>,
        rejects: Option<Rejects>,
    ) -> Self {
        ReadOptions {
            skip_invalid: skip_invalid || max_skipped.is_some() || rejects.is_some(),
            max_skipped: max_skipped.unwrap_or_default(),
            rejects,
            ..self
        }
    }
}

/// Whether an input's first bytes are a Parquet file's magic bytes.
pub(crate) fn is_parquet_head(head: &[u8]) -> bool {
    head.starts_with(b"PAR1")
}
