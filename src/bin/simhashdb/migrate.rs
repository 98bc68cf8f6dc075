//! `simhashdb migrate`: upgrade a store's on-disk format.

use std::io::Write;
use std::path::PathBuf;

use anyhow::{Context, Result};

/// Upgrade a store written by an older simhashdb to this build's format, one version at a time
/// (see migrations/ in the source). Each step commits atomically: a crash leaves the store at
/// the old or the new version, and running migrate again finishes the job.
#[derive(clap::Args)]
pub struct Args {
    /// The store.
    store: PathBuf,
    /// Print the outcome as one JSON line: {"from", "to", "migrated"}.
    #[arg(long)]
    json: bool,
}

pub fn run(args: Args) -> Result<()> {
    let done = simhashdb::migrate(&args.store)
        .with_context(|| format!("{}: cannot migrate the store", args.store.display()))?;
    if args.json {
        let value = serde_json::json!({
            "from": done.from,
            "to": done.to,
            "migrated": done.from != done.to,
        });
        let mut out = crate::output::stdout();
        writeln!(out, "{value}")?;
        out.flush()?;
    } else if done.from == done.to {
        eprintln!(
            "{}: already at format version {}: nothing to do",
            args.store.display(),
            done.to
        );
    } else {
        eprintln!(
            "{}: migrated from format version {} to {}",
            args.store.display(),
            done.from,
            done.to
        );
    }
    Ok(())
}
