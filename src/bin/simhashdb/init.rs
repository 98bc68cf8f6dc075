//! `simhashdb init`: create a store.

use std::path::PathBuf;

use anyhow::{Context, Result};
use simhashdb::catalog::CompactionPolicy;
use simhashdb::{Settings, Store};

/// Create a new store (a directory).
#[derive(clap::Args)]
pub struct Args {
    /// Directory to create; it must not exist or be empty.
    store: PathBuf,
    /// Blocks M each fingerprint is split into.
    #[arg(long = "blocks", value_name = "M", default_value_t = Settings::default().blocks)]
    blocks: u8,
    /// Largest distance K a query may ask for; the store keeps C(M, K) permuted tables.
    #[arg(long = "distance", value_name = "K", default_value_t = Settings::default().distance)]
    distance: u8,
    /// Shard files per run, by the leading bits of the permuted keys (a power of two <= 256).
    #[arg(long = "shards", value_name = "S", default_value_t = Settings::default().shards)]
    shards: u16,
    /// Past this many runs an insert merges the newest ones; 0 never merges automatically.
    #[arg(long, value_name = "N", default_value_t = CompactionPolicy::default().max_runs)]
    max_runs: u16,
    /// Runs of about the same size merged into one (a size tier spans this factor; >= 2).
    #[arg(long, value_name = "F", default_value_t = CompactionPolicy::default().merge_factor,
          value_parser = clap::value_parser!(u16).range(2..))]
    merge_factor: u16,
}

pub fn run(args: Args) -> Result<()> {
    let settings = Settings {
        blocks: args.blocks,
        distance: args.distance,
        shards: args.shards,
    };
    let tables = settings.table_count();
    let mut store = Store::create(&args.store, settings)
        .with_context(|| format!("{}: cannot create the store", args.store.display()))?;
    let policy = CompactionPolicy {
        max_runs: args.max_runs,
        merge_factor: args.merge_factor,
    };
    if policy != CompactionPolicy::default() {
        store.set_compaction_policy(policy).with_context(|| {
            format!(
                "{}: cannot record the compaction policy",
                args.store.display()
            )
        })?;
    }
    eprintln!(
        "created {}: {} blocks, distance {}, {} tables, {} shards",
        args.store.display(),
        settings.blocks,
        settings.distance,
        tables,
        settings.shards
    );
    Ok(())
}
