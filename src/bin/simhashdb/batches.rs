//! `simhashdb batches`: the store's batch history.

use std::io::Write;
use std::path::PathBuf;

use anyhow::{Context, Result};
use simhashdb::Snapshot;

use crate::output;

/// List every committed batch, oldest first, as tab-separated columns:
/// BATCH KIND COMMITTED_UTC LABEL INSERTED REPLACED UNCHANGED DELETED EXPIRED_BY
/// ('-' for no label or not expired).
#[derive(clap::Args)]
pub struct Args {
    /// The store.
    store: PathBuf,
    /// Print JSON Lines, one object per batch.
    #[arg(long)]
    json: bool,
}

pub fn run(args: Args) -> Result<()> {
    let snapshot = Snapshot::open(&args.store)
        .with_context(|| format!("{}: cannot open the store", args.store.display()))?;
    let mut out = output::stdout();
    if !args.json {
        writeln!(
            out,
            "batch\tkind\tcommitted_utc\tlabel\tinserted\treplaced\tunchanged\tdeleted\texpired_by"
        )?;
    }
    for b in &snapshot.batches() {
        if args.json {
            output::json_line(&mut out, b)?;
        } else {
            writeln!(
                out,
                "{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}",
                b.batch,
                b.kind,
                b.committed_utc,
                b.label.as_deref().unwrap_or("-"),
                b.inserted,
                b.replaced,
                b.unchanged,
                b.deleted,
                b.expired_by.map_or("-".to_string(), |e| e.to_string()),
            )?;
        }
    }
    out.flush()?;
    Ok(())
}
