//! `simhashdb verify`: check every block and invariant of a store.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use simhashdb::Store;

use crate::exit_codes;

use crate::output;

/// Check a store without changing it (its files stay byte-identical): every block checksum,
/// every invariant (each live
/// fingerprint exactly once in each permuted table, ids and fingerprints consistent, counts
/// equal to the catalog's). Prints one LOCATION<TAB>PROBLEM line per finding.
///
/// Exit code: 0 clean, 1 findings, 2 the check could not run.
#[derive(clap::Args)]
pub struct Args {
    /// The store.
    store: PathBuf,
    /// Also run redb's own integrity check (its page checksums and B-tree structure) on every
    /// file. It runs on a private copy of each file in TMPDIR, one at a time (free space: the
    /// largest file), so the store is never written.
    #[arg(long)]
    deep: bool,
    /// Print one JSON object.
    #[arg(long)]
    json: bool,
}

pub fn run(args: Args) -> ExitCode {
    match check(&args) {
        Ok(true) => ExitCode::from(exit_codes::SUCCESS),
        Ok(false) => ExitCode::from(exit_codes::VERIFY_FINDINGS),
        Err(err) if exit_codes::is_broken_pipe(&err) => ExitCode::from(exit_codes::SUCCESS),
        Err(err) => {
            eprintln!("simhashdb: {}", exit_codes::message(&err));
            ExitCode::from(exit_codes::VERIFY_ERROR)
        }
    }
}

/// Whether the store is clean.
fn check(args: &Args) -> anyhow::Result<bool> {
    let bars = crate::progress::Bars::default();
    let report = Store::verify(&args.store, args.deep, &bars)
        .with_context(|| format!("{}: cannot verify the store", args.store.display()))?;
    let mut out = output::stdout();
    if args.json {
        output::json_line(&mut out, &report)?;
    } else {
        for f in &report.findings {
            writeln!(out, "{}\t{}", f.location(), f.problem)?;
        }
    }
    out.flush()?;
    for debris in &report.debris {
        eprintln!("warning: {}", crate::writer::describe(debris));
    }
    eprintln!(
        "{}: {} findings{}; checked {} runs, {} blocks, {} live documents, {} fingerprints{}",
        args.store.display(),
        report.findings.len(),
        match report.debris.len() {
            0 => String::new(),
            n => format!(", {n} debris (warnings above)"),
        },
        report.runs,
        report.blocks,
        report.documents,
        report.fingerprints,
        if args.deep {
            format!(
                ", {} files with redb's integrity check",
                report.deep_checked
            )
        } else {
            String::new()
        }
    );
    Ok(report.findings.is_empty())
}
