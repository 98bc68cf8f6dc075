//! The library's errors. Each variant says what went wrong and, where it helps, how to fix it;
//! the CLI prints the whole chain.

use std::path::{Path, PathBuf};

/// Everything the engine can fail with. Each variant says what went wrong and how to fix it.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A setting whose value cannot make a working store (see [`crate::Settings::validate`]).
    /// Fix: choose another value, as `problem` says.
    #[error("invalid {setting}: {problem}")]
    Settings {
        /// The setting at fault.
        setting: Setting,
        /// What is wrong with its value, and what would do.
        problem: String,
    },

    /// An input document, line or value that is not what its format requires. Fix the input at
    /// the place named, or skip invalid documents (see [`crate::ReadOptions::skip_invalid`]).
    #[error("{}", at_place(origin.as_deref(), *line, problem))]
    Input {
        /// The input: a file's path, `<stdin>`, or a name the caller gave.
        origin: Option<String>,
        /// The 1-based line, for line formats.
        line: Option<u64>,
        /// What is wrong.
        problem: String,
    },

    /// A file's operating-system error, with the path it concerns. Fix: as the error says
    /// (permissions, free space, a missing file).
    #[error("{path}: {error}")]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The operating system's error.
        #[source]
        error: std::io::Error,
    },

    /// The storage engine (redb) failed on a file of the store for a reason other than the
    /// file's bytes or the operating system (which are [`Error::Corruption`] and [`Error::Io`]).
    /// Fix: as the error says; if it reports damage, run [`crate::Store::verify`].
    #[error("{path}: {problem}")]
    Storage {
        /// The redb file.
        path: PathBuf,
        /// What redb said.
        problem: String,
    },

    /// Stored bytes fail their checksum or structure checks: the store is damaged where it
    /// says. Fix: [`crate::Store::verify`] lists every damaged block; restore the store from a
    /// copy.
    #[error("{}", corruption_message(file.as_deref(), table.as_deref(), block.as_deref(), problem))]
    Corruption {
        /// The damaged file, when known.
        file: Option<PathBuf>,
        /// The table of that file (`docs`, `postings`, `t000`...), when known.
        table: Option<String>,
        /// The block: the key it is filed under, as 16 hex digits, when known.
        block: Option<String>,
        /// What is wrong.
        problem: String,
    },

    /// The path is not a simhashdb store. Fix: give the directory made by
    /// [`crate::Store::create`].
    #[error("{path}: not a simhashdb store ({why})")]
    NotAStore {
        /// The path given.
        path: PathBuf,
        /// Why it is not a store.
        why: String,
    },

    /// The path to create a store at is taken. Fix: choose a new path, or an empty directory.
    #[error("{path}: {why}; choose a new path")]
    AlreadyExists {
        /// The path given.
        path: PathBuf,
        /// What is there.
        why: String,
    },

    /// The store was written by an older format this build can upgrade. Fix: run
    /// [`crate::Store::migrate`] (`simhashdb migrate`).
    #[error(
        "{path}: store format version {found} is older than this build's {current}: \
         upgrade required: run `simhashdb migrate {path}`"
    )]
    UpgradeRequired {
        /// The store.
        path: PathBuf,
        /// Its format version.
        found: u32,
        /// This build's.
        current: u32,
    },

    /// The store was written by a newer or unknown format. Fix: use a newer simhashdb.
    #[error(
        "{path}: store format version {found} is not known to this build (which reads \
         version {current}); use a newer simhashdb"
    )]
    UnknownVersion {
        /// The store.
        path: PathBuf,
        /// Its format version.
        found: u32,
        /// This build's.
        current: u32,
    },

    /// Another process holds the writer lock. Fix: wait for it to finish.
    #[error(
        "{path}: store is locked by pid {pid} (another insert, delete or compaction is running)"
    )]
    Locked {
        /// The store.
        path: PathBuf,
        /// The pid written in the lock file by its holder.
        pid: String,
    },

    /// A fingerprint scheme that this build does not know, or text given to a store that
    /// records no scheme. Fix: as the message says.
    #[error("{0}")]
    Scheme(String),

    /// A query asked for more bits than the store's tables can find. Fix: ask for at most
    /// `max`, or make a store with a larger distance.
    #[error("distance {asked} exceeds the store's maximum distance {max}")]
    DistanceTooLarge {
        /// The distance asked for.
        asked: u32,
        /// The store's K.
        max: u32,
    },

    /// No insert batch has the label an expiry asked for. Fix: list the batches
    /// ([`crate::Snapshot::batches`]) and use one of their labels.
    #[error("no insert batch has the label {label:?}")]
    NoSuchLabel {
        /// The label asked for.
        label: String,
    },

    /// A file not read or written because an earlier attempt to open or write it failed: a
    /// consequence, reported only when its cause is not known.
    #[error("{path}: not used, because an earlier attempt to open or write it failed")]
    AfterEarlierFailure {
        /// The file.
        path: PathBuf,
    },

    /// An input over the size its reader accepts. Fix: send less at once, or raise the limit
    /// named.
    #[error("{what}: {problem}")]
    TooLarge {
        /// The input: a file's path, `request body`, or a name the caller gave.
        what: String,
        /// What is over which limit.
        problem: String,
    },
}

/// What the caller can do about an [`Error`]: the one table that decides every client's
/// answer to it (the CLI's exit code, the HTTP status, the Python exception).
///
/// | kind | meaning | exit | HTTP | Python |
/// |------|---------|------|------|--------|
/// | `Usage` | a setting or argument no call can succeed with | 2 | 400 | `ValueError` |
/// | `Input` | a document, line or value not in its format | 1 | 400 | `ValueError` |
/// | `TooLarge` | an input over its reader's limit | 1 | 413 | `ValueError` |
/// | `NotFound` | a named thing (a batch label) that is not there | 1 | 404 | `ValueError` |
/// | `Conflict` | another process holds the store's writer lock | 1 | 409 | `StoreLockedError` |
/// | `Corruption` | stored bytes fail their checks | 1 | 500 | `CorruptionError` |
/// | `Io` | a file, the disk, or the store's format version | 1 | 500 | `OSError` (by errno) |
/// | `Bug` | a panic caught by a client | 1 | 500 | `RuntimeError` |
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// A setting or argument no call can succeed with.
    Usage,
    /// A document, line or value not in its format.
    Input,
    /// An input over its reader's limit.
    TooLarge,
    /// A named thing that is not there.
    NotFound,
    /// Another process holds the store's writer lock.
    Conflict,
    /// Stored bytes fail their checks.
    Corruption,
    /// A file, the disk, or the store's format version.
    Io,
    /// A panic caught by a client: a bug to report.
    Bug,
}

impl ErrorKind {
    /// The CLI's exit code.
    pub fn exit_code(self) -> u8 {
        self.answers().0
    }

    /// The HTTP API's status code.
    pub fn http_status(self) -> u16 {
        self.answers().1
    }

    /// The Python exception's class name (`OSError` is refined by the error's
    /// [`Error::errno`]).
    pub fn python_exception(self) -> &'static str {
        self.answers().2
    }

    /// The table above: (exit code, HTTP status, Python exception).
    fn answers(self) -> (u8, u16, &'static str) {
        match self {
            ErrorKind::Usage => (2, 400, "ValueError"),
            ErrorKind::Input => (1, 400, "ValueError"),
            ErrorKind::TooLarge => (1, 413, "ValueError"),
            ErrorKind::NotFound => (1, 404, "ValueError"),
            ErrorKind::Conflict => (1, 409, "StoreLockedError"),
            ErrorKind::Corruption => (1, 500, "CorruptionError"),
            ErrorKind::Io => (1, 500, "OSError"),
            ErrorKind::Bug => (1, 500, "RuntimeError"),
        }
    }
}

/// The settings of a store and of its operations, as [`Error::Settings`] names them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Setting {
    /// m, the number of blocks a fingerprint is split into ([`crate::Settings::blocks`]).
    Blocks,
    /// K, the largest distance a query may ask for ([`crate::Settings::distance`]).
    Distance,
    /// The number of shards ([`crate::Settings::shards`]).
    Shards,
    /// The store size the settings are planned for ([`crate::Settings::for_size`]).
    ExpectedSize,
    /// The fingerprint scheme ([`crate::Scheme`]).
    Scheme,
    /// The least Jaccard similarity a verified pair keeps ([`crate::NearDuplicates::verify_text`]).
    MinJaccard,
    /// Bytes of each document's verification sketch (`init --sketch-bytes`).
    SketchBytes,
    /// Runs merged into one ([`crate::CompactionPolicy::merge_factor`]).
    MergeFactor,
    /// The date an expire takes the batches committed before ([`crate::ExpireSelector`]).
    ExpireBefore,
    /// An output file, whose name says a form its records are not in.
    Output,
    /// An insert batch's label ([`crate::InsertOptions::label`]).
    Label,
}

impl Setting {
    /// The setting's name, as messages print it.
    pub fn name(self) -> &'static str {
        match self {
            Setting::Blocks => "blocks",
            Setting::Distance => "distance",
            Setting::Shards => "shards",
            Setting::ExpectedSize => "expected size",
            Setting::Scheme => "scheme",
            Setting::MinJaccard => "minimum Jaccard similarity",
            Setting::SketchBytes => "sketch bytes",
            Setting::MergeFactor => "merge factor",
            Setting::ExpireBefore => "expiry date",
            Setting::Output => "output",
            Setting::Label => "label",
        }
    }
}

impl std::fmt::Display for Setting {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

fn at_place(source: Option<&str>, line: Option<u64>, problem: &str) -> String {
    match (source, line) {
        (Some(source), Some(line)) => format!("{source}:{line}: {problem}"),
        (Some(source), None) => format!("{source}: {problem}"),
        (None, Some(line)) => format!("line {line}: {problem}"),
        (None, None) => problem.to_string(),
    }
}

/// `FILE table TABLE block BLOCK: PROBLEM`, with the parts that are known.
fn corruption_message(
    file: Option<&Path>,
    table: Option<&str>,
    block: Option<&str>,
    problem: &str,
) -> String {
    let location = corruption_location(file, table, block);
    if location.is_empty() {
        format!("corrupted data: {problem}")
    } else {
        format!("corrupted data in {location}: {problem}")
    }
}

/// `FILE table TABLE block BLOCK`, with the parts that are known.
pub(crate) fn corruption_location(
    file: Option<&Path>,
    table: Option<&str>,
    block: Option<&str>,
) -> String {
    let mut parts = Vec::new();
    if let Some(file) = file {
        parts.push(file.display().to_string());
    }
    if let Some(table) = table {
        parts.push(format!("table {table}"));
    }
    if let Some(block) = block {
        parts.push(format!("block {block}"));
    }
    parts.join(" ")
}

/// The library's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    pub(crate) fn settings(setting: Setting, problem: impl Into<String>) -> Self {
        Error::Settings {
            setting,
            problem: problem.into(),
        }
    }

    /// A corruption found by a codec, before the reader says where.
    pub(crate) fn corrupt(problem: impl Into<String>) -> Self {
        Error::Corruption {
            file: None,
            table: None,
            block: None,
            problem: problem.into(),
        }
    }

    /// An input error with no place: a value the caller handed over.
    pub(crate) fn input(problem: impl Into<String>) -> Self {
        Error::Input {
            origin: None,
            line: None,
            problem: problem.into(),
        }
    }

    /// An input error at `source`, line `line`.
    pub(crate) fn input_at(source: &str, line: Option<u64>, problem: impl Into<String>) -> Self {
        Error::Input {
            origin: Some(source.to_string()),
            line,
            problem: problem.into(),
        }
    }

    pub(crate) fn io(path: impl Into<PathBuf>, error: std::io::Error) -> Self {
        Error::Io {
            path: path.into(),
            error,
        }
    }

    /// redb's error on the file at `path`, mapped at the boundary: its I/O errors are
    /// [`Error::Io`], its checks' findings and bytes it did not write [`Error::Corruption`], a
    /// write after a failed one [`Error::AfterEarlierFailure`].
    pub(crate) fn redb(path: impl Into<PathBuf>, error: impl Into<redb::Error>) -> Self {
        let path = path.into();
        match error.into() {
            // Bytes redb did not write: invalid data, or a page pointer past the file's end.
            redb::Error::Io(error)
                if matches!(
                    error.kind(),
                    std::io::ErrorKind::InvalidData | std::io::ErrorKind::UnexpectedEof
                ) =>
            {
                Error::Corruption {
                    file: Some(path),
                    table: None,
                    block: None,
                    problem: error.to_string(),
                }
            }
            redb::Error::Io(error) => Error::Io { path, error },
            redb::Error::Corrupted(problem) => Error::Corruption {
                file: Some(path),
                table: None,
                block: None,
                problem,
            },
            redb::Error::PreviousIo => Error::AfterEarlierFailure { path },
            other => Error::Storage {
                path,
                problem: other.to_string(),
            },
        }
    }

    /// What the caller can do about this error (see [`ErrorKind`]'s table).
    pub fn kind(&self) -> ErrorKind {
        match self {
            Error::Settings { .. } | Error::DistanceTooLarge { .. } => ErrorKind::Usage,
            Error::Input { .. } | Error::Scheme(_) => ErrorKind::Input,
            Error::TooLarge { .. } => ErrorKind::TooLarge,
            Error::NoSuchLabel { .. } => ErrorKind::NotFound,
            Error::Locked { .. } => ErrorKind::Conflict,
            Error::Corruption { .. } => ErrorKind::Corruption,
            Error::Io { .. }
            | Error::Storage { .. }
            | Error::NotAStore { .. }
            | Error::AlreadyExists { .. }
            | Error::UpgradeRequired { .. }
            | Error::UnknownVersion { .. }
            | Error::AfterEarlierFailure { .. } => ErrorKind::Io,
        }
    }

    /// The operating system's error number an [`ErrorKind::Io`] error stands for, when one
    /// does: a missing store is `ENOENT`, a taken path `EEXIST`.
    pub fn errno(&self) -> Option<i32> {
        match self {
            Error::Io { error, .. } => error.raw_os_error(),
            Error::NotAStore { path, .. } if !path.exists() => Some(libc::ENOENT),
            Error::AlreadyExists { .. } => Some(libc::EEXIST),
            _ => None,
        }
    }

    /// The whole chain of causes, each said once: the message every client shows.
    pub fn message(&self) -> String {
        let mut message = self.to_string();
        let mut source = std::error::Error::source(self);
        while let Some(cause) = source {
            let text = cause.to_string();
            if !message.contains(&text) {
                message = format!("{message}: {text}");
            }
            source = cause.source();
        }
        message
    }

    /// Whether this is a write refused because an earlier one to the same file failed: a
    /// consequence, not a cause.
    pub(crate) fn follows_earlier_io_error(&self) -> bool {
        matches!(self, Error::AfterEarlierFailure { .. })
    }

    /// Of two errors met by work done at once, the one to report: the cause, not the
    /// consequences it brought on the others.
    pub(crate) fn cause(self, other: Error) -> Error {
        if self.follows_earlier_io_error() && !other.follows_earlier_io_error() {
            other
        } else {
            self
        }
    }

    /// Fills in where a corruption was found, keeping what is already known.
    pub(crate) fn at(self, file: &Path, table: &str, block: Option<String>) -> Self {
        match self {
            Error::Corruption {
                file: f,
                table: t,
                block: b,
                problem,
            } => Error::Corruption {
                file: f.or_else(|| Some(file.to_path_buf())),
                table: t.or_else(|| Some(table.to_string())),
                block: b.or(block),
                problem,
            },
            other => other,
        }
    }

    /// Places a corruption in `file`, unless its place is known.
    pub(crate) fn in_file(self, file: &Path) -> Self {
        match self {
            Error::Corruption {
                file: None,
                table,
                block,
                problem,
            } => Error::Corruption {
                file: Some(file.to_path_buf()),
                table,
                block,
                problem,
            },
            other => other,
        }
    }
}

/// Runs `read`, which reads redb files of the store at `place`, turning a panic into a
/// corruption there: redb checks its page checksums only in its integrity check, and on some
/// damaged pages it panics instead of returning an error.
pub(crate) fn guard_redb<T>(place: &Path, read: impl FnOnce() -> Result<T>) -> Result<T> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(read)).unwrap_or_else(|panic| {
        let what = panic
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| panic.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "a panic".to_string());
        Err(Error::corrupt(format!("redb failed on damaged pages ({what})")).in_file(place))
    })
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

/// The problem an error states, without its place.
pub(crate) fn problem_of(e: Error) -> String {
    match e {
        Error::Input { problem, .. } => problem,
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One error of every variant, with the kind the table gives it. The match makes a new
    /// variant a compile error here until it is given a kind and a sample.
    fn one_of_each() -> Vec<(Error, ErrorKind)> {
        let samples = vec![
            (Error::settings(Setting::Blocks, "x"), ErrorKind::Usage),
            (Error::input_at("f", Some(3), "bad"), ErrorKind::Input),
            (
                Error::io("f", std::io::Error::from_raw_os_error(libc::EACCES)),
                ErrorKind::Io,
            ),
            (
                Error::redb("f", redb::Error::TransactionInProgress),
                ErrorKind::Io,
            ),
            (
                Error::corrupt("bad block").in_file(Path::new("f")),
                ErrorKind::Corruption,
            ),
            (
                Error::NotAStore {
                    path: "/nonexistent/store".into(),
                    why: "missing".into(),
                },
                ErrorKind::Io,
            ),
            (
                Error::AlreadyExists {
                    path: "s".into(),
                    why: "it exists".into(),
                },
                ErrorKind::Io,
            ),
            (
                Error::UpgradeRequired {
                    path: "s".into(),
                    found: 1,
                    current: 2,
                },
                ErrorKind::Io,
            ),
            (
                Error::UnknownVersion {
                    path: "s".into(),
                    found: 9,
                    current: 2,
                },
                ErrorKind::Io,
            ),
            (
                Error::Locked {
                    path: "s".into(),
                    pid: "12".into(),
                },
                ErrorKind::Conflict,
            ),
            (Error::Scheme("no scheme".into()), ErrorKind::Input),
            (
                Error::DistanceTooLarge { asked: 9, max: 3 },
                ErrorKind::Usage,
            ),
            (
                Error::NoSuchLabel {
                    label: "nope".into(),
                },
                ErrorKind::NotFound,
            ),
            (
                Error::AfterEarlierFailure { path: "f".into() },
                ErrorKind::Io,
            ),
            (
                Error::TooLarge {
                    what: "request body".into(),
                    problem: "over".into(),
                },
                ErrorKind::TooLarge,
            ),
        ];
        for (error, _) in &samples {
            match error {
                Error::Settings { .. }
                | Error::Input { .. }
                | Error::Io { .. }
                | Error::Storage { .. }
                | Error::Corruption { .. }
                | Error::NotAStore { .. }
                | Error::AlreadyExists { .. }
                | Error::UpgradeRequired { .. }
                | Error::UnknownVersion { .. }
                | Error::Locked { .. }
                | Error::Scheme(_)
                | Error::DistanceTooLarge { .. }
                | Error::NoSuchLabel { .. }
                | Error::AfterEarlierFailure { .. }
                | Error::TooLarge { .. } => {}
            }
        }
        samples
    }

    #[test]
    fn every_variant_has_its_kind_and_every_kind_its_answers() {
        let samples = one_of_each();
        let variants: std::collections::HashSet<_> = samples
            .iter()
            .map(|(e, _)| std::mem::discriminant(e))
            .collect();
        assert_eq!(variants.len(), samples.len(), "one sample per variant");
        for (error, kind) in &samples {
            assert_eq!(error.kind(), *kind, "{error:?}");
            assert!(!error.message().is_empty());
        }
        // The table, as docs/design.md and the clients' docs state it.
        let table = [
            (ErrorKind::Usage, 2, 400, "ValueError"),
            (ErrorKind::Input, 1, 400, "ValueError"),
            (ErrorKind::TooLarge, 1, 413, "ValueError"),
            (ErrorKind::NotFound, 1, 404, "ValueError"),
            (ErrorKind::Conflict, 1, 409, "StoreLockedError"),
            (ErrorKind::Corruption, 1, 500, "CorruptionError"),
            (ErrorKind::Io, 1, 500, "OSError"),
            (ErrorKind::Bug, 1, 500, "RuntimeError"),
        ];
        for (kind, exit, status, class) in table {
            assert_eq!(kind.exit_code(), exit, "{kind:?}");
            assert_eq!(kind.http_status(), status, "{kind:?}");
            assert_eq!(kind.python_exception(), class, "{kind:?}");
        }
    }

    #[test]
    fn redb_errors_are_mapped_at_the_boundary() {
        let io = Error::redb(
            "f",
            redb::Error::Io(std::io::Error::from_raw_os_error(libc::ENOSPC)),
        );
        assert!(matches!(io, Error::Io { .. }) && io.errno() == Some(libc::ENOSPC));
        let bad = Error::redb("f", redb::Error::Corrupted("page".into()));
        assert!(
            matches!(bad, Error::Corruption { file: Some(_), .. }),
            "{bad:?}"
        );
        let missing = Error::NotAStore {
            path: "/nonexistent/store".into(),
            why: "missing".into(),
        };
        assert_eq!(missing.errno(), Some(libc::ENOENT));
    }

    #[test]
    fn the_cause_is_reported_not_redbs_previous_io_error() {
        let consequence = || Error::redb("f", redb::Error::PreviousIo);
        assert!(matches!(consequence(), Error::AfterEarlierFailure { .. }));
        let cause = || Error::corrupt("the cause");
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
