//! (tests) Scans of a written run's docs file, cut at any key, add up to the whole scan;
//! its sorted lookups find what single ones find, and its id filter skips ids it lacks; the
//! tables' probes in key order find what a query's own probes find.

use std::sync::MutexGuard;

use crate::format::block::docs::id_hash;
use crate::{Batch, Settings, Snapshot, Store};

/// A new store holding `batch` as its one run, and a snapshot of it; the guard keeps it
/// written and read while no fault test has a plan installed.
fn one_run(batch: &Batch) -> (MutexGuard<'static, ()>, tempfile::TempDir, Snapshot) {
    let serial = crate::sys::file_backend::plan::SERIAL
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::create(&dir.path().join("s"), Settings::default()).unwrap();
    store.insert(batch, None).unwrap();
    let snapshot = store.snapshot().unwrap();
    (serial, dir, snapshot)
}

/// Scans cut at any key, even inside a long run of equal keys spanning several blocks,
/// add up to the whole scan.
#[test]
fn entry_scans_split_anywhere_add_up_to_the_whole() {
    let mut batch = Batch::new();
    for i in 0..3000 {
        batch.push(&format!("same-{i}"), 1 << 63).unwrap();
    }
    for i in 0..3000u64 {
        let fp = i.wrapping_mul(0x9E37_79B9_7F4A_7C15);
        batch.push(&format!("doc-{i}"), fp).unwrap();
    }
    let (_serial, _dir, snapshot) = one_run(&batch);
    let docs = snapshot.runs()[0].docs().unwrap();

    fn all<P: crate::format::block::entries::Payload>(
        mut scan: crate::run::EntryScan<P>,
    ) -> Vec<(u64, String)> {
        let (mut out, mut block) = (Vec::new(), Vec::new());
        while scan.next_block(&mut block).unwrap() {
            out.extend(block.drain(..).map(|(k, id, _)| (k, id)));
        }
        out
    }
    fn named(mut scan: crate::run::NamedScan) -> Vec<(u64, String)> {
        let (mut out, mut block) = (Vec::new(), Vec::new());
        while scan.next_block(&mut block).unwrap() {
            out.extend(block.iter().map(|p| (p.fingerprint, format!("{:?}", p))));
        }
        out
    }
    // Format 8's postings name their documents: each prefix of a fingerprint once.
    let postings = named(docs.scan_named_postings_in(0, u64::MAX).unwrap());
    let documents = all(docs.scan_documents().unwrap());
    let mut named_documents: Vec<(u64, u64)> = documents
        .iter()
        .map(|(hash, id)| (snapshot.get(id).unwrap().unwrap(), *hash))
        .collect();
    named_documents.sort();
    let expected = crate::format::block::named_postings::of_documents(named_documents);
    assert_eq!(postings.len(), expected.len());
    assert!(postings.len() > 5990);
    assert_eq!(documents.len(), 6000);
    let middle = id_hash(b"doc-1500");
    for split in [
        0,
        1,
        (1 << 63) - 1,
        1 << 63,
        (1 << 63) + 1,
        middle,
        u64::MAX - 1,
    ] {
        let mut parts = named(docs.scan_named_postings_in(0, split).unwrap());
        parts.extend(named(
            docs.scan_named_postings_in(split + 1, u64::MAX).unwrap(),
        ));
        assert_eq!(parts, postings, "postings split after {split:016x}");
        let mut parts = all(docs.scan_documents_in(0, split).unwrap());
        parts.extend(all(docs.scan_documents_in(split + 1, u64::MAX).unwrap()));
        assert_eq!(parts, documents, "documents split after {split:016x}");
    }
    let same = named(docs.scan_named_postings_in(1 << 63, 1 << 63).unwrap());
    let expected_same = expected.iter().filter(|p| p.fingerprint == 1 << 63).count();
    assert_eq!(same.len(), expected_same);
    assert!(same.len() > 2990);
}

/// Sorted lookups of a run's documents find what a lookup of each finds, whether the wanted
/// ids are dense (the next block is stepped to), sparse (the table is searched again) or
/// both, absent ids included.
#[test]
fn sorted_lookups_find_what_single_lookups_find_at_every_density() {
    let mut batch = Batch::new();
    for i in 0..20_000u64 {
        batch
            .push(&format!("doc-{i}"), i.wrapping_mul(0x9E37_79B9_7F4A_7C15))
            .unwrap();
    }
    let (_serial, _dir, snapshot) = one_run(&batch);
    let docs = snapshot.runs()[0].docs().unwrap();
    // Stored ids and absent ones ("doc-N" for N >= 20,000), in the order of (id hash, id).
    let mut ids: Vec<(u64, String)> = (0..40_000u64)
        .map(|i| format!("doc-{i}"))
        .map(|id| (id_hash(id.as_bytes()), id))
        .collect();
    ids.sort();
    for (name, keep) in [
        ("every id", &(|_: usize| true) as &dyn Fn(usize) -> bool),
        ("every 7th", &|k| k % 7 == 0),
        ("every 500th", &|k| k % 500 == 0),
        ("runs of 50 with gaps of 5,000", &|k| k % 5_000 < 50),
    ] {
        let wanted: Vec<(u64, &str)> = (0..ids.len())
            .filter(|&k| keep(k))
            .map(|k| (ids[k].0, ids[k].1.as_str()))
            .collect();
        let mut states = vec![None; wanted.len()];
        docs.states_sorted(&wanted, &mut states).unwrap();
        let found = states.iter().filter(|s| s.is_some()).count();
        for (&(_, id), state) in wanted.iter().zip(&states) {
            assert_eq!(*state, docs.state_of(id).unwrap(), "{name}: {id}");
        }
        assert!(
            found > 0 && found < wanted.len(),
            "{name}: some stored, some absent"
        );
    }
}

/// The id filter lets every stored id through and few others (about one in 2^8); an absent
/// id it lets through is absent from single and sorted lookups alike.
#[test]
fn the_id_filter_passes_every_stored_id_and_few_others() {
    let mut batch = Batch::new();
    for i in 0..2000u64 {
        batch.push(&format!("doc-{i}"), i).unwrap();
    }
    let (_serial, _dir, snapshot) = one_run(&batch);
    let run = &snapshot.runs()[0];
    assert_eq!(run.meta().id_bits, 19);
    let docs = run.docs().unwrap();
    let mut ids: Vec<(u64, String)> = (0..2000u64)
        .map(|i| format!("doc-{i}"))
        .chain((0..100_000u64).map(|i| format!("absent-{i}")))
        .map(|id| (id_hash(id.as_bytes()), id))
        .collect();
    ids.sort();
    let mut passed_absent = 0;
    for (hash, id) in &ids {
        let stored = id.starts_with("doc-");
        let passes = docs.may_mention(*hash).unwrap();
        assert!(passes || !stored, "{id} is stored");
        passed_absent += usize::from(passes && !stored);
        assert_eq!(docs.state_of(id).unwrap().is_some(), stored, "{id}");
    }
    assert!(
        (50..1000).contains(&passed_absent),
        "{passed_absent} of 100,000 passed"
    );
    let wanted: Vec<(u64, &str)> = ids.iter().map(|(h, id)| (*h, id.as_str())).collect();
    let mut states = vec![None; wanted.len()];
    docs.states_sorted(&wanted, &mut states).unwrap();
    for ((_, id), state) in wanted.iter().zip(&states) {
        assert_eq!(state.is_some(), id.starts_with("doc-"), "{id}");
    }
}

/// Probing many queries in each table's key order finds what probing each alone finds,
/// across runs, with a prefix range of thousands of keys spanning blocks.
#[test]
fn sorted_probes_find_what_single_ones_find() {
    let _serial = crate::sys::file_backend::plan::SERIAL
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::create(&dir.path().join("s"), Settings::default()).unwrap();
    let mix = |i: u64| mix(0x5555, i);
    // A hot spot: 4,096 fingerprints differing in their last 12 bits share the prefix
    // of every table whose leading blocks leave those bits out.
    let hot = 0xABCD_EF01_2345_6000u64;
    for run in 0..3u64 {
        let mut batch = Batch::new();
        for i in 0..3000u64 {
            batch
                .push(&format!("r{run}-{i}"), mix(run << 32 | i))
                .unwrap();
        }
        for i in (run..4096).step_by(3) {
            batch.push(&format!("hot{run}-{i}"), hot ^ i).unwrap();
        }
        for i in 0..500 {
            batch.push(&format!("copy{run}-{i}"), hot).unwrap();
        }
        store.insert(&batch, None).unwrap();
    }
    let snapshot = store.snapshot().unwrap();
    assert!(snapshot.runs().len() >= 2);
    let mut queries: Vec<u64> = (0..300u64).map(|i| mix(1 << 40 | i)).collect();
    queries.extend((0..300u64).map(|i| mix(i) ^ (1 << (i % 64)) ^ (1 << (i * 7 % 64))));
    queries.extend((0..200u64).map(|i| hot ^ (i * 37 % 4096) ^ (1 << 40)));
    queries.extend([hot, hot, 0, u64::MAX]);
    assert_sorted_probes_match(&snapshot, &queries, &[0, 1, 3]);
    let found: usize = snapshot
        .close_fingerprints_many(&queries, 3)
        .unwrap()
        .iter()
        .map(Vec::len)
        .sum();
    assert!(
        found > 5000,
        "the hot spot's fingerprints are found: {found}"
    );
}

/// In tables of hundreds of blocks, probes in key order that are sparse (each searched for),
/// dense (stepped to) and in between find what each query's own probes find.
#[test]
fn sorted_probes_sparse_or_dense_find_what_single_ones_find() {
    let _serial = crate::sys::file_backend::plan::SERIAL
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let settings = Settings {
        blocks: 5,
        distance: 3,
        shards: 1,
    };
    let mut store = Store::create(&dir.path().join("s"), settings).unwrap();
    let mix = |i: u64| mix(0x7777, i);
    let mut batch = Batch::new();
    for i in 0..200_000u64 {
        batch.push(&format!("d{i}"), mix(i)).unwrap();
    }
    store.insert(&batch, None).unwrap();
    let snapshot = store.snapshot().unwrap();
    // Stored fingerprints a few bits off (found) and random ones: 160 over a table's ~300
    // blocks, many more than 4 blocks from the one before; and 250 neighbours of one key
    // (dense), enough queries to probe in key order.
    let mut queries: Vec<u64> = (0..80u64).map(|i| mix(i * 997) ^ (1 << (i % 64))).collect();
    queries.extend((0..80u64).map(|i| mix(1 << 40 | i)));
    queries.extend((0..250u64).map(|i| mix(5) + i * 3));
    assert_sorted_probes_match(&snapshot, &queries, &[0, 3]);
    // Table 0's lookups in key order (an insert's check), as sparse or dense: every stored
    // fingerprint asked for is found, and no other.
    let mut wanted: Vec<(u64, bool)> = (0..150u64).map(|i| (mix(i * 1331), true)).collect();
    wanted.extend((0..150u64).map(|i| (mix(1 << 41 | i), false)));
    wanted.extend((0..150u64).map(|i| (mix(7 + i), true)));
    wanted.sort_unstable();
    let fingerprints: Vec<u64> = wanted.iter().map(|w| w.0).collect();
    let mut found = vec![false; fingerprints.len()];
    let run = &snapshot.runs()[0];
    let file = run.shard(0).unwrap().expect("the run's one shard file");
    file.contains_sorted(&fingerprints, &mut found).unwrap();
    let expected: Vec<bool> = wanted.iter().map(|w| w.1).collect();
    assert_eq!(found, expected);
}

/// splitmix64's finaliser of `i` salted with `seed`: fingerprints spread over the key space.
fn mix(seed: u64, i: u64) -> u64 {
    let z = (i ^ seed).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    let z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z ^ (z >> 31)
}

/// Each query's fingerprints found by the probes in key order are those its own probes find,
/// at each of `distances`.
fn assert_sorted_probes_match(snapshot: &Snapshot, queries: &[u64], distances: &[u32]) {
    for &distance in distances {
        let many = snapshot.close_fingerprints_many(queries, distance).unwrap();
        for (&q, mut got) in queries.iter().zip(many) {
            let mut expected = snapshot.close_fingerprints(q, distance).unwrap();
            got.sort_unstable();
            expected.sort_unstable();
            assert_eq!(got, expected, "query {q:016x} at distance {distance}");
        }
    }
}
