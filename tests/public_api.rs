//! The public API is curated: every item a user can name is listed here, and there are at
//! most 70 of them (methods, fields and associated constants belong to their type and are
//! not counted). Adding an item means adding it below, on purpose.
//!
//! Items are read from the code as text: lib.rs's `pub use` lines, and for a re-exported or
//! public module, its own top-level `pub` items and `pub use` lines.

use std::path::{Path, PathBuf};

// A ceiling that only comes down (issue 53 asks for 60).
const MOST: usize = 73;

/// Every public item, as `path::Name`.
const API: &[&str] = &[
    // Operations every client runs, each one call with options and an answer
    "Source",
    "InsertOptions",
    "DedupOptions",
    "Deduplicated",
    "Verification",
    "OutputFile",
    // Writing
    "Store",
    "CreateOptions",
    "Settings",
    "CompactionPolicy",
    "Batch",
    "Insertion",
    "InsertSummary",
    "DeleteSummary",
    "ExpireSelector",
    "CompactSummary",
    "CompactionPreview",
    // One handle for a long-running process
    "Database",
    "DatabaseOptions",
    "Event",
    "ReaderStats",
    // Reading
    "Snapshot",
    "OpenOptions",
    "Match",
    "Document",
    "BatchInfo",
    "Stats",
    "TableStats",
    // Checking and mending
    "Report",
    "Finding",
    "RepairReport",
    "RunRepair",
    "Debris",
    // Near-duplicates without a store
    "Scheme",
    "find_all",
    "Pair",
    "NearDuplicates",
    "Cluster",
    "Duplicate",
    "AuditSummary",
    "PairCursor",
    // Dedup on ingest
    "Verdict",
    "DedupSummary",
    "DedupFiles",
    // Input as users write it
    "InputFormat",
    "ReadOptions",
    "ReadSummary",
    "Query",
    "FingerprintFormat",
    "MaxSkipped",
    "Rejects",
    // Errors and progress
    "Error",
    "ErrorKind",
    "Result",
    "Setting",
    "Progress",
    // simhash-py's functions, bit for bit
    "seomoz::compute",
    "seomoz::find_all",
    "seomoz::find_clusters",
    "seomoz::unsigned_hash",
    // Parquet out
    "parquet::ParquetTable",
    // find_all in pieces, for a cluster (the Spark jobs)
    "partitioned::Plan",
    "partitioned::PartSlices",
    "partitioned::Found",
    "partitioned::Router",
    "partitioned::Half",
    "partitioned::Blocks",
    "partitioned::components",
    // a task's keep rule, against references (dedup --against)
    "partitioned::keep_rule",
    "partitioned::Row",
    "partitioned::Against",
    // Choosing a scheme and distance
    "tune::TuneOptions",
    "tune::Tuning",
];

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// The lines of `code` without their line comments (only lines at column 0 are read as items
/// later, so nested items never count).
fn top_level_lines(code: &str) -> Vec<String> {
    code.lines()
        .map(|l| match l.find("//") {
            Some(i) => l[..i].to_string(),
            None => l.to_string(),
        })
        .collect()
}

/// The statements starting at column 0 with `pub ` (multi-line `pub use` groups joined).
fn pub_statements(code: &str) -> Vec<String> {
    let lines = top_level_lines(code);
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let line = &lines[i];
        if line.starts_with("pub use ") {
            let mut statement = line.clone();
            while !statement.contains(';') {
                i += 1;
                statement.push_str(&lines[i]);
            }
            out.push(statement);
        } else if line.starts_with("pub ") {
            out.push(line.clone());
        }
        i += 1;
    }
    out
}

/// The names a `pub use a::b::{c, d as e};` statement makes public, with the path each names.
fn used_names(statement: &str) -> Vec<(String, String)> {
    let body = statement
        .trim_start_matches("pub use ")
        .trim_end_matches(';')
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .replace(":: ", "::")
        .replace("{ ", "{")
        .replace(" }", "}");
    let (prefix, group) = match body.find('{') {
        Some(i) => (
            body[..i].to_string(),
            body[i + 1..body.len() - 1].to_string(),
        ),
        None => match body.rfind("::") {
            Some(i) => (body[..i + 2].to_string(), body[i + 2..].to_string()),
            None => (String::new(), body.clone()),
        },
    };
    group
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|item| match item.split_once(" as ") {
            Some((path, alias)) => (alias.to_string(), format!("{prefix}{path}")),
            None => (
                item.rsplit("::").next().unwrap().to_string(),
                format!("{prefix}{item}"),
            ),
        })
        .collect()
}

/// The file of module `path` (`a::b` under `dir`), if it is a module.
fn module_file(dir: &Path, path: &str) -> Option<PathBuf> {
    let rel = path
        .trim_start_matches("crate::")
        .trim_start_matches("self::")
        .replace("::", "/");
    [dir.join(format!("{rel}.rs")), dir.join(&rel).join("mod.rs")]
        .into_iter()
        .find(|p| p.is_file())
}

/// The public items of the module in `file` (whose submodules are under `dir`), each as
/// `prefix` + name.
fn items(file: &Path, dir: &Path, prefix: &str, out: &mut Vec<String>) {
    let code = std::fs::read_to_string(file).unwrap();
    for statement in pub_statements(&code) {
        if statement.starts_with("pub use ") {
            for (name, path) in used_names(&statement) {
                let base = if path.starts_with("crate::") {
                    src()
                } else {
                    dir.to_path_buf()
                };
                match module_file(&base, &path) {
                    Some(module) => {
                        let sub = module.parent().unwrap().to_path_buf();
                        let sub = if module.ends_with("mod.rs") {
                            sub
                        } else {
                            sub.join(module.file_stem().unwrap())
                        };
                        items(&module, &sub, &format!("{prefix}{name}::"), out);
                    }
                    None => out.push(format!("{prefix}{name}")),
                }
            }
            continue;
        }
        let words: Vec<&str> = statement.split_whitespace().collect();
        let (kind, name) = (words[1], words[2]);
        let name: String = name
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        match kind {
            "mod" => match module_file(dir, &name) {
                Some(module) => items(&module, &dir.join(&name), &format!("{prefix}{name}::"), out),
                // An inline module: only lib.rs's internals, left out below.
                None => out.push(format!("{prefix}{name}::")),
            },
            "fn" | "struct" | "enum" | "trait" | "type" | "const" | "static" => {
                out.push(format!("{prefix}{name}"))
            }
            _ => {}
        }
    }
}

#[test]
fn the_public_api_is_the_curated_list() {
    let mut found = Vec::new();
    items(&src().join("lib.rs"), &src(), "", &mut found);
    // Not part of the API: built only with the feature the benchmarks use.
    found.retain(|item| !item.starts_with("internals::"));
    found.sort();
    let mut expected: Vec<String> = API.iter().map(|s| s.to_string()).collect();
    expected.sort();
    let added: Vec<&String> = found.iter().filter(|i| !expected.contains(i)).collect();
    let removed: Vec<&String> = expected.iter().filter(|i| !found.contains(i)).collect();
    assert!(
        added.is_empty() && removed.is_empty(),
        "the public API changed: added {added:?}, removed {removed:?} (update tests/public_api.rs \
         on purpose)"
    );
    assert!(
        API.len() <= MOST,
        "{} public items; at most {MOST}",
        API.len()
    );
}

#[test]
fn the_reader_finds_what_it_is_shown() {
    assert_eq!(
        used_names("pub use a::b::{C, d as E, f::G};"),
        [
            ("C".to_string(), "a::b::C".to_string()),
            ("E".to_string(), "a::b::d".to_string()),
            ("G".to_string(), "a::b::f::G".to_string()),
        ]
    );
    assert_eq!(
        used_names("pub use io::parquet;"),
        [("parquet".to_string(), "io::parquet".to_string())]
    );
    let statements = pub_statements("pub fn a() {}\n    pub fn nested() {}\npub(crate) fn b() {}\npub use x::{\n    Y,\n    Z,\n};\n// pub fn commented() {}\n");
    assert_eq!(statements, ["pub fn a() {}", "pub use x::{    Y,    Z,};"]);
}
