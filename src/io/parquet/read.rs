//! Documents from a Parquet file: an id column and a fingerprint or a text column.

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::{Int64Type, UInt64Type};
use arrow_array::{Array, ArrayRef, RecordBatch, StringArray};
use arrow_schema::{DataType, Schema};
use parquet::arrow::arrow_reader::{ParquetRecordBatchReader, ParquetRecordBatchReaderBuilder};
use parquet::arrow::ProjectionMask;
use parquet::file::reader::ChunkReader;
use rayon::prelude::*;

use crate::error::problem_of;
use crate::error::{Error, Result};
use crate::io::document::ReadOptions;
use crate::io::input::records::{RecordSink, Records};
use crate::io::notation::FingerprintFormat;
use crate::io::notation::{self, Decider, Evidence, Kind, Notation};
use crate::io::rejects;
use crate::sys::progress::Progress;
use crate::write::batch::ReadSummary;
use crate::write::batch::{check_id, Batch};

/// Rows decoded at a time: big enough to fingerprint in parallel, small enough to bound memory.
const ROWS_PER_BATCH: usize = 1 << 16;

/// Where a document's fingerprint comes from.
enum Value {
    Fingerprint(String),
    Text(String),
}

impl Value {
    /// The column's name.
    fn name(&self) -> &str {
        match self {
            Value::Fingerprint(name) | Value::Text(name) => name,
        }
    }
}

/// A row's fingerprint, what its written form says of the column's notation, and its sketch.
type Read = (u64, Kind, Option<Vec<u8>>);

/// Reads the documents of the Parquet file `data` into `sink`: the id from the
/// `options.id_field` column and the fingerprint from the `options.fingerprint_field` column,
/// or, when there is none, the text of the `options.text_field` column fingerprinted with
/// `options.scheme`. A null or invalid value fails the read with `source: row N: ...` (rows
/// count from 1) unless `options.skip_invalid`; a missing column, a column of the wrong type
/// or a damaged file fails it always.
pub(crate) fn read_parquet<R: ChunkReader + 'static>(
    data: R,
    source: &str,
    options: &ReadOptions,
    sink: &mut dyn RecordSink,
    progress: &dyn Progress,
) -> Result<ReadSummary> {
    let file_bytes = data.len();
    let unreadable = |e: &dyn std::fmt::Display| {
        Error::input_at(source, None, format!("unreadable Parquet: {e}"))
    };
    let builder = ParquetRecordBatchReaderBuilder::try_new(data).map_err(|e| unreadable(&e))?;
    let schema = builder.schema().clone();
    let total_rows = builder.metadata().file_metadata().num_rows().max(0) as u64;
    let column = |name: &str| schema.fields().iter().position(|f| f.name() == name);
    let id = column(&options.id_field)
        .ok_or_else(|| Error::input_at(source, None, missing(&schema, &[&options.id_field])))?;
    check_type(source, &schema, id, "an id", ID_TYPES, is_id_type)?;
    let (value, value_index) = match (
        column(&options.fingerprint_field),
        column(&options.text_field),
    ) {
        (Some(i), _) => {
            check_type(
                source,
                &schema,
                i,
                "a fingerprint",
                FINGERPRINT_TYPES,
                |t| matches!(t, DataType::Int64 | DataType::UInt64) || is_string(t),
            )?;
            (Value::Fingerprint(options.fingerprint_field.clone()), i)
        }
        (None, Some(i)) => {
            check_type(source, &schema, i, "a text", "a string column", is_string)?;
            if let Err(why) = &options.scheme {
                return Err(Error::input_at(source, None, why.to_string()));
            }
            (Value::Text(options.text_field.clone()), i)
        }
        (None, None) => {
            let wanted = [&options.fingerprint_field, &options.text_field];
            return Err(Error::input_at(source, None, missing(&schema, &wanted)));
        }
    };
    // An export's sketch column (`export --sketch`) is read into a store that keeps sketches
    // of its size; a batch column cannot be restored. Either dropped is said.
    let mut summary = ReadSummary::default();
    let store_sketch = options.scheme.as_ref().ok().and_then(|s| s.sketch_bytes());
    let sketch_column = match (column("sketch"), &value, store_sketch) {
        (Some(i), Value::Fingerprint(_), Some(_))
            if matches!(schema.field(i).data_type(), DataType::Binary) =>
        {
            Some(i)
        }
        (Some(_), Value::Fingerprint(_), _) => {
            summary.warnings.push(format!(
                "warning: {source}: its \"sketch\" column is not read (the store keeps no \
                 sketches, or the column is not binary): its documents have no sketch"
            ));
            None
        }
        _ => None,
    };
    if column("batch").is_some() && matches!(value, Value::Fingerprint(_)) {
        summary.warnings.push(format!(
            "warning: {source}: its \"batch\" column is not restored: its documents join this \
             insert's batch"
        ));
    }
    // A sink that passes rows on gets every column; others only the ones read.
    let columns = match sink.wants_records() {
        true => None,
        false => Some(
            [Some(id), Some(value_index), sketch_column]
                .into_iter()
                .flatten()
                .collect(),
        ),
    };
    let reader = batches(builder, columns).map_err(|e| unreadable(&e))?;

    let mut decider = Decider::new(source, "row");
    let mut first_row = 1u64;
    for record_batch in reader {
        let record_batch = record_batch.map_err(|e| unreadable(&e))?;
        let rows = record_batch.num_rows();
        let ids = strings(&record_batch, &options.id_field, source)?;
        let fingerprints: Vec<Result<Read>> = match &value {
            Value::Fingerprint(name) => {
                let mut sketches = sketch_column
                    .map(|_| exported_sketches(&record_batch, store_sketch, source))
                    .transpose()?;
                fingerprints(&record_batch, name, options.fingerprint_format, source)?
                    .into_iter()
                    .enumerate()
                    .map(|(row, fp)| {
                        let sketch = match sketches.as_mut() {
                            Some(sketches) => std::mem::replace(&mut sketches[row], Ok(None)),
                            None => Ok(None),
                        };
                        fp.and_then(|(fp, kind)| sketch.map(|sketch| (fp, kind, sketch)))
                    })
                    .collect()
            }
            Value::Text(name) => {
                let texts = strings(&record_batch, name, source)?;
                let scheme = options
                    .scheme
                    .as_ref()
                    .map_err(|why| Error::input(why.to_string()))?;
                (0..rows)
                    .into_par_iter()
                    .map(|row| match texts.is_null(row) {
                        true => Err(Error::input(format!("null in column {name:?}"))),
                        false => scheme
                            .document(texts.value(row))
                            .map(|(fp, sketch)| (fp, Kind::Settled, sketch)),
                    })
                    .collect()
            }
        };
        let mut batch = Batch::new();
        let mut kept_rows = Vec::new();
        let (mut evidence, mut ambiguous) = (Evidence::default(), Vec::new());
        let value_texts = std::cell::OnceCell::new();
        for (row, fingerprint) in fingerprints.into_iter().enumerate() {
            let document = document(&ids, row, fingerprint, &options.id_field);
            summary.lines += 1;
            match document {
                Ok((id, (fingerprint, kind, sketch))) => {
                    evidence.note(kind, first_row + row as u64, fingerprint);
                    if let Kind::Ambiguous { .. } = kind {
                        ambiguous.push(batch.len());
                    }
                    match sketch {
                        Some(sketch) => batch.push_sketched(id, fingerprint, &sketch)?,
                        None => batch.push(id, fingerprint)?,
                    }
                    kept_rows.push(row);
                }
                Err(e) => {
                    let at = format!("row {}: {}", first_row + row as u64, problem_of(e));
                    let error = Error::input_at(source, None, at);
                    if !options.skip_invalid {
                        return Err(error);
                    }
                    // The value column as text, cast once a batch, when a row is rejected.
                    let values =
                        value_texts.get_or_init(|| strings(&record_batch, value.name(), "").ok());
                    let record = row_record(
                        row,
                        (&options.id_field, &ids),
                        (value.name(), values.as_ref()),
                    );
                    let rejects = options.rejects.as_ref();
                    rejects::skip(&mut summary, rejects, error, record.as_bytes())?;
                }
            }
        }
        if decider.settle(evidence)? == Notation::Decimal {
            batch.change_fingerprints(&ambiguous, notation::decimal_of_hex_reading);
        }
        summary.documents += batch.len() as u64;
        let records = Records::Rows {
            batch: &record_batch,
            rows: &kept_rows,
        };
        sink.append_records(source, batch, records)?;
        first_row += rows as u64;
        progress.advance(file_bytes * rows as u64 / total_rows.max(1));
    }
    // A file of no rows still gives a sink of records its schema: dedup's kept rows of it
    // are a Parquet file of no rows, not an empty file.
    if first_row == 1 && sink.wants_records() {
        let empty = RecordBatch::new_empty(schema.clone());
        let records = Records::Rows {
            batch: &empty,
            rows: &[],
        };
        sink.append_records(source, Batch::new(), records)?;
    }
    summary.warnings.extend(decider.finish()?);
    Ok(summary)
}

/// Calls `f(id, text)` on every row of the Parquet file `data`: the id from the
/// `options.id_field` column and the text from the `options.text_field` column. A null fails
/// the read with `source: row N: ...`, as does a missing column or one of the wrong type.
pub(crate) fn read_parquet_texts<R: ChunkReader + 'static>(
    data: R,
    source: &str,
    options: &ReadOptions,
    f: &mut dyn FnMut(String, String) -> Result<()>,
) -> Result<()> {
    let unreadable = |e: &dyn std::fmt::Display| {
        Error::input_at(source, None, format!("unreadable Parquet: {e}"))
    };
    let builder = ParquetRecordBatchReaderBuilder::try_new(data).map_err(|e| unreadable(&e))?;
    let schema = builder.schema().clone();
    let column = |name: &String| {
        let index = schema.fields().iter().position(|f| f.name() == name);
        index.ok_or_else(|| Error::input_at(source, None, missing(&schema, &[name])))
    };
    let (id, text) = (column(&options.id_field)?, column(&options.text_field)?);
    check_type(source, &schema, id, "an id", ID_TYPES, is_id_type)?;
    check_type(
        source,
        &schema,
        text,
        "a text",
        "a string column",
        is_string,
    )?;
    let reader = batches(builder, Some(vec![id, text])).map_err(|e| unreadable(&e))?;
    let mut first_row = 1u64;
    for record_batch in reader {
        let record_batch = record_batch.map_err(|e| unreadable(&e))?;
        let ids = strings(&record_batch, &options.id_field, source)?;
        let texts = strings(&record_batch, &options.text_field, source)?;
        for row in 0..record_batch.num_rows() {
            let at = |problem: String| {
                Error::input_at(
                    source,
                    None,
                    format!("row {}: {problem}", first_row + row as u64),
                )
            };
            if texts.is_null(row) {
                return Err(at(format!("null in column {:?}", options.text_field)));
            }
            let id = document(&ids, row, Ok(0), &options.id_field)
                .map_err(|e| at(problem_of(e)))?
                .0;
            f(id.to_string(), texts.value(row).to_string())?;
        }
        first_row += record_batch.num_rows() as u64;
    }
    Ok(())
}

/// One row's document, or what is wrong with it.
fn document<'a, T>(
    ids: &'a StringArray,
    row: usize,
    fingerprint: Result<T>,
    id_column: &str,
) -> Result<(&'a str, T)> {
    if ids.is_null(row) {
        return Err(Error::input(format!("null in column {id_column:?}")));
    }
    let id = ids.value(row);
    check_id(id)?;
    Ok((id, fingerprint?))
}

/// Row `row` as a rejects file shows it: a JSON object of its id and its fingerprint or text,
/// as text (null for a null).
/// `(name, column)`: the id column and the value column as text (None when it cannot be).
fn row_record(
    row: usize,
    (id_field, ids): (&str, &StringArray),
    (value_field, values): (&str, Option<&StringArray>),
) -> String {
    let text = |column: &StringArray| (!column.is_null(row)).then(|| column.value(row).to_string());
    let mut object = serde_json::Map::new();
    object.insert(id_field.to_string(), text(ids).into());
    object.insert(value_field.to_string(), values.and_then(text).into());
    serde_json::Value::Object(object).to_string()
}

/// The rows of `columns` (indexes of the file's top-level columns; None: all of them),
/// [`ROWS_PER_BATCH`] at a time.
/// Each row's sketch of an export's binary `sketch` column (null: none), or why it does not
/// fit the store's sketches of `bytes`.
fn exported_sketches(
    batch: &RecordBatch,
    bytes: Option<u16>,
    source: &str,
) -> Result<Vec<Result<Option<Vec<u8>>>>> {
    let column = batch
        .column_by_name("sketch")
        .ok_or_else(|| Error::input_at(source, None, "no column \"sketch\""))?;
    let sketches = column.as_binary::<i32>();
    Ok(sketches
        .iter()
        .map(|sketch| match sketch {
            None => Ok(None),
            Some(s) if Some(s.len()) == bytes.map(usize::from) => Ok(Some(s.to_vec())),
            Some(s) => Err(Error::input(format!(
                "\"sketch\" holds {} bytes; the store keeps sketches of {}",
                s.len(),
                bytes.unwrap_or_default()
            ))),
        })
        .collect())
}

fn batches<R: ChunkReader + 'static>(
    builder: ParquetRecordBatchReaderBuilder<R>,
    columns: Option<Vec<usize>>,
) -> parquet::errors::Result<ParquetRecordBatchReader> {
    let builder = match columns {
        Some(columns) => {
            let mask = ProjectionMask::roots(builder.parquet_schema(), columns);
            builder.with_projection(mask)
        }
        None => builder,
    };
    builder.with_batch_size(ROWS_PER_BATCH).build()
}

fn is_id_type(t: &DataType) -> bool {
    is_string(t) || t.is_integer()
}

fn is_string(t: &DataType) -> bool {
    matches!(t, DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View)
}

fn missing(schema: &Schema, wanted: &[&String]) -> String {
    let names: Vec<&str> = schema.fields().iter().map(|f| f.name().as_str()).collect();
    let wanted: Vec<String> = wanted.iter().map(|w| format!("{w:?}")).collect();
    format!(
        "no column {} (the file has: {})",
        wanted.join(" or "),
        names.join(", ")
    )
}

const ID_TYPES: &str = "a string or an integer column";
const FINGERPRINT_TYPES: &str = "an int64 (the 64 bits), uint64 or string column";

/// Fails naming the column, its type and what `holds` needs (`expected`) unless `accepted`.
fn check_type(
    source: &str,
    schema: &Schema,
    index: usize,
    holds: &str,
    expected: &str,
    accepted: impl Fn(&DataType) -> bool,
) -> Result<()> {
    let field = &schema.fields()[index];
    if accepted(field.data_type()) {
        return Ok(());
    }
    Err(Error::input_at(
        source,
        None,
        format!(
            "column {:?} has type {}, but {holds} needs {expected}",
            field.name(),
            field.data_type()
        ),
    ))
}

/// A column as strings (integers as their decimal text), nulls kept.
fn strings(batch: &RecordBatch, name: &str, source: &str) -> Result<StringArray> {
    let column: &ArrayRef = batch
        .column_by_name(name)
        .ok_or_else(|| Error::input_at(source, None, format!("no column {name:?}")))?;
    let cast = arrow_cast::cast(column, &DataType::Utf8)
        .map_err(|e| Error::input_at(source, None, format!("column {name:?}: {e}")))?;
    Ok(cast.as_string::<i32>().clone())
}

/// A fingerprint column's values (strings read in `format`) and their kinds, or what is
/// wrong with each.
fn fingerprints(
    batch: &RecordBatch,
    name: &str,
    format: FingerprintFormat,
    source: &str,
) -> Result<Vec<Result<(u64, Kind)>>> {
    let column: Arc<dyn Array> = batch
        .column_by_name(name)
        .ok_or_else(|| Error::input_at(source, None, format!("no column {name:?}")))?
        .clone();
    let null = || Err(Error::input(format!("null in column {name:?}")));
    Ok(match column.data_type() {
        DataType::Int64 => column
            .as_primitive::<Int64Type>()
            .iter()
            .map(|v| {
                v.map_or_else(null, |v| {
                    Ok((super::fingerprint_from_i64(v), Kind::Settled))
                })
            })
            .collect(),
        DataType::UInt64 => column
            .as_primitive::<UInt64Type>()
            .iter()
            .map(|v| v.map_or_else(null, |v| Ok((v, Kind::Settled))))
            .collect(),
        _ => strings(batch, name, source)?
            .iter()
            .map(|v| v.map_or_else(null, |text| notation::read(format, text.trim())))
            .collect(),
    })
}
