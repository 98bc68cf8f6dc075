//! `simhashdb fingerprint`: text in, `ID<TAB>FINGERPRINT` out.

use std::fs::File;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};

use anyhow::{anyhow, bail, Context, Result};
use rayon::prelude::*;
use simhashdb::fingerprint::Scheme;

use crate::{output, progress};

/// Print the simhash fingerprint of documents: ID<TAB>FINGERPRINT per document.
///
/// Inputs: JSON Lines files ({"id": ..., "text": ...} per line; integer ids become their
/// decimal text), plain text files (one document, id = the path), directories (every file
/// below, recursively, in path order), or stdin ('-' or none; JSON Lines if it starts with '{').
/// A line that is not valid UTF-8 or JSON, lacks a field, has a non-string text, or a document
/// with no token, fails with FILE:LINE, unless --skip-invalid (then it is counted on stderr).
/// The seomoz scheme keeps simhash-py's behaviour instead: fewer than 4 tokens give 0.
#[derive(clap::Args)]
pub struct Args {
    /// Files, directories or '-' (stdin).
    inputs: Vec<PathBuf>,
    /// Input format; by default JSON Lines for `.jsonl` files (and stdin starting with '{'),
    /// text otherwise.
    #[arg(long, value_parser = ["jsonl", "text"])]
    format: Option<String>,
    /// Scheme: words (word shingles), chars (character n-grams) or seomoz (simhash-py 0.4).
    #[arg(long, default_value = "words")]
    scheme: String,
    /// Shingle size: words per shingle, or characters per n-gram.
    #[arg(long, value_name = "N")]
    shingle: Option<u8>,
    /// Feature weighting: set (each distinct shingle once) or count.
    #[arg(long, value_name = "W")]
    weight: Option<String>,
    /// JSON field holding the id.
    #[arg(long, default_value = "id")]
    id_field: String,
    /// JSON field holding the text.
    #[arg(long, default_value = "text")]
    text_field: String,
    /// Skip bad documents (counted on stderr) instead of failing.
    #[arg(long)]
    skip_invalid: bool,
    /// Also print the 64 bits, and with exactly two documents their distance.
    #[arg(long)]
    verbose: bool,
}

/// One document to fingerprint, or what is wrong with it.
type Doc = std::result::Result<(String, String), String>;

pub fn run(args: Args) -> Result<()> {
    let scheme = Scheme::from_parts(&args.scheme, args.shingle, args.weight.as_deref())
        .map_err(|e| anyhow!(e))?;
    let inputs = if args.inputs.is_empty() {
        vec![PathBuf::from("-")]
    } else {
        args.inputs.clone()
    };
    let mut docs: Vec<Doc> = Vec::new();
    for input in &inputs {
        read_input(input, &args, &mut docs)?;
    }
    let bar = progress::bar(docs.len() as u64, "fingerprint");
    let results: Vec<std::result::Result<(String, u64), String>> = docs
        .into_par_iter()
        .map(|doc| {
            let (id, text) = doc?;
            if simhashdb::fingerprint::tokens(&text).next().is_none() && scheme != Scheme::Seomoz {
                return Err(format!("{id}: the document has no token"));
            }
            let fp = scheme.fingerprint(&text);
            bar.inc(1);
            Ok((id, fp))
        })
        .collect();
    bar.finish_and_clear();
    let mut out = output::stdout();
    let mut skipped = 0usize;
    let mut printed = Vec::new();
    for result in results {
        match result {
            Ok((id, fp)) => {
                if args.verbose {
                    writeln!(out, "{id}\t{fp:016x}\t{fp:064b}")?;
                } else {
                    writeln!(out, "{id}\t{fp:016x}")?;
                }
                printed.push(fp);
            }
            Err(what) if args.skip_invalid => {
                skipped += 1;
                if skipped <= 10 {
                    eprintln!("simhashdb: skipped {what}");
                }
            }
            Err(what) => {
                out.flush()?;
                bail!("{what}");
            }
        }
    }
    if args.verbose && printed.len() == 2 {
        writeln!(out, "distance\t{}", (printed[0] ^ printed[1]).count_ones())?;
    }
    out.flush()?;
    if skipped > 0 {
        eprintln!("simhashdb: skipped {skipped} invalid documents");
    }
    Ok(())
}

/// Reads one input (file, directory or stdin) into `docs`.
fn read_input(path: &Path, args: &Args, docs: &mut Vec<Doc>) -> Result<()> {
    if path.as_os_str() == "-" {
        let mut bytes = Vec::new();
        std::io::stdin()
            .lock()
            .read_to_end(&mut bytes)
            .context("<stdin>: cannot read")?;
        let jsonl = match args.format.as_deref() {
            Some(f) => f == "jsonl",
            None => bytes.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'{'),
        };
        if jsonl {
            read_jsonl(&bytes[..], "<stdin>", args, docs)?;
        } else {
            docs.push(text_doc("<stdin>", bytes));
        }
        return Ok(());
    }
    let meta =
        std::fs::metadata(path).with_context(|| format!("{}: cannot read", path.display()))?;
    if meta.is_dir() {
        let mut files = Vec::new();
        walk(path, &mut files)?;
        files.sort();
        for file in files {
            read_file(&file, args, docs)?;
        }
        return Ok(());
    }
    read_file(path, args, docs)
}

fn read_file(path: &Path, args: &Args, docs: &mut Vec<Doc>) -> Result<()> {
    let jsonl = match args.format.as_deref() {
        Some(f) => f == "jsonl",
        None => path.extension().is_some_and(|e| e == "jsonl"),
    };
    let name = path.display().to_string();
    let file = File::open(path).with_context(|| format!("{name}: cannot open"))?;
    if jsonl {
        read_jsonl(BufReader::new(file), &name, args, docs)
    } else {
        let mut bytes = Vec::new();
        BufReader::new(file)
            .read_to_end(&mut bytes)
            .with_context(|| format!("{name}: cannot read"))?;
        docs.push(text_doc(&name, bytes));
        Ok(())
    }
}

fn text_doc(name: &str, bytes: Vec<u8>) -> Doc {
    String::from_utf8(bytes)
        .map(|text| (name.to_string(), text))
        .map_err(|e| {
            format!(
                "{name}: not valid UTF-8 at byte {}",
                e.utf8_error().valid_up_to()
            )
        })
}

/// Every regular file below `dir`.
fn walk(dir: &Path, files: &mut Vec<PathBuf>) -> Result<()> {
    let entries = std::fs::read_dir(dir)
        .with_context(|| format!("{}: cannot read the directory", dir.display()))?;
    for entry in entries {
        let entry =
            entry.with_context(|| format!("{}: cannot read the directory", dir.display()))?;
        let path = entry.path();
        let kind = entry
            .file_type()
            .with_context(|| format!("{}: cannot stat", path.display()))?;
        if kind.is_dir() {
            walk(&path, files)?;
        } else if kind.is_file() {
            files.push(path);
        }
    }
    Ok(())
}

fn read_jsonl(reader: impl BufRead, name: &str, args: &Args, docs: &mut Vec<Doc>) -> Result<()> {
    for (i, line) in reader.split(b'\n').enumerate() {
        let line = line.with_context(|| format!("{name}: cannot read"))?;
        let at = format!("{name}:{}", i + 1);
        if line.iter().all(|b| b.is_ascii_whitespace()) {
            continue;
        }
        docs.push(parse_line(&line, &at, args));
    }
    Ok(())
}

fn parse_line(line: &[u8], at: &str, args: &Args) -> Doc {
    let text =
        std::str::from_utf8(line).map_err(|_| format!("{at}: the line is not valid UTF-8"))?;
    let value: serde_json::Value =
        serde_json::from_str(text).map_err(|e| format!("{at}: not a JSON object: {e}"))?;
    let field = |name: &str| {
        value
            .get(name)
            .ok_or_else(|| format!("{at}: no {name:?} field"))
    };
    let id = match field(&args.id_field)? {
        serde_json::Value::String(s) => s.clone(),
        serde_json::Value::Number(n) if n.is_u64() || n.is_i64() => n.to_string(),
        other => {
            return Err(format!(
                "{at}: the id is {other}, not a string or an integer"
            ))
        }
    };
    simhashdb::batch::check_id(&id).map_err(|e| format!("{at}: {e}"))?;
    let body = match field(&args.text_field)? {
        serde_json::Value::String(s) => s.clone(),
        _ => {
            return Err(format!(
                "{at}: the {:?} field is not a string",
                args.text_field
            ))
        }
    };
    Ok((id, body))
}
