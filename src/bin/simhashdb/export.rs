//! `simhashdb export`: every live document.

use std::path::PathBuf;

use anyhow::{Context, Result};
use simhashdb::{format_fingerprint, Snapshot, SCAN_CACHE_BYTES};

use crate::output;

/// Print every live document with its fingerprint and the batch that set it, in no particular
/// order: ID<TAB>FINGERPRINT<TAB>BATCH (tsv, which `insert` reads back) or JSON Lines
/// {"id", "fingerprint", "batch"}.
#[derive(clap::Args)]
pub struct Args {
    /// The store.
    store: PathBuf,
    /// Output format.
    #[arg(long, value_enum, default_value_t = ExportFormat::Tsv)]
    format: ExportFormat,
    /// Write to FILE instead of stdout.
    #[arg(long, value_name = "FILE")]
    output: Option<PathBuf>,
}

#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum ExportFormat {
    Tsv,
    Jsonl,
}

pub fn run(args: Args) -> Result<()> {
    let snapshot = Snapshot::open_with_cache(&args.store, SCAN_CACHE_BYTES)
        .with_context(|| format!("{}: cannot open the store", args.store.display()))?;
    let bar = crate::progress::bar(snapshot.catalog().documents, "exporting");
    output::write_to(args.output.as_deref(), |out| {
        let mut failure = None;
        snapshot.for_each_live_document(|id, fingerprint, batch| {
            bar.inc(1);
            if failure.is_some() {
                return;
            }
            let written = if args.format == ExportFormat::Jsonl {
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
