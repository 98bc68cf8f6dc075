//! `simhashdb get`: stored documents by id.

use std::io::Write;
use std::path::PathBuf;

use anyhow::{bail, Context, Result};
use simhashdb::Snapshot;

use crate::exit_codes::usage;
use crate::output;

/// Print stored documents by id: ID<TAB>FINGERPRINT<TAB>BATCH, one line per id found, in the
/// order asked. An id that is not stored is named on stderr, and the command then fails (exit
/// 1) after printing the others.
#[derive(clap::Args)]
pub struct Args {
    /// The store.
    store: PathBuf,
    /// Ids to look up.
    ids: Vec<String>,
    /// Print JSON Lines: {"id", "fingerprint", "batch"}.
    #[arg(long)]
    json: bool,
}

pub fn run(args: Args) -> Result<()> {
    if args.ids.is_empty() {
        return Err(usage("no ids: give the ids to look up as arguments"));
    }
    let snapshot = Snapshot::open(&args.store)
        .with_context(|| format!("{}: cannot open the store", args.store.display()))?;
    let mut out = output::stdout();
    let mut missing = Vec::new();
    for id in &args.ids {
        match snapshot.document(id)? {
            Some(doc) if args.json => output::json_line(&mut out, &doc)?,
            Some(doc) => writeln!(out, "{}\t{:016x}\t{}", doc.id, doc.fingerprint, doc.batch)?,
            None => missing.push(id.as_str()),
        }
    }
    out.flush()?;
    if !missing.is_empty() {
        bail!("not stored: {}", missing.join(", "));
    }
    Ok(())
}
