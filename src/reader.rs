//! A long-lived reader: one open snapshot, replaced by a newer one when a writer has committed.
//!
//! A [`Snapshot`] sees one committed state for as long as it lives. A service that answers
//! queries all day keeps a [`Reader`] instead: each query takes the current snapshot (an `Arc`,
//! so a query that started on an older state finishes on it), and [`Reader::refresh`], called
//! as often as freshness requires, reads the catalog and swaps in a snapshot of the new state
//! when a batch, deletion or compaction was committed by any process.

use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};

use crate::catalog::Catalog;
use crate::error::Result;
use crate::snapshot::Snapshot;

/// A store open for reading for a long time, following its commits.
///
/// ```
/// # let dir = tempfile::tempdir().unwrap();
/// # let path = dir.path().join("store");
/// use simhashdb::{Batch, Reader, Settings, Store, DEFAULT_CACHE_BYTES};
///
/// let mut store = Store::create(&path, Settings::default())?;
/// let reader = Reader::open(&path, DEFAULT_CACHE_BYTES)?;
/// let mut batch = Batch::new();
/// batch.push("a", 0x0123_4567_89ab_cdef)?;
/// store.insert(&batch, None)?;
/// assert!(reader.snapshot().query(0x0123_4567_89ab_cdef, 0)?.is_empty()); // not yet seen
/// assert!(reader.refresh()?); // a commit happened: the new state is current
/// assert_eq!(reader.snapshot().query(0x0123_4567_89ab_cdef, 0)?.len(), 1);
/// assert!(!reader.refresh()?); // nothing new
/// # Ok::<(), simhashdb::Error>(())
/// ```
pub struct Reader {
    dir: PathBuf,
    cache_bytes: usize,
    current: RwLock<Arc<Snapshot>>,
}

impl Reader {
    /// Opens the store at `dir`, spreading `cache_bytes` of redb cache over the files of each
    /// snapshot it takes.
    pub fn open(dir: &Path, cache_bytes: usize) -> Result<Self> {
        Ok(Reader {
            dir: dir.to_path_buf(),
            cache_bytes,
            current: RwLock::new(Arc::new(Snapshot::open_with_cache(dir, cache_bytes)?)),
        })
    }

    /// The snapshot of the last refresh: one committed state, kept alive as long as the caller
    /// holds it.
    pub fn snapshot(&self) -> Arc<Snapshot> {
        Arc::clone(&self.current.read().unwrap_or_else(|e| e.into_inner()))
    }

    /// Makes the store's committed state current, if a writer committed since the current
    /// snapshot was taken; returns whether it did. Reading the catalog is cheap (one small
    /// file); opening a new state opens its runs' files. On an error the current snapshot
    /// stays.
    pub fn refresh(&self) -> Result<bool> {
        let committed = Catalog::read(&self.dir)?;
        if committed == *self.snapshot().catalog() {
            return Ok(false);
        }
        let next = Arc::new(Snapshot::open_with_cache(&self.dir, self.cache_bytes)?);
        *self.current.write().unwrap_or_else(|e| e.into_inner()) = next;
        Ok(true)
    }

    /// The store's directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }
}
