//! `simhashdb repair`: rebuild damaged runs from the store's own copies.

use std::io::Write;
use std::path::PathBuf;

use anyhow::{Context, Result};
use simhashdb::Store;

use crate::output;

/// Read every block of every run and rebuild each damaged run from the copies the store keeps
/// (every fingerprint once per permuted table, every live document as an entry and a posting),
/// committed at once like a compaction: a crash leaves the damaged or the repaired store.
/// Reports per run what was damaged, what was rebuilt, and what no copy held (by id). The
/// catalog has no second copy: a damaged catalog is refused (restore it from a backup).
#[derive(clap::Args)]
pub struct Args {
    /// The store.
    store: PathBuf,
    #[command(flatten)]
    wait: crate::writer::WaitArgs,
    /// Report what would be rebuilt, and change nothing.
    #[arg(long)]
    dry_run: bool,
    /// Print one JSON line per damaged run, then a summary line.
    #[arg(long)]
    json: bool,
}

pub fn run(args: Args) -> Result<()> {
    let failed = || {
        format!(
            "{}: the repair failed; the store is as it was",
            args.store.display()
        )
    };
    let report = if args.dry_run {
        // A dry run reads: no lock, nothing written or removed.
        let bars = crate::progress::Bars::default();
        Store::preview_repair(&args.store, &bars).with_context(failed)?
    } else {
        let mut store = crate::writer::open(&args.store, &args.wait)?;
        store.repair().with_context(failed)?
    };
    let mut out = output::stdout();
    for r in &report.runs {
        if args.json {
            output::json_line(&mut out, r)?;
            continue;
        }
        for damage in &r.damage {
            writeln!(out, "run {}: damaged: {damage}", r.run)?;
        }
        let rebuilt = match r.replaced_by {
            Some(new) => format!("rebuilt as run {new}"),
            None => "would be rebuilt".to_string(),
        };
        writeln!(
            out,
            "run {}: {rebuilt}: {} documents ({} from their postings, batch included), \
             {} fingerprints ({} put back in the tables)",
            r.run, r.documents, r.documents_from_postings, r.fingerprints, r.fingerprints_restored
        )?;
        if r.documents_lost > 0 {
            let none_or = |ids: &[String]| match ids.is_empty() {
                true => "none".to_string(),
                false => ids.join(" "),
            };
            writeln!(
                out,
                "run {}: not recoverable: {} document entries (deletions, or entries lost with \
                 their postings); ids an older run holds that may be live again: {}",
                r.run,
                r.documents_lost,
                none_or(&r.ids_maybe_undeleted)
            )?;
            let unnamed = r.documents_lost.saturating_sub(r.ids_lost.len() as u64);
            writeln!(
                out,
                "run {}: lost documents to insert again, named by a surviving sketch: {}{}",
                r.run,
                none_or(&r.ids_lost),
                match unnamed {
                    0 => String::new(),
                    n => format!(
                        "; {n} more are named by no copy left (insert the batches of run {} \
                         again from their source to restore them)",
                        r.run
                    ),
                }
            )?;
            if !r.fingerprints_lost.is_empty() {
                writeln!(
                    out,
                    "run {}: fingerprints whose documents were lost (find them in the source by \
                     fingerprint and insert them again): {}",
                    r.run,
                    r.fingerprints_lost.join(" ")
                )?;
            }
        }
        if r.sketches_lost > 0 {
            let more = r.sketches_lost - r.ids_sketch_lost.len() as u64;
            writeln!(
                out,
                "run {}: {} documents may have lost their sketch (insert their text again to \
                 sketch them): {}{}",
                r.run,
                r.sketches_lost,
                r.ids_sketch_lost.join(" "),
                if more > 0 {
                    format!(" and {more} more")
                } else {
                    String::new()
                }
            )?;
        }
    }
    let damaged = report.runs.len();
    if args.json {
        output::json_line(&mut out, &report)?;
    } else if damaged == 0 {
        writeln!(out, "no damage found in {} runs", report.runs_checked)?;
    } else if report.committed {
        writeln!(out, "repaired {damaged} of {} runs", report.runs_checked)?;
    } else {
        writeln!(
            out,
            "would repair {damaged} of {} runs (dry run: nothing changed)",
            report.runs_checked
        )?;
    }
    out.flush()?;
    Ok(())
}
