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

/// The current format (4 on): a store with 64-byte sketches; half of each batch inserted as text (with
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
    write_plain_store(&dir.join("plain"), &model);
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

/// The current format's store without sketches (format 8 on: its postings name their
/// documents), holding the documents of `model` in two batches and a deletion.
fn write_plain_store(store_dir: &Path, model: &BTreeMap<String, u64>) {
    let options = CreateOptions {
        blocks: Some(6),
        shards: Some(16),
        ..CreateOptions::default()
    };
    let mut store = Store::create_from(store_dir, &options).unwrap();
    let documents: Vec<(&String, &u64)> = model.iter().collect();
    let (first, second) = documents.split_at(documents.len() / 2);
    for (n, part) in [first, second].into_iter().enumerate() {
        let mut b = Batch::new();
        for (id, &fp) in part {
            b.push(id, fp).unwrap();
        }
        // A document the next batch deletes, so the store has a deletion entry.
        if n == 0 {
            b.push("deleted-later", 1).unwrap();
        }
        store.insert(&b, Some(&format!("plain-{n}"))).unwrap();
    }
    store.delete(["deleted-later"]).unwrap();
    drop(store);
    std::fs::remove_file(store_dir.join("LOCK")).unwrap();
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

/// Writes the current version's fixture if it is missing, once for all the tests.
fn ensure_current_fixture() {
    static WRITTEN: std::sync::Once = std::sync::Once::new();
    WRITTEN.call_once(|| {
        let current = fixtures().join(format!("format-v{}", Store::FORMAT_VERSION));
        if !current.exists() {
            write_current_fixture(&current);
        }
    });
}

/// What a fixture holds: its documents.tsv, (ID, FINGERPRINT in hex) per line.
fn fixture_model(fixture: &Path) -> BTreeMap<String, u64> {
    std::fs::read_to_string(fixture.join("documents.tsv"))
        .unwrap()
        .lines()
        .map(|l| {
            let (id, fp) = l.split_once('\t').unwrap();
            (id.to_string(), u64::from_str_radix(fp, 16).unwrap())
        })
        .collect()
}

#[test]
fn every_format_version_opens_with_its_contents() {
    ensure_current_fixture();
    for version in 1..=Store::FORMAT_VERSION {
        let fixture = fixtures().join(format!("format-v{version}"));
        let tmp = tempfile::tempdir().unwrap();
        let store = tmp.path().join("store");
        copy_dir(&fixture.join("store"), &store);
        let mut model = fixture_model(&fixture);
        // Versions 1 and 2 need `migrate` before they open; 3 to 6 open as they are and
        // take new batches staying at their version (their blocks in their own layout, an id
        // filter from 6 on, sketches in postings from 7 on), so that the builds that wrote
        // them keep opening them.
        let mut kept_sketches = BTreeMap::new();
        if version < 3 {
            let err = Snapshot::open(&store)
                .err()
                .expect("an old format does not open");
            assert!(
                err.to_string().contains("upgrade required")
                    && err.to_string().contains("simhashdb migrate"),
                "{err}"
            );
        } else {
            // Stores with sketches (format 4 on) take one with the document.
            let kept = format!("kept-at-v{version}");
            let kept_sketch = (version >= 4).then(|| vec![version as u8; 64]);
            insert_one(&store, &kept, 0x0123_4567_89ab_cdef, kept_sketch.as_deref());
            if let Some(sketch) = &kept_sketch {
                let hex = sketch.iter().map(|b| format!("{b:02x}")).collect();
                kept_sketches.insert(kept.clone(), hex);
            }
            assert_eq!(Snapshot::open(&store).unwrap().format_version(), version);
            let elias_fano = version >= 5;
            assert!(key_blocks(&store, true).iter().all(|&ef| ef == elias_fano));
            let filtered = version >= 6;
            assert!(id_filters(&store, true).iter().all(|&f| f == filtered));
            assert!(docs_keys_hashed(&store).iter().all(|&h| h == filtered));
            // Formats 4 to 6 keep sketches in a table of their own; 7 and 8 in the postings;
            // 9 in the docs entries; 10 in the sketch area the docs entries name.
            let own_table = (4..7).contains(&version);
            assert!(sketch_tables(&store, true).iter().all(|&t| t == own_table));
            assert!(postings_flagged(&store, true)
                .iter()
                .all(|&f| f == (7..=8).contains(&version)));
            assert!(docs_flagged(&store, true)
                .iter()
                .all(|&f| f == (version >= 9)));
            assert!(docs_in_area(&store, true)
                .iter()
                .all(|&f| f == (version >= 10)));
            assert_verifies(&store, version);
            model.insert(kept, 0x0123_4567_89ab_cdef);
        }
        // `migrate` brings every version to the current one and is then a no-op.
        assert_eq!(Store::migrate(&store).unwrap(), version);
        assert_eq!(Store::migrate(&store).unwrap(), Store::FORMAT_VERSION);
        assert_eq!(
            Snapshot::open(&store).unwrap().format_version(),
            Store::FORMAT_VERSION
        );
        assert_verifies(&store, version);
        // Every run's key blocks were rewritten, every run has an id filter, and every
        // sketch is in the sketch area its docs entry names (format 10): no run has a
        // sketches table, a store with sketches (format 4 on) has every docs block flagged
        // so, and every store has postings that name their documents.
        assert!(key_blocks(&store, false).iter().all(|&ef| ef), "v{version}");
        assert!(id_filters(&store, false).iter().all(|&f| f), "v{version}");
        assert!(
            !sketch_tables(&store, false).iter().any(|&t| t),
            "v{version}"
        );
        let flagged = docs_flagged(&store, false);
        assert!(flagged.iter().all(|&f| f == (version >= 4)), "v{version}");
        let in_area = docs_in_area(&store, false);
        assert!(in_area.iter().all(|&f| f == (version >= 4)), "v{version}");
        assert!(
            !postings_flagged(&store, false).iter().any(|&f| f),
            "v{version}"
        );
        let named = postings_named(&store, false);
        assert!(named.iter().all(|&n| n), "v{version}");
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
        let mut sketched: BTreeMap<String, String> = sketches
            .lines()
            .filter_map(|l| l.split_once('\t'))
            .map(|(id, hex)| (id.to_string(), hex.to_string()))
            .collect();
        sketched.append(&mut kept_sketches);
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
                sketched.get(id.as_str()).map(String::as_str),
                "v{version} {id}"
            );
        }
        // And it takes a new batch in the current format, beside the blocks it had.
        drop(snapshot);
        insert_one(&store, "after-migrate", 7, None);
        model.insert("after-migrate".into(), 7);
        assert!(key_blocks(&store, true).iter().all(|&ef| ef));
        assert!(id_filters(&store, true).iter().all(|&f| f));
        assert!(docs_keys_hashed(&store).iter().all(|&h| h));
        assert_verifies(&store, version);
        let after = Snapshot::open(&store).unwrap();
        assert_eq!(after.format_version(), Store::FORMAT_VERSION, "v{version}");
        for fp in [7, 0x0123_4567_89ab_cdef] {
            assert_eq!(
                query_tuples(&after, fp, 3),
                brute_force(&model, fp, 3),
                "v{version}"
            );
        }
    }
}

/// The run directories of the store at `dir`, oldest first (or only the newest).
fn run_dirs(dir: &Path, newest_only: bool) -> Vec<PathBuf> {
    let mut runs: Vec<PathBuf> = std::fs::read_dir(dir.join("runs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    runs.sort();
    if newest_only {
        runs.drain(..runs.len() - 1);
    }
    runs
}

/// Whether each key block of the newest run (or of every run) of the store at `dir` is an
/// Elias-Fano block (format 5) rather than a restart block (formats 3 and 4): docs/format.md,
/// "Key blocks".
fn key_blocks(dir: &Path, newest_only: bool) -> Vec<bool> {
    use redb::{ReadableDatabase, ReadableTable, TableDefinition, TableHandle};
    let runs = run_dirs(dir, newest_only);
    let files = runs
        .iter()
        .flat_map(|run| std::fs::read_dir(run).unwrap().map(|f| f.unwrap()));
    let mut layouts = Vec::new();
    for file in files {
        let path = file.path();
        if !path
            .file_name()
            .unwrap()
            .to_string_lossy()
            .starts_with("shard-")
        {
            continue;
        }
        let db = redb::Database::open(&path).unwrap();
        let txn = db.begin_read().unwrap();
        for table in txn.list_tables().unwrap() {
            let def = TableDefinition::<u64, &[u8]>::new(table.name());
            for block in txn.open_table(def).unwrap().iter().unwrap() {
                layouts.push(block.unwrap().1.value()[6..8] == [0, 0]);
            }
        }
    }
    assert!(!layouts.is_empty());
    layouts
}

/// Whether the docs file of the newest run (or of every run) of the store at `dir` holds an id
/// filter (format 6): docs/format.md, "Id filters".
fn id_filters(dir: &Path, newest_only: bool) -> Vec<bool> {
    use redb::{ReadableDatabase, TableHandle};
    let runs = run_dirs(dir, newest_only);
    runs.iter()
        .map(|run| {
            let db = redb::Database::open(run.join("docs.redb")).unwrap();
            let txn = db.begin_read().unwrap();
            let names: Vec<String> = txn
                .list_tables()
                .unwrap()
                .map(|t| t.name().to_string())
                .collect();
            names.iter().any(|n| n == "ids")
        })
        .collect()
}

/// Whether each docs block of the newest run of the store at `dir` leaves its keys out (bit
/// 15 of its entry count, format 6): docs/format.md, "Entry blocks".
fn docs_keys_hashed(dir: &Path) -> Vec<bool> {
    count_flags(dir, true, "docs", |high| high & 0x80 != 0)
}

/// Whether each docs block of every run of the store at `dir` is compressed (bit 12 of its
/// entry count, format 8): docs/format.md, "Entry blocks".
fn docs_compressed(dir: &Path) -> Vec<bool> {
    count_flags(dir, false, "docs", |high| high & 0x10 != 0)
}

/// `flag(b)` of each block of entry table `table` in the newest run (or every run) of the store
/// at `dir`, b the high byte of the block's entry count (its flags: docs/format.md, "Entry
/// blocks").
fn count_flags(dir: &Path, newest_only: bool, table: &str, flag: impl Fn(u8) -> bool) -> Vec<bool> {
    use redb::{ReadableDatabase, ReadableTable, TableDefinition};
    let mut flags = Vec::new();
    for run in run_dirs(dir, newest_only) {
        let db = redb::Database::open(run.join("docs.redb")).unwrap();
        let txn = db.begin_read().unwrap();
        let table = txn
            .open_table(TableDefinition::<&[u8], &[u8]>::new(table))
            .unwrap();
        for block in table.iter().unwrap() {
            flags.push(flag(block.unwrap().1.value()[5]));
        }
    }
    assert!(!flags.is_empty());
    flags
}

/// Whether the docs file of the newest run (or of every run) of the store at `dir` has a
/// sketches table (formats 4 to 6): docs/format.md, "Entry blocks".
fn sketch_tables(dir: &Path, newest_only: bool) -> Vec<bool> {
    use redb::{ReadableDatabase, TableHandle};
    run_dirs(dir, newest_only)
        .iter()
        .map(|run| {
            let db = redb::Database::open(run.join("docs.redb")).unwrap();
            let txn = db.begin_read().unwrap();
            let mut names = txn.list_tables().unwrap();
            names.any(|t| t.name() == "sketches")
        })
        .collect()
}

/// Whether each postings block of the newest run (or of every run) of the store at `dir` has
/// sketch flags (bit 14 of its entry count, formats 7 and 8 in a store with sketches):
/// docs/format.md, "Entry blocks".
fn postings_flagged(dir: &Path, newest_only: bool) -> Vec<bool> {
    count_flags(dir, newest_only, "postings", |high| high & 0x40 != 0)
}

/// Whether each docs block of the newest run (or of every run) of the store at `dir` has
/// sketch flags (bit 14 of its entry count, format 9 in a store with sketches):
/// docs/format.md, "Entry blocks".
fn docs_flagged(dir: &Path, newest_only: bool) -> Vec<bool> {
    count_flags(dir, newest_only, "docs", |high| high & 0x40 != 0)
}

/// Whether each docs block of the newest run (or of every run) of the store at `dir` keeps
/// its sketches in the run's sketch area (bits 13 and 14 of its entry count, format 10 in a
/// store with sketches): docs/format.md, "Entry blocks".
fn docs_in_area(dir: &Path, newest_only: bool) -> Vec<bool> {
    count_flags(dir, newest_only, "docs", |high| high & 0x60 == 0x60)
}

/// Whether each postings block of the newest run (or of every run) of the store at `dir`
/// names its documents (bit 13 of its entry count, format 8 in a store without sketches, 9
/// on in every store):
/// docs/format.md, "Named postings".
fn postings_named(dir: &Path, newest_only: bool) -> Vec<bool> {
    count_flags(dir, newest_only, "postings", |high| high & 0xe0 == 0x20)
}

/// The stores without sketches of format 8 on (each fixture's `plain`, whose postings name
/// their documents) open with their contents, answer as brute force, take a batch in their
/// layout, verify, and need no migration.
#[test]
fn plain_stores_of_format_8_on_open_with_their_contents() {
    ensure_current_fixture();
    for version in 8..=Store::FORMAT_VERSION {
        let fixture = fixtures().join(format!("format-v{version}"));
        let tmp = tempfile::tempdir().unwrap();
        let store = tmp.path().join("store");
        copy_dir(&fixture.join("plain"), &store);
        let mut model = fixture_model(&fixture);
        assert!(postings_named(&store, false).iter().all(|&n| n));
        // Format 8 compresses docs blocks where that saves an eighth: these ids do.
        assert!(docs_compressed(&store).iter().any(|&c| c), "v{version}");
        assert_verifies(&store, version);
        insert_one(&store, "kept", 0x0123_4567_89ab_cdef, None);
        model.insert("kept".into(), 0x0123_4567_89ab_cdef);
        assert!(postings_named(&store, true).iter().all(|&n| n));
        assert_verifies(&store, version);
        // Without sketches, format 8's runs are format 9's: migrate only commits the catalog.
        assert_eq!(Store::migrate(&store).unwrap(), version);
        assert_verifies(&store, version);
        let snapshot = Snapshot::open(&store).unwrap();
        assert_eq!(snapshot.format_version(), Store::FORMAT_VERSION);
        assert_eq!(snapshot.sketch_bytes(), None);
        assert_eq!(snapshot.documents(), model.len() as u64, "v{version}");
        assert_eq!(snapshot.get("deleted-later").unwrap(), None);
        for (id, &fp) in &model {
            assert_eq!(snapshot.get(id).unwrap(), Some(fp), "v{version} {id}");
            let got = query_tuples(&snapshot, fp, 3);
            assert_eq!(got, brute_force(&model, fp, 3), "v{version} {fp:016x}");
        }
    }
}

/// Inserts one document into the store at `dir`, with `sketch` if given.
fn insert_one(dir: &Path, id: &str, fingerprint: u64, sketch: Option<&[u8]>) {
    let mut store = Store::open(dir).unwrap();
    let mut batch = Batch::new();
    match sketch {
        Some(sketch) => batch.push_sketched(id, fingerprint, sketch).unwrap(),
        None => batch.push(id, fingerprint).unwrap(),
    }
    assert_eq!(store.insert(&batch, None).unwrap().inserted, 1);
}

/// `verify` of the store at `dir` (a fixture of format `version`) finds nothing.
fn assert_verifies(dir: &Path, version: u32) {
    let report = simhashdb::Store::verify(dir, false, &()).unwrap();
    assert!(
        report.findings.is_empty(),
        "v{version}: {:?}",
        report.findings
    );
}

/// Sketches never change: each fixture's sketches.tsv, written by the build of its format
/// (the oldest in format 4's), is computed again from the same texts by this build, bit for
/// bit (a stored sketch is compared with new ones, so its value is part of the format).
#[test]
fn sketches_are_those_every_earlier_build_computed() {
    ensure_current_fixture();
    let scheme = Scheme::default().with_sketch(64).unwrap();
    for version in 4..=Store::FORMAT_VERSION {
        let stored =
            std::fs::read_to_string(fixtures().join(format!("format-v{version}/sketches.tsv")))
                .unwrap();
        assert!(stored.lines().count() > 50, "v{version}");
        for line in stored.lines() {
            let (id, hex) = line.split_once('\t').unwrap();
            // As write_current_fixture makes them: batch B's document i is b{B}-doc{i % 50}, the
            // later of two pushes of an id is kept, and an even i's text is inserted.
            let (batch, n) = id.trim_start_matches('b').split_once("-doc").unwrap();
            let n: u64 = n.parse().unwrap();
            let i = if n < 10 { n + 50 } else { n };
            let text = format!("fixture text {id} of batch {batch}, word {i} and more words");
            let sketch = scheme.document(&text).unwrap().1.unwrap();
            let sketch: String = sketch.iter().map(|b| format!("{b:02x}")).collect();
            assert_eq!(sketch, hex, "v{version} {id}");
        }
    }
}
