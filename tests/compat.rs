//! Every released on-disk format opens: a committed store per format version in
//! tests/fixtures/format-vN, each with `documents.tsv` (ID, FINGERPRINT) of what it holds.
//! The fixture of the current version is written when missing (then commit it).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use simhashdb::{Batch, Settings, Snapshot, Store};

use crate::util::{brute_force, query_tuples};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

fn fixture_documents(batch: u64) -> Vec<(String, u64)> {
    (0..60u64)
        .map(|i| {
            let fp = (i % 40).wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ (batch << (i % 64));
            (format!("b{batch}-doc{}", i % 50), fp)
        })
        .collect()
}

fn write_current_fixture(dir: &Path) {
    let store_dir = dir.join("store");
    let mut store = Store::create(
        &store_dir,
        Settings {
            blocks: 6,
            distance: 3,
            shards: 16,
        },
    )
    .unwrap();
    let mut model = BTreeMap::new();
    for batch in 0..3 {
        let mut b = Batch::new();
        for (id, fp) in fixture_documents(batch) {
            b.push(&id, fp).unwrap();
            model.insert(id, fp);
        }
        store.insert(&b, Some(&format!("fixture-{batch}"))).unwrap();
    }
    // Deletions (format 2 on): a few ids of the first batch.
    let doomed: Vec<String> = (0..5).map(|i| format!("b0-doc{i}")).collect();
    store.delete(doomed.iter().map(String::as_str)).unwrap();
    for id in &doomed {
        model.remove(id);
    }
    drop(store);
    std::fs::remove_file(store_dir.join("LOCK")).unwrap();
    let tsv: String = model
        .iter()
        .map(|(id, fp)| format!("{id}\t{fp:016x}\n"))
        .collect();
    std::fs::write(dir.join("documents.tsv"), tsv).unwrap();
}

pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

#[test]
fn every_format_version_opens_with_its_contents() {
    let current = fixtures().join(format!("format-v{}", Store::FORMAT_VERSION));
    if !current.exists() {
        write_current_fixture(&current);
    }
    for version in 1..=Store::FORMAT_VERSION {
        let fixture = fixtures().join(format!("format-v{version}"));
        let tmp = tempfile::tempdir().unwrap();
        let store = tmp.path().join("store");
        copy_dir(&fixture.join("store"), &store);
        let model: BTreeMap<String, u64> = std::fs::read_to_string(fixture.join("documents.tsv"))
            .unwrap()
            .lines()
            .map(|l| {
                let (id, fp) = l.split_once('\t').unwrap();
                (id.to_string(), u64::from_str_radix(fp, 16).unwrap())
            })
            .collect();
        if version < Store::FORMAT_VERSION {
            let err = Snapshot::open(&store)
                .err()
                .expect("an old format does not open");
            assert!(
                err.to_string().contains("upgrade required")
                    && err.to_string().contains("simhashdb migrate"),
                "{err}"
            );
            assert_eq!(Store::migrate(&store).unwrap(), version);
            let again = Store::migrate(&store).unwrap();
            assert_eq!(again, Store::FORMAT_VERSION, "migrating twice is a no-op");
        }
        let report = simhashdb::Store::verify(&store, false, &()).unwrap();
        assert!(
            report.findings.is_empty(),
            "v{version}: {:?}",
            report.findings
        );
        let snapshot = Snapshot::open(&store).unwrap();
        assert_eq!(snapshot.documents(), model.len() as u64, "v{version}");
        for (id, &fp) in &model {
            assert_eq!(snapshot.get(id).unwrap(), Some(fp), "v{version} {id}");
            let got = query_tuples(&snapshot, fp, 3);
            assert_eq!(
                got,
                brute_force(&model, fp, 3),
                "v{version} query {fp:016x}"
            );
        }
        // And it takes a new batch.
        let mut store = Store::open(&store).unwrap();
        let mut b = Batch::new();
        b.push("after-open", 7).unwrap();
        assert_eq!(store.insert(&b, None).unwrap().inserted, 1);
    }
}
