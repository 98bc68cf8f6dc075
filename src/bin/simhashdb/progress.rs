//! Progress bars on stderr, drawn only when stderr is a terminal.

use indicatif::{ProgressBar, ProgressStyle};

/// A bar of `total` steps labelled `what`; hidden when stderr is not a terminal.
pub fn bar(total: u64, what: &str) -> ProgressBar {
    let bar = ProgressBar::new(total);
    bar.set_style(
        ProgressStyle::with_template("{msg} [{bar:40}] {pos}/{len} {elapsed_precise} eta {eta}")
            .expect("a valid template")
            .progress_chars("=> "),
    );
    bar.set_message(what.to_string());
    bar
}

/// A counter of bytes read (total unknown) labelled `what`; hidden when stderr is not a
/// terminal.
pub fn bytes(what: &str) -> ProgressBar {
    let bar = ProgressBar::no_length();
    bar.set_style(
        ProgressStyle::with_template("{msg} {spinner} {bytes} ({bytes_per_sec}) {elapsed_precise}")
            .expect("a valid template"),
    );
    bar.set_message(what.to_string());
    bar
}

/// The progress of reading `inputs` (paths, `-` for stdin; none is stdin): a bar with a
/// percentage and an ETA when every input is a file of known size read as it is (not
/// compressed: its decompressed bytes are counted), else a counter of bytes. A terminal on
/// stdin is told how to end its input.
pub fn reading(inputs: &[std::path::PathBuf], what: &str) -> ProgressBar {
    use std::io::IsTerminal;
    let stdin = inputs.is_empty() || inputs.iter().any(|i| i.as_os_str() == "-");
    if stdin && std::io::stdin().is_terminal() {
        eprintln!("simhashdb: reading documents from stdin; end with Ctrl-D");
    }
    let compressed = |p: &std::path::Path| {
        p.extension()
            .is_some_and(|e| matches!(e.to_str(), Some("gz" | "zst" | "zstd")))
    };
    let sizes: Option<u64> = inputs
        .iter()
        .map(|p| match std::fs::metadata(p) {
            Ok(m) if m.is_file() && !compressed(p) => Some(m.len()),
            _ => None,
        })
        .sum();
    match sizes.filter(|_| !stdin) {
        Some(total) => {
            let bar = ProgressBar::new(total);
            bar.set_style(
                ProgressStyle::with_template(
                    "{msg} [{bar:40}] {percent}% {bytes}/{total_bytes} ({bytes_per_sec}) eta {eta}",
                )
                .expect("a valid template")
                .progress_chars("=> "),
            );
            bar.set_message(what.to_string());
            bar
        }
        None => bytes(what),
    }
}

/// The library's progress, drawn as one bar per phase on stderr (hidden when stderr is not a
/// terminal).
///
/// With `SIMHASHDB_TIMINGS` set in the environment, each phase's wall time is also printed on
/// stderr as it ends (`timing: PHASE SECONDS s, cpu SECONDS s`: the process's user and
/// system time in the phase, all threads), terminal or not: the breakdown the benchmarks
/// quote.
pub struct Bars {
    current: std::sync::Mutex<Option<ProgressBar>>,
    /// The phase being timed, when it started and the CPU time used by then, when timings
    /// were asked for.
    timed: Option<std::sync::Mutex<Option<(String, std::time::Instant, f64)>>>,
}

impl Default for Bars {
    fn default() -> Self {
        Bars {
            current: Default::default(),
            timed: std::env::var_os("SIMHASHDB_TIMINGS").map(|_| Default::default()),
        }
    }
}

impl Bars {
    /// Bars for a store's long operations.
    pub fn shared() -> std::sync::Arc<Bars> {
        std::sync::Arc::new(Bars::default())
    }

    fn with(&self, f: impl FnOnce(&mut Option<ProgressBar>)) {
        f(&mut self.current.lock().unwrap_or_else(|e| e.into_inner()));
    }

    /// Ends the timed phase, printing its time, and starts timing `next` if any.
    fn time(&self, next: Option<&str>) {
        let Some(timed) = &self.timed else { return };
        let mut timed = timed.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((phase, started, cpu)) = timed.take() {
            eprintln!(
                "timing: {phase} {:.3} s, cpu {:.3} s",
                started.elapsed().as_secs_f64(),
                cpu_seconds() - cpu
            );
        }
        *timed = next.map(|phase| (phase.to_string(), std::time::Instant::now(), cpu_seconds()));
    }
}

/// The user and system time this process has used, all threads, in seconds.
fn cpu_seconds() -> f64 {
    // SAFETY: getrusage writes into the zeroed struct it is given and reads nothing else.
    let usage = unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_SELF, &mut usage);
        usage
    };
    let seconds = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
    seconds(usage.ru_utime) + seconds(usage.ru_stime)
}

impl simhashdb::Progress for Bars {
    fn start(&self, phase: &str, steps: u64) {
        self.time(Some(phase));
        let bar = if steps == 0 {
            let bar = ProgressBar::new_spinner();
            bar.set_style(
                ProgressStyle::with_template("{msg} {spinner} {elapsed_precise}")
                    .expect("a valid template"),
            );
            bar.set_message(phase.to_string());
            bar.enable_steady_tick(std::time::Duration::from_millis(200));
            bar
        } else {
            self::bar(steps, phase)
        };
        self.with(|current| {
            if let Some(old) = current.replace(bar) {
                old.finish_and_clear();
            }
        });
    }

    fn advance(&self, steps: u64) {
        self.with(|current| {
            if let Some(bar) = current {
                bar.inc(steps);
            }
        });
    }

    fn finish(&self) {
        self.time(None);
        self.with(|current| {
            if let Some(bar) = current.take() {
                bar.finish_and_clear();
            }
        });
    }
}
