//! Golden outputs: what the CLI and the HTTP API print for one fixed, skewed corpus (40
//! copies of one page among pages and their near-duplicates, 30 documents sharing one
//! fingerprint), byte for byte, against tests/golden/*.out. An output that changes is a
//! change of a contract scripts rely on: on purpose, and said in the change.
//!
//! `SIMHASHDB_GOLDEN_WRITE=1` writes the files instead of comparing; `SIMHASHDB_GOLDEN_BIN`
//! runs another build of the binary (the release before a refactor, to show the refactor
//! changed no output). Times and the machine's free disk space are the only outputs masked.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::server::Server;

/// The binary under test.
fn binary() -> PathBuf {
    std::env::var_os("SIMHASHDB_GOLDEN_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_simhashdb")))
}

fn golden_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden")
}

/// A deterministic word stream (an LCG over a small vocabulary).
struct Words(u64);

impl Words {
    fn next(&mut self) -> &'static str {
        const VOCABULARY: [&str; 32] = [
            "river", "stone", "light", "paper", "market", "garden", "window", "silver", "engine",
            "harbor", "planet", "winter", "forest", "signal", "copper", "island", "letter",
            "bridge", "orange", "castle", "rocket", "valley", "thunder", "pencil", "circle",
            "mirror", "anchor", "meadow", "falcon", "lantern", "canyon", "velvet",
        ];
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        VOCABULARY[(self.0 >> 59) as usize]
    }

    fn text(&mut self, words: usize) -> Vec<&'static str> {
        (0..words).map(|_| self.next()).collect()
    }
}

/// The corpus files, written into `dir`.
fn write_corpus(dir: &Path) {
    let mut words = Words(7);
    let mut corpus = String::new();
    let mut line = |id: &str, text: &[&str]| {
        let value = serde_json::json!({"id": id, "text": text.join(" ")});
        corpus.push_str(&format!("{value}\n"));
    };
    let pages: Vec<Vec<&str>> = (0..40).map(|_| words.text(60)).collect();
    for (i, page) in pages.iter().enumerate() {
        line(&format!("page-{i:03}"), page);
    }
    for (i, page) in pages.iter().enumerate().take(10) {
        let mut near = page.clone();
        near[30] = "zebra";
        line(&format!("near-{i:03}"), &near);
    }
    for i in 0..40 {
        line(&format!("copy-{i:03}"), &pages[0]);
    }
    let queries: String = corpus
        .lines()
        .skip(4)
        .take(3)
        .map(|l| format!("{l}\n"))
        .collect();
    std::fs::write(dir.join("corpus.jsonl"), corpus).unwrap();
    std::fs::write(dir.join("queries.jsonl"), queries).unwrap();

    let mut fps = String::new();
    let mut fingerprints = String::new();
    let mut state = 11u64;
    for i in 0..50 {
        state = state.wrapping_mul(0x9E37_79B9_7F4A_7C15).rotate_left(17) ^ i;
        fps.push_str(&format!("fp-{i:03}\t{state:016x}\n"));
        fingerprints.push_str(&format!("{state:016x}\n{:016x}\n", state ^ 0b101));
    }
    for i in 0..30 {
        fps.push_str(&format!("hot-{i:03}\t00000000deadbeef\n"));
    }
    std::fs::write(dir.join("fps.tsv"), fps).unwrap();
    std::fs::write(dir.join("fingerprints.txt"), fingerprints).unwrap();
    std::fs::write(
        dir.join("bad.tsv"),
        "ok-1\t0123456789abcdef\nbroken line\nok-2\t0x10\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("queries.txt"),
        "00000000deadbeef\n00000000deadbeee\nffffffffffffffff\n",
    )
    .unwrap();
}

/// Runs the binary in `dir`; its stdout and exit code.
fn run(dir: &Path, args: &[&str]) -> (String, i32) {
    let out = Command::new(binary())
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .output()
        .expect("the binary runs");
    let stdout = String::from_utf8(out.stdout).expect("UTF-8 output");
    (stdout, out.status.code().unwrap_or(-1))
}

/// `out` with the free disk space it states (`"bytes_free":N`, the machine's, not the
/// store's) masked as 0.
fn without_free_space(out: &str) -> String {
    match out.find("\"bytes_free\":") {
        Some(at) => {
            let start = at + "\"bytes_free\":".len();
            let end = out[start..]
                .find(|c: char| !c.is_ascii_digit())
                .map_or(out.len(), |i| start + i);
            format!("{}0{}", &out[..start], without_free_space(&out[end..]))
        }
        None => out.to_string(),
    }
}

/// Each output line's JSON with the commit times masked (the first line is the exit code).
fn without_times(out: &str) -> String {
    let (code, lines) = out.split_once('\n').unwrap();
    let masked: String = lines
        .lines()
        .map(|line| {
            let mut value: serde_json::Value = serde_json::from_str(line).unwrap();
            value["committed_utc"] = "T".into();
            value["committed_unix_s"] = 0.into();
            format!("{value}\n")
        })
        .collect();
    format!("{code}\n{masked}")
}

fn sorted_lines(out: &str) -> String {
    let mut lines: Vec<&str> = out.lines().collect();
    lines.sort();
    lines.iter().map(|l| format!("{l}\n")).collect()
}

/// Every output, by name, in the order produced.
fn outputs() -> Vec<(&'static str, String)> {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write_corpus(d);
    let mut out: Vec<(&'static str, String)> = Vec::new();
    let mut cli = |name: &'static str, args: &[&str]| {
        let (stdout, code) = run(d, args);
        out.push((
            name,
            format!("exit {code}\n{}", without_free_space(&stdout)),
        ));
    };
    cli("init", &["init", "s", "--expected-size", "1e6"]);
    cli("fingerprint", &["fingerprint", "corpus.jsonl", "--json"]);
    cli(
        "insert-texts",
        &[
            "insert",
            "s",
            "corpus.jsonl",
            "--label",
            "day-1",
            "--json",
            "--no-compact",
        ],
    );
    cli(
        "insert-fingerprints",
        &[
            "insert",
            "s",
            "fps.tsv",
            "--label",
            "day-2",
            "--json",
            "--no-compact",
        ],
    );
    cli(
        "insert-skipping",
        &[
            "insert",
            "s",
            "bad.tsv",
            "--skip-invalid",
            "--json",
            "--no-compact",
        ],
    );
    cli(
        "insert-failing",
        &["insert", "s", "bad.tsv", "--json", "--no-compact"],
    );
    cli("query", &["query", "s", "--input", "queries.txt", "--json"]);
    cli("query-tsv", &["query", "s", "--input", "queries.txt"]);
    cli(
        "query-documents",
        &[
            "query",
            "s",
            "--input",
            "queries.jsonl",
            "--json",
            "--distance",
            "2",
        ],
    );
    cli(
        "get",
        &["get", "s", "page-001", "copy-007", "hot-029", "--json"],
    );
    cli("get-missing", &["get", "s", "page-001", "nope", "--json"]);
    cli("export", &["export", "s", "--format", "jsonl"]);
    cli("audit-pairs", &["audit", "s", "--json"]);
    cli(
        "audit-clusters",
        &["audit", "s", "--clusters", "-", "--json"],
    );
    // The verified audit reads every paired document's text: a store of the texts alone.
    cli("init-texts", &["init", "t", "--expected-size", "1e6"]);
    cli(
        "insert-texts-only",
        &["insert", "t", "corpus.jsonl", "--json"],
    );
    cli(
        "audit-verified",
        &[
            "audit",
            "t",
            "--verify-text",
            "corpus.jsonl",
            "--json",
            "--min-jaccard",
            "0.5",
        ],
    );
    cli("audit-tsv", &["audit", "s", "--distance", "2"]);
    cli(
        "find-all-fingerprints",
        &["find-all", "fingerprints.txt", "--json"],
    );
    cli("find-all-documents", &["find-all", "fps.tsv", "--json"]);
    cli(
        "delete-dry-run",
        &[
            "delete",
            "s",
            "page-002",
            "nope",
            "page-002",
            "--dry-run",
            "--json",
        ],
    );
    cli("delete", &["delete", "s", "page-002", "nope", "--json"]);
    cli(
        "expire-dry-run",
        &["expire", "s", "--batch", "day-2", "--dry-run", "--json"],
    );
    cli("compact-dry-run", &["compact", "s", "--dry-run", "--json"]);
    cli("verify", &["verify", "s", "--json"]);
    cli("batches", &["batches", "s", "--json"]);
    cli("migrate", &["migrate", "s", "--json"]);
    // Export's order is no contract; commit times change from run to run.
    for (name, output) in &mut out {
        match *name {
            "export" => *output = sorted_lines(output),
            "batches" => *output = without_times(output),
            _ => {}
        }
    }

    let server = Server::start(&d.join("s"), &[]);
    let mut http = |name: &'static str, method: &str, path: &str, body: &str| {
        let (status, body) = server.raw(method, path, body);
        out.push((name, format!("{status} {body}\n")));
    };
    http(
        "http-query",
        "POST",
        "/v1/query",
        r#"{"fingerprints": ["00000000deadbeef", "ffffffffffffffff"], "distance": 3}"#,
    );
    http(
        "http-get-query",
        "GET",
        "/v1/query?fingerprint=00000000deadbeee&distance=1",
        "",
    );
    http("http-document", "GET", "/v1/documents/page-001", "");
    http("http-document-missing", "GET", "/v1/documents/nope", "");
    http(
        "http-delete-dry-run",
        "POST",
        "/v1/delete?dry_run=true",
        r#"{"ids": ["page-003", "nope"]}"#,
    );
    http(
        "http-insert",
        "POST",
        "/v1/insert?label=http&skip_invalid=true&format=tsv",
        "h-1\t0123456789abcdef\nbroken\nh-2\t0x20\n",
    );
    http(
        "http-delete",
        "POST",
        "/v1/delete",
        r#"{"ids": ["h-1", "h-9"]}"#,
    );
    drop(server);
    out
}

#[test]
fn outputs_are_the_golden_ones() {
    let write = std::env::var_os("SIMHASHDB_GOLDEN_WRITE").is_some();
    let mut changed = Vec::new();
    for (name, output) in outputs() {
        let path = golden_dir().join(format!("{name}.out"));
        if write {
            std::fs::create_dir_all(golden_dir()).unwrap();
            std::fs::write(&path, &output).unwrap();
            continue;
        }
        let golden = std::fs::read_to_string(&path).unwrap_or_else(|e| {
            panic!(
                "{}: {e} (SIMHASHDB_GOLDEN_WRITE=1 writes it)",
                path.display()
            )
        });
        if golden != output {
            changed.push(format!("{name}:\n--- golden\n{golden}--- now\n{output}"));
        }
    }
    assert!(
        changed.is_empty(),
        "outputs changed:\n{}",
        changed.join("\n")
    );
}
