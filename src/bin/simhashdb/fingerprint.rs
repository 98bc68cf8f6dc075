//! `simhashdb fingerprint`: text in, `ID<TAB>FINGERPRINT` out.

use std::io::Write;
use std::path::PathBuf;

use anyhow::{anyhow, Context, Result};
use simhashdb::parquet::ParquetTable;
use simhashdb::{Batch, InputFormat, Query, Snapshot};

use crate::documents::{self, FieldArgs, SchemeArgs};
use crate::exit_codes::usage;
use crate::output;

/// Print the simhash fingerprint of documents: ID<TAB>FINGERPRINT per document, in input order.
///
/// Inputs: JSON Lines files ({"id": ..., "text": ...} per line; integer ids become their
/// decimal text), plain text files (one document, id = the path), directories (every file
/// below, recursively, in path order: .jsonl files as JSON Lines, others as text), or stdin
/// ('-' or none; JSON Lines if it starts with '{'). A line that is not valid UTF-8 or JSON,
/// lacks a field, has a non-string text, or a document with no letter or digit, fails with
/// FILE:LINE, unless --skip-invalid (then it is counted on stderr). The seomoz scheme keeps
/// simhash-py's behaviour instead: fewer than 4 tokens give 0.
#[derive(clap::Args)]
pub struct Args {
    /// Files, directories or '-' (stdin).
    inputs: Vec<PathBuf>,
    /// Input format; by default JSON Lines for `.jsonl` files (and inputs starting with '{'),
    /// Parquet for `.parquet` files (and inputs starting with its magic bytes), text
    /// otherwise.
    #[arg(long, value_name = "FORMAT", value_parser = crate::documents::parse_format)]
    format: Option<InputFormat>,
    #[command(flatten)]
    scheme: SchemeArgs,
    /// Use the fingerprint scheme recorded in this store (instead of --scheme).
    #[arg(long, value_name = "STORE", conflicts_with_all = ["scheme", "shingle", "weight"])]
    store: Option<PathBuf>,
    #[command(flatten)]
    fields: FieldArgs,
    /// Skip bad documents (counted on stderr) instead of failing.
    #[arg(long)]
    skip_invalid: bool,
    /// Also print the 64 bits, and with exactly two documents their distance.
    #[arg(long)]
    verbose: bool,
    /// Print JSON Lines: {"id", "fingerprint"}.
    #[arg(long, conflicts_with = "verbose")]
    json: bool,
    /// Write to FILE instead of stdout; a FILE ending in .parquet gets Parquet (columns id,
    /// fingerprint as int64 holding the 64 bits).
    #[arg(long, value_name = "FILE")]
    output: Option<PathBuf>,
}

pub fn run(args: Args) -> Result<()> {
    let scheme = match &args.store {
        Some(store) => {
            let snapshot = Snapshot::open(store)
                .with_context(|| format!("{}: cannot open the store", store.display()))?;
            documents::store_scheme(snapshot.text_scheme(), store)
                .map_err(|why| anyhow!("{why}"))?
        }
        None => args.scheme.scheme()?,
    };
    let mut options = args.fields.options(Ok(scheme), args.skip_invalid);
    options.fallback = InputFormat::Text;
    options.format = args.format;
    let mut batch = Batch::new();
    let summary = documents::read(&args.inputs, &options, &mut batch)?;
    if let Some(path) = args
        .output
        .as_deref()
        .filter(|p| output::is_parquet_name(p))
    {
        if args.verbose || args.json {
            return Err(usage(
                "--verbose and --json print text: not with a Parquet --output",
            ));
        }
        let mut table = ParquetTable::documents(path, false)?;
        for i in 0..batch.len() {
            table.push_document(batch.id(i), batch.fingerprint(i), None)?;
        }
        table.finish()?;
    } else {
        output::write_to(args.output.as_deref(), |out| print(out, &batch, &args))?;
    }
    if summary.skipped > 0 {
        eprintln!("simhashdb: skipped {} invalid documents", summary.skipped);
    }
    Ok(())
}

fn print(out: &mut dyn Write, batch: &Batch, args: &Args) -> Result<()> {
    for i in 0..batch.len() {
        let (id, fp) = (batch.id(i), batch.fingerprint(i));
        if args.json {
            let query = Query {
                id: Some(id.to_string()),
                ..Query::fingerprint(fp)
            };
            output::json_line(out, &query)?;
        } else if args.verbose {
            writeln!(out, "{id}\t{fp:016x}\t{fp:064b}")?;
        } else {
            writeln!(out, "{id}\t{fp:016x}")?;
        }
    }
    if args.verbose && batch.len() == 2 {
        let distance = (batch.fingerprint(0) ^ batch.fingerprint(1)).count_ones();
        writeln!(out, "distance\t{distance}")?;
    }
    Ok(())
}
