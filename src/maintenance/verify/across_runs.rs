//! The checks between runs: no fingerprint in two runs' tables, every live fingerprint in
//! some run's, and the catalog's count of documents.

use std::collections::BTreeSet;

use super::report::Report;
use crate::error::Result;
use crate::format::layout;
use crate::read::snapshot::Snapshot;

/// No fingerprint in two runs' tables; every live fingerprint in the tables; the catalog's
/// document count.
pub(super) fn check_across_runs(
    snapshot: &Snapshot,
    mut stored: Vec<u64>,
    report: &mut Report,
) -> Result<()> {
    stored.sort_unstable();
    let mut twice = BTreeSet::new();
    for w in stored.windows(2) {
        if w[0] == w[1] {
            twice.insert(w[0]);
        }
    }
    for fp in twice.iter().take(10) {
        report.find(
            &layout::runs_dir(snapshot.dir()),
            None,
            format!("fingerprint {fp:016x} is in the tables of more than one run"),
        );
    }
    stored.dedup();
    report.fingerprints = stored.len() as u64;

    let mut live: Vec<u64> = Vec::new();
    let mut documents = 0u64;
    let walked = snapshot.for_each_live_document(|_, fp, _| {
        documents += 1;
        live.push(fp);
    });
    report.absorb(walked)?;
    live.sort_unstable();
    live.dedup();
    let missing: Vec<u64> = live
        .iter()
        .copied()
        .filter(|fp| stored.binary_search(fp).is_err())
        .collect();
    for fp in missing.iter().take(10) {
        report.find(
            &layout::runs_dir(snapshot.dir()),
            None,
            format!("live fingerprint {fp:016x} is in no run's tables: queries cannot find it"),
        );
    }
    if missing.len() > 10 {
        report.find(
            &layout::runs_dir(snapshot.dir()),
            None,
            format!(
                "... and {} more live fingerprints in no tables",
                missing.len() - 10
            ),
        );
    }
    report.documents = documents;
    if documents != snapshot.catalog().documents {
        report.find(
            &layout::catalog_file(snapshot.dir()),
            None,
            format!(
                "says {} documents but {documents} are live",
                snapshot.catalog().documents
            ),
        );
    }
    Ok(())
}
