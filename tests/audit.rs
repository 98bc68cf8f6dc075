//! Audits and find-all against brute force over every pair.

use std::collections::{BTreeMap, BTreeSet};

use proptest::prelude::*;
use simhashdb::{find_all, NearDuplicates, Pair, Verification};

/// Two documents' ids within the distance.
pub type DocumentPair = Pair<String>;
use simhashdb::{Batch, Settings, Snapshot, Store};

use crate::engine::{batches, fingerprint, settings};
use crate::util::{path_str, simhashdb, text};

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

/// Connected components by breadth-first search over the pairs' graph: obviously right.
fn brute_force_clusters(pairs: &[DocumentPair]) -> Vec<Vec<String>> {
    let mut next_to: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for p in pairs {
        next_to.entry(&p.a).or_default().push(&p.b);
        next_to.entry(&p.b).or_default().push(&p.a);
    }
    let mut seen: BTreeSet<&str> = BTreeSet::new();
    let mut out: Vec<Vec<String>> = Vec::new();
    for &start in next_to.keys() {
        if !seen.insert(start) {
            continue;
        }
        let mut cluster = vec![start];
        let mut i = 0;
        while i < cluster.len() {
            for &n in &next_to[cluster[i]] {
                if seen.insert(n) {
                    cluster.push(n);
                }
            }
            i += 1;
        }
        let mut cluster: Vec<String> = cluster.into_iter().map(str::to_string).collect();
        cluster.sort();
        out.push(cluster);
    }
    out.sort();
    out
}

/// What the keep rule makes of the pairs, computed the slow way: clusters (with how many
/// members each keeps), and dedup's greedy over the documents in (batch, id) order: a
/// document is dropped for the nearest (then smallest id) document kept before it among its
/// pairs' other ends, else kept.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Dedup {
    /// Each cluster's members (sorted) and how many of them are kept.
    pub clusters: Vec<(Vec<String>, usize)>,
    /// (dropped id, kept id, distance), in the rule's order.
    pub duplicates: Vec<(String, String, u32)>,
    /// The kept documents of the clusters, in the rule's order.
    pub kept: Vec<String>,
}

impl Dedup {
    pub fn of(pairs: &[DocumentPair], batches: &BTreeMap<String, u64>) -> Dedup {
        let mut next_to: BTreeMap<&str, Vec<(&str, u32)>> = BTreeMap::new();
        for p in pairs {
            next_to.entry(&p.a).or_default().push((&p.b, p.distance));
            next_to.entry(&p.b).or_default().push((&p.a, p.distance));
        }
        let mut order: Vec<&str> = next_to.keys().copied().collect();
        order.sort_by_key(|id| (batches[*id], *id));
        let mut kept_set: BTreeSet<&str> = BTreeSet::new();
        let (mut duplicates, mut kept) = (Vec::new(), Vec::new());
        for id in order {
            let nearest = next_to[id]
                .iter()
                .filter(|(other, _)| kept_set.contains(other))
                .min_by_key(|&&(other, distance)| (distance, other));
            match nearest {
                Some(&(other, distance)) => {
                    duplicates.push((id.to_string(), other.to_string(), distance))
                }
                None => {
                    kept_set.insert(id);
                    kept.push(id.to_string());
                }
            }
        }
        let clusters = brute_force_clusters(pairs)
            .into_iter()
            .map(|c| {
                let keeps = c.iter().filter(|id| kept_set.contains(id.as_str())).count();
                (c, keeps)
            })
            .collect();
        Dedup {
            clusters,
            duplicates,
            kept,
        }
    }

    pub fn from_near(near: &NearDuplicates) -> Dedup {
        let mut out = Dedup {
            clusters: vec![],
            duplicates: vec![],
            kept: vec![],
        };
        let mut number = 0;
        near.for_each_cluster(|c| {
            number += 1;
            assert_eq!(c.number, number);
            let members: Vec<String> = c.members.iter().map(|(id, _)| id.to_string()).collect();
            out.clusters.push((members, c.kept.len()));
            Ok::<_, ()>(())
        })
        .unwrap();
        near.for_each_duplicate(|d| {
            out.duplicates
                .push((d.id.to_string(), d.kept.to_string(), d.distance));
            Ok::<_, ()>(())
        })
        .unwrap();
        near.for_each_kept(|id| {
            out.kept.push(id.to_string());
            Ok::<_, ()>(())
        })
        .unwrap();
        out
    }
}

/// The pairs `near` hands out, in its order.
fn streamed_pairs(near: &NearDuplicates) -> Vec<DocumentPair> {
    let mut out = Vec::new();
    near.for_each_pair(|a, b, distance, _| {
        assert!(a < b, "{a} < {b}");
        out.push(DocumentPair {
            a: a.into(),
            b: b.into(),
            distance,
        });
        Ok::<_, ()>(())
    })
    .unwrap();
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
            let mut batches = BTreeMap::new();
            snapshot.for_each_live_document(|id, _, batch| { batches.insert(id.to_string(), batch); }).unwrap();
            for d in 0..=u32::from(settings.distance) {
                let expected = brute_force_pairs(&model, d);
                let got = crate::util::audit_pairs(&snapshot, d).unwrap();
                prop_assert_eq!(&got, &expected, "distance {} compacted {}", d, compacted);
                let near = snapshot.near_duplicates(d, &Verification::None, &()).unwrap();
                let oracle = Dedup::of(&expected, &batches);
                prop_assert_eq!(Dedup::from_near(&near), oracle.clone());
                prop_assert_eq!(near.summary().pairs, expected.len() as u64);
                prop_assert_eq!(near.summary().duplicates, oracle.duplicates.len() as u64);
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
    let got = crate::util::audit_pairs(&store.snapshot().unwrap(), 3).unwrap();
    assert_eq!(got, brute_force_pairs(&model, 3));
    assert!(got.len() >= 900);
}

/// Real corpora are skewed: 2,000 copies of one page over three batches (so the kept one is
/// decided by batch, then by id among the earliest batch's), near copies of it and of each
/// other, a second hot page, and random pages. Pairs, clusters, duplicates and kept ids equal
/// the brute-force oracle, through the library and the CLI, whose output streams in the
/// library's order and is the same bytes on a second run.
#[test]
fn audit_at_skew_equals_brute_force_with_the_keep_drop_list() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s");
    let mut store = Store::create(&path, Settings::default()).unwrap();
    let hot: u64 = 0x0123_4567_89ab_cdef;
    let other_hot: u64 = 0xfedc_ba98_7654_3210;
    let mut model: BTreeMap<String, u64> = BTreeMap::new();
    let mut rng = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    for day in 0..3u64 {
        let mut batch = Batch::new();
        // Ids of the hot page interleave across days: the smallest id is not in day 0.
        for i in 0..700u64 {
            let id = format!("copy-{:05}", i * 3 + (2 - day));
            batch.push(&id, hot).unwrap();
            model.insert(id, hot);
        }
        for i in 0..40u64 {
            let near = hot ^ (1 << (next() % 64)) ^ (1 << (next() % 64));
            let id = format!("near-{day}-{i:02}");
            batch.push(&id, near).unwrap();
            model.insert(id, near);
        }
        for i in 0..100u64 {
            let id = format!("other-{day}-{i:03}");
            batch.push(&id, other_hot).unwrap();
            model.insert(id, other_hot);
            let id = format!("random-{day}-{i:03}");
            let fp = next();
            batch.push(&id, fp).unwrap();
            model.insert(id, fp);
        }
        store.insert(&batch, Some(&format!("day{day}"))).unwrap();
    }
    drop(store);
    let snapshot = Snapshot::open(&path).unwrap();
    let mut batches = BTreeMap::new();
    snapshot
        .for_each_live_document(|id, _, batch| {
            batches.insert(id.to_string(), batch);
        })
        .unwrap();
    let expected = brute_force_pairs(&model, 3);
    assert!(expected.len() > 2_100 * 2_099 / 2, "{}", expected.len());
    let near = snapshot
        .near_duplicates(3, &Verification::None, &())
        .unwrap();
    let mut streamed = streamed_pairs(&near);
    let order = streamed.clone();
    streamed.sort();
    assert!(streamed == expected, "pairs");
    // Pulled in batches of any size, the same pairs in the same order.
    for max in [1, 7, 4096] {
        let mut cursor = simhashdb::PairCursor::default();
        let mut pulled: Vec<DocumentPair> = Vec::new();
        loop {
            let got = near
                .next_pairs(&mut cursor, max, |a, b, distance, _| {
                    pulled.push(DocumentPair {
                        a: a.into(),
                        b: b.into(),
                        distance,
                    });
                    Ok::<_, ()>(())
                })
                .unwrap();
            assert!(got <= max);
            if got < max {
                break;
            }
        }
        assert!(pulled == order, "batches of {max}");
    }
    let oracle = Dedup::of(&expected, &batches);
    assert_eq!(Dedup::from_near(&near), oracle);
    // The hot page's cluster keeps its copy from day 0 with the smallest id.
    assert!(
        oracle.kept.contains(&"copy-00002".to_string()),
        "{:?}",
        oracle.kept
    );
    let summary = near.summary();
    assert_eq!(summary.documents, model.len() as u64);
    assert_eq!(summary.pairs, expected.len() as u64);
    assert_eq!(summary.clusters, oracle.clusters.len() as u64);
    assert_eq!(
        summary.largest_cluster,
        oracle.clusters.iter().map(|c| c.0.len()).max().unwrap() as u64
    );
    assert_eq!(summary.duplicates, oracle.duplicates.len() as u64);
    assert_eq!(summary.kept, oracle.kept.len() as u64);
    let distinct: BTreeSet<u64> = model.values().copied().collect();
    assert_eq!(summary.distinct_fingerprints, distinct.len() as u64);

    // The CLI: every output file, and the summary line.
    let files =
        ["pairs.tsv", "clusters.tsv", "duplicates.tsv", "keep.txt"].map(|f| dir.path().join(f));
    let run = || {
        let out = simhashdb(
            &[
                "audit",
                path_str(&path),
                "--pairs",
                path_str(&files[0]),
                "--clusters",
                path_str(&files[1]),
                "--duplicates",
                path_str(&files[2]),
                "--keep",
                path_str(&files[3]),
            ],
            "",
        );
        assert!(out.status.success(), "{}", text(&out.stderr));
        let read = |f: &std::path::Path| std::fs::read_to_string(f).unwrap();
        assert_eq!(text(&out.stdout), "", "results go to their files");
        files.iter().map(|f| read(f)).collect::<Vec<_>>()
    };
    let written = run();
    // --json: the summary line on stdout when no result goes there.
    let out = simhashdb(
        &[
            "audit",
            path_str(&path),
            "--keep",
            path_str(&files[3]),
            "--json",
        ],
        "",
    );
    let summary_line: serde_json::Value = serde_json::from_str(text(&out.stdout).trim()).unwrap();
    assert_eq!(summary_line["summary"]["pairs"], expected.len() as u64);
    assert_eq!(
        summary_line["summary"]["duplicates"],
        oracle.duplicates.len() as u64
    );
    let lines: Vec<String> = order
        .iter()
        .map(|p| format!("{}\t{}\t{}", p.a, p.b, p.distance))
        .collect();
    let differs = written[0].lines().zip(&lines).position(|(a, b)| a != b);
    assert_eq!(differs, None, "pairs in the library's order");
    assert_eq!(written[0].lines().count(), lines.len());
    let clusters: Vec<String> = oracle
        .clusters
        .iter()
        .enumerate()
        .flat_map(|(n, (c, keeps))| c.iter().map(move |id| format!("{}\t{id}\t{keeps}", n + 1)))
        .collect();
    assert!(
        written[1].lines().eq(clusters.iter().map(String::as_str)),
        "clusters"
    );
    let duplicates: Vec<String> = oracle
        .duplicates
        .iter()
        .map(|(d, k, distance)| format!("{d}\t{k}\t{distance}"))
        .collect();
    assert!(
        written[2].lines().eq(duplicates.iter().map(String::as_str)),
        "duplicates"
    );
    assert!(
        written[3]
            .lines()
            .eq(oracle.kept.iter().map(String::as_str)),
        "kept"
    );
    // Deterministic: the same store gives the same bytes.
    assert!(run() == written, "a second audit wrote other bytes");
}

/// find-all over loose documents streams like the audit and equals brute force with skew.
#[test]
fn find_all_documents_at_skew_equals_brute_force() {
    let mut model: BTreeMap<String, u64> = BTreeMap::new();
    let mut documents = Vec::new();
    for i in 0..1500u64 {
        documents.push((format!("c{i:04}"), 42u64));
        documents.push((format!("n{i:04}"), 42 ^ (1 << (i % 64)) ^ (i << 20)));
    }
    documents.push(("c0000".to_string(), 7)); // a later document with the same id replaces it
    for (id, fp) in &documents {
        model.insert(id.clone(), *fp);
    }
    let near = NearDuplicates::of_documents(&documents, 3, None, &()).unwrap();
    let mut got = streamed_pairs(&near);
    got.sort();
    assert!(got == brute_force_pairs(&model, 3));
    let zeros: BTreeMap<String, u64> = model.keys().map(|id| (id.clone(), 0)).collect();
    assert_eq!(Dedup::from_near(&near), Dedup::of(&got, &zeros));
}

/// Verification at skew: 1,500 documents share one fingerprint (over a million candidate
/// pairs, checked a slice at a time), but only those with the same text are near duplicates:
/// the verified pairs, clusters and summary equal the oracle's.
#[test]
fn verified_audit_at_skew_keeps_only_pairs_whose_texts_agree() {
    let dir = tempfile::tempdir().unwrap();
    let texts = [
        "the quick brown fox jumps over the lazy dog near the river bank today",
        "an entirely different page about tables blocks permutations and shards",
    ];
    let mut documents = Vec::new();
    let mut corpus = String::new();
    for i in 0..1500u64 {
        let id = format!("d{i:04}");
        let text = texts[(i % 3 == 0) as usize];
        corpus.push_str(&serde_json::json!({"id": id, "text": text}).to_string());
        corpus.push('\n');
        documents.push((id, 0x0123_4567_89ab_cdefu64));
    }
    let path = dir.path().join("corpus.jsonl");
    std::fs::write(&path, corpus).unwrap();
    let mut near = NearDuplicates::of_documents(&documents, 3, None, &()).unwrap();
    near.verify_text(
        std::slice::from_ref(&path),
        &simhashdb::ReadOptions::default(),
        0.8,
        &(),
    )
    .unwrap();
    let text_of = |id: &str| texts[(id[1..].parse::<u64>().unwrap() % 3 == 0) as usize];
    let mut expected = Vec::new();
    for (x, (a, _)) in documents.iter().enumerate() {
        for (b, _) in &documents[x + 1..] {
            if text_of(a) == text_of(b) {
                expected.push(DocumentPair {
                    a: a.clone(),
                    b: b.clone(),
                    distance: 0,
                });
            }
        }
    }
    expected.sort();
    let mut got = Vec::new();
    near.for_each_pair(|a, b, distance, jaccard| {
        assert_eq!(jaccard, Some(1.0));
        got.push(DocumentPair {
            a: a.into(),
            b: b.into(),
            distance,
        });
        Ok::<_, ()>(())
    })
    .unwrap();
    got.sort();
    assert!(got == expected, "verified pairs");
    let zeros: BTreeMap<String, u64> = documents.iter().map(|(id, _)| (id.clone(), 0)).collect();
    assert_eq!(Dedup::from_near(&near), Dedup::of(&expected, &zeros));
    let s = near.summary();
    assert_eq!(
        (s.pairs, s.clusters, s.largest_cluster),
        (expected.len() as u64, 2, 1000)
    );
}

/// A chain of 1,000 near copies (each 2 bits from the one before, 4 or more from most
/// others) among 2,000 copies of one page: components would keep one document of the chain
/// and drop documents near nothing kept; the keep rule keeps every other link, drops each
/// dropped one for a kept one within the distance, and equals the brute-force greedy.
#[test]
fn keep_rule_drops_no_link_of_a_chain_for_a_far_one() {
    let mut documents: Vec<(String, u64)> = Vec::new();
    let mut fp = 0x5555_aaaa_3333_ccccu64;
    let mut rng = 0x2545_F491_4F6C_DD1Du64;
    let mut next = || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    let mut used = BTreeSet::new();
    for i in 0..1000 {
        documents.push((format!("chain-{i:04}"), fp));
        // Two bits never flipped before keep the walk from coming back near itself.
        let (a, b) = loop {
            let (a, b) = (next() % 64, next() % 64);
            if a != b && used.len() < 60 && used.insert((a.min(b), a.max(b))) {
                break (a, b);
            }
            if used.len() >= 60 {
                used.clear();
            }
        };
        fp ^= (1 << a) | (1 << b);
    }
    for i in 0..2000 {
        documents.push((format!("hot-{i:04}"), 0x0f0f_0f0f_0f0f_0f0f));
    }
    let model: BTreeMap<String, u64> = documents.iter().cloned().collect();
    let near = NearDuplicates::of_documents(&documents, 3, None, &()).unwrap();
    let pairs = brute_force_pairs(&model, 3);
    let zeros: BTreeMap<String, u64> = model.keys().map(|id| (id.clone(), 0)).collect();
    let oracle = Dedup::of(&pairs, &zeros);
    let got = Dedup::from_near(&near);
    assert_eq!(got, oracle);
    let kept: BTreeSet<&str> = got.kept.iter().map(String::as_str).collect();
    for (id, kept_id, distance) in &got.duplicates {
        assert!(
            kept.contains(kept_id.as_str()),
            "{id} names {kept_id}, not kept"
        );
        assert_eq!((model[id] ^ model[kept_id]).count_ones(), *distance);
        assert!(*distance <= 3);
    }
    let chain_kept = kept.iter().filter(|id| id.starts_with("chain-")).count();
    assert!(chain_kept >= 300, "the chain keeps {chain_kept}");
    assert!(kept.contains("hot-0000"));
    let summary = near.summary();
    assert!(summary.clusters_keeping_several >= 1);
    assert_eq!(summary.duplicates, got.duplicates.len() as u64);
    assert_eq!(summary.kept, got.kept.len() as u64);
}

/// 1e5 copies of one page: one kept, every other copy dropped for it at distance 0, without
/// the 5e9 pairs ever being formed.
#[test]
fn keep_rule_over_1e5_copies_of_one_page() {
    let mut documents: Vec<(String, u64)> = (0..100_000)
        .map(|i| (format!("copy-{i:06}"), 0xdead_beef_0000_0001u64))
        .collect();
    documents.push(("near".to_string(), 0xdead_beef_0000_0003));
    let near = NearDuplicates::of_documents(&documents, 3, None, &()).unwrap();
    let mut dropped = 0u64;
    near.for_each_duplicate(|d| {
        assert_eq!(d.kept, "copy-000000");
        assert_eq!(d.distance, u32::from(d.id == "near"));
        dropped += 1;
        Ok::<_, ()>(())
    })
    .unwrap();
    assert_eq!(dropped, 100_000);
    let summary = near.summary();
    assert_eq!((summary.kept, summary.duplicates), (1, 100_000));
    assert_eq!(summary.pairs, 100_001 * 100_000 / 2);
}

/// The replay contract, through the CLI, byte for byte: `audit --duplicates` of a store
/// written in several batches (with a chain, copies, replaced and deleted documents) is what
/// `dedup --duplicates` of its live documents, replayed in (batch, id) order into an empty
/// store with the same settings, writes; `audit --keep --singletons` is the kept records' ids.
#[test]
fn audit_keep_drop_lists_equal_dedup_of_the_replay() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("s");
    let s = path_str(&store);
    let init = |path: &str| {
        let out = simhashdb(&["init", path, "--blocks", "5", "--distance", "3"], "");
        assert!(out.status.success(), "{}", text(&out.stderr));
    };
    init(s);
    let mut rng = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    let mut chain = 0x1234_5678_9abc_def0u64;
    for day in 0..4u64 {
        let mut lines = String::new();
        for i in 0..300u64 {
            // Ids interleave across days, so batch order and id order disagree.
            let id = format!("copy-{:04}", i * 4 + (3 - day));
            lines.push_str(&format!("{id}\t{:016x}\n", 0xabcd_ef01_2345_6789u64));
        }
        for i in 0..50u64 {
            lines.push_str(&format!("chain-{day}-{i:02}\t{chain:016x}\n"));
            chain ^= (1 << (next() % 64)) | (1 << (next() % 64));
        }
        for i in 0..100u64 {
            let base = next();
            lines.push_str(&format!("pair-{day}-{i:03}a\t{base:016x}\n"));
            let near = base ^ (1 << (next() % 64)) ^ (1 << (next() % 64));
            lines.push_str(&format!("pair-{day}-{i:03}b\t{near:016x}\n"));
        }
        // Day 2 moves some of day 0's documents elsewhere.
        if day == 2 {
            for i in 0..20u64 {
                lines.push_str(&format!("pair-0-{i:03}a\t{:016x}\n", next()));
            }
        }
        let out = simhashdb(&["insert", s, "--label", &format!("day{day}")], &lines);
        assert!(out.status.success(), "{}", text(&out.stderr));
    }
    let out = simhashdb(&["delete", s, "copy-0003", "chain-0-05", "pair-1-004b"], "");
    assert!(out.status.success(), "{}", text(&out.stderr));

    let audited = [dir.path().join("dups.tsv"), dir.path().join("keep.txt")];
    let out = simhashdb(
        &[
            "audit",
            s,
            "--duplicates",
            path_str(&audited[0]),
            "--keep",
            path_str(&audited[1]),
            "--singletons",
        ],
        "",
    );
    assert!(out.status.success(), "{}", text(&out.stderr));

    // The replay: the live documents by (batch, id), deduplicated into an empty store.
    let out = simhashdb(&["export", s], "");
    assert!(out.status.success(), "{}", text(&out.stderr));
    let mut live: Vec<(u64, String, String)> = text(&out.stdout)
        .lines()
        .map(|line| {
            let f: Vec<&str> = line.split('\t').collect();
            (f[2].parse().unwrap(), f[0].to_string(), f[1].to_string())
        })
        .collect();
    live.sort();
    let input: String = live
        .iter()
        .map(|(_, id, fp)| format!("{id}\t{fp}\n"))
        .collect();
    let replay = dir.path().join("replay");
    init(path_str(&replay));
    let replayed = [
        dir.path().join("dedup-dups.tsv"),
        dir.path().join("kept.tsv"),
    ];
    let out = simhashdb(
        &[
            "dedup",
            path_str(&replay),
            "--duplicates",
            path_str(&replayed[0]),
            "--output",
            path_str(&replayed[1]),
        ],
        &input,
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let read = |f: &std::path::Path| std::fs::read_to_string(f).unwrap();
    let duplicates = read(&audited[0]);
    assert!(duplicates.lines().count() > 1000, "{duplicates}");
    // The replay's matches are all of its input: dedup's batch columns are empty.
    let replayed_duplicates: String = read(&replayed[0])
        .lines()
        .map(|line| format!("{}\n", line.strip_suffix("\t\t\t").unwrap()))
        .collect();
    assert!(
        duplicates == replayed_duplicates,
        "the duplicates differ from the replay's"
    );
    let kept_ids: String = read(&replayed[1])
        .lines()
        .map(|line| format!("{}\n", line.split('\t').next().unwrap()))
        .collect();
    assert!(
        read(&audited[1]) == kept_ids,
        "the kept ids differ from the replay's"
    );
    assert!(
        kept_ids
            .lines()
            .filter(|id| id.starts_with("chain-"))
            .count()
            > 1,
        "the chain keeps several"
    );
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// Up to 64 distinct fingerprints are paired by comparing all of them, not through
    /// permuted tables: the pairs are brute force's all the same.
    #[test]
    fn few_documents_pair_as_brute_force_says(
        fps in proptest::collection::vec(fingerprint(), 1..70),
        d in 0u8..4,
    ) {
        let documents: Vec<(String, u64)> =
            fps.iter().enumerate().map(|(i, &fp)| (format!("d{i:02}"), fp)).collect();
        let model: BTreeMap<String, u64> = documents.iter().cloned().collect();
        let near = NearDuplicates::of_documents(&documents, d, None, &()).unwrap();
        let mut got = streamed_pairs(&near);
        got.sort();
        prop_assert_eq!(got, brute_force_pairs(&model, u32::from(d)));
    }
}
