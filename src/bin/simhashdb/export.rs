//! `simhashdb export`: every live document.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use simhashdb::parquet::ParquetTable;
use simhashdb::{Document, Snapshot};

use crate::exit_codes::usage;
use crate::output;

/// Print every live document with its fingerprint and the batch that set it, in no particular
/// order: ID<TAB>FINGERPRINT<TAB>BATCH (tsv, which `insert` reads back), JSON Lines
/// {"id", "fingerprint", "batch"}, or Parquet (columns id, fingerprint as int64 holding the 64
/// bits, batch; needs --output, and is the default for an --output ending in .parquet).
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
    let snapshot = Snapshot::open_for_scan(&args.store)
        .with_context(|| format!("{}: cannot open the store", args.store.display()))?;
    let bar = crate::progress::bar(snapshot.documents(), "exporting");
    if let (ExportFormat::Parquet, Some(path)) = (format, output_path) {
        export_parquet(&snapshot, path, &|| bar.inc(1))?;
        bar.finish_and_clear();
        return Ok(());
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

fn export_parquet(snapshot: &Snapshot, path: &Path, tick: &dyn Fn()) -> Result<()> {
    let mut table = ParquetTable::documents(path, true)?;
    let mut failure = None;
    snapshot.for_each_live_document(|id, fingerprint, batch| {
        tick();
        if failure.is_none() {
            failure = table.push_document(id, fingerprint, Some(batch)).err();
        }
    })?;
    match failure {
        Some(e) => Err(e.into()),
        None => {
            table.finish()?;
            Ok(())
        }
    }
}
