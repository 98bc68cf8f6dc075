//! Writing results to stdout.

use std::io::BufWriter;

/// A buffered, locked stdout.
pub fn stdout() -> BufWriter<std::io::StdoutLock<'static>> {
    BufWriter::with_capacity(1 << 16, std::io::stdout().lock())
}

/// Whether an error is stdout closing under us, which is not a failure of the command.
pub fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|cause| {
        cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe)
    })
}
