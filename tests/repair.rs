//! Damage and repair: flipped bytes in every file of a store are reported by `verify`, or are
//! harmless, or refuse the read with an error, and never change an answer; `repair` rebuilds a
//! damaged data block from the store's other copies, and survives SIGKILL and a full disk.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use simhashdb::{Batch, CompactionPolicy, Scheme, Settings, Snapshot, Store};

use crate::compat::copy_dir;
use crate::util::{path_str, simhashdb, text};

/// A store of two runs (the second replaces and deletes some ids of the first), and the
/// fingerprints to query it with.
fn build(dir: &Path) -> Vec<u64> {
    let mut store = Store::create(
        dir,
        Settings {
            blocks: 5,
            distance: 3,
            shards: 1,
        },
    )
    .unwrap();
    let fp = |i: u64| i.wrapping_mul(0x9E37_79B9_7F4A_7C15).rotate_left(7);
    let mut batch = Batch::new();
    for i in 0..150u64 {
        batch.push(&format!("doc-{i}"), fp(i)).unwrap();
    }
    store.insert(&batch, Some("first")).unwrap();
    let mut batch = Batch::new();
    for i in 0..10u64 {
        batch.push(&format!("doc-{i}"), fp(i) ^ 0b101).unwrap();
    }
    store.insert(&batch, Some("second")).unwrap();
    store
        .delete(
            (10..15)
                .map(|i| format!("doc-{i}"))
                .collect::<Vec<_>>()
                .iter()
                .map(String::as_str),
        )
        .unwrap();
    (0..150u64).map(fp).collect()
}

/// Everything the store answers: every query's matches, the audit, every live document.
type Answers = (
    Vec<Vec<(u32, u64, String)>>,
    Vec<(String, String, u32)>,
    BTreeSet<(String, u64, u64)>,
);

fn answers(store: &Path, queries: &[u64]) -> simhashdb::Result<Answers> {
    let snapshot = Snapshot::open(store)?;
    let mut matches = Vec::new();
    for &q in queries.iter().step_by(8) {
        let m = snapshot.query(q, 3)?;
        matches.push(
            m.into_iter()
                .map(|m| (m.distance, m.fingerprint, m.id))
                .collect(),
        );
    }
    let audit = crate::util::audit_pairs(&snapshot, 3)?
        .into_iter()
        .map(|p| (p.a, p.b, p.distance))
        .collect();
    let mut documents = BTreeSet::new();
    snapshot.for_each_live_document(|id, fp, batch| {
        documents.insert((id.to_string(), fp, batch));
    })?;
    Ok((matches, audit, documents))
}

fn flip(file: &Path, at: usize) {
    let mut bytes = std::fs::read(file).unwrap();
    bytes[at] ^= 0x20;
    std::fs::write(file, bytes).unwrap();
}

/// Inserts `n` more documents as a run of their own; returns that run's docs file.
fn add_bulk_run(store: &Path, n: u64) -> PathBuf {
    let mut s = Store::open(store).unwrap();
    let mut batch = Batch::new();
    for i in 0..n {
        batch
            .push(&format!("bulk-{i}"), i.wrapping_mul(0xD6E8_FEB8_6659_FD93))
            .unwrap();
    }
    s.insert(&batch, None).unwrap();
    drop(s);
    let newest = std::fs::read_dir(store.join("runs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .max()
        .unwrap();
    newest.join("docs.redb")
}

/// Flips a byte in the middle of `file`'s data: a block's checksum fails.
fn flip_a_data_byte(file: &Path) {
    let bytes = std::fs::read(file).unwrap();
    let at = (bytes.len() / 3..bytes.len())
        .find(|&i| bytes[i] != 0)
        .unwrap();
    flip(file, at);
}

/// Offsets to flip in `file`: every `stride`-th byte of each 4 KiB page that holds data, and
/// the first byte of each empty page.
fn offsets(file: &Path, stride: usize) -> Vec<usize> {
    let bytes = std::fs::read(file).unwrap();
    let mut out = Vec::new();
    for (p, page) in bytes.chunks(4096).enumerate() {
        let base = p * 4096;
        if page.iter().all(|&b| b == 0) {
            out.push(base);
        } else {
            out.extend((0..page.len()).step_by(stride).map(|i| base + i));
        }
    }
    out
}

/// How each flip of [`every_flipped_byte_is_found_harmless_or_refused_and_data_blocks_are_repaired`]
/// ended: reported by verify, harmless, refused, repaired (reported in a data block).
#[derive(Default)]
struct Flips {
    reported: usize,
    harmless: usize,
    refused: usize,
    repaired: usize,
}

/// Flips each byte of `flips` (a file of `store` and an offset) in turn, and back, checking
/// what verify, reads and repair make of it.
fn check_flips(
    store: &Path,
    scratch: &Path,
    flips: &[(&str, usize)],
    queries: &[u64],
    expected: &Answers,
) -> Flips {
    let mut tally = Flips::default();
    for &(name, at) in flips {
        let file = store.join(name);
        flip(&file, at);
        let place = format!("{name} byte {at}");
        match Store::verify(store, false, &()) {
            Ok(report) if !report.findings.is_empty() => {
                tally.reported += 1;
                // A damaged data block: repair brings back every document and answer.
                if report.findings.iter().any(|f| f.block.is_some()) {
                    let copy = scratch.join("copy");
                    let _ = std::fs::remove_dir_all(&copy);
                    copy_dir(store, &copy);
                    let mut s = Store::open(&copy).unwrap();
                    let done = s.repair().unwrap_or_else(|e| panic!("{place}: {e}"));
                    assert!(done.committed, "{place}");
                    drop(s);
                    let after = Store::verify(&copy, false, &()).unwrap();
                    assert!(after.findings.is_empty(), "{place}: {:?}", after.findings);
                    let got = answers(&copy, queries).unwrap();
                    assert!(
                        done.runs.iter().all(|r| r.batches_guessed == 0),
                        "{place}: a batch guessed"
                    );
                    let lost: u64 = done.runs.iter().map(|r| r.documents_lost).sum();
                    let docs_damaged = report
                        .findings
                        .iter()
                        .any(|f| f.table.as_deref() == Some("docs"));
                    if docs_damaged {
                        // Postings that name their documents (format 8) hold no second copy
                        // of an id: a damaged docs block's documents are lost, and counted
                        // (a block only misfiled loses none). Every other answer stays, with
                        // its batch.
                        assert!(got.2.is_subset(&expected.2), "{place}: documents");
                        let gone = (expected.2.len() - got.2.len()) as u64;
                        assert!(gone <= lost, "{place}: {gone} gone, {lost} reported");
                        let kept: BTreeSet<&String> = got.2.iter().map(|d| &d.0).collect();
                        let kept_match = |m: &(u32, u64, String)| kept.contains(&m.2);
                        for (g, e) in got.0.iter().zip(&expected.0) {
                            let e: Vec<_> = e.iter().filter(|m| kept_match(m)).cloned().collect();
                            assert!(*g == e, "{place}: a query's answers");
                        }
                        let pairs: Vec<_> = (expected.1.iter())
                            .filter(|p| kept.contains(&p.0) && kept.contains(&p.1))
                            .cloned()
                            .collect();
                        assert!(got.1 == pairs, "{place}: the audit");
                    } else {
                        assert!(
                            got.0 == expected.0 && got.1 == expected.1,
                            "{place}: answers"
                        );
                        // The same documents with the same batches.
                        assert!(got.2 == expected.2, "{place}: documents or their batches");
                        assert_eq!(lost, 0, "{place}: documents lost");
                    }
                    tally.repaired += 1;
                }
            }
            Ok(_) => match answers(store, queries) {
                Ok(got) => {
                    assert!(got == *expected, "{place}: unreported and answers differ");
                    tally.harmless += 1;
                }
                Err(e) => {
                    assert!(names_damage(&e), "{place}: refused with {e:?}");
                    tally.refused += 1;
                }
            },
            Err(e) => {
                // Refused: then no read may answer differently either.
                assert!(names_damage(&e), "{place}: refused with {e:?}");
                if let Ok(got) = answers(store, queries) {
                    assert!(got == *expected, "{place}: answers differ");
                }
                tally.refused += 1;
            }
        }
        flip(&file, at);
    }
    assert!(Store::verify(store, false, &())
        .unwrap()
        .findings
        .is_empty());
    tally
}

#[test]
fn every_flipped_byte_is_found_harmless_or_refused_and_data_blocks_are_repaired() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("s");
    let queries = build(&store);
    let expected = answers(&store, &queries).unwrap();
    let files = [
        "CATALOG",
        "runs/0000000001/docs.redb",
        "runs/0000000001/shard-000.redb",
    ];
    let stride: usize = std::env::var("SIMHASHDB_FLIP_STRIDE")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(7);
    let flips: Vec<(&str, usize)> = files
        .iter()
        .flat_map(|&name| {
            let stride = if name == "CATALOG" { 1 } else { stride };
            offsets(&store.join(name), stride)
                .into_iter()
                .map(move |at| (name, at))
        })
        .collect();
    // The flips dealt to workers, each flipping bytes of its own copy of the store (a flip
    // changes the file in place): the checks are the same, on every core.
    let workers = std::thread::available_parallelism().map_or(2, |n| n.get().min(4));
    let tallies: Vec<Flips> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..workers)
            .map(|w| {
                let scratch = dir.path().join(format!("worker-{w}"));
                let own = scratch.join("s");
                copy_dir(&store, &own);
                let mine: Vec<(&str, usize)> =
                    flips.iter().skip(w).step_by(workers).copied().collect();
                let (queries, expected) = (&queries, &expected);
                scope.spawn(move || check_flips(&own, &scratch, &mine, queries, expected))
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
            })
            .collect()
    });
    let total = |f: fn(&Flips) -> usize| tallies.iter().map(f).sum::<usize>();
    let repaired = total(|t| t.repaired);
    assert!(repaired > 50, "flips in data blocks: {repaired}");
    assert!(total(|t| t.reported) + total(|t| t.harmless) + total(|t| t.refused) > 500);
}

#[test]
fn repair_rebuilds_a_lost_shard_file_from_the_other_copies() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("s");
    let queries = build(&store);
    let expected = answers(&store, &queries).unwrap();
    // Every table of the first run's only shard file: its live fingerprints come back from the
    // postings of every run.
    std::fs::remove_file(store.join("runs/0000000001/shard-000.redb")).unwrap();
    let out = simhashdb(&["repair", path_str(&store)], "");
    assert!(out.status.success(), "{}", text(&out.stderr));
    let said = text(&out.stdout);
    assert!(
        said.contains("shard-000.redb: No such file") && said.contains("repaired 1 of 3 runs"),
        "{said}"
    );
    assert!(Store::verify(&store, false, &())
        .unwrap()
        .findings
        .is_empty());
    assert!(answers(&store, &queries).unwrap() == expected);
    assert_eq!(
        simhashdb(&["repair", path_str(&store)], "").stdout,
        b"no damage found in 3 runs\n"
    );
}

#[test]
fn a_repair_killed_at_any_moment_leaves_the_damaged_or_the_repaired_store() {
    let dir = tempfile::tempdir().unwrap();
    let pristine = dir.path().join("pristine");
    let queries = build(&pristine);
    // A bigger run, so the repair takes long enough to be killed in the middle.
    let big = add_bulk_run(&pristine, 200_000);
    let big = big.strip_prefix(&pristine).unwrap().to_path_buf();
    // What a repair that is not killed makes of the damage (a docs block's documents have no
    // other copy where postings name them, format 8): every killed one must end the same.
    let reference = dir.path().join("reference");
    copy_dir(&pristine, &reference);
    flip_a_data_byte(&reference.join(&big));
    let out = simhashdb(&["repair", path_str(&reference)], "");
    assert!(out.status.success(), "{}", text(&out.stderr));
    let expected = answers(&reference, &queries).unwrap();
    assert!(expected.2.len() > 199_000, "{}", expected.2.len());
    let kills: u64 = std::env::var("CRASH_KILLS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(8);
    let mut outcomes = BTreeSet::new();
    for k in 0..kills {
        let store = dir.path().join(format!("s{k}"));
        copy_dir(&pristine, &store);
        flip_a_data_byte(&store.join(&big));
        let mut child = Command::new(env!("CARGO_BIN_EXE_simhashdb"))
            .args(["repair", path_str(&store)])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(20 + 40 * k));
        let _ = child.kill();
        outcomes.insert(child.wait().unwrap().success());
        // The store opens, and is either still damaged (then repair finishes the job) or
        // repaired; no other state.
        let report = Store::verify(&store, false, &()).unwrap();
        if !report.findings.is_empty() {
            let out = simhashdb(&["repair", path_str(&store)], "");
            assert!(out.status.success(), "{}", text(&out.stderr));
        }
        let report = Store::verify(&store, false, &()).unwrap();
        assert!(
            report.findings.is_empty(),
            "kill {k}: {:?}",
            report.findings
        );
        let snapshot = Snapshot::open(&store).unwrap();
        assert_eq!(snapshot.documents() as usize, expected.2.len(), "kill {k}");
        drop(snapshot);
        assert!(answers(&store, &queries).unwrap() == expected, "kill {k}");
        std::fs::remove_dir_all(&store).unwrap();
    }
    assert!(
        outcomes.contains(&false),
        "some repair was killed before it finished"
    );
}

#[test]
fn a_repair_that_fills_the_disk_leaves_it_as_it_was() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("s");
    build(&store);
    flip_a_data_byte(&add_bulk_run(&store, 60_000));
    let s = path_str(&store).to_string();
    let before = crate::lifecycle_cli::runs_on_disk(&s);
    // Room for nothing as large as the run being rebuilt.
    let out = crate::lifecycle_cli::with_file_limit(&["repair", &s], 64 << 10);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("the repair failed; the store is as it was"));
    assert_eq!(crate::lifecycle_cli::runs_on_disk(&s), before);
    let out = simhashdb(&["repair", &s], "");
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(Store::verify(&store, false, &())
        .unwrap()
        .findings
        .is_empty());
}

#[test]
fn repair_dry_run_changes_nothing_and_a_file_redb_refuses_is_reported_lost() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("s");
    let s = path_str(&store);
    build(&store);
    // A docs file that is no redb file at all: its entries and postings have no other copy.
    let docs = store.join("runs/0000000001/docs.redb");
    std::fs::write(&docs, vec![0x5au8; 8192]).unwrap();
    let before = crate::corruption::all_files(&store);
    let out = simhashdb(&["repair", s, "--dry-run", "--json"], "");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let lines: Vec<serde_json::Value> = text(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 2, "one damaged run, then the summary");
    assert_eq!(lines[0]["run"], 1);
    assert_eq!(lines[0]["replaced_by"], serde_json::Value::Null);
    assert_eq!(lines[0]["documents_lost"], 150);
    // No copy names them (the docs file held the sketches too): the text says what to do.
    assert_eq!(lines[0]["ids_lost"], serde_json::json!([]));
    // Their fingerprints are still in the tables: listed, each a stored fingerprint.
    let lost = lines[0]["fingerprints_lost"].as_array().unwrap();
    assert!(!lost.is_empty() && lost.len() <= 150, "{}", lost.len());
    assert!(lines[0]["damage"][0]
        .as_str()
        .unwrap()
        .contains("redb cannot open it"));
    assert_eq!(lines[1]["committed"], false);
    assert_eq!(lines[1]["dry_run"], true);
    let mut after = crate::corruption::all_files(&store);
    let lock = store.join("LOCK");
    after.insert(lock.clone(), before[&lock].clone());
    assert!(after == before, "a dry run changed the store");

    let out = simhashdb(&["repair", s], "");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let said = text(&out.stdout);
    assert!(said.contains("run 1: rebuilt as run 4"), "{said}");
    assert!(
        said.contains("150 more are named by no copy left (insert the batches of run 1 again"),
        "{said}"
    );
    assert!(
        said.contains("fingerprints whose documents were lost"),
        "{said}"
    );
    assert!(
        said.contains("not recoverable: 150 document entries"),
        "{said}"
    );
    assert!(said.ends_with("repaired 1 of 3 runs\n"), "{said}");
    assert!(Store::verify(&store, false, &())
        .unwrap()
        .findings
        .is_empty());
    // What the later runs hold is still there: the ids the second batch replaced.
    let out = simhashdb(&["get", s, "doc-3"], "");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
}

#[test]
fn progress_bars_show_on_a_terminal_and_nowhere_else() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("s");
    let s = path_str(&store);
    build(&store);
    let bin = env!("CARGO_BIN_EXE_simhashdb");
    // `script` gives the command a terminal, and copies what it draws.
    let on_terminal = Command::new("script")
        .args(["-qfec", &format!("{bin} verify {s} --deep"), "/dev/null"])
        .stdin(Stdio::null())
        .output()
        .expect("script (util-linux) runs");
    let drawn = String::from_utf8_lossy(&on_terminal.stdout).into_owned();
    assert!(
        drawn.contains("verifying runs") && drawn.contains("checking files with redb"),
        "{drawn}"
    );
    let plain = simhashdb(&["verify", s, "--deep"], "");
    assert_eq!(plain.status.code(), Some(0));
    let err = text(&plain.stderr);
    assert!(
        !err.contains("verifying runs") && !err.contains('\u{1b}'),
        "{err}"
    );
}

/// Whether `e` is a refusal that names damaged bytes (and not, say, a lock or a bad argument).
fn names_damage(e: &simhashdb::Error) -> bool {
    use simhashdb::Error::*;
    let said = !e.to_string().is_empty();
    said && matches!(
        e,
        Corruption { .. }
            | Storage { .. }
            | NotAStore { .. }
            | UnknownVersion { .. }
            | UpgradeRequired { .. }
            | AfterEarlierFailure { .. }
    )
}

/// Where the store of [`merged_run_with_damaged_docs_blocks`] comes from.
enum Start<'a> {
    /// Made anew, in the current format.
    New(Scheme),
    /// A copy of a fixture's store, written to in its own format.
    Fixture(&'a str),
}

/// A merged run of four interleaved batches, with three of its docs blocks damaged (and no
/// postings block); returns the documents before the damage.
fn merged_run_with_damaged_docs_blocks(
    store_dir: &Path,
    start: Start<'_>,
) -> BTreeSet<(String, u64, u64)> {
    let mut store = match start {
        Start::New(scheme) => Store::create_with(
            store_dir,
            Settings::default(),
            scheme,
            CompactionPolicy::default(),
        )
        .unwrap(),
        Start::Fixture(name) => {
            let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
            copy_dir(&fixtures.join(name).join("store"), store_dir);
            Store::open(store_dir).unwrap()
        }
    };
    // Four batches whose ids interleave, so every docs block of the merged run mixes them.
    for b in 0..4u64 {
        let mut batch = Batch::new();
        for i in 0..2000u64 {
            let n = i * 4 + b;
            batch
                .push(&format!("doc-{n}"), n.wrapping_mul(0x9E37_79B9_7F4A_7C15))
                .unwrap();
        }
        store.insert(&batch, None).unwrap();
    }
    store.compact().unwrap();
    drop(store);
    let before = answers(store_dir, &[]).unwrap().2;
    let batches: BTreeSet<u64> = before.iter().map(|d| d.2).collect();
    assert!(batches.len() >= 4, "{batches:?}");
    let run = std::fs::read_dir(store_dir.join("runs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .next()
        .unwrap();
    // Damage three docs blocks (and no postings block): their entries are lost.
    let docs = run.join("docs.redb");
    let mut damaged: BTreeSet<String> = BTreeSet::new();
    for at in offsets(&docs, 997) {
        flip(&docs, at);
        let Ok(report) = Store::verify(store_dir, false, &()) else {
            flip(&docs, at);
            continue;
        };
        let table = |f: &simhashdb::Finding| f.table.clone().unwrap_or_default();
        let blocks: BTreeSet<String> = report
            .findings
            .iter()
            .filter(|f| table(f) == "docs")
            .filter_map(|f| f.block.clone())
            .collect();
        let postings = report.findings.iter().any(|f| table(f) == "postings");
        if !postings && blocks.len() == damaged.len() + 1 && blocks.is_superset(&damaged) {
            damaged = blocks;
            if damaged.len() == 3 {
                break;
            }
        } else {
            flip(&docs, at);
        }
    }
    assert_eq!(damaged.len(), 3, "three docs blocks damaged");
    before
}

/// Where postings hold their ids (formats 3 to 7, and 8 with sketches: here the format 8
/// fixture's store with sketches), a docs entry lost from a merged run comes back from its
/// posting with its own batch, never a guess from its neighbours.
#[test]
fn repair_restores_each_lost_document_with_its_own_batch_in_a_merged_run() {
    let dir = tempfile::tempdir().unwrap();
    let store_dir = dir.path().join("s");
    let before = merged_run_with_damaged_docs_blocks(&store_dir, Start::Fixture("format-v8"));
    assert_eq!(Snapshot::open(&store_dir).unwrap().format_version(), 8);
    let mut store = Store::open(&store_dir).unwrap();
    let report = store.repair().unwrap();
    drop(store);
    let recovered: u64 = report.runs.iter().map(|r| r.documents_from_postings).sum();
    assert!(recovered > 100, "documents from postings: {recovered}");
    assert!(report.runs.iter().all(|r| r.batches_guessed == 0));
    let after = answers(&store_dir, &[]).unwrap().2;
    assert!(after == before, "every document with its batch");
    assert!(Store::verify(&store_dir, false, &())
        .unwrap()
        .findings
        .is_empty());
}

/// Where postings name their documents (format 8 without sketches, format 9 on with or
/// without), the ids of a lost docs block have no other copy: repair counts them and lists
/// their fingerprints, and every other document stays, with its batch.
#[test]
fn repair_reports_the_documents_of_lost_docs_blocks_where_postings_name_them() {
    for scheme in [
        Scheme::default(),
        Scheme::default().with_sketch(64).unwrap(),
    ] {
        repair_reports_lost_documents(scheme);
    }
}

fn repair_reports_lost_documents(scheme: Scheme) {
    let dir = tempfile::tempdir().unwrap();
    let store_dir = dir.path().join("s");
    let before = merged_run_with_damaged_docs_blocks(&store_dir, Start::New(scheme));
    let mut store = Store::open(&store_dir).unwrap();
    let report = store.repair().unwrap();
    drop(store);
    assert!(report.committed);
    let lost: u64 = report.runs.iter().map(|r| r.documents_lost).sum();
    let from_postings: u64 = report.runs.iter().map(|r| r.documents_from_postings).sum();
    assert_eq!(from_postings, 0);
    let after = answers(&store_dir, &[]).unwrap().2;
    assert!(after.is_subset(&before));
    assert_eq!(before.len() - after.len(), lost as usize);
    assert!(lost > 30, "three docs blocks' documents: {lost}");
    let listed: usize = report.runs.iter().map(|r| r.fingerprints_lost.len()).sum();
    assert!(listed > 0 && listed <= lost as usize, "{listed}");
    // Every fingerprint listed is one of a lost document.
    let kept: BTreeSet<u64> = after.iter().map(|d| d.1).collect();
    for r in &report.runs {
        for fp in &r.fingerprints_lost {
            let fp = u64::from_str_radix(fp, 16).unwrap();
            assert!(!kept.contains(&fp));
            assert!(before.iter().any(|d| d.1 == fp));
        }
    }
    assert!(Store::verify(&store_dir, false, &())
        .unwrap()
        .findings
        .is_empty());
}

/// A run's id filter (format 6) that is missing, or whose blocks are intact but hold another
/// run's prefixes, is a finding of `verify`; lookups name the missing table instead of
/// answering; `repair` rebuilds the filter from the docs entries and every id is found again.
#[test]
fn a_missing_or_wrong_id_filter_is_found_and_repaired() {
    use redb::{ReadableDatabase, ReadableTable, TableDefinition};
    const IDS: TableDefinition<u64, &[u8]> = TableDefinition::new("ids");
    for case in ["missing", "another run's"] {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("s");
        let mut store = Store::create(&dir, Settings::default()).unwrap();
        // Two runs of as many documents: filters of one width.
        for run in 0..2u64 {
            let mut batch = Batch::new();
            for i in 0..2000u64 {
                let fp = (run << 32 | i).wrapping_mul(0x9E37_79B9_7F4A_7C15);
                batch.push(&format!("run{run}-doc{i}"), fp).unwrap();
            }
            store.insert(&batch, None).unwrap();
        }
        drop(store);
        let mut runs: Vec<PathBuf> = std::fs::read_dir(dir.join("runs"))
            .unwrap()
            .map(|e| e.unwrap().path().join("docs.redb"))
            .collect();
        runs.sort();
        assert_eq!(runs.len(), 2);
        let other: Vec<(u64, Vec<u8>)> = {
            let db = redb::Database::open(&runs[1]).unwrap();
            let txn = db.begin_read().unwrap();
            let table = txn.open_table(IDS).unwrap();
            let blocks = table.iter().unwrap();
            blocks
                .map(|b| b.unwrap())
                .map(|(k, v)| (k.value(), v.value().to_vec()))
                .collect()
        };
        {
            let db = redb::Database::open(&runs[0]).unwrap();
            let txn = db.begin_write().unwrap();
            assert!(txn.delete_table(IDS).unwrap());
            if case == "another run's" {
                let mut table = txn.open_table(IDS).unwrap();
                for (key, block) in &other {
                    table.insert(key, block.as_slice()).unwrap();
                }
            }
            txn.commit().unwrap();
        }
        let report = Store::verify(&dir, false, &()).unwrap();
        assert!(
            report
                .findings
                .iter()
                .any(|f| f.table.as_deref() == Some("ids")),
            "{case}: {:?}",
            report.findings
        );
        if case == "missing" {
            let err = Snapshot::open(&dir).unwrap().get("run0-doc7").unwrap_err();
            assert!(
                err.to_string().contains("ids") && err.to_string().contains("docs.redb"),
                "{err}"
            );
        }
        let repaired = Store::open(&dir).unwrap().repair().unwrap();
        assert!(repaired.committed, "{case}: {repaired:?}");
        assert_eq!(repaired.runs.len(), 1, "{case}: {repaired:?}");
        let report = Store::verify(&dir, false, &()).unwrap();
        assert!(report.findings.is_empty(), "{case}: {:?}", report.findings);
        let snapshot = Snapshot::open(&dir).unwrap();
        for run in 0..2u64 {
            for i in (0..2000u64).step_by(7) {
                let fp = (run << 32 | i).wrapping_mul(0x9E37_79B9_7F4A_7C15);
                assert_eq!(
                    snapshot.get(&format!("run{run}-doc{i}")).unwrap(),
                    Some(fp),
                    "{case}"
                );
            }
        }
    }
}

/// Where postings name their documents (format 8), the documents of a lost docs block are
/// listed by fingerprint even where the run's tables do not hold it (a copy of an older run's
/// document adds no fingerprint) and another document still has it.
#[test]
fn repair_lists_the_fingerprints_of_lost_copies_from_the_named_postings() {
    let dir = tempfile::tempdir().unwrap();
    let store_dir = dir.path().join("s");
    let mut store = Store::create(&store_dir, Settings::default()).unwrap();
    let fp = |i: u64| i.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    for prefix in ["a", "b"] {
        let mut batch = Batch::new();
        for i in 0..3000u64 {
            batch.push(&format!("{prefix}-{i}"), fp(i)).unwrap();
        }
        store.insert(&batch, None).unwrap();
    }
    drop(store);
    let before = answers(&store_dir, &[]).unwrap().2;
    let newest = std::fs::read_dir(store_dir.join("runs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .max()
        .unwrap();
    // Damage docs blocks of the second run, and no postings block.
    let docs = newest.join("docs.redb");
    let mut damaged = 0;
    for at in offsets(&docs, 1499) {
        flip(&docs, at);
        let report = Store::verify(&store_dir, false, &());
        let tables: Vec<String> = match &report {
            Ok(r) => r.findings.iter().filter_map(|f| f.table.clone()).collect(),
            Err(_) => vec!["unreadable".into()],
        };
        if !tables.is_empty() && tables.iter().all(|t| t == "docs") {
            damaged = tables.len();
            if damaged >= 2 {
                break;
            }
        } else {
            flip(&docs, at);
        }
    }
    assert!(damaged >= 1, "a docs block damaged");
    let mut store = Store::open(&store_dir).unwrap();
    let report = store.repair().unwrap();
    drop(store);
    let after = answers(&store_dir, &[]).unwrap().2;
    let lost: BTreeSet<u64> = before.difference(&after).map(|d| d.1).collect();
    assert!(!lost.is_empty());
    let listed: BTreeSet<u64> = report
        .runs
        .iter()
        .flat_map(|r| r.fingerprints_lost.iter())
        .map(|fp| u64::from_str_radix(fp, 16).unwrap())
        .collect();
    // Each lost "b" copy's fingerprint is still an "a" document's, and in the first run's
    // tables only: the named postings alone tell it.
    assert_eq!(listed, lost);
    assert!(Store::verify(&store_dir, false, &())
        .unwrap()
        .findings
        .is_empty());
}
