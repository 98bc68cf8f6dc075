//! `simhashdb migrate`: upgrade a store's on-disk format.

use std::io::Write;
use std::path::PathBuf;

use anyhow::{Context, Result};
use simhashdb::Store;

/// Upgrade a store written by an older simhashdb to this build's format, one version at a time
/// (see migrations/ in the source). Each step commits atomically: a crash leaves the store at
/// the old or the new version, and running migrate again finishes the job.
#[derive(clap::Args)]
pub struct Args {
    /// The store.
    store: PathBuf,
    #[command(flatten)]
    wait: crate::writer::WaitArgs,
    /// Print the outcome as one JSON line: {"from", "to", "migrated"}.
    #[arg(long)]
    json: bool,
}

pub fn run(args: Args) -> Result<()> {
    let waited = args.wait.duration()?;
    let from = Store::migrate_waiting(&args.store, waited)
        .map_err(|e| crate::writer::locked_after(e, waited))
        .with_context(|| format!("{}: cannot migrate the store", args.store.display()))?;
    let to = simhashdb::Snapshot::open(&args.store)
        .with_context(|| format!("{}: cannot open the migrated store", args.store.display()))?
        .format_version();
    if args.json {
        /// What `migrate --json` prints.
        #[derive(serde::Serialize)]
        struct Outcome {
            from: u32,
            to: u32,
            migrated: bool,
        }
        let mut out = crate::output::stdout();
        let migrated = from != to;
        crate::output::json_line(&mut out, &Outcome { from, to, migrated })?;
        out.flush()?;
    } else if from == to {
        eprintln!(
            "{}: already at format version {}: nothing to do",
            args.store.display(),
            to
        );
    } else {
        eprintln!(
            "{}: migrated from format version {} to {}",
            args.store.display(),
            from,
            to
        );
    }
    Ok(())
}
