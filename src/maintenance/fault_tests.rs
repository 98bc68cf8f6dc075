//! Faults injected in the file backend ([`crate::sys::file_backend`]): every write either
//! completes or leaves the previous state, and says which, whatever write or sync fails; the
//! store then verifies clean.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::atomic::Ordering;

use crate::format::settings::CompactionPolicy;

use crate::sys::file_backend::plan::{self, Fault};
use crate::{Batch, Settings, Snapshot, Store};

type Model = BTreeMap<String, u64>;

fn contents(dir: &Path) -> Model {
    let mut out = Model::new();
    Snapshot::open(dir)
        .unwrap()
        .for_each_live_document(|id, fp, _| {
            out.insert(id.to_string(), fp);
        })
        .unwrap();
    out
}

/// A store with three runs, and the operations to break: each changes the store.
fn base(dir: &Path) -> Model {
    let mut store = Store::create(
        dir,
        Settings {
            blocks: 6,
            distance: 3,
            shards: 4,
        },
    )
    .unwrap();
    store
        .set_compaction_policy(CompactionPolicy {
            max_runs: 0,
            merge_factor: 2,
        })
        .unwrap();
    for b in 0..3u64 {
        let mut batch = Batch::new();
        for i in 0..300u64 {
            batch
                .push(
                    &format!("d{}", (b * 200 + i) % 700),
                    (b << 32 | i).wrapping_mul(0x9E37_79B9_7F4A_7C15),
                )
                .unwrap();
        }
        store.insert(&batch, None).unwrap();
    }
    contents(dir)
}

fn run_op(op: usize, dir: &Path) -> crate::Result<()> {
    let mut store = Store::open(dir)?;
    match op {
        0 => {
            let mut batch = Batch::new();
            for i in 0..400u64 {
                batch.push(
                    &format!("d{}", i * 3),
                    i.wrapping_mul(0xD6E8_FEB8_6659_FD93),
                )?;
            }
            store.insert(&batch, None).map(|_| ())
        }
        1 => {
            let ids: Vec<String> = (0..200).map(|i| format!("d{}", i * 2)).collect();
            store.delete(ids.iter().map(String::as_str)).map(|_| ())
        }
        _ => store.compact().map(|_| ()),
    }
}

#[test]
fn every_injected_fault_leaves_the_old_state_or_the_new_one() {
    let _serial = plan::SERIAL.lock().unwrap();
    for op in 0..3 {
        // A clean run: the expected result, and how many writes and syncs it makes.
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s");
        let before = base(&path);
        let counter = plan::install(Fault::FailWrite(u64::MAX));
        run_op(op, &path).unwrap();
        plan::clear();
        let after = contents(&path);
        let (writes, syncs) = counter.counts();
        assert!(
            writes > 0 && syncs > 0,
            "op {op}: {writes} writes, {syncs} syncs"
        );
        let faults = (0..writes)
            .map(Fault::FailWrite)
            .chain((0..syncs).map(Fault::FailSync))
            .chain((0..syncs).map(Fault::FreezeAtSync));
        for fault in faults {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("s");
            base(&path);
            let plan = plan::install(fault);
            let result = run_op(op, &path);
            plan::clear();
            assert!(plan.fired.load(Ordering::SeqCst), "op {op} {fault:?} fired");
            // Reopening as a writer removes what a failed operation left behind.
            drop(Store::open(&path).unwrap());
            let report = Store::verify(&path, false, &()).unwrap();
            assert!(
                report.findings.is_empty(),
                "op {op} {fault:?}: {:?}",
                report.findings
            );
            let now = contents(&path);
            match result {
                Ok(()) => assert!(now == after, "op {op} {fault:?}: succeeded but differs"),
                Err(e) => {
                    assert!(now == before, "op {op} {fault:?}: failed ({e}) but changed");
                    assert!(
                        e.to_string().contains("injected fault"),
                        "op {op} {fault:?}: {e}"
                    );
                }
            }
            let leftovers = std::fs::read_dir(crate::format::layout::runs_dir(&path))
                .unwrap()
                .count();
            assert_eq!(leftovers, Snapshot::open(&path).unwrap().run_count());
        }
    }
}
