//! `simhashdb export`: every live document.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use simhashdb::parquet::ParquetTable;
use simhashdb::{Document, OpenOptions, Snapshot};

use crate::exit_codes::usage;
use crate::output;

/// Print every live document with its fingerprint and the batch that set it, in no particular
/// order: ID<TAB>FINGERPRINT<TAB>BATCH (tsv, which `insert` reads back), JSON Lines
/// {"id", "fingerprint", "batch"}, or Parquet (columns id, fingerprint as int64 holding the 64
/// bits, batch; needs --output, and is the default for an --output ending in .parquet).
/// With --sketch (a store made with `init --sketch`) each document that has a verification
/// sketch gets it: a "sketch" field in JSON Lines (its bytes in base64), a "sketch" binary
/// column in Parquet. `insert` into a store of the same sketch size reads both back: a store
/// rebuilt elsewhere keeps its sketches (the batch numbers are not restored: the documents
/// join the insert's batch, and `insert` says so).
#[derive(clap::Args)]
pub struct Args {
    /// The store.
    store: PathBuf,
    /// Output format [default: parquet for an --output ending in .parquet, else tsv].
    #[arg(long, value_enum)]
    format: Option<ExportFormat>,
    /// Write to FILE instead of stdout.
    #[arg(long, value_name = "FILE")]
    output: Option<PathBuf>,
    /// Add each document's sketch: a "sketch" field in base64 (jsonl), a binary "sketch"
    /// column (parquet).
    #[arg(long)]
    sketch: bool,
}

#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum ExportFormat {
    Tsv,
    Jsonl,
    Parquet,
}

pub fn run(args: Args) -> Result<()> {
    let output_path = args.output.as_deref().filter(|p| p.as_os_str() != "-");
    let format = args.format.unwrap_or(match output_path {
        Some(path) if output::is_parquet_name(path) => ExportFormat::Parquet,
        _ => ExportFormat::Tsv,
    });
    if format == ExportFormat::Parquet && output_path.is_none() {
        return Err(usage(
            "--format parquet needs --output FILE (Parquet is not streamed to stdout)",
        ));
    }
    if args.sketch && format == ExportFormat::Tsv {
        return Err(usage(
            "--sketch needs --format jsonl or parquet (sketches go in a JSON field or a \
             binary column)",
        ));
    }
    let snapshot = Snapshot::open_with(&args.store, OpenOptions::new().for_scan())
        .with_context(|| format!("{}: cannot open the store", args.store.display()))?;
    if args.sketch && snapshot.sketch_bytes().is_none() {
        return Err(usage(format!(
            "--sketch: {} keeps no sketches (a store made with `init --sketch` does)",
            args.store.display()
        )));
    }
    let bar = crate::progress::bar(snapshot.documents(), "exporting");
    if let (ExportFormat::Parquet, Some(path)) = (format, output_path) {
        export_parquet(&snapshot, path, args.sketch, &|| bar.inc(1))?;
        bar.finish_and_clear();
        return Ok(());
    }
    if args.sketch {
        return output::write_to(args.output.as_deref(), |out| {
            export_sketched(&snapshot, out, &|| bar.inc(1))?;
            bar.finish_and_clear();
            Ok(())
        });
    }
    output::write_to(args.output.as_deref(), |out| {
        let mut failure = None;
        snapshot.for_each_live_document(|id, fingerprint, batch| {
            bar.inc(1);
            if failure.is_some() {
                return;
            }
            let written = if format == ExportFormat::Jsonl {
                output::json_line(out, &Document::new(id, fingerprint, batch))
            } else {
                writeln!(out, "{id}\t{fingerprint:016x}\t{batch}").map_err(Into::into)
            };
            failure = written.err();
        })?;
        bar.finish_and_clear();
        match failure {
            Some(e) => Err(e),
            None => Ok(()),
        }
    })
}

/// JSON Lines with each document's sketch in base64.
fn export_sketched(snapshot: &Snapshot, out: &mut dyn Write, tick: &dyn Fn()) -> Result<()> {
    use base64::Engine;
    /// A document as `export --sketch` prints it.
    #[derive(serde::Serialize)]
    struct Line<'a> {
        #[serde(flatten)]
        document: &'a Document,
        #[serde(skip_serializing_if = "Option::is_none")]
        sketch: Option<String>,
    }
    let mut failure = None;
    snapshot.for_each_live_document_with_sketch(|id, fingerprint, batch, sketch| {
        tick();
        if failure.is_none() {
            let line = Line {
                document: &Document::new(id, fingerprint, batch),
                sketch: sketch.map(|s| base64::engine::general_purpose::STANDARD.encode(s)),
            };
            failure = output::json_line(out, &line).err();
        }
    })?;
    match failure {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// Parquet: id, fingerprint, batch, and with `sketched` a `sketch` column (binary, null for
/// a document without one).
fn export_parquet(snapshot: &Snapshot, path: &Path, sketched: bool, tick: &dyn Fn()) -> Result<()> {
    let mut table = match sketched {
        true => ParquetTable::sketched_documents(path)?,
        false => ParquetTable::documents(path, true)?,
    };
    // The first failure to write ends the table; the scan goes on (it cannot be stopped).
    let mut failure = None;
    let mut push = |id: &str, fingerprint: u64, batch: u64, sketch: Option<&[u8]>| {
        tick();
        if failure.is_none() {
            failure = match sketched {
                true => table.push_sketched_document(id, fingerprint, batch, sketch),
                false => table.push_document(id, fingerprint, Some(batch)),
            }
            .err();
        }
    };
    match sketched {
        true => snapshot.for_each_live_document_with_sketch(&mut push)?,
        false => snapshot.for_each_live_document(|id, fp, batch| push(id, fp, batch, None))?,
    }
    match failure {
        Some(e) => Err(e.into()),
        None => {
            table.finish()?;
            Ok(())
        }
    }
}
