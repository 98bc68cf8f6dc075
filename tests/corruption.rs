//! Flipping any single byte of a stored block: `verify` reports it with its location, and a
//! read that meets the block fails with a clear error instead of returning wrong results.

use std::path::{Path, PathBuf};

use redb::{ReadableDatabase, ReadableTable, TableDefinition};
use simhashdb::{Batch, Settings, Snapshot, Store};

fn build(dir: &Path) -> Vec<(String, u64)> {
    let mut store = Store::create(
        dir,
        Settings {
            blocks: 6,
            distance: 3,
            shards: 1,
        },
    )
    .unwrap();
    let docs: Vec<(String, u64)> = (0..2_000u64)
        .map(|i| (format!("doc-{i}"), i.wrapping_mul(0x9E37_79B9_7F4A_7C15)))
        .collect();
    let mut batch = Batch::new();
    for (id, fp) in &docs {
        batch.push(id, *fp).unwrap();
    }
    store.insert(&batch, None).unwrap();
    docs
}

/// The bytes of the first block of a table, and where they sit in the file.
fn first_block(file: &Path, table: &str, u64_keys: bool) -> (usize, usize) {
    let db = redb::Database::open(file).unwrap();
    let txn = db.begin_read().unwrap();
    let block: Vec<u8> = if u64_keys {
        let t = txn
            .open_table(TableDefinition::<u64, &[u8]>::new(table))
            .unwrap();
        let block = t.first().unwrap().unwrap().1.value().to_vec();
        block
    } else {
        let t = txn
            .open_table(TableDefinition::<&[u8], &[u8]>::new(table))
            .unwrap();
        let block = t.first().unwrap().unwrap().1.value().to_vec();
        block
    };
    drop(txn);
    drop(db);
    let bytes = std::fs::read(file).unwrap();
    let at = bytes
        .windows(block.len())
        .position(|w| w == block.as_slice())
        .expect("the block is stored contiguously");
    (at, block.len())
}

fn run_file(store: &Path, name: &str) -> PathBuf {
    let run = std::fs::read_dir(store.join("runs"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    run.join(name)
}

fn flip(file: &Path, at: usize) {
    let mut bytes = std::fs::read(file).unwrap();
    bytes[at] ^= 0x20;
    std::fs::write(file, bytes).unwrap();
}

#[test]
fn every_flipped_byte_of_a_key_block_is_found_and_fails_reads() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("s");
    let docs = build(&store);
    let file = run_file(&store, "shard-000.redb");
    let (at, len) = first_block(&file, "t000", true);
    // The smallest fingerprint is in the first block of table 0 (the identity table).
    let smallest = docs.iter().map(|d| d.1).min().unwrap();
    for offset in 0..len {
        flip(&file, at + offset);
        let report = Store::verify(&store, false, &()).unwrap();
        assert!(
            report
                .findings
                .iter()
                .any(|f| f.location().contains("shard-000.redb table t000")),
            "flip at block byte {offset}: {:?}",
            report.findings
        );
        let err = Snapshot::open(&store)
            .unwrap()
            .query(smallest, 3)
            .expect_err("a query through the damaged block fails");
        assert!(err.to_string().contains("corrupted data"), "{err}");
        flip(&file, at + offset);
    }
    assert!(Store::verify(&store, false, &())
        .unwrap()
        .findings
        .is_empty());
}

#[test]
fn every_flipped_byte_of_a_docs_block_is_found_and_fails_reads() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("s");
    build(&store);
    let file = run_file(&store, "docs.redb");
    for table in ["docs", "postings"] {
        let (at, len) = first_block(&file, table, false);
        for offset in (0..len).step_by(3).chain([len - 1]) {
            flip(&file, at + offset);
            let report = Store::verify(&store, false, &()).unwrap();
            assert!(
                report
                    .findings
                    .iter()
                    .any(|f| f.location().contains(&format!("docs.redb table {table}"))),
                "{table} flip at block byte {offset}: {:?}",
                report.findings
            );
            flip(&file, at + offset);
        }
    }
    assert!(Store::verify(&store, false, &())
        .unwrap()
        .findings
        .is_empty());
}

#[test]
fn a_damaged_catalog_is_a_finding_and_a_missing_file_too() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("s");
    build(&store);
    let catalog = store.join("CATALOG");
    flip(&catalog, 20);
    let report = Store::verify(&store, false, &()).unwrap();
    assert!(
        report.findings[0].location().ends_with("CATALOG"),
        "{:?}",
        report.findings
    );
    flip(&catalog, 20);
    std::fs::remove_file(run_file(&store, "docs.redb")).unwrap();
    let report = Store::verify(&store, false, &()).unwrap();
    assert!(
        report.findings[0].location().ends_with("docs.redb"),
        "{:?}",
        report.findings
    );
}

/// Every file below `dir` with its bytes.
pub fn all_files(dir: &Path) -> std::collections::BTreeMap<PathBuf, Vec<u8>> {
    let mut out = std::collections::BTreeMap::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.extend(all_files(&path));
        } else {
            out.insert(path.clone(), std::fs::read(&path).unwrap());
        }
    }
    out
}

#[test]
fn verify_and_deep_verify_leave_every_store_file_byte_identical() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("s");
    build(&store);
    let mut s = Store::open(&store).unwrap();
    s.delete(["doc-1", "doc-2"]).unwrap();
    drop(s);
    let before = all_files(&store);
    let report = Store::verify(&store, false, &()).unwrap();
    assert!(report.findings.is_empty(), "{:?}", report.findings);
    let report = Store::verify(&store, true, &()).unwrap();
    assert!(report.findings.is_empty(), "{:?}", report.findings);
    assert_eq!(report.deep_checked, 3, "two docs files and a shard file");
    assert!(all_files(&store) == before, "a clean store was written to");

    // Damaged: a flipped byte in a data page and one in redb's own header of the shard file.
    let shard = store.join("runs/0000000001/shard-000.redb");
    let len = std::fs::metadata(&shard).unwrap().len();
    for at in [len as usize / 2, 40] {
        flip(&shard, at);
        let before = all_files(&store);
        let deep = Store::verify(&store, true, &());
        let _ = Store::verify(&store, false, &());
        assert!(
            all_files(&store) == before,
            "verify wrote to a damaged store (flip at {at}): {deep:?}"
        );
        flip(&shard, at);
    }
    assert!(Store::verify(&store, true, &())
        .unwrap()
        .findings
        .is_empty());
}
