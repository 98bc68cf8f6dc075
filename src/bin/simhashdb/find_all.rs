//! `simhashdb find-all`: seomoz's find_all on a list of fingerprints, without a store.

use std::fs::File;
use std::io::{BufReader, Write};
use std::path::PathBuf;
use std::time::Instant;

use anyhow::{Context, Result};
use simhashdb::{find_all, read_fingerprints, Settings};

use crate::{output, progress};

/// Print every pair of distinct fingerprints within K bits in a list, in memory.
///
/// Input: one fingerprint per line (16 hex digits, 0x hex or decimal); equal values count once,
/// as in seomoz's find_all. Output: FP_A<TAB>FP_B<TAB>DISTANCE with FP_A < FP_B, sorted.
#[derive(clap::Args)]
pub struct Args {
    /// Files of fingerprints ('-' or none = stdin).
    inputs: Vec<PathBuf>,
    /// Blocks m each fingerprint is split into.
    #[arg(long, value_name = "M", default_value_t = Settings::default().blocks)]
    blocks: u8,
    /// Largest distance K to report (below M).
    #[arg(long, value_name = "K", default_value_t = Settings::default().distance)]
    distance: u8,
    /// Write JSON Lines {"a", "b", "distance"}.
    #[arg(long)]
    json: bool,
}

pub fn run(args: Args) -> Result<()> {
    let started = Instant::now();
    let settings = Settings {
        blocks: args.blocks,
        distance: args.distance,
        shards: 1,
    };
    settings.validate()?;
    let mut fingerprints = Vec::new();
    let inputs = if args.inputs.is_empty() {
        vec![PathBuf::from("-")]
    } else {
        args.inputs.clone()
    };
    for path in &inputs {
        if path.as_os_str() == "-" {
            fingerprints.extend(read_fingerprints(std::io::stdin().lock(), "<stdin>")?);
        } else {
            let file =
                File::open(path).with_context(|| format!("{}: cannot open", path.display()))?;
            fingerprints.extend(read_fingerprints(
                BufReader::new(file),
                &path.display().to_string(),
            )?);
        }
    }
    let bar = progress::bar(settings.table_count() as u64, "find-all");
    let pairs = find_all(&fingerprints, &settings, |n| bar.inc(n));
    bar.finish_and_clear();
    let mut out = output::stdout();
    for p in &pairs {
        if args.json {
            let value = serde_json::json!({
                "a": simhashdb::format_fingerprint(p.a),
                "b": simhashdb::format_fingerprint(p.b),
                "distance": p.distance,
            });
            writeln!(out, "{value}")?;
        } else {
            writeln!(out, "{:016x}\t{:016x}\t{}", p.a, p.b, p.distance)?;
        }
    }
    out.flush()?;
    eprintln!(
        "find-all: {} fingerprints, m={} K={}: {} pairs, {:.2} s",
        fingerprints.len(),
        args.blocks,
        args.distance,
        pairs.len(),
        started.elapsed().as_secs_f64()
    );
    Ok(())
}
