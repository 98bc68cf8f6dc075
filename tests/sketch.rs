//! Verification sketches (format 4): audit, query and dedup verified from the store equal a
//! brute-force model that computes the same estimator, on random stores and on a skewed one
//! (thousands of copies of one page); pairs without a sketch are flagged, never dropped;
//! compaction and replacement keep the right sketch; the CLI's outputs and errors; export and
//! insert carry sketches; verify and repair handle damaged sketch blocks; every format's
//! layout of sketches (fixtures of formats 4 on) is read in one pass once every document has one.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::sync::Mutex;

use proptest::prelude::*;
use serde_json::Value;
use simhashdb::{
    Batch, CreateOptions, NearDuplicates, Progress, Query, Scheme, Settings, Snapshot, Store,
    Verification,
};

use crate::util::{dedup_batch, path_str, simhashdb, text};

/// A live document of the model: fingerprint, batch, sketch.
type Doc = (u64, u64, Option<Vec<u8>>);

const WORDS: [&str; 24] = [
    "alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet",
    "kilo", "lima", "mike", "november", "oscar", "papa", "quebec", "romeo", "sierra", "tango",
    "uniform", "victor", "whiskey", "xray",
];

/// A text of 40 words: base text `base` with `edits` words replaced (deterministically).
pub fn text_of(base: u8, edits: u8) -> String {
    let mut words: Vec<&str> = (0..40)
        .map(|i| WORDS[(usize::from(base) * 7 + i * i * 3 + i) % WORDS.len()])
        .collect();
    for e in 0..usize::from(edits) {
        let at = (e * 13 + usize::from(base)) % words.len();
        words[at] = WORDS[(e * 5 + 11) % WORDS.len()];
    }
    words.join(" ")
}

fn scheme(bytes: u16) -> Scheme {
    Scheme::default().with_sketch(bytes).unwrap()
}

fn create(path: &Path, bytes: u16, settings: Settings) -> Store {
    let options = CreateOptions {
        blocks: Some(settings.blocks),
        distance: settings.distance,
        shards: Some(settings.shards),
        scheme: scheme(bytes),
        ..CreateOptions::default()
    };
    Store::create_from(path, &options).unwrap()
}

/// A document of a random batch: id, fingerprint, and a text to sketch (None: a bare
/// fingerprint).
type Input = (String, u64, Option<String>);
/// A generated document: id, base fingerprint, bits flipped, (base text, words edited).
type Drawn = (u8, u8, u8, Option<(u8, u8)>);
/// A pair as an audit gives it: a, b, distance, estimate (None: unverified).
type Pair = (String, String, u32, Option<f64>);

fn input_batch(docs: &[Drawn], bases: &[u64]) -> Vec<Input> {
    docs.iter()
        .map(|&(id, base, flips, text)| {
            let fp = bases[usize::from(base) % bases.len()] ^ spread(flips);
            (
                format!("d{id}"),
                fp,
                text.map(|(b, e)| text_of(b % 5, e % 12)),
            )
        })
        .collect()
}

/// `flips` bits set, spread over the fingerprint: 0 to 5 bits.
fn spread(flips: u8) -> u64 {
    (0..u64::from(flips % 6)).fold(0, |acc, i| acc | 1 << (i * 13 % 64))
}

fn batch_of(docs: &[Input], scheme: &Scheme) -> Batch {
    let mut batch = Batch::new();
    for (id, fp, text) in docs {
        match text.as_deref().and_then(|t| scheme.sketch(t)) {
            Some(sketch) => batch.push_sketched(id, *fp, &sketch).unwrap(),
            None => batch.push(id, *fp).unwrap(),
        }
    }
    batch
}

/// The model's store after the batches: each id's last document, with the batch that set it
/// (an unchanged fingerprint keeps its batch and sketch, as `insert` writes nothing for it).
fn model_of(batches: &[Vec<Input>], scheme: &Scheme) -> BTreeMap<String, Doc> {
    let mut model: BTreeMap<String, Doc> = BTreeMap::new();
    // A batch that changes nothing is not recorded, so it takes no number.
    let mut number = 0;
    for docs in batches {
        let mut last: BTreeMap<&str, &Input> = BTreeMap::new();
        for doc in docs {
            last.insert(&doc.0, doc);
        }
        let changed: Vec<_> = last
            .into_iter()
            .filter(|(id, (_, fp, _))| model.get(*id).is_none_or(|d| d.0 != *fp))
            .collect();
        if changed.is_empty() {
            continue;
        }
        number += 1;
        for (id, (_, fp, text)) in changed {
            let sketch = text.as_deref().and_then(|t| scheme.sketch(t));
            model.insert(id.to_string(), (*fp, number, sketch));
        }
    }
    model
}

/// The estimate between two documents, None when one has no sketch.
fn estimate(a: &Doc, b: &Doc) -> Option<f64> {
    Some(Scheme::estimate_jaccard(a.2.as_deref()?, b.2.as_deref()?))
}

/// Every pair within `d` bits that verification keeps, with its estimate (None:
/// unverified), sorted.
fn model_pairs(model: &BTreeMap<String, Doc>, d: u32, min: f64) -> Vec<Pair> {
    let docs: Vec<(&String, &Doc)> = model.iter().collect();
    let mut out = Vec::new();
    for (i, (a, x)) in docs.iter().enumerate() {
        for (b, y) in &docs[i + 1..] {
            let dist = (x.0 ^ y.0).count_ones();
            if dist > d {
                continue;
            }
            let j = estimate(x, y);
            if j.is_some_and(|j| j < min) {
                continue;
            }
            out.push((a.to_string(), b.to_string(), dist, j));
        }
    }
    out.sort_by(|p, q| (&p.0, &p.1).cmp(&(&q.0, &q.1)));
    out
}

/// The phases an operation told its progress of, in order.
#[derive(Default)]
struct Phases(Mutex<Vec<String>>);

impl Progress for Phases {
    fn start(&self, phase: &str, _steps: u64) {
        self.0.lock().unwrap().push(phase.to_string());
    }
}

/// Both ways the library verifies an audit with sketches: `near_duplicates` with
/// `Verification::Sketches` (which reads ids and sketches in one pass where every document
/// has a sketch), and `near_duplicates` unverified followed by `verify_sketches`; the first, after checking that the two
/// give the same pairs (in the same order), summary and clusters, and that the one-pass
/// read was taken exactly when `one_pass` says.
fn verified(snapshot: &Snapshot, d: u32, min: f64, one_pass: bool) -> NearDuplicates {
    let phases = Phases::default();
    let sketches = Verification::Sketches { min_jaccard: min };
    let near = snapshot.near_duplicates(d, &sketches, &phases).unwrap();
    let mut apart = snapshot
        .near_duplicates(d, &Verification::None, &())
        .unwrap();
    apart.verify_sketches(snapshot, min, &()).unwrap();
    let phases = phases.0.into_inner().unwrap();
    assert_eq!(
        phases.iter().any(|p| p == "reading ids and sketches"),
        one_pass,
        "{phases:?}"
    );
    let listed = |near: &NearDuplicates| {
        let mut pairs = Vec::new();
        near.for_each_pair(|a, b, dist, j| {
            pairs.push((a.to_string(), b.to_string(), dist, j));
            Ok::<_, std::convert::Infallible>(())
        })
        .unwrap();
        let mut clusters = Vec::new();
        near.for_each_cluster(|c| {
            clusters.push(format!("{c:?}"));
            Ok::<_, std::convert::Infallible>(())
        })
        .unwrap();
        (
            pairs,
            serde_json::to_value(near.summary()).unwrap(),
            clusters,
        )
    };
    assert!(listed(&near) == listed(&apart), "one pass and two differ");
    near
}

/// Whether every document the batches wrote (each id's last in a batch, where its
/// fingerprint changed) has a sketch: then every run keeps a sketch for each of its
/// postings, and the audit reads ids and sketches in one pass.
fn all_written_sketched(batches: &[Vec<Input>], scheme: &Scheme) -> bool {
    let mut fingerprints: BTreeMap<&str, u64> = BTreeMap::new();
    let mut all = true;
    for docs in batches {
        let mut last: BTreeMap<&str, &Input> = BTreeMap::new();
        for doc in docs {
            last.insert(&doc.0, doc);
        }
        for (id, (_, fp, text)) in last {
            if fingerprints.insert(id, *fp) != Some(*fp) {
                all &= text.as_deref().and_then(|t| scheme.sketch(t)).is_some();
            }
        }
    }
    all
}

fn library_pairs(snapshot: &Snapshot, d: u32, min: f64, one_pass: bool) -> (Vec<Pair>, Value) {
    let near = verified(snapshot, d, min, one_pass);
    let mut pairs = Vec::new();
    near.for_each_pair(|a, b, dist, j| {
        pairs.push((a.to_string(), b.to_string(), dist, j));
        Ok::<_, std::convert::Infallible>(())
    })
    .unwrap();
    pairs.sort_by(|p, q| (&p.0, &p.1).cmp(&(&q.0, &q.1)));
    (pairs, serde_json::to_value(near.summary()).unwrap())
}

/// Clusters of the model's kept pairs: sorted member lists of two or more.
fn model_clusters(model: &BTreeMap<String, Doc>, pairs: &[Pair]) -> BTreeSet<Vec<String>> {
    let ids: Vec<&String> = model.keys().collect();
    let index: BTreeMap<&str, usize> = ids
        .iter()
        .enumerate()
        .map(|(i, id)| (id.as_str(), i))
        .collect();
    let mut parent: Vec<usize> = (0..ids.len()).collect();
    fn root(parent: &mut [usize], mut x: usize) -> usize {
        while parent[x] != x {
            parent[x] = parent[parent[x]];
            x = parent[x];
        }
        x
    }
    for (a, b, _, _) in pairs {
        let (ra, rb) = (
            root(&mut parent, index[a.as_str()]),
            root(&mut parent, index[b.as_str()]),
        );
        parent[ra] = rb;
    }
    let mut groups: BTreeMap<usize, Vec<String>> = BTreeMap::new();
    for (i, id) in ids.iter().enumerate() {
        let r = root(&mut parent, i);
        groups.entry(r).or_default().push(id.to_string());
    }
    groups.into_values().filter(|g| g.len() > 1).collect()
}

fn library_clusters(
    snapshot: &Snapshot,
    d: u32,
    min: f64,
    one_pass: bool,
) -> BTreeSet<Vec<String>> {
    let near = verified(snapshot, d, min, one_pass);
    let mut out = BTreeSet::new();
    near.for_each_cluster(|c| {
        out.insert(c.members.iter().map(|(id, _)| id.to_string()).collect());
        Ok::<_, std::convert::Infallible>(())
    })
    .unwrap();
    out
}

/// What the keep rule of a verified audit drops: `{"id", "kept", "distance", "jaccard",
/// "unverified"}` in its order.
fn audit_duplicates(near: &NearDuplicates) -> Vec<Value> {
    let mut out = Vec::new();
    near.for_each_duplicate(|x| {
        out.push(
            serde_json::json!({"id": x.id, "kept": x.kept, "distance": x.distance,
            "jaccard": x.jaccard, "unverified": x.unverified}),
        );
        Ok::<_, std::convert::Infallible>(())
    })
    .unwrap();
    out
}

/// What `dedup` verified at `min` drops of the model's live documents replayed in (batch, id)
/// order into an empty store with the same settings, as [`audit_duplicates`] lists it.
fn replayed_duplicates(model: &BTreeMap<String, Doc>, d: u32, min: f64, bytes: u16) -> Vec<Value> {
    let dir = tempfile::tempdir().unwrap();
    let store = create(&dir.path().join("replay"), bytes, SETTINGS);
    let mut docs: Vec<(&String, &Doc)> = model.iter().collect();
    docs.sort_by_key(|(id, doc)| (doc.1, *id));
    let mut batch = Batch::new();
    for (id, doc) in docs {
        match &doc.2 {
            Some(sketch) => batch.push_sketched(id, doc.0, sketch),
            None => batch.push(id, doc.0),
        }
        .unwrap();
    }
    let snapshot = store.snapshot().unwrap();
    let verdicts = dedup_batch(&snapshot, &batch, d, Some(min)).unwrap();
    verdicts
        .iter()
        .filter(|v| !v.kept)
        .map(|v| {
            serde_json::json!({"id": v.id, "kept": v.duplicate_of, "distance": v.distance,
                "jaccard": v.jaccard, "unverified": v.unverified})
        })
        .collect()
}

/// A query's verified matches by brute force: (distance, fingerprint, id, estimate).
fn model_query(
    model: &BTreeMap<String, Doc>,
    fp: u64,
    sketch: Option<&[u8]>,
    d: u32,
    min: f64,
) -> Vec<(u32, u64, String, Option<f64>)> {
    let mut out: Vec<_> = model
        .iter()
        .filter(|(_, doc)| (doc.0 ^ fp).count_ones() <= d)
        .filter_map(|(id, doc)| {
            let j = match (sketch, doc.2.as_deref()) {
                (Some(a), Some(b)) => Some(Scheme::estimate_jaccard(a, b)),
                _ => None,
            };
            if j.is_some_and(|j| j < min) {
                return None;
            }
            Some(((doc.0 ^ fp).count_ones(), doc.0, id.clone(), j))
        })
        .collect();
    out.sort_by(|a, b| (a.0, a.1, &a.2).cmp(&(b.0, b.1, &b.2)));
    out
}

/// Greedy dedup with verification by brute force, as verdict JSON: a stored fingerprint is
/// judged by its representative (earliest batch, smallest id) and that one's sketch; the
/// nearest passing match wins (stored before kept at equal distance, then batch, then id).
fn model_dedup(
    model: &BTreeMap<String, Doc>,
    batches: &crate::dedup::Batches,
    input: &[(String, u64, Option<Vec<u8>>)],
    d: u32,
    min: f64,
) -> Vec<Value> {
    let mut representatives: BTreeMap<u64, (u64, String, Option<Vec<u8>>)> = BTreeMap::new();
    for (id, (fp, batch, sketch)) in model {
        let better = representatives
            .get(fp)
            .is_none_or(|(b, i, _)| (*batch, id) < (*b, i));
        if better {
            representatives.insert(*fp, (*batch, id.clone(), sketch.clone()));
        }
    }
    let check = |ours: &Option<Vec<u8>>, theirs: &Option<Vec<u8>>| match (ours, theirs) {
        (Some(a), Some(b)) => {
            let j = Scheme::estimate_jaccard(a, b);
            (j >= min).then_some(Some(j))
        }
        _ => Some(None),
    };
    let mut kept: Vec<(String, u64, Option<Vec<u8>>)> = Vec::new();
    let mut out = Vec::new();
    for (id, fp, sketch) in input {
        let dist = |other: u64| (other ^ fp).count_ones();
        let mut stored: Vec<_> = representatives
            .iter()
            .filter(|(f, _)| dist(**f) <= d)
            .map(|(f, (batch, rid, s))| (dist(*f), *batch, rid.clone(), s.clone()))
            .collect();
        stored.sort_by(|a, b| (a.0, a.1, &a.2).cmp(&(b.0, b.1, &b.2)));
        let stored = stored
            .into_iter()
            .find_map(|(dd, batch, rid, s)| check(sketch, &s).map(|j| (dd, rid, j, Some(batch))));
        let mut near: Vec<_> = kept
            .iter()
            .filter(|k| dist(k.1) <= d)
            .map(|k| (dist(k.1), k.0.clone(), k.2.clone()))
            .collect();
        near.sort_by(|a, b| (a.0, &a.1).cmp(&(b.0, &b.1)));
        let within = near
            .into_iter()
            .find_map(|(dd, kid, s)| check(sketch, &s).map(|j| (dd, kid, j, None)));
        let verdict = |of: &str, dd: u32, j: Option<f64>, stored_by: Option<u64>| {
            let batch = stored_by.map(|b| &batches[&b]);
            let mut v = serde_json::json!({
                "id": id, "kept": false, "duplicate_of": of, "distance": dd,
                "stored": stored_by.is_some(), "duplicate_batch": stored_by,
                "duplicate_label": batch.and_then(|b| b.0.clone()),
                "duplicate_committed_utc": batch.map(|b| b.1.clone()),
            });
            match j {
                Some(j) => v["jaccard"] = serde_json::json!(j),
                None => v["unverified"] = serde_json::json!(true),
            }
            v
        };
        out.push(match (stored, within) {
            (Some(s), Some(k)) if k.0 < s.0 => verdict(&k.1, k.0, k.2, k.3),
            (Some(s), _) => verdict(&s.1, s.0, s.2, s.3),
            (None, Some(k)) => verdict(&k.1, k.0, k.2, k.3),
            (None, None) => {
                kept.push((id.clone(), *fp, sketch.clone()));
                serde_json::json!({
                    "id": id, "kept": true, "duplicate_of": null, "distance": null, "stored": null,
                    "duplicate_batch": null, "duplicate_label": null,
                    "duplicate_committed_utc": null,
                })
            }
        });
    }
    out
}

fn doc_strategy() -> impl Strategy<Value = Drawn> {
    (
        0u8..30,
        0u8..4,
        0u8..6,
        proptest::option::weighted(0.8, (0u8..5, 0u8..12)),
    )
}

const SETTINGS: Settings = Settings {
    blocks: 6,
    distance: 3,
    shards: 4,
};

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]

    /// Audit, query and dedup verified with sketches equal the models, before and after a
    /// compaction, over batches that replace ids with other texts and fingerprints, mix
    /// sketched and bare documents, and hold copies.
    #[test]
    fn verified_answers_equal_the_models(
        bases in proptest::collection::vec(any::<u64>(), 1..4),
        batches in proptest::collection::vec(proptest::collection::vec(doc_strategy(), 1..30), 1..4),
        input in proptest::collection::vec(doc_strategy(), 0..25),
        min_pick in 0usize..4,
        bytes_pick in 0usize..2,
        d in 0u32..4,
        texts_only in any::<bool>(),
    ) {
        let min = [0.5, 0.7, 0.8, 0.9][min_pick];
        let bytes = [64u16, 128][bytes_pick];
        let scheme = scheme(bytes);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s");
        let mut store = create(&path, bytes, SETTINGS);
        let batches: Vec<Vec<Input>> = batches
            .iter()
            .map(|docs| {
                let mut docs = docs.clone();
                if texts_only {
                    // Every document sketched: the audit reads ids and sketches in one pass.
                    for doc in &mut docs {
                        doc.3 = doc.3.or(Some((doc.0, doc.1)));
                    }
                }
                input_batch(&docs, &bases)
            })
            .collect();
        for docs in &batches {
            store.insert(&batch_of(docs, &scheme), None).unwrap();
        }
        let model = model_of(&batches, &scheme);
        let pairs = model_pairs(&model, d, min);
        let clusters = model_clusters(&model, &pairs);
        let input = input_batch(&input, &bases);
        let digests: Vec<(String, u64, Option<Vec<u8>>)> = input
            .iter()
            .map(|(id, fp, t)| (id.clone(), *fp, t.as_deref().and_then(|t| scheme.sketch(t))))
            .collect();
        let dedup = model_dedup(&model, &crate::dedup::batches_of(&path), &digests, d, min);
        for round in 0..2 {
            // Before the compaction, replaced documents' postings count too; after it, the
            // live ones only.
            let one_pass = if round == 0 {
                all_written_sketched(&batches, &scheme)
            } else {
                model.values().all(|doc| doc.2.is_some())
            };
            prop_assert!(one_pass || !texts_only);
            let snapshot = Snapshot::open(&path).unwrap();
            let (got, summary) = library_pairs(&snapshot, d, min, one_pass);
            prop_assert_eq!(&got, &pairs, "round {}", round);
            let unverified = pairs.iter().filter(|p| p.3.is_none()).count() as u64;
            prop_assert_eq!(&summary["unverified_pairs"], &Value::from(unverified));
            prop_assert_eq!(library_clusters(&snapshot, d, min, one_pass), clusters.clone());
            let near = verified(&snapshot, d, min, one_pass);
            prop_assert_eq!(audit_duplicates(&near), replayed_duplicates(&model, d, min, bytes));
            // Queries one at a time, then all together (read in one pass where every stored
            // document has a sketch).
            let (mut queries, mut expected) = (Vec::new(), Vec::new());
            for (id, doc) in model.iter().take(8) {
                prop_assert_eq!(snapshot.sketch(id).unwrap(), doc.2.clone(), "{}", id);
                for sketch in [doc.2.as_deref(), None] {
                    queries.push(Query { sketch: sketch.map(<[u8]>::to_vec), ..Query::from(doc.0) });
                    expected.push(model_query(&model, doc.0, sketch, d, min));
                }
            }
            let as_tuples = |matches: Vec<simhashdb::Match>| -> Vec<_> {
                matches
                    .into_iter()
                    .map(|m| {
                        assert_eq!(m.unverified, m.jaccard.is_none());
                        (m.distance, m.fingerprint, m.id, m.jaccard)
                    })
                    .collect()
            };
            for (query, expected) in queries.iter().zip(&expected) {
                let got = snapshot.query_many(std::slice::from_ref(query), d, Some(min)).unwrap();
                prop_assert_eq!(&as_tuples(got.into_iter().next().unwrap()), expected);
            }
            let together = snapshot.query_many(&queries, d, Some(min)).unwrap();
            let together: Vec<_> = together.into_iter().map(as_tuples).collect();
            prop_assert_eq!(&together, &expected);
            let verdicts = dedup_batch(&snapshot, &batch_of(&input, &scheme), d, Some(min)).unwrap();
            let verdicts: Vec<Value> =
                verdicts.iter().map(|v| serde_json::to_value(v).unwrap()).collect();
            prop_assert_eq!(&verdicts, &dedup, "round {}", round);
            drop(snapshot);
            store.compact().unwrap();
            prop_assert!(Store::verify(&path, false, &()).unwrap().findings.is_empty());
        }
    }
}

/// Thousands of copies of one page (one fingerprint, one text), near copies with other texts,
/// and bare fingerprints among them: the audit stays one node, verified pairs are counted
/// without being expanded wrongly, and the answers equal the model's.
#[test]
fn a_skewed_store_is_verified_as_the_model_says() {
    let scheme = scheme(128);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s");
    let mut store = create(&path, 128, SETTINGS);
    let hot = 0x1234_5678_9abc_def0u64;
    let mut docs: Vec<Input> = Vec::new();
    for i in 0..3000 {
        docs.push((format!("copy-{i:04}"), hot, Some(text_of(0, 0))));
    }
    for i in 0..40 {
        // Near the page: a similar text (kept), another text (dropped), or none (unverified).
        let text = match i % 3 {
            0 => Some(text_of(0, 1)),
            1 => Some(text_of(3, 0)),
            _ => None,
        };
        docs.push((format!("near-{i:02}"), hot ^ spread(1 + i % 3), text));
    }
    for i in 0..200u64 {
        docs.push((
            format!("other-{i}"),
            i.wrapping_mul(0x9E37_79B9_7F4A_7C15),
            Some(text_of(2, (i % 10) as u8)),
        ));
    }
    store
        .insert(&batch_of(&docs[..1600], &scheme), Some("one"))
        .unwrap();
    store
        .insert(&batch_of(&docs[1600..], &scheme), Some("two"))
        .unwrap();
    let model = model_of(&[docs[..1600].to_vec(), docs[1600..].to_vec()], &scheme);
    let snapshot = Snapshot::open(&path).unwrap();
    let (pairs, summary) = library_pairs(&snapshot, 3, 0.8, false);
    let expected = model_pairs(&model, 3, 0.8);
    assert_eq!(pairs.len(), expected.len());
    assert_eq!(pairs, expected);
    assert!(pairs.len() > 3000 * 2999 / 2, "{}", pairs.len());
    assert!(
        summary["unverified_pairs"].as_u64().unwrap() > 0,
        "{summary}"
    );
    assert_eq!(
        library_clusters(&snapshot, 3, 0.8, false),
        model_clusters(&model, &expected)
    );
    // A new day's input: more copies, near copies, a new page and its copies.
    let input: Vec<Input> = (0..500)
        .map(|i| match i % 4 {
            0 => (format!("new-{i}"), hot, Some(text_of(0, 0))),
            1 => (format!("new-{i}"), hot ^ 1, Some(text_of(4, 3))),
            2 => (
                format!("new-{i}"),
                0xfeed_0000_0000_0000,
                Some(text_of(1, 0)),
            ),
            _ => (format!("new-{i}"), 0xfeed_0000_0000_0001, None),
        })
        .collect();
    let digests: Vec<_> = input
        .iter()
        .map(|(id, fp, t)| (id.clone(), *fp, t.as_deref().and_then(|t| scheme.sketch(t))))
        .collect();
    let verdicts = dedup_batch(&snapshot, &batch_of(&input, &scheme), 3, Some(0.8)).unwrap();
    let verdicts: Vec<Value> = verdicts
        .iter()
        .map(|v| serde_json::to_value(v).unwrap())
        .collect();
    let batches = crate::dedup::batches_of(&path);
    assert_eq!(verdicts, model_dedup(&model, &batches, &digests, 3, 0.8));
}

/// Every document sketched, over three runs and then compacted: thousands of copies of one
/// page (their sketch entries span many blocks), near copies, ids a later run replaces, and a
/// run of deletions. The audit reads ids and sketches in one pass, merges the runs' documents,
/// skips the replaced and deleted ones, and equals the model and the two-pass reading.
#[test]
fn a_skewed_store_of_texts_is_audited_in_one_pass() {
    let scheme = scheme(128);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s");
    let mut store = create(&path, 128, SETTINGS);
    let hot = 0x0fed_cba9_8765_4321u64;
    let mut first: Vec<Input> = (0..2500)
        .map(|i| (format!("copy-{i:04}"), hot, Some(text_of(0, 0))))
        .collect();
    first.extend((0..60).map(|i| {
        let text = if i % 2 == 0 {
            text_of(0, 1)
        } else {
            text_of(3, 0)
        };
        (format!("near-{i:02}"), hot ^ spread(1 + i % 3), Some(text))
    }));
    first.extend((0..300u64).map(|i| {
        (
            format!("other-{i:03}"),
            (i / 3).wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ spread((i % 3) as u8),
            Some(text_of((i % 5) as u8, (i % 7) as u8)),
        )
    }));
    let (one, two) = first.split_at(1400);
    // The third batch moves copies to a near fingerprint with another text, and adds copies.
    let three: Vec<Input> = (0..400)
        .map(|i| match i % 2 {
            0 => (format!("copy-{i:04}"), hot ^ 1, Some(text_of(0, 2))),
            _ => (format!("late-{i:04}"), hot, Some(text_of(0, 0))),
        })
        .collect();
    let batches = [one.to_vec(), two.to_vec(), three];
    for docs in &batches {
        store.insert(&batch_of(docs, &scheme), None).unwrap();
    }
    let deleted: Vec<String> = (1000..1300)
        .map(|i| format!("copy-{i:04}"))
        .chain((0..10).map(|i| format!("near-{i:02}")))
        .collect();
    store.delete(deleted.iter().map(String::as_str)).unwrap();
    let mut model = model_of(&batches, &scheme);
    for id in &deleted {
        model.remove(id);
    }
    let expected = model_pairs(&model, 3, 0.8);
    let clusters = model_clusters(&model, &expected);
    for round in 0..2 {
        let snapshot = Snapshot::open(&path).unwrap();
        assert_eq!(snapshot.run_count(), if round == 0 { 4 } else { 1 });
        let (pairs, _) = library_pairs(&snapshot, 3, 0.8, true);
        assert!(pairs.len() > 2000 * 1999 / 2, "{}", pairs.len());
        assert!(pairs == expected, "round {round}");
        assert_eq!(library_clusters(&snapshot, 3, 0.8, true), clusters);
        // Verified queries, together: the hot page's thousands of copies read once.
        let probes = [
            (hot, Some(text_of(0, 0))),
            (hot ^ 1, Some(text_of(0, 2))),
            (hot ^ spread(2), None),
            (hot, Some(text_of(3, 0))),
        ];
        let queries: Vec<Query> = (probes.iter())
            .map(|(fp, t)| Query {
                sketch: t.as_deref().and_then(|t| scheme.sketch(t)),
                ..Query::from(*fp)
            })
            .collect();
        let answers = snapshot.query_many(&queries, 3, Some(0.8)).unwrap();
        for (query, matches) in queries.iter().zip(answers) {
            let got: Vec<_> = (matches.into_iter())
                .map(|m| (m.distance, m.fingerprint, m.id, m.jaccard))
                .collect();
            let sketch = query.sketch.as_deref();
            assert!(got == model_query(&model, query.fingerprint, sketch, 3, 0.8));
        }
        // Another text near the page: verification drops its copies.
        let unverified = model_query(&model, hot, None, 3, 0.8).len();
        assert!(model_query(&model, hot, queries[3].sketch.as_deref(), 3, 0.8).len() < unverified);
        drop(snapshot);
        store.compact().unwrap();
    }
}

/// The CLI: `init --sketch`, text inserts, `audit`, `query` and `dedup` with --min-jaccard
/// (fourth and fifth columns, JSON fields, the unverified flag), `stats`, `export --sketch`
/// into another store, and the usage errors.
#[test]
fn the_cli_verifies_with_sketches_and_flags_what_it_cannot() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("s");
    let s = path_str(&store);
    let out = simhashdb(
        &[
            "init",
            s,
            "--sketch",
            "--sketch-bytes",
            "256",
            "--distance",
            "3",
        ],
        "",
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    // a and b: one text with two words changed; c: another text; e: a bare fingerprint equal
    // to a's.
    let docs = format!(
        "{}\n{}\n{}\n",
        serde_json::json!({"id": "a", "text": text_of(1, 0)}),
        serde_json::json!({"id": "b", "text": text_of(1, 2)}),
        serde_json::json!({"id": "c", "text": text_of(2, 0)}),
    );
    let out = simhashdb(&["insert", s, "--format", "jsonl"], &docs);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let scheme = scheme(256);
    let fp_a = scheme.fingerprint(&text_of(1, 0));
    let out = simhashdb(&["insert", s], &format!("e\t{fp_a:016x}\n"));
    assert!(out.status.success(), "{}", text(&out.stderr));
    let sketch = |t: &str| scheme.sketch(t).unwrap();
    let j_ab = Scheme::estimate_jaccard(&sketch(&text_of(1, 0)), &sketch(&text_of(1, 2)));
    assert!(j_ab > 0.5 && j_ab < 1.0, "{j_ab}");

    let out = simhashdb(&["audit", s, "--min-jaccard", "0.5", "--distance", "3"], "");
    assert!(out.status.success(), "{}", text(&out.stderr));
    let lines: BTreeSet<String> = text(&out.stdout).lines().map(String::from).collect();
    let d_ab = (fp_a ^ scheme.fingerprint(&text_of(1, 2))).count_ones();
    let mut expected = BTreeSet::from(["a\te\t0\tunverified".to_string()]);
    if d_ab <= 3 {
        expected.insert(format!("a\tb\t{d_ab}\t{j_ab:.6}"));
        expected.insert(format!("b\te\t{d_ab}\tunverified"));
    }
    assert_eq!(lines, expected);
    let out = simhashdb(&["audit", s, "--min-jaccard", "0.5", "--json"], "");
    let first: Value = serde_json::from_str(text(&out.stdout).lines().next().unwrap()).unwrap();
    assert!(
        first.get("jaccard").is_some() || first["unverified"] == Value::Bool(true),
        "{first}"
    );

    // Query by text: a's text finds a (jaccard 1) and e (unverified); by fingerprint all are
    // unverified.
    let out = simhashdb(
        &[
            "query",
            s,
            "--text",
            &text_of(1, 0),
            "--min-jaccard",
            "0.99",
        ],
        "",
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let got = text(&out.stdout);
    assert!(
        got.contains(&format!("\ta\t{fp_a:016x}\t0\t1.000000")),
        "{got}"
    );
    assert!(
        got.contains(&format!("\te\t{fp_a:016x}\t0\tunverified")),
        "{got}"
    );
    assert!(!got.contains("\tb\t"), "b's text is below 0.99: {got}");
    let out = simhashdb(
        &[
            "query",
            s,
            &format!("{fp_a:016x}"),
            "--min-jaccard",
            "0.99",
            "--json",
        ],
        "",
    );
    for line in text(&out.stdout).lines() {
        let v: Value = serde_json::from_str(line).unwrap();
        assert_eq!(v["unverified"], Value::Bool(true), "{v}");
    }

    // Dedup: a copy of c's text is a verified duplicate; a bare copy of e unverified.
    let input = format!(
        "{}\n",
        serde_json::json!({"id": "x", "text": text_of(2, 0)}),
    );
    let out = simhashdb(
        &[
            "dedup",
            s,
            "--format",
            "jsonl",
            "--min-jaccard",
            "0.8",
            "--duplicates",
            "-",
            "--output",
            path_str(&dir.path().join("kept.jsonl")),
        ],
        &input,
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stored_by = crate::dedup::stored_by(&store, 1);
    assert_eq!(
        text(&out.stdout),
        format!("x\tc\t0\t1.000000\t{stored_by}\n")
    );

    // stats shows the sketch size; export --sketch rebuilds the store with its sketches.
    let out = simhashdb(&["stats", s, "--json"], "");
    let stats: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(stats["sketch_bytes"], Value::from(256));
    assert_eq!(stats["sketches"], Value::from(3));
    assert_eq!(stats["format_version"], Value::from(10));
    let out = simhashdb(&["export", s, "--format", "jsonl", "--sketch"], "");
    assert!(out.status.success(), "{}", text(&out.stderr));
    let copy = dir.path().join("copy");
    simhashdb(
        &["init", path_str(&copy), "--sketch", "--sketch-bytes", "256"],
        "",
    );
    let insert = simhashdb(
        &["insert", path_str(&copy), "--format", "jsonl"],
        &text(&out.stdout),
    );
    assert!(insert.status.success(), "{}", text(&insert.stderr));
    let original = Snapshot::open(&store).unwrap();
    let rebuilt = Snapshot::open(&copy).unwrap();
    for id in ["a", "b", "c", "e"] {
        assert_eq!(
            original.sketch(id).unwrap(),
            rebuilt.sketch(id).unwrap(),
            "{id}"
        );
    }
    assert!(rebuilt.sketch("e").unwrap().is_none());
    // A sketch of another size is an error naming the line; nothing is stored.
    let other = dir.path().join("other");
    simhashdb(&["init", path_str(&other), "--sketch"], "");
    let insert = simhashdb(
        &["insert", path_str(&other), "--format", "jsonl"],
        &text(&out.stdout),
    );
    assert_eq!(insert.status.code(), Some(1), "{}", text(&insert.stderr));
    assert!(
        text(&insert.stderr).contains(":1: \"sketch\" holds 256 bytes"),
        "{}",
        text(&insert.stderr)
    );

    // Usage errors: no sketches to verify with; sizes out of range; --sketch-bytes alone.
    let plain = dir.path().join("plain");
    simhashdb(&["init", path_str(&plain)], "");
    for args in [
        vec!["audit", path_str(&plain), "--min-jaccard", "0.8"],
        vec!["query", path_str(&plain), "0", "--min-jaccard", "0.8"],
        vec!["dedup", path_str(&plain), "--min-jaccard", "0.8"],
        vec!["export", path_str(&plain), "--format", "jsonl", "--sketch"],
        vec!["audit", s, "--min-jaccard", "1.5"],
    ] {
        let out = simhashdb(&args, "a\t0000000000000001\n");
        assert_eq!(
            out.status.code(),
            Some(2),
            "{args:?}: {}",
            text(&out.stderr)
        );
        assert!(
            text(&out.stderr).contains("sketch") || text(&out.stderr).contains("between 0 and 1"),
            "{args:?}: {}",
            text(&out.stderr)
        );
    }
    for bytes in ["63", "1025", "x"] {
        let out = simhashdb(
            &[
                "init",
                path_str(&dir.path().join(bytes)),
                "--sketch",
                "--sketch-bytes",
                bytes,
            ],
            "",
        );
        assert_eq!(out.status.code(), Some(2), "{bytes}");
    }
    let out = simhashdb(
        &[
            "init",
            path_str(&dir.path().join("n")),
            "--sketch-bytes",
            "128",
        ],
        "",
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("--sketch"),
        "{}",
        text(&out.stderr)
    );
}

/// The documents of the damaged-sketch tests: 401 texts of 45 kinds, one of them
/// ("doc-123-again") under the victim's fingerprint, so that an audit reads the victim's
/// sketch.
fn damaged_sketch_documents() -> Vec<Input> {
    (0..400u64)
        .map(|i| {
            (
                format!("doc-{i:03}"),
                i.wrapping_mul(0x9E37_79B9_7F4A_7C15),
                Some(text_of((i % 5) as u8, (i % 9) as u8)),
            )
        })
        .chain([(
            "doc-123-again".to_string(),
            123u64.wrapping_mul(0x9E37_79B9_7F4A_7C15),
            Some(text_of(1, 1)),
        )])
        .collect()
}

/// A copy at `path` of the format 8 fixture's store with sketches (64 bytes), which the
/// library goes on writing in its format.
fn copy_v8_fixture(path: &Path) {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/format-v8/store");
    crate::compat::copy_dir(&fixture, path);
}

/// The docs file of the newest run of the store at `path`.
fn newest_docs_file(path: &Path) -> std::path::PathBuf {
    let mut runs: Vec<_> = std::fs::read_dir(path.join("runs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    runs.sort();
    runs.pop().unwrap().join("docs.redb")
}

/// A damaged sketch where the postings hold the sketches (format 8: the format 8 fixture's
/// store with sketches, written to in its format): verify names the postings, reads of the
/// sketch fail instead of answering wrongly, and repair rebuilds the run without the lost
/// sketches, listing their documents, whose docs entries are intact.
#[test]
fn verify_and_repair_handle_a_damaged_sketch_block() {
    let scheme = scheme(64);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s");
    copy_v8_fixture(&path);
    let mut store = Store::open(&path).unwrap();
    let docs = damaged_sketch_documents();
    store.insert(&batch_of(&docs, &scheme), None).unwrap();
    drop(store);
    assert_eq!(Snapshot::open(&path).unwrap().format_version(), 8);
    let victim = "doc-123";
    let sketch = Snapshot::open(&path)
        .unwrap()
        .sketch(victim)
        .unwrap()
        .unwrap();
    let file = newest_docs_file(&path);
    // Every copy of the victim's sketch is damaged: documents of the same text share it, and
    // a page redb freed may hold a stale copy.
    let mut bytes = std::fs::read(&file).unwrap();
    let copies: Vec<usize> = bytes
        .windows(sketch.len())
        .enumerate()
        .filter(|(_, w)| *w == &sketch[..])
        .map(|(at, _)| at)
        .collect();
    assert!(!copies.is_empty(), "the sketch is stored as is");
    for at in copies {
        bytes[at + 40] ^= 0x10;
    }
    std::fs::write(&file, bytes).unwrap();

    // Formats 7 and 8 keep the sketches in the postings: the damage is in that table (the
    // audit reads ids and sketches in one pass, and fails naming it).
    assert_damage_named(&path, "postings");
    let err = Snapshot::open(&path).unwrap().sketch(victim).unwrap_err();
    assert!(err.to_string().contains("postings"), "{err}");

    let run = repaired_run(&path);
    assert!(
        run.sketches_lost >= 1 && run.ids_sketch_lost.iter().any(|id| id == victim),
        "{run:?}"
    );
    assert_eq!(run.documents, 401);
    let snapshot = Snapshot::open(&path).unwrap();
    let lost: BTreeSet<&String> = run.ids_sketch_lost.iter().collect();
    for (id, fp, text) in &docs {
        let want = if lost.contains(id) {
            None
        } else {
            scheme.sketch(text.as_deref().unwrap())
        };
        assert_eq!(snapshot.sketch(id).unwrap(), want, "{id}");
        assert_eq!(snapshot.get(id).unwrap(), Some(*fp));
    }
    // Pairs with a document whose sketch was lost are unverified, not dropped.
    let near = verified(&snapshot, 3, 0.8, false);
    let summary = near.summary();
    assert!(summary.unverified_pairs >= 1, "{summary:?}");
    let mut pairs = Vec::new();
    near.for_each_pair(|a, b, _, j| {
        pairs.push((a.to_string(), b.to_string(), j));
        Ok::<_, std::convert::Infallible>(())
    })
    .unwrap();
    assert!(
        pairs.contains(&(victim.to_string(), "doc-123-again".to_string(), None)),
        "{pairs:?}"
    );
}

/// A store at `path` of [`damaged_sketch_documents`] with 128-byte sketches, in one run, whose
/// docs file then has bytes flipped, one at a time (every 61st), until `damaged` holds of
/// a snapshot of it: that byte is left flipped (`what` names the damage sought, should none
/// be found). Returns the documents. Asserts that "doc-123" had its sketch before.
fn damaged_sketch_store(
    path: &Path,
    scheme: &Scheme,
    what: &str,
    damaged: impl Fn(&Snapshot) -> bool,
) -> Vec<Input> {
    let settings = Settings {
        blocks: 5,
        distance: 3,
        shards: 1,
    };
    let mut store = create(path, 128, settings);
    let docs = damaged_sketch_documents();
    store.insert(&batch_of(&docs, scheme), None).unwrap();
    drop(store);
    let before = Snapshot::open(path).unwrap();
    assert!(before.sketch("doc-123").unwrap().is_some());
    drop(before);
    let file = newest_docs_file(path);
    let len = std::fs::metadata(&file).unwrap().len() as usize;
    let flip = |at: usize| {
        let mut bytes = std::fs::read(&file).unwrap();
        bytes[at] ^= 0x10;
        std::fs::write(&file, bytes).unwrap();
    };
    let found = (0..len).step_by(61).any(|at| {
        flip(at);
        let hit = Snapshot::open(path).is_ok_and(|s| damaged(&s));
        if !hit {
            flip(at);
        }
        hit
    });
    assert!(found, "no byte of {what} found");
    docs
}

/// The store at `path`, a table of whose docs file is damaged: verify names `table`, and the
/// verified audit fails naming it and the file instead of answering.
fn assert_damage_named(path: &Path, table: &str) {
    let report = Store::verify(path, false, &()).unwrap();
    assert!(
        (report.findings.iter()).any(|f| f.table.as_deref() == Some(table)),
        "{:?}",
        report.findings
    );
    let err = (Snapshot::open(path).unwrap())
        .near_duplicates(3, &Verification::Sketches { min_jaccard: 0.8 }, &())
        .unwrap_err()
        .to_string();
    assert!(err.contains(table) && err.contains("docs.redb"), "{err}");
}

/// Repairs the store of one run at `path`, after which verify finds nothing; returns what
/// the repair says of the run.
fn repaired_run(path: &Path) -> simhashdb::RunRepair {
    let report = Store::open(path).unwrap().repair().unwrap();
    assert!(report.committed);
    assert!(Store::verify(path, false, &()).unwrap().findings.is_empty());
    report.runs.into_iter().next().unwrap()
}

/// A damaged docs block of a store with sketches (their place in the sketch area, format 10,
/// or the sketches themselves, format 9) loses its documents: verify names the docs table,
/// reads of the sketch and the audit fail naming it instead of answering wrongly, and repair
/// rebuilds the run without the block's documents, which it counts as lost; every other
/// document keeps its sketch.
#[test]
fn a_damaged_sketch_in_a_docs_block_loses_that_blocks_documents_to_repair() {
    let scheme = scheme(128);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s");
    let victim = "doc-123";
    // Damaged until the victim's sketch cannot be read, its docs block named.
    let docs = damaged_sketch_store(&path, &scheme, "the victim's docs block", |s| {
        s.sketch(victim)
            .is_err_and(|e| e.to_string().contains("table docs"))
    });

    assert_damage_named(&path, "docs");
    let run = repaired_run(&path);
    assert!(run.documents_lost >= 1 && run.documents < 401, "{run:?}");
    assert_eq!(run.documents + run.documents_lost, 401, "{run:?}");
    let snapshot = Snapshot::open(&path).unwrap();
    assert_eq!(snapshot.get(victim).unwrap(), None);
    let mut kept = 0;
    for (id, fp, text) in &docs {
        if let Some(got) = snapshot.get(id).unwrap() {
            kept += 1;
            assert_eq!(got, *fp, "{id}");
            let want = scheme.sketch(text.as_deref().unwrap());
            assert_eq!(snapshot.sketch(id).unwrap(), want, "{id}");
        }
    }
    assert_eq!(kept, run.documents);
}

/// A damaged block of the sketch area (format 10) loses sketches, not documents: verify names
/// the table, reads of a sketch it held and the verified audit fail naming it instead of
/// answering wrongly, and repair keeps every document, those of the block without their
/// sketches (counted and listed), every other with its own.
#[test]
fn a_damaged_block_of_the_sketch_area_loses_only_its_sketches_to_repair() {
    let scheme = scheme(128);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s");
    let victim = "doc-123";
    let docs = damaged_sketch_store(&path, &scheme, "the victim's sketch", |s| {
        s.sketch(victim)
            .is_err_and(|e| e.to_string().contains("table sketch_area"))
    });

    assert_damage_named(&path, "sketch_area");
    // Its fingerprint still answers: the ids do not need the sketches.
    assert!(Snapshot::open(&path)
        .unwrap()
        .get(victim)
        .unwrap()
        .is_some());

    let run = repaired_run(&path);
    assert_eq!((run.documents, run.documents_lost), (401, 0), "{run:?}");
    assert!(run.sketches_lost >= 1, "{run:?}");
    assert!(run.ids_sketch_lost.iter().any(|id| id == victim), "{run:?}");
    let snapshot = Snapshot::open(&path).unwrap();
    let mut without = 0;
    for (id, fp, text) in &docs {
        assert_eq!(snapshot.get(id).unwrap(), Some(*fp), "{id}");
        let want = text.as_deref().and_then(|t| scheme.sketch(t));
        match snapshot.sketch(id).unwrap() {
            None if want.is_some() => without += 1,
            got => assert_eq!(got, want, "{id}"),
        }
    }
    assert_eq!(without, run.sketches_lost, "{run:?}");
    assert_eq!(snapshot.sketch(victim).unwrap(), None);
}

/// Format 8 keeps the sketches in the postings, where a verified query and a verified dedup
/// look them up after the documents; format 9 keeps them in the docs entries, read with the
/// documents, and format 10 in the sketch area its docs entries name. The same documents
/// answer alike in formats 8 and 10: the format 8 fixture's store with sketches, written to
/// in its format (a page stored 2,000 times among them), then migrated (through 9).
#[test]
fn verified_lookups_answer_alike_in_formats_8_and_10() {
    let scheme = scheme(64);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s");
    copy_v8_fixture(&path);
    let page = 0x5eed_u64.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    let mut docs = damaged_sketch_documents();
    // The page's copies differ in a word or two: a sketch given to another copy's id shows.
    docs.extend((1..2_000u32).map(|i| {
        (
            format!("page-{i:04}"),
            page,
            Some(text_of(2, (i % 3) as u8)),
        )
    }));
    // Near copies of the page, a bit away: some verified, some not.
    docs.extend((0..9).map(|e| (format!("near-{e}"), page ^ 1 << e, Some(text_of(2, e)))));
    docs.push(("bare".to_string(), page ^ 1 << 20, None));
    let mut store = Store::open(&path).unwrap();
    store.insert(&batch_of(&docs, &scheme), None).unwrap();
    // A later batch: a copy with the smallest id (not the earliest batch), copies moved to
    // another fingerprint, copies deleted.
    let later: Vec<Input> = [("page-0000", page, text_of(2, 2))]
        .into_iter()
        .chain((1..40).map(|i| ("moved", page ^ 1 << 30, text_of(3, i % 9))))
        .enumerate()
        .map(|(i, (id, fp, text))| match id {
            "moved" => (format!("page-{:04}", 3 * i + 1), fp, Some(text)),
            _ => (id.to_string(), fp, Some(text)),
        })
        .collect();
    store.insert(&batch_of(&later, &scheme), None).unwrap();
    let deleted: Vec<String> = (0..30).map(|i| format!("page-{:04}", 3 * i + 2)).collect();
    store.delete(deleted.iter().map(String::as_str)).unwrap();
    drop(store);
    // Queries and a dedup of new ids with the texts and fingerprints of every 23rd document,
    // the two documents of doc-123's fingerprint and the page's.
    let probes: Vec<Input> = (docs.iter().step_by(23))
        .chain(docs.iter().filter(|d| d.0.starts_with("doc-123")))
        .chain(docs.iter().filter(|d| d.0 == "page-0003"))
        .map(|(id, fp, text)| (format!("probe-{id}"), *fp, text.clone()))
        .collect();
    let answers = || {
        let snapshot = Snapshot::open(&path).unwrap();
        let queries: Vec<Query> = (probes.iter())
            .map(|(_, fp, text)| Query {
                sketch: text.as_deref().and_then(|t| scheme.sketch(t)),
                ..Query::from(*fp)
            })
            .collect();
        /// A match: distance, fingerprint, id, Jaccard (None: unverified).
        type Found = (u32, u64, String, Option<f64>);
        let matches: Vec<Vec<Found>> = (snapshot
            .query_many(&queries, 3, Some(0.7))
            .unwrap()
            .into_iter())
        .map(|found| {
            (found.into_iter())
                .map(|m| (m.distance, m.fingerprint, m.id, m.jaccard))
                .collect()
        })
        .collect();
        let verdicts = dedup_batch(&snapshot, &batch_of(&probes, &scheme), 3, Some(0.7)).unwrap();
        let verdicts: Vec<Value> = (verdicts.iter())
            .map(|v| serde_json::to_value(v).unwrap())
            .collect();
        (snapshot.format_version(), matches, verdicts)
    };
    let (version, matches, verdicts) = answers();
    assert_eq!(version, 8);
    let verified = matches.iter().flatten().filter(|m| m.3.is_some()).count();
    assert!(verified > 2_000, "the page's copies verified: {verified}");
    assert!(
        verdicts.iter().any(|v| v["jaccard"].is_number()),
        "{verdicts:?}"
    );
    // The page's stored representative: its earliest batch, then its smallest id.
    let page_probe = (verdicts.iter())
        .find(|v| v["id"] == "probe-page-0003")
        .unwrap();
    assert_eq!(page_probe["duplicate_of"], "page-0001", "{page_probe:?}");
    assert_eq!(Store::migrate(&path).unwrap(), 8, "the version it was");
    let (version, matches_10, verdicts_10) = answers();
    assert_eq!(version, 10);
    assert_eq!(matches_10, matches);
    assert_eq!(verdicts_10, verdicts);
}

/// Every layout of sketches since format 4 (a sketches table, the postings, the docs entries,
/// a sketch area) is read in one pass once every stored document has a sketch. Each format's
/// fixture, its bare documents deleted and near copies added in its format (200 of one
/// document among them), answers a verified audit and a batch of verified queries as the
/// model does: by the lookups per fingerprint while the deleted documents' runs remain, then
/// by the one-pass read after a compaction (which writes the fixture's own format).
#[test]
fn every_layout_of_sketches_is_read_in_one_pass_once_all_documents_have_one() {
    let (d, min) = (3, 0.5);
    for version in 4..=Store::FORMAT_VERSION {
        let fixture =
            Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("tests/fixtures/format-v{version}"));
        let read = |file: &str| std::fs::read_to_string(fixture.join(file)).unwrap();
        let fingerprints: BTreeMap<String, u64> = (read("documents.tsv").lines())
            .map(|l| l.split_once('\t').unwrap())
            .map(|(id, fp)| (id.to_string(), u64::from_str_radix(fp, 16).unwrap()))
            .collect();
        let mut model: BTreeMap<String, Doc> = (read("sketches.tsv").lines())
            .map(|l| l.split_once('\t').unwrap())
            .map(|(id, hex)| {
                let sketch = (0..hex.len())
                    .step_by(2)
                    .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
                    .collect();
                (id.to_string(), (fingerprints[id], 0, Some(sketch)))
            })
            .collect();
        let bare: Vec<&str> = (fingerprints.keys())
            .filter(|id| !model.contains_key(*id))
            .map(String::as_str)
            .collect();
        assert!(!bare.is_empty() && model.len() > 50, "v{version}");

        // Near copies of every third stored document, with its sketch or the next one's, and
        // 200 copies of the first, each with the sketch of one of three documents.
        let stored: Vec<Doc> = model.values().cloned().collect();
        let mut copies = Batch::new();
        let mut add = |id: String, fp: u64, sketch: &Option<Vec<u8>>| {
            let sketch = sketch.clone().unwrap();
            copies.push_sketched(&id, fp, &sketch).unwrap();
            model.insert(id, (fp, 0, Some(sketch)));
        };
        for (i, doc) in stored.iter().enumerate().step_by(3) {
            add(format!("copy-{i}"), doc.0 ^ 1 << (i % 64), &doc.2);
            let next = &stored[(i + 1) % stored.len()];
            add(format!("near-{i}"), doc.0 ^ 3 << (i % 63), &next.2);
        }
        for k in 0..200 {
            add(format!("hot-{k:03}"), stored[0].0, &stored[k % 3].2);
        }

        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s");
        crate::compat::copy_dir(&fixture.join("store"), &path);
        let mut store = Store::open(&path).unwrap();
        let deleted = store.delete(bare).unwrap();
        assert_eq!(deleted.deleted as usize, fingerprints.len() - stored.len());
        store.insert(&copies, None).unwrap();
        drop(store);

        // Each document's fingerprint asked with its own sketch and with the next one's.
        let docs: Vec<&Doc> = model.values().collect();
        let (mut queries, mut expected) = (Vec::new(), Vec::new());
        for (i, doc) in docs.iter().enumerate() {
            for sketch in [&doc.2, &docs[(i + 1) % docs.len()].2] {
                queries.push(Query {
                    sketch: sketch.clone(),
                    ..Query::from(doc.0)
                });
                expected.push(model_query(&model, doc.0, sketch.as_deref(), d, min));
            }
        }
        let pairs = model_pairs(&model, d, min);
        assert!(
            pairs.len() < model_pairs(&model, d, 0.0).len(),
            "v{version}: pairs dropped"
        );
        assert!(pairs.len() > 200, "v{version}: {} pairs kept", pairs.len());

        for one_pass in [false, true] {
            if one_pass {
                Store::open(&path).unwrap().compact().unwrap();
            }
            let snapshot = Snapshot::open(&path).unwrap();
            assert_eq!(snapshot.format_version(), version);
            assert_eq!(
                library_pairs(&snapshot, d, min, one_pass).0,
                pairs,
                "v{version}"
            );
            let got: Vec<Vec<_>> = (snapshot.query_many(&queries, d, Some(min)).unwrap())
                .into_iter()
                .map(|found| {
                    (found.into_iter())
                        .map(|m| (m.distance, m.fingerprint, m.id, m.jaccard))
                        .collect()
                })
                .collect();
            assert_eq!(got, expected, "v{version}, one pass: {one_pass}");
        }
    }
}
