//! Writing results to stdout.

use std::io::BufWriter;

/// A buffered, locked stdout.
pub fn stdout() -> BufWriter<std::io::StdoutLock<'static>> {
    BufWriter::with_capacity(1 << 16, std::io::stdout().lock())
}
