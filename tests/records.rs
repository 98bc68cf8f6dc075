//! Records pass through as written (TSV with a header and extra columns, byte for byte), and
//! every output is in the form its name says, or refused.

use crate::util::{path_str, simhashdb, text};

fn new_store(dir: &std::path::Path) -> String {
    let store = dir.join("s");
    assert!(simhashdb(&["init", path_str(&store)], "").status.success());
    path_str(&store).to_string()
}

#[test]
fn tsv_headers_and_extra_columns_pass_through_dedup() {
    let dir = tempfile::tempdir().unwrap();
    let store = new_store(dir.path());
    let tsv = "url\tid\tfingerprint\tlang\n\
               http://a\ta\t00000000000000ff\ten\r\n\
               http://b\tb\t00000000000000fe\tde\n\
               http://c\tc\tf000000000000000\tfr\n";
    let input = dir.path().join("in.tsv");
    std::fs::write(&input, tsv).unwrap();
    let kept = dir.path().join("kept.tsv");
    let out = simhashdb(
        &[
            "dedup",
            &store,
            path_str(&input),
            "--output",
            path_str(&kept),
            "--insert",
        ],
        "",
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(
        std::fs::read_to_string(&kept).unwrap(),
        "url\tid\tfingerprint\tlang\n\
         http://a\ta\t00000000000000ff\ten\r\n\
         http://c\tc\tf000000000000000\tfr\n"
    );
    let exported = text(&simhashdb(&["export", &store], "").stdout);
    let mut lines: Vec<&str> = exported.lines().collect();
    lines.sort();
    assert_eq!(lines, ["a\t00000000000000ff\t1", "c\tf000000000000000\t1"]);
    // export's lines (a batch column) read back, extra columns are the record's own, and
    // --columns names them without a header.
    let out = simhashdb(
        &["insert", &store],
        &format!("{exported}x\t0000000000000001\tany\tthing\n"),
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let out = simhashdb(
        &["insert", &store, "--columns", "url,fingerprint,id"],
        "http://z\t0000000000000002\tz\n",
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let out = simhashdb(&["get", &store, "z"], "");
    assert!(
        text(&out.stdout).contains("0000000000000002"),
        "{}",
        text(&out.stdout)
    );
    // A column list without the fingerprint's name: a usage error of the input, named.
    let out = simhashdb(&["insert", &store, "--columns", "url,id"], "u\tz\n");
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("no fingerprint column"),
        "{}",
        text(&out.stderr)
    );
    // CSV gets a hint about CSV.
    let out = simhashdb(&["insert", &store], "a,00000000000000ff\n");
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("CSV is not read"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn outputs_are_in_the_form_their_name_says() {
    let dir = tempfile::tempdir().unwrap();
    let store = new_store(dir.path());
    let input = dir.path().join("in.tsv");
    std::fs::write(&input, "a\t00000000000000ff\nb\t00000000000000fe\n").unwrap();
    // dedup of TSV into a file named .jsonl: refused as usage, no file left.
    for name in ["kept.jsonl", "kept.parquet", "kept.tsv.gz"] {
        let kept = dir.path().join(name);
        let out = simhashdb(
            &[
                "dedup",
                &store,
                path_str(&input),
                "--output",
                path_str(&kept),
            ],
            "",
        );
        assert_eq!(out.status.code(), Some(2), "{name}: {}", text(&out.stderr));
        assert!(
            text(&out.stderr).contains("invalid --output"),
            "{}",
            text(&out.stderr)
        );
        assert!(!kept.exists());
    }
    let out = simhashdb(&["insert", &store, path_str(&input)], "");
    assert!(out.status.success());
    // audit --json: the summary is JSON, a file named .tsv stays TSV, one named .jsonl is JSON.
    let (tsv, jsonl) = (dir.path().join("pairs.tsv"), dir.path().join("pairs.jsonl"));
    for path in [&tsv, &jsonl] {
        let out = simhashdb(&["audit", &store, "--json", "--pairs", path_str(path)], "");
        assert!(out.status.success(), "{}", text(&out.stderr));
        assert!(
            text(&out.stdout).starts_with("{\"summary\""),
            "{}",
            text(&out.stdout)
        );
    }
    assert_eq!(std::fs::read_to_string(&tsv).unwrap(), "a\tb\t1\n");
    let line = std::fs::read_to_string(&jsonl).unwrap();
    assert!(
        line.starts_with('{') && line.contains("\"distance\":1"),
        "{line}"
    );
}

/// The smaller edges: each says what is wrong, or what it did, in words.
#[test]
fn smaller_edges_say_what_they_do() {
    let dir = tempfile::tempdir().unwrap();
    let store = new_store(dir.path());
    // --wait -1: our message, not clap's hint.
    let out = simhashdb(&["insert", &store, "--wait", "-1"], "a\t00000000000000ff\n");
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("invalid --wait \"-1\""),
        "{}",
        text(&out.stderr)
    );
    // A lone surrogate, as Python's json writes it: invalid text, said so; nothing stored.
    let out = simhashdb(
        &["insert", &store, "--format", "jsonl"],
        "{\"id\": \"a\", \"text\": \"broken \\ud800 text\"}\n",
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("lone surrogate"),
        "{}",
        text(&out.stderr)
    );
    assert_eq!(text(&simhashdb(&["export", &store], "").stdout), "");
    // The compaction plan says the disk it needs and what is free.
    for batch in ["a\t00000000000000ff\n", "b\t00000000000000fe\n"] {
        let out = simhashdb(&["insert", &store, "--no-compact"], batch);
        assert!(out.status.success(), "{}", text(&out.stderr));
    }
    let out = simhashdb(&["compact", &store, "--dry-run"], "");
    let said = text(&out.stdout);
    assert!(
        said.contains("of free disk") && said.contains("free"),
        "{said}"
    );
    // audit --verify-text reads several corpora.
    let (one, two) = (dir.path().join("one.jsonl"), dir.path().join("two.jsonl"));
    std::fs::write(
        &one,
        "{\"id\": \"a\", \"text\": \"the same words in both of them\"}\n",
    )
    .unwrap();
    std::fs::write(
        &two,
        "{\"id\": \"b\", \"text\": \"the same words in both of them\"}\n",
    )
    .unwrap();
    let out = simhashdb(
        &[
            "audit",
            &store,
            "--verify-text",
            path_str(&one),
            path_str(&two),
            "--pairs",
            "-",
        ],
        "",
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "a\tb\t1\t1.000000\n");
    let out = simhashdb(&["audit", &store, "--verify-text", path_str(&one)], "");
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("no text for document \"b\""),
        "{}",
        text(&out.stderr)
    );
}
