//! What files take on disk, counted the two ways that differ for redb's sparse files:
//! allocated blocks (`du`) and lengths (`ls -l`).

use std::path::Path;

use crate::error::{Error, Result};
use crate::format::catalog::Catalog;

/// Bytes a file occupies on disk. redb extends its files sparsely ahead of use, so the
/// apparent length overstates the cost.
fn allocated(meta: &std::fs::Metadata) -> u64 {
    use std::os::unix::fs::MetadataExt;
    meta.blocks() * 512
}

/// What files take on disk, measured two ways.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct DiskBytes {
    /// Allocated blocks (what `du` counts).
    pub used: u64,
    /// File lengths (what `ls -l` shows).
    pub files: u64,
}

impl DiskBytes {
    /// One file.
    pub(crate) fn of_file(meta: &std::fs::Metadata) -> Self {
        DiskBytes {
            used: allocated(meta),
            files: meta.len(),
        }
    }

    /// Every file below `dir`.
    pub(crate) fn below(dir: &Path) -> Result<Self> {
        let mut total = DiskBytes::default();
        for entry in std::fs::read_dir(dir).map_err(|e| Error::io(dir, e))? {
            let entry = entry.map_err(|e| Error::io(dir, e))?;
            let meta = entry.metadata().map_err(|e| Error::io(entry.path(), e))?;
            let part = if meta.is_dir() {
                DiskBytes::below(&entry.path())?
            } else {
                DiskBytes::of_file(&meta)
            };
            total.used += part.used;
            total.files += part.files;
        }
        Ok(total)
    }

    /// The files of the catalog's runs.
    pub(crate) fn of_runs(store: &Path, catalog: &Catalog) -> Result<Self> {
        let mut total = DiskBytes::default();
        for run in &catalog.runs {
            let part = DiskBytes::below(&crate::format::layout::run_dir(store, run.id))?;
            total.used += part.used;
            total.files += part.files;
        }
        Ok(total)
    }
}
