//! `simhashdb stats`: what a store holds and what it costs.

use std::io::Write;
use std::path::PathBuf;

use anyhow::{Context, Result};
use simhashdb::{Snapshot, Stats};

use crate::output;

/// Print a store's settings, counts, runs, and bytes on disk per table and per fingerprint.
#[derive(clap::Args)]
pub struct Args {
    /// The store.
    store: PathBuf,
    /// Print one JSON object on one line.
    #[arg(long)]
    json: bool,
}

pub fn run(args: Args) -> Result<()> {
    let snapshot = Snapshot::open(&args.store)
        .with_context(|| format!("{}: cannot open the store", args.store.display()))?;
    let stats = Stats::of(&snapshot)?;
    let mut out = output::stdout();
    if args.json {
        writeln!(out, "{}", serde_json::to_string(&stats)?)?;
    } else {
        let s = &stats;
        writeln!(out, "store\t{}", args.store.display())?;
        writeln!(out, "format version\t{}", s.format_version)?;
        writeln!(out, "blocks (m)\t{}", s.blocks)?;
        writeln!(out, "distance (K)\t{}", s.distance)?;
        writeln!(out, "tables\t{}", s.tables)?;
        writeln!(out, "scheme\t{}", s.scheme.as_deref().unwrap_or("none"))?;
        writeln!(out, "shards\t{}", s.shards)?;
        writeln!(out, "documents\t{}", s.documents)?;
        writeln!(out, "fingerprints indexed\t{}", s.fingerprints)?;
        writeln!(out, "batches\t{}", s.batches)?;
        writeln!(out, "runs\t{}", s.runs)?;
        if let Some(bytes) = s.sketch_bytes {
            writeln!(out, "sketch bytes per document\t{bytes}")?;
            writeln!(out, "sketches\t{}", s.sketches)?;
            // Format 9 keeps them in the docs blocks, compressed with the entries.
            if s.format_version != 9 {
                writeln!(
                    out,
                    "sketch block bytes per sketch\t{:.2}",
                    s.sketch_block_bytes_per_document
                )?;
            }
        }
        writeln!(out, "table files bytes\t{}", s.table_file_bytes)?;
        writeln!(out, "docs files bytes\t{}", s.docs_file_bytes)?;
        writeln!(out, "total bytes (used on disk)\t{}", s.total_bytes)?;
        writeln!(out, "file bytes (lengths)\t{}", s.file_bytes)?;
        writeln!(out, "orphan runs (debris)\t{}", s.orphan_runs)?;
        writeln!(out, "orphan bytes\t{}", s.orphan_bytes)?;
        writeln!(
            out,
            "disk bytes per fingerprint per table\t{:.2}",
            s.disk_bytes_per_fingerprint_per_table
        )?;
        writeln!(
            out,
            "disk bytes per document\t{:.2}",
            s.disk_bytes_per_document
        )?;
        writeln!(
            out,
            "table\tprefix bits\tentries\tblock bytes\tblock bytes per fingerprint"
        )?;
        for t in &s.per_table {
            writeln!(
                out,
                "t{:03}\t{}\t{}\t{}\t{:.2}",
                t.table, t.prefix_bits, t.entries, t.block_bytes, t.block_bytes_per_fingerprint
            )?;
        }
    }
    out.flush()?;
    Ok(())
}
