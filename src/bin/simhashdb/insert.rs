//! `simhashdb insert`: add one batch of documents.

use std::io::Write;
use std::path::PathBuf;

use anyhow::{anyhow, Context, Result};
use simhashdb::{Batch, InputFormat, InsertOptions, Insertion, ReadOptions, Source};

use crate::documents::{self, FieldArgs};
use crate::output;

/// Insert one batch of documents, all or nothing.
///
/// A document is a fingerprint or a text with an id. Inputs are lines ID<TAB>FINGERPRINT
/// (tsv), JSON objects {"id": ..., "fingerprint": ...} or {"id": ..., "text": ...} (jsonl),
/// Parquet files (an id column and a fingerprint or text column; fingerprints as int64
/// holding the 64 bits, uint64 or strings), or text files and directories of them (one
/// document per file, id = its path). A fingerprint is 16 hex digits, 0x-prefixed hex or a
/// decimal u64; text is fingerprinted with the store's scheme (set by `init --scheme`).
/// Without --format: .jsonl, .tsv and .parquet files by name, Parquet by its magic bytes,
/// files inside directories as text (hidden and _ files skipped), otherwise jsonl if the
/// input starts with '{', else tsv. An id inserted again with a new fingerprint replaces its
/// old one. Large batches are written a run of --run-documents at a time, so memory stays
/// bounded, and commit together.
#[derive(clap::Args)]
pub struct Args {
    /// The store.
    store: PathBuf,
    #[command(flatten)]
    wait: crate::writer::WaitArgs,
    /// Input files or directories; '-' or none reads stdin (unless --text is given).
    inputs: Vec<PathBuf>,
    /// Input format: tsv, jsonl, text or parquet; detected when absent (see above).
    #[arg(long, value_name = "FORMAT", value_parser = documents::parse_format)]
    format: Option<InputFormat>,
    /// A document's text, given on the command line (with --id; repeatable, in pairs).
    #[arg(long, value_name = "TEXT", requires = "id")]
    text: Vec<String>,
    /// The id of the --text at the same position.
    #[arg(long, value_name = "ID", requires = "text")]
    id: Vec<String>,
    #[command(flatten)]
    fields: FieldArgs,
    #[command(flatten)]
    skip: documents::SkipArgs,
    /// Go on, with a warning, when an input holds no documents (else that fails the batch,
    /// naming the input).
    #[arg(long)]
    allow_empty: bool,
    /// A label recorded with the batch.
    #[arg(long)]
    label: Option<String>,
    /// Do not merge runs after the batch, even if the compaction policy says it is due.
    #[arg(long)]
    no_compact: bool,
    /// Write the batch as runs of at most N documents (about 200 bytes of memory each while a
    /// run is written); all of them commit together. Queries probe each run until compaction
    /// merges them.
    #[arg(long, value_name = "N", default_value_t = Insertion::DEFAULT_RUN_DOCUMENTS as u64,
          value_parser = crate::init::parse_size, allow_negative_numbers = true)]
    run_documents: u64,
    /// Print the summary as JSON.
    #[arg(long)]
    json: bool,
}

pub fn run(args: Args) -> Result<()> {
    // The merge the policy asks for is run below, after a note that it starts.
    let insert = InsertOptions {
        label: args.label.clone(),
        run_documents: usize::try_from(args.run_documents).unwrap_or(usize::MAX),
        compact: false,
    };
    insert.check()?;
    // Open (and lock) the store first: a bad store path fails before reading the input.
    let mut store = crate::writer::open(&args.store, &args.wait)?;
    // Every failure before the commit leaves the store as it was.
    let not_inserted = || {
        format!(
            "{}: the batch was not inserted (nothing was stored)",
            args.store.display()
        )
    };
    let mut sources = Vec::new();
    if !args.text.is_empty() {
        let scheme = documents::store_scheme(store.text_scheme(), &args.store);
        let scheme = scheme.as_ref().map_err(|why| anyhow!("{why}"))?;
        let mut texts = Batch::new();
        documents::push_texts(&args.id, &args.text, scheme, &mut texts)
            .with_context(not_inserted)?;
        sources.push(Source::Documents(texts));
    }
    let mut options = args.fields.options(ReadOptions::default().scheme, false);
    args.skip.apply(&mut options)?;
    options.allow_empty = args.allow_empty;
    options.format = args.format;
    let stdin = [PathBuf::from("-")];
    let files = if args.inputs.is_empty() {
        &stdin[..]
    } else {
        &args.inputs[..]
    };
    let read_files = args.text.is_empty() || !args.inputs.is_empty();
    if read_files {
        sources.push(Source::Files(files));
    }
    let bar = if read_files {
        crate::progress::reading(files, "reading")
    } else {
        indicatif::ProgressBar::hidden()
    };
    let inserted = store.insert_from(sources, &insert, &options, &|n| bar.inc(n));
    bar.finish_and_clear();
    let mut summary = inserted.with_context(not_inserted)?;
    documents::tell_read(&summary.read.first_skipped, &summary.read.warnings);
    // The batch is committed: a failed compaction leaves the store as the batch left it, and
    // the command still succeeds (a script must not send the batch again).
    let mut compaction_failure = None;
    let compaction = if args.no_compact {
        None
    } else {
        if store.compaction_due() && !args.json {
            eprintln!(
                "simhashdb: batch {} committed; merging runs as the store's compaction policy \
                 asks (--no-compact skips this)",
                summary.batch.unwrap_or_default()
            );
        }
        match store.compact_if_due() {
            Ok(compaction) => compaction,
            Err(e) => {
                let e = anyhow::Error::from(e);
                eprintln!(
                    "simhashdb: warning: {}: the batch was inserted, but the automatic \
                     compaction after it failed: {} (the store is intact; `simhashdb compact` \
                     retries it)",
                    args.store.display(),
                    crate::exit_codes::message(&e)
                );
                compaction_failure = Some(crate::exit_codes::message(&e));
                None
            }
        }
    };
    if summary.runs > 1 && compaction.is_none() && !args.json {
        eprintln!(
            "simhashdb: the batch was written as {} runs of at most {} documents; queries \
             probe each run until they are merged (`simhashdb compact`)",
            summary.runs, args.run_documents
        );
    }
    if let Some(c) = &compaction {
        if !args.json {
            eprintln!("simhashdb: {}", crate::compact::describe(c));
        }
    }
    summary.compaction = compaction;
    summary.compaction_failure = compaction_failure;
    let mut out = output::stdout();
    if args.json {
        output::json_line(&mut out, &summary)?;
    } else {
        write!(
            out,
            "inserted {}, replaced {}, unchanged {}",
            summary.inserted, summary.replaced, summary.unchanged
        )?;
        if summary.superseded > 0 {
            write!(out, ", superseded in input {}", summary.superseded)?;
        }
        if options.skip_invalid {
            let skipped =
                documents::skipped_records(summary.read.skipped, summary.read.skipped_files);
            write!(out, ", skipped {skipped}")?;
        }
        match summary.batch {
            Some(b) => writeln!(out, " (batch {b})")?,
            None => writeln!(out, " (nothing changed: no batch recorded)")?,
        }
    }
    out.flush()?;
    Ok(())
}
