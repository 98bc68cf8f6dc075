//! Every permuted table's keys, sorted, for a set of fingerprints.
//!
//! Table t's keys are derived from its sort parent's sorted keys
//! ([`Permutations::sort_parent`]): a tree rooted at table 0, whose keys are the sorted
//! fingerprints themselves. In the parent's order a child's keys are already grouped by the
//! leading bits both tables share, so deriving them is a [`crate::tables::permutation::Rekey`] and a
//! sort within those groups ([`radix::sort_below`]). Children run as parallel rayon tasks,
//! each holding its parent's keys until it has derived its own. Key buffers no table needs
//! any more are reused: fresh memory costs a page fault per 4 KiB.

use std::sync::{Arc, Mutex};

use crate::error::{Error, Result};
use crate::tables::permutation::Permutations;
use crate::tables::radix;

/// Calls `visit(t, keys)` with every table's ascending keys; tables run in parallel, in no set
/// order. `fingerprints` must be ascending without repeats (they are table 0's keys). Once a
/// visit fails no more tables start, and the error returned is the one that caused the
/// failure (see [`Error::cause`]).
pub fn for_each(
    perms: &Permutations,
    fingerprints: &[u64],
    visit: impl Fn(usize, &[u64]) -> Result<()> + Sync,
) -> Result<()> {
    debug_assert!(fingerprints.windows(2).all(|w| w[0] < w[1]));
    let tables = perms.tables().len();
    let mut children = vec![Vec::new(); tables];
    for t in 1..tables {
        children[perms.sort_parent(t).0].push(t);
    }
    let job = Job {
        perms,
        children,
        visit: &visit,
        failure: Mutex::new(None),
        spare: Mutex::new(Vec::new()),
    };
    rayon::scope(|scope| job.table(scope, 0, Arc::new(fingerprints.to_vec())));
    match job.failure.into_inner().expect("no visit panicked") {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// The state the tasks of one [`for_each`] share.
struct Job<'a, V> {
    perms: &'a Permutations,
    /// The tables derived from each table's keys.
    children: Vec<Vec<usize>>,
    visit: &'a V,
    /// The error that stopped the job.
    failure: Mutex<Option<Error>>,
    /// Key buffers no table needs any more.
    spare: Mutex<Vec<Vec<u64>>>,
}

impl<'a, V: Fn(usize, &[u64]) -> Result<()> + Sync> Job<'a, V> {
    /// Visits table `t` with its sorted `keys`, after spawning the tasks of its children.
    fn table<'s>(&'s self, scope: &rayon::Scope<'s>, t: usize, keys: Arc<Vec<u64>>) {
        if self.failed() {
            return;
        }
        for &child in &self.children[t] {
            let parent_keys = Arc::clone(&keys);
            scope.spawn(move |scope| {
                let own = self.derive_keys(child, t, &parent_keys);
                self.recycle(parent_keys);
                self.table(scope, child, Arc::new(own));
            });
        }
        if let Err(e) = (self.visit)(t, &keys) {
            let mut failure = self.failure.lock().expect("no visit panicked");
            *failure = Some(match failure.take() {
                Some(earlier) => earlier.cause(e),
                None => e,
            });
        }
        self.recycle(keys);
    }

    fn failed(&self) -> bool {
        self.failure.lock().expect("no visit panicked").is_some()
    }

    /// Table `t`'s keys, ascending, from its parent's ascending keys.
    fn derive_keys(&self, t: usize, parent: usize, parent_keys: &[u64]) -> Vec<u64> {
        let (mut keys, mut scratch) = (self.spare_buffer(), self.spare_buffer());
        self.perms
            .rekey(parent, t)
            .apply_into(parent_keys, &mut keys);
        radix::sort_below(&mut keys, self.perms.sort_parent(t).1, &mut scratch);
        self.keep(scratch);
        debug_assert!(keys.windows(2).all(|w| w[0] < w[1]));
        keys
    }

    /// Drops a holder of a table's keys; the last one to go keeps the buffer for reuse.
    fn recycle(&self, keys: Arc<Vec<u64>>) {
        if let Some(keys) = Arc::into_inner(keys) {
            self.keep(keys);
        }
    }

    fn keep(&self, buffer: Vec<u64>) {
        if buffer.capacity() > 0 {
            self.spare.lock().expect("no visit panicked").push(buffer);
        }
    }

    fn spare_buffer(&self) -> Vec<u64> {
        self.spare
            .lock()
            .expect("no visit panicked")
            .pop()
            .unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::settings::Settings;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn every_table_is_its_permuted_fingerprints_sorted(
            fingerprints in proptest::collection::vec(any::<u64>(), 0..3000),
            m in 4u8..=8,
        ) {
            let perms = Permutations::new(&Settings { blocks: m, distance: 3, shards: 1 });
            let mut sorted = fingerprints.clone();
            sorted.sort_unstable();
            sorted.dedup();
            let seen = Mutex::new(Vec::new());
            for_each(&perms, &sorted, |t, keys| {
                seen.lock().unwrap().push((t, keys.to_vec()));
                Ok(())
            })
            .unwrap();
            let mut seen = seen.into_inner().unwrap();
            seen.sort();
            prop_assert_eq!(seen.len(), perms.tables().len());
            for (t, keys) in seen {
                let mut expected: Vec<u64> =
                    sorted.iter().map(|&f| perms.tables()[t].permute(f)).collect();
                expected.sort_unstable();
                prop_assert_eq!(keys, expected, "table {}", t);
            }
        }
    }

    #[test]
    fn a_failed_visit_stops_the_job_with_its_error() {
        let perms = Permutations::new(&Settings {
            blocks: 6,
            distance: 3,
            shards: 1,
        });
        let result = for_each(&perms, &[1, 2, 3], |t, _| {
            if t == 0 {
                Err(Error::corrupt("table 0 failed"))
            } else {
                Ok(())
            }
        });
        assert!(result.unwrap_err().to_string().contains("table 0 failed"));
    }
}
