//! Writing results: to stdout, or to a file a flag names.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;

use anyhow::{Context, Result};

/// A buffered, locked stdout.
pub fn stdout() -> BufWriter<std::io::StdoutLock<'static>> {
    BufWriter::with_capacity(1 << 16, std::io::stdout().lock())
}

/// Runs `write` on the file at `path` (created or truncated), or on stdout for None or '-'.
pub fn write_to(
    path: Option<&Path>,
    write: impl FnOnce(&mut dyn Write) -> Result<()>,
) -> Result<()> {
    match path.filter(|p| p.as_os_str() != "-") {
        None => {
            let mut out = stdout();
            write(&mut out)?;
            out.flush()?;
        }
        Some(path) => {
            let cannot = || format!("{}: cannot write", path.display());
            let file =
                File::create(path).with_context(|| format!("{}: cannot create", path.display()))?;
            let mut out = BufWriter::with_capacity(1 << 16, file);
            write(&mut out).with_context(cannot)?;
            out.flush().with_context(cannot)?;
        }
    }
    Ok(())
}

/// Whether an output path names a Parquet file (by its `.parquet` extension).
pub fn is_parquet_name(path: &Path) -> bool {
    path.extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("parquet"))
}

/// Writes `value` as one JSON line, its keys sorted (as every JSON line the CLI prints: the
/// shapes are the library's serde forms, so CLI, HTTP and Python answer alike).
pub fn json_line(out: &mut dyn Write, value: &impl serde::Serialize) -> Result<()> {
    writeln!(out, "{}", serde_json::to_value(value)?)?;
    Ok(())
}
