//! The texts of a corpus, for readers that need the words and not a fingerprint (the
//! Jaccard verification of an audit's pairs, `tune`).

use std::collections::HashMap;
use std::fs::File;
use std::io::BufRead;
use std::path::{Path, PathBuf};

use super::decode::decoded;
use super::sources::{file_format, for_each_input, Input};
use super::{json_id, ParquetInput, ReadOptions, STDIN};
use rayon::prelude::*;

use crate::error::{Error, Result};
use crate::io::input::{problem_of, InputFormat};
use crate::similarity::jaccard::shingle_set;
use crate::write::batch::check_id;

fn read_json_texts(
    reader: impl BufRead,
    source: &str,
    options: &ReadOptions,
    f: &mut dyn FnMut(String, String) -> Result<()>,
) -> Result<()> {
    for (i, line) in reader.split(b'\n').enumerate() {
        let line = line.map_err(|e| Error::io(source, e))?;
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let at = |problem: String| Error::input_at(source, Some(i as u64 + 1), problem);
        let object: serde_json::Map<String, serde_json::Value> =
            serde_json::from_slice(&line).map_err(|e| at(format!("not a JSON object: {e}")))?;
        let id = json_id(&object, &options.id_field).map_err(|e| at(problem_of(e)))?;
        let text = match object.get(&options.text_field) {
            Some(serde_json::Value::String(text)) => text.clone(),
            Some(_) => {
                return Err(at(format!(
                    "the {:?} field is not a string",
                    options.text_field
                )))
            }
            None => return Err(at(format!("no {:?} field", options.text_field))),
        };
        f(id, text)?;
    }
    Ok(())
}

/// Calls `f(id, text)` on every document of `inputs` (paths, `-` for stdin), in input order:
/// JSON Lines (`options.id_field`, `options.text_field`), Parquet (the same columns), and
/// text files, each one document whose id is its path (a directory is walked as `insert`
/// walks it). Formats are detected as a [`crate::Source`] of files detects them, with plain text
/// as the fallback; inputs of fingerprints are refused, since they hold no words. An error
/// of `f` stops the read.
pub fn read_corpus_texts(
    inputs: &[PathBuf],
    options: &ReadOptions,
    f: &mut dyn FnMut(String, String) -> Result<()>,
) -> Result<()> {
    for_each_input(inputs, |input| match input {
        Input::Stdin => {
            let mut stdin = decoded(std::io::stdin().lock(), STDIN)?;
            let head = stdin.fill_buf().map_err(|e| Error::io(STDIN, e))?;
            let format = options
                .format
                .unwrap_or_else(|| InputFormat::detect(None, false, head, InputFormat::Text));
            read_stream_texts(stdin, STDIN, format, options, f)
        }
        Input::File {
            path, in_directory, ..
        } => read_file_texts(&path, in_directory, options, f),
        // A corpus is looked up, not taken whole: an empty one answers nothing.
        Input::EmptyDirectory(_) => Ok(()),
    })
}

/// The shingle sets ([`crate::shingle_set`]) of the documents of a corpus whose ids `wanted`
/// accepts, computed in parallel. The corpus is read as [`read_corpus_texts`] reads it
/// (JSON Lines, Parquet or text files), ids and texts from `options.id_field` and
/// `options.text_field`.
pub fn read_corpus_shingles(
    corpus: &Path,
    options: &ReadOptions,
    wanted: impl Fn(&str) -> bool,
) -> Result<HashMap<String, Vec<u64>>> {
    let mut texts = Vec::new();
    read_corpus_texts(&[corpus.to_path_buf()], options, &mut |id, text| {
        if wanted(&id) {
            texts.push((id, text));
        }
        Ok(())
    })?;
    Ok(texts
        .into_par_iter()
        .map(|(id, text)| {
            let set = shingle_set(&text);
            (id, set)
        })
        .collect())
}

fn read_file_texts(
    path: &Path,
    in_directory: bool,
    options: &ReadOptions,
    f: &mut dyn FnMut(String, String) -> Result<()>,
) -> Result<()> {
    let name = path.display().to_string();
    let format = file_format(path, in_directory, options);
    let file = File::open(path).map_err(|e| Error::io(path, e))?;
    if format == Some(InputFormat::Parquet) {
        return read_parquet_texts(ParquetInput::File(file), &name, options, f);
    }
    let mut stream = decoded(file, &name)?;
    let format = match format {
        Some(format) => format,
        None => {
            let head = stream.fill_buf().map_err(|e| Error::io(&name, e))?;
            InputFormat::detect(None, false, head, InputFormat::Text)
        }
    };
    read_stream_texts(stream, &name, format, options, f)
}

fn read_stream_texts(
    mut stream: impl BufRead,
    source: &str,
    format: InputFormat,
    options: &ReadOptions,
    f: &mut dyn FnMut(String, String) -> Result<()>,
) -> Result<()> {
    match format {
        InputFormat::Jsonl => read_json_texts(stream, source, options, f),
        InputFormat::Text => {
            let mut bytes = Vec::new();
            stream
                .read_to_end(&mut bytes)
                .map_err(|e| Error::io(source, e))?;
            let invalid = |problem: String| Error::input_at(source, None, problem);
            let text = String::from_utf8(bytes).map_err(|e| {
                invalid(format!(
                    "not valid UTF-8 at byte {}",
                    e.utf8_error().valid_up_to()
                ))
            })?;
            check_id(source)
                .map_err(|e| invalid(format!("the path cannot be an id: {}", problem_of(e))))?;
            f(source.to_string(), text)
        }
        InputFormat::Parquet => {
            let mut bytes = Vec::new();
            stream
                .read_to_end(&mut bytes)
                .map_err(|e| Error::io(source, e))?;
            read_parquet_texts(ParquetInput::Bytes(bytes), source, options, f)
        }
        InputFormat::Tsv | InputFormat::Fingerprints => Err(Error::input_at(
            source,
            None,
            "this input holds fingerprints, not text: give JSON Lines with a text field, \
             Parquet with a text column, or text files",
        )),
    }
}

fn read_parquet_texts(
    input: ParquetInput,
    source: &str,
    options: &ReadOptions,
    f: &mut dyn FnMut(String, String) -> Result<()>,
) -> Result<()> {
    #[cfg(feature = "parquet")]
    {
        use crate::io::parquet::read_parquet_texts;
        match input {
            ParquetInput::File(file) => read_parquet_texts(file, source, options, f),
            ParquetInput::Bytes(bytes) => {
                read_parquet_texts(bytes::Bytes::from(bytes), source, options, f)
            }
        }
    }
    #[cfg(not(feature = "parquet"))]
    {
        let _ = (input, options, f);
        Err(Error::input_at(
            source,
            None,
            "this is a Parquet file, and simhashdb was built without its parquet feature",
        ))
    }
}
