//! The library's errors. Each variant says what went wrong and, where it helps, how to fix it;
//! the CLI prints the whole chain.

use std::path::PathBuf;

/// Everything the engine can fail with.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// Settings that cannot make a working store (see [`crate::Settings::validate`]).
    #[error("invalid settings: {0}")]
    Settings(String),

    /// An input line or value that is not what the format requires.
    #[error("{0}")]
    Input(String),

    /// A file's operating-system error, with the path it concerns.
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },

    /// redb failed, with the file it concerns.
    #[error("{path}: {source}")]
    Redb {
        path: PathBuf,
        #[source]
        source: Box<redb::Error>,
    },

    /// Stored bytes fail their checksum or structure checks. The store is damaged: run
    /// `simhashdb verify` to list every damaged block, and restore from a copy.
    #[error("corrupted data: {0}")]
    Corrupt(String),

    /// The path is not a simhashdb store.
    #[error("{path}: not a simhashdb store ({why})")]
    NotAStore { path: PathBuf, why: String },

    /// The store was written by an older format this build can upgrade.
    #[error(
        "{path}: store format version {found} is older than this build's {current}: \
         upgrade required: run `simhashdb migrate {path}`"
    )]
    UpgradeRequired {
        path: PathBuf,
        found: u32,
        current: u32,
    },

    /// The store was written by a newer or unknown format.
    #[error(
        "{path}: store format version {found} is not known to this build (which reads \
         version {current}); use a newer simhashdb"
    )]
    UnknownVersion {
        path: PathBuf,
        found: u32,
        current: u32,
    },

    /// Another process holds the writer lock.
    #[error(
        "{path}: store is locked by pid {pid} (another insert, delete or compaction is running)"
    )]
    Locked { path: PathBuf, pid: String },

    /// A fingerprint scheme that this build does not know, or text given to a store without
    /// one.
    #[error("{0}")]
    Scheme(String),

    /// A query asked for more than the store supports.
    #[error(
        "distance {asked} exceeds the store's maximum distance {max} (set by `init --distance`)"
    )]
    DistanceTooLarge { asked: u32, max: u32 },
}

/// The library's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    pub(crate) fn settings(msg: impl Into<String>) -> Self {
        Error::Settings(msg.into())
    }

    pub(crate) fn corrupt(msg: impl Into<String>) -> Self {
        Error::Corrupt(msg.into())
    }

    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io {
            path: path.into(),
            source,
        }
    }

    pub(crate) fn redb(path: impl Into<PathBuf>, source: impl Into<redb::Error>) -> Self {
        Error::Redb {
            path: path.into(),
            source: Box::new(source.into()),
        }
    }

    /// Whether this is redb refusing a write because an earlier one in the same transaction
    /// failed: a consequence, not a cause.
    pub(crate) fn follows_earlier_io_error(&self) -> bool {
        matches!(self, Error::Redb { source, .. } if matches!(**source, redb::Error::PreviousIo))
    }

    /// Of two errors met by work done at once, the one to report: the cause, not redb's
    /// "previous I/O error" that the cause brought on the others.
    pub(crate) fn cause(self, other: Error) -> Error {
        if self.follows_earlier_io_error() && !other.follows_earlier_io_error() {
            other
        } else {
            self
        }
    }

    /// Adds where a corruption was found (file, table, block) to its message.
    pub(crate) fn at(self, place: impl std::fmt::Display) -> Self {
        match self {
            Error::Corrupt(msg) => Error::Corrupt(format!("{place}: {msg}")),
            other => other,
        }
    }
}

/// The values of work done at once on one redb write transaction, or the error that caused
/// its failure (see [`Error::cause`]).
pub(crate) fn all_or_cause<T>(results: impl IntoIterator<Item = Result<T>>) -> Result<Vec<T>> {
    let mut values = Vec::new();
    let mut failure: Option<Error> = None;
    for result in results {
        match (result, failure.take()) {
            (Ok(value), failure_so_far) => {
                values.push(value);
                failure = failure_so_far;
            }
            (Err(e), None) => failure = Some(e),
            (Err(e), Some(earlier)) => failure = Some(earlier.cause(e)),
        }
    }
    match failure {
        Some(e) => Err(e),
        None => Ok(values),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cause_is_reported_not_redbs_previous_io_error() {
        let consequence = || Error::redb("f", redb::Error::PreviousIo);
        let cause = || Error::Corrupt("the cause".into());
        for results in [
            vec![Ok(1), Err(consequence()), Err(cause())],
            vec![Err(cause()), Ok(2), Err(consequence())],
        ] {
            let e = all_or_cause(results).unwrap_err();
            assert!(e.to_string().contains("the cause"), "{e}");
        }
        let e = all_or_cause::<u8>(vec![Err(consequence())]).unwrap_err();
        assert!(e.follows_earlier_io_error());
        assert_eq!(all_or_cause(vec![Ok(1), Ok(2)]).unwrap(), vec![1, 2]);
    }
}
