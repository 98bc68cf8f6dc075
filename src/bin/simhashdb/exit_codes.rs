//! The exit codes of every command, and how errors are printed.
//!
//! | code | meaning |
//! |------|---------|
//! | 0 | success; also when stdout closes under the command (e.g. `| head`) |
//! | 1 | failure: the command ran and failed; the message is on stderr |
//! | 2 | bad usage: an invalid flag, value or setting, whether the parser or the library refused it |
//!
//! `verify` keeps its own meaning of 1 and 2: 0 clean, 1 findings, 2 the check could not run
//! (bad usage included).

use std::process::ExitCode;

use simhashdb::{Error, Setting};

/// The command did what it was asked.
pub const SUCCESS: u8 = 0;
/// The command ran and failed.
pub const FAILURE: u8 = 1;
/// The command was called wrongly: nothing was done.
pub const USAGE: u8 = 2;
/// `verify` found problems.
pub const VERIFY_FINDINGS: u8 = 1;
/// `verify` could not run.
pub const VERIFY_ERROR: u8 = 2;

/// An error in how a command was called (a flag value, a missing argument): exits with
/// [`USAGE`].
#[derive(Debug)]
pub struct Usage(pub String);

impl std::fmt::Display for Usage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Usage {}

/// A usage error saying `msg`.
pub fn usage(msg: impl Into<String>) -> anyhow::Error {
    Usage(msg.into()).into()
}

/// Prints `err` on stderr (unless stdout closed) and returns the exit code for it.
pub fn report(err: &anyhow::Error) -> ExitCode {
    if is_broken_pipe(err) {
        return ExitCode::from(SUCCESS);
    }
    eprintln!("simhashdb: {}", message(err));
    ExitCode::from(if is_usage(err) { USAGE } else { FAILURE })
}

/// Whether `err` says the command was called wrongly: a [`Usage`], or a library error of
/// kind `ErrorKind::Usage` (the library's table decides).
pub fn is_usage(err: &anyhow::Error) -> bool {
    err.chain().any(|cause| {
        cause.is::<Usage>()
            || cause
                .downcast_ref::<Error>()
                .is_some_and(|e| e.kind().exit_code() == USAGE)
    })
}

/// Whether an error is stdout closing under us, which is not a failure of the command.
pub fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|cause| {
        cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

/// The whole cause chain, each cause once, with the library's setting names given as the
/// flags that set them.
pub fn message(err: &anyhow::Error) -> String {
    let mut parts: Vec<String> = Vec::new();
    for cause in err.chain() {
        let text = match cause.downcast_ref::<Error>() {
            Some(Error::Settings { setting, problem }) => {
                format!("invalid {}: {problem}", flag(*setting))
            }
            Some(Error::DistanceTooLarge { asked, max }) => format!(
                "--distance {asked} exceeds the store's maximum distance {max} (set by \
                 `init --distance`)"
            ),
            _ => cause.to_string(),
        };
        // An error that shows its source in its own message: the source says nothing new.
        if !parts.last().is_some_and(|last| last.ends_with(&text)) {
            parts.push(text);
        }
    }
    parts.join(": ")
}

/// The flag that sets `setting`.
fn flag(setting: Setting) -> &'static str {
    match setting {
        Setting::Blocks => "--blocks",
        Setting::Distance => "--distance",
        Setting::Shards => "--shards",
        Setting::ExpectedSize => "--expected-size",
        Setting::Scheme => "--scheme",
        Setting::MinJaccard => "--min-jaccard",
        Setting::MergeFactor => "--merge-factor",
        Setting::ExpireBefore => "--before",
        Setting::Output => "--output",
        Setting::Label => "--label",
        _ => "setting",
    }
}
