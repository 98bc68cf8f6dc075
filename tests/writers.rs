//! What writers leave behind and how they wait for each other: debris reported by `verify`
//! and `stats` and removed (and named) by the next writer; `--wait` on every writing command.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::util::{path_str, simhashdb, text, tree};

fn store() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("s");
    let s = path_str(&store);
    assert!(simhashdb(&["init", s, "--shards", "4"], "")
        .status
        .success());
    // Skewed: 200 copies of one fingerprint beside 50 distinct ones.
    let lines: String = (0..250u64)
        .map(|i| {
            let fp = if i < 200 {
                0xabcd
            } else {
                i.wrapping_mul(0x9E37_79B9_7F4A_7C15)
            };
            format!("doc-{i}\t{fp:016x}\n")
        })
        .collect();
    let out = simhashdb(&["insert", s, "--label", "day1"], &lines);
    assert!(out.status.success(), "{}", text(&out.stderr));
    (dir, store)
}

/// Every file and directory under `dir` with its bytes, LOCK aside (it names each writer in
/// turn).
fn files(dir: &Path) -> std::collections::BTreeMap<String, Option<Vec<u8>>> {
    let mut files = tree(dir);
    files.remove("LOCK");
    files
}

/// Leaves what a writer killed before its commit leaves: a whole run directory no catalog
/// names (here a copy of the live run, under the next id).
fn plant_debris(store: &Path) -> PathBuf {
    let runs = store.join("runs");
    let live = std::fs::read_dir(&runs)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let debris = runs.join("0000000042");
    std::fs::create_dir(&debris).unwrap();
    for file in std::fs::read_dir(&live).unwrap() {
        let file = file.unwrap().path();
        std::fs::copy(&file, debris.join(file.file_name().unwrap())).unwrap();
    }
    debris
}

fn du(path: &Path) -> u64 {
    use std::os::unix::fs::MetadataExt;
    std::fs::read_dir(path)
        .unwrap()
        .map(|f| f.unwrap().metadata().unwrap().blocks() * 512)
        .sum()
}

fn json(out: &std::process::Output) -> serde_json::Value {
    assert!(out.status.success(), "{}", text(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn debris_is_reported_by_verify_and_stats_and_removed_by_the_next_writer() {
    let (_dir, store) = store();
    let s = path_str(&store);
    let answers =
        || text(&simhashdb(&["query", s, "000000000000abcd", "--distance", "3"], "").stdout);
    let before = answers();
    assert_eq!(before.lines().count(), 200);
    let debris = plant_debris(&store);
    let bytes = du(&debris);
    assert!(bytes > 0);
    let untouched = files(&store);

    // verify: a warning naming the directory and its size, not a finding.
    let out = simhashdb(&["verify", s], "");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "");
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains(&format!("warning: {}", debris.display()))
            && stderr.contains("named by no catalog")
            && stderr.contains("1 debris"),
        "{stderr}"
    );
    let report = json(&simhashdb(&["verify", s, "--json"], ""));
    assert_eq!(report["clean"], true);
    assert_eq!(
        report["debris"],
        serde_json::json!([{"path": path_str(&debris), "bytes": bytes}])
    );
    // stats counts it.
    let stats = json(&simhashdb(&["stats", s, "--json"], ""));
    assert_eq!(
        (stats["orphan_runs"].clone(), stats["orphan_bytes"].clone()),
        (1.into(), bytes.into())
    );
    // Readers changed nothing.
    assert!(
        files(&store) == untouched,
        "verify or stats changed the store"
    );

    // The next writer removes it, says so, and the store answers as before.
    let out = simhashdb(
        &["insert", s, "--label", "day2"],
        "late\t0000000000001234\n",
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains(&format!("removed {}", debris.display()))
            && (stderr.contains(" MB)") || stderr.contains(" kB)")),
        "{stderr}"
    );
    assert!(!debris.exists());
    assert_eq!(answers(), before);
    let report = json(&simhashdb(&["verify", s, "--json"], ""));
    assert_eq!(report["debris"], serde_json::json!([]));
    let stats = json(&simhashdb(&["stats", s, "--json"], ""));
    assert_eq!(
        (stats["orphan_runs"].clone(), stats["orphan_bytes"].clone()),
        (0.into(), 0.into())
    );
}

#[test]
fn every_writer_removes_debris_and_a_stray_file_counts_too() {
    let (_dir, store) = store();
    let s = path_str(&store);
    for (i, args) in [
        vec!["compact", s],
        vec!["delete", s, "doc-3"],
        vec!["expire", s, "--batch", "nope"],
        vec!["repair", s],
    ]
    .into_iter()
    .enumerate()
    {
        let debris = plant_debris(&store);
        let stray = store.join("runs").join(format!("stray-{i}.tmp"));
        std::fs::write(&stray, b"x").unwrap();
        let out = simhashdb(&args, "");
        let stderr = text(&out.stderr);
        assert!(
            stderr.contains(&format!("removed {}", debris.display()))
                && stderr.contains(&format!("removed {}", stray.display())),
            "{args:?}: {stderr}"
        );
        assert!(!debris.exists() && !stray.exists(), "{args:?}");
    }
}

#[test]
fn readers_report_no_debris_while_a_writer_holds_the_lock() {
    let (_dir, store) = store();
    let s = path_str(&store);
    let writer = simhashdb::Store::open(&store).unwrap();
    // A writer's run in progress is a directory its catalog does not name yet.
    let in_progress = plant_debris(&store);
    let stats = json(&simhashdb(&["stats", s, "--json"], ""));
    assert_eq!(stats["orphan_runs"], 0);
    let report = json(&simhashdb(&["verify", s, "--json"], ""));
    assert_eq!(report["debris"], serde_json::json!([]));
    drop(writer);
    // Once the writer is gone, what it left is debris.
    let stats = json(&simhashdb(&["stats", s, "--json"], ""));
    assert_eq!(stats["orphan_runs"], 1);
    assert!(in_progress.exists());
}

#[test]
fn writers_wait_for_the_lock_only_when_asked() {
    let (_dir, store) = store();
    let s = path_str(&store);
    let holder = simhashdb::Store::open(&store).unwrap();
    let pid = std::process::id().to_string();
    let writes: Vec<(Vec<&str>, &str)> = vec![
        (vec!["insert", s], "new\t0000000000000001\n"),
        (vec!["delete", s, "doc-1"], ""),
        (vec!["expire", s, "--batch", "day1"], ""),
        (vec!["compact", s], ""),
        (vec!["repair", s], ""),
        (vec!["migrate", s], ""),
    ];
    let documents = || json(&simhashdb(&["stats", s, "--json"], ""))["documents"].clone();
    let count = documents();
    for (args, stdin) in &writes {
        // By default: fail at once, naming the holder and how to wait.
        let out = simhashdb(args, stdin);
        let stderr = text(&out.stderr);
        if args[0] == "migrate" {
            // A store at the current version needs no lock: nothing to wait for.
            assert!(out.status.success(), "{stderr}");
            continue;
        }
        assert_eq!(out.status.code(), Some(1), "{args:?}: {stderr}");
        assert!(
            stderr.contains(&format!("locked by pid {pid}")) && stderr.contains("--wait SECONDS"),
            "{args:?}: {stderr}"
        );
        // With --wait, fail after the wait, saying so.
        let mut waiting = args.clone();
        waiting.extend(["--wait", "0.3"]);
        let started = Instant::now();
        let out = simhashdb(&waiting, stdin);
        assert!(started.elapsed() >= Duration::from_millis(300));
        assert_eq!(out.status.code(), Some(1));
        assert!(
            text(&out.stderr).contains("still after waiting 300ms"),
            "{}",
            text(&out.stderr)
        );
    }
    assert_eq!(documents(), count, "no refused write changed the store");
    // A bad wait is a usage error.
    for bad in ["-1", "soon", "inf", "NaN"] {
        let out = simhashdb(&["insert", s, &format!("--wait={bad}")], "");
        assert_eq!(out.status.code(), Some(2), "{bad}");
        assert!(
            text(&out.stderr).contains("invalid --wait"),
            "{}",
            text(&out.stderr)
        );
    }
    // A writer that waits gets the store once the holder lets go.
    let release = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(500));
        drop(holder);
    });
    let out = simhashdb(&["insert", s, "--wait", "30"], "new\t0000000000000001\n");
    release.join().unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(documents(), count.as_u64().unwrap() + 1);
}

/// Panics (a stand-in for a bug) on the `at`-th progress step of a write.
struct PanicAt {
    at: u64,
    steps: std::sync::atomic::AtomicU64,
}

impl simhashdb::Progress for PanicAt {
    fn advance(&self, steps: u64) {
        let done = self
            .steps
            .fetch_add(steps, std::sync::atomic::Ordering::SeqCst)
            + steps;
        if done >= self.at {
            panic!("injected: a bug in the middle of a write");
        }
    }
}

#[test]
fn a_panic_inside_a_write_leaves_the_store_as_it_was_and_releases_the_lock() {
    use simhashdb::{Batch, Store};
    let (_dir, store) = store();
    // A second batch, so that compaction has runs to merge.
    let out = simhashdb(&["insert", path_str(&store)], "x\t00000000000000ff\n");
    assert!(out.status.success());
    let before = files(&store);
    let answers = |store: &Path| {
        let snapshot = simhashdb::Snapshot::open(store).unwrap();
        let hits = snapshot.query(0xabcd, 3).unwrap();
        (snapshot.documents(), hits.len())
    };
    let expected = answers(&store);
    for (what, at) in [("insert", 1), ("insert", 3), ("compact", 1), ("compact", 2)] {
        let panicked = std::panic::catch_unwind(|| {
            let mut writer = Store::open(&store).unwrap();
            writer.set_progress(std::sync::Arc::new(PanicAt {
                at,
                steps: 0.into(),
            }));
            if what == "insert" {
                let mut batch = Batch::new();
                for i in 0..3000u64 {
                    let fingerprint = i.wrapping_mul(0x9E37_79B9_7F4A_7C15);
                    batch.push(&format!("new-{i}"), fingerprint).unwrap();
                }
                writer.insert(&batch, None).map(|_| ())
            } else {
                writer.compact().map(|_| ())
            }
        });
        let message = panicked.expect_err(&format!("{what} at step {at} panicked"));
        assert_eq!(
            message.downcast_ref::<&str>(),
            Some(&"injected: a bug in the middle of a write")
        );
        // The lock is free at once, nothing was left behind, and the store is as it was.
        let writer = Store::open(&store).expect("the lock was released");
        assert_eq!(writer.removed_debris(), &[], "{what} at {at} left debris");
        drop(writer);
        assert!(
            files(&store) == before,
            "{what} at step {at} changed the store"
        );
        assert_eq!(answers(&store), expected);
        let report = Store::verify(&store, false, &()).unwrap();
        assert!(report.findings.is_empty() && report.debris.is_empty());
    }
}

/// `migrate` of an old store waits for the lock like every writer: it fails at once naming
/// the holder, and with `--wait` upgrades the store once the holder lets go.
#[test]
fn migrate_waits_for_the_lock_when_asked() {
    use std::os::fd::AsRawFd;
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("s");
    let fixture = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/format-v2");
    crate::compat::copy_dir(&fixture.join("store"), &store);
    let s = path_str(&store);
    // Hold the writer lock as a writer does: flock on LOCK, our pid in it.
    let lock = std::fs::File::create(store.join("LOCK")).unwrap();
    std::fs::write(store.join("LOCK"), std::process::id().to_string()).unwrap();
    // SAFETY: flock on a descriptor this test owns.
    assert_eq!(unsafe { libc::flock(lock.as_raw_fd(), libc::LOCK_EX) }, 0);
    let out = simhashdb(&["migrate", s], "");
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains(&format!("locked by pid {}", std::process::id()))
            && stderr.contains("--wait SECONDS"),
        "{stderr}"
    );
    let release = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(500));
        drop(lock);
    });
    let started = Instant::now();
    let out = simhashdb(&["migrate", s, "--wait", "30"], "");
    release.join().unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(started.elapsed() >= Duration::from_millis(400));
    assert!(text(&out.stderr).contains("from format version 2 to 10"));
    assert_eq!(simhashdb(&["verify", s], "").status.code(), Some(0));
}
