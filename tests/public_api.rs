//! The public API is curated: every item a user can name is listed here, and a default build
//! has at most [`MOST`] of them (methods, fields and associated constants belong to their
//! type and are not counted). The modules of opt-in features are listed apart: a user who
//! turns one on asks for its items. Adding an item means adding it below, on purpose.
//!
//! Items are read from the code as text: lib.rs's `pub use` lines, and for a re-exported or
//! public module, its own top-level `pub` items and `pub use` lines; a `#[cfg(feature = "F")]`
//! line just above a statement of lib.rs puts its items under feature F.

use std::path::{Path, PathBuf};

/// The items of a default build at most: a ceiling that only comes down.
const MOST: usize = 60;

/// Every public item, as `path::Name`.
const API: &[&str] = &[
    // Operations every client runs, each one call with options and an answer
    "Source",
    "InsertOptions",
    "DedupOptions",
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
    // Parquet out
    "parquet::ParquetTable",
    // Choosing a scheme and distance
    "tune::TuneOptions",
    "tune::Tuning",
];

/// The items of opt-in features (not in Cargo.toml's `default`), by feature.
const OPT_IN: &[(&str, &[&str])] = &[
    // find_all in pieces, for a cluster (the Spark jobs), and a task's keep rule against
    // references (dedup --against)
    (
        "partitioned",
        &[
            "partitioned::Plan",
            "partitioned::PartSlices",
            "partitioned::Found",
            "partitioned::Router",
            "partitioned::Half",
            "partitioned::Blocks",
            "partitioned::components",
            "partitioned::keep_rule",
            "partitioned::Row",
            "partitioned::Against",
        ],
    ),
    // simhash-py's functions, bit for bit
    (
        "seomoz",
        &[
            "seomoz::compute",
            "seomoz::find_all",
            "seomoz::find_clusters",
            "seomoz::unsigned_hash",
        ],
    ),
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

/// The statements starting at column 0 with `pub ` (multi-line `pub use` groups joined), each
/// with the feature a `#[cfg(feature = "F")]` line just above it names.
fn pub_statements(code: &str) -> Vec<(String, Option<String>)> {
    let lines = top_level_lines(code);
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let line = &lines[i];
        let feature = i
            .checked_sub(1)
            .and_then(|above| lines[above].strip_prefix("#[cfg(feature = \""))
            .and_then(|rest| rest.strip_suffix("\")]"))
            .map(str::to_string);
        if line.starts_with("pub use ") {
            let mut statement = line.clone();
            while !statement.contains(';') {
                i += 1;
                statement.push_str(&lines[i]);
            }
            out.push((statement, feature));
        } else if line.starts_with("pub ") {
            out.push((line.clone(), feature));
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

/// An item's path, and the feature it is built with (None: every build).
type Item = (String, Option<String>);

/// The public items of the module in `file` (whose submodules are under `dir`), each as
/// `prefix` + name, under `feature` unless a statement names its own.
fn items(file: &Path, dir: &Path, prefix: &str, feature: Option<&str>, out: &mut Vec<Item>) {
    let code = std::fs::read_to_string(file).unwrap();
    for (statement, own) in pub_statements(&code) {
        let feature = own.as_deref().or(feature);
        let item = |name: String| (name, feature.map(str::to_string));
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
                        items(&module, &sub, &format!("{prefix}{name}::"), feature, out);
                    }
                    None => out.push(item(format!("{prefix}{name}"))),
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
                Some(module) => items(
                    &module,
                    &dir.join(&name),
                    &format!("{prefix}{name}::"),
                    feature,
                    out,
                ),
                // An inline module: only lib.rs's internals, left out below.
                None => out.push(item(format!("{prefix}{name}::"))),
            },
            "fn" | "struct" | "enum" | "trait" | "type" | "const" | "static" => {
                out.push(item(format!("{prefix}{name}")))
            }
            _ => {}
        }
    }
}

/// The features a default build turns on, as Cargo.toml lists them.
fn default_features() -> Vec<String> {
    let manifest = std::fs::read_to_string(src().join("../Cargo.toml")).unwrap();
    let line = manifest
        .lines()
        .find(|l| l.starts_with("default = ["))
        .expect("Cargo.toml lists its default features");
    line.trim_start_matches("default = [")
        .trim_end_matches(']')
        .split(',')
        .map(|f| f.trim().trim_matches('"').to_string())
        .filter(|f| !f.is_empty())
        .collect()
}

/// `found` and `expected` hold the same items, sorted, or the test says what changed.
fn same_items(what: &str, mut found: Vec<String>, expected: &[&str]) {
    found.sort();
    let mut expected: Vec<String> = expected.iter().map(|s| s.to_string()).collect();
    expected.sort();
    let added: Vec<&String> = found.iter().filter(|i| !expected.contains(i)).collect();
    let removed: Vec<&String> = expected.iter().filter(|i| !found.contains(i)).collect();
    assert!(
        added.is_empty() && removed.is_empty(),
        "the public API of {what} changed: added {added:?}, removed {removed:?} (update \
         tests/public_api.rs on purpose)"
    );
}

#[test]
fn the_public_api_is_the_curated_list() {
    let mut found = Vec::new();
    items(&src().join("lib.rs"), &src(), "", None, &mut found);
    // Not part of the API: built only with the feature the benchmarks use.
    found.retain(|(item, _)| !item.starts_with("internals::"));
    let defaults = default_features();
    let in_default = |f: &Option<String>| f.as_ref().is_none_or(|f| defaults.contains(f));
    let default: Vec<String> = found
        .iter()
        .filter(|(_, f)| in_default(f))
        .map(|(item, _)| item.clone())
        .collect();
    same_items("a default build", default, API);
    assert!(
        API.len() <= MOST,
        "{} public items in a default build; at most {MOST}",
        API.len()
    );
    let opt_in: Vec<&String> = found
        .iter()
        .filter_map(|(_, f)| f.as_ref().filter(|_| !in_default(f)))
        .collect();
    for feature in &opt_in {
        assert!(
            OPT_IN.iter().any(|(f, _)| f == feature),
            "feature {feature} adds items: list them in OPT_IN"
        );
    }
    for (feature, expected) in OPT_IN {
        let items: Vec<String> = found
            .iter()
            .filter(|(_, f)| f.as_deref() == Some(*feature))
            .map(|(item, _)| item.clone())
            .collect();
        same_items(&format!("feature {feature}"), items, expected);
    }
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
    let statements: Vec<&str> = statements.iter().map(|(s, _)| s.as_str()).collect();
    assert_eq!(statements, ["pub fn a() {}", "pub use x::{    Y,    Z,};"]);
    let gated = pub_statements("#[cfg(feature = \"f\")]\npub mod m;\npub mod n;\n");
    assert_eq!(
        gated,
        [
            ("pub mod m;".to_string(), Some("f".to_string())),
            ("pub mod n;".to_string(), None)
        ]
    );
}
