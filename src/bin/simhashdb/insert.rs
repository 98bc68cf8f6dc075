//! `simhashdb insert`: add one batch of documents.

use std::fs::File;
use std::io::{BufReader, Write};
use std::path::PathBuf;

use anyhow::{Context, Result};
use simhashdb::input::read_documents;
use simhashdb::{Batch, InputFormat, Store};

use crate::output;

/// Insert one batch of documents, all or nothing.
///
/// Each input line is ID<TAB>FINGERPRINT or a JSON object {"id": ..., "fingerprint": ...};
/// a fingerprint is 16 hex digits, 0x-prefixed hex or a decimal u64. An id inserted again
/// with a new fingerprint replaces its old one.
#[derive(clap::Args)]
pub struct Args {
    /// The store.
    store: PathBuf,
    /// Input files; '-' or none reads stdin.
    inputs: Vec<PathBuf>,
    /// Input format; detected from the first line when absent ('{' means jsonl).
    #[arg(long, value_enum)]
    format: Option<Format>,
    /// Skip invalid lines (and report how many) instead of failing the batch.
    #[arg(long)]
    skip_invalid: bool,
    /// A label recorded with the batch.
    #[arg(long)]
    label: Option<String>,
    /// Do not merge runs after the batch, even if the compaction policy says it is due.
    #[arg(long)]
    no_compact: bool,
    /// Print the summary as JSON.
    #[arg(long)]
    json: bool,
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum Format {
    Tsv,
    Jsonl,
}

pub fn run(args: Args) -> Result<()> {
    let format = args.format.map(|f| match f {
        Format::Tsv => InputFormat::Tsv,
        Format::Jsonl => InputFormat::Jsonl,
    });
    // Open (and lock) the store first: a bad store path fails before reading the input.
    let mut store = Store::open(&args.store)
        .with_context(|| format!("{}: cannot open the store", args.store.display()))?;
    let mut batch = Batch::new();
    let (mut lines, mut skipped) = (0, 0);
    let inputs = if args.inputs.is_empty() {
        vec![PathBuf::from("-")]
    } else {
        args.inputs.clone()
    };
    for input in &inputs {
        let summary = if input.as_os_str() == "-" {
            read_documents(
                std::io::stdin().lock(),
                "<stdin>",
                format,
                args.skip_invalid,
                &mut batch,
            )
        } else {
            let file =
                File::open(input).with_context(|| format!("{}: cannot open", input.display()))?;
            read_documents(
                BufReader::with_capacity(1 << 20, file),
                &input.display().to_string(),
                format,
                args.skip_invalid,
                &mut batch,
            )
        }
        .context("nothing was inserted")?;
        lines += summary.lines;
        skipped += summary.skipped;
        for msg in &summary.first_skipped {
            eprintln!("simhashdb: skipped {msg}");
        }
    }
    let summary = store
        .insert(&batch, args.label.as_deref())
        .with_context(|| format!("{}: the batch was not inserted", args.store.display()))?;
    // The batch is committed; a failed compaction leaves the store as the batch left it.
    let compaction = if args.no_compact {
        None
    } else {
        store.compact_if_due().with_context(|| {
            format!(
                "{}: the batch was inserted, but the automatic compaction after it failed                  (the store is intact; run `simhashdb compact` to retry)",
                args.store.display()
            )
        })?
    };
    if let Some(c) = &compaction {
        if !args.json {
            eprintln!("simhashdb: {}", crate::compact::describe(c));
        }
    }
    let mut out = output::stdout();
    if args.json {
        let value = serde_json::json!({
            "batch": summary.batch,
            "lines": lines,
            "inserted": summary.inserted,
            "replaced": summary.replaced,
            "unchanged": summary.unchanged,
            "superseded": summary.superseded,
            "skipped": skipped,
            "new_fingerprints": summary.new_fingerprints,
            "compaction": compaction.as_ref().map(crate::compact::to_json),
        });
        writeln!(out, "{value}")?;
    } else {
        write!(
            out,
            "inserted {}, replaced {}, unchanged {}",
            summary.inserted, summary.replaced, summary.unchanged
        )?;
        if summary.superseded > 0 {
            write!(out, ", superseded in input {}", summary.superseded)?;
        }
        if args.skip_invalid {
            write!(out, ", skipped {skipped} invalid lines")?;
        }
        match summary.batch {
            Some(b) => writeln!(out, " (batch {b})")?,
            None => writeln!(out, " (nothing changed: no batch recorded)")?,
        }
    }
    out.flush()?;
    Ok(())
}
