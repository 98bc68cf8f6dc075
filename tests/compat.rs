//! Every released on-disk format opens: a committed store per format version in
//! tests/fixtures/format-vN, each with `documents.tsv` (ID, FINGERPRINT) of what it holds
//! (and from format 4, `sketches.tsv`: ID, SKETCH in hex, of the documents inserted as text).
//! The fixture of the current version is written when missing (then commit it).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use simhashdb::{Batch, CreateOptions, Scheme, Snapshot, Store};

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

/// Format 4: a store with 64-byte sketches; half of each batch inserted as text (with
/// sketches), half as bare fingerprints.
fn write_current_fixture(dir: &Path) {
    let store_dir = dir.join("store");
    let scheme = Scheme::default().with_sketch(64).unwrap();
    let options = CreateOptions {
        blocks: Some(6),
        shards: Some(16),
        scheme,
        ..CreateOptions::default()
    };
    let mut store = Store::create_from(&store_dir, &options).unwrap();
    let mut model = BTreeMap::new();
    let mut sketches = BTreeMap::new();
    for batch in 0..3 {
        let mut b = Batch::new();
        for (i, (id, fp)) in fixture_documents(batch).into_iter().enumerate() {
            if i % 2 == 0 {
                let text = format!("fixture text {id} of batch {batch}, word {i} and more words");
                let (fp, sketch) = scheme.document(&text).unwrap();
                let sketch = sketch.unwrap();
                b.push_sketched(&id, fp, &sketch).unwrap();
                model.insert(id.clone(), fp);
                sketches.insert(id, sketch);
            } else {
                b.push(&id, fp).unwrap();
                model.insert(id.clone(), fp);
                sketches.remove(&id);
            }
        }
        store.insert(&b, Some(&format!("fixture-{batch}"))).unwrap();
    }
    // Deletions (format 2 on): a few ids of the first batch.
    let doomed: Vec<String> = (0..5).map(|i| format!("b0-doc{i}")).collect();
    store.delete(doomed.iter().map(String::as_str)).unwrap();
    for id in &doomed {
        model.remove(id);
        sketches.remove(id);
    }
    drop(store);
    let hex = |bytes: &[u8]| bytes.iter().map(|b| format!("{b:02x}")).collect::<String>();
    let tsv: String = sketches
        .iter()
        .map(|(id, sketch)| format!("{id}\t{}\n", hex(sketch)))
        .collect();
    std::fs::write(dir.join("sketches.tsv"), tsv).unwrap();
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
        // Versions 1 and 2 need `migrate`, which brings them to 3 (no sketches); 3 (a
        // store without sketches) and 4 open as they are, and migrate leaves them.
        if version < 3 {
            let err = Snapshot::open(&store)
                .err()
                .expect("an old format does not open");
            assert!(
                err.to_string().contains("upgrade required")
                    && err.to_string().contains("simhashdb migrate"),
                "{err}"
            );
            assert_eq!(Store::migrate(&store).unwrap(), version);
        }
        let again = Store::migrate(&store).unwrap();
        assert_eq!(
            again,
            version.max(3),
            "migrating a current store is a no-op"
        );
        assert_eq!(
            Snapshot::open(&store).unwrap().format_version(),
            version.max(3)
        );
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
        // Format 4 keeps each text document's sketch; the others have none.
        let sketches = std::fs::read_to_string(fixture.join("sketches.tsv")).unwrap_or_default();
        let sketched: BTreeMap<&str, &str> = sketches
            .lines()
            .filter_map(|l| l.split_once('\t'))
            .collect();
        assert_eq!(
            snapshot.sketch_bytes().is_some(),
            version >= 4,
            "v{version}"
        );
        for id in model.keys() {
            let hex = snapshot
                .sketch(id)
                .unwrap()
                .map(|s| s.iter().map(|b| format!("{b:02x}")).collect::<String>());
            assert_eq!(
                hex.as_deref(),
                sketched.get(id.as_str()).copied(),
                "v{version} {id}"
            );
        }
        // And it takes a new batch, staying at its version.
        let mut store = Store::open(&store).unwrap();
        let mut b = Batch::new();
        b.push("after-open", 7).unwrap();
        assert_eq!(store.insert(&b, None).unwrap().inserted, 1);
        drop(store);
        let after = Snapshot::open(&tmp.path().join("store")).unwrap();
        assert_eq!(after.format_version(), version.max(3), "v{version}");
    }
}
