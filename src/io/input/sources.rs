//! Where documents come from: stdin (`-`), files and directories.
//!
//! The format of each input is, first that applies: the format in the options; by file name,
//! `.jsonl` jsonl, `.tsv` tsv, `.parquet` parquet; parquet if it starts with Parquet's magic
//! bytes; text for a file found inside a directory; jsonl if the first non-blank byte is `{`;
//! else the options' fallback. Directories are read recursively, in path order, skipping
//! hidden files (names starting with `.` or `_`); a directory or file that cannot be read is
//! an error even with `skip_invalid` (that skips invalid documents, not I/O failures). Text files are
//! fingerprinted in parallel in groups of about [`GROUP_BYTES`], so memory is bounded by a
//! group, not by the input.

use std::fs::File;
use std::io::BufRead;
use std::path::{Path, PathBuf};

use rayon::prelude::*;

use super::decode::{decoded, decoded_bytes};
use super::records::{record_file, Documents, RecordSink, TextDocument};
use super::ReadOptions;
use super::{is_parquet_head, ReadSummary, STDIN};
use super::{read_parquet_input, read_stream, text_document, InputFormat, ParquetInput};
use crate::error::{Error, Result};
use crate::io::rejects;
use crate::sys::progress::{Phase, Progress};
use crate::write::batch::DocumentSink;

/// Text files are read and fingerprinted together up to about this many bytes.
pub const GROUP_BYTES: u64 = 64 << 20;
/// ... or this many files.
const GROUP_FILES: usize = 4096;

/// An input given by the user: `-` for stdin, else a file, decompressed when it is gzip or
/// zstd and without a byte-order mark. Errors name the file (stdin is `<stdin>`).
pub(crate) fn open_input(path: &Path) -> Result<Box<dyn BufRead>> {
    if path.as_os_str() == "-" {
        return decoded(std::io::stdin().lock(), STDIN);
    }
    let file = File::open(path).map_err(|e| Error::io(path, e))?;
    decoded(file, &path.display().to_string())
}

/// One input, as the user's paths expand.
pub(crate) enum Input {
    /// `-`.
    Stdin,
    /// A file given, or found in a directory given.
    File {
        path: PathBuf,
        len: u64,
        in_directory: bool,
    },
    /// A directory given that holds no file to read (none, or only hidden ones).
    EmptyDirectory(PathBuf),
}

/// Calls `f` on each input of `inputs` (paths, `-` for stdin) in order, a directory expanded
/// to its files in path order (see [`walk`]). Stdin may be given once.
pub(crate) fn for_each_input(
    inputs: &[PathBuf],
    mut f: impl FnMut(Input) -> Result<()>,
) -> Result<()> {
    if inputs.iter().filter(|i| i.as_os_str() == "-").count() > 1 {
        return Err(Error::input("stdin ('-') can be read only once"));
    }
    for input in inputs {
        if input.as_os_str() == "-" {
            f(Input::Stdin)?;
            continue;
        }
        let meta = std::fs::metadata(input).map_err(|e| Error::io(input, e))?;
        if meta.is_dir() {
            let mut files = Vec::new();
            walk(input, &mut files)?;
            if files.is_empty() {
                f(Input::EmptyDirectory(input.clone()))?;
            }
            files.sort();
            for (path, len) in files {
                f(Input::File {
                    path,
                    len,
                    in_directory: true,
                })?;
            }
        } else {
            f(Input::File {
                path: input.clone(),
                len: meta.len(),
                in_directory: false,
            })?;
        }
    }
    Ok(())
}

/// The format of the file at `path` when its name, its first bytes or its place in a directory
/// say it (see the module docs); None leaves it to the stream's content.
pub(crate) fn file_format(
    path: &Path,
    in_directory: bool,
    options: &ReadOptions,
) -> Option<InputFormat> {
    options
        .format
        .or(InputFormat::by_name(path))
        .or_else(|| starts_as_parquet(path).then_some(InputFormat::Parquet))
        .or(in_directory.then_some(InputFormat::Text))
}

/// Reads every document of `inputs` (paths, `-` for stdin) into `sink`, in input order, and
/// reports the bytes read to `progress`.
pub fn read_sources(
    inputs: &[PathBuf],
    options: &ReadOptions,
    sink: &mut dyn DocumentSink,
    progress: &dyn Progress,
) -> Result<ReadSummary> {
    read_records(inputs, options, &mut Documents(sink), progress)
}

/// [`read_sources`] into a sink that takes each document's record too.
pub(crate) fn read_records(
    inputs: &[PathBuf],
    options: &ReadOptions,
    sink: &mut dyn RecordSink,
    progress: &dyn Progress,
) -> Result<ReadSummary> {
    let _phase = Phase::start(progress, "reading", 0);
    let mut reader = SourceReader {
        options,
        sink,
        progress,
        summary: ReadSummary::default(),
        texts: Vec::new(),
        text_bytes: 0,
    };
    for_each_input(inputs, |input| match input {
        Input::Stdin => {
            reader.flush_texts()?;
            let stdin = decoded(std::io::stdin().lock(), STDIN)?;
            reader.read_stream(stdin, STDIN, None)
        }
        Input::File {
            path,
            len,
            in_directory,
        } => reader.read_file(&path, len, in_directory),
        Input::EmptyDirectory(path) => {
            let mut summary = ReadSummary::default();
            let name = path.display().to_string();
            let problem = "holds no files to read (it is empty, or holds only hidden ones)";
            nothing_taken(&name, problem, reader.options, &mut summary)?;
            reader.summary.add(summary);
            Ok(())
        }
    })?;
    reader.flush_texts()?;
    rejects::check(
        &reader.summary,
        options.max_skipped,
        options.rejects.as_ref(),
    )?;
    Ok(reader.summary)
}

struct SourceReader<'a> {
    options: &'a ReadOptions,
    sink: &'a mut dyn RecordSink,
    progress: &'a dyn Progress,
    summary: ReadSummary,
    /// Text files waiting to be fingerprinted together, in input order.
    texts: Vec<PathBuf>,
    text_bytes: u64,
}

impl SourceReader<'_> {
    fn read_file(&mut self, path: &Path, len: u64, in_directory: bool) -> Result<()> {
        let format = file_format(path, in_directory, self.options);
        if format == Some(InputFormat::Parquet) {
            self.flush_texts()?;
            let file = File::open(path).map_err(|e| Error::io(path, e))?;
            let name = path.display().to_string();
            let input = ParquetInput::File(file);
            let summary = read_parquet_input(input, &name, self.options, self.sink, self.progress)?;
            self.summary.add(summary);
            return Ok(());
        }
        if format == Some(InputFormat::Text) {
            self.texts.push(path.to_path_buf());
            self.text_bytes += len;
            if self.text_bytes >= GROUP_BYTES || self.texts.len() >= GROUP_FILES {
                self.flush_texts()?;
            }
            return Ok(());
        }
        self.flush_texts()?;
        let name = path.display().to_string();
        let file = File::open(path).map_err(|e| Error::io(path, e))?;
        self.read_stream(decoded(file, &name)?, &name, format)
    }

    /// Reads one stream whose format is `format`, or detected from its first bytes.
    fn read_stream(
        &mut self,
        mut reader: impl BufRead,
        name: &str,
        format: Option<InputFormat>,
    ) -> Result<()> {
        let format = match format.or(self.options.format) {
            Some(f) => f,
            None => {
                let head = reader.fill_buf().map_err(|e| Error::io(name, e))?;
                InputFormat::detect(None, false, head, self.options.fallback)
            }
        };
        let options = ReadOptions {
            format: Some(format),
            ..self.options.clone()
        };
        let mut summary = read_stream(reader, name, &options, self.sink, self.progress)?;
        if summary.lines == 0 {
            nothing_taken(name, NO_DOCUMENTS, self.options, &mut summary)?;
        }
        self.summary.add(summary);
        Ok(())
    }

    /// Reads and fingerprints the waiting text files in parallel, then adds them in order.
    fn flush_texts(&mut self) -> Result<()> {
        let options = self.options;
        let progress = self.progress;
        let results: Vec<Result<Result<TextDocument>>> = self
            .texts
            .par_iter()
            .map(|path| {
                let name = path.display().to_string();
                let file = File::open(path).map_err(|e| Error::io(path, e))?;
                let bytes = decoded_bytes(file, &name)?;
                progress.advance(bytes.len() as u64);
                Ok(text_document(&name, &bytes, options))
            })
            .collect();
        self.texts.clear();
        self.text_bytes = 0;
        for result in results {
            record_file(&mut self.summary, result?, self.sink, options)?;
        }
        Ok(())
    }
}

/// Why an input that reads as nothing gave no documents.
pub(crate) const NO_DOCUMENTS: &str = "holds no documents (it is empty, or only blank lines)";

/// Input `name` gave no documents because of `problem`: an error unless `options` allow empty
/// inputs, then a warning in `summary`.
pub(crate) fn nothing_taken(
    name: &str,
    problem: &str,
    options: &ReadOptions,
    summary: &mut ReadSummary,
) -> Result<()> {
    if !options.allow_empty {
        return Err(Error::input_at(
            name,
            None,
            format!("{problem}: nothing was taken (say --allow-empty to go on without it)"),
        ));
    }
    summary.warnings.push(format!("warning: {name}: {problem}"));
    Ok(())
}

/// Whether the file at `path` starts with Parquet's magic bytes (false when unreadable: the
/// read that follows reports why).
fn starts_as_parquet(path: &Path) -> bool {
    let mut head = [0u8; 4];
    File::open(path)
        .and_then(|mut f| std::io::Read::read_exact(&mut f, &mut head))
        .is_ok_and(|()| is_parquet_head(&head))
}

/// Every regular file below `dir`, with its length, but for hidden files and directories
/// (names starting with `.`, or with `_` as Hadoop and Spark name their metadata, like
/// `_SUCCESS` and `.part-0.parquet.crc`).
fn walk(dir: &Path, files: &mut Vec<(PathBuf, u64)>) -> Result<()> {
    let cannot = |e: std::io::Error| Error::io(dir, e);
    for entry in std::fs::read_dir(dir).map_err(cannot)? {
        let entry = entry.map_err(cannot)?;
        if matches!(
            entry.file_name().as_encoded_bytes().first(),
            Some(b'.' | b'_')
        ) {
            continue;
        }
        let path = entry.path();
        let meta = std::fs::metadata(&path).map_err(|e| Error::io(&path, e))?;
        if meta.is_dir() {
            walk(&path, files)?;
        } else if meta.is_file() {
            files.push((path, meta.len()));
        }
    }
    Ok(())
}
