//! Work a long-lived process does beside its queries: loading newly committed runs into
//! memory ([`crate::Reader::refresh`]), merging runs while serving. It runs on a thread pool of
//! its own whose threads have the lowest CPU priority (nice 19, on Linux), so queries, which
//! run on the caller's threads and rayon's global pool, get the cores first and never queue
//! behind it; the work still gets whatever the queries leave idle.

use std::sync::{Arc, Mutex};

/// Runs `work` on the background pool and waits for it; rayon's parallel iterators inside it
/// use that pool too. Where the pool cannot be made, `work` runs on the calling thread.
pub fn run<R: Send>(work: impl FnOnce() -> R + Send) -> R {
    match pool() {
        Some(pool) => pool.install(work),
        None => work(),
    }
}

/// The pool of this process. A child forked after the pool started (Python's
/// `multiprocessing`) inherits the pool but none of its threads, and would wait for them for
/// ever: each process builds its own, found by its id.
fn pool() -> Option<Arc<rayon::ThreadPool>> {
    static POOL: Mutex<Option<(u32, Arc<rayon::ThreadPool>)>> = Mutex::new(None);
    let pid = std::process::id();
    let mut slot = POOL.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((owner, pool)) = &*slot {
        if *owner == pid {
            return Some(Arc::clone(pool));
        }
    }
    let pool = rayon::ThreadPoolBuilder::new()
        .thread_name(|i| format!("simhashdb-background-{i}"))
        .start_handler(|_| lower_priority())
        .build()
        .ok()
        .map(Arc::new)?;
    *slot = Some((pid, Arc::clone(&pool)));
    Some(pool)
}

/// Gives the calling thread the lowest CPU priority. Linux keeps a nice value per thread;
/// elsewhere the call would lower the whole process, so it is not made.
fn lower_priority() {
    #[cfg(target_os = "linux")]
    // SAFETY: setpriority changes the calling thread's scheduling priority only; a failure
    // leaves it as it was, which is harmless.
    unsafe {
        libc::setpriority(libc::PRIO_PROCESS, 0, 19);
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn work_runs_on_a_low_priority_thread_and_returns_its_answer() {
        let (answer, name, nice) = super::run(|| {
            let name = std::thread::current().name().map(str::to_string);
            // SAFETY: getpriority only reads the calling thread's priority.
            #[cfg(target_os = "linux")]
            let nice = unsafe { libc::getpriority(libc::PRIO_PROCESS, 0) };
            #[cfg(not(target_os = "linux"))]
            let nice = 19;
            (6 * 7, name, nice)
        });
        assert_eq!(answer, 42);
        assert!(name.unwrap().starts_with("simhashdb-background-"));
        assert_eq!(nice, 19);
    }
}
