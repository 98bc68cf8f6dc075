//! `simhashdb dedup`: keep what is new, drop what the store already has.

use std::io::Write;
use std::path::PathBuf;

use anyhow::{Context, Result};
use simhashdb::{DedupOptions, DedupSummary, InputFormat, InsertOptions, OpenOptions, Snapshot};

use crate::documents::{self, FieldArgs};
use crate::exit_codes::usage;
use crate::{output, progress};

/// Keep the documents that are new, drop the near duplicates of stored documents and of
/// earlier documents of the input; with --insert, store the kept ones in the same step.
///
/// Reads documents as `insert` does (every format, gzip and zstd, stdin; text fingerprinted
/// with the store's scheme). Greedy in input order: a document is a duplicate when a stored
/// document, or an earlier kept document of the input, is within D bits; otherwise it is
/// kept. The kept records are written unchanged and in input order: JSON Lines and TSV lines
/// byte for byte (a leading byte-order mark and the compression of the input aside: outputs
/// are written uncompressed), Parquet rows with every column (Parquet needs --output), the
/// ids of text files; inputs of one dedup are all of one of these forms. --duplicates lists every dropped document as ID<TAB>DUPLICATE_OF<TAB>DISTANCE,
/// DUPLICATE_OF its nearest match (smallest distance; then a stored document before one of the
/// input, the earliest batch, the smallest id); a document already stored under its own id
/// names itself. Three more columns name the batch that stored the match: its number, label
/// and commit time (UTC), empty for a match of the input. A --duplicates FILE ending in
/// .parquet is Parquet: id, duplicate_of, distance[, jaccard], duplicate_batch,
/// duplicate_label, duplicate_committed_utc (nulls where the lines are empty); its id column
/// is the list of ids to remove that NeMo Curator's removal workflow reads. Output files appear whole or not at all (an output may not be an input);
/// stdout streams, so a failed run leaves part of it there (and exits non-zero). --insert
/// holds the writer lock from the first lookup to the commit: no other writer slips in
/// between; on any error nothing is inserted and no output file is left. The outputs are put
/// in place just before the commit: a dedup killed between the two leaves them and the store
/// as before, and running it again writes the same outputs. Without --insert
/// the store is only read (it may be read-only, or served by a running `serve`). A summary
/// goes to stderr, or with --json a JSON line {"read" (valid documents), "skipped",
/// "kept", "duplicates_of_stored", "duplicates_within_input", "unverified", "inserted",
/// "replaced", "superseded" (as `insert` counts them), "batch", "distance", and "warnings"
/// when there are some} on stdout (on stderr when
/// stdout carries the records). Memory: the kept documents' ids and fingerprints (100 to
/// 200 bytes each plus the id), never the records.
#[derive(clap::Args)]
pub struct Args {
    /// The store.
    store: PathBuf,
    /// Input files or directories; '-' or none reads stdin.
    inputs: Vec<PathBuf>,
    /// Input format: tsv, jsonl, text or parquet; detected when absent (as `insert` does).
    #[arg(long, value_name = "FORMAT", value_parser = documents::parse_format)]
    format: Option<InputFormat>,
    #[command(flatten)]
    fields: FieldArgs,
    /// Largest distance that makes a duplicate (at most the store's K; default K).
    #[arg(long, value_name = "D", allow_negative_numbers = true)]
    distance: Option<i64>,
    /// Write the kept records to FILE ('-' = stdout, the default for line formats).
    #[arg(long, value_name = "FILE")]
    output: Option<PathBuf>,
    /// Write the dropped documents to FILE ('-' = stdout): ID<TAB>DUPLICATE_OF<TAB>DISTANCE,
    /// then the match's BATCH<TAB>LABEL<TAB>COMMITTED (empty for a match of the input).
    #[arg(long, value_name = "FILE")]
    duplicates: Option<PathBuf>,
    /// A match makes a duplicate only when the sketches of the two documents estimate at
    /// least this word 3-shingle Jaccard similarity (a store made with `init --sketch`, text
    /// input); --duplicates then gets a fourth column, the estimate or "unverified" (a side
    /// has no sketch: taken as the fingerprints decide), before the batch columns.
    #[arg(long, value_name = "J")]
    min_jaccard: Option<f64>,
    /// Insert the kept documents as one batch, atomically with the check.
    #[arg(long)]
    insert: bool,
    /// A label recorded with the batch (with --insert).
    #[arg(long, requires = "insert")]
    label: Option<String>,
    #[command(flatten)]
    wait: crate::writer::WaitArgs,
    #[command(flatten)]
    skip: documents::SkipArgs,
    /// With --insert: go on, with a warning, when an input holds no documents (else that
    /// fails the dedup, naming the input).
    #[arg(long, requires = "insert")]
    allow_empty: bool,
    /// Print the summary as a JSON line.
    #[arg(long)]
    json: bool,
}

pub fn run(args: Args) -> Result<()> {
    if let Some(label) = &args.label {
        simhashdb::Batch::check_label(label).map_err(|e| usage(format!("--label: {e}")))?;
    }
    let is_stdout = |p: &Option<PathBuf>| p.as_deref().is_none_or(|p| p.as_os_str() == "-");
    let records_to_stdout = is_stdout(&args.output);
    let duplicates_to_stdout = args.duplicates.is_some() && is_stdout(&args.duplicates);
    if records_to_stdout && duplicates_to_stdout {
        return Err(usage(
            "the kept records and --duplicates cannot both go to stdout: give --output FILE",
        ));
    }
    if records_to_stdout && args.inputs.iter().any(|i| output::is_parquet_name(i)) {
        return Err(usage(
            "the kept rows of a Parquet input are a Parquet file: give --output FILE",
        ));
    }
    // Files appear whole or not at all; stdout streams, so a failure leaves part of it.
    let outputs_left = if records_to_stdout || duplicates_to_stdout {
        "no output file was written, and what went to stdout is incomplete"
    } else {
        "no output file was written"
    };
    let inputs = if args.inputs.is_empty() {
        vec![PathBuf::from("-")]
    } else {
        args.inputs.clone()
    };
    let bar = progress::reading(&inputs, "reading");
    let tell = |n: u64| bar.inc(n);
    let mut out = output::stdout();
    let dedup = dedup_options(&args);
    // The store and the distance are checked before the rejects file is made.
    let summary = if args.insert {
        let mut store = crate::writer::open(&args.store, &args.wait)?;
        store.snapshot()?.distance(args.distance)?;
        let options = read_options(&args)?;
        store
            .dedup_files(&inputs, &dedup, &options, &mut out, &tell)
            .with_context(|| {
                format!(
                    "{}: nothing was inserted; {outputs_left}",
                    args.store.display()
                )
            })?
    } else {
        let snapshot = Snapshot::open_with(&args.store, OpenOptions::new().for_batch())
            .with_context(|| format!("{}: cannot open the store", args.store.display()))?;
        snapshot.distance(args.distance)?;
        let options = read_options(&args)?;
        snapshot
            .dedup_files(&inputs, &dedup, &options, &mut out, &tell)
            .with_context(|| format!("{}: {outputs_left}", args.store.display()))?
    };
    bar.finish_and_clear();
    out.flush()?;
    documents::tell_read(&summary.first_skipped, &summary.warnings);
    let stdout_used = records_to_stdout || duplicates_to_stdout;
    if args.json && !stdout_used {
        output::json_line(&mut out, &summary)?;
        out.flush()?;
    } else if args.json {
        output::json_line(&mut std::io::stderr(), &summary)?;
    } else {
        eprintln!("simhashdb: {}", describe(&summary));
    }
    Ok(())
}

/// The dedup the flags ask for.
fn dedup_options(args: &Args) -> DedupOptions {
    DedupOptions {
        distance: args.distance,
        min_jaccard: args.min_jaccard,
        insert: args.insert.then(|| InsertOptions {
            label: args.label.clone(),
            ..InsertOptions::default()
        }),
        output: args.output.clone(),
        duplicates: args.duplicates.clone(),
    }
}

/// How the inputs are read (text fingerprinted with the store's scheme, which the library
/// sets).
fn read_options(args: &Args) -> Result<simhashdb::ReadOptions> {
    let mut options = args
        .fields
        .options(simhashdb::ReadOptions::default().scheme, false);
    args.skip.apply(&mut options)?;
    // An empty input to a dedup that only reads is fine; one that inserts is refused unless
    // asked for.
    options.allow_empty = !args.insert || args.allow_empty;
    options.format = args.format;
    Ok(options)
}

/// The summary for people.
fn describe(s: &DedupSummary) -> String {
    let mut line = format!(
        "read {}, kept {}, dropped {} ({} of stored documents, {} within the input) at \
         distance {}",
        s.read,
        s.kept,
        s.duplicates_of_stored + s.duplicates_within_input,
        s.duplicates_of_stored,
        s.duplicates_within_input,
        s.distance
    );
    if s.unverified > 0 {
        line += &format!(" ({} unverified: a side has no sketch)", s.unverified);
    }
    if s.skipped > 0 {
        line += &format!(
            ", skipped {}",
            documents::skipped_records(s.skipped, s.skipped_files)
        );
    }
    match s.batch {
        Some(batch) => {
            line += &format!(
                "; batch {batch}: inserted {}, replaced {}",
                s.inserted, s.replaced
            );
            if s.superseded > 0 {
                line += &format!(", superseded in input {}", s.superseded);
            }
        }
        None => line += "; nothing inserted",
    }
    line
}
