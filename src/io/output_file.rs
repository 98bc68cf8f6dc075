//! An output file that appears whole or not at all: written to a temporary file beside its
//! path and renamed onto it when finished, so a reader never sees half a file and a failed
//! write leaves none.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use tempfile::NamedTempFile;

use crate::error::{Error, Result};

pub(crate) struct OutputFile {
    path: PathBuf,
    temp: NamedTempFile,
    out: BufWriter<File>,
}

impl OutputFile {
    /// Starts the file at `path` (its directory must exist).
    pub fn create(path: &Path) -> Result<Self> {
        let temp = temp_beside(path)?;
        let handle = temp.reopen().map_err(|e| Error::io(path, e))?;
        Ok(OutputFile {
            path: path.to_path_buf(),
            temp,
            out: BufWriter::with_capacity(1 << 20, handle),
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Writes `bytes`, naming the file in an error.
    pub fn write_all_named(&mut self, bytes: &[u8]) -> Result<()> {
        self.out
            .write_all(bytes)
            .map_err(|e| Error::io(&self.path, e))
    }

    /// Flushes and syncs the file and renames it onto its path.
    pub fn finish(self) -> Result<()> {
        let path = self.path;
        let file = self
            .out
            .into_inner()
            .map_err(|e| Error::io(&path, e.into_error()))?;
        file.sync_all().map_err(|e| Error::io(&path, e))?;
        self.temp
            .persist(&path)
            .map_err(|e| Error::io(&path, e.error))?;
        Ok(())
    }
}

impl Write for OutputFile {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.out.write(bytes)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.out.flush()
    }
}

/// A temporary file in the directory of `path`, created as any output file is (0666 less the
/// user's umask), not private as a temporary file would be: it becomes the output.
pub(crate) fn temp_beside(path: &Path) -> Result<NamedTempFile> {
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    let mut builder = tempfile::Builder::new();
    #[cfg(unix)]
    builder.permissions(std::os::unix::fs::PermissionsExt::from_mode(0o666));
    builder.tempfile_in(dir).map_err(|e| Error::io(path, e))
}
