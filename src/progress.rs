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

/// Progress nobody watches.
#[derive(Clone, Copy, Debug, Default)]
pub struct Silent;

impl Progress for Silent {}

/// Runs `work` as phase `phase` of `steps` steps of `progress`, finishing it however `work`
/// ends.
pub(crate) fn phase<T>(
    progress: &dyn Progress,
    name: &str,
    steps: u64,
    work: impl FnOnce() -> T,
) -> T {
    progress.start(name, steps);
    let out = work();
    progress.finish();
    out
}
