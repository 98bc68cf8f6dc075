//! Where one output of a dedup of files goes: a file, put in place whole at the end, or the
//! caller's stdout.

use std::io::Write;
use std::path::PathBuf;

use crate::error::{Error, Result};
use crate::io::output_file::OutputFile;

/// Where one output goes.
pub(crate) enum Target<'w> {
    File(OutputFile),
    Stdout(&'w mut dyn Write),
}

impl Target<'_> {
    pub(crate) fn write(&mut self, bytes: &[u8]) -> Result<()> {
        match self {
            Target::File(file) => file.write_all_named(bytes),
            Target::Stdout(out) => out.write_all(bytes).map_err(|e| Error::io("<stdout>", e)),
        }
    }

    /// Puts a file in place (see [`OutputFile::finish`]); flushes stdout. Returns the path of
    /// a file written.
    pub(crate) fn finish(self) -> Result<Option<PathBuf>> {
        match self {
            Target::File(file) => {
                let path = file.path().to_path_buf();
                file.finish()?;
                Ok(Some(path))
            }
            Target::Stdout(out) => {
                out.flush().map_err(|e| Error::io("<stdout>", e))?;
                Ok(None)
            }
        }
    }
}
