//! One handle per store for a long-running process: what the server and the Python package
//! hold, so that neither decides on its own when to reload or to merge.
//!
//! A [`Database`] is cheap to clone and shared across threads. Reads take the current
//! [`Snapshot`] ([`Database::snapshot`]); writes ([`Database::write`]) run one at a time, each
//! with the store's writer lock held for that write only (so another process, such as a CLI
//! `insert`, can write between them), and every commit is visible to this handle's next read
//! when the write returns. Commits of other processes are seen within
//! [`DatabaseOptions::refresh_after`]. After a write, the merge the store's compaction policy
//! asks for runs inside the write, or in the background at the lowest CPU priority (the next
//! write waits for it) as [`DatabaseOptions::compact_in_background`] says.
//!
//! Depends on [`crate::write`], [`crate::read`] and [`crate::sys`]; docs/design.md's table of
//! wings says what it may depend on.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, TryLockError, Weak};
use std::time::{Duration, Instant};

use crate::error::{Error, Result};
use crate::read::reader::{Reader, ReaderOptions, ReaderStats};
use crate::read::snapshot::Snapshot;
use crate::read::stats::Stats;
use crate::write::compaction::CompactSummary;
use crate::write::store::Store;

/// What happened in the background: for a server to log and count.
#[derive(Debug)]
#[non_exhaustive]
pub enum Event {
    /// A background merge committed.
    Compacted(CompactSummary),
    /// A background merge failed; the store is intact and the next write retries it.
    CompactionFailed(Error),
    /// The newly committed state could not be loaded; reads keep the previous one and the
    /// next look retries.
    RefreshFailed(Error),
    /// A write removed what killed writers had left in `runs/` (see [`Store::removed_debris`]).
    RemovedDebris(Vec<crate::Debris>),
}

/// How a [`Database`] reads, follows commits and merges.
#[derive(Clone)]
pub struct DatabaseOptions {
    /// Bytes of permuted tables (as counted on disk) to hold in memory; tables past it are
    /// read through redb's cache. Default: half the machine's memory.
    pub pin_bytes: u64,
    /// Bytes of redb cache spread over each state's files: over the docs files alone when
    /// every table is pinned, else over every file. Default: 1 GiB.
    pub cache_bytes: usize,
    /// How old the last look for other processes' commits (its own are seen at once) may get
    /// before the next; None: only [`Database::refresh`] looks.
    pub refresh_after: Option<Duration>,
    /// Whether a thread of the handle's own looks, every `refresh_after`, so that reads never
    /// wait for a load; otherwise the read that finds the last look too old looks (reads on
    /// other threads meanwhile go on with the current state). Without a `refresh_after`,
    /// neither looks.
    pub refresh_in_background: bool,
    /// Whether the merge the store's compaction policy asks for after a write runs on a thread
    /// of its own at the lowest CPU priority after the write returns (queries go on meanwhile,
    /// and the next write waits for it); otherwise inside the write, which returns after it.
    pub compact_in_background: bool,
    /// Told of what happens in the background (merges, failed loads).
    pub on_event: Option<Arc<dyn Fn(Event) + Send + Sync>>,
}

impl Default for DatabaseOptions {
    /// Half the machine's memory for pinned tables, a 1 GiB cache; commits of other
    /// processes seen within 100 ms, looked for by reads; merges inside the write.
    fn default() -> Self {
        let memory = ReaderOptions::default();
        DatabaseOptions {
            pin_bytes: memory.pin_bytes,
            cache_bytes: memory.cache_bytes,
            refresh_after: Some(Duration::from_millis(100)),
            refresh_in_background: false,
            compact_in_background: false,
            on_event: None,
        }
    }
}

/// A store held open by a long-running process, cheap to clone and shared across threads:
/// reads from any thread ([`Database::snapshot`]), one write at a time ([`Database::write`],
/// the writer lock held for that write only), commits visible when the write returns, other
/// processes' commits and merges as its [`DatabaseOptions`] say.
///
/// ```
/// # let dir = tempfile::tempdir().unwrap();
/// # let path = dir.path().join("store");
/// use simhashdb::{Database, DatabaseOptions, InsertOptions, ReadOptions, Settings, Source, Store};
///
/// Store::create(&path, Settings::default())?;
/// let db = Database::open(&path, DatabaseOptions::default())?;
/// let reader = db.clone(); // for another thread
/// let body = b"a\t0123456789abcdef\n";
/// let source = Source::Bytes { bytes: body, name: "body" };
/// db.insert_from([source], &InsertOptions::default(), &ReadOptions::default())?;
/// let matches = reader.snapshot()?.query(0x0123_4567_89ab_cdee, 3)?; // seen at once
/// assert_eq!(matches[0].id, "a");
/// # Ok::<(), simhashdb::Error>(())
/// ```
#[derive(Clone)]
pub struct Database {
    shared: Arc<Shared>,
}

struct Shared {
    dir: PathBuf,
    reader: Reader,
    options: DatabaseOptions,
    /// Milliseconds since `opened` of the last look for commits.
    looked_ms: AtomicU64,
    opened: Instant,
    /// Held while a look runs, so one thread looks at a time.
    looking: Mutex<()>,
    /// Whether a write (or the merge it started) holds the writer's turn.
    busy: Mutex<bool>,
    turn: Condvar,
    compacting: AtomicBool,
}

impl Database {
    /// Opens the store at `dir` (made absolute, so a later change of the process's working
    /// directory does not move it) and loads the tables `options.pin_bytes` holds.
    pub fn open(dir: &Path, options: DatabaseOptions) -> Result<Self> {
        let dir = std::path::absolute(dir).map_err(|e| Error::io(dir, e))?;
        let memory = ReaderOptions {
            pin_bytes: options.pin_bytes,
            cache_bytes: options.cache_bytes,
        };
        let reader = Reader::open(&dir, memory)?;
        let background_refresh = options
            .refresh_after
            .filter(|_| options.refresh_in_background);
        let database = Database {
            shared: Arc::new(Shared {
                dir,
                reader,
                options,
                looked_ms: AtomicU64::new(0),
                opened: Instant::now(),
                looking: Mutex::new(()),
                busy: Mutex::new(false),
                turn: Condvar::new(),
                compacting: AtomicBool::new(false),
            }),
        };
        if let Some(interval) = background_refresh {
            let weak = Arc::downgrade(&database.shared);
            std::thread::spawn(move || refresh_every(weak, interval));
        }
        Ok(database)
    }

    /// The store's directory (absolute).
    pub fn dir(&self) -> &Path {
        &self.shared.dir
    }

    /// The state loaded now, without looking for commits (what [`Database::snapshot`] gives
    /// between looks).
    pub fn current(&self) -> Arc<Snapshot> {
        self.shared.reader.snapshot()
    }

    /// What the handle holds in memory and how its probes were answered.
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let path = dir.path().join("store");
    /// use simhashdb::{Batch, Database, DatabaseOptions, Settings, Store};
    ///
    /// let mut store = Store::create(&path, Settings::default())?;
    /// let options = DatabaseOptions { refresh_after: None, ..DatabaseOptions::default() };
    /// let db = Database::open(&path, options)?;
    /// let mut batch = Batch::new();
    /// batch.push("a", 0x0123_4567_89ab_cdef)?;
    /// store.insert(&batch, None)?; // another writer than `db`
    /// assert!(db.current().query(0x0123_4567_89ab_cdef, 0)?.is_empty()); // not yet seen
    /// assert!(db.refresh()?); // a commit happened: the new state is current
    /// assert_eq!(db.current().query(0x0123_4567_89ab_cdef, 0)?.len(), 1);
    /// assert!(!db.refresh()?); // nothing new
    /// assert_eq!(db.stats().pinned_tables, 10); // the new run's tables are in memory
    /// # Ok::<(), simhashdb::Error>(())
    /// ```
    pub fn stats(&self) -> ReaderStats {
        self.shared.reader.stats()
    }

    /// The [`Stats`] of the newest committed state. Stats read the run directories, which a
    /// compaction removes after its commit: when the current state's are gone, the handle
    /// looks for the newer state and reads again.
    pub fn store_stats(&self) -> Result<Stats> {
        /// Each retry means a writer committed meanwhile; that many in a row is not a race.
        const ATTEMPTS: usize = 8;
        let mut attempt = 0;
        loop {
            match Stats::of(&self.current()) {
                Err(Error::Io { error, .. })
                    if error.kind() == std::io::ErrorKind::NotFound && attempt + 1 < ATTEMPTS =>
                {
                    attempt += 1;
                    let _looking = self.shared.lock_looking();
                    self.shared.look()?;
                }
                other => return other,
            }
        }
    }

    /// The newest committed state, after a look for other processes' commits if
    /// [`DatabaseOptions::refresh_after`] says one is due (and no thread of the handle's own
    /// looks). A look this call made and that failed is its
    /// error (the current state stays, and the next read looks again).
    pub fn snapshot(&self) -> Result<Arc<Snapshot>> {
        let options = &self.shared.options;
        if let Some(interval) = options
            .refresh_after
            .filter(|_| !options.refresh_in_background)
        {
            let now = self.shared.opened.elapsed().as_millis() as u64;
            let last = self.shared.looked_ms.load(Ordering::Relaxed);
            if now.saturating_sub(last) >= interval.as_millis() as u64 {
                // A thread that finds another looking goes on with the current state; a lock
                // poisoned by a panic in an earlier look is taken all the same.
                let looking = match self.shared.looking.try_lock() {
                    Ok(guard) => Some(guard),
                    Err(TryLockError::Poisoned(e)) => Some(e.into_inner()),
                    Err(TryLockError::WouldBlock) => None,
                };
                if let Some(_looking) = looking {
                    self.shared.look()?;
                }
            }
        }
        Ok(self.shared.reader.snapshot())
    }

    /// Looks for commits now (waiting for a look under way); true if a newer state was
    /// loaded.
    pub fn refresh(&self) -> Result<bool> {
        let _looking = self.shared.lock_looking();
        self.shared.look()
    }

    /// Whether a background merge is running.
    pub fn compacting(&self) -> bool {
        self.shared.compacting.load(Ordering::SeqCst)
    }

    /// Runs `write` on the store opened for writing (its writer lock held for this call
    /// only), after this handle's previous write and the merge it started; then makes the
    /// commit visible to reads before returning, and merges as the store's policy and
    /// [`DatabaseOptions::compact_in_background`] say. A store another process is writing fails with
    /// [`Error::Locked`]. The answer of a committed write is returned even if loading the
    /// new state fails (the next read retries it, and [`Event::RefreshFailed`] says so).
    /// `write` may fail with an error of the caller's own type.
    ///
    /// `on_event` is called with no lock of the handle held, but a callback must not wait
    /// for a write of the same handle (it may run on the thread of a merge the next write
    /// waits for).
    pub fn write<T, E: From<Error>>(
        &self,
        write: impl FnOnce(&mut Store) -> std::result::Result<T, E>,
    ) -> std::result::Result<T, E> {
        let turn = Turn::take(&self.shared);
        let mut store = Store::open(&self.shared.dir)?;
        let removed = store.removed_debris().to_vec();
        let background = self.shared.options.compact_in_background;
        if background {
            store.defer_compaction();
        }
        // Refreshed even after a failed write: a write may have committed before it failed.
        let answer = write(&mut store);
        if background && answer.is_ok() && store.compaction_due() {
            self.after_commit();
            self.compact_in_background(store, turn);
        } else {
            // The lock goes before the new state loads: loading may take long, and another
            // process may write meanwhile.
            drop(store);
            self.after_commit();
            drop(turn);
        }
        if !removed.is_empty() {
            self.shared.tell(Event::RemovedDebris(removed));
        }
        answer
    }

    /// Loads what was just committed, and tells a failure.
    fn after_commit(&self) {
        self.shared.look_and_tell();
    }

    /// Merges on a thread of its own, holding the writer's turn until it ends.
    fn compact_in_background(&self, mut store: Store, turn: Turn) {
        let database = self.clone();
        let compacting = Compacting::start(&self.shared);
        std::thread::spawn(move || {
            let outcome = crate::sys::background::run(|| store.compact_if_due());
            drop(store);
            database.after_commit();
            drop(compacting);
            drop(turn);
            match outcome {
                Ok(Some(summary)) => database.shared.tell(Event::Compacted(summary)),
                Ok(None) => {}
                Err(e) => database.shared.tell(Event::CompactionFailed(e)),
            }
        });
    }
}

/// Marks a background merge as running until dropped (also when the merge panics).
struct Compacting {
    shared: Arc<Shared>,
}

impl Compacting {
    fn start(shared: &Arc<Shared>) -> Self {
        shared.compacting.store(true, Ordering::SeqCst);
        Compacting {
            shared: Arc::clone(shared),
        }
    }
}

impl Drop for Compacting {
    fn drop(&mut self) {
        self.shared.compacting.store(false, Ordering::SeqCst);
    }
}

impl Shared {
    /// Loads the committed state if it changed (call with `looking` held); true if it did.
    /// After a failure the next look tries again.
    fn look(&self) -> Result<bool> {
        let found = self.reader.refresh()?;
        self.mark_looked();
        Ok(found)
    }

    /// Looks, and tells a failure once `looking` is released.
    fn look_and_tell(&self) {
        let failed = {
            let _looking = self.lock_looking();
            self.look().err()
        };
        if let Some(e) = failed {
            self.tell(Event::RefreshFailed(e));
        }
    }

    /// Takes `looking`, also after a panic in an earlier look.
    fn lock_looking(&self) -> MutexGuard<'_, ()> {
        self.looking.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn mark_looked(&self) {
        let now = self.opened.elapsed().as_millis() as u64;
        self.looked_ms.store(now, Ordering::Relaxed);
    }

    fn tell(&self, event: Event) {
        if let Some(on_event) = &self.options.on_event {
            on_event(event);
        }
    }
}

/// Looks for commits every `interval` while the handle lives.
fn refresh_every(shared: Weak<Shared>, interval: Duration) {
    loop {
        std::thread::sleep(interval);
        let Some(shared) = shared.upgrade() else {
            return;
        };
        shared.look_and_tell();
    }
}

/// The writer's turn in this process: taken by a write, released when dropped (also when the
/// write panics), possibly by the thread of the merge the write started.
struct Turn {
    shared: Arc<Shared>,
}

impl Turn {
    fn take(shared: &Arc<Shared>) -> Turn {
        let mut busy = shared.busy.lock().unwrap_or_else(|e| e.into_inner());
        while *busy {
            busy = shared.turn.wait(busy).unwrap_or_else(|e| e.into_inner());
        }
        *busy = true;
        Turn {
            shared: Arc::clone(shared),
        }
    }
}

impl Drop for Turn {
    fn drop(&mut self) {
        *self.shared.busy.lock().unwrap_or_else(|e| e.into_inner()) = false;
        self.shared.turn.notify_one();
    }
}
