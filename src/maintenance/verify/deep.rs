//! `verify --deep`: redb's own integrity check of every file of every run, each on a private
//! copy, so the store is never written.

use std::path::{Path, PathBuf};

use super::report::Report;
use crate::error::{guard_redb, Error, Result};
use crate::format::catalog::Catalog;
use crate::format::layout::{self, docs_file, shard_file};
use crate::sys::progress::Progress;

/// redb's own integrity check of every file of every run, each on a private copy.
pub(super) fn deep_check(
    dir: &Path,
    catalog: &Catalog,
    report: &mut Report,
    progress: &dyn Progress,
) -> Result<()> {
    let scratch = tempfile::Builder::new()
        .prefix("simhashdb-verify-")
        .tempdir()
        .map_err(|e| Error::io(std::env::temp_dir(), e))?;
    let copy = scratch.path().join("copy.redb");
    for run in &catalog.runs {
        let run_dir = layout::run_dir(dir, run.id);
        let mut files: Vec<PathBuf> = vec![docs_file(&run_dir)];
        files.extend(
            run.present_files
                .iter()
                .map(|&f| shard_file(&run_dir, usize::from(f))),
        );
        for path in files {
            std::fs::copy(&path, &copy).map_err(|e| Error::io(&copy, e))?;
            report.deep_checked += 1;
            let outcome = guard_redb(&path, || {
                redb::Database::open(&copy)
                    .and_then(|mut db| db.check_integrity())
                    .map_err(|e| Error::redb(&path, e))
            });
            match outcome {
                Ok(true) => {}
                Ok(false) => report.find(
                    &path,
                    None,
                    "redb's integrity check found damage (it repaired its private copy; the \
                     store's file is unchanged)",
                ),
                Err(e) => report.find(&path, None, format!("redb's integrity check failed: {e}")),
            }
            std::fs::remove_file(&copy).map_err(|e| Error::io(&copy, e))?;
            progress.advance(1);
        }
    }
    Ok(())
}
