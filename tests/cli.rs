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
            "less than --blocks",
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
        assert_eq!(out.status.code(), Some(1));
        assert!(text(&out.stderr).contains(says), "{}", text(&out.stderr));
    }
    std::fs::create_dir_all(&store).unwrap();
    std::fs::write(store.join("x"), "x").unwrap();
    let out = simhashdb(&["init", s], "");
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("not empty"));
    let out = simhashdb(&["init", s, "--blocks", "nope"], "");
    assert_eq!(out.status.code(), Some(2), "clap usage errors exit 2");
}

#[test]
fn insert_then_query_prints_the_documented_columns() {
    let (_dir, store) = new_store(&[]);
    let out = simhashdb(
        &["insert", &store],
        "a\t0123456789abcdef\nb\t0x0123456789abcdee\nc\t81985529216486895\n",
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
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("exceeds the store's maximum distance 3"));
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
    assert_eq!(text(&out.stdout), "a\tb\t1\na\tc\t0\nb\tc\t1\n");
    assert!(text(&out.stderr).contains("4 documents, distance 3: 3 pairs, 1 clusters, largest 3"));

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
        "1\ta\n1\tc\n2\tb\n3\tz\n"
    );
    let out = simhashdb(&["audit", &store, "--json", "--distance", "1"], "");
    let first = text(&out.stdout).lines().next().unwrap().to_string();
    assert_eq!(first, r#"{"a":"a","b":"b","distance":1}"#);

    let out = simhashdb(&["audit", &store, "--distance", "4"], "");
    assert_eq!(out.status.code(), Some(1));
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
    assert_eq!(out.status.code(), Some(1));
    let out = simhashdb(&["find-all"], "0123\nnot-a-fingerprint\n");
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("<stdin>:2"),
        "{}",
        text(&out.stderr)
    );
}
