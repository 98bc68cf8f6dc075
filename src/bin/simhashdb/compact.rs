//! `simhashdb compact`: merge runs and reclaim space.

use std::io::Write;
use std::path::PathBuf;

use anyhow::{Context, Result};
use simhashdb::{CompactSummary, Snapshot};

use crate::output;

/// Merge every run into one: drops deleted documents and fingerprints no id has, reclaims
/// their space, and makes queries probe one run. Readers keep working meanwhile and see the
/// store before or after. With --if-due, merge only what the compaction policy asks for (as
/// `insert` does after each batch).
#[derive(clap::Args)]
pub struct Args {
    /// The store.
    store: PathBuf,
    #[command(flatten)]
    wait: crate::writer::WaitArgs,
    /// Merge only what the policy says is due.
    #[arg(long)]
    if_due: bool,
    /// Print the summary as JSON.
    #[arg(long)]
    json: bool,
    /// Say which runs would be merged, and change nothing.
    #[arg(long)]
    dry_run: bool,
}

pub fn run(args: Args) -> Result<()> {
    if args.dry_run {
        // A dry run reads: no lock, nothing written or removed.
        let plan = Snapshot::open(&args.store)
            .with_context(|| format!("{}: cannot open the store", args.store.display()))?
            .preview_compaction(args.if_due);
        let mut out = output::stdout();
        if args.json {
            output::json_line(&mut out, &plan)?;
        } else if plan.merged_runs.is_empty() {
            writeln!(out, "nothing to compact (dry run)")?;
        } else {
            writeln!(
                out,
                "would merge runs {:?}: runs {} -> {}, {} table entries; {} (dry run: nothing \
                 changed)",
                plan.merged_runs,
                plan.runs_before,
                plan.runs_after,
                plan.table_entries,
                disk(&plan)
            )?;
        }
        out.flush()?;
        return Ok(());
    }
    let mut store = crate::writer::open(&args.store, &args.wait)?;
    let plan = store.snapshot()?.preview_compaction(args.if_due);
    if !plan.merged_runs.is_empty() && !args.json {
        eprintln!(
            "simhashdb: merging {} runs: {}",
            plan.merged_runs.len(),
            disk(&plan)
        );
    }
    // Nothing due: the summary of a compaction that merged nothing, as `--json` prints it.
    let summary = if args.if_due {
        store
            .compact_if_due()
            .map(|due| due.unwrap_or_else(|| CompactSummary::unchanged(&store)))
    } else {
        store.compact()
    }
    .with_context(|| {
        format!(
            "{}: the compaction failed; the store is as it was",
            args.store.display()
        )
    })?;
    let mut out = output::stdout();
    if args.json {
        output::json_line(&mut out, &summary)?;
    } else if summary.merged_runs == 0 {
        writeln!(out, "nothing to compact")?;
    } else {
        writeln!(out, "{}", describe(&summary))?;
    }
    out.flush()?;
    Ok(())
}

/// One line: runs, bytes before and after, what was dropped, speed.
/// The disk a merge needs and what is free, as people read it.
fn disk(plan: &simhashdb::CompactionPreview) -> String {
    let mib = |b: u64| format!("{:.1} MiB", b as f64 / f64::from(1 << 20));
    let free = match plan.bytes_free {
        Some(free) if free < plan.bytes_needed => format!("{} free: not enough", mib(free)),
        Some(free) => format!("{} free", mib(free)),
        None => "free space unknown".to_string(),
    };
    format!(
        "needs up to {} of free disk, {free}",
        mib(plan.bytes_needed)
    )
}

pub fn describe(s: &CompactSummary) -> String {
    let rate = if s.seconds > 0.0 {
        s.table_entries as f64 / s.seconds / 1e6
    } else {
        0.0
    };
    format!(
        "compacted: runs {} -> {} ({} merged); {} bytes used on disk before, {} after (file \
         lengths {} -> {}); dropped {} document entries and {} fingerprints; {} table entries \
         in {:.2} s ({rate:.1} M/s)",
        s.runs_before,
        s.runs_after,
        s.merged_runs,
        s.bytes_before,
        s.bytes_after,
        s.file_bytes_before,
        s.file_bytes_after,
        s.dropped_documents,
        s.dropped_fingerprints,
        s.table_entries,
        s.seconds,
    )
}
