//! SIGKILL at random moments of `insert`, `dedup --insert`, `delete`, `compact` and `migrate`:
//! after each kill
//! the store opens, `verify` finds nothing, and its contents equal a model of exactly the
//! operations that reported success, plus possibly the one in flight, whole.
//!
//! CI runs `CRASH_KILLS` (default 20) kills; scripts/crash.sh runs hundreds.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use simhashdb::{Snapshot, Store};

use crate::util::dedup_batch;

type Model = BTreeMap<String, u64>;

const IDS: u64 = 30_000;
const INSERT_DOCS: u64 = 4_000;
const DELETE_IDS: u64 = 800;

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

fn fingerprint(op: u64, i: u64) -> u64 {
    (op << 20 | i)
        .wrapping_mul(0x9E37_79B9_7F4A_7C15)
        .rotate_left(17)
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Kind {
    Insert,
    Dedup,
    Delete,
    Compact,
}

/// Writes the input of operation `op` and returns the command's arguments and the model after
/// it succeeds.
fn prepare(kind: Kind, op: u64, store: &Path, dir: &Path, model: &Model) -> (Vec<String>, Model) {
    let mut after = model.clone();
    let store = store.to_str().unwrap().to_string();
    let input = dir.join(format!("op{op}.txt"));
    let input_str = input.to_str().unwrap().to_string();
    match kind {
        Kind::Insert => {
            let mut lines = String::new();
            for i in 0..INSERT_DOCS {
                let id = format!("doc-{}", (op * 2_500 + i) % IDS);
                let fp = fingerprint(op, i);
                lines.push_str(&format!("{id}\t{fp:016x}\n"));
                after.insert(id, fp);
            }
            std::fs::write(&input, lines).unwrap();
            let mut args = vec!["insert".into(), store, input_str];
            if op % 2 == 1 {
                // Several runs per batch: a kill between them must lose all of them.
                args.extend(["--run-documents".into(), "1500".into()]);
            }
            (args, after)
        }
        Kind::Delete => {
            let mut lines = String::new();
            for j in 0..DELETE_IDS {
                let id = format!("doc-{}", (op * 977 + j * 7) % IDS);
                lines.push_str(&id);
                lines.push('\n');
                after.remove(&id);
            }
            std::fs::write(&input, lines).unwrap();
            (
                vec!["delete".into(), store, "--input".into(), input_str],
                after,
            )
        }
        Kind::Dedup => {
            // Half copies of stored documents (dropped), half new ones (kept and inserted).
            let stored: Vec<u64> = model.values().copied().collect();
            let mut lines = String::new();
            let mut batch = simhashdb::Batch::new();
            for i in 0..INSERT_DOCS {
                let id = format!("doc-{}", (op * 2_500 + i) % IDS);
                let fp = match (i % 2, stored.is_empty()) {
                    (0, false) => stored[(i as usize * 7) % stored.len()],
                    _ => fingerprint(op, i),
                };
                lines.push_str(&format!("{id}\t{fp:016x}\n"));
                batch.push(&id, fp).unwrap();
            }
            std::fs::write(&input, lines).unwrap();
            let snapshot = Snapshot::open(Path::new(&store)).unwrap();
            for (i, verdict) in dedup_batch(&snapshot, &batch, 3, None)
                .unwrap()
                .iter()
                .enumerate()
            {
                if verdict.kept {
                    after.insert(batch.id(i).to_string(), batch.fingerprint(i));
                }
            }
            let output = dir
                .join(format!("op{op}.kept"))
                .to_str()
                .unwrap()
                .to_string();
            let args = ["dedup", &store, &input_str, "--insert", "--output", &output];
            (args.map(String::from).to_vec(), after)
        }
        Kind::Compact => (vec!["compact".into(), store], after),
    }
}

fn contents(store: &Path) -> Model {
    let snapshot = Snapshot::open(store).expect("the store opens after a kill");
    let mut live = Model::new();
    snapshot
        .for_each_live_document(|id, fp, _| {
            live.insert(id.to_string(), fp);
        })
        .unwrap();
    live
}

fn run_ids(store: &Path) -> Vec<u64> {
    simhashdb::Snapshot::open(store).unwrap().run_ids()
}

fn assert_clean(store: &Path, what: &str) {
    let report = Store::verify(store, false, &()).unwrap();
    assert!(
        report.findings.is_empty(),
        "{what}: verify found {:?}",
        report.findings
    );
    // Whatever the kill left in runs/ is reported as debris, and nothing else is.
    let live = run_ids(store);
    let mut unnamed: Vec<std::path::PathBuf> = std::fs::read_dir(store.join("runs"))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| {
            let id = path.file_name().unwrap().to_str().unwrap().parse().ok();
            !id.is_some_and(|id| live.contains(&id))
        })
        .collect();
    unnamed.sort();
    let reported: Vec<std::path::PathBuf> = report.debris.iter().map(|d| d.path.clone()).collect();
    assert_eq!(reported, unnamed, "{what}: the debris verify reports");
}

#[test]
fn sigkill_during_insert_delete_and_compact_loses_nothing() {
    let kills: u64 = std::env::var("CRASH_KILLS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(20);
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("s");
    let mut s = Store::create(
        &store,
        simhashdb::Settings {
            blocks: 6,
            distance: 3,
            shards: 4,
        },
    )
    .unwrap();
    // Inserts merge often, so kills land in automatic compactions too.
    s.set_compaction_policy(simhashdb::CompactionPolicy {
        max_runs: 4,
        merge_factor: 2,
    })
    .unwrap();
    drop(s);
    let mut model = Model::new();
    let mut rng = Rng(0x2545_F491_4F6C_DD1D);
    // How long each kind took the first time: kills land in 0.2..2x that.
    let mut micros: BTreeMap<Kind, u64> = BTreeMap::new();
    let (mut killed, mut completed, mut op) = (0u64, 0u64, 0u64);
    // Killed operations whose effect was absent / whole, per kind.
    let mut outcomes: BTreeMap<(Kind, bool), u64> = BTreeMap::new();
    while killed < kills {
        op += 1;
        let kind = match rng.next() % 7 {
            0 | 1 => Kind::Insert,
            2 | 3 => Kind::Delete,
            4 | 5 => Kind::Dedup,
            _ => Kind::Compact,
        };
        let (args, after) = prepare(kind, op, &store, dir.path(), &model);
        let runs_before = run_ids(&store);
        let mut child = Command::new(env!("CARGO_BIN_EXE_simhashdb"))
            .args(&args)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let started = Instant::now();
        let status = match micros.get(&kind) {
            None => {
                let status = child.wait().unwrap();
                micros.insert(kind, started.elapsed().as_micros() as u64);
                status
            }
            Some(&t) => {
                // Uniform over 0.2t..2t: most of a short command's time is starting up.
                let delay = t / 5 + rng.next() % (t * 9 / 5 + 1);
                std::thread::sleep(Duration::from_micros(delay));
                let _ = child.kill();
                child.wait().unwrap()
            }
        };
        let what = format!(
            "op {op} ({kind:?}, {})",
            if status.success() {
                "completed"
            } else {
                "killed"
            }
        );
        assert_clean(&store, &what);
        let now = contents(&store);
        if kind == Kind::Dedup {
            // The kept records are in place before the batch commits, and whole.
            let kept = dir.path().join(format!("op{op}.kept"));
            if now != model || status.success() {
                assert!(kept.exists(), "{what}: committed without its output");
            }
            if kept.exists() {
                let lines = std::fs::read_to_string(&kept).unwrap().lines().count();
                let new = after
                    .iter()
                    .filter(|(id, fp)| model.get(*id) != Some(fp))
                    .count();
                assert_eq!(lines, new, "{what}: the output holds every kept record");
            }
        }
        if status.success() {
            completed += 1;
            assert!(
                now == after,
                "{what}: reported success but the contents differ"
            );
        } else {
            killed += 1;
            assert!(
                now == model || now == after,
                "{what}: the contents are neither before nor after the operation"
            );
            if model != after {
                *outcomes.entry((kind, now == after)).or_default() += 1;
            } else if kind == Kind::Compact {
                *outcomes
                    .entry((kind, run_ids(&store) != runs_before))
                    .or_default() += 1;
            }
        }
        model = now;
    }
    eprintln!("{completed} completed, {killed} killed; killed (kind, took effect): {outcomes:?}");
    assert!(completed > 0, "some operations completed");
    assert!(
        outcomes.keys().any(|&(_, whole)| !whole),
        "some kills landed before the commit point: {outcomes:?}"
    );
    // A later writer cleans what the killed ones left, says what, and works.
    let left = Store::verify(&store, false, &()).unwrap().debris;
    let s = Store::open(&store).unwrap();
    assert_eq!(s.removed_debris(), left.as_slice());
    let live: Vec<u64> = s.snapshot().unwrap().run_ids();
    for entry in std::fs::read_dir(store.join("runs")).unwrap() {
        let id: u64 = entry
            .unwrap()
            .file_name()
            .to_str()
            .unwrap()
            .parse()
            .unwrap();
        assert!(live.contains(&id), "abandoned run {id} was removed");
    }
}

#[test]
fn sigkill_during_migrate_leaves_the_old_or_the_new_version() {
    // Format 1 goes through every step; 3 and 4 (with sketches) rewrite their key blocks,
    // then add id filters as 5 does, then (with sketches) move them into the postings as 6
    // does; a store without sketches (1, 3) then has its postings name their documents (the
    // step from 7), one with sketches (4 to 8) its sketches moved into the docs entries and
    // its postings named (the step from 8), then its sketches moved into the sketch area (the
    // step from 9).
    for version in [1u64, 3, 4, 5, 6, 7, 8, 9] {
        let fixture =
            Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("tests/fixtures/format-v{version}"));
        let documents = std::fs::read_to_string(fixture.join("documents.tsv")).unwrap();
        let sketches = std::fs::read_to_string(fixture.join("sketches.tsv")).unwrap_or_default();
        let mut rng = Rng(0x9E37_79B9_7F4A_7C15 ^ version);
        let mut first_micros = None;
        for round in 0..10 {
            let what = format!("v{version} migrate round {round}");
            let dir = tempfile::tempdir().unwrap();
            let store = dir.path().join("s");
            crate::compat::copy_dir(&fixture.join("store"), &store);
            let mut child = Command::new(env!("CARGO_BIN_EXE_simhashdb"))
                .args(["migrate", store.to_str().unwrap()])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .unwrap();
            let started = Instant::now();
            match first_micros {
                None => {
                    assert!(child.wait().unwrap().success());
                    first_micros = Some(started.elapsed().as_micros() as u64);
                }
                Some(t) => {
                    std::thread::sleep(Duration::from_micros(rng.next() % (t * 3 / 2 + 1)));
                    let _ = child.kill();
                    child.wait().unwrap();
                }
            }
            // Versions 3 and up open at every moment; 1 and 2 ask for the upgrade.
            match Snapshot::open(&store) {
                Ok(_) => {}
                Err(e) => assert!(
                    version < 3 && e.to_string().contains("upgrade required"),
                    "{what}: {e}"
                ),
            }
            simhashdb::Store::migrate(&store).unwrap();
            assert_clean(&store, &what);
            let snapshot = Snapshot::open(&store).unwrap();
            assert_eq!(snapshot.format_version(), Store::FORMAT_VERSION, "{what}");
            let mut held = 0;
            for line in documents.lines() {
                let (id, fp) = line.split_once('\t').unwrap();
                let fp = u64::from_str_radix(fp, 16).unwrap();
                assert_eq!(snapshot.get(id).unwrap(), Some(fp), "{what}: {id}");
                assert!(
                    crate::util::query_tuples(&snapshot, fp, 0)
                        .iter()
                        .any(|(_, _, i)| i == id),
                    "{what}: query {fp:016x}"
                );
                held += 1;
            }
            assert_eq!(snapshot.documents(), held, "{what}");
            for line in sketches.lines() {
                let (id, hex) = line.split_once('\t').unwrap();
                let sketch = snapshot.sketch(id).unwrap().expect("a sketch");
                let stored: String = sketch.iter().map(|b| format!("{b:02x}")).collect();
                assert_eq!(stored, hex, "{what}: the sketch of {id}");
            }
        }
    }
}
