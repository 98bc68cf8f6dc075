//! The lifecycle commands from the outside: delete, expire, batches, compact, verify, migrate,
//! a full disk, a second writer, and readers during a compaction.

use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};

use crate::util::{path_str, simhashdb, text, tree};

fn store_with_batches() -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("s");
    let s = path_str(&store).to_string();
    assert!(simhashdb(&["init", &s, "--shards", "4"], "")
        .status
        .success());
    for day in 1..=3u64 {
        let lines: String = (0..50u64)
            .map(|i| {
                format!(
                    "day{day}-{i}\t{:016x}\n",
                    (day * 100 + i).wrapping_mul(0x9E37_79B9_7F4A_7C15)
                )
            })
            .collect();
        let out = simhashdb(&["insert", &s, "--label", &format!("day{day}")], &lines);
        assert!(out.status.success(), "{}", text(&out.stderr));
    }
    (dir, s)
}

#[test]
fn delete_expire_and_batches_keep_their_columns() {
    let (_dir, s) = store_with_batches();
    let out = simhashdb(
        &["delete", &s, "day1-0", "nope", "--input", "-"],
        "day1-1\n{\"id\": \"day1-2\"}\nday1-3\tffff\n\n",
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "deleted 4, not found 1 (batch 4)\n");
    let out = simhashdb(
        &[
            "query",
            &s,
            &format!("{:016x}", 100u64.wrapping_mul(0x9E37_79B9_7F4A_7C15)),
        ],
        "",
    );
    assert!(
        !text(&out.stdout).contains("day1-0"),
        "a deleted id stops matching at once"
    );

    let out = simhashdb(&["expire", &s, "--batch", "day2", "--json"], "");
    assert!(out.status.success(), "{}", text(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["deleted"], 50);
    assert_eq!(v["expired_batches"], serde_json::json!([2]));

    let out = simhashdb(&["batches", &s], "");
    let lines: Vec<Vec<String>> = text(&out.stdout)
        .lines()
        .map(|l| l.split('\t').map(str::to_string).collect())
        .collect();
    assert_eq!(
        lines[0].join(" "),
        "batch kind committed_utc label inserted replaced unchanged deleted expired_by"
    );
    assert_eq!(lines.len(), 6);
    assert_eq!(lines[2][1], "insert");
    assert_eq!(lines[2][8], "5", "batch 2 was expired by batch 5");
    assert_eq!(lines[4][1..2], ["delete".to_string()]);
    assert_eq!(lines[4][7], "4");
    assert_eq!(lines[5][1], "expire");
    assert!(
        lines[1][2].ends_with('Z') && lines[1][2].len() == 20,
        "{:?}",
        lines[1]
    );

    // Expiring by date: everything was committed before now (a second later).
    std::thread::sleep(std::time::Duration::from_millis(1100));
    let out = simhashdb(&["expire", &s, "--before", "0d"], "");
    assert!(out.status.success(), "{}", text(&out.stderr));
    let out = simhashdb(&["stats", &s, "--json"], "");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["documents"], 0);

    // An integer id, which insert takes as its decimal text, deletes from the same line.
    let line = "{\"id\": 7, \"fingerprint\": 5}\n";
    let out = simhashdb(&["insert", &s, "--format", "jsonl"], line);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let out = simhashdb(&["delete", &s, "--input", "-"], line);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stdout).starts_with("deleted 1, not found 0 (batch "));
}

#[test]
fn lifecycle_commands_refuse_bad_input_by_name() {
    let (_dir, s) = store_with_batches();
    let cases: &[(&[&str], &str, &str)] = &[
        (&["expire", &s], "", "--before"),
        (&["expire", &s, "--before", "yesterday"], "", "not a date"),
        (
            &["expire", &s, "--before", "1d", "--batch", "x"],
            "",
            "cannot be used with",
        ),
        (
            &["expire", &s, "--batch", "no-such-label"],
            "",
            "no insert batch has the label",
        ),
        (&["delete", &s], "", "no ids to delete"),
        (
            &["delete", &s, "--input", "/no/such/file"],
            "",
            "/no/such/file",
        ),
        (
            &["delete", &s, "--input", "-"],
            "ok\n{\"id\": 5.5}\n",
            "<stdin>:2",
        ),
        (&["delete", &s, "a\tb"], "", "tab"),
        (&["compact", "/no/such/store"], "", "not a simhashdb store"),
        (&["migrate", "/no/such/store"], "", "not a simhashdb store"),
    ];
    for (args, stdin, expected) in cases {
        let out = simhashdb(args, stdin);
        assert!(!out.status.success(), "{args:?} succeeded");
        assert!(
            text(&out.stderr).contains(expected),
            "{args:?}: {}",
            text(&out.stderr)
        );
    }
    // Nothing changed: 150 documents, three insert batches.
    let out = simhashdb(&["stats", &s, "--json"], "");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["documents"], 150);
}

#[test]
fn compact_reports_bytes_and_verify_exits_0_1_2() {
    let (dir, s) = store_with_batches();
    assert!(simhashdb(&["delete", &s, "day1-0"], "").status.success());
    let out = simhashdb(&["compact", &s, "--json"], "");
    assert!(out.status.success(), "{}", text(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["runs_before"], 4);
    assert_eq!(v["runs_after"], 1);
    assert_eq!(v["dropped_fingerprints"], 1);
    assert!(v["bytes_after"].as_u64().unwrap() < v["bytes_before"].as_u64().unwrap());

    let out = simhashdb(&["verify", &s], "");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("0 findings"));
    let out = simhashdb(&["verify", &s, "--deep", "--json"], "");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));

    // Damage: one byte of the catalog's payload.
    let catalog = dir.path().join("s/CATALOG");
    let mut bytes = std::fs::read(&catalog).unwrap();
    bytes[18] ^= 1;
    std::fs::write(&catalog, bytes).unwrap();
    let out = simhashdb(&["verify", &s], "");
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("CATALOG\t"),
        "{}",
        text(&out.stdout)
    );

    let out = simhashdb(&["verify", "/no/such/store"], "");
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn migrate_upgrades_the_v1_fixture_once() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("s");
    crate::compat::copy_dir(
        &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/format-v1/store"),
        &store,
    );
    let s = path_str(&store);
    let out = simhashdb(&["query", s, "0"], "");
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains(&format!("upgrade required: run `simhashdb migrate {s}`")),
        "{}",
        text(&out.stderr)
    );
    let out = simhashdb(&["migrate", s], "");
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("from format version 1 to 10"));
    let out = simhashdb(&["migrate", s], "");
    assert!(text(&out.stderr).contains("nothing to do"));
    assert_eq!(simhashdb(&["verify", s], "").status.code(), Some(0));
}

/// Runs the binary with `args` where no file may grow past `limit` bytes: writes past it fail
/// with EFBIG, as on a full disk.
pub fn with_file_limit(args: &[&str], limit: u64) -> std::process::Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_simhashdb"));
    cmd.args(args).stdout(Stdio::piped()).stderr(Stdio::piped());
    // SAFETY: setrlimit and signal are async-signal-safe and touch only the child.
    unsafe {
        cmd.pre_exec(move || {
            libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
            let limit = libc::rlimit {
                rlim_cur: limit,
                rlim_max: limit,
            };
            if libc::setrlimit(libc::RLIMIT_FSIZE, &limit) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    cmd.output().unwrap()
}

/// The entries of a store's runs directory and the bytes its files use on disk.
pub fn runs_on_disk(store: &str) -> (Vec<String>, u64) {
    use std::os::unix::fs::MetadataExt;
    let runs = std::path::Path::new(store).join("runs");
    let mut names = Vec::new();
    let mut used = 0;
    for run in std::fs::read_dir(&runs).unwrap() {
        let run = run.unwrap();
        names.push(run.file_name().to_string_lossy().into_owned());
        for file in std::fs::read_dir(run.path()).unwrap() {
            used += file.unwrap().metadata().unwrap().blocks() * 512;
        }
    }
    names.sort();
    (names, used)
}

fn tsv(prefix: &str, n: u64, multiplier: u64) -> String {
    (0..n)
        .map(|i| format!("{prefix}-{i}\t{:016x}\n", (i + 1).wrapping_mul(multiplier)))
        .collect()
}

#[test]
fn a_full_disk_fails_a_compaction_cleanly_and_the_insert_before_it_still_succeeds() {
    let dir = tempfile::tempdir().unwrap();
    let s = path_str(&dir.path().join("s")).to_string();
    assert!(
        simhashdb(&["init", &s, "--max-runs", "1", "--shards", "1"], "")
            .status
            .success()
    );
    let a = dir.path().join("a.tsv");
    let b = dir.path().join("b.tsv");
    std::fs::write(&a, tsv("a", 40_000, 0xD6E8_FEB8_6659_FD93)).unwrap();
    std::fs::write(&b, tsv("b", 40_000, 0x9E37_79B9_7F4A_7C15)).unwrap();
    assert!(simhashdb(&["insert", &s, path_str(&a)], "")
        .status
        .success());
    // Room for the batch's run, not for the run merging both: the batch commits, its
    // automatic compaction fails, and the insert still succeeds (a script must not send the
    // batch again), with a warning.
    let limit = 6 << 20;
    let out = with_file_limit(&["insert", &s, path_str(&b)], limit);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(
        err.contains("warning") && err.contains("compaction after it failed"),
        "{err}"
    );
    assert_eq!(
        text(&out.stdout),
        "inserted 40000, replaced 0, unchanged 0 (batch 2)\n"
    );
    let out = with_file_limit(&["insert", &s, path_str(&b), "--json"], limit);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        (v["batch"].clone(), v["unchanged"].clone()),
        (serde_json::Value::Null, 40000.into())
    );
    assert!(
        v["compaction_failure"]
            .as_str()
            .unwrap()
            .contains("File too large"),
        "{v}"
    );
    let before = runs_on_disk(&s);
    assert_eq!(before.0.len(), 2, "the failed merge left no run behind");
    assert_eq!(simhashdb(&["verify", &s], "").status.code(), Some(0));

    // compact itself: fails with exit 1, and the disk holds what it held before.
    let out = with_file_limit(&["compact", &s], limit);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert!(out.stdout.is_empty());
    assert!(text(&out.stderr).contains("the compaction failed; the store is as it was"));
    assert_eq!(
        runs_on_disk(&s),
        before,
        "the failed compaction removed what it wrote"
    );
    let out = simhashdb(&["stats", &s, "--json"], "");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        (v["documents"].clone(), v["runs"].clone()),
        (80_000.into(), 2.into())
    );

    // With space again, the merge goes through; compact and stats count bytes alike.
    let out = simhashdb(&["compact", &s, "--json"], "");
    assert!(out.status.success(), "{}", text(&out.stderr));
    let compacted: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(compacted["runs_after"], 1);
    let (_, used) = runs_on_disk(&s);
    assert_eq!(
        compacted["bytes_after"], used,
        "compact reports the bytes used on disk"
    );
    assert!(compacted["file_bytes_after"].as_u64().unwrap() >= used);
}

#[test]
fn a_full_disk_fails_the_batch_and_leaves_the_store_as_it_was() {
    let (_dir, s) = store_with_batches();
    let lines: String = (0..200_000u64)
        .map(|i| format!("big-{i}\t{:016x}\n", i.wrapping_mul(0xD6E8_FEB8_6659_FD93)))
        .collect();
    let input = std::path::Path::new(&s).with_file_name("big.tsv");
    std::fs::write(&input, lines).unwrap();
    // One run, and runs of 40,000 documents: the disk fills after some runs were written.
    for run_documents in ["10000000", "40000"] {
        // No file may grow past 2 MiB: writes past it fail with EFBIG, as on a full disk.
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_simhashdb"));
        cmd.args([
            "insert",
            &s,
            path_str(&input),
            "--run-documents",
            run_documents,
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
        // SAFETY: setrlimit and signal are async-signal-safe and touch only the child.
        unsafe {
            cmd.pre_exec(|| {
                libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
                let limit = libc::rlimit {
                    rlim_cur: 2 << 20,
                    rlim_max: 2 << 20,
                };
                if libc::setrlimit(libc::RLIMIT_FSIZE, &limit) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let out = cmd.output().unwrap();
        assert!(!out.status.success());
        let err = text(&out.stderr);
        assert!(
            err.contains("the batch was not inserted") && err.contains("runs/"),
            "{err}"
        );
        assert_eq!(simhashdb(&["verify", &s], "").status.code(), Some(0));
        let out = simhashdb(&["stats", &s, "--json"], "");
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(v["documents"], 150);
        assert_eq!(v["batches"], 3);
        let runs = std::fs::read_dir(std::path::Path::new(&s).join("runs"))
            .unwrap()
            .count();
        assert_eq!(v["runs"], runs as u64, "the failed batch's runs are gone");
    }
    // With space again, the same batch goes in.
    let out = simhashdb(&["insert", &s, path_str(&input)], "");
    assert!(out.status.success(), "{}", text(&out.stderr));
}

#[test]
fn a_second_writer_is_refused_by_pid_and_readers_work_during_a_compaction() {
    let (_dir, s) = store_with_batches();
    let lock = simhashdb::Store::open(std::path::Path::new(&s)).unwrap();
    for args in [
        vec!["insert", &s],
        vec!["delete", &s, "x"],
        vec!["compact", &s],
        vec!["expire", &s, "--before", "1d"],
    ] {
        let out = simhashdb(&args, "a\t0\n");
        assert!(!out.status.success());
        assert!(
            text(&out.stderr).contains(&format!("store is locked by pid {}", std::process::id())),
            "{args:?}: {}",
            text(&out.stderr)
        );
    }
    drop(lock);

    // Readers in a loop while compactions and inserts replace the runs under them.
    let path = std::path::PathBuf::from(&s);
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let reader = {
        let (path, stop) = (path.clone(), stop.clone());
        std::thread::spawn(move || {
            let q = 101u64.wrapping_mul(0x9E37_79B9_7F4A_7C15);
            let mut reads = 0;
            while !stop.load(std::sync::atomic::Ordering::SeqCst) || reads == 0 {
                let snapshot = simhashdb::Snapshot::open(&path).unwrap();
                let ids: Vec<String> = snapshot
                    .query(q, 3)
                    .unwrap()
                    .into_iter()
                    .map(|m| m.id)
                    .collect();
                assert_eq!(ids, ["day1-1"]);
                assert!(snapshot.documents() >= 150);
                reads += 1;
            }
            reads
        })
    };
    for round in 0..6u64 {
        let lines: String = (0..30u64)
            .map(|i| {
                format!(
                    "extra{round}-{i}\t{:016x}\n",
                    (round << 40 | i).wrapping_mul(0xD6E8_FEB8_6659_FD93)
                )
            })
            .collect();
        assert!(simhashdb(&["insert", &s, "--no-compact"], &lines)
            .status
            .success());
        assert!(simhashdb(&["compact", &s], "").status.success());
    }
    stop.store(true, std::sync::atomic::Ordering::SeqCst);
    assert!(reader.join().unwrap() > 0);
}

#[test]
fn labels_with_control_characters_are_refused_before_anything_is_read() {
    let (_dir, s) = store_with_batches();
    for label in ["tab\there", "line\nend", "cr\r"] {
        let out = simhashdb(&["insert", &s, "--label", label], "x\t0x1\n");
        assert_eq!(out.status.code(), Some(2), "{label:?}");
        assert!(out.stdout.is_empty());
        assert!(
            text(&out.stderr).contains("--label"),
            "{}",
            text(&out.stderr)
        );
    }
    let out = simhashdb(&["batches", &s], "");
    assert_eq!(
        text(&out.stdout).lines().count(),
        4,
        "header and the three batches"
    );
}

#[test]
fn expire_records_a_batch_once_and_labels_it_with_a_date() {
    let (_dir, s) = store_with_batches();
    // A date in the future would expire every batch, those still to come too: refused,
    // naming now, with nothing changed; a dry run may look at it.
    let out = simhashdb(&["expire", &s, "--before", "2999-01-01", "--json"], "");
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(out.stdout.is_empty());
    let err = text(&out.stderr);
    assert!(
        err.contains("invalid --before: 2999-01-01T00:00:00Z is in the future (now is 20"),
        "{err}"
    );
    let count = |s: &str| {
        let out = simhashdb(&["stats", s, "--json"], "");
        serde_json::from_slice::<serde_json::Value>(&out.stdout).unwrap()["documents"].clone()
    };
    assert_eq!(count(&s), 150);
    let out = simhashdb(
        &[
            "expire",
            &s,
            "--before",
            "2999-01-01",
            "--dry-run",
            "--json",
        ],
        "",
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["expired_batches"], serde_json::json!([1, 2, 3]));
    // Now (a second after the batches' commits) takes them all, once.
    std::thread::sleep(std::time::Duration::from_millis(1100));
    let out = simhashdb(&["expire", &s, "--before", "0d", "--json"], "");
    assert!(out.status.success(), "{}", text(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["expired_batches"], serde_json::json!([1, 2, 3]));
    assert_eq!(v["deleted"], 150);
    let out = simhashdb(&["expire", &s, "--before", "0d"], "");
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "no batch matched: nothing changed\n");
    assert_eq!(text(&out.stderr), "");
    let out = simhashdb(&["batches", &s], "");
    let listing = text(&out.stdout);
    let rows: Vec<&str> = listing.lines().collect();
    assert_eq!(rows.len(), 5, "one expire row: {listing}");
    assert!(
        rows[4].starts_with("4\texpire\t") && rows[4].contains("\tbefore 20"),
        "{}",
        rows[4]
    );
}

#[test]
fn dry_runs_say_what_would_change_and_change_nothing() {
    let (dir, s) = store_with_batches();
    let files = || crate::corruption::all_files(&dir.path().join("s"));
    let before = files();
    let out = simhashdb(&["delete", &s, "day1-0", "day1-1", "nope", "--dry-run"], "");
    assert_eq!(
        text(&out.stdout),
        "would delete 2, not found 1 (dry run: nothing changed)\n"
    );
    let out = simhashdb(&["expire", &s, "--batch", "day2", "--dry-run"], "");
    assert_eq!(
        text(&out.stdout),
        "would expire batches [2]: 50 documents (dry run: nothing changed)\n"
    );
    let out = simhashdb(&["compact", &s, "--dry-run", "--json"], "");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["merged_runs"], serde_json::json!([1, 2, 3]));
    assert_eq!(
        (v["runs_before"].clone(), v["runs_after"].clone()),
        (3.into(), 1.into())
    );
    let out = simhashdb(&["compact", &s, "--if-due", "--dry-run"], "");
    assert_eq!(text(&out.stdout), "nothing to compact (dry run)\n");
    // The lock file holds the pid of the last writer; every other byte is as it was.
    let mut after = files();
    let lock = dir.path().join("s/LOCK");
    after.insert(lock.clone(), before[&lock].clone());
    assert!(after == before, "a dry run changed the store");
}

#[test]
fn get_and_export_list_stored_documents_and_export_reinserts() {
    let (dir, s) = store_with_batches();
    let out = simhashdb(&["delete", &s, "day1-0"], "");
    assert!(out.status.success());
    let out = simhashdb(&["get", &s, "day2-3", "day1-0", "day3-0"], "");
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        text(&out.stdout),
        format!(
            "day2-3\t{:016x}\t2\nday3-0\t{:016x}\t3\n",
            203u64.wrapping_mul(0x9E37_79B9_7F4A_7C15),
            300u64.wrapping_mul(0x9E37_79B9_7F4A_7C15)
        )
    );
    assert!(text(&out.stderr).contains("not stored: day1-0"));
    let out = simhashdb(&["get", &s, "day3-0", "--json"], "");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["batch"], 3);

    let exported = dir.path().join("all.tsv");
    let out = simhashdb(&["export", &s, "--output", path_str(&exported)], "");
    assert!(out.status.success(), "{}", text(&out.stderr));
    let mut lines: Vec<String> = std::fs::read_to_string(&exported)
        .unwrap()
        .lines()
        .map(String::from)
        .collect();
    lines.sort();
    assert_eq!(lines.len(), 149);
    assert!(
        lines[0].starts_with("day1-1\t") && lines[0].ends_with("\t1"),
        "{}",
        lines[0]
    );
    let jsonl = simhashdb(&["export", &s, "--format", "jsonl"], "");
    assert_eq!(text(&jsonl.stdout).lines().count(), 149);
    // What export writes, insert reads back: another store answers the same.
    let copy = path_str(&dir.path().join("copy")).to_string();
    assert!(simhashdb(&["init", &copy], "").status.success());
    let out = simhashdb(&["insert", &copy, path_str(&exported)], "");
    assert_eq!(
        text(&out.stdout),
        "inserted 149, replaced 0, unchanged 0 (batch 1)\n"
    );
    let out = simhashdb(
        &["insert", &copy, "--format", "jsonl"],
        &text(&jsonl.stdout),
    );
    assert_eq!(
        text(&out.stdout),
        "inserted 0, replaced 0, unchanged 149 (nothing changed: no batch recorded)\n"
    );
    let query = |store: &str| {
        text(&simhashdb(&["query", store, "--input", path_str(&exported)], "").stdout)
    };
    assert_eq!(query(&copy), query(&s));
}

#[test]
fn a_dry_run_leaves_every_byte_of_the_store_as_it_was_debris_included() {
    let (_dir, s) = store_with_batches();
    let store = std::path::Path::new(&s);
    // Debris a killed writer leaves: a run directory no catalog names, and the lock file a
    // writer of another process id wrote.
    let debris = store.join("runs").join("000099");
    std::fs::create_dir_all(&debris).unwrap();
    std::fs::write(debris.join("shard-000.redb"), vec![7u8; 4096]).unwrap();
    std::fs::write(store.join("LOCK"), "424242\n").unwrap();
    let before = tree(store);
    assert!(
        before.contains_key("runs/000099/shard-000.redb"),
        "{:?}",
        before.keys()
    );
    for args in [
        vec!["compact", &s, "--dry-run"],
        vec!["compact", &s, "--dry-run", "--if-due"],
        vec!["compact", &s, "--dry-run", "--json"],
        vec!["delete", &s, "day1-0", "nobody", "--dry-run"],
        vec!["expire", &s, "--batch", "day2", "--dry-run", "--json"],
        vec!["expire", &s, "--before", "0d", "--dry-run"],
        vec!["repair", &s, "--dry-run", "--json"],
    ] {
        let out = simhashdb(&args, "");
        assert!(out.status.success(), "{args:?}: {}", text(&out.stderr));
        assert!(
            text(&out.stdout).contains("dry"),
            "{args:?}: {}",
            text(&out.stdout)
        );
        assert!(tree(store) == before, "{args:?} changed the store's files");
    }
    // What they said is what a real run does: the delete finds one of the two ids.
    let out = simhashdb(
        &["delete", &s, "day1-0", "nobody", "--dry-run", "--json"],
        "",
    );
    let said: serde_json::Value = serde_json::from_str(text(&out.stdout).trim()).unwrap();
    assert_eq!(
        (said["deleted"].as_u64(), said["not_found"].as_u64()),
        (Some(1), Some(1))
    );
    // A real writer removes the debris under the lock.
    let out = simhashdb(&["delete", &s, "day1-0"], "");
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(!debris.exists());
}

#[test]
fn compacting_a_compact_store_changes_nothing() {
    let (_dir, s) = store_with_batches();
    let store = std::path::Path::new(&s);
    let out = simhashdb(&["delete", &s, "day1-0"], "");
    assert!(out.status.success(), "{}", text(&out.stderr));
    let out = simhashdb(&["compact", &s, "--json"], "");
    assert!(out.status.success(), "{}", text(&out.stderr));
    let first: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        (first["runs_before"].clone(), first["runs_after"].clone()),
        (4.into(), 1.into())
    );
    assert_eq!(
        first["dropped_documents"], 2,
        "the deleted entry and its marker"
    );
    // One run, every entry live: nothing to drop, so nothing is rewritten (the lock file
    // names each writer in turn; every other byte stays).
    let files = || {
        let mut files = tree(store);
        files.remove("LOCK");
        files
    };
    let before = files();
    let out = simhashdb(&["compact", &s, "--dry-run"], "");
    assert_eq!(text(&out.stdout), "nothing to compact (dry run)\n");
    let out = simhashdb(&["compact", &s], "");
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "nothing to compact\n");
    let out = simhashdb(&["compact", &s, "--json"], "");
    let again: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        (again["merged_runs"].clone(), again["runs_after"].clone()),
        (0.into(), 1.into())
    );
    // Nothing due: --json still prints the summary's shape, not text.
    let out = simhashdb(&["compact", &s, "--if-due", "--json"], "");
    let due: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(due, again.clone());
    assert!(files() == before, "a compact store was rewritten");
    let out = simhashdb(
        &[
            "query",
            &s,
            "--json",
            &format!("{:016x}", 101u64.wrapping_mul(0x9E37_79B9_7F4A_7C15)),
        ],
        "",
    );
    assert!(
        text(&out.stdout).contains("\"day1-1\""),
        "{}",
        text(&out.stdout)
    );
}
