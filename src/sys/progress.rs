//! Progress of long operations: the library says which phase runs and how far it is; a client
//! draws it (the CLI as bars on a terminal) or ignores it.

/// Told how a long operation advances. The methods are called from worker threads, in any
/// order between a phase's `start` and `finish`; each does nothing unless implemented.
pub trait Progress: Send + Sync {
    /// A phase begins: what it does, and its steps (0 when not known).
    fn start(&self, phase: &str, steps: u64) {
        let _ = (phase, steps);
    }

    /// `steps` more steps of the current phase are done.
    fn advance(&self, steps: u64) {
        let _ = steps;
    }

    /// The current phase is over.
    fn finish(&self) {}
}

/// Progress nobody watches: `&()`.
impl Progress for () {}

/// A closure told the steps done (`advance`) and nothing else.
impl<F: Fn(u64) + Send + Sync> Progress for F {
    fn advance(&self, steps: u64) {
        self(steps)
    }
}

/// A phase of `progress` that finishes when dropped, however the work ends.
pub(crate) struct Phase<'a>(&'a dyn Progress);

impl<'a> Phase<'a> {
    /// Starts phase `name` of `steps` steps.
    pub(crate) fn start(progress: &'a dyn Progress, name: &str, steps: u64) -> Self {
        progress.start(name, steps);
        Phase(progress)
    }
}

impl Drop for Phase<'_> {
    fn drop(&mut self) {
        self.0.finish();
    }
}

/// Part `i` of `n` of `steps`: the parts of one total add up to it exactly, however it
/// divides, so that a phase split into parts reports every step.
pub(crate) fn share(steps: u64, i: usize, n: usize) -> u64 {
    let n = n.max(1) as u128;
    let at = |i: usize| (u128::from(steps) * i as u128 / n) as u64;
    at(i + 1) - at(i)
}
