//! The lifecycle commands from the outside: delete, expire, batches, compact, verify, migrate,
//! a full disk, a second writer, and readers during a compaction.

use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};

use crate::util::{path_str, simhashdb, text};

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

    // Expiring by date: everything was committed before 2100.
    let out = simhashdb(&["expire", &s, "--before", "2100-01-01"], "");
    assert!(out.status.success(), "{}", text(&out.stderr));
    let out = simhashdb(&["stats", &s, "--json"], "");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["documents"], 0);
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
            "ok\n{\"id\": 5}\n",
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
    assert!(text(&out.stderr).contains("from format version 1 to 2"));
    let out = simhashdb(&["migrate", s], "");
    assert!(text(&out.stderr).contains("nothing to do"));
    assert_eq!(simhashdb(&["verify", s], "").status.code(), Some(0));
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
                assert!(snapshot.catalog().documents >= 150);
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
