//! Delete, expire and compact against a brute-force model: random sequences of operations,
//! checked after every step by queries, `get`, the catalog's counts and `verify`.

use std::collections::BTreeMap;

use proptest::prelude::*;
use simhashdb::CompactionPolicy;
use simhashdb::ExpireSelector;
use simhashdb::{Batch, Snapshot, Stats, Store};

use crate::engine::{fingerprint, settings};
use crate::util::{brute_force, query_tuples};

#[derive(Clone, Debug)]
enum Op {
    Insert(Vec<(u8, u64)>),
    Delete(Vec<u8>),
    ExpireLabel(u8),
    Compact,
    CompactIfDue,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => proptest::collection::vec((0u8..40, fingerprint()), 0..25).prop_map(Op::Insert),
        2 => proptest::collection::vec(0u8..45, 0..10).prop_map(Op::Delete),
        1 => (0u8..6).prop_map(Op::ExpireLabel),
        1 => Just(Op::Compact),
        2 => Just(Op::CompactIfDue),
    ]
}

/// The model: id -> (fingerprint, label of the insert batch that set it).
type Model = BTreeMap<String, (u64, String)>;

fn check(snapshot: &Snapshot, model: &Model, k: u32) -> Result<(), TestCaseError> {
    let plain: BTreeMap<String, u64> = model
        .iter()
        .map(|(id, (fp, _))| (id.clone(), *fp))
        .collect();
    prop_assert_eq!(snapshot.documents(), plain.len() as u64);
    let mut queries: Vec<u64> = plain.values().map(|fp| fp ^ 0b11).collect();
    queries.extend([0, u64::MAX, 0x0123_4567_89ab_cdef]);
    for q in queries {
        prop_assert_eq!(
            query_tuples(snapshot, q, k),
            brute_force(&plain, q, k),
            "query {:016x}",
            q
        );
    }
    for i in 0..45u8 {
        let id = format!("id-{i}");
        prop_assert_eq!(
            snapshot.get(&id).unwrap(),
            plain.get(&id).copied(),
            "get {}",
            id
        );
    }
    // Audits skip deleted documents and dead fingerprints, before and after compaction.
    for d in 0..=k {
        prop_assert_eq!(
            crate::util::audit_pairs(snapshot, d).unwrap(),
            crate::audit::brute_force_pairs(&plain, d),
            "audit at distance {}",
            d
        );
    }
    let report = simhashdb::Store::verify(snapshot.dir(), false, &()).unwrap();
    prop_assert!(report.findings.is_empty(), "verify: {:?}", report.findings);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 32, ..ProptestConfig::default() })]

    #[test]
    fn every_operation_keeps_queries_equal_to_brute_force(
        settings in settings(),
        ops in proptest::collection::vec(op(), 1..12),
    ) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("store");
        let k = u32::from(settings.distance);
        let mut store = Store::create(&path, settings).unwrap();
        store.set_compaction_policy(CompactionPolicy { max_runs: 3, merge_factor: 2 }).unwrap();
        let mut model = Model::new();
        for (step, op) in ops.iter().enumerate() {
            let label = format!("L{}", step % 6);
            match op {
                Op::Insert(docs) => {
                    let mut batch = Batch::new();
                    for &(id, fp) in docs {
                        batch.push(&format!("id-{id}"), fp).unwrap();
                    }
                    let mut changed = BTreeMap::new();
                    for &(id, fp) in docs {
                        changed.insert(format!("id-{id}"), fp);
                    }
                    for (id, fp) in changed {
                        // An unchanged id keeps the batch that set it.
                        if model.get(&id).map(|m| m.0) != Some(fp) {
                            model.insert(id, (fp, label.clone()));
                        }
                    }
                    store.insert(&batch, Some(&label)).unwrap();
                    prop_assert!(
                        store.run_count() <= 3,
                        "the insert applies the store's compaction policy"
                    );
                }
                Op::Delete(ids) => {
                    let ids: Vec<String> = ids.iter().map(|i| format!("id-{i}")).collect();
                    let live = ids.iter().collect::<std::collections::BTreeSet<_>>()
                        .into_iter().filter(|id| model.contains_key(*id)).count() as u64;
                    let summary = store.delete(ids.iter().map(String::as_str)).unwrap();
                    prop_assert_eq!(summary.deleted, live);
                    for id in &ids {
                        model.remove(id);
                    }
                }
                Op::ExpireLabel(n) => {
                    let label = format!("L{n}");
                    let has = store.batches().iter().any(|b| b.label.as_deref() == Some(&label) && b.kind == "insert");
                    let result = store.expire(&ExpireSelector::Label(label.clone()));
                    if has {
                        let expected = model.values().filter(|(_, l)| *l == label).count() as u64;
                        prop_assert_eq!(result.unwrap().deleted, expected);
                        model.retain(|_, (_, l)| *l != label);
                    } else {
                        let no_label = matches!(
                            &result,
                            Err(simhashdb::Error::NoSuchLabel { label: l }) if *l == label
                        );
                        prop_assert!(no_label, "{:?}", result);
                    }
                }
                Op::Compact => {
                    store.compact().unwrap();
                    prop_assert!(store.run_count() <= 1);
                }
                Op::CompactIfDue => {
                    store.compact_if_due().unwrap();
                    prop_assert!(store.run_count() <= 3);
                }
            }
            check(&store.snapshot().unwrap(), &model, k)?;
        }
        drop(store);
        check(&Snapshot::open(&path).unwrap(), &model, k)?;
        // A full compaction leaves exactly the live fingerprints in the tables.
        let mut store = Store::open(&path).unwrap();
        store.compact().unwrap();
        let live: std::collections::BTreeSet<u64> = model.values().map(|(fp, _)| *fp).collect();
        let stored = Stats::of(&store.snapshot().unwrap()).unwrap().fingerprints;
        prop_assert_eq!(stored, live.len() as u64);
        check(&store.snapshot().unwrap(), &model, k)?;
    }
}

/// Runs big enough to be split over several shard files, merged into more files than any input
/// has: the merge must regroup every table's keys by file.
#[test]
fn compaction_regroups_keys_across_shard_files() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("store");
    // m = 6: 20 tables hold enough entries for the merged run to need several files.
    let settings = simhashdb::Settings {
        blocks: 6,
        ..simhashdb::Settings::default()
    };
    let mut store = Store::create(&path, settings).unwrap();
    store
        .set_compaction_policy(CompactionPolicy {
            max_runs: 0,
            merge_factor: 4,
        })
        .unwrap();
    let mut model: BTreeMap<String, u64> = BTreeMap::new();
    let mut state = 7u64;
    for run in 0..4u64 {
        let mut batch = Batch::new();
        for i in 0..300_000u64 {
            state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let fp = (state ^ (state >> 29)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            let id = format!("d{}", (run * 250_000 + i) % 1_000_000);
            batch.push(&id, fp).unwrap();
            model.insert(id, fp);
        }
        store.insert(&batch, None).unwrap();
    }
    let doomed: Vec<String> = (0..20_000).map(|i| format!("d{}", i * 37)).collect();
    store.delete(doomed.iter().map(String::as_str)).unwrap();
    for id in &doomed {
        model.remove(id);
    }
    let summary = store.compact().unwrap();
    assert_eq!(summary.runs_after, 1);
    assert!(shard_files(&path) > 1, "the merged run spans several files");
    let report = simhashdb::Store::verify(&path, false, &()).unwrap();
    assert!(report.findings.is_empty(), "{:?}", report.findings);
    assert_eq!(report.documents, model.len() as u64);
    let snapshot = store.snapshot().unwrap();
    for (id, &fp) in model.iter().step_by(5_000) {
        let got = query_tuples(&snapshot, fp ^ 0b1001, 3);
        assert_eq!(got, brute_force(&model, fp ^ 0b1001, 3), "{id}");
    }
}

/// The largest key, u64::MAX, survives a merge in which another input ran out first.
#[test]
fn the_largest_fingerprint_survives_compaction() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("store");
    let mut store = Store::create(&path, simhashdb::Settings::default()).unwrap();
    for fp in [0, u64::MAX] {
        let mut batch = Batch::new();
        batch.push("a", fp).unwrap();
        store.insert(&batch, None).unwrap();
    }
    store.compact().unwrap();
    assert_eq!(
        Stats::of(&store.snapshot().unwrap()).unwrap().fingerprints,
        1
    );
    let hits = store.snapshot().unwrap().query(u64::MAX, 0).unwrap();
    assert_eq!(hits.len(), 1);
    assert!(simhashdb::Store::verify(&path, false, &())
        .unwrap()
        .findings
        .is_empty());
}

fn batch_of(ids: std::ops::Range<u64>) -> Batch {
    let mut batch = Batch::new();
    for i in ids {
        batch
            .push(&format!("d{i}"), i.wrapping_mul(0x9E37_79B9_7F4A_7C15))
            .unwrap();
    }
    batch
}

#[test]
fn inserts_apply_the_compaction_policy_unless_told_not_to() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s");
    let mut store = Store::create(&path, simhashdb::Settings::default()).unwrap();
    let policy = CompactionPolicy {
        max_runs: 2,
        merge_factor: 8,
    };
    store.set_compaction_policy(policy).unwrap();
    let first = store.insert(&batch_of(0..10), None).unwrap();
    let second = store.insert(&batch_of(10..20), None).unwrap();
    assert_eq!(
        (first.compaction.is_none(), second.compaction.is_none()),
        (true, true)
    );
    let third = store.insert(&batch_of(20..30), None).unwrap();
    let merged = third.compaction.expect("a third run is past max_runs = 2");
    assert_eq!((merged.runs_before, merged.runs_after), (3, 2));
    assert_eq!(store.run_count(), 2);

    let mut insertion = store.begin_insert(None).compact_after(false);
    insertion.write(&batch_of(30..40)).unwrap();
    let summary = insertion.commit().unwrap();
    assert!(summary.compaction.is_none() && summary.compaction_failure.is_none());
    assert_eq!(store.run_count(), 3, "left for compact_if_due");
    assert!(store.compaction_due());
    store.compact_if_due().unwrap();
    assert_eq!(store.run_count(), 2);
    assert_eq!(Snapshot::open(&path).unwrap().documents(), 40);
}

#[test]
fn expiring_the_same_batches_again_changes_and_records_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s");
    let mut store = Store::create(&path, simhashdb::Settings::default()).unwrap();
    store.insert(&batch_of(0..10), Some("day-1")).unwrap();
    store.insert(&batch_of(10..20), Some("day-2")).unwrap();
    let first = store
        .expire(&ExpireSelector::Label("day-1".into()))
        .unwrap();
    assert_eq!(
        (first.deleted, first.expired_batches.clone()),
        (10, vec![1])
    );
    assert!(first.batch.is_some());
    let batches = store.batches().len();
    let again = store
        .expire(&ExpireSelector::Label("day-1".into()))
        .unwrap();
    assert_eq!((again.batch, again.deleted), (None, 0));
    assert!(again.expired_batches.is_empty());
    // Batches committed up to day-1's second: day-1 alone, and it is expired already.
    let day_1 = store.batches()[0].committed_unix_s;
    let up_to_day_1 = ExpireSelector::Before(day_1 + 1);
    let preview = store
        .snapshot()
        .unwrap()
        .preview_expire(&up_to_day_1)
        .unwrap();
    assert!(!preview.expired_batches.contains(&1));
    // "0d" is now: batches committed before this second.
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    match ExpireSelector::before_date("0d").unwrap() {
        ExpireSelector::Before(t) => assert!(now.abs_diff(t) <= 2, "0d is {t}, now is {now}"),
        other => panic!("0d parsed as {other:?}"),
    }
    assert_eq!(store.batches().len(), batches);
    let unknown = store.expire(&ExpireSelector::Label("day-9".into()));
    assert!(matches!(unknown, Err(simhashdb::Error::NoSuchLabel { .. })));
    let bad = ExpireSelector::before_date("yesterday").unwrap_err();
    assert!(bad.to_string().contains("yesterday"), "{bad}");
}

/// Records what a store says of its progress.
#[derive(Default)]
struct Recorder {
    phases: std::sync::Mutex<Vec<(String, u64)>>,
    done: std::sync::atomic::AtomicU64,
    finished: std::sync::atomic::AtomicU64,
}

impl simhashdb::Progress for Recorder {
    fn start(&self, phase: &str, steps: u64) {
        self.phases.lock().unwrap().push((phase.to_string(), steps));
    }
    fn advance(&self, steps: u64) {
        self.done
            .fetch_add(steps, std::sync::atomic::Ordering::SeqCst);
    }
    fn finish(&self) {
        self.finished
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    }
}

#[test]
fn long_operations_report_their_phases_and_steps() {
    use std::sync::atomic::Ordering;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s");
    let mut store = Store::create(&path, simhashdb::Settings::default()).unwrap();
    let recorder = std::sync::Arc::new(Recorder::default());
    store.set_progress(recorder.clone());
    store.insert(&batch_of(0..1000), None).unwrap();
    assert_eq!(
        *recorder.phases.lock().unwrap(),
        [
            ("checking the batch against the store".to_string(), 0),
            ("writing tables".to_string(), 10)
        ]
    );
    assert_eq!(
        recorder.done.load(Ordering::SeqCst),
        10,
        "one step per table"
    );
    store.insert(&batch_of(1000..2000), None).unwrap();
    store.compact().unwrap();
    let phases = recorder.phases.lock().unwrap().clone();
    assert_eq!(phases.last().unwrap().0, "merging 2 runs");
    let starts = phases.len() as u64;
    assert_eq!(
        recorder.finished.load(Ordering::SeqCst),
        starts,
        "every phase finishes"
    );
    let recorder = Recorder::default();
    let report = simhashdb::Store::verify(&path, true, &recorder).unwrap();
    assert!(report.findings.is_empty());
    let phases = recorder.phases.lock().unwrap().clone();
    assert_eq!(
        phases,
        [
            ("verifying runs".to_string(), 2),
            ("checking files with redb".to_string(), 2)
        ]
    );
    assert_eq!(
        recorder.done.load(Ordering::SeqCst),
        2 + 2,
        "every step advanced"
    );
}

/// The shard files of the store's only run.
fn shard_files(store: &std::path::Path) -> usize {
    let runs: Vec<_> = std::fs::read_dir(store.join("runs")).unwrap().collect();
    assert_eq!(runs.len(), 1, "one run");
    let run = runs.into_iter().next().unwrap().unwrap().path();
    std::fs::read_dir(run)
        .unwrap()
        .filter(|f| {
            f.as_ref()
                .unwrap()
                .file_name()
                .to_string_lossy()
                .starts_with("shard")
        })
        .count()
}
