//! The flags every command that reads documents shares: how text is fingerprinted and where
//! ids and text are found, and the progress shown while reading.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::Result;
use simhashdb::{
    Batch, FingerprintFormat, InputFormat, MaxSkipped, ReadOptions, ReadSummary, Rejects, Scheme,
};

use crate::exit_codes::usage;
use crate::progress;

/// How text becomes a fingerprint (`init` records it in the store).
#[derive(clap::Args, Clone, Default)]
pub struct SchemeArgs {
    /// Fingerprint scheme: words (word shingles), chars (character n-grams) or seomoz
    /// (simhash-py 0.4, bit for bit), or a full name such as words-3-set [default: words,
    /// shingle 2, weight minhash].
    #[arg(long, value_name = "NAME")]
    pub scheme: Option<String>,
    /// Shingle size: words per shingle, or characters per n-gram.
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    pub shingle: Option<u8>,
    /// How features make the bits: minhash (1-bit minhash of the distinct shingles, the
    /// default), or the simhash vote of each distinct shingle once (set) or of every one
    /// (count).
    #[arg(long, value_name = "W")]
    pub weight: Option<String>,
}

impl SchemeArgs {
    /// The scheme the flags name (the default when none is given).
    pub fn scheme(&self) -> Result<Scheme> {
        Scheme::parse(self.scheme.as_deref(), self.shingle, self.weight.as_deref())
            .map_err(|e| usage(e.to_string()))
    }
}

/// Where JSON Lines and Parquet documents keep their id, fingerprint and text.
#[derive(clap::Args, Clone)]
pub struct FieldArgs {
    /// JSON field or Parquet column holding the id (a string, or an integer taken as its
    /// decimal text).
    #[arg(
        long,
        value_name = "NAME",
        default_value = "id",
        visible_alias = "id-column"
    )]
    pub id_field: String,
    /// JSON field or Parquet column holding the fingerprint.
    #[arg(
        long,
        value_name = "NAME",
        default_value = "fingerprint",
        visible_alias = "fingerprint-column"
    )]
    pub fingerprint_field: String,
    /// JSON field or Parquet column holding the text (read when there is no fingerprint).
    #[arg(
        long,
        value_name = "NAME",
        default_value = "text",
        visible_alias = "text-column"
    )]
    pub text_field: String,
    /// The names of a TSV input's columns, comma-separated (such as url,fingerprint,id): the
    /// id and fingerprint are found by --id-field and --fingerprint-field. Without it a first
    /// line naming both is a header; else they are the first two columns. Other columns are
    /// the record's own (dedup passes them on).
    #[arg(long, value_name = "NAMES", value_delimiter = ',')]
    pub columns: Vec<String>,
    /// How fingerprints written as text are read: auto (hex or decimal, decided once per
    /// input from all its values: a letter means hex, 17 to 20 digits decimal; see
    /// docs/reliability.md), hex (1 to 16 hex digits, 0x optional) or decimal. JSON and
    /// Parquet numbers are numbers whatever this says (an int64 is taken as the same 64 bits).
    #[arg(long, value_name = "FORMAT", default_value = "auto",
          value_parser = parse_fingerprint_format)]
    pub fingerprint_format: FingerprintFormat,
}

impl FieldArgs {
    /// Read options with these fields; `skip_invalid` skips without a limit (`insert`,
    /// `dedup` and `query` set theirs with [`SkipArgs::apply`]).
    pub fn options(
        &self,
        scheme: std::result::Result<Scheme, Arc<simhashdb::Error>>,
        skip_invalid: bool,
    ) -> ReadOptions {
        ReadOptions {
            scheme,
            skip_invalid,
            id_field: self.id_field.clone(),
            fingerprint_field: self.fingerprint_field.clone(),
            text_field: self.text_field.clone(),
            fingerprint_format: self.fingerprint_format,
            columns: (!self.columns.is_empty()).then(|| self.columns.clone()),
            max_skipped: MaxSkipped::Percent(100.0),
            ..ReadOptions::default()
        }
    }
}

/// What becomes of invalid records: `insert`, `dedup` and `query` take these flags.
#[derive(clap::Args, Clone, Debug)]
pub struct SkipArgs {
    /// Skip invalid documents instead of failing: count them, name the first few on
    /// stderr, list every one with --rejects, and fail past --max-skipped.
    #[arg(long)]
    pub skip_invalid: bool,
    /// Fail, taking nothing from the input, when more than N records (or P% of the records
    /// read, rounded up) are invalid [default: 1%]. Implies --skip-invalid.
    #[arg(long, value_name = "N|P%", value_parser = parse_max_skipped)]
    pub max_skipped: Option<MaxSkipped>,
    /// Write every skipped record to FILE, as read, with its place and why:
    /// SOURCE<TAB>LINE<TAB>REASON<TAB>RECORD. Implies --skip-invalid.
    #[arg(long, value_name = "FILE")]
    pub rejects: Option<PathBuf>,
}

impl SkipArgs {
    /// Sets what becomes of invalid records in `options` (creating the rejects file).
    pub fn apply(&self, options: &mut ReadOptions) -> Result<()> {
        let rejects = self.rejects.as_deref().map(Rejects::create).transpose()?;
        *options = std::mem::take(options).skipping(self.skip_invalid, self.max_skipped, rejects);
        Ok(())
    }
}

fn parse_max_skipped(text: &str) -> std::result::Result<MaxSkipped, String> {
    MaxSkipped::parse(text).map_err(|e| e.to_string())
}

/// The scheme text is fingerprinted with in the store at `store`, or why there is none.
pub fn store_scheme(
    scheme: simhashdb::Result<Scheme>,
    store: &Path,
) -> std::result::Result<Scheme, Arc<simhashdb::Error>> {
    scheme.map_err(|e| {
        Arc::new(simhashdb::Error::Scheme(format!(
            "{}: {e}",
            store.display()
        )))
    })
}

/// Reads `inputs` (none means stdin) into `batch` with a byte-count progress bar, and reports
/// the first skipped documents on stderr.
pub fn read(inputs: &[PathBuf], options: &ReadOptions, batch: &mut Batch) -> Result<ReadSummary> {
    let stdin = [PathBuf::from("-")];
    let inputs = if inputs.is_empty() {
        &stdin[..]
    } else {
        inputs
    };
    let bar = progress::reading(inputs, "reading");
    let summary = simhashdb::Source::Files(inputs).read(options, batch, &|n| bar.inc(n))?;
    bar.finish_and_clear();
    tell_read(&summary.first_skipped, &summary.warnings);
    Ok(summary)
}

/// "N invalid lines", or files, or records of both kinds, as a summary says it.
pub fn skipped_records(skipped: u64, files: u64) -> String {
    match (skipped, files) {
        (n, 0) => format!("{n} invalid lines"),
        (n, f) if n == f => format!("{n} invalid files"),
        (n, f) => format!("{n} invalid records ({f} of them files)"),
    }
}

/// Says on stderr which records a read skipped (the first few) and what it warned of.
pub fn tell_read(first_skipped: &[String], warnings: &[String]) {
    for msg in first_skipped {
        eprintln!("simhashdb: skipped {msg}");
    }
    for warning in warnings {
        eprintln!("simhashdb: {warning}");
    }
}

/// Pairs `--id` and `--text` flags into documents of `batch`.
pub fn push_texts(
    ids: &[String],
    texts: &[String],
    scheme: &Scheme,
    batch: &mut Batch,
) -> Result<()> {
    if ids.len() != texts.len() {
        return Err(usage(format!(
            "--id and --text go in pairs: {} --id and {} --text given",
            ids.len(),
            texts.len()
        )));
    }
    for (i, (id, text)) in ids.iter().zip(texts).enumerate() {
        let (fp, sketch) = scheme
            .document(text)
            .map_err(|e| usage(format!("--text {}: {e}", i + 1)))?;
        simhashdb::Batch::check_id(id).map_err(|e| usage(format!("--id {}: {e}", i + 1)))?;
        match sketch {
            Some(sketch) => batch.push_sketched(id, fp, &sketch)?,
            None => batch.push(id, fp)?,
        }
    }
    Ok(())
}

/// `--format`: a format as the library names them (the server and Python take the same names).
pub fn parse_format(name: &str) -> std::result::Result<InputFormat, String> {
    InputFormat::parse(name).map_err(|e| e.to_string())
}

/// `--fingerprint-format`'s value.
fn parse_fingerprint_format(name: &str) -> std::result::Result<FingerprintFormat, String> {
    FingerprintFormat::parse(name).map_err(|e| e.to_string())
}
