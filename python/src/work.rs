//! Engine work runs here: with the GIL released, on a thread pool that exists in this process.
//!
//! rayon's global pool starts once per process. A child forked after it started (Python's
//! `multiprocessing` with the fork start method) inherits the pool's state but none of its
//! threads, and would wait for them for ever; so in any process but the one that imported the
//! module, work runs on a pool that process builds for itself.

use std::sync::{Arc, Mutex, OnceLock};

use pyo3::Python;
use rayon::{ThreadPool, ThreadPoolBuilder};

/// The process that imported the module (whose global pool is its own).
static IMPORTED_IN: OnceLock<u32> = OnceLock::new();
/// The pool of a forked process, with that process's id.
static FORKED_POOL: Mutex<Option<(u32, Arc<ThreadPool>)>> = Mutex::new(None);

/// Records the importing process; called once, at import.
pub fn init() {
    IMPORTED_IN.get_or_init(std::process::id);
}

/// Runs `f` with the GIL released (see the module docs for which pool it uses).
pub fn detached<T: Send>(py: Python<'_>, f: impl FnOnce() -> T + Send) -> T {
    py.detach(|| in_this_process(f))
}

fn in_this_process<T: Send>(f: impl FnOnce() -> T + Send) -> T {
    let pid = std::process::id();
    if IMPORTED_IN.get() == Some(&pid) {
        return f();
    }
    let pool = {
        let mut slot = FORKED_POOL.lock().unwrap_or_else(|e| e.into_inner());
        match &*slot {
            Some((owner, pool)) if *owner == pid => Arc::clone(pool),
            _ => {
                let pool = Arc::new(
                    ThreadPoolBuilder::new()
                        .build()
                        .expect("a thread pool for this process"),
                );
                *slot = Some((pid, Arc::clone(&pool)));
                pool
            }
        }
    };
    pool.install(f)
}
