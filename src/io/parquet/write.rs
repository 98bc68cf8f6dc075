//! The tables simhashdb writes, as Parquet files: documents, audit pairs and clusters, and
//! the keep/drop lists of audit and dedup.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow_array::builder::{
    BinaryBuilder, Float64Builder, Int32Builder, Int64Builder, StringBuilder,
};
use arrow_array::{ArrayRef, RecordBatch};
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression, ZstdLevel};
use parquet::file::properties::WriterProperties;

use crate::error::{Error, Result};
use crate::io::output_file::OutputFile;

/// Rows buffered before they are handed to the Parquet writer.
const ROWS_PER_FLUSH: usize = 1 << 16;

/// One value of a row.
#[derive(Clone, Copy, Debug)]
enum Cell<'a> {
    /// A string column's value.
    Text(&'a str),
    /// A nullable string column's value.
    MaybeText(Option<&'a str>),
    /// A nullable int64 column's value.
    MaybeInt64(Option<i64>),
    /// An int64 column's value (a fingerprint: its 64 bits, see [`super::fingerprint_to_i64`]).
    Int64(i64),
    /// An int32 column's value.
    Int32(i32),
    /// A double column's value.
    Float64(f64),
    /// No value, in a nullable double column.
    NullFloat64,
    /// A nullable binary column's value.
    Bytes(Option<&'a [u8]>),
}

enum Column {
    Text(StringBuilder),
    Int64(Int64Builder),
    Int32(Int32Builder),
    Float64(Float64Builder),
    Binary(BinaryBuilder),
}

/// A Parquet file being written, row by row, with one of the schemas simhashdb writes
/// (docs/format.md). The rows go to a temporary file beside `path` that [`ParquetTable::finish`]
/// renames to `path`, so a reader never sees half a file, and a failed write leaves none.
///
/// ```
/// # let dir = tempfile::tempdir().unwrap();
/// use simhashdb::parquet::ParquetTable;
///
/// let path = dir.path().join("pairs.parquet");
/// let mut pairs = ParquetTable::pairs(&path, false)?; // a, b, distance
/// pairs.push_pair("a", "b", 1, None)?;
/// assert_eq!(pairs.finish()?, 1); // rows written
/// assert!(path.is_file());
/// # Ok::<(), simhashdb::Error>(())
/// ```
pub struct ParquetTable {
    path: PathBuf,
    schema: SchemaRef,
    columns: Vec<Column>,
    buffered: usize,
    rows: u64,
    writer: ArrowWriter<OutputFile>,
}

impl ParquetTable {
    /// Documents with their sketches: `id`, `fingerprint`, `batch` and `sketch` (binary,
    /// null for a document without one), as `export --sketch` writes them.
    pub fn sketched_documents(path: &Path) -> Result<ParquetTable> {
        let fields = vec![
            Field::new("id", DataType::Utf8, false),
            Field::new("fingerprint", DataType::Int64, false),
            Field::new("batch", DataType::Int64, false),
            Field::new("sketch", DataType::Binary, true),
        ];
        ParquetTable::create(path, fields)
    }

    /// Appends a document to a [`ParquetTable::sketched_documents`] table.
    pub fn push_sketched_document(
        &mut self,
        id: &str,
        fingerprint: u64,
        batch: u64,
        sketch: Option<&[u8]>,
    ) -> Result<()> {
        let fingerprint = Cell::Int64(super::fingerprint_to_i64(fingerprint));
        let batch = Cell::Int64(batch as i64);
        self.push(&[Cell::Text(id), fingerprint, batch, Cell::Bytes(sketch)])
    }

    /// Documents: `id` (string), `fingerprint` (int64), and `batch` (int64) when `with_batch`.
    pub fn documents(path: &Path, with_batch: bool) -> Result<ParquetTable> {
        let mut fields = vec![
            Field::new("id", DataType::Utf8, false),
            Field::new("fingerprint", DataType::Int64, false),
        ];
        if with_batch {
            fields.push(Field::new("batch", DataType::Int64, false));
        }
        ParquetTable::create(path, fields)
    }

    /// Pairs: `id_a`, `id_b` (strings), `distance` (int32), and `jaccard` (double) when
    /// `with_jaccard`, null for a pair kept unverified (a document without a sketch).
    pub fn pairs(path: &Path, with_jaccard: bool) -> Result<ParquetTable> {
        let mut fields = vec![
            Field::new("id_a", DataType::Utf8, false),
            Field::new("id_b", DataType::Utf8, false),
            Field::new("distance", DataType::Int32, false),
        ];
        if with_jaccard {
            fields.push(Field::new("jaccard", DataType::Float64, true));
        }
        ParquetTable::create(path, fields)
    }

    /// Cluster members: `cluster_id` (int64), `id` (string), `kept` (int64: how many members
    /// of the cluster the keep rule keeps).
    pub fn clusters(path: &Path) -> Result<ParquetTable> {
        ParquetTable::create(
            path,
            vec![
                Field::new("cluster_id", DataType::Int64, false),
                Field::new("id", DataType::Utf8, false),
                Field::new("kept", DataType::Int64, false),
            ],
        )
    }

    /// Ids: `id` (string), as `audit --keep` lists the kept documents.
    pub fn ids(path: &Path) -> Result<ParquetTable> {
        ParquetTable::create(path, vec![Field::new("id", DataType::Utf8, false)])
    }

    /// Appends an id to a [`ParquetTable::ids`] table.
    pub fn push_id(&mut self, id: &str) -> Result<()> {
        self.push(&[Cell::Text(id)])
    }

    /// The documents the audit's keep rule drops: `id`, `kept_id` (strings), `distance`
    /// (int32), and `jaccard` (double, null where unverified) when `with_jaccard`. Its `id`
    /// column is the list of ids to remove that NeMo Curator's removal workflow reads.
    pub fn audit_duplicates(path: &Path, with_jaccard: bool) -> Result<ParquetTable> {
        let mut fields = vec![
            Field::new("id", DataType::Utf8, false),
            Field::new("kept_id", DataType::Utf8, false),
            Field::new("distance", DataType::Int32, false),
        ];
        if with_jaccard {
            fields.push(Field::new("jaccard", DataType::Float64, true));
        }
        ParquetTable::create(path, fields)
    }

    /// Appends a dropped document to a [`ParquetTable::audit_duplicates`] table (`jaccard`
    /// as [`ParquetTable::push_pair`] takes it).
    pub fn push_audit_duplicate(
        &mut self,
        id: &str,
        kept_id: &str,
        distance: u32,
        jaccard: Option<f64>,
    ) -> Result<()> {
        self.push_pair(id, kept_id, distance, jaccard)
    }

    /// The documents a dedup drops: `id`, `duplicate_of` (strings), `distance` (int32),
    /// `jaccard` (double, null where unverified) when `with_jaccard`, then the batch that
    /// stored the match: `duplicate_batch` (int64), `duplicate_label` and
    /// `duplicate_committed_utc` (strings), null for a match of the input. Its `id` column is
    /// the list of ids to remove that NeMo Curator's removal workflow reads.
    pub fn dedup_duplicates(path: &Path, with_jaccard: bool) -> Result<ParquetTable> {
        let mut fields = vec![
            Field::new("id", DataType::Utf8, false),
            Field::new("duplicate_of", DataType::Utf8, false),
            Field::new("distance", DataType::Int32, false),
        ];
        if with_jaccard {
            fields.push(Field::new("jaccard", DataType::Float64, true));
        }
        fields.extend([
            Field::new("duplicate_batch", DataType::Int64, true),
            Field::new("duplicate_label", DataType::Utf8, true),
            Field::new("duplicate_committed_utc", DataType::Utf8, true),
        ]);
        ParquetTable::create(path, fields)
    }

    /// Appends a dropped document to a [`ParquetTable::dedup_duplicates`] table: `jaccard`
    /// as [`ParquetTable::push_pair`] takes it, and `stored_by` the batch that stored its
    /// match (number, label, commit time), None for a match of the input.
    pub fn push_dedup_duplicate(
        &mut self,
        id: &str,
        duplicate_of: &str,
        distance: u32,
        jaccard: Option<f64>,
        stored_by: Option<(u64, Option<&str>, &str)>,
    ) -> Result<()> {
        let mut row = vec![
            Cell::Text(id),
            Cell::Text(duplicate_of),
            Cell::Int32(distance as i32),
        ];
        if self.columns.len() == 7 {
            row.push(jaccard.map_or(Cell::NullFloat64, Cell::Float64));
        }
        row.extend([
            Cell::MaybeInt64(stored_by.map(|(batch, ..)| batch as i64)),
            Cell::MaybeText(stored_by.and_then(|(_, label, _)| label)),
            Cell::MaybeText(stored_by.map(|(.., committed)| committed)),
        ]);
        self.push(&row)
    }

    fn create(path: &Path, fields: Vec<Field>) -> Result<ParquetTable> {
        let file = OutputFile::create(path)?;
        let schema = Arc::new(Schema::new(fields));
        let level = ZstdLevel::try_new(1).expect("1 is a zstd level");
        let properties = WriterProperties::builder()
            .set_compression(Compression::ZSTD(level))
            .build();
        let writer = ArrowWriter::try_new(file, schema.clone(), Some(properties))
            .map_err(|e| write_error(path, e))?;
        let columns = schema
            .fields()
            .iter()
            .map(|f| match f.data_type() {
                DataType::Utf8 => Column::Text(StringBuilder::new()),
                DataType::Int64 => Column::Int64(Int64Builder::new()),
                DataType::Int32 => Column::Int32(Int32Builder::new()),
                DataType::Binary => Column::Binary(BinaryBuilder::new()),
                _ => Column::Float64(Float64Builder::new()),
            })
            .collect();
        Ok(ParquetTable {
            path: path.to_path_buf(),
            schema,
            columns,
            buffered: 0,
            rows: 0,
            writer,
        })
    }

    /// Appends a document to a [`ParquetTable::documents`] table; `batch` is Some exactly
    /// when the table has a batch column (else this panics).
    pub fn push_document(&mut self, id: &str, fingerprint: u64, batch: Option<u64>) -> Result<()> {
        let fingerprint = Cell::Int64(super::fingerprint_to_i64(fingerprint));
        match batch {
            Some(batch) => self.push(&[Cell::Text(id), fingerprint, Cell::Int64(batch as i64)]),
            None => self.push(&[Cell::Text(id), fingerprint]),
        }
    }

    /// Appends a pair to a [`ParquetTable::pairs`] table: `jaccard` in its jaccard column,
    /// None there for an unverified pair (a table without one takes only None, else this
    /// panics).
    pub fn push_pair(
        &mut self,
        a: &str,
        b: &str,
        distance: u32,
        jaccard: Option<f64>,
    ) -> Result<()> {
        let (a, b, distance) = (Cell::Text(a), Cell::Text(b), Cell::Int32(distance as i32));
        match (jaccard, self.columns.len()) {
            (Some(j), _) => self.push(&[a, b, distance, Cell::Float64(j)]),
            (None, 4) => self.push(&[a, b, distance, Cell::NullFloat64]),
            (None, _) => self.push(&[a, b, distance]),
        }
    }

    /// Appends a member of cluster number `cluster`, which keeps `kept` members, to a
    /// [`ParquetTable::clusters`] table.
    pub fn push_cluster_member(&mut self, cluster: u64, id: &str, kept: u64) -> Result<()> {
        self.push(&[
            Cell::Int64(cluster as i64),
            Cell::Text(id),
            Cell::Int64(kept as i64),
        ])
    }

    /// Appends a row. Panics unless `row` has the schema's columns, in order.
    fn push(&mut self, row: &[Cell]) -> Result<()> {
        assert_eq!(row.len(), self.columns.len(), "a row of the table's width");
        for (column, cell) in self.columns.iter_mut().zip(row) {
            match (column, *cell) {
                (Column::Text(b), Cell::Text(v)) => b.append_value(v),
                (Column::Text(b), Cell::MaybeText(v)) => b.append_option(v),
                (Column::Int64(b), Cell::Int64(v)) => b.append_value(v),
                (Column::Int64(b), Cell::MaybeInt64(v)) => b.append_option(v),
                (Column::Int32(b), Cell::Int32(v)) => b.append_value(v),
                (Column::Float64(b), Cell::Float64(v)) => b.append_value(v),
                (Column::Float64(b), Cell::NullFloat64) => b.append_null(),
                (Column::Binary(b), Cell::Bytes(v)) => b.append_option(v),
                (_, cell) => panic!("{cell:?} does not fit its column"),
            }
        }
        self.buffered += 1;
        self.rows += 1;
        if self.buffered >= ROWS_PER_FLUSH {
            self.flush()?;
        }
        Ok(())
    }

    fn flush(&mut self) -> Result<()> {
        if self.buffered == 0 {
            return Ok(());
        }
        let arrays: Vec<ArrayRef> = self
            .columns
            .iter_mut()
            .map(|column| -> ArrayRef {
                match column {
                    Column::Text(b) => Arc::new(b.finish()),
                    Column::Int64(b) => Arc::new(b.finish()),
                    Column::Int32(b) => Arc::new(b.finish()),
                    Column::Float64(b) => Arc::new(b.finish()),
                    Column::Binary(b) => Arc::new(b.finish()),
                }
            })
            .collect();
        let batch = RecordBatch::try_new(self.schema.clone(), arrays)
            .map_err(|e| write_error(&self.path, e))?;
        self.writer
            .write(&batch)
            .map_err(|e| write_error(&self.path, e))?;
        self.buffered = 0;
        Ok(())
    }

    /// Writes what is buffered and the file's footer, syncs it, and moves it to its path.
    /// Returns the rows written.
    pub fn finish(mut self) -> Result<u64> {
        self.flush()?;
        let path = self.path;
        let file = self
            .writer
            .into_inner()
            .map_err(|e| write_error(&path, e))?;
        file.finish()?;
        Ok(self.rows)
    }
}

fn write_error(path: &Path, error: impl std::fmt::Display) -> Error {
    Error::io(path, std::io::Error::other(error.to_string()))
}
