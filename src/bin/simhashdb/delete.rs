//! `simhashdb delete`: remove documents by id.

use std::io::Write;
use std::path::PathBuf;

use anyhow::{Context, Result};
use simhashdb::{Batch, Snapshot, Source, Store};

use crate::exit_codes::usage;

use crate::output;

/// Delete documents, all or nothing. Their fingerprints stop matching at once and leave the
/// tables at the next compaction.
///
/// Ids come from the arguments or from --input: one per line, either a bare id, the first
/// column of an ID<TAB>FINGERPRINT line, or a JSON object with an "id".
#[derive(clap::Args)]
pub struct Args {
    /// The store.
    store: PathBuf,
    #[command(flatten)]
    wait: crate::writer::WaitArgs,
    /// Ids to delete.
    ids: Vec<String>,
    /// A file of ids, one per line; '-' reads stdin.
    #[arg(long, value_name = "FILE")]
    input: Option<PathBuf>,
    /// Print the summary as JSON.
    #[arg(long)]
    json: bool,
    /// Say what would be deleted, and change nothing.
    #[arg(long)]
    dry_run: bool,
}

/// What a delete runs on: a snapshot for a dry run, else the store opened for writing.
enum Target {
    Preview(Snapshot),
    Store(Store),
}

pub fn run(args: Args) -> Result<()> {
    let mut ids = args.ids.clone();
    for id in &ids {
        Batch::check_id(id).map_err(|e| usage(format!("argument {id:?}: {e}")))?;
    }
    if ids.is_empty() && args.input.is_none() {
        return Err(usage(
            "no ids to delete: give them as arguments or with --input FILE",
        ));
    }
    let cannot_open = || format!("{}: cannot open the store", args.store.display());
    // A dry run reads a snapshot: no lock, nothing written or removed.
    let mut target = if args.dry_run {
        Target::Preview(Snapshot::open(&args.store).with_context(cannot_open)?)
    } else {
        let store = crate::writer::open(&args.store, &args.wait)?;
        Target::Store(store)
    };
    if let Some(input) = &args.input {
        let source = Source::Files(std::slice::from_ref(input));
        ids.extend(source.ids().context("nothing was deleted")?);
    }
    let ids = ids.iter().map(String::as_str);
    let summary = match &mut target {
        Target::Preview(snapshot) => snapshot.preview_delete(ids),
        Target::Store(store) => store.delete(ids),
    }
    .with_context(|| format!("{}: nothing was deleted", args.store.display()))?;
    let mut out = output::stdout();
    if args.json {
        output::json_line(&mut out, &summary)?;
    } else {
        if args.dry_run {
            writeln!(
                out,
                "would delete {}, not found {} (dry run: nothing changed)",
                summary.deleted, summary.not_found
            )?;
            out.flush()?;
            return Ok(());
        }
        write!(
            out,
            "deleted {}, not found {}",
            summary.deleted, summary.not_found
        )?;
        match summary.batch {
            Some(b) => writeln!(out, " (batch {b})")?,
            None => writeln!(out, " (nothing changed: no batch recorded)")?,
        }
    }
    out.flush()?;
    Ok(())
}
