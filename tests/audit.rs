//! Audits and find-all against brute force over every pair.

use std::collections::{BTreeMap, BTreeSet};

use proptest::prelude::*;
use simhashdb::{clusters, find_all, DocumentPair};
use simhashdb::{Batch, Settings, Snapshot, Store};

use crate::engine::{batches, fingerprint, settings};

/// Every pair of documents of `model` within `d` bits, as the audit lists them.
pub fn brute_force_pairs(model: &BTreeMap<String, u64>, d: u32) -> Vec<DocumentPair> {
    let docs: Vec<(&String, &u64)> = model.iter().collect();
    let mut out = Vec::new();
    for i in 0..docs.len() {
        for j in i + 1..docs.len() {
            let dist = (docs[i].1 ^ docs[j].1).count_ones();
            if dist <= d {
                out.push(DocumentPair {
                    a: docs[i].0.clone(),
                    b: docs[j].0.clone(),
                    distance: dist,
                });
            }
        }
    }
    out.sort();
    out
}

/// Connected components by repeated merging: slow and obviously right.
fn brute_force_clusters(pairs: &[DocumentPair]) -> Vec<Vec<String>> {
    let mut sets: Vec<BTreeSet<String>> = Vec::new();
    for p in pairs {
        let mut merged: BTreeSet<String> = [p.a.clone(), p.b.clone()].into();
        sets.retain(|s| {
            if s.contains(&p.a) || s.contains(&p.b) {
                merged.extend(s.iter().cloned());
                false
            } else {
                true
            }
        });
        sets.push(merged);
    }
    let mut out: Vec<Vec<String>> = sets.into_iter().map(|s| s.into_iter().collect()).collect();
    out.sort();
    out
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn audit_equals_brute_force_at_every_distance(settings in settings(), batches in batches()) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("store");
        let mut model: BTreeMap<String, u64> = BTreeMap::new();
        let mut store = Store::create(&path, settings).unwrap();
        for docs in &batches {
            let mut batch = Batch::new();
            for &(id, fp) in docs {
                batch.push(&format!("id-{id}"), fp).unwrap();
                model.insert(format!("id-{id}"), fp);
            }
            store.insert(&batch, None).unwrap();
        }
        // Over several runs, then again after they are merged into one.
        for compacted in [false, true] {
            if compacted {
                store.compact().unwrap();
            }
            let snapshot = Snapshot::open(&path).unwrap();
            for d in 0..=u32::from(settings.distance) {
                let expected = brute_force_pairs(&model, d);
                let got = snapshot.audit(d, &()).unwrap();
                prop_assert_eq!(&got, &expected, "distance {} compacted {}", d, compacted);
                prop_assert_eq!(clusters(&got), brute_force_clusters(&expected));
            }
            let mut live = BTreeMap::new();
            snapshot.for_each_live_document(|id, fp, _| { live.insert(id.to_string(), fp); }).unwrap();
            prop_assert_eq!(&live, &model);
        }
    }

    #[test]
    fn find_all_equals_brute_force(settings in settings(), fps in proptest::collection::vec(fingerprint(), 0..200)) {
        let distinct: BTreeSet<u64> = fps.iter().copied().collect();
        let distinct: Vec<u64> = distinct.into_iter().collect();
        let mut expected = Vec::new();
        for i in 0..distinct.len() {
            for j in i + 1..distinct.len() {
                let d = (distinct[i] ^ distinct[j]).count_ones();
                if d <= u32::from(settings.distance) {
                    expected.push((distinct[i], distinct[j], d));
                }
            }
        }
        let got: Vec<(u64, u64, u32)> = find_all(&fps, settings.distance, Some(settings.blocks), &())
            .unwrap()
            .into_iter()
            .map(|p| (p.a, p.b, p.distance))
            .collect();
        prop_assert_eq!(got, expected);
    }
}

#[test]
fn planted_near_duplicates_among_many_are_all_found() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s");
    let settings = Settings::default();
    let mut store = Store::create(&path, settings).unwrap();
    let mut model = BTreeMap::new();
    let mut state = 7u64;
    let mut next = || {
        state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let z = (state ^ (state >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        let z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    };
    for day in 0..3 {
        let mut batch = Batch::new();
        for i in 0..3000 {
            let fp = next();
            batch.push(&format!("d{day}-{i}"), fp).unwrap();
            model.insert(format!("d{day}-{i}"), fp);
            if i % 10 == 0 {
                let near = fp ^ (1 << (next() % 64)) ^ (1 << (next() % 64)) ^ (1 << (next() % 64));
                batch.push(&format!("n{day}-{i}"), near).unwrap();
                model.insert(format!("n{day}-{i}"), near);
            }
        }
        store.insert(&batch, None).unwrap();
    }
    let got = store.snapshot().unwrap().audit(3, &()).unwrap();
    assert_eq!(got, brute_force_pairs(&model, 3));
    assert!(got.len() >= 900);
}
