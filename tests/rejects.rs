//! Nothing read is silently dropped: every skipped record goes to --rejects with its place
//! and reason, a mostly invalid input fails whole (--max-skipped), and an empty input to a
//! command that stores is refused unless --allow-empty says otherwise.

use std::path::Path;

use crate::util::{path_str, simhashdb, text};

fn new_store(dir: &Path) -> String {
    let store = dir.join("s");
    let out = simhashdb(&["init", path_str(&store), "--distance", "3"], "");
    assert!(out.status.success(), "{}", text(&out.stderr));
    path_str(&store).to_string()
}

fn exported(store: &str) -> String {
    text(&simhashdb(&["export", store], "").stdout)
}

/// A TSV input: `valid` documents, one invalid line every `every` lines.
fn input(lines: usize, every: usize) -> (String, Vec<usize>) {
    let mut tsv = String::new();
    let mut bad = Vec::new();
    for i in 0..lines {
        if i % every == every - 1 {
            tsv.push_str(&format!("bad-{i}\tnot a fingerprint\n"));
            bad.push(i + 1);
        } else {
            tsv.push_str(&format!(
                "d{i}\t{:016x}\n",
                (i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15)
            ));
        }
    }
    (tsv, bad)
}

#[test]
fn dedup_accounts_for_every_record() {
    let dir = tempfile::tempdir().unwrap();
    let store = new_store(dir.path());
    let (tsv, bad) = input(1000, 100);
    let file = dir.path().join("in.tsv");
    std::fs::write(&file, &tsv).unwrap();
    let (kept, dups, rejects) = (
        dir.path().join("kept.tsv"),
        dir.path().join("dups.tsv"),
        dir.path().join("rejects.tsv"),
    );
    let out = simhashdb(
        &[
            "dedup",
            &store,
            path_str(&file),
            "--output",
            path_str(&kept),
            "--duplicates",
            path_str(&dups),
            "--rejects",
            path_str(&rejects),
        ],
        "",
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let rejects = std::fs::read_to_string(&rejects).unwrap();
    let lines: Vec<Vec<&str>> = rejects
        .lines()
        .map(|l| l.splitn(4, '\t').collect())
        .collect();
    assert_eq!(lines.len(), bad.len());
    let tsv_lines: Vec<&str> = tsv.lines().collect();
    for (fields, line) in lines.iter().zip(&bad) {
        assert_eq!(fields[0], path_str(&file));
        assert_eq!(fields[1], line.to_string());
        assert!(fields[2].contains("not a fingerprint"), "{}", fields[2]);
        assert_eq!(fields[3], tsv_lines[line - 1], "the record as read");
    }
    // Kept, dropped and rejected: every line of the input once.
    let kept = std::fs::read_to_string(&kept).unwrap().lines().count();
    let dropped = std::fs::read_to_string(&dups).unwrap().lines().count();
    assert_eq!(kept + dropped + lines.len(), 1000);
}

#[test]
fn a_mostly_invalid_input_stores_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let store = new_store(dir.path());
    let out = simhashdb(&["insert", &store], "a\t0000000000000001\n");
    assert!(out.status.success());
    let before = exported(&store);
    // 20,000 invalid lines: past the default 1%.
    let all_bad: String = (0..20_000).map(|i| format!("x{i}\n")).collect();
    let file = dir.path().join("bad.tsv");
    std::fs::write(&file, &all_bad).unwrap();
    let rejects = dir.path().join("r.tsv");
    let out = simhashdb(
        &[
            "insert",
            &store,
            path_str(&file),
            "--skip-invalid",
            "--rejects",
            path_str(&rejects),
        ],
        "",
    );
    assert_eq!(out.status.code(), Some(1));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("20000 of 20000 records were invalid")
            && stderr.contains("--max-skipped 1%")
            && stderr.contains(path_str(&rejects)),
        "{stderr}"
    );
    assert_eq!(exported(&store), before);
    assert_eq!(
        std::fs::read_to_string(&rejects).unwrap().lines().count(),
        20_000
    );

    // 10 invalid of 1,000: more than 1% (10 allowed), or within a limit that is said.
    let (tsv, _) = input(1000, 100);
    std::fs::write(&file, &tsv).unwrap();
    let out = simhashdb(&["insert", &store, path_str(&file), "--skip-invalid"], "");
    assert!(out.status.success(), "{}", text(&out.stderr));
    let (tsv, _) = input(1000, 90);
    std::fs::write(&file, &tsv).unwrap();
    let before = exported(&store);
    let out = simhashdb(&["insert", &store, path_str(&file), "--skip-invalid"], "");
    assert_eq!(out.status.code(), Some(1), "11 of 1000 is past 1%");
    assert_eq!(exported(&store), before);
    for (limit, ok) in [("11", true), ("10", false), ("2%", true), ("0", false)] {
        let out = simhashdb(
            &["insert", &store, path_str(&file), "--max-skipped", limit],
            "",
        );
        assert_eq!(
            out.status.success(),
            ok,
            "--max-skipped {limit}: {}",
            text(&out.stderr)
        );
    }
    let out = simhashdb(
        &["insert", &store, path_str(&file), "--max-skipped", "1.5"],
        "",
    );
    assert_eq!(out.status.code(), Some(2), "a bad limit is a usage error");

    // Queries too.
    let queries = dir.path().join("q.txt");
    std::fs::write(&queries, "0000000000000001\nnope\n").unwrap();
    let out = simhashdb(
        &[
            "query",
            &store,
            "--input",
            path_str(&queries),
            "--rejects",
            path_str(&rejects),
        ],
        "",
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let rejected = std::fs::read_to_string(&rejects).unwrap();
    assert!(
        rejected.starts_with(&format!("{}\t2\t", path_str(&queries))),
        "{rejected}"
    );
    assert!(rejected.ends_with("\tnope\n"), "{rejected}");
}

#[test]
fn an_empty_input_is_refused_unless_allowed() {
    let dir = tempfile::tempdir().unwrap();
    let store = new_store(dir.path());
    let empty = dir.path().join("empty.tsv");
    std::fs::write(&empty, "\n\n").unwrap();
    // Directories with nothing to read: none of their files, or only hidden ones.
    let (bare, hidden) = (dir.path().join("bare"), dir.path().join("hidden"));
    std::fs::create_dir_all(bare.join("sub")).unwrap();
    std::fs::create_dir(&hidden).unwrap();
    std::fs::write(hidden.join("_SUCCESS"), "").unwrap();
    std::fs::write(hidden.join(".part-0.crc"), "a\t0000000000000001\n").unwrap();
    let inputs = [
        (&empty, "holds no documents"),
        (&bare, "holds no files to read"),
        (&hidden, "holds no files to read"),
    ];
    for (args, problem) in inputs.iter().flat_map(|&(input, problem)| {
        [
            (vec!["insert", &store, path_str(input)], problem),
            (vec!["dedup", &store, path_str(input), "--insert"], problem),
        ]
    }) {
        let out = simhashdb(&args, "");
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        let stderr = text(&out.stderr);
        assert!(
            stderr.contains(&format!("{}: {problem}", args[2])) && stderr.contains("--allow-empty"),
            "{stderr}"
        );
        let mut allowed = args.clone();
        allowed.push("--allow-empty");
        let out = simhashdb(&allowed, "");
        assert!(out.status.success(), "{}", text(&out.stderr));
        assert!(
            text(&out.stderr).contains("warning:"),
            "{}",
            text(&out.stderr)
        );
    }
    assert_eq!(exported(&store), "");
    // Commands that only read take an empty input, with a warning.
    for input in [&empty, &bare] {
        for args in [
            vec!["dedup", &store, path_str(input)],
            vec!["query", &store, "--input", path_str(input)],
            vec!["find-all", path_str(input)],
        ] {
            let out = simhashdb(&args, "");
            assert!(out.status.success(), "{}", text(&out.stderr));
            let stderr = text(&out.stderr);
            assert!(
                stderr.contains("warning:") && stderr.contains("holds no"),
                "{args:?}: {stderr}"
            );
        }
    }
}

#[test]
fn a_refused_dedup_makes_no_rejects_file() {
    let dir = tempfile::tempdir().unwrap();
    let store = new_store(dir.path());
    let (tsv, _) = input(100, 10);
    let file = dir.path().join("in.tsv");
    std::fs::write(&file, &tsv).unwrap();
    let rejects = dir.path().join("rejects.tsv");
    let missing = dir.path().join("no-store");
    // A distance past the store's K, and a store that is not there, with and without
    // --insert: refused before anything is read, and the rejects file is not made.
    for (store, distance) in [(store.as_str(), "9"), (path_str(&missing), "3")] {
        for insert in [false, true] {
            let mut args = vec![
                "dedup",
                store,
                path_str(&file),
                "--distance",
                distance,
                "--rejects",
                path_str(&rejects),
            ];
            if insert {
                args.push("--insert");
            }
            let out = simhashdb(&args, "");
            assert!(!out.status.success(), "{args:?}");
            assert!(!rejects.exists(), "{args:?} left {}", rejects.display());
        }
    }
}
