//! The engine against a brute-force model: random stores built over several batches.

use std::collections::BTreeMap;

use proptest::prelude::*;
use simhashdb::{Batch, Database, DatabaseOptions, Query, Settings, Snapshot, Stats, Store};

use crate::util::{brute_force, query_tuples};

/// Fingerprints that exercise the edges: 0, u64::MAX, and near-duplicates of a few bases.
pub fn fingerprint() -> impl Strategy<Value = u64> {
    prop_oneof![
        1 => Just(0u64),
        1 => Just(u64::MAX),
        4 => any::<u64>(),
        8 => (0usize..4, proptest::collection::vec(0u32..64, 0..=4)).prop_map(|(base, flips)| {
            const BASES: [u64; 4] = [0x0123_4567_89ab_cdef, 0, u64::MAX, 0xf0f0_f0f0_0f0f_0f0f];
            flips.iter().fold(BASES[base], |fp, &bit| fp ^ (1 << bit))
        }),
    ]
}

pub fn settings() -> impl Strategy<Value = Settings> {
    prop_oneof![
        Just(Settings {
            blocks: 6,
            distance: 3,
            shards: 256
        }),
        Just(Settings {
            blocks: 6,
            distance: 3,
            shards: 1
        }),
        Just(Settings {
            blocks: 4,
            distance: 2,
            shards: 16
        }),
        Just(Settings {
            blocks: 8,
            distance: 4,
            shards: 64
        }),
        Just(Settings {
            blocks: 5,
            distance: 1,
            shards: 4
        }),
    ]
}

/// A batch: (id number from a small pool so ids repeat across batches, fingerprint).
pub fn batches() -> impl Strategy<Value = Vec<Vec<(u8, u64)>>> {
    proptest::collection::vec(
        proptest::collection::vec((0u8..40, fingerprint()), 0..30),
        1..5,
    )
}

fn check_all(snapshot: &Snapshot, model: &BTreeMap<String, u64>, queries: &[u64], k: u32) {
    for &q in queries {
        for d in 0..=k {
            let got = query_tuples(snapshot, q, d);
            assert_eq!(
                got,
                brute_force(model, q, d),
                "query {q:016x} at distance {d}"
            );
        }
    }
    let asked: Vec<Query> = queries.iter().map(|&q| Query::from(q)).collect();
    let many = snapshot.query_many(&asked, k, None).unwrap();
    for (&q, got) in queries.iter().zip(many) {
        assert_eq!(
            got.len(),
            brute_force(model, q, k).len(),
            "query_many {q:016x}"
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn queries_equal_brute_force_over_batches_and_reopen(
        settings in settings(),
        batches in batches(),
        extra_queries in proptest::collection::vec(fingerprint(), 0..10),
    ) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("store");
        let k = u32::from(settings.distance);
        let mut model: BTreeMap<String, u64> = BTreeMap::new();
        let mut store = Store::create(&path, settings).unwrap();
        for docs in &batches {
            let mut batch = Batch::new();
            for &(id, fp) in docs {
                batch.push(&format!("id-{id}"), fp).unwrap();
            }
            let before = model.clone();
            for &(id, fp) in docs {
                model.insert(format!("id-{id}"), fp);
            }
            let summary = store.insert(&batch, None).unwrap();
            let changed = model.iter().filter(|(id, fp)| before.get(*id) != Some(fp)).count() as u64;
            prop_assert_eq!(summary.inserted + summary.replaced, changed);
            prop_assert_eq!(store.documents(), model.len() as u64);
        }
        let mut queries: Vec<u64> = model.values().copied().collect();
        queries.extend(model.values().map(|fp| fp ^ 0b101));
        queries.extend(extra_queries);
        check_all(&store.snapshot().unwrap(), &model, &queries, k);
        drop(store);

        // Reopen: the same answers, then more batches on top of the old runs.
        let snapshot = Snapshot::open(&path).unwrap();
        check_all(&snapshot, &model, &queries, k);
        for (id, &fp) in &model {
            prop_assert_eq!(snapshot.get(id).unwrap(), Some(fp));
        }
        let mut store = Store::open(&path).unwrap();
        let mut batch = Batch::new();
        for (i, &q) in queries.iter().take(5).enumerate() {
            batch.push(&format!("late-{i}"), q).unwrap();
            model.insert(format!("late-{i}"), q);
        }
        store.insert(&batch, Some("late")).unwrap();
        check_all(&Snapshot::open(&path).unwrap(), &model, &queries, k);
        // Deletions are runs too: newer runs that mention ids without listing fingerprints.
        let doomed: Vec<String> = model.keys().step_by(3).take(4).cloned().collect();
        store.delete(doomed.iter().map(String::as_str)).unwrap();
        for id in &doomed {
            model.remove(id);
        }

        // A long-lived reader answers the same from memory (tables and the newer runs' key
        // sets), from disk, or from both.
        let stats = Stats::of(&store.snapshot().unwrap()).unwrap();
        let tables: u64 = stats.per_table.iter().map(|t| t.block_bytes).sum();
        for pin_bytes in [u64::MAX, tables / 2, 0] {
            let options = DatabaseOptions { pin_bytes, refresh_after: None, ..DatabaseOptions::default() };
            let reader = Database::open(&path, options).unwrap();
            check_all(&reader.current(), &model, &queries, k);
            let stats = reader.stats();
            if pin_bytes == 0 {
                prop_assert_eq!(stats.pinned_tables, 0);
            }
            if pin_bytes == u64::MAX {
                prop_assert_eq!(stats.disk_tables, 0);
                prop_assert_eq!(stats.disk_probes, 0);
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// A batch written a few documents per run answers and counts as the same batch written
    /// as one run; dropping an insertion halfway leaves the store as it was.
    #[test]
    fn a_batch_written_as_many_runs_equals_one_run(
        settings in settings(),
        batches in batches(),
        run_documents in 1usize..8,
        abandoned in proptest::collection::vec((0u8..40, fingerprint()), 1..20),
    ) {
        let dir = tempfile::tempdir().unwrap();
        let (whole, chunked) = (dir.path().join("whole"), dir.path().join("chunked"));
        let k = u32::from(settings.distance);
        let mut one = Store::create(&whole, settings).unwrap();
        let mut many = Store::create(&chunked, settings).unwrap();
        let mut model: BTreeMap<String, u64> = BTreeMap::new();
        for docs in &batches {
            let mut batch = Batch::new();
            let mut insertion = many.begin_insert(Some("day")).run_documents(run_documents);
            for &(id, fp) in docs {
                batch.push(&format!("id-{id}"), fp).unwrap();
                insertion.push(&format!("id-{id}"), fp).unwrap();
                model.insert(format!("id-{id}"), fp);
            }
            let expected = one.insert(&batch, None).unwrap();
            let got = insertion.commit().unwrap();
            // An id unchanged in one run counts again in a later run instead of as
            // superseded (nothing was written for it); every other count is the same.
            prop_assert_eq!(got.inserted, expected.inserted);
            prop_assert_eq!(got.replaced, expected.replaced);
            prop_assert_eq!(
                got.unchanged + got.superseded,
                expected.unchanged + expected.superseded
            );
            prop_assert_eq!(got.batch.is_some(), expected.batch.is_some());
            prop_assert_eq!(many.documents(), model.len() as u64);
            prop_assert_eq!(many.batches().len(), one.batches().len());
        }

        // An insertion dropped after writing runs leaves no trace.
        let runs_before = many.snapshot().unwrap().run_ids();
        {
            let mut insertion = many.begin_insert(None).run_documents(1);
            for &(id, fp) in &abandoned {
                insertion.push(&format!("gone-{id}"), fp).unwrap();
            }
        }
        prop_assert_eq!(&many.snapshot().unwrap().run_ids(), &runs_before);
        let on_disk = std::fs::read_dir(chunked.join("runs")).unwrap().count();
        prop_assert_eq!(on_disk, runs_before.len());

        let mut queries: Vec<u64> = model.values().copied().collect();
        queries.extend(model.values().map(|fp| fp ^ 0b1001));
        queries.extend(abandoned.iter().map(|&(_, fp)| fp));
        let snapshot = many.snapshot().unwrap();
        check_all(&snapshot, &model, &queries, k);
        for (id, &fp) in &model {
            prop_assert_eq!(snapshot.get(id).unwrap(), Some(fp));
        }
        let report = simhashdb::Store::verify(&chunked, false, &()).unwrap();
        prop_assert!(report.findings.is_empty(), "{:?}", report.findings);
    }
}

#[test]
fn empty_store_answers_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s");
    Store::create(&path, Settings::default()).unwrap();
    let snapshot = Snapshot::open(&path).unwrap();
    assert!(snapshot.query(0, 3).unwrap().is_empty());
    assert!(snapshot.query(u64::MAX, 0).unwrap().is_empty());
}

#[test]
fn same_fingerprint_under_many_ids_returns_every_id() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s");
    let mut store = Store::create(&path, Settings::default()).unwrap();
    let mut batch = Batch::new();
    for i in 0..500 {
        batch.push(&format!("copy-{i:03}"), 42).unwrap();
    }
    store.insert(&batch, None).unwrap();
    let matches = store.snapshot().unwrap().query(42 ^ 0b111, 3).unwrap();
    assert_eq!(matches.len(), 500);
    assert!(matches
        .iter()
        .all(|m| m.distance == 3 && m.fingerprint == 42));
    assert!(store
        .snapshot()
        .unwrap()
        .query(42 ^ 0b1111, 3)
        .unwrap()
        .is_empty());
}

#[test]
fn reinserting_an_id_replaces_its_fingerprint() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s");
    let mut store = Store::create(&path, Settings::default()).unwrap();
    let one = |id: &str, fp| {
        let mut b = Batch::new();
        b.push(id, fp).unwrap();
        b
    };
    assert_eq!(store.insert(&one("a", 1), None).unwrap().inserted, 1);
    assert_eq!(store.insert(&one("a", 1), None).unwrap().unchanged, 1);
    assert_eq!(store.insert(&one("a", u64::MAX), None).unwrap().replaced, 1);
    let snapshot = store.snapshot().unwrap();
    assert!(snapshot.query(1, 3).unwrap().is_empty());
    assert_eq!(snapshot.query(u64::MAX, 0).unwrap()[0].id, "a");
    // Back to the first fingerprint: the old run still indexes it, the newest run decides.
    store.insert(&one("a", 1), None).unwrap();
    let snapshot = store.snapshot().unwrap();
    assert_eq!(snapshot.query(1, 0).unwrap().len(), 1);
    assert!(snapshot.query(u64::MAX, 3).unwrap().is_empty());
}

#[test]
fn a_second_writer_is_refused_with_the_pid() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s");
    let _store = Store::create(&path, Settings::default()).unwrap();
    let err = Store::open(&path).err().unwrap().to_string();
    assert!(
        err.contains(&format!("locked by pid {}", std::process::id())),
        "{err}"
    );
}

#[test]
fn a_corrupted_block_fails_the_query_instead_of_answering_wrong() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s");
    let mut store = Store::create(
        &path,
        Settings {
            blocks: 6,
            distance: 3,
            shards: 1,
        },
    )
    .unwrap();
    let mut batch = Batch::new();
    for i in 0..2000u64 {
        batch
            .push(&format!("d{i}"), i.wrapping_mul(0x9E37_79B9_7F4A_7C15))
            .unwrap();
    }
    store.insert(&batch, None).unwrap();
    drop(store);
    let file = std::fs::read_dir(path.join("runs/0000000001"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| {
            p.file_name()
                .unwrap()
                .to_str()
                .unwrap()
                .starts_with("shard-")
        })
        .unwrap();
    // Flip one byte in the middle of every 4 KiB page after the header: a block is hit.
    let mut bytes = std::fs::read(&file).unwrap();
    let mut flipped = 0;
    for page in (16 * 4096..bytes.len()).step_by(4096) {
        if bytes[page + 2000] != 0 {
            bytes[page + 2000] ^= 0x40;
            flipped += 1;
        }
    }
    assert!(flipped > 0);
    std::fs::write(&file, &bytes).unwrap();
    let snapshot = Snapshot::open(&path).unwrap();
    let queries: Vec<u64> = (0..2000u64)
        .map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15))
        .collect();
    let results: Vec<_> = queries.iter().map(|&q| snapshot.query(q, 3)).collect();
    let errors: Vec<String> = results
        .iter()
        .filter_map(|r| r.as_ref().err())
        .map(|e| e.to_string())
        .collect();
    assert!(!errors.is_empty(), "some query reads a corrupted block");
    // A checksum failure says where it is, as data: the shard file, its table, the block.
    let located = results.iter().filter_map(|r| r.as_ref().err()).any(|e| {
        matches!(
            e,
            simhashdb::Error::Corruption {
                file: Some(f),
                table: Some(t),
                block: Some(b),
                ..
            } if *f == file && t.starts_with('t') && b.len() == 16
        )
    });
    assert!(located, "{errors:?}");
    assert!(
        errors
            .iter()
            .all(|e| e.contains("corrupted data") || e.contains("redb") || e.contains("shard-")),
        "{errors:?}"
    );
    // Every query that did answer is still exact.
    for (q, r) in queries.iter().zip(&results) {
        if let Ok(m) = r {
            assert!(m.iter().any(|m| m.fingerprint == *q));
        }
    }
}

#[test]
fn a_reader_follows_commits_of_other_processes_and_old_snapshots_keep_their_state() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s");
    let s = path.to_str().unwrap();
    let mut model: BTreeMap<String, u64> = BTreeMap::new();
    let mut store = Store::create(&path, Settings::default()).unwrap();
    let mut batch = Batch::new();
    for i in 0..300u64 {
        let fp = i.wrapping_mul(0x9E37_79B9_7F4A_7C15);
        batch.push(&format!("a{i}"), fp).unwrap();
        model.insert(format!("a{i}"), fp);
    }
    store.insert(&batch, None).unwrap();
    drop(store);
    let options = DatabaseOptions {
        refresh_after: None,
        ..DatabaseOptions::default()
    };
    let reader = Database::open(&path, options).unwrap();
    assert!(!reader.refresh().unwrap());
    let before = reader.current();
    let old_model = model.clone();
    // Another process inserts, then compacts.
    let lines: String = (0..300u64)
        .map(|i| {
            let fp = (i + 7).wrapping_mul(0xD6E8_FEB8_6659_FD93);
            model.insert(format!("b{i}"), fp);
            format!("b{i}\t{fp:016x}\n")
        })
        .collect();
    let out = crate::util::simhashdb(&["insert", s], &lines);
    assert!(out.status.success(), "{}", crate::util::text(&out.stderr));
    let out = crate::util::simhashdb(&["compact", s], "");
    assert!(out.status.success(), "{}", crate::util::text(&out.stderr));
    assert!(reader.refresh().unwrap());
    let now = reader.current();
    for q in model.values().step_by(10).map(|fp| fp ^ 0b1001) {
        assert_eq!(query_tuples(&now, q, 3), brute_force(&model, q, 3));
        // The snapshot taken before keeps answering the state it saw, though its runs were
        // merged and deleted meanwhile.
        assert_eq!(query_tuples(&before, q, 3), brute_force(&old_model, q, 3));
    }
    assert_eq!(now.run_count(), 1);
    assert!(!reader.refresh().unwrap());
}

#[test]
fn create_options_make_the_settings_init_makes_and_bound_the_expected_size() {
    use simhashdb::{CreateOptions, Error, Setting};
    let defaults = CreateOptions::default();
    assert_eq!(
        defaults.settings().unwrap(),
        Settings::for_size(
            Settings::default().distance,
            Settings::DEFAULT_EXPECTED_SIZE
        )
        .unwrap()
    );
    let chosen = CreateOptions {
        blocks: Some(6),
        shards: Some(4),
        ..CreateOptions::default()
    };
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s");
    drop(Store::create_from(&path, &chosen).unwrap());
    let settings = *Snapshot::open(&path).unwrap().settings();
    assert_eq!(
        (settings.blocks, settings.distance, settings.shards),
        (6, 3, 4)
    );
    for expected_size in [0, 1_000_000_000_000_001] {
        let bad = CreateOptions {
            expected_size,
            ..CreateOptions::default()
        };
        let err = bad.settings().unwrap_err();
        assert!(
            matches!(
                err,
                Error::Settings {
                    setting: Setting::ExpectedSize,
                    ..
                }
            ),
            "{expected_size}: {err}"
        );
        assert!(Store::create_from(&dir.path().join("t"), &bad).is_err());
        assert!(!dir.path().join("t").exists());
    }
}
