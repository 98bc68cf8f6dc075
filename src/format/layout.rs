//! The store directory: the one module that knows its file names.
//!
//! ```text
//! STORE/CATALOG                       the catalog: settings and the live runs (see catalog)
//! STORE/CATALOG.tmp                   a catalog being committed (renamed over CATALOG)
//! STORE/LOCK                          the writer lock, holding the holder's pid
//! STORE/runs/<id: 10 digits>/         one run, immutable once written
//!     docs.redb                       tables "docs" and "postings"
//!     shard-<fff: 3 digits>.redb      tables "t000".."tNNN": one group of shards
//! ```
//!
//! Run directories are named so that their order is their ids' order; a name that does not
//! parse as a run id is not a run.

use std::ffi::OsStr;
use std::fs::File;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

const CATALOG: &str = "CATALOG";
const CATALOG_TMP: &str = "CATALOG.tmp";
const LOCK: &str = "LOCK";
const RUNS: &str = "runs";
const DOCS: &str = "docs.redb";
const SHARD_PREFIX: &str = "shard-";

/// The catalog file of the store at `store`.
pub(crate) fn catalog_file(store: &Path) -> PathBuf {
    store.join(CATALOG)
}

/// Where a catalog is written before it is renamed over the catalog file.
pub(crate) fn catalog_tmp_file(store: &Path) -> PathBuf {
    store.join(CATALOG_TMP)
}

/// The writer lock's file.
pub(crate) fn lock_file(store: &Path) -> PathBuf {
    store.join(LOCK)
}

/// The directory that holds every run directory.
pub(crate) fn runs_dir(store: &Path) -> PathBuf {
    store.join(RUNS)
}

/// The directory of run `id`.
pub(crate) fn run_dir(store: &Path, id: u64) -> PathBuf {
    runs_dir(store).join(format!("{id:010}"))
}

/// The run id a directory entry of [`runs_dir`] is named after, if it is a run's.
pub(crate) fn run_id(name: &OsStr) -> Option<u64> {
    // At least 10 digits: ids from 1e10 on are written with more.
    name.to_str()
        .filter(|n| n.len() >= 10 && n.bytes().all(|b| b.is_ascii_digit()))
        .and_then(|n| n.parse().ok())
}

/// The docs file of the run in `run_dir`.
pub(crate) fn docs_file(run_dir: &Path) -> PathBuf {
    run_dir.join(DOCS)
}

/// Shard file `file` of the run in `run_dir`.
pub(crate) fn shard_file(run_dir: &Path, file: usize) -> PathBuf {
    run_dir.join(format!("{SHARD_PREFIX}{file:03}.redb"))
}

/// Whether a file of a run directory is a shard file (else it is the docs file).
pub(crate) fn is_shard_file(name: &OsStr) -> bool {
    name.to_string_lossy().starts_with(SHARD_PREFIX)
}

/// Makes a directory's entries (created, renamed or removed files) durable.
pub(crate) fn sync_dir(dir: &Path) -> Result<()> {
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(|e| Error::io(dir, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_ids_round_trip_through_their_directory_names() {
        let store = Path::new("s");
        for id in [0, 1, 42, 9_999_999_999, 12_345_678_901] {
            let dir = run_dir(store, id);
            assert_eq!(run_id(dir.file_name().unwrap()), Some(id));
        }
        for name in ["", "12", "abcdefghij", "000000001", "0000000001.tmp"] {
            assert_eq!(run_id(OsStr::new(name)), None, "{name}");
        }
    }
}
