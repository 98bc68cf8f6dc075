//! An output file that appears whole or not at all: written to a temporary file beside its
//! path and renamed onto it when finished, so a reader never sees half a file and a failed
//! write leaves none. A path that names something other than a regular file (`/dev/null`,
//! `/dev/stdout`, a named pipe) is written in place: renaming onto it would replace the
//! device or pipe with a file.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use tempfile::NamedTempFile;

use crate::error::{Error, Result};

/// An output file that appears whole or not at all (see the module docs): every file a
/// command writes goes through one.
///
/// ```
/// # let dir = tempfile::tempdir().unwrap();
/// use std::io::Write;
/// let path = dir.path().join("pairs.tsv");
/// let mut out = simhashdb::OutputFile::create(&path)?;
/// writeln!(out, "a\tb\t1").unwrap();
/// assert!(!path.exists()); // not before it is finished
/// out.finish()?;
/// assert_eq!(std::fs::read_to_string(&path).unwrap(), "a\tb\t1\n");
/// # Ok::<(), simhashdb::Error>(())
/// ```
pub struct OutputFile {
    path: PathBuf,
    /// The file renamed onto `path` when finished; None when writing `path` in place.
    temp: Option<NamedTempFile>,
    out: BufWriter<File>,
}

impl OutputFile {
    /// Starts the file at `path` (its directory must exist).
    pub fn create(path: &Path) -> Result<Self> {
        let special = std::fs::metadata(path).is_ok_and(|m| !m.is_file() && !m.is_dir());
        let (temp, handle) = if special {
            let handle = std::fs::OpenOptions::new()
                .write(true)
                .open(path)
                .map_err(|e| Error::io(path, e))?;
            (None, handle)
        } else {
            let temp = temp_beside(path)?;
            let handle = temp.reopen().map_err(|e| Error::io(path, e))?;
            (Some(temp), handle)
        };
        Ok(OutputFile {
            path: path.to_path_buf(),
            temp,
            out: BufWriter::with_capacity(1 << 20, handle),
        })
    }

    /// The path the file appears at when finished.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Writes `bytes`, naming the file in an error.
    pub fn write_all_named(&mut self, bytes: &[u8]) -> Result<()> {
        self.out
            .write_all(bytes)
            .map_err(|e| Error::io(&self.path, e))
    }

    /// Flushes the file and, for a regular file, syncs it and renames it onto its path.
    /// Dropped unfinished, the file leaves nothing behind.
    pub fn finish(self) -> Result<()> {
        let path = self.path;
        let file = self
            .out
            .into_inner()
            .map_err(|e| Error::io(&path, e.into_error()))?;
        if let Some(temp) = self.temp {
            file.sync_all().map_err(|e| Error::io(&path, e))?;
            temp.persist(&path).map_err(|e| Error::io(&path, e.error))?;
        }
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

/// A temporary file in the directory of `path`, named `.NAME.XXXXXX.partial` after it (a
/// writer killed before its rename leaves one behind; the name says whose it is), created as
/// any output file is (0666 less the user's umask), not private as a temporary file would be:
/// it becomes the output.
fn temp_beside(path: &Path) -> Result<NamedTempFile> {
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    let prefix = format!(".{name}.");
    let mut builder = tempfile::Builder::new();
    builder.prefix(&prefix).suffix(".partial");
    #[cfg(unix)]
    builder.permissions(std::os::unix::fs::PermissionsExt::from_mode(0o666));
    builder.tempfile_in(dir).map_err(|e| {
        // The error names the temporary file; the user named `path`.
        let problem = match e.kind() {
            std::io::ErrorKind::NotFound => {
                format!("the directory {} does not exist", dir.display())
            }
            kind => format!("cannot create a file in {}: {kind}", dir.display()),
        };
        Error::io(path, std::io::Error::new(e.kind(), problem))
    })
}
