//! A commit in preparation: the catalog a writer will commit next, and the runs it wrote for it.
//!
//! Every change of a store (insert, delete, expire, compaction, repair) is made the same way:
//! write new runs that no committed catalog names, then commit a catalog that names them (the
//! atomic rename in [`crate::format::catalog`] is the commit point). [`PendingCommit`] holds both
//! halves, so that a change abandoned before its commit (an error, a dropped insertion)
//! removes the runs it wrote, and a change that reaches its commit keeps them whatever happens:
//! a failed commit may still have reached the disk, and the next writer to open the store
//! removes runs that the catalog does not name.

use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use crate::error::{Error, Result};
use crate::format::catalog::{BatchKind, BatchMeta, Catalog, RunMeta};
use crate::format::layout;
use crate::run::{write_run, RunContents};
use crate::sys::progress::Progress;
use crate::tables::permutation::Permutations;

/// The next catalog of a store and the runs written for it, not committed yet.
pub(crate) struct PendingCommit {
    store: PathBuf,
    next: Catalog,
    /// Directories of the runs written for `next`; removed if the commit is abandoned.
    written: Vec<PathBuf>,
}

impl PendingCommit {
    /// A commit that starts from `base`, the catalog of the store at `store`.
    pub(crate) fn new(store: &Path, base: &Catalog) -> Self {
        PendingCommit {
            store: store.to_path_buf(),
            next: base.clone(),
            written: Vec::new(),
        }
    }

    /// The catalog to commit, with the runs written so far.
    pub(crate) fn catalog(&self) -> &Catalog {
        &self.next
    }

    /// The catalog to commit, to change before the commit.
    pub(crate) fn catalog_mut(&mut self) -> &mut Catalog {
        &mut self.next
    }

    /// The number of runs written for this commit.
    pub(crate) fn written_runs(&self) -> usize {
        self.written.len()
    }

    /// Writes a new run with `write(run_dir, run_id)` into a directory it creates, and returns
    /// the run's description, which the caller places in the catalog's runs. A run that fails
    /// half-written is removed at once. A directory that exists already is never touched: it
    /// may be a committed run (of a commit whose outcome this writer did not learn).
    pub(crate) fn write_run(
        &mut self,
        write: impl FnOnce(&Path, u64) -> Result<RunMeta>,
    ) -> Result<RunMeta> {
        let id = self.next.next_run;
        let dir = layout::run_dir(&self.store, id);
        std::fs::create_dir(&dir).map_err(|e| Error::io(&dir, e))?;
        // Listed before it is written, so that a panic inside `write` removes it too (on drop).
        self.written.push(dir.clone());
        let meta = write(&dir, id).inspect_err(|_| {
            self.written.pop();
            let _ = std::fs::remove_dir_all(&dir);
        })?;
        self.next.next_run += 1;
        Ok(meta)
    }

    /// Writes `contents` as a new run and adds it to the catalog's runs, newest.
    pub(crate) fn add_run(
        &mut self,
        contents: &RunContents<'_>,
        progress: &dyn Progress,
    ) -> Result<()> {
        let settings = self.next.settings;
        let perms = Permutations::new(&settings);
        let format = self.next.run_format();
        let meta = self.write_run(|dir, id| {
            write_run(
                dir,
                id,
                (&perms, usize::from(settings.shards), format),
                contents,
                progress,
            )
        })?;
        self.next.runs.push(meta);
        Ok(())
    }

    /// Records a batch of `kind` committed now, and returns it to fill in its counts.
    pub(crate) fn add_batch(&mut self, kind: BatchKind, label: Option<&str>) -> &mut BatchMeta {
        let id = self.next.next_batch;
        self.next.next_batch += 1;
        self.next.batches.push(BatchMeta {
            id,
            kind,
            committed_unix_s: SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |d| d.as_secs()),
            label: label.map(str::to_string),
            inserted: 0,
            replaced: 0,
            unchanged: 0,
            deleted: 0,
            expired_by: None,
        });
        self.next.batches.last_mut().expect("pushed above")
    }

    /// Commits the catalog and returns it. From here its runs are not this commit's to remove,
    /// even if the commit fails (see the module docs).
    pub(crate) fn commit(mut self) -> Result<Catalog> {
        self.written.clear();
        let empty = Catalog::new(self.next.settings);
        let next = std::mem::replace(&mut self.next, empty);
        next.commit(&self.store)?;
        Ok(next)
    }
}

impl Drop for PendingCommit {
    /// An abandoned commit leaves the store as it was: its runs go. What cannot be removed
    /// now, the next writer to open the store removes.
    fn drop(&mut self) {
        for dir in &self.written {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}
