//! Text in, near-duplicates out: the store's scheme chosen at `init`, recorded on disk, and
//! used by `insert`, `query` and `fingerprint --store` for every input form; and every bad
//! input named.

use std::path::Path;

use simhashdb::{Scheme, Snapshot};

use crate::util::{path_str, simhashdb, text};

const FOX: &str = "The quick brown fox jumps over the lazy dog";

fn ok(args: &[&str], stdin: &str) -> String {
    let out = simhashdb(args, stdin);
    assert!(out.status.success(), "{args:?}: {}", text(&out.stderr));
    text(&out.stdout)
}

fn fails(args: &[&str], stdin: &str, says: &str) {
    fails_with(1, args, stdin, says);
}

/// A call that is bad usage: exit code 2.
fn misused(args: &[&str], stdin: &str, says: &str) {
    fails_with(2, args, stdin, says);
}

fn fails_with(code: i32, args: &[&str], stdin: &str, says: &str) {
    let out = simhashdb(args, stdin);
    assert_eq!(
        out.status.code(),
        Some(code),
        "{args:?} should fail with {code}"
    );
    assert!(
        text(&out.stderr).contains(says),
        "{args:?}: expected {says:?} in {}",
        text(&out.stderr)
    );
}

fn fingerprint_of(scheme: &str, doc: &str) -> String {
    let out = ok(
        &["fingerprint", "--scheme", scheme, "--format", "text"],
        doc,
    );
    out.trim_end().split('\t').nth(1).unwrap().to_string()
}

#[test]
fn init_records_the_scheme_and_chooses_blocks_for_the_size() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("s");
    let s = path_str(&store);
    ok(
        &[
            "init",
            s,
            "--scheme",
            "chars",
            "--shingle",
            "4",
            "--weight",
            "count",
            "--expected-size",
            "1e6",
        ],
        "",
    );
    let snapshot = Snapshot::open(&store).unwrap();
    assert_eq!(
        snapshot.scheme().unwrap().map(|s| s.name()).as_deref(),
        Some("chars-4-count")
    );
    assert_eq!(
        (snapshot.settings().blocks, snapshot.settings().distance),
        (4, 3)
    );
    assert!(ok(&["stats", s], "").contains("scheme\tchars-4-count"));

    // The default store: m = 5 at K = 3, the default scheme, no warning.
    let default = dir.path().join("d");
    let out = simhashdb(&["init", path_str(&default)], "");
    assert!(out.status.success());
    assert!(
        !text(&out.stderr).contains("warning"),
        "{}",
        text(&out.stderr)
    );
    assert_eq!(Snapshot::open(&default).unwrap().settings().blocks, 5);
    let snapshot = Snapshot::open(&default).unwrap();
    assert_eq!(snapshot.scheme().unwrap(), Some(Scheme::default()));

    // Impractical settings are warned about, not refused.
    let wide = dir.path().join("w");
    let out = simhashdb(
        &["init", path_str(&wide), "--blocks", "12", "--distance", "8"],
        "",
    );
    assert!(out.status.success());
    assert!(
        text(&out.stderr).contains("warning: M=12 K=8 keeps 495 tables"),
        "{}",
        text(&out.stderr)
    );
    let short = dir.path().join("p");
    let out = simhashdb(
        &["init", path_str(&short), "--blocks", "4", "--distance", "3"],
        "",
    );
    assert!(
        text(&out.stderr).contains("16-bit prefix"),
        "{}",
        text(&out.stderr)
    );

    for (args, says) in [
        (vec!["--scheme", "minhash"], "unknown scheme"),
        (
            vec!["--scheme", "seomoz", "--shingle", "3"],
            "fixed shingles",
        ),
        (vec!["--weight", "tfidf"], "unknown weighting"),
        (vec!["--shingle", "0"], "at least 1"),
        (vec!["--expected-size", "lots"], "not a number"),
        (vec!["--distance", "0"], "at least 1"),
        (vec!["--distance", "57"], "largest possible distance is 56"),
    ] {
        let bad = dir.path().join("bad");
        let mut all = vec!["init", path_str(&bad)];
        all.extend(args.iter().copied());
        let out = simhashdb(&all, "");
        assert_ne!(out.status.code(), Some(0), "{args:?}");
        assert!(
            text(&out.stderr).contains(says),
            "{args:?}: {}",
            text(&out.stderr)
        );
        assert!(
            !bad.join("CATALOG").exists(),
            "{args:?} left a store behind"
        );
    }
}

#[test]
fn text_goes_in_and_out_in_every_form_with_the_stores_scheme() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("s");
    let s = path_str(&store);
    ok(&["init", s, "--scheme", "seomoz"], "");
    let fox = fingerprint_of("seomoz", FOX);
    assert_eq!(
        fox, "a103cb172b8a9085",
        "the store's scheme, not the default"
    );

    let tree = dir.path().join("tree");
    std::fs::create_dir_all(tree.join("sub")).unwrap();
    std::fs::write(tree.join("fox.txt"), FOX).unwrap();
    std::fs::write(tree.join("sub/other"), "one two three four five six").unwrap();
    let jsonl = dir.path().join("docs.jsonl");
    std::fs::write(
        &jsonl,
        format!(
            "{{\"id\": 7, \"body\": \"{FOX}\"}}\n{{\"id\": \"given\", \"fingerprint\": \"0x5\"}}\n"
        ),
    )
    .unwrap();
    let plain = dir.path().join("plain");
    std::fs::write(&plain, FOX).unwrap();
    let out = ok(
        &[
            "insert",
            s,
            path_str(&tree),
            path_str(&jsonl),
            "--text-field",
            "body",
            "--id",
            "cli",
            "--text",
            FOX,
            "--json",
        ],
        "",
    );
    let summary: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(summary["inserted"], 5, "{out}");
    ok(&["insert", s, "--format", "text", path_str(&plain)], "");
    ok(
        &["insert", s, "--format", "text", "-", "--label", "stdin"],
        FOX,
    );

    let tree_fox = format!("{}", tree.join("fox.txt").display());
    let plain_id = path_str(&plain).to_string();
    let mut expected: Vec<String> = ["7", "<stdin>", "cli", &plain_id, &tree_fox]
        .iter()
        .map(|id| format!("{fox}\t{id}\t{fox}\t0"))
        .collect();
    expected.sort();
    let sorted = |out: String| {
        let mut lines: Vec<String> = out.lines().map(String::from).collect();
        lines.sort();
        lines
    };
    // --text, a fingerprint argument, and a fingerprint list all find the same documents.
    assert_eq!(
        sorted(ok(&["query", s, "--text", FOX, "--distance", "0"], "")),
        expected
    );
    assert_eq!(
        sorted(ok(&["query", s, &fox, "--distance", "0"], "")),
        expected
    );
    assert_eq!(
        sorted(ok(
            &["query", s, "--input", "-", "--distance", "0"],
            &format!("{fox}\n")
        )),
        expected
    );
    // Documents as queries: QUERY is the document's id.
    let out = ok(
        &["query", s, "--input", path_str(&tree), "--distance", "0"],
        "",
    );
    assert!(
        out.lines()
            .any(|l| l.starts_with(&format!("{tree_fox}\tcli\t{fox}\t0"))),
        "{out}"
    );
    assert!(out.lines().all(|l| !l.contains("sub/other\t7")));
    let out = ok(
        &["query", s, "--input", "-", "--distance", "0", "--json"],
        &format!("{{\"id\": \"q\", \"text\": \"{FOX}\"}}\n"),
    );
    let first: serde_json::Value = serde_json::from_str(out.lines().next().unwrap()).unwrap();
    assert_eq!(first["query"], "q");
    assert_eq!(first["query_fingerprint"], fox.as_str());
    let out = ok(&["query", s, "--input", "-", "--distance", "0"], "q\t0x5\n");
    assert_eq!(out, "q\tgiven\t0000000000000005\t0\n");

    // fingerprint --store uses the store's scheme.
    let out = ok(&["fingerprint", "--store", s, "--format", "text"], FOX);
    assert_eq!(out, format!("<stdin>\t{fox}\n"));
    let out = simhashdb(&["fingerprint", "--store", s, "--scheme", "words"], FOX);
    assert_eq!(out.status.code(), Some(2), "--store and --scheme conflict");
}

#[test]
fn bad_documents_are_named_or_counted_and_store_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("s");
    let s = path_str(&store);
    ok(&["init", s], "");
    let tree = dir.path().join("tree");
    std::fs::create_dir_all(&tree).unwrap();
    std::fs::write(tree.join("a"), FOX).unwrap();
    std::fs::write(tree.join("b"), b"bad \xff utf-8").unwrap();
    std::fs::write(tree.join("c"), " ... ").unwrap();
    let b = tree.join("b").display().to_string();
    let c = tree.join("c").display().to_string();
    fails(
        &["insert", s, path_str(&tree)],
        "",
        &format!("{b}: not valid UTF-8 at byte 4"),
    );
    // Two of three files invalid: past the default 1%, so the limit is said.
    let out = simhashdb(&["insert", s, path_str(&tree), "--skip-invalid"], "");
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let out = simhashdb(&["insert", s, path_str(&tree), "--max-skipped", "2"], "");
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(
        stdout.starts_with("inserted 1,") && stdout.contains("skipped 2 invalid files"),
        "{stdout}"
    );
    assert!(
        stderr.contains(&format!("skipped {c}: the document has no token")),
        "{stderr}"
    );

    for (input, says) in [
        (
            "{\"id\": \"a\"}\n",
            "<stdin>:1: no \"fingerprint\" or \"text\" field",
        ),
        ("{\"text\": \"x y\"}\n", "<stdin>:1: no \"id\" field"),
        (
            "{\"id\": 1.5, \"text\": \"x y\"}\n",
            "must be a string or an integer",
        ),
        (
            "{\"id\": \"a\", \"text\": [\"x\"]}\n",
            "the \"text\" field is not a string",
        ),
        (
            "{\"id\": \"a\", \"text\": \"!!\"}\n",
            "<stdin>:1: the document has no token",
        ),
        (
            "{\"id\": \"a\", \"text\": \"x\"}\n{\"id\": \"tab\\there\", \"text\": \"x\"}\n",
            "<stdin>:2: ",
        ),
    ] {
        fails(&["insert", s], input, says);
        fails(&["query", s, "--input", "-"], input, says);
        fails(&["fingerprint"], input, says);
    }
    misused(
        &["insert", s, "--id", "a", "--id", "b", "--text", "x"],
        "",
        "in pairs",
    );
    misused(
        &["insert", s, "--id", "a", "--text", "..."],
        "",
        "--text 1: the document has no token",
    );
    misused(
        &["insert", s, "--id", "a\tb", "--text", "fox"],
        "",
        "--id 1: the id contains a tab",
    );
    assert_eq!(
        simhashdb(&["insert", s, "--id", "a"], "").status.code(),
        Some(2)
    );
    misused(
        &["query", s, "--text", "???"],
        "",
        "--text 1: the document has no token",
    );
    fails(
        &["insert", s, path_str(&dir.path().join("missing"))],
        "",
        "missing: No such file or directory",
    );
    fails(
        &[
            "query",
            s,
            "--input",
            path_str(&tree),
            "--format",
            "fingerprints",
        ],
        "",
        "not a list of fingerprints",
    );
    // Plain text given as tsv says how to read it as text.
    let plain = dir.path().join("notes");
    std::fs::write(&plain, "just some words").unwrap();
    fails(&["insert", s, path_str(&plain)], "", "need the text format");
    // Only the one good batch is in.
    let out = ok(&["stats", s], "");
    assert!(out.contains("documents\t1\n"), "{out}");

    // A directory entry that cannot be read (a dangling link) fails the batch, naming it.
    #[cfg(unix)]
    {
        let dangling = tree.join("dangling");
        std::os::unix::fs::symlink(dir.path().join("nowhere"), &dangling).unwrap();
        fails(
            &["insert", s, path_str(&tree), "--skip-invalid"],
            "",
            &format!("{}: No such file or directory", dangling.display()),
        );
        std::fs::remove_file(&dangling).unwrap();
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let locked = tree.join("locked");
        std::fs::create_dir(&locked).unwrap();
        std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o000)).unwrap();
        // Root reads any directory: only check the error when the permission holds.
        if std::fs::read_dir(&locked).is_err() {
            fails(
                &["insert", s, path_str(&tree), "--skip-invalid"],
                "",
                &format!("{}: Permission denied", locked.display()),
            );
        }
        std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
}

#[test]
fn a_scheme_the_build_does_not_know_is_refused_and_v1_stores_have_none() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("s");
    let s = path_str(&store);
    ok(&["init", s], "");
    // Rename the recorded scheme in place (same length, so the bincode payload keeps its
    // shape) and seal the catalog again (docs/format.md).
    let path = store.join("CATALOG");
    let mut bytes = std::fs::read(&path).unwrap();
    let (old, new) = (b"words-2-minhash", b"minhash-99-sets");
    let at = bytes.windows(old.len()).position(|w| w == old).unwrap();
    bytes[at..at + old.len()].copy_from_slice(new);
    let end = bytes.len() - 4;
    let crc = crc32fast::hash(&bytes[..end]);
    bytes[end..].copy_from_slice(&crc.to_le_bytes());
    std::fs::write(&path, &bytes).unwrap();
    assert!(Snapshot::open(&store).unwrap().scheme().is_err());
    fails(
        &["insert", s, "--id", "a", "--text", FOX],
        "",
        "\"minhash-99-sets\" is not known to this build",
    );
    fails(&["query", s, "--text", FOX], "", "not known to this build");
    fails(
        &["fingerprint", "--store", s],
        FOX,
        "not known to this build",
    );
    // Fingerprints still go in and out: the scheme only concerns text.
    ok(&["insert", s], "a\t0x1\n");
    assert_eq!(
        ok(&["query", s, "0x1"], ""),
        "0000000000000001\ta\t0000000000000001\t0\n"
    );

    let v1 = dir.path().join("v1");
    crate::compat::copy_dir(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/format-v1/store"),
        &v1,
    );
    ok(&["migrate", path_str(&v1)], "");
    fails(
        &["insert", path_str(&v1), "--id", "a", "--text", FOX],
        "",
        "records no fingerprint scheme",
    );
    fails(
        &["query", path_str(&v1), "--text", FOX],
        "",
        "records no fingerprint scheme",
    );
    fails(
        &["insert", path_str(&v1)],
        &format!("{{\"id\": \"a\", \"text\": \"{FOX}\"}}\n"),
        "no fingerprint scheme",
    );
}

#[test]
fn compressed_input_and_a_byte_order_mark_read_as_plain_text() {
    use std::io::Write;
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("s");
    let s = path_str(&store);
    ok(&["init", s], "");
    let lines = "\u{feff}a\t0x10\nb\t0x11\n";
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(b"c\t0x12\n").unwrap();
    std::fs::write(dir.path().join("c.tsv.gz"), gz.finish().unwrap()).unwrap();
    let zst = zstd::encode_all(&b"{\"id\": \"d\", \"fingerprint\": \"0x13\"}\n"[..], 3).unwrap();
    std::fs::write(dir.path().join("d.data"), zst).unwrap();
    ok(&["insert", s], lines);
    ok(&["insert", s, path_str(&dir.path().join("c.tsv.gz"))], "");
    ok(&["insert", s, path_str(&dir.path().join("d.data"))], "");
    let out = ok(&["get", s, "a", "c", "d"], "");
    assert_eq!(
        out,
        "a\t0000000000000010\t1\nc\t0000000000000012\t2\nd\t0000000000000013\t3\n"
    );
    let gz = std::fs::read(dir.path().join("c.tsv.gz")).unwrap();
    let cut = dir.path().join("cut.tsv.gz");
    std::fs::write(&cut, &gz[..gz.len() - 6]).unwrap();
    fails(&["insert", s, path_str(&cut)], "", "cut.tsv.gz: ");
    assert!(
        ok(&["get", s, "c"], "").ends_with("\t2\n"),
        "nothing of the cut file went in"
    );
}

#[test]
fn errors_name_each_cause_once_and_negative_numbers_get_a_plain_refusal() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("s");
    let s = path_str(&store);
    ok(&["init", s], "");
    let file = dir.path().join("plain");
    std::fs::write(&file, "x").unwrap();
    let inside = file.join("child.tsv");
    let out = simhashdb(&["insert", s, path_str(&inside)], "");
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
    let err = text(&out.stderr);
    assert_eq!(err.matches("os error 20").count(), 1, "{err}");
    // A negative distance is the library's to refuse (as the server and Python do).
    let out = simhashdb(&["query", s, "--distance", "-1", "0"], "");
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    let err = text(&out.stderr);
    assert!(err.contains("invalid --distance: -1 is negative"), "{err}");
    let out = simhashdb(&["init", "x", "--blocks", "-3"], "");
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    let err = text(&out.stderr);
    assert!(err.contains("invalid value '-"), "{err}");
    assert!(
        !err.contains("-- -"),
        "no advice to pass it after '--': {err}"
    );
}

#[test]
fn every_json_output_is_json_lines() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("s");
    let s = path_str(&store);
    ok(&["init", s], "");
    ok(&["insert", s], "a\t0x10\n");
    for (args, stdin) in [
        (vec!["stats", s, "--json"], ""),
        (vec!["migrate", s, "--json"], ""),
        (vec!["fingerprint", "--json"], FOX),
        (vec!["batches", s, "--json"], ""),
        (vec!["verify", s, "--json"], ""),
    ] {
        let out = ok(&args, stdin);
        assert_eq!(out.lines().count(), 1, "{args:?}: {out}");
        let v: serde_json::Value = serde_json::from_str(out.trim_end()).unwrap();
        assert!(v.is_object(), "{args:?}");
    }
    let migrate: serde_json::Value =
        serde_json::from_str(&ok(&["migrate", s, "--json"], "")).unwrap();
    assert_eq!(migrate["migrated"], false);
    let fp: serde_json::Value = serde_json::from_str(&ok(&["fingerprint", "--json"], FOX)).unwrap();
    assert_eq!(fp["id"], "<stdin>");
    assert_eq!(fp["fingerprint"].as_str().unwrap().len(), 16);
}

#[test]
fn find_all_reads_documents_picks_blocks_and_allows_distance_0() {
    let docs = "a\t0x10\nb\t0x10\nc\t0x11\nd\t0xff00\n";
    assert_eq!(ok(&["find-all", "--distance", "0"], docs), "a\tb\t0\n");
    assert_eq!(ok(&["find-all"], docs), "a\tb\t0\na\tc\t1\nb\tc\t1\n");
    let out = simhashdb(&["find-all", "--format-ignored-by-nothing"], docs);
    assert_eq!(out.status.code(), Some(2));
    // Without --blocks, K = 8 works: the blocks are chosen for it.
    assert_eq!(
        ok(&["find-all", "--distance", "8"], "0x10\n0x11\n0x12\n"),
        "0000000000000010\t0000000000000011\t1\n0000000000000010\t0000000000000012\t1\n\
         0000000000000011\t0000000000000012\t2\n"
    );
    assert_eq!(ok(&["find-all", "--distance", "0"], "0x10\n0x10\n"), "");
    let out = simhashdb(&["find-all", "--distance", "4", "--blocks", "4"], "0x10\n");
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn query_output_goes_to_the_file_named() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("s");
    let s = path_str(&store);
    ok(&["init", s], "");
    ok(&["insert", s], "a\t0x10\n");
    let file = dir.path().join("matches.tsv");
    assert_eq!(
        ok(&["query", s, "0x11", "--output", path_str(&file)], ""),
        ""
    );
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        "0000000000000011\ta\t0000000000000010\t1\n"
    );
    fails(
        &[
            "query",
            s,
            "0x11",
            "--output",
            path_str(&dir.path().join("no/such/dir")),
        ],
        "",
        "cannot create",
    );
}

#[test]
fn init_takes_a_full_scheme_name_and_refuses_it_with_shingle_flags() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("s");
    let s = path_str(&store);
    ok(&["init", s, "--scheme", "words-3-set"], "");
    let scheme = Snapshot::open(&store).unwrap().scheme().unwrap();
    assert_eq!(scheme, Some(Scheme::from_name("words-3-set").unwrap()));
    // The same text fingerprints alike through the store and through the scheme's parts.
    let through_parts = fingerprint_of("words", "one two three four five six");
    let doc = "one two three four five six";
    let out = ok(&["fingerprint", "--store", s, "--format", "text"], doc);
    assert_ne!(out.trim_end().split('\t').nth(1).unwrap(), through_parts);
    let out = ok(
        &[
            "fingerprint",
            "--scheme",
            "words",
            "--shingle",
            "3",
            "--weight",
            "set",
            "--format",
            "text",
        ],
        doc,
    );
    let by_flags = out.trim_end().split('\t').nth(1).unwrap().to_string();
    let out = ok(&["fingerprint", "--store", s, "--format", "text"], doc);
    assert_eq!(out.trim_end().split('\t').nth(1).unwrap(), by_flags);
    let other = dir.path().join("t");
    misused(
        &[
            "init",
            path_str(&other),
            "--scheme",
            "words-3-set",
            "--shingle",
            "2",
        ],
        "",
        "names its shingle and weight already",
    );
}
