//! Dedup of files: documents read as `insert` reads them, the kept records written out
//! unchanged, the dropped documents listed, the kept ones inserted when asked.
//!
//! The records stream through: each group of documents the reader hands over is decided
//! ([`Dedup::decide`]) and its kept records written before the next group is read, so memory
//! is what the [`Dedup`] holds, whatever the size of the records. Output files are written
//! beside their paths and renamed onto them at the end ([`OutputFile`]): a failed dedup
//! leaves none. With an insert, the files are in place before the batch commits: a dedup
//! killed between the two leaves the outputs and the store as before, and running it again
//! gives the same outputs.

use std::io::Write;
use std::path::{Path, PathBuf};

use crate::dedup::duplicate_list::{is_parquet_name, DuplicateList};
use crate::dedup::ingest::{Dedup, DedupSummary, Verdict};
use crate::dedup::options::DedupOptions;
use crate::dedup::output::Target;
use crate::error::{Error, Result};
use crate::io::document::{InputFormat, ReadOptions};
use crate::io::input::records::{RecordSink, Records};
use crate::io::input::sources::read_records;
use crate::io::output_file::OutputFile;
use crate::read::snapshot::{batch_cache_bytes, Snapshot};
use crate::sys::progress::Progress;
use crate::write::batch::{Batch, DocumentSink};
use crate::write::store::Store;

/// Checks what can be checked before reading: one target at most is stdout, the two files
/// differ, neither is a directory nor an input.
fn check_outputs(inputs: &[PathBuf], options: &DedupOptions) -> Result<()> {
    let (output, duplicates) = (&options.output, &options.duplicates);
    let output_is_stdout = output.as_deref().is_none_or(is_stdout);
    if output_is_stdout && duplicates.as_deref().is_some_and(is_stdout) {
        return Err(Error::input(
            "the kept records and the duplicates cannot both go to stdout ('-'): name a file \
             for one of them",
        ));
    }
    if output.is_some() && output == duplicates && !output_is_stdout {
        return Err(Error::input(
            "the kept records and the duplicates would go to the same file: name two",
        ));
    }
    if cfg!(not(feature = "parquet")) && duplicates.as_deref().is_some_and(is_parquet_name) {
        return Err(Error::input(
            "the duplicates would be a Parquet file, and this build has no Parquet support",
        ));
    }
    for path in [output, duplicates].into_iter().flatten() {
        if let Some(input) = inputs.iter().find(|input| same_file(input, path)) {
            return Err(Error::input(format!(
                "{} is an input, and would be replaced by an output: name another file",
                input.display()
            )));
        }
        if path.is_dir() {
            return Err(Error::io(
                path,
                std::io::Error::new(
                    std::io::ErrorKind::IsADirectory,
                    "an output is a file, and this is a directory",
                ),
            ));
        }
    }
    Ok(())
}

fn is_stdout(path: &Path) -> bool {
    path.as_os_str() == "-"
}

/// Whether `a` and `b` name the same existing regular file.
fn same_file(a: &Path, b: &Path) -> bool {
    if is_stdout(a) || is_stdout(b) || !b.is_file() {
        return false;
    }
    match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}

impl Snapshot {
    /// Dedups the documents of `inputs` (files and directories read as `insert` reads them,
    /// as `read` says, text fingerprinted with the store's scheme; `-` is stdin) against this
    /// state of the store, in input order (see [`crate::Verdict`]), and writes the kept
    /// records and the duplicates where `options` say; nothing is inserted (an
    /// `options.insert` is refused: [`Store::dedup_files`] inserts). `stdout` takes what goes
    /// to `-`. The records stream through: memory holds the decisions, not the records.
    pub fn dedup_files(
        &self,
        inputs: &[PathBuf],
        options: &DedupOptions,
        read: &ReadOptions,
        stdout: &mut dyn Write,
        progress: &dyn Progress,
    ) -> Result<DedupSummary> {
        options.check_reads_only()?;
        let (summary, outputs) = run(self, inputs, options, read, stdout, None, progress)?;
        outputs.finish()?;
        Ok(summary)
    }
}

impl Store {
    /// [`Snapshot::dedup_files`], and with `options.insert` the kept documents inserted as
    /// one batch atomically with the check: this handle's writer lock keeps every other
    /// writer out from the first lookup to the commit. On any error nothing is inserted and
    /// no output file is left.
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let path = dir.path().join("store");
    /// # let day = dir.path().join("day.tsv");
    /// # let kept = dir.path().join("kept.tsv");
    /// use simhashdb::{DedupOptions, InsertOptions, ReadOptions, Settings, Store};
    ///
    /// let mut store = Store::create(&path, Settings::default())?;
    /// std::fs::write(&day, "a\t0123456789abcdef\nb\t0123456789abcdee\n").unwrap();
    /// let options = DedupOptions {
    ///     insert: Some(InsertOptions::default()),
    ///     output: Some(kept.clone()),
    ///     ..DedupOptions::default()
    /// };
    /// let read = ReadOptions::default();
    /// let summary = store.dedup_files(&[day], &options, &read, &mut std::io::stdout(), &())?;
    /// assert_eq!((summary.kept, summary.inserted), (1, 1)); // b is 1 bit from a
    /// assert_eq!(std::fs::read_to_string(&kept).unwrap(), "a\t0123456789abcdef\n");
    /// # Ok::<(), simhashdb::Error>(())
    /// ```
    pub fn dedup_files(
        &mut self,
        inputs: &[PathBuf],
        options: &DedupOptions,
        read: &ReadOptions,
        stdout: &mut dyn Write,
        progress: &dyn Progress,
    ) -> Result<DedupSummary> {
        // The cache of a batch of queries (see `OpenOptions::for_batch`).
        let cache = batch_cache_bytes(self.catalog());
        let snapshot = Snapshot::from_catalog(self.dir(), self.catalog().clone(), cache)?;
        let Some(insert) = &options.insert else {
            return snapshot.dedup_files(inputs, options, read, stdout, progress);
        };
        insert.check()?;
        let mut insertion = self.begin_insert_as(insert);
        let (mut summary, outputs) = run(
            &snapshot,
            inputs,
            options,
            read,
            stdout,
            Some(&mut insertion),
            progress,
        )?;
        drop(snapshot);
        // The outputs go in place first: a dedup killed before the commit leaves them and the
        // store as it was, and is run again; killed after, it would have lost the records.
        let written = outputs.finish()?;
        match insertion.commit() {
            Ok(inserted) => {
                summary.count_insert(&inserted);
                Ok(summary)
            }
            Err(e) => {
                for path in written {
                    let _ = std::fs::remove_file(path);
                }
                Err(e)
            }
        }
    }
}

/// Reads, decides and writes; returns the outputs still to be put in place.
fn run<'w>(
    snapshot: &Snapshot,
    inputs: &[PathBuf],
    options: &DedupOptions,
    read: &ReadOptions,
    stdout: &'w mut dyn Write,
    insert: Option<&'w mut dyn DocumentSink>,
    progress: &dyn Progress,
) -> Result<(DedupSummary, Outputs<'w>)> {
    let distance = snapshot.distance(options.distance)?;
    let read = &read.with_store_scheme(snapshot.text_scheme(), snapshot.dir());
    check_outputs(inputs, options)?;
    let mut stdout = Some(stdout);
    let mut target = |path: Option<&Path>| -> Result<Target<'w>> {
        Ok(match path.filter(|p| !is_stdout(p)) {
            Some(path) => Target::File(OutputFile::create(path)?),
            None => Target::Stdout(stdout.take().expect("checked: one target is stdout")),
        })
    };
    let kept = target(options.output.as_deref())?;
    let verified = options.min_jaccard.is_some();
    let duplicates = match &options.duplicates {
        #[cfg(feature = "parquet")]
        Some(path) if is_parquet_name(path) => Some(DuplicateList::Parquet(
            Box::new(crate::parquet::ParquetTable::dedup_duplicates(
                path, verified,
            )?),
            path.clone(),
        )),
        Some(path) => Some(DuplicateList::Lines(target(Some(path))?)),
        None => None,
    };
    let mut job = Job {
        dedup: Dedup::new(snapshot, distance, options.min_jaccard)?,
        verified,
        kept: KeptRecords::new(kept),
        duplicates,
        insert,
    };
    let summary = read_records(inputs, read, &mut job, progress)?;
    job.dedup.record_read(summary);
    let summary = job.dedup.summary();
    let outputs = Outputs {
        kept: job.kept,
        duplicates: job.duplicates,
    };
    Ok((summary, outputs))
}

/// The outputs of a dedup, written but not yet in place.
struct Outputs<'w> {
    kept: KeptRecords<'w>,
    duplicates: Option<DuplicateList<'w>>,
}

impl Outputs<'_> {
    /// Puts every output in place; returns the files written.
    fn finish(self) -> Result<Vec<PathBuf>> {
        let mut written = Vec::new();
        written.extend(self.kept.finish()?.finish()?);
        if let Some(list) = self.duplicates {
            written.extend(list.finish()?);
        }
        Ok(written)
    }
}

/// The state of a dedup of files: the decisions, and where their results go.
struct Job<'s, 'w> {
    dedup: Dedup<'s>,
    /// Whether matches are verified with sketches: the duplicates get a Jaccard column.
    verified: bool,
    kept: KeptRecords<'w>,
    duplicates: Option<DuplicateList<'w>>,
    insert: Option<&'w mut dyn DocumentSink>,
}

impl RecordSink for Job<'_, '_> {
    fn wants_records(&self) -> bool {
        true
    }

    fn header(&mut self, _source: &str, line: &[u8]) -> Result<()> {
        self.kept.header(line)
    }

    fn append_records(
        &mut self,
        source: &str,
        documents: Batch,
        records: Records<'_>,
    ) -> Result<()> {
        let verdicts = self.dedup.decide(&documents)?;
        self.kept.write(source, &verdicts, &records)?;
        if let Some(list) = &mut self.duplicates {
            list.write(&verdicts, self.verified)?;
        }
        if let Some(insert) = &mut self.insert {
            let mut kept = Batch::new();
            for (i, _) in verdicts.iter().enumerate().filter(|(_, v)| v.kept) {
                let (id, fingerprint) = (documents.id(i), documents.fingerprint(i));
                match documents.sketch(i) {
                    Some(sketch) => kept.push_sketched(id, fingerprint, sketch)?,
                    None => kept.push(id, fingerprint)?,
                }
            }
            insert.append(kept)?;
        }
        Ok(())
    }
}

/// The kept records, written in the form of the first input's records.
struct KeptRecords<'w> {
    target: Option<Target<'w>>,
    form: Option<Form>,
    /// Whether a header line was written (the first input's; later ones are dropped).
    header: bool,
}

/// The form of the kept records.
enum Form {
    /// Lines as read, of one format (tsv or jsonl).
    Lines(InputFormat),
    /// The ids of text documents, one per line.
    Ids,
    /// Parquet rows, with the first Parquet input's schema.
    #[cfg(feature = "parquet")]
    Rows(Box<parquet_rows::RowWriter>),
}

impl<'w> KeptRecords<'w> {
    fn new(target: Target<'w>) -> Self {
        KeptRecords {
            target: Some(target),
            form: None,
            header: false,
        }
    }

    /// Writes the header of a TSV input, before its kept records (once).
    fn header(&mut self, line: &[u8]) -> Result<()> {
        if self.header || self.form.is_some() {
            return Ok(());
        }
        self.header = true;
        let mut line = line.to_vec();
        if !line.ends_with(b"\n") {
            line.push(b'\n');
        }
        self.target().write(&line)
    }

    fn write(&mut self, source: &str, verdicts: &[Verdict], records: &Records<'_>) -> Result<()> {
        if self.form.is_none() {
            self.check_name(records)?;
            self.form = Some(match records {
                Records::Lines { format, .. } => Form::Lines(*format),
                Records::Files => Form::Ids,
                #[cfg(feature = "parquet")]
                Records::Rows { batch, .. } => {
                    let Some(Target::File(file)) = self.target.take() else {
                        return Err(Error::input_at(
                            source,
                            None,
                            "the kept rows of a Parquet input are a Parquet file: name an \
                             output file (not stdout)",
                        ));
                    };
                    Form::Rows(Box::new(parquet_rows::RowWriter::new(
                        file,
                        batch.schema(),
                    )?))
                }
            });
        }
        let form = self.form.as_mut().expect("set above");
        let kept = verdicts.iter().map(|v| v.kept);
        match (form, records) {
            (
                Form::Lines(first),
                Records::Lines {
                    format,
                    bytes,
                    spans,
                },
            ) if first == format => {
                let mut out = Vec::new();
                for (span, _) in spans.iter().zip(kept).filter(|(_, k)| *k) {
                    out.extend_from_slice(&bytes[span.clone()]);
                    if !out.ends_with(b"\n") {
                        out.push(b'\n');
                    }
                }
                self.target().write(&out)
            }
            (Form::Ids, Records::Files) => {
                let mut out = Vec::new();
                for v in verdicts.iter().filter(|v| v.kept) {
                    writeln!(out, "{}", v.id).expect("writes to memory");
                }
                self.target().write(&out)
            }
            #[cfg(feature = "parquet")]
            (Form::Rows(writer), Records::Rows { batch, rows }) => {
                writer.write(source, batch, rows, kept)
            }
            (form, _) => Err(Error::input_at(
                source,
                None,
                format!(
                    "its records are not {}, as the first input's are: the kept records of \
                     one dedup go to one output in one form (dedup them separately)",
                    form.name()
                ),
            )),
        }
    }

    /// Refuses an output file whose name says another form than the records' (`.jsonl`,
    /// `.tsv`, `.parquet`), or compression (outputs are written uncompressed).
    fn check_name(&self, records: &Records<'_>) -> Result<()> {
        let Some(Target::File(file)) = &self.target else {
            return Ok(());
        };
        let path = file.path();
        let (form, fits): (&str, fn(InputFormat) -> bool) = match records {
            Records::Lines {
                format: InputFormat::Jsonl,
                ..
            } => ("JSON Lines", |f| f == InputFormat::Jsonl),
            Records::Lines { .. } => ("TSV lines", |f| f == InputFormat::Tsv),
            Records::Files => ("ids, one per line", |f| f == InputFormat::Tsv),
            #[cfg(feature = "parquet")]
            Records::Rows { .. } => ("Parquet rows", |f| f == InputFormat::Parquet),
        };
        let named = InputFormat::by_name(path);
        let compressed = path
            .extension()
            .is_some_and(|e| matches!(e.to_str(), Some("gz" | "zst" | "zstd")));
        let problem = if compressed {
            format!(
                "{} names a compressed file, and the kept records are written uncompressed \
                 ({form}): name it without the compression's extension",
                path.display()
            )
        } else if named.is_some_and(|named| !fits(named)) {
            format!(
                "{} names {}, but the kept records are {form}, as the input's are: give the \
                 output a name that fits them",
                path.display(),
                named.map(InputFormat::name).unwrap_or_default()
            )
        } else {
            return Ok(());
        };
        Err(Error::settings(crate::error::Setting::Output, problem))
    }

    /// The target of lines (a Parquet writer owns its file).
    fn target(&mut self) -> &mut Target<'w> {
        self.target
            .as_mut()
            .expect("only Parquet rows take the target")
    }

    /// Ends the records; returns the target to put in place.
    fn finish(self) -> Result<Target<'w>> {
        match (self.form, self.target) {
            #[cfg(feature = "parquet")]
            (Some(Form::Rows(writer)), _) => Ok(Target::File(writer.finish()?)),
            (_, Some(target)) => Ok(target),
            (_, None) => unreachable!("only Parquet rows take the target"),
        }
    }
}

impl Form {
    fn name(&self) -> &'static str {
        match self {
            Form::Lines(InputFormat::Jsonl) => "JSON Lines",
            Form::Lines(_) => "TSV lines",
            Form::Ids => "text files",
            #[cfg(feature = "parquet")]
            Form::Rows(_) => "Parquet rows",
        }
    }
}

#[cfg(feature = "parquet")]
mod parquet_rows {
    //! Kept Parquet rows, with every column of the input and its schema.

    use std::path::Path;

    use arrow_array::{BooleanArray, RecordBatch};
    use arrow_schema::SchemaRef;
    use parquet::arrow::ArrowWriter;
    use parquet::basic::{Compression, ZstdLevel};
    use parquet::file::properties::WriterProperties;

    use crate::error::{Error, Result};
    use crate::io::output_file::OutputFile;

    pub(super) struct RowWriter {
        schema: SchemaRef,
        writer: ArrowWriter<OutputFile>,
    }

    impl RowWriter {
        /// Rows of `schema` into `file`.
        pub fn new(file: OutputFile, schema: SchemaRef) -> Result<Self> {
            let level = ZstdLevel::try_new(1).expect("1 is a zstd level");
            let properties = WriterProperties::builder()
                .set_compression(Compression::ZSTD(level))
                .build();
            let path = file.path().to_path_buf();
            let writer = ArrowWriter::try_new(file, schema.clone(), Some(properties))
                .map_err(|e| failed(&path, e))?;
            Ok(RowWriter { schema, writer })
        }

        /// Writes the rows of `batch` that `kept` says, `rows` giving each document's row.
        pub fn write(
            &mut self,
            source: &str,
            batch: &RecordBatch,
            rows: &[usize],
            kept: impl Iterator<Item = bool>,
        ) -> Result<()> {
            if batch.schema().fields() != self.schema.fields() {
                return Err(Error::input_at(
                    source,
                    None,
                    "its columns differ from the first Parquet input's: the kept rows go to \
                     one Parquet file with one schema (dedup them separately)",
                ));
            }
            let mut mask = vec![false; batch.num_rows()];
            for (&row, kept) in rows.iter().zip(kept) {
                mask[row] = kept;
            }
            let filtered =
                arrow_select::filter::filter_record_batch(batch, &BooleanArray::from(mask))
                    .map_err(|e| {
                        Error::input_at(source, None, format!("cannot select rows: {e}"))
                    })?;
            let path = self.writer.inner().path().to_path_buf();
            self.writer.write(&filtered).map_err(|e| failed(&path, e))
        }

        /// Ends the Parquet file; returns it, not yet in place.
        pub fn finish(self) -> Result<OutputFile> {
            let path = self.writer.inner().path().to_path_buf();
            self.writer.into_inner().map_err(|e| failed(&path, e))
        }
    }

    fn failed(path: &Path, error: impl std::fmt::Display) -> Error {
        Error::io(path, std::io::Error::other(error.to_string()))
    }
}
