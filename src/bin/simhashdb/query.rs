//! `simhashdb query`: find stored documents near fingerprints.

use std::fs::File;
use std::io::{BufReader, Write};
use std::path::PathBuf;

use anyhow::{bail, Context, Result};
use simhashdb::input::read_fingerprints;
use simhashdb::{format_fingerprint, parse_fingerprint, Snapshot};

use crate::output;

/// Print every stored document within D bits of each query fingerprint.
///
/// One line per match: QUERY<TAB>ID<TAB>FINGERPRINT<TAB>DISTANCE, queries in input order,
/// each query's matches by distance, fingerprint, id.
#[derive(clap::Args)]
pub struct Args {
    /// The store.
    store: PathBuf,
    /// Query fingerprints (16 hex digits, 0x hex or decimal).
    fingerprints: Vec<String>,
    /// A file of query fingerprints, one per line; '-' reads stdin.
    #[arg(long, value_name = "FILE")]
    input: Option<PathBuf>,
    /// Largest distance to report (at most the store's K; default K).
    #[arg(long, value_name = "D")]
    distance: Option<u32>,
    /// Print JSON Lines: {"query", "id", "fingerprint", "distance"}.
    #[arg(long)]
    json: bool,
}

/// Queries answered per parallel round; bounds the memory held for results.
const ROUND: usize = 1 << 14;

pub fn run(args: Args) -> Result<()> {
    let mut queries = Vec::new();
    for (i, text) in args.fingerprints.iter().enumerate() {
        queries.push(
            parse_fingerprint(text).map_err(|msg| anyhow::anyhow!("argument {}: {msg}", i + 1))?,
        );
    }
    if let Some(path) = &args.input {
        let more = if path.as_os_str() == "-" {
            read_fingerprints(std::io::stdin().lock(), "<stdin>")?
        } else {
            let file =
                File::open(path).with_context(|| format!("{}: cannot open", path.display()))?;
            read_fingerprints(BufReader::new(file), &path.display().to_string())?
        };
        queries.extend(more);
    }
    if queries.is_empty() && args.input.is_none() {
        bail!("no query: give fingerprints as arguments or --input FILE");
    }
    let snapshot = Snapshot::open(&args.store)
        .with_context(|| format!("{}: cannot open the store", args.store.display()))?;
    let distance = args
        .distance
        .unwrap_or(u32::from(snapshot.settings().distance));
    let mut out = output::stdout();
    for round in queries.chunks(ROUND) {
        let answers = snapshot.query_many(round, distance)?;
        for (&q, matches) in round.iter().zip(answers) {
            for m in matches {
                if args.json {
                    let value = serde_json::json!({
                        "query": format_fingerprint(q),
                        "id": m.id,
                        "fingerprint": format_fingerprint(m.fingerprint),
                        "distance": m.distance,
                    });
                    writeln!(out, "{value}")?;
                } else {
                    writeln!(
                        out,
                        "{:016x}\t{}\t{:016x}\t{}",
                        q, m.id, m.fingerprint, m.distance
                    )?;
                }
            }
        }
    }
    out.flush()?;
    Ok(())
}
