//! `simhashdb query`: find stored documents near fingerprints.

use std::io::Write;
use std::path::PathBuf;

use anyhow::{anyhow, Context, Result};
use simhashdb::{InputFormat, Match, OpenOptions, Query, Snapshot, Source};

use crate::documents::{self, FieldArgs};
use crate::exit_codes::usage;
use crate::output;

/// Print every stored document within D bits of each query.
///
/// One line per match: QUERY<TAB>ID<TAB>FINGERPRINT<TAB>DISTANCE, queries in input order,
/// each query's matches by distance, fingerprint, id. With --min-jaccard (a store made with
/// `init --sketch`) a match is kept only when the sketches of the query text and of the
/// stored document estimate at least that word 3-shingle Jaccard similarity, printed as a
/// fifth column (a "jaccard" field); a match where either has no sketch (a query given as a
/// fingerprint, a document inserted as one) is kept and flagged: "unverified" in the fifth
/// column, "unverified": true in JSON. QUERY is the query fingerprint, or for
/// documents read from --input the document's id. Text (--text, or documents in --input) is
/// fingerprinted with the store's scheme. Without --format an --input is read by name (a
/// directory as text files, .jsonl, .tsv, .parquet), as Parquet by its magic bytes, else as
/// jsonl if it starts with '{', else as one query per line: a fingerprint, or
/// ID<TAB>FINGERPRINT.
#[derive(clap::Args)]
pub struct Args {
    /// The store.
    store: PathBuf,
    /// Query fingerprints (16 hex digits, 0x hex or decimal; see --fingerprint-format).
    fingerprints: Vec<String>,
    /// A file or directory of queries (see above); '-' reads stdin. Repeatable.
    #[arg(long, value_name = "FILE")]
    input: Vec<PathBuf>,
    /// The format of --input: fingerprints (one query per line: a fingerprint, or
    /// ID<TAB>FINGERPRINT), tsv, jsonl, text, or parquet (an id column and a fingerprint or
    /// text column).
    #[arg(long, value_name = "FORMAT", value_parser = documents::parse_format)]
    format: Option<InputFormat>,
    /// A text to query with, fingerprinted with the store's scheme (repeatable).
    #[arg(long, value_name = "TEXT")]
    text: Vec<String>,
    #[command(flatten)]
    fields: FieldArgs,
    #[command(flatten)]
    skip: documents::SkipArgs,
    /// Largest distance to report (at most the store's K; default K).
    #[arg(long, value_name = "D", allow_negative_numbers = true)]
    distance: Option<i64>,
    /// Print JSON Lines: {"query", "id", "fingerprint", "distance"}, plus
    /// "query_fingerprint" for documents.
    #[arg(long)]
    json: bool,
    /// Keep only matches whose estimated word 3-shingle Jaccard similarity with the query's
    /// text is at least J (from the store's sketches: `init --sketch`).
    #[arg(long, value_name = "J")]
    min_jaccard: Option<f64>,
    /// Write the matches to FILE instead of stdout.
    #[arg(long, value_name = "FILE")]
    output: Option<PathBuf>,
    /// MiB of block cache spread over the store's files. The default holds the tables' branch
    /// pages (1/64 of the table bytes, 16 to 1024 MiB); more helps when queries repeat.
    #[arg(long, value_name = "MIB",
          value_parser = clap::value_parser!(u64).range(1..=1 << 30), allow_negative_numbers = true)]
    cache_mib: Option<u64>,
}

/// Queries answered per parallel round; bounds the memory held for results.
const ROUND: usize = 1 << 14;

pub fn run(args: Args) -> Result<()> {
    let (fingerprints, warning) = (args.fields.fingerprint_format)
        .read_many(args.fingerprints.iter().map(String::as_str))
        .map_err(|msg| usage(format!("the fingerprint arguments: {msg}")))?;
    if let Some(warning) = warning {
        eprintln!("simhashdb: the fingerprint arguments: {warning}");
    }
    let mut queries: Vec<Query> = fingerprints.into_iter().map(Query::fingerprint).collect();
    if queries.is_empty() && args.input.is_empty() && args.text.is_empty() {
        return Err(usage(
            "no query: give fingerprints as arguments, --input FILE or --text TEXT",
        ));
    }
    if args.input.iter().filter(|i| i.as_os_str() == "-").count() > 1 {
        return Err(usage("stdin ('-') can be read only once"));
    }
    let cache = match args.cache_mib {
        Some(mib) => OpenOptions::new()
            .for_batch()
            .cache_bytes((mib as usize) << 20),
        None => OpenOptions::new().for_batch(),
    };
    let snapshot = Snapshot::open_with(&args.store, cache)
        .with_context(|| format!("{}: cannot open the store", args.store.display()))?;
    let scheme = documents::store_scheme(snapshot.text_scheme(), &args.store);
    for (i, text) in args.text.iter().enumerate() {
        scheme.as_ref().map_err(|why| anyhow!("{why}"))?;
        let query = snapshot
            .text_query(text)
            .map_err(|e| usage(format!("--text {}: {e}", i + 1)))?;
        queries.push(query);
    }
    let mut options = args.fields.options(scheme, false);
    args.skip.apply(&mut options)?;
    options.format = args.format;
    for input in &args.input {
        let summary = Source::Files(std::slice::from_ref(input)).queries(&options, &mut queries)?;
        documents::tell_read(&summary.first_skipped, &summary.warnings);
        if summary.skipped > 0 {
            eprintln!(
                "simhashdb: skipped {} in {}",
                documents::skipped_records(summary.skipped, summary.skipped_files),
                input.display()
            );
        }
    }
    let distance = snapshot.distance(args.distance)?;
    if let Some(min_jaccard) = args.min_jaccard {
        // Before any output: a store without sketches cannot verify.
        snapshot.check_sketch_verification(min_jaccard)?;
    }
    output::write_to(args.output.as_deref(), |out| {
        write_matches(
            out,
            &snapshot,
            &queries,
            distance,
            args.min_jaccard,
            args.json,
        )
    })
}

/// Answers `queries` a round at a time (verified at `min_jaccard`, when given) and writes
/// their matches.
fn write_matches(
    out: &mut dyn Write,
    snapshot: &Snapshot,
    queries: &[Query],
    distance: u32,
    min_jaccard: Option<f64>,
    json: bool,
) -> Result<()> {
    for round in queries.chunks(ROUND) {
        let answers = snapshot.query_many(round, distance, min_jaccard)?;
        for (q, matches) in round.iter().zip(answers) {
            let hex = format!("{:016x}", q.fingerprint);
            let label = q.id.as_deref().unwrap_or(&hex);
            for m in &matches {
                if json {
                    /// A match as `query --json` prints it: the query, then the library's
                    /// match.
                    #[derive(serde::Serialize)]
                    struct MatchLine<'a> {
                        query: &'a str,
                        #[serde(skip_serializing_if = "Option::is_none")]
                        query_fingerprint: Option<&'a str>,
                        #[serde(flatten)]
                        found: &'a Match,
                    }
                    let line = MatchLine {
                        query: label,
                        query_fingerprint: q.id.is_some().then_some(hex.as_str()),
                        found: m,
                    };
                    output::json_line(out, &line)?;
                } else {
                    write!(
                        out,
                        "{label}\t{}\t{:016x}\t{}",
                        m.id, m.fingerprint, m.distance
                    )?;
                    match (m.jaccard, m.unverified) {
                        (Some(j), _) => writeln!(out, "\t{j:.6}")?,
                        (None, true) => writeln!(out, "\tunverified")?,
                        (None, false) => writeln!(out)?,
                    }
                }
            }
        }
    }
    Ok(())
}
