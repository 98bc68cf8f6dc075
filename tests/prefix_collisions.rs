//! Documents whose id hashes share a prefix (format 8: a posting names its documents by the
//! top 31 bits of the id hash, so such documents of one fingerprint share a posting): every
//! query, audit and lookup still equals brute force, through replacements, deletions, merges
//! of runs that each hold one of them, and a full compaction; verify finds nothing. In a
//! store with sketches (format 9 names their documents too), each keeps its own sketch.

use std::collections::BTreeMap;
use std::path::Path;

use simhashdb::{Batch, CompactionPolicy, Scheme, Settings, Snapshot, Store, Verification};

use crate::util::{audit_pairs, brute_force, query_tuples};

/// Pairs of distinct ids whose XXH3-64 hashes share their top 31 bits, found by birthday
/// search among `c0`, `c1`, ...
fn colliding_pairs(wanted: usize) -> Vec<(String, String)> {
    let mut first: std::collections::HashMap<u64, String> = Default::default();
    let mut pairs = Vec::new();
    for i in 0u64.. {
        let id = format!("c{i}");
        let prefix = xxhash_rust::xxh3::xxh3_64(id.as_bytes()) >> 33;
        match first.remove(&prefix) {
            Some(other) => {
                pairs.push((other, id));
                if pairs.len() == wanted {
                    return pairs;
                }
            }
            None => {
                first.insert(prefix, id);
            }
        }
    }
    unreachable!()
}

/// The 64-byte sketch a sketched store gets for `id`: one of two classes (all bits clear or
/// all set but for the last 8 bytes, which are the id's own), so that two documents' sketches
/// estimate a Jaccard similarity of at least 0.75 when their classes agree and 0 when not.
fn sketch_of(id: &str) -> Vec<u8> {
    let hash = xxhash_rust::xxh3::xxh3_64(id.as_bytes());
    let mut sketch = vec![if hash & 1 == 0 { 0x00 } else { 0xff }; 56];
    sketch.extend_from_slice(&hash.to_le_bytes());
    sketch
}

/// Whether the audit with sketches keeps the pair `(a, b)` at `MIN_JACCARD`.
fn same_class(a: &str, b: &str) -> bool {
    sketch_of(a)[0] == sketch_of(b)[0]
}

/// The least Jaccard similarity a sketched audit keeps here.
const MIN_JACCARD: f64 = 0.7;

/// The store's answers against the model's: every stored fingerprint's and a few others'
/// queries, the audit's pairs, every id's lookup, the count; verify finds nothing. In a store
/// with sketches, also every id's sketch and the audit verified with them.
fn check(store: &Path, model: &BTreeMap<String, u64>, what: &str) {
    let report = Store::verify(store, false, &()).unwrap();
    assert!(report.findings.is_empty(), "{what}: {:?}", report.findings);
    let snapshot = Snapshot::open(store).unwrap();
    assert_eq!(snapshot.documents(), model.len() as u64, "{what}");
    let mut queries: Vec<u64> = model.values().copied().collect();
    queries.extend((0..20u64).map(|i| i.wrapping_mul(0xD6E8_FEB8_6659_FD93)));
    for q in queries {
        assert_eq!(
            query_tuples(&snapshot, q, 3),
            brute_force(model, q, 3),
            "{what}: query {q:016x}"
        );
    }
    for (id, &fp) in model {
        assert_eq!(snapshot.get(id).unwrap(), Some(fp), "{what}: {id}");
    }
    let got: Vec<(String, String, u32)> = audit_pairs(&snapshot, 3)
        .unwrap()
        .into_iter()
        .map(|p| (p.a, p.b, p.distance))
        .collect();
    let documents: Vec<(&String, &u64)> = model.iter().collect();
    let mut expected = Vec::new();
    for (i, (a, fa)) in documents.iter().enumerate() {
        for (b, fb) in &documents[i + 1..] {
            let distance = (*fa ^ *fb).count_ones();
            if distance <= 3 {
                expected.push(((*a).clone(), (*b).clone(), distance));
            }
        }
    }
    expected.sort();
    assert_eq!(got, expected, "{what}: audit");
    if snapshot.sketch_bytes().is_none() {
        return;
    }
    for id in model.keys() {
        assert_eq!(
            snapshot.sketch(id).unwrap(),
            Some(sketch_of(id)),
            "{what}: {id}"
        );
    }
    let verification = Verification::Sketches {
        min_jaccard: MIN_JACCARD,
    };
    let near = snapshot.near_duplicates(3, &verification, &()).unwrap();
    let mut got = Vec::new();
    near.for_each_pair(|a, b, distance, _| {
        let (a, b) = if a < b { (a, b) } else { (b, a) };
        got.push((a.to_string(), b.to_string(), distance));
        Ok::<_, std::convert::Infallible>(())
    })
    .unwrap();
    got.sort();
    expected.retain(|(a, b, _)| same_class(a, b));
    assert_eq!(got, expected, "{what}: audit with sketches");
}

#[test]
fn documents_sharing_an_id_hash_prefix_answer_as_brute_force() {
    for sketched in [false, true] {
        sharing_an_id_hash_prefix(sketched);
    }
}

/// The test above, in a store without sketches or (`sketched`) with 64-byte sketches, each
/// document inserted with its own.
fn sharing_an_id_hash_prefix(sketched: bool) {
    let pairs = colliding_pairs(24);
    let dir = tempfile::tempdir().unwrap();
    let store_dir = dir.path().join("s");
    let settings = Settings {
        blocks: 5,
        distance: 3,
        shards: 1,
    };
    // Merges of the newest runs as they pile up (deletions kept), so that runs each holding
    // one of a pair meet in merges that are not full.
    let policy = CompactionPolicy {
        max_runs: 3,
        merge_factor: 2,
    };
    let scheme = match sketched {
        true => Scheme::default().with_sketch(64).unwrap(),
        false => Scheme::default(),
    };
    let mut store = Store::create_with(&store_dir, settings, scheme, policy).unwrap();
    let mut model = BTreeMap::new();
    let fp = |k: usize| (k as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    let insert = |store: &mut Store, model: &mut BTreeMap<String, u64>, docs: &[(&str, u64)]| {
        let mut batch = Batch::new();
        for &(id, fp) in docs {
            match sketched {
                true => batch.push_sketched(id, fp, &sketch_of(id)).unwrap(),
                false => batch.push(id, fp).unwrap(),
            }
            model.insert(id.to_string(), fp);
        }
        store.insert(&batch, None).unwrap();
    };

    // One run: pairs 0..16 each share a fingerprint (one shared posting), pairs 16..24 a
    // prefix only (a fingerprint a bit apart), and filler documents.
    let mut docs: Vec<(&str, u64)> = Vec::new();
    for (k, (a, b)) in pairs.iter().enumerate() {
        docs.push((a, fp(k)));
        docs.push((b, if k < 16 { fp(k) } else { fp(k) ^ 1 }));
    }
    let filler: Vec<String> = (0..200).map(|i| format!("filler-{i}")).collect();
    for (i, id) in filler.iter().enumerate() {
        docs.push((id, fp(1000 + i)));
    }
    insert(&mut store, &mut model, &docs);
    check(&store_dir, &model, "one run");

    // A newer run replaces one of pairs 0..4 with another fingerprint, gives one of pairs
    // 4..8 the same fingerprint again, and deletes one of pairs 8..12.
    let mut docs: Vec<(&str, u64)> = Vec::new();
    for (k, (a, _)) in pairs.iter().enumerate().take(8) {
        docs.push((a, if k < 4 { fp(k) ^ 0b111 } else { fp(k) }));
    }
    insert(&mut store, &mut model, &docs);
    let doomed: Vec<&str> = pairs[8..12].iter().map(|(_, b)| b.as_str()).collect();
    store.delete(doomed.iter().copied()).unwrap();
    for id in &doomed {
        model.remove(*id);
    }
    check(&store_dir, &model, "three runs");

    // Two runs each holding one document of a new pair of one fingerprint: a merge makes
    // their postings one, shared.
    let late = colliding_pairs(26).split_off(24);
    for (k, (a, b)) in late.iter().enumerate() {
        insert(&mut store, &mut model, &[(a, fp(500 + k))]);
        insert(&mut store, &mut model, &[(b, fp(500 + k))]);
    }
    assert!(Snapshot::open(&store_dir).unwrap().run_count() > 1);
    check(&store_dir, &model, "runs merged as they came");
    store.compact().unwrap();
    check(&store_dir, &model, "one merged run");

    // The shared postings survive a replacement after the merge too.
    let (a, b) = &pairs[0];
    insert(&mut store, &mut model, &[(b, fp(0) ^ 0b111)]);
    assert_eq!(model[a], model[b]);
    drop(store);
    check(&store_dir, &model, "after the merge");
}
