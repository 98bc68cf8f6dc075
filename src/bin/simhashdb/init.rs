//! `simhashdb init`: create a store.

use std::path::PathBuf;

use anyhow::{Context, Result};
use simhashdb::{CompactionPolicy, CreateOptions, Scheme, Settings, Store};

use crate::documents::SchemeArgs;

/// Create a new store (a directory).
///
/// Without --blocks, M is chosen for --distance and --expected-size by the rule in
/// docs/design.md (fewest blocks read per query); K = 3 at 1e9 gives M = 5.
/// Settings that are impractical at the expected size are warned about on stderr.
#[derive(clap::Args)]
pub struct Args {
    /// Directory to create; it must not exist or be empty.
    store: PathBuf,
    /// Blocks M each fingerprint is split into [default: chosen for K and the expected size].
    #[arg(long = "blocks", value_name = "M", allow_negative_numbers = true)]
    blocks: Option<u8>,
    /// Largest distance K a query may ask for; the store keeps C(M, K) permuted tables.
    #[arg(long = "distance", value_name = "K", default_value_t = Settings::default().distance, allow_negative_numbers = true)]
    distance: u8,
    /// About how many fingerprints the store will hold (chooses M when --blocks is absent).
    #[arg(long, value_name = "N", default_value_t = Settings::DEFAULT_EXPECTED_SIZE, value_parser = parse_size, allow_negative_numbers = true)]
    expected_size: u64,
    /// Shard files per run, by the leading bits of the permuted keys (a power of two <= 256).
    #[arg(long = "shards", value_name = "S", allow_negative_numbers = true)]
    shards: Option<u16>,
    #[command(flatten)]
    scheme: SchemeArgs,
    /// Keep a verification sketch of each document inserted as text, so that `audit`, `query`
    /// and `dedup` can check candidates' word 3-shingle Jaccard with --min-jaccard without
    /// the text.
    #[arg(long)]
    sketch: bool,
    /// Bytes of each sketch: more estimate the Jaccard more closely (standard error at
    /// J = 0.8: 0.019 with 128 bytes, 0.009 with 512).
    #[arg(long, value_name = "N", requires = "sketch", default_value_t = Scheme::DEFAULT_SKETCH_BYTES,
          value_parser = clap::value_parser!(u16).range(64..=1024), allow_negative_numbers = true)]
    sketch_bytes: u16,
    /// Past this many runs an insert merges the newest ones; 0 never merges automatically.
    #[arg(long, value_name = "N", default_value_t = CompactionPolicy::default().max_runs, allow_negative_numbers = true)]
    max_runs: u16,
    /// Runs of about the same size merged into one (a size tier spans this factor; >= 2).
    #[arg(long, value_name = "F", default_value_t = CompactionPolicy::default().merge_factor,
          value_parser = clap::value_parser!(u16).range(2..), allow_negative_numbers = true)]
    merge_factor: u16,
}

/// A count such as 1000000, 1e6 or 2.5e9.
pub fn parse_size(text: &str) -> Result<u64, String> {
    let value: f64 = text
        .parse()
        .map_err(|_| format!("{text:?} is not a number (e.g. 1000000 or 1e6)"))?;
    if !(1.0..=1e15).contains(&value) {
        return Err(format!("{text} is out of range: between 1 and 1e15"));
    }
    Ok(value.round() as u64)
}

pub fn run(args: Args) -> Result<()> {
    let mut scheme = args.scheme.scheme()?;
    if args.sketch {
        scheme = scheme.with_sketch(args.sketch_bytes)?;
    }
    let options = CreateOptions {
        distance: args.distance,
        blocks: args.blocks,
        expected_size: args.expected_size,
        shards: args.shards,
        scheme,
        policy: CompactionPolicy {
            max_runs: args.max_runs,
            merge_factor: args.merge_factor,
        },
    };
    let settings = options.settings()?;
    let store = Store::create_from(&args.store, &options)
        .with_context(|| format!("{}: cannot create the store", args.store.display()))?;
    for warning in settings.warnings(args.expected_size) {
        eprintln!("simhashdb: warning: {warning}");
    }
    drop(store);
    let sketch = match scheme.sketch_bytes() {
        Some(bytes) => format!(", sketches of {bytes} bytes"),
        None => String::new(),
    };
    eprintln!(
        "created {}: {} blocks, distance {}, {} tables, {} shards, scheme {}{sketch}",
        args.store.display(),
        settings.blocks,
        settings.distance,
        settings.table_count(),
        settings.shards,
        scheme.name()
    );
    Ok(())
}
