//! The command line contract: commands, flags, output columns, errors and exit codes.

use crate::util::{path_str, simhashdb, text};

fn new_store(settings: &[&str]) -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store").to_str().unwrap().to_string();
    let mut args = vec!["init", store.as_str()];
    args.extend_from_slice(settings);
    let out = simhashdb(&args, "");
    assert!(out.status.success(), "{}", text(&out.stderr));
    (dir, store)
}

#[test]
fn init_refuses_impossible_settings_and_existing_paths() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("s");
    let s = path_str(&store);
    for (args, says) in [
        (
            vec!["--blocks", "6", "--distance", "6"],
            "--distance: 6 must be at least 1 and less than the number of blocks",
        ),
        (
            vec!["--blocks", "16", "--distance", "15"],
            "leading prefix of only 4 bits",
        ),
        (vec!["--shards", "3"], "power of two"),
    ] {
        let mut all = vec!["init", s];
        all.extend(args);
        let out = simhashdb(&all, "");
        assert_eq!(out.status.code(), Some(2), "bad usage");
        assert!(text(&out.stderr).contains(says), "{}", text(&out.stderr));
    }
    std::fs::create_dir_all(&store).unwrap();
    std::fs::write(store.join("x"), "x").unwrap();
    let out = simhashdb(&["init", s], "");
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("not empty"));
    let out = simhashdb(&["init", s, "--blocks", "nope"], "");
    assert_eq!(out.status.code(), Some(2), "clap usage errors exit 2");
    // A file at the path, or at a directory it would be made in.
    let file = store.join("x");
    for (path, says) in [
        (file.clone(), "it exists and is not a directory".to_string()),
        (file.join("sub"), "Not a directory".to_string()),
    ] {
        let out = simhashdb(&["init", path_str(&path)], "");
        assert_eq!(out.status.code(), Some(1));
        // The error names the file in the way.
        let stderr = text(&out.stderr);
        assert!(
            stderr.contains(&format!("{}: {says}", file.display())),
            "{stderr}"
        );
    }
}

#[test]
fn insert_then_query_prints_the_documented_columns() {
    let (_dir, store) = new_store(&[]);
    let out = simhashdb(
        &["insert", &store],
        "a\t0123456789abcdef\nb\t0x0123456789abcdee\nc\t0X0123456789ABCDEF\n",
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout),
        "inserted 3, replaced 0, unchanged 0 (batch 1)\n"
    );
    let out = simhashdb(&["query", &store, "0123456789abcdef"], "");
    assert_eq!(
        text(&out.stdout),
        "0123456789abcdef\ta\t0123456789abcdef\t0\n\
         0123456789abcdef\tc\t0123456789abcdef\t0\n\
         0123456789abcdef\tb\t0123456789abcdee\t1\n"
    );
    let out = simhashdb(
        &["query", &store, "--distance", "0", "--json", "--input", "-"],
        "0123456789abcdee\n",
    );
    assert_eq!(
        text(&out.stdout),
        "{\"distance\":0,\"fingerprint\":\"0123456789abcdee\",\"id\":\"b\",\"query\":\"0123456789abcdee\"}\n"
    );
    let out = simhashdb(&["query", &store, "--distance", "4", "0"], "");
    assert_eq!(out.status.code(), Some(2), "bad usage");
    assert!(text(&out.stderr).contains("exceeds the store's maximum distance 3"));
    let out = simhashdb(
        &["query", &store, "--cache-mib", "1", "0123456789abcdef"],
        "",
    );
    assert_eq!(
        text(&out.stdout).lines().count(),
        3,
        "a small cache answers the same"
    );
    let out = simhashdb(&["query", &store, "--cache-mib", "0", "0"], "");
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn jsonl_input_is_detected_and_summarised_as_json() {
    let (_dir, store) = new_store(&[]);
    let input = "{\"id\": \"x\", \"fingerprint\": \"00000000000000ff\"}\n{\"id\": \"y\", \"fingerprint\": 255}\n";
    let out = simhashdb(&["insert", &store, "--json"], input);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["inserted"], 2);
    let out = simhashdb(&["insert", &store, "--json", "--label", "again"], input);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["unchanged"], 2);
}

#[test]
fn a_malformed_line_fails_the_batch_naming_file_and_line() {
    let (dir, store) = new_store(&[]);
    let input = dir.path().join("day.tsv");
    std::fs::write(&input, "a\t1\nb\t2\nc\tnot-hex\n").unwrap();
    let out = simhashdb(&["insert", &store, path_str(&input)], "");
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert!(err.contains(&format!("{}:3:", input.display())), "{err}");
    let out = simhashdb(&["query", &store, "1"], "");
    assert_eq!(
        text(&out.stdout),
        "",
        "nothing of the failed batch is stored"
    );

    let out = simhashdb(&["insert", &store, "--skip-invalid", path_str(&input)], "");
    assert!(out.status.success());
    assert!(text(&out.stdout).contains("inserted 2") && text(&out.stdout).contains("skipped 1"));
    assert!(text(&out.stderr).contains(":3:"));
}

#[test]
fn a_batch_of_many_runs_commits_whole_or_not_at_all() {
    let (dir, store) = new_store(&[]);
    let good = dir.path().join("good.tsv");
    let bad = dir.path().join("bad.tsv");
    std::fs::write(&good, "a\t1\nb\t2\nc\t3\nd\t4\ne\t5\n").unwrap();
    std::fs::write(&bad, "f\t6\ng\tnot-hex\n").unwrap();
    let runs = || {
        std::fs::read_dir(std::path::Path::new(&store).join("runs"))
            .unwrap()
            .count()
    };

    // good.tsv is written as runs before bad.tsv fails: they must go with it.
    let args = [
        "insert",
        &store,
        "--run-documents",
        "2",
        path_str(&good),
        path_str(&bad),
    ];
    let out = simhashdb(&args, "");
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert!(
        err.contains("the batch was not inserted") && err.contains("bad.tsv:2:"),
        "{err}"
    );
    assert_eq!(runs(), 0, "the runs of the failed batch are removed");
    assert_eq!(text(&simhashdb(&["query", &store, "1"], "").stdout), "");

    let out = simhashdb(
        &[
            "insert",
            &store,
            "--run-documents",
            "2",
            "--json",
            path_str(&good),
        ],
        "",
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        (v["inserted"].as_u64(), v["batch"].as_u64()),
        (Some(5), Some(1))
    );
    assert_eq!(v["runs"], 3);
    assert_eq!(runs(), 3, "5 documents in runs of 2");
    let out = simhashdb(&["batches", &store, "--json"], "");
    assert_eq!(
        text(&out.stdout).lines().count(),
        1,
        "one batch: {}",
        text(&out.stdout)
    );
    let out = simhashdb(&["query", &store, "0", "--distance", "3"], "");
    assert_eq!(text(&out.stdout).lines().count(), 5);
    assert!(simhashdb(&["verify", &store], "").status.success());

    let out = simhashdb(
        &[
            "insert",
            &store,
            "--run-documents",
            "2",
            "--no-compact",
            "-",
        ],
        "x\t1\ny\t2\nz\t3\n",
    );
    assert!(
        text(&out.stderr).contains("written as 2 runs"),
        "{}",
        text(&out.stderr)
    );

    let out = simhashdb(
        &["insert", &store, "--run-documents", "0", path_str(&good)],
        "",
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("--run-documents"));

    // 4 runs of one size are a tier of the default merge factor: the insert merges them.
    let (_dir, store) = new_store(&[]);
    let eight: String = (1..=8).map(|i| format!("d{i}\t{i}\n")).collect();
    let out = simhashdb(&["insert", &store, "--run-documents", "2", "-"], &eight);
    let err = text(&out.stderr);
    assert!(
        err.contains("merging runs") && err.contains("runs 4 -> 1"),
        "{err}"
    );
    let runs = std::fs::read_dir(std::path::Path::new(&store).join("runs")).unwrap();
    assert_eq!(runs.count(), 1);
    let out = simhashdb(&["query", &store, "0", "--distance", "3"], "");
    assert_eq!(text(&out.stdout).lines().count(), 8);
}

#[test]
fn missing_inputs_and_stores_are_named() {
    let (dir, store) = new_store(&[]);
    let missing = dir.path().join("nope.tsv");
    let out = simhashdb(&["insert", &store, path_str(&missing)], "");
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("nope.tsv"));
    let not_store = dir.path().join("elsewhere");
    for args in [vec!["query", "0"], vec!["stats"], vec!["insert"]] {
        let cmd = args[0];
        let mut all = vec![cmd, path_str(&not_store)];
        all.extend(&args[1..]);
        let out = simhashdb(&all, "");
        assert_eq!(out.status.code(), Some(1), "{cmd}");
        assert!(
            text(&out.stderr).contains("not a simhashdb store"),
            "{cmd}: {}",
            text(&out.stderr)
        );
    }
}

#[test]
fn stats_reports_counts_and_bytes() {
    let (_dir, store) = new_store(&["--blocks", "4", "--distance", "2", "--shards", "16"]);
    let input: String = (0..1000u64)
        .map(|i| format!("d{i}\t{:016x}\n", i.wrapping_mul(0x9E37_79B9_7F4A_7C15)))
        .collect();
    assert!(simhashdb(&["insert", &store], &input).status.success());
    let out = simhashdb(&["stats", &store, "--json"], "");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["documents"], 1000);
    assert_eq!(v["tables"], 6);
    assert_eq!(v["per_table"].as_array().unwrap().len(), 6);
    assert!(
        v["per_table"][0]["block_bytes_per_fingerprint"]
            .as_f64()
            .unwrap()
            > 1.0
    );
    let out = simhashdb(&["stats", &store], "");
    assert!(text(&out.stdout).contains("documents\t1000"));
}

#[test]
fn audit_prints_pairs_and_clusters_in_the_documented_columns() {
    let (dir, store) = new_store(&[]);
    let out = simhashdb(
        &["insert", &store],
        "a\t0123456789abcdef\nb\t0123456789abcdee\nc\t0123456789abcdef\nz\tfedcba9876543210\n",
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let out = simhashdb(&["audit", &store], "");
    assert!(out.status.success(), "{}", text(&out.stderr));
    // Fingerprints ascending (b's ...cdee before a's and c's ...cdef): b with the larger
    // fingerprint's documents, then the pairs sharing ...cdef.
    assert_eq!(text(&out.stdout), "a\tb\t1\nb\tc\t1\na\tc\t0\n");
    assert!(
        text(&out.stderr).contains(
            "4 documents (3 distinct fingerprints), distance 3: 3 pairs, 1 clusters, largest 3, \
             2 duplicates, 1 kept"
        ),
        "{}",
        text(&out.stderr)
    );

    let clusters = dir.path().join("clusters.tsv");
    let out = simhashdb(
        &[
            "audit",
            &store,
            "--distance",
            "0",
            "--clusters",
            path_str(&clusters),
            "--singletons",
        ],
        "",
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "", "--clusters alone prints no pairs");
    assert_eq!(
        std::fs::read_to_string(&clusters).unwrap(),
        "1\ta\t1\n1\tc\t1\n2\tb\t1\n3\tz\t1\n"
    );
    let out = simhashdb(&["audit", &store, "--json", "--distance", "1"], "");
    let first = text(&out.stdout).lines().next().unwrap().to_string();
    assert_eq!(first, r#"{"a":"a","b":"b","distance":1}"#);

    let out = simhashdb(&["audit", &store, "--distance", "4"], "");
    assert_eq!(out.status.code(), Some(2), "bad usage");
    assert!(text(&out.stderr).contains("4"), "{}", text(&out.stderr));
    let out = simhashdb(&["audit", path_str(&dir.path().join("missing"))], "");
    assert_eq!(out.status.code(), Some(1));
    let out = simhashdb(
        &[
            "audit",
            &store,
            "--pairs",
            path_str(&dir.path().join("no/such/dir/p.tsv")),
        ],
        "",
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("cannot create"),
        "{}",
        text(&out.stderr)
    );

    // The keep/drop list: a and c share a fingerprint, b is a bit away; one batch, so the
    // documents are taken by id: a is kept, b and c name it with their distance.
    let out = simhashdb(&["audit", &store, "--duplicates", "-", "--json"], "");
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout),
        "{\"distance\":1,\"id\":\"b\",\"kept\":\"a\"}\n{\"distance\":0,\"id\":\"c\",\"kept\":\"a\"}\n"
    );
    // With results on stdout, the summary line goes to stderr.
    let summary = text(&out.stderr);
    let summary = summary.lines().find(|l| l.starts_with("{")).unwrap();
    let v: serde_json::Value = serde_json::from_str(summary).unwrap();
    assert_eq!(v["summary"]["duplicates"], 2);
    assert_eq!(v["summary"]["kept"], 1);
    assert_eq!(v["summary"]["distinct_fingerprints"], 3);
    let out = simhashdb(&["audit", &store, "--duplicates", "-"], "");
    assert_eq!(text(&out.stdout), "b\ta\t1\nc\ta\t0\n");
    let keep = dir.path().join("keep.txt");
    let out = simhashdb(&["audit", &store, "--keep", path_str(&keep), "--json"], "");
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(std::fs::read_to_string(&keep).unwrap(), "a\n");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        v["summary"]["pairs"], 3,
        "the summary on stdout when it is free"
    );
    // A bad request: two results on stdout.
    let out = simhashdb(&["audit", &store, "--pairs", "-", "--duplicates", "-"], "");
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("only one of"),
        "{}",
        text(&out.stderr)
    );
    // The report: a picture with the headline counts; a wrong name fails before the audit.
    let report = dir.path().join("report.svg");
    let out = simhashdb(
        &["audit", &store, "--report", path_str(&report), "--json"],
        "",
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        v["summary"]["duplicates"], 2,
        "--report alone prints no pairs"
    );
    let svg = std::fs::read_to_string(&report).unwrap();
    assert!(svg.starts_with("<svg"), "{}", &svg[..svg.len().min(200)]);
    assert!(
        svg.contains("4 documents: 2 duplicates (50.00% dropped)"),
        "the headline"
    );
    // Every size 2 to 10 is labelled, and each bar says its count.
    for size in 2..=10 {
        assert!(
            svg.contains(&format!(">\n{size}\n</text>")),
            "size {size} is labelled"
        );
    }
    let empty = dir.path().join("empty");
    assert!(simhashdb(&["init", path_str(&empty)], "").status.success());
    let out = simhashdb(
        &["audit", path_str(&empty), "--report", path_str(&report)],
        "",
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let svg = std::fs::read_to_string(&report).unwrap();
    assert!(svg.contains("no near duplicates"), "an empty audit says so");
    let out = simhashdb(&["audit", &store, "--report", "r.gif"], "");
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("--report r.gif: the plot is SVG or PNG"),
        "{}",
        text(&out.stderr)
    );
    let nowhere = dir.path().join("no/such/dir/d.tsv");
    let out = simhashdb(&["audit", &store, "--duplicates", path_str(&nowhere)], "");
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("no/such/dir/d.tsv"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn find_all_lists_fingerprint_pairs_once() {
    let out = simhashdb(
        &["find-all"],
        "0123456789abcdef\n0123456789abcdee\n0123456789abcdef\nfedcba9876543210\n",
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "0123456789abcdee\t0123456789abcdef\t1\n");
    let out = simhashdb(&["find-all", "--blocks", "4", "--distance", "4"], "");
    assert_eq!(out.status.code(), Some(2), "bad usage");
    let out = simhashdb(&["find-all"], "0123\nnot-a-fingerprint\n");
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("<stdin>:2"),
        "{}",
        text(&out.stderr)
    );
}

/// find-all on text takes the scheme flags `fingerprint` takes: its pairs are those of the
/// fingerprints `fingerprint` gives with the same flags (30 copies of one text among them).
#[test]
fn find_all_fingerprints_text_with_the_scheme_flags() {
    let mut docs = String::new();
    let texts = [
        "the river runs past the old stone mill and on to the sea",
        "the river runs past the old stone mill and on to the bay",
        "a completely different sentence about fingerprints and tables",
    ];
    for (i, t) in texts.iter().enumerate() {
        docs.push_str(&format!("{{\"id\": \"t{i}\", \"text\": \"{t}\"}}\n"));
    }
    for i in 0..30 {
        docs.push_str(&format!(
            "{{\"id\": \"copy{i:02}\", \"text\": \"{}\"}}\n",
            texts[0]
        ));
    }
    for flags in [
        vec![],
        vec!["--scheme", "words", "--shingle", "3", "--weight", "set"],
    ] {
        let mut fp_args = vec!["fingerprint", "--format", "jsonl"];
        fp_args.extend(&flags);
        let fingerprints = simhashdb(&fp_args, &docs);
        assert!(
            fingerprints.status.success(),
            "{}",
            text(&fingerprints.stderr)
        );
        let expected = simhashdb(
            &["find-all", "--distance", "8"],
            &text(&fingerprints.stdout),
        );
        assert!(expected.status.success(), "{}", text(&expected.stderr));
        let mut args = vec!["find-all", "--distance", "8"];
        args.extend(&flags);
        let got = simhashdb(&args, &docs);
        assert!(got.status.success(), "{flags:?}: {}", text(&got.stderr));
        assert_eq!(text(&got.stdout), text(&expected.stdout), "{flags:?}");
        let copies = text(&got.stdout)
            .lines()
            .filter(|l| l.split('\t').take(2).all(|id| id.starts_with("copy")))
            .count();
        assert_eq!(copies, 30 * 29 / 2, "{flags:?}");
    }
    let out = simhashdb(&["find-all", "--scheme", "minhash-3-set"], &docs);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("minhash-3-set"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn fingerprint_reads_jsonl_text_files_directories_and_stdin() {
    let dir = tempfile::tempdir().unwrap();
    let docs = dir.path().join("docs.jsonl");
    std::fs::write(
        &docs,
        "{\"id\": \"a\", \"text\": \"The quick brown fox jumps over the lazy dog\"}\n\n{\"id\": 7, \"text\": \"the QUICK brown fox, jumps over the lazy dog!\"}\n",
    )
    .unwrap();
    let out = simhashdb(&["fingerprint", path_str(&docs)], "");
    assert!(out.status.success(), "{}", text(&out.stderr));
    let lines: Vec<String> = text(&out.stdout).lines().map(String::from).collect();
    assert_eq!(lines.len(), 2);
    assert!(lines[0].starts_with("a\t") && lines[1].starts_with("7\t"));
    assert_eq!(
        lines[0][2..],
        lines[1][2..],
        "case and punctuation do not count"
    );

    let out = simhashdb(
        &["fingerprint", "--scheme", "seomoz", "--format", "text", "-"],
        "The quick brown fox jumps over the lazy dog",
    );
    assert_eq!(text(&out.stdout), "<stdin>\ta103cb172b8a9085\n");

    let tree = dir.path().join("tree");
    std::fs::create_dir_all(tree.join("sub")).unwrap();
    std::fs::write(tree.join("one.txt"), "alpha beta gamma").unwrap();
    std::fs::write(tree.join("sub/two.txt"), "alpha beta delta").unwrap();
    let out = simhashdb(&["fingerprint", "--verbose", path_str(&tree)], "");
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 3);
    assert!(lines[0].contains("one.txt\t") && lines[1].contains("two.txt\t"));
    assert_eq!(
        lines[0].split('\t').nth(2).unwrap().len(),
        64,
        "the 64 bits"
    );
    assert!(lines[2].starts_with("distance\t"));
}

#[test]
fn fingerprint_names_bad_documents_or_counts_them_when_skipping() {
    let cases = [
        (
            "{\"id\": \"a\", \"text\": \"x y z\"}\nnot json\n",
            "<stdin>:2: not a JSON object",
        ),
        ("{\"text\": \"x y z\"}\n", "<stdin>:1: no \"id\" field"),
        (
            "{\"id\": [1], \"text\": \"x y z\"}\n",
            "must be a string or an integer",
        ),
        ("{\"id\": \"a\", \"text\": 5}\n", "field is not a string"),
        ("{\"id\": \"a\", \"text\": \" ... \"}\n", "has no token"),
    ];
    for (input, says) in cases {
        let out = simhashdb(&["fingerprint", "--format", "jsonl"], input);
        assert_eq!(out.status.code(), Some(1), "{input}");
        assert!(
            text(&out.stderr).contains(says),
            "{input}: {}",
            text(&out.stderr)
        );
    }
    let out = simhashdb(
        &["fingerprint", "--format", "jsonl", "--skip-invalid"],
        "{\"id\": \"a\", \"text\": \"x y z\"}\nnot json\n{\"id\": \"b\"}\n",
    );
    assert!(out.status.success());
    assert_eq!(text(&out.stdout).lines().count(), 1);
    assert!(text(&out.stderr).contains("skipped 2 invalid documents"));
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.txt");
    std::fs::write(&bad, b"ok \xff\xfe").unwrap();
    let out = simhashdb(&["fingerprint", path_str(&bad)], "");
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("not valid UTF-8"),
        "{}",
        text(&out.stderr)
    );
    let out = simhashdb(&["fingerprint", path_str(&dir.path().join("missing"))], "");
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("missing"));
    let out = simhashdb(&["fingerprint", "--scheme", "minhash"], "");
    assert_eq!(out.status.code(), Some(2), "bad usage");
    assert!(text(&out.stderr).contains("unknown scheme"));
}

#[test]
fn audit_verify_text_keeps_pairs_at_the_jaccard_threshold() {
    let dir = tempfile::tempdir().unwrap();
    let corpus = dir.path().join("docs.jsonl");
    let words: Vec<String> = (0..40).map(|i| format!("w{i}")).collect();
    let base = words.join(" ");
    let mut edited = words.clone();
    edited[39] = "other".into();
    std::fs::write(
        &corpus,
        format!(
            "{{\"id\":\"a\",\"text\":\"{base}\"}}\n{{\"id\":\"b\",\"text\":\"{base}\"}}\n{{\"id\":\"c\",\"text\":\"{}\"}}\n",
            edited.join(" ")
        ),
    )
    .unwrap();
    let store = dir.path().join("s");
    let s = path_str(&store);
    simhashdb(&["init", s], "");
    // a and b are equal; c gets a fingerprint 1 bit away whatever its text.
    simhashdb(
        &["insert", s],
        "a\t00000000000000f0\nb\t00000000000000f0\nc\t00000000000000f1\n",
    );
    let out = simhashdb(
        &[
            "audit",
            s,
            "--verify-text",
            path_str(&corpus),
            "--min-jaccard",
            "0.95",
        ],
        "",
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout),
        "a\tb\t0\t1.000000\n",
        "c: J = 37/39 < 0.95"
    );
    let out = simhashdb(
        &[
            "audit",
            s,
            "--verify-text",
            path_str(&corpus),
            "--min-jaccard",
            "0.9",
        ],
        "",
    );
    assert_eq!(text(&out.stdout).lines().count(), 3);
    let out = simhashdb(&["audit", s, "--min-jaccard", "0.9"], "");
    assert_eq!(
        out.status.code(),
        Some(2),
        "--min-jaccard needs --verify-text"
    );
    std::fs::write(&corpus, "{\"id\":\"a\",\"text\":\"x\"}\n").unwrap();
    let out = simhashdb(&["audit", s, "--verify-text", path_str(&corpus)], "");
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("no text for document"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn audit_verify_text_reads_a_directory_of_text_files() {
    let dir = tempfile::tempdir().unwrap();
    let texts = dir.path().join("texts");
    std::fs::create_dir(&texts).unwrap();
    let words: Vec<String> = (0..40).map(|i| format!("w{i}")).collect();
    let (a, b, c) = (
        texts.join("a.txt"),
        texts.join("b.txt"),
        texts.join("c.txt"),
    );
    std::fs::write(&a, words.join(" ")).unwrap();
    std::fs::write(&b, words.join(" ")).unwrap();
    std::fs::write(&c, "nothing in common with the others at all").unwrap();
    let store = dir.path().join("s");
    let s = path_str(&store);
    simhashdb(&["init", s], "");
    // Ids are the files' paths, as `insert` names text files; all three 1 bit apart.
    let batch = format!(
        "{}\t00000000000000f0\n{}\t00000000000000f1\n{}\t00000000000000f3\n",
        path_str(&a),
        path_str(&b),
        path_str(&c)
    );
    simhashdb(&["insert", s], &batch);
    let out = simhashdb(&["audit", s, "--verify-text", path_str(&texts)], "");
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout),
        format!("{}\t{}\t1\t1.000000\n", path_str(&a), path_str(&b))
    );
}
