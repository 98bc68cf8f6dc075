//! `simhashdb expire`: remove whole insert batches.

use std::io::Write;
use std::path::PathBuf;

use anyhow::{Context, Result};
use simhashdb::{ExpireSelector, Snapshot};

use crate::exit_codes::usage;
use crate::output;

/// Delete every document still held from the insert batches committed before a date, or with
/// a label (see `simhashdb batches`). A document belongs to the batch that last changed its
/// fingerprint; re-inserting it unchanged does not move it to a newer batch. A batch expires
/// once: expiring it again changes nothing and records nothing.
#[derive(clap::Args)]
#[command(group(clap::ArgGroup::new("which").required(true).args(["before", "batch"])))]
pub struct Args {
    /// The store.
    store: PathBuf,
    #[command(flatten)]
    wait: crate::writer::WaitArgs,
    /// Batches committed before this UTC time: YYYY-MM-DD, YYYY-MM-DDTHH:MM:SSZ, or Nd (N
    /// days ago).
    #[arg(long, value_name = "DATE")]
    before: Option<String>,
    /// Batches inserted with this --label.
    #[arg(long, value_name = "LABEL")]
    batch: Option<String>,
    /// Print the summary as JSON.
    #[arg(long)]
    json: bool,
    /// Say which batches and how many documents would go, and change nothing.
    #[arg(long)]
    dry_run: bool,
}

pub fn run(args: Args) -> Result<()> {
    let selector = match (&args.before, &args.batch) {
        (Some(date), None) => {
            ExpireSelector::before_date(date).map_err(|e| usage(format!("--before: {e}")))?
        }
        (None, Some(label)) => ExpireSelector::Label(label.clone()),
        _ => unreachable!("clap requires exactly one of --before and --batch"),
    };
    let cannot_open = || format!("{}: cannot open the store", args.store.display());
    let summary = if args.dry_run {
        // A dry run reads a snapshot: no lock, nothing written or removed.
        Snapshot::open(&args.store)
            .with_context(cannot_open)?
            .preview_expire(&selector)
    } else {
        let mut store = crate::writer::open(&args.store, &args.wait)?;
        store.expire(&selector)
    }
    .with_context(|| format!("{}: nothing was expired", args.store.display()))?;
    let expired = &summary.expired_batches;
    let mut out = output::stdout();
    if args.json {
        output::json_line(&mut out, &summary)?;
    } else if args.dry_run {
        writeln!(
            out,
            "would expire batches {expired:?}: {} documents (dry run: nothing changed)",
            summary.deleted
        )?;
    } else {
        match summary.batch {
            Some(b) => writeln!(
                out,
                "expired batches {expired:?}: deleted {} documents (batch {b})",
                summary.deleted
            )?,
            None => writeln!(out, "no batch matched: nothing changed")?,
        }
    }
    out.flush()?;
    Ok(())
}
