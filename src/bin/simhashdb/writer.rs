//! What every writing command shares: `--wait` for the writer lock, and a note of the debris
//! that opening the store removed.

use std::path::Path;
use std::time::Duration;

use anyhow::{Context, Result};
use simhashdb::{Debris, Error, Store};

use crate::exit_codes::usage;

/// How long a writing command waits for another writer.
#[derive(clap::Args, Clone, Debug)]
pub struct WaitArgs {
    /// Wait up to SECONDS (a decimal number) for another writer (an insert, delete, expire,
    /// compact, repair, migrate or a running `serve`) to release the store; 0, the default,
    /// fails at once naming the holder's pid.
    #[arg(
        long,
        value_name = "SECONDS",
        default_value = "0",
        allow_hyphen_values = true
    )]
    wait: String,
}

impl WaitArgs {
    /// The wait, checked: a finite number of seconds, 0 or more.
    pub fn duration(&self) -> Result<Duration> {
        self.wait
            .parse::<f64>()
            .ok()
            .and_then(|s| Duration::try_from_secs_f64(s).ok())
            .ok_or_else(|| {
                usage(format!(
                    "invalid --wait {:?}: expected seconds, a number 0 or more (e.g. 30 or 0.5)",
                    self.wait
                ))
            })
    }
}

/// Opens `store` for writing, waiting as `wait` says, with progress bars on stderr; tells
/// stderr what debris it removed.
pub fn open(store: &Path, wait: &WaitArgs) -> Result<Store> {
    let waited = wait.duration()?;
    let mut opened = Store::open_waiting(store, waited)
        .map_err(|e| locked_after(e, waited))
        .with_context(|| format!("{}: cannot open the store", store.display()))?;
    for debris in opened.removed_debris() {
        eprintln!("simhashdb: removed {}", describe(debris));
    }
    opened.set_progress(crate::progress::Bars::shared());
    Ok(opened)
}

/// `err`, saying how long the command waited when the lock is what failed it, or how to wait.
pub fn locked_after(err: Error, waited: Duration) -> anyhow::Error {
    match err {
        Error::Locked { .. } if waited.is_zero() => {
            anyhow::anyhow!("{err}; `--wait SECONDS` waits for it")
        }
        Error::Locked { .. } => anyhow::anyhow!("{err}, still after waiting {waited:?}"),
        err => err.into(),
    }
}

/// One line on a piece of debris: where, how big, why it is there.
pub fn describe(debris: &Debris) -> String {
    format!(
        "{} ({}): in runs/ but named by no catalog, left by a writer killed before its commit \
         or a compaction killed before removing its inputs",
        debris.path.display(),
        size(debris.bytes)
    )
}

/// Bytes for people: 193.0 MB, 12.0 kB, 512 bytes.
fn size(bytes: u64) -> String {
    match bytes {
        0..1_000 => format!("{bytes} bytes"),
        1_000..1_000_000 => format!("{:.1} kB", bytes as f64 / 1e3),
        1_000_000..1_000_000_000 => format!("{:.1} MB", bytes as f64 / 1e6),
        _ => format!("{:.1} GB", bytes as f64 / 1e9),
    }
}
