//! `simhashdb export`: every live document.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use simhashdb::parquet::{fingerprint_to_i64, Cell, ParquetTable};
use simhashdb::{format_fingerprint, Snapshot, SCAN_CACHE_BYTES};

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
    let snapshot = Snapshot::open_with_cache(&args.store, SCAN_CACHE_BYTES)
        .with_context(|| format!("{}: cannot open the store", args.store.display()))?;
    let bar = crate::progress::bar(snapshot.catalog().documents, "exporting");
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
                let value = serde_json::json!({
                    "id": id,
                    "fingerprint": format_fingerprint(fingerprint),
                    "batch": batch,
                });
                writeln!(out, "{value}")
            } else {
                writeln!(out, "{id}\t{fingerprint:016x}\t{batch}")
            };
            failure = written.err();
        })?;
        bar.finish_and_clear();
        match failure {
            Some(e) => Err(e.into()),
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
            let row = [
                Cell::Text(id),
                Cell::Int64(fingerprint_to_i64(fingerprint)),
                Cell::Int64(batch as i64),
            ];
            failure = table.push(&row).err();
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
