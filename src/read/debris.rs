//! Debris: entries of `runs/` that no committed catalog names. A writer killed before its
//! commit leaves its run directory there, and a compaction killed after its commit leaves its
//! inputs. Nothing reads them; they only take disk space.
//!
//! Readers (`verify`, `stats`) report debris and never touch it. Only the writer lock's holder
//! removes it ([`crate::Store::open`] does), since a writer in progress has a run directory
//! that its catalog does not name yet. For the same reason a reader reports no debris while a
//! writer holds the lock: every unnamed directory may then be that writer's work in progress
//! (the writer removed all debris when it took the lock).

use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::format::catalog::Catalog;
use crate::format::layout::{self, sync_dir};
use crate::read::disk_usage::DiskBytes;
use crate::sys::lock::WriterLock;

/// An entry of a store's `runs/` directory that no committed catalog names.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
#[non_exhaustive]
pub struct Debris {
    /// The directory (or file) in `runs/`.
    pub path: PathBuf,
    /// Bytes it takes on disk (allocated blocks, as `du` counts).
    pub bytes: u64,
}

/// The entries of `runs/` that `catalog` does not name. Only exact for the lock holder.
pub(crate) fn unnamed(store: &Path, catalog: &Catalog) -> Result<Vec<Debris>> {
    let runs = layout::runs_dir(store);
    let mut found = Vec::new();
    for entry in std::fs::read_dir(&runs).map_err(|e| Error::io(&runs, e))? {
        let entry = entry.map_err(|e| Error::io(&runs, e))?;
        let named = layout::run_id(&entry.file_name())
            .is_some_and(|id| catalog.runs.iter().any(|r| r.id == id));
        if named {
            continue;
        }
        let path = entry.path();
        let meta = entry.metadata().map_err(|e| Error::io(&path, e))?;
        let bytes = if meta.is_dir() {
            DiskBytes::below(&path)?.used
        } else {
            DiskBytes::of_file(&meta).used
        };
        found.push(Debris { path, bytes });
    }
    found.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(found)
}

/// The debris of the store at `store` as a reader sees it: none while a writer holds the lock
/// (its run in progress is not debris). The catalog is read before and after listing `runs/`,
/// and the listing repeated if a writer committed in between, so that a run committed during
/// the listing is not taken for debris; a store that commits on every try reports none.
pub(crate) fn seen_by_reader(store: &Path) -> Result<Vec<Debris>> {
    const TRIES: usize = 8;
    let mut catalog = Catalog::read(store)?;
    for _ in 0..TRIES {
        let found = unnamed(store, &catalog)?;
        if found.is_empty() || WriterLock::holder(&layout::lock_file(store)).is_some() {
            return Ok(Vec::new());
        }
        let after = Catalog::read(store)?;
        if after == catalog {
            return Ok(found);
        }
        catalog = after;
    }
    Ok(Vec::new())
}

/// Removes `debris` (found by the lock holder), then syncs `runs/`.
pub(crate) fn remove(store: &Path, debris: &[Debris]) -> Result<()> {
    for item in debris {
        let removed = if item.path.is_dir() {
            std::fs::remove_dir_all(&item.path)
        } else {
            std::fs::remove_file(&item.path)
        };
        match removed {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(Error::io(&item.path, e)),
        }
    }
    if !debris.is_empty() {
        sync_dir(&layout::runs_dir(store))?;
    }
    Ok(())
}
