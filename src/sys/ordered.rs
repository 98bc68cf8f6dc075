//! Parallel work consumed in order: jobs `0..count` run on the current rayon pool, a bounded
//! number ahead of the one the calling thread consumes, and their results reach the calling
//! thread in index order. Merges use it so that writing one part's blocks (which must go in
//! order) overlaps the merging of the parts after it, with no barrier between groups of parts:
//! a worker that finishes a part goes on with the next one queued.
//!
//! Memory: at most `ahead` results wait at any time.

use std::collections::VecDeque;
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Condvar, Mutex};

use crate::error::Result;

/// Runs `job(i)` for `i` in `0..count` on the current pool, at most `ahead` (at least 1) of
/// them started and not yet consumed, and calls `consume` with each result in order of `i` on
/// the calling thread. Stops at the first error of `consume` (jobs already started finish,
/// their results dropped) and returns it.
///
/// While the next result is not ready, a calling thread that is one of the pool's workers runs
/// jobs queued on its own queue, where its spawns go (a pool of one thread would otherwise
/// wait for ever; stealing the pool's other work could keep it away from the results for
/// long); any other thread sleeps until the result is there. A job's panic is raised again on
/// the calling thread.
pub(crate) fn in_order<T: Send>(
    count: usize,
    ahead: usize,
    job: impl Fn(usize) -> T + Sync,
    mut consume: impl FnMut(T) -> Result<()>,
) -> Result<()> {
    let ahead = ahead.clamp(1, count.max(1));
    // Results by index, from the next to consume (`first`) on.
    struct Done<T> {
        first: usize,
        results: VecDeque<Option<std::thread::Result<T>>>,
    }
    let done = Mutex::new(Done {
        first: 0,
        results: VecDeque::with_capacity(ahead),
    });
    let ready = Condvar::new();
    // Set when `consume` fails: jobs not yet begun are skipped.
    let stopped = AtomicBool::new(false);
    rayon::in_place_scope(|scope| {
        let (job, done, ready, stopped) = (&job, &done, &ready, &stopped);
        let start = |i: usize| {
            scope.spawn(move |_| {
                if stopped.load(Ordering::Relaxed) {
                    return;
                }
                // A panic is carried to the calling thread, which would wait for ever else.
                let result = panic::catch_unwind(AssertUnwindSafe(|| job(i)));
                let mut done = done.lock().unwrap_or_else(|e| e.into_inner());
                let at = i - done.first;
                done.results[at] = Some(result);
                drop(done);
                ready.notify_all();
            })
        };
        let lock = || done.lock().unwrap_or_else(|e| e.into_inner());
        let mut started = 0;
        for i in 0..count {
            while started < count && started < i + ahead {
                lock().results.push_back(None);
                start(started);
                started += 1;
            }
            let result = loop {
                let mut guard = lock();
                if let Some(result) = guard.results.front_mut().and_then(Option::take) {
                    guard.results.pop_front();
                    guard.first += 1;
                    break result;
                }
                // Run a job of this thread's queue rather than wait, if it is a worker and
                // one is there; else wait for another thread to finish the one needed.
                drop(guard);
                if rayon::yield_local() == Some(rayon::Yield::Executed) {
                    continue;
                }
                let guard = lock();
                let _guard = ready
                    .wait_while(guard, |d| d.results.front().is_some_and(Option::is_none))
                    .unwrap_or_else(|e| e.into_inner());
            };
            let result = result.unwrap_or_else(|payload| {
                stopped.store(true, Ordering::Relaxed);
                panic::resume_unwind(payload)
            });
            if let Err(e) = consume(result) {
                stopped.store(true, Ordering::Relaxed);
                return Err(e);
            }
        }
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::in_order;
    use crate::error::Error;
    use std::sync::atomic::{AtomicUsize, Ordering};

    fn pool(threads: usize) -> rayon::ThreadPool {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap()
    }

    /// Results arrive in order whatever order the jobs end in, from a worker of a pool of one
    /// (which must run the jobs itself), of several, and from a thread outside any pool.
    #[test]
    fn results_arrive_in_order_and_at_most_ahead_wait() {
        let run = |ahead: usize| {
            // Jobs begun and not consumed: at most `ahead` at any time.
            let (waiting, most) = (AtomicUsize::new(0), AtomicUsize::new(0));
            let mut seen = Vec::new();
            in_order(
                50,
                ahead,
                |i| {
                    let now = waiting.fetch_add(1, Ordering::SeqCst) + 1;
                    most.fetch_max(now, Ordering::SeqCst);
                    // Later jobs end sooner, so they finish out of order.
                    std::thread::sleep(std::time::Duration::from_micros(
                        ((50 - i) % 7) as u64 * 200,
                    ));
                    i * 3
                },
                |r| {
                    waiting.fetch_sub(1, Ordering::SeqCst);
                    seen.push(r);
                    Ok(())
                },
            )
            .unwrap();
            assert_eq!(seen, (0..50).map(|i| i * 3).collect::<Vec<_>>());
            assert!(most.load(Ordering::SeqCst) <= ahead.max(1));
        };
        for ahead in [0, 1, 3, 64] {
            pool(1).install(|| run(ahead));
            pool(3).install(|| run(ahead));
            run(ahead);
        }
    }

    /// A job's panic reaches the caller instead of leaving it waiting, whether the caller is
    /// a worker of the pool or not.
    #[test]
    fn a_panic_in_a_job_reaches_the_caller() {
        let work = || in_order(20, 3, |i| assert_ne!(i, 5, "job 5 fails"), |()| Ok(()));
        for threads in [1, 2] {
            let outcome = std::panic::catch_unwind(|| pool(threads).install(work));
            assert!(outcome.is_err());
        }
        assert!(std::panic::catch_unwind(work).is_err());
    }

    /// An error of `consume` stops the work: it is returned, nothing is consumed after it, and
    /// no more than `ahead` jobs past it begin.
    #[test]
    fn an_error_stops_the_work() {
        for threads in [1, 2] {
            let begun = AtomicUsize::new(0);
            let mut consumed = 0;
            let outcome = pool(threads).install(|| {
                in_order(
                    100,
                    4,
                    |i| {
                        begun.fetch_add(1, Ordering::SeqCst);
                        i
                    },
                    |i| {
                        consumed += 1;
                        if i == 10 {
                            Err(Error::corrupt("part 10".to_string()))
                        } else {
                            Ok(())
                        }
                    },
                )
            });
            assert!(outcome.unwrap_err().to_string().contains("part 10"));
            assert_eq!(consumed, 11);
            assert!(begun.load(Ordering::SeqCst) <= 11 + 4);
        }
    }
}
