//! `simhashdb query`: find stored documents near fingerprints.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use anyhow::{anyhow, bail, Context, Result};
use simhashdb::input::{read_documents, read_fingerprints, ReadOptions};
use simhashdb::{format_fingerprint, parse_fingerprint, Batch, InputFormat, Snapshot};

use crate::documents::{self, FieldArgs};
use crate::output;

/// Print every stored document within D bits of each query.
///
/// One line per match: QUERY<TAB>ID<TAB>FINGERPRINT<TAB>DISTANCE, queries in input order,
/// each query's matches by distance, fingerprint, id. QUERY is the query fingerprint, or for
/// documents read from --input the document's id. Text (--text, or documents in --input) is
/// fingerprinted with the store's scheme. Without --format an --input is read by name (a
/// directory as text files, .jsonl, .tsv), else as jsonl if it starts with '{', as tsv
/// (ID<TAB>FINGERPRINT) if its first line has a tab, else as one fingerprint per line.
#[derive(clap::Args)]
pub struct Args {
    /// The store.
    store: PathBuf,
    /// Query fingerprints (16 hex digits, 0x hex or decimal).
    fingerprints: Vec<String>,
    /// A file or directory of queries (see above); '-' reads stdin. Repeatable.
    #[arg(long, value_name = "FILE")]
    input: Vec<PathBuf>,
    /// The format of --input.
    #[arg(long, value_enum)]
    format: Option<QueryFormat>,
    /// A text to query with, fingerprinted with the store's scheme (repeatable).
    #[arg(long, value_name = "TEXT")]
    text: Vec<String>,
    #[command(flatten)]
    fields: FieldArgs,
    /// Skip invalid documents in --input (and report how many) instead of failing.
    #[arg(long)]
    skip_invalid: bool,
    /// Largest distance to report (at most the store's K; default K).
    #[arg(long, value_name = "D")]
    distance: Option<u32>,
    /// Print JSON Lines: {"query", "id", "fingerprint", "distance"}, plus
    /// "query_fingerprint" for documents.
    #[arg(long)]
    json: bool,
    /// MiB of block cache spread over the store's files. The default holds the tables' branch
    /// pages (1/64 of the table bytes, 16 to 1024 MiB); more helps when queries repeat.
    #[arg(long, value_name = "MIB",
          value_parser = clap::value_parser!(u64).range(1..=1 << 30))]
    cache_mib: Option<u64>,
}

#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum QueryFormat {
    /// One fingerprint per line.
    Fingerprints,
    Tsv,
    Jsonl,
    Text,
}

/// One query: a fingerprint, and the document it came from when it is not given as such.
struct Query {
    document: Option<String>,
    fingerprint: u64,
}

/// Queries answered per parallel round; bounds the memory held for results.
const ROUND: usize = 1 << 14;

pub fn run(args: Args) -> Result<()> {
    let mut queries = Vec::new();
    for (i, text) in args.fingerprints.iter().enumerate() {
        let fingerprint =
            parse_fingerprint(text).map_err(|msg| anyhow!("argument {}: {msg}", i + 1))?;
        queries.push(Query {
            document: None,
            fingerprint,
        });
    }
    if queries.is_empty() && args.input.is_empty() && args.text.is_empty() {
        bail!("no query: give fingerprints as arguments, --input FILE or --text TEXT");
    }
    let snapshot = match args.cache_mib {
        Some(mib) => Snapshot::open_with_cache(&args.store, (mib as usize) << 20),
        None => Snapshot::open_for_batch(&args.store),
    }
    .with_context(|| format!("{}: cannot open the store", args.store.display()))?;
    let scheme = documents::store_scheme(snapshot.catalog(), &args.store);
    for (i, text) in args.text.iter().enumerate() {
        let scheme = scheme.as_ref().map_err(|why| anyhow!("{why}"))?;
        let fingerprint = simhashdb::input::fingerprint_text(scheme, text)
            .map_err(|e| anyhow!("--text {}: {e}", i + 1))?;
        queries.push(Query {
            document: None,
            fingerprint,
        });
    }
    let options = args.fields.options(scheme, args.skip_invalid);
    for input in &args.input {
        read_queries(input, args.format, &options, &mut queries)?;
    }
    let distance = args
        .distance
        .unwrap_or(u32::from(snapshot.settings().distance));
    let mut out = output::stdout();
    for round in queries.chunks(ROUND) {
        let fingerprints: Vec<u64> = round.iter().map(|q| q.fingerprint).collect();
        let answers = snapshot.query_many(&fingerprints, distance)?;
        for (q, matches) in round.iter().zip(answers) {
            let label = match &q.document {
                Some(id) => id.clone(),
                None => format_fingerprint(q.fingerprint),
            };
            for m in matches {
                if args.json {
                    let mut value = serde_json::json!({
                        "query": label,
                        "id": m.id,
                        "fingerprint": format_fingerprint(m.fingerprint),
                        "distance": m.distance,
                    });
                    if q.document.is_some() {
                        value["query_fingerprint"] = format_fingerprint(q.fingerprint).into();
                    }
                    writeln!(out, "{value}")?;
                } else {
                    writeln!(
                        out,
                        "{label}\t{}\t{:016x}\t{}",
                        m.id, m.fingerprint, m.distance
                    )?;
                }
            }
        }
    }
    out.flush()?;
    Ok(())
}

/// Reads the queries of one --input (see [`Args`] for how its format is found).
fn read_queries(
    input: &Path,
    format: Option<QueryFormat>,
    options: &ReadOptions,
    queries: &mut Vec<Query>,
) -> Result<()> {
    let name = if input.as_os_str() == "-" {
        "<stdin>".to_string()
    } else {
        input.display().to_string()
    };
    let is_dir = input.as_os_str() != "-" && input.is_dir();
    let by_name = if is_dir {
        Some(QueryFormat::Text)
    } else {
        simhashdb::input::sources::format_by_name(input).map(|f| match f {
            InputFormat::Jsonl => QueryFormat::Jsonl,
            InputFormat::Tsv => QueryFormat::Tsv,
            InputFormat::Text => QueryFormat::Text,
        })
    };
    let format = format.or(by_name);
    if is_dir {
        let mut options = options.clone();
        let format = InputFormat::try_from(format.unwrap_or(QueryFormat::Text));
        options.format = Some(format.map_err(|()| {
            anyhow!("{name}: a directory holds documents, not a list of fingerprints")
        })?);
        let mut batch = Batch::new();
        documents::read(&[input.to_path_buf()], &options, &mut batch)?;
        push_documents(&batch, queries);
        return Ok(());
    }
    let mut bytes = Vec::new();
    if input.as_os_str() == "-" {
        std::io::stdin().lock().read_to_end(&mut bytes)
    } else {
        std::fs::File::open(input).and_then(|mut f| f.read_to_end(&mut bytes))
    }
    .with_context(|| format!("{name}: cannot read"))?;
    let format = format.unwrap_or_else(|| {
        let first = bytes
            .split(|&b| b == b'\n')
            .find(|l| !l.trim_ascii().is_empty())
            .unwrap_or_default();
        if first.trim_ascii_start().starts_with(b"{") {
            QueryFormat::Jsonl
        } else if first.contains(&b'\t') {
            QueryFormat::Tsv
        } else {
            QueryFormat::Fingerprints
        }
    });
    let Some(format) = InputFormat::try_from(format).ok() else {
        for fingerprint in read_fingerprints(&bytes[..], &name)? {
            queries.push(Query {
                document: None,
                fingerprint,
            });
        }
        return Ok(());
    };
    let options = ReadOptions {
        format: Some(format),
        ..options.clone()
    };
    let mut batch = Batch::new();
    let summary = read_documents(&bytes[..], &name, &options, &mut batch, &|_| {})?;
    for msg in &summary.first_skipped {
        eprintln!("simhashdb: skipped {msg}");
    }
    if summary.skipped > 0 {
        eprintln!(
            "simhashdb: skipped {} invalid documents in {name}",
            summary.skipped
        );
    }
    push_documents(&batch, queries);
    Ok(())
}

fn push_documents(batch: &Batch, queries: &mut Vec<Query>) {
    for i in 0..batch.len() {
        queries.push(Query {
            document: Some(batch.id(i).to_string()),
            fingerprint: batch.fingerprint(i),
        });
    }
}

impl TryFrom<QueryFormat> for InputFormat {
    type Error = ();
    /// The document format, or Err for a list of fingerprints.
    fn try_from(format: QueryFormat) -> Result<Self, ()> {
        match format {
            QueryFormat::Fingerprints => Err(()),
            QueryFormat::Tsv => Ok(InputFormat::Tsv),
            QueryFormat::Jsonl => Ok(InputFormat::Jsonl),
            QueryFormat::Text => Ok(InputFormat::Text),
        }
    }
}
