//! Dedup on ingest against a brute-force greedy model: stored matches, matches within the
//! input, copies, documents just outside the distance, ties, skew; the library, the CLI and
//! its files.

use std::collections::BTreeMap;
use std::path::Path;

use proptest::prelude::*;
use serde_json::{json, Value};
use simhashdb::{
    Batch, DedupOptions, InsertOptions, ReadOptions, Settings, Snapshot, Source, Store, Verdict,
};

use crate::engine::{batches, fingerprint, settings};
use crate::util::{dedup_batch, path_str, simhashdb, simhashdb_bytes, text};

/// A stored document: (id, fingerprint, batch).
pub type Stored = (String, u64, u64);

/// A store's batches as a verdict names them: number -> (label, commit time).
pub type Batches = BTreeMap<u64, (Option<String>, String)>;

/// The batches of the store at `path`.
pub fn batches_of(path: &Path) -> Batches {
    Snapshot::open(path)
        .unwrap()
        .batches()
        .into_iter()
        .map(|b| (b.batch, (b.label, b.committed_utc)))
        .collect()
}

/// What greedy dedup decides for each input document, by brute force, as the JSON form of a
/// verdict: a duplicate of the nearest stored document or earlier kept input document within
/// `d` bits (ties: stored first, then the earliest batch, then the smallest id), else kept;
/// a stored match named with its batch, its label and commit time from `batches`.
pub fn greedy_model(
    stored: &[Stored],
    batches: &Batches,
    input: &[(String, u64)],
    d: u32,
) -> Vec<Value> {
    let mut kept: Vec<(String, u64)> = Vec::new();
    let mut out = Vec::new();
    for (id, fp) in input {
        let dist = |other: u64| (other ^ fp).count_ones();
        let best_stored = stored
            .iter()
            .filter(|s| dist(s.1) <= d)
            .min_by_key(|s| (dist(s.1), s.2, s.0.clone()));
        let best_input = kept
            .iter()
            .filter(|k| dist(k.1) <= d)
            .min_by_key(|k| (dist(k.1), k.0.clone()));
        let verdict = match (best_stored, best_input) {
            (Some(s), Some(k)) if dist(k.1) < dist(s.1) => duplicate(id, &k.0, dist(k.1), None),
            (Some(s), _) => duplicate(id, &s.0, dist(s.1), Some((s.2, &batches[&s.2]))),
            (None, Some(k)) => duplicate(id, &k.0, dist(k.1), None),
            (None, None) => {
                kept.push((id.clone(), *fp));
                json!({"id": id, "kept": true, "duplicate_of": null, "distance": null,
                       "stored": null, "duplicate_batch": null, "duplicate_label": null,
                       "duplicate_committed_utc": null})
            }
        };
        out.push(verdict);
    }
    out
}

/// A duplicate's verdict; `stored_by` the batch of a stored match.
fn duplicate(
    id: &str,
    of: &str,
    distance: u32,
    stored_by: Option<(u64, &(Option<String>, String))>,
) -> Value {
    json!({"id": id, "kept": false, "duplicate_of": of, "distance": distance,
           "stored": stored_by.is_some(), "duplicate_batch": stored_by.map(|b| b.0),
           "duplicate_label": stored_by.and_then(|b| b.1 .0.clone()),
           "duplicate_committed_utc": stored_by.map(|b| b.1 .1.clone())})
}

fn as_json(verdicts: &[Verdict]) -> Vec<Value> {
    verdicts
        .iter()
        .map(|v| serde_json::to_value(v).unwrap())
        .collect()
}

/// Every live document of the store at `path`, sorted.
pub fn live(path: &Path) -> Vec<Stored> {
    let mut out = Vec::new();
    Snapshot::open(path)
        .unwrap()
        .for_each_live_document(|id, fp, batch| out.push((id.to_string(), fp, batch)))
        .unwrap();
    out.sort();
    out
}

/// The store after inserting the kept documents of `input` (a later id replaces an earlier).
pub fn after_insert(
    stored: &[Stored],
    input: &[(String, u64)],
    verdicts: &[Value],
) -> Vec<(String, u64)> {
    let mut model: BTreeMap<String, u64> = stored.iter().map(|s| (s.0.clone(), s.1)).collect();
    for ((id, fp), v) in input.iter().zip(verdicts) {
        if v["kept"] == json!(true) {
            model.insert(id.clone(), *fp);
        }
    }
    model.into_iter().collect()
}

/// `dedup --duplicates`' lines for the duplicates among `verdicts` (JSON, unverified).
pub fn duplicate_lines(verdicts: &[Value]) -> String {
    let fields = [
        "id",
        "duplicate_of",
        "distance",
        "duplicate_batch",
        "duplicate_label",
        "duplicate_committed_utc",
    ];
    let line = |v: &Value| {
        let field = |name: &str| match &v[name] {
            Value::Null => String::new(),
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        fields.map(field).join("\t") + "\n"
    };
    verdicts
        .iter()
        .filter(|v| v["kept"] == json!(false))
        .map(line)
        .collect()
}

/// The columns `dedup --duplicates` names batch `batch` of the store at `path` with.
pub fn stored_by(path: &Path, batch: u64) -> String {
    let (label, committed) = &batches_of(path)[&batch];
    format!(
        "{batch}\t{}\t{committed}",
        label.as_deref().unwrap_or_default()
    )
}

pub fn without_batches(docs: Vec<Stored>) -> Vec<(String, u64)> {
    docs.into_iter().map(|(id, fp, _)| (id, fp)).collect()
}

fn batch_of(docs: &[(String, u64)]) -> Batch {
    let mut batch = Batch::new();
    for (id, fp) in docs {
        batch.push(id, *fp).unwrap();
    }
    batch
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn dedup_equals_the_greedy_model(
        settings in settings(),
        stored_batches in batches(),
        input in proptest::collection::vec((0u8..60, fingerprint()), 0..60),
        distance_pick in 0u32..16,
    ) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s");
        let mut store = Store::create(&path, settings).unwrap();
        for docs in &stored_batches {
            let mut batch = Batch::new();
            for (id, fp) in docs {
                batch.push(&format!("d{id}"), *fp).unwrap();
            }
            store.insert(&batch, None).unwrap();
        }
        // Input ids overlap the stored ones ("d0".."d39") and repeat within the input.
        let input: Vec<(String, u64)> = input
            .into_iter()
            .map(|(id, fp)| (format!("d{}", id), fp))
            .collect();
        let distance = distance_pick % (u32::from(settings.distance) + 1);
        let stored = live(&path);
        let expected = greedy_model(&stored, &batches_of(&path), &input, distance);

        let snapshot = store.snapshot().unwrap();
        let got = dedup_batch(&snapshot, &batch_of(&input), distance, None).unwrap();
        prop_assert_eq!(as_json(&got), expected.clone());

        let kept = expected.iter().filter(|v| v["kept"] == json!(true)).count() as u64;
        let of_stored = expected.iter().filter(|v| v["stored"] == json!(true)).count() as u64;
        let options = DedupOptions {
            distance: Some(i64::from(distance)),
            ..DedupOptions::default()
        };
        let source = Source::Documents(batch_of(&input));
        let summary = snapshot.dedup_from(source, &options, &ReadOptions::default(), &()).unwrap();
        prop_assert_eq!(summary.read, input.len() as u64);
        prop_assert_eq!(summary.kept, kept);
        prop_assert_eq!(summary.duplicates_of_stored, of_stored);
        prop_assert_eq!(summary.duplicates_within_input, input.len() as u64 - kept - of_stored);
        drop(snapshot);

        // Inserting leaves exactly the stored documents plus the kept ones.
        let options = DedupOptions {
            distance: Some(i64::from(distance)),
            insert: Some(InsertOptions { label: Some("day".into()), ..InsertOptions::default() }),
            ..DedupOptions::default()
        };
        let source = Source::Documents(batch_of(&input));
        let answer = store.dedup_from(source, &options, &ReadOptions::default(), &()).unwrap();
        prop_assert_eq!(as_json(answer.results.as_ref().unwrap()), expected.clone());
        let summary = answer;
        prop_assert_eq!(summary.inserted + summary.replaced + summary.superseded, kept);
        prop_assert_eq!(summary.batch.is_some(), kept > 0);
        prop_assert_eq!(without_batches(live(&path)), after_insert(&stored, &input, &expected));
    }
}

#[test]
fn distances_above_k_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s");
    let store = Store::create(&path, Settings::default()).unwrap();
    let snapshot = store.snapshot().unwrap();
    let err = dedup_batch(&snapshot, &Batch::new(), 4, None)
        .err()
        .unwrap()
        .to_string();
    assert!(err.contains('3'), "{err}");
}

/// A skewed store and input: 2,000 stored copies of one page over 3 batches, the input
/// 1,500 more copies of it, 700 copies of a new page and its near copies, and pages just
/// outside the distance.
pub fn skewed(dir: &Path) -> (std::path::PathBuf, Vec<Stored>, Vec<(String, u64)>) {
    let path = dir.join("s");
    let mut store = Store::create(&path, Settings::default()).unwrap();
    let page = 0x0123_4567_89ab_cdefu64;
    for b in 0..3 {
        let mut batch = Batch::new();
        for i in 0..700 {
            if b * 700 + i < 2_000 {
                batch
                    .push(&format!("s{:05}", 2_000 - (b * 700 + i)), page)
                    .unwrap();
            }
        }
        batch
            .push(&format!("near{b}"), page ^ (1 << (b + 3)))
            .unwrap();
        // The second batch has a label, which the verdicts name.
        store.insert(&batch, (b == 1).then_some("crawl 2")).unwrap();
    }
    let new_page = 0xfedc_ba98_7654_3210u64;
    let mut input = Vec::new();
    for i in 0..3_000u64 {
        let fp = match i % 6 {
            0..=2 => page,
            3 => new_page,
            4 => new_page ^ (1 << (i % 64)),
            // Four bits from the page: just outside K = 3, and near each other.
            _ => page ^ (0xf << (4 * (i % 15))),
        };
        input.push((format!("in{:05}", (i * 7919) % 3_001), fp));
    }
    (path.clone(), live(&path), input)
}

#[test]
fn skewed_inputs_and_stores_equal_the_model_in_the_library_and_the_cli() {
    let dir = tempfile::tempdir().unwrap();
    let (path, stored, input) = skewed(dir.path());
    let expected = greedy_model(&stored, &batches_of(&path), &input, 3);
    let snapshot = Snapshot::open(&path).unwrap();
    assert_eq!(
        as_json(&dedup_batch(&snapshot, &batch_of(&input), 3, None).unwrap()),
        expected
    );
    drop(snapshot);

    // The CLI: JSON Lines with extra fields, written back byte for byte.
    let mut lines = Vec::new();
    for (n, (id, fp)) in input.iter().enumerate() {
        let line = format!(
            "{{\"id\":\"{id}\",\"fingerprint\":\"{fp:016x}\",\"url\":\"http://x/{n}\",\"n\":[{n}]}}"
        );
        let end = if n % 3 == 0 { "\r\n" } else { "\n" };
        lines.push(format!("{line}{end}"));
    }
    let jsonl = dir.path().join("in.jsonl");
    std::fs::write(&jsonl, lines.concat()).unwrap();
    let (kept, dups) = (dir.path().join("kept.jsonl"), dir.path().join("dups.tsv"));
    let out = simhashdb(
        &[
            "dedup",
            path_str(&path),
            path_str(&jsonl),
            "--output",
            path_str(&kept),
            "--duplicates",
            path_str(&dups),
            "--json",
        ],
        "",
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let expected_kept: String = lines
        .iter()
        .zip(&expected)
        .filter(|(_, v)| v["kept"] == json!(true))
        .map(|(l, _)| l.as_str())
        .collect();
    assert_eq!(std::fs::read_to_string(&kept).unwrap(), expected_kept);
    let expected_dups = duplicate_lines(&expected);
    assert_eq!(std::fs::read_to_string(&dups).unwrap(), expected_dups);
    // The stored page's copies name the earliest batch's smallest id.
    assert!(
        expected_dups.contains("\ts01301\t0\t1\t\t20"),
        "{}",
        &expected_dups[..200]
    );
    let summary: Value = serde_json::from_slice(&out.stdout).unwrap();
    let kept_count = expected.iter().filter(|v| v["kept"] == json!(true)).count();
    assert_eq!(summary["kept"], json!(kept_count));
    assert_eq!(summary["read"], json!(3_000));
    assert_eq!(summary["inserted"], json!(0));
    assert_eq!(summary["batch"], Value::Null);

    // --insert: the same answer, and the store holds exactly stored + kept.
    let out = simhashdb(
        &[
            "dedup",
            path_str(&path),
            path_str(&jsonl),
            "--insert",
            "--label",
            "day 2",
            "--json",
        ],
        "",
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), expected_kept);
    let summary: Value = serde_json::from_slice(&out.stderr).unwrap();
    assert_eq!(summary["inserted"], json!(kept_count));
    assert_eq!(summary["batch"], json!(4));
    assert_eq!(
        without_batches(live(&path)),
        after_insert(&stored, &input, &expected)
    );
    // Run again, everything is a duplicate of what was just stored.
    let out = simhashdb(&["dedup", path_str(&path), path_str(&jsonl), "--json"], "");
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(out.stdout.is_empty());
    let summary: Value = serde_json::from_slice(&out.stderr).unwrap();
    assert_eq!(summary["duplicates_of_stored"], json!(3_000));
}

#[test]
fn tsv_text_and_stdin_pass_through() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s");
    let out = simhashdb(&["init", path_str(&path)], "");
    assert!(out.status.success());
    let out = simhashdb(&["insert", path_str(&path)], "old\t00000000000000ff\n");
    assert!(out.status.success());
    // TSV from stdin, an exported third column and a last line without its line end.
    let tsv = "a\t00000000000000fe\t7\nb\tffff000000000000\n\nc\tffff000000000001";
    let out = simhashdb(
        &[
            "dedup",
            path_str(&path),
            "--duplicates",
            "-",
            "--output",
            path_str(&dir.path().join("k.tsv")),
        ],
        tsv,
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let first = stored_by(&path, 1);
    assert_eq!(
        text(&out.stdout),
        format!("a\told\t1\t{first}\nc\tb\t1\t\t\t\n")
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("k.tsv")).unwrap(),
        "b\tffff000000000000\n"
    );
    // The insert counts as `insert` does: a new id, a replaced one, one superseded in input.
    let day = "old\tffff0000ffff0000\nx\t0x1234\nx\tfedc000000000000\n";
    let out = simhashdb(
        &[
            "dedup",
            path_str(&path),
            "--insert",
            "--json",
            "--output",
            path_str(&dir.path().join("k2")),
        ],
        day,
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let summary: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        (
            &summary["kept"],
            &summary["inserted"],
            &summary["replaced"],
            &summary["superseded"]
        ),
        (&json!(3), &json!(1), &json!(1), &json!(1)),
        "{summary}"
    );
    // Text files: the kept ids.
    let docs = dir.path().join("docs");
    std::fs::create_dir(&docs).unwrap();
    std::fs::write(
        docs.join("1.txt"),
        "the quick brown fox jumps over the lazy dog",
    )
    .unwrap();
    std::fs::write(
        docs.join("2.txt"),
        "the quick brown fox jumps over the lazy dog",
    )
    .unwrap();
    std::fs::write(
        docs.join("3.txt"),
        "an entirely different page about something else",
    )
    .unwrap();
    let out = simhashdb(&["dedup", path_str(&path), path_str(&docs)], "");
    assert!(out.status.success(), "{}", text(&out.stderr));
    let d = path_str(&docs);
    assert_eq!(text(&out.stdout), format!("{d}/1.txt\n{d}/3.txt\n"));
}

#[test]
fn bad_input_inserts_nothing_and_leaves_no_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s");
    assert!(simhashdb(&["init", path_str(&path)], "").status.success());
    // The lock file holds the last writer's pid; everything else must stay as it was.
    let tree = |path: &Path| {
        let mut tree = crate::util::tree(path);
        tree.remove("LOCK");
        tree
    };
    let before = tree(&path);
    let input = dir.path().join("in.tsv");
    std::fs::write(&input, "a\t01\nb\tnot-a-fingerprint\nc\t0x0fff\n").unwrap();
    let (kept, dups) = (dir.path().join("kept.tsv"), dir.path().join("dups.tsv"));
    let args = [
        "dedup",
        path_str(&path),
        path_str(&input),
        "--insert",
        "--output",
        path_str(&kept),
        "--duplicates",
        path_str(&dups),
    ];
    let out = simhashdb(&args, "");
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let err = text(&out.stderr);
    assert!(err.contains(&format!("{}:2", input.display())), "{err}");
    assert!(err.contains("nothing was inserted"), "{err}");
    assert!(!kept.exists() && !dups.exists());
    assert_eq!(tree(&path), before, "the store is unchanged");
    let leftovers: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert_eq!(
        leftovers.len(),
        2,
        "no temporary file is left: {leftovers:?}"
    );
    // Nor of a Parquet list of the duplicates.
    let parquet = dir.path().join("dups.parquet");
    let mut to_parquet = args;
    to_parquet[7] = path_str(&parquet);
    let out = simhashdb(&to_parquet, "");
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 2);
    assert_eq!(tree(&path), before, "the store is unchanged");
    // Skipped with --skip-invalid, and counted.
    let mut skip = args.to_vec();
    skip.extend(["--skip-invalid", "--json"]);
    let out = simhashdb(&skip, "");
    assert!(out.status.success(), "{}", text(&out.stderr));
    let summary: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(summary["skipped"], json!(1));
    assert_eq!(summary["kept"], json!(2));
    assert_eq!(
        std::fs::read_to_string(&kept).unwrap(),
        "a\t01\nc\t0x0fff\n"
    );
    assert!(
        text(&out.stderr).contains("in.tsv:2"),
        "{}",
        text(&out.stderr)
    );

    // Usage errors.
    for (args, says) in [
        (vec!["--distance", "4"], "distance"),
        (vec!["--label", "x"], "--insert"),
        (vec!["--duplicates", "-"], "stdout"),
        (vec!["--wait", "soon", "--insert"], "--wait"),
    ] {
        let mut all = vec!["dedup", path_str(&path), path_str(&input)];
        all.extend(args.iter());
        let out = simhashdb(&all, "");
        assert_eq!(
            out.status.code(),
            Some(2),
            "{args:?}: {}",
            text(&out.stderr)
        );
        assert!(
            text(&out.stderr).contains(says),
            "{args:?}: {}",
            text(&out.stderr)
        );
    }
    let out = simhashdb(
        &[
            "dedup",
            path_str(&dir.path().join("nope")),
            path_str(&input),
        ],
        "",
    );
    assert!(!out.status.success());
    assert!(text(&out.stderr).contains("nope"), "{}", text(&out.stderr));
    let out = simhashdb(
        &[
            "dedup",
            path_str(&path),
            path_str(&dir.path().join("missing.tsv")),
        ],
        "",
    );
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("missing.tsv"),
        "{}",
        text(&out.stderr)
    );
    // Outputs that cannot be written fail before any work, naming the path.
    for (args, says) in [
        (
            vec!["--output", "same", "--duplicates", "same"],
            "same file",
        ),
        (vec!["--output", path_str(dir.path())], "directory"),
        (
            vec!["--output", path_str(&dir.path().join("no/such/dir/out"))],
            "no/such/dir",
        ),
    ] {
        let mut all = vec!["dedup", path_str(&path), path_str(&input), "--skip-invalid"];
        all.extend(args.iter());
        let out = simhashdb(&all, "");
        assert_eq!(
            out.status.code(),
            Some(1),
            "{args:?}: {}",
            text(&out.stderr)
        );
        assert!(
            text(&out.stderr).contains(says),
            "{args:?}: {}",
            text(&out.stderr)
        );
    }
    // Names that do not fit the kept records (TSV lines, written uncompressed): usage; an
    // output may not replace an input.
    for (output, code, says) in [
        (
            "kept.jsonl",
            2,
            "kept.jsonl names jsonl, but the kept records are TSV lines, as the input's are: \
             give the output a name that fits them",
        ),
        (
            "kept.tsv.gz",
            2,
            "kept.tsv.gz names a compressed file, and the kept records are written \
             uncompressed (TSV lines): name it without",
        ),
        (path_str(&input), 1, "is an input"),
    ] {
        let out = simhashdb(
            &[
                "dedup",
                path_str(&path),
                path_str(&input),
                "--skip-invalid",
                "--output",
                output,
            ],
            "",
        );
        assert_eq!(out.status.code(), Some(code), "{}", text(&out.stderr));
        assert!(text(&out.stderr).contains(says), "{}", text(&out.stderr));
    }
    assert_eq!(
        std::fs::read_to_string(&input).unwrap(),
        "a\t01\nb\tnot-a-fingerprint\nc\t0x0fff\n"
    );
    // Parquet input with the kept rows to stdout is a usage error.
    let out = simhashdb(&["dedup", path_str(&path), "x.parquet"], "");
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    // JSON Lines then TSV: one output holds one form.
    let jsonl = dir.path().join("in.jsonl");
    std::fs::write(&jsonl, "{\"id\": \"j\", \"fingerprint\": 5}\n").unwrap();
    let out = simhashdb(
        &[
            "dedup",
            path_str(&path),
            path_str(&jsonl),
            path_str(&input),
            "--skip-invalid",
            "--output",
            path_str(&dir.path().join("mixed")),
        ],
        "",
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("JSON Lines"),
        "{}",
        text(&out.stderr)
    );
    assert!(!dir.path().join("mixed").exists());
    // Mixed forms: lines, then text files.
    let docs = dir.path().join("docs");
    std::fs::create_dir(&docs).unwrap();
    std::fs::write(docs.join("1.txt"), "words words words").unwrap();
    let out = simhashdb(
        &[
            "dedup",
            path_str(&path),
            path_str(&input),
            path_str(&docs),
            "--skip-invalid",
            "--output",
            path_str(&dir.path().join("mixed")),
        ],
        "",
    );
    assert!(!out.status.success());
    assert!(text(&out.stderr).contains("1.txt"), "{}", text(&out.stderr));
    assert!(!dir.path().join("mixed").exists());
}

#[cfg(feature = "parquet")]
#[test]
fn parquet_rows_pass_through_with_every_column() {
    use arrow_array::{ArrayRef, Float64Array, Int64Array, RecordBatch, StringArray};
    use std::sync::Arc;

    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s");
    assert!(simhashdb(&["init", path_str(&path)], "").status.success());
    assert!(
        simhashdb(&["insert", path_str(&path)], "old\t00000000000000ff\n")
            .status
            .success()
    );
    let ids = ["a", "b", "c", "d"];
    let fps: [i64; 4] = [0xfe, 0x7fff_0000_0000_0000, 0xff, 0x7fff_0000_0000_0001];
    let batch = RecordBatch::try_from_iter([
        ("id", Arc::new(StringArray::from(ids.to_vec())) as ArrayRef),
        (
            "fingerprint",
            Arc::new(Int64Array::from(fps.to_vec())) as ArrayRef,
        ),
        (
            "score",
            Arc::new(Float64Array::from(vec![0.5, 1.5, 2.5, 3.5])) as ArrayRef,
        ),
        (
            "url",
            Arc::new(StringArray::from(vec![
                Some("u1"),
                None,
                Some("u3"),
                Some("u4"),
            ])) as ArrayRef,
        ),
    ])
    .unwrap();
    let input = dir.path().join("in.parquet");
    let mut writer = parquet::arrow::ArrowWriter::try_new(
        std::fs::File::create(&input).unwrap(),
        batch.schema(),
        None,
    )
    .unwrap();
    writer.write(&batch).unwrap();
    writer.close().unwrap();

    // Parquet needs an output file.
    let out = simhashdb(&["dedup", path_str(&path), path_str(&input)], "");
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("--output FILE"),
        "{}",
        text(&out.stderr)
    );

    // From stdin, where the CLI cannot tell before reading, the library refuses it.
    let out = simhashdb_bytes(&["dedup", path_str(&path)], &std::fs::read(&input).unwrap());
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("<stdin>: the kept rows of a Parquet input are a Parquet file"),
        "{}",
        text(&out.stderr)
    );

    let kept = dir.path().join("kept.parquet");
    let out = simhashdb(
        &[
            "dedup",
            path_str(&path),
            path_str(&input),
            "--output",
            path_str(&kept),
            "--duplicates",
            "-",
        ],
        "",
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let first = stored_by(&path, 1);
    assert_eq!(
        text(&out.stdout),
        format!("a\told\t1\t{first}\nc\told\t0\t{first}\nd\tb\t1\t\t\t\n")
    );
    let file = std::fs::File::open(&kept).unwrap();
    let reader = parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(file)
        .unwrap()
        .build()
        .unwrap();
    let rows: Vec<RecordBatch> = reader.map(Result::unwrap).collect();
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].schema().fields(), batch.schema().fields());
    assert_eq!(rows[0], batch.slice(1, 1));

    // A Parquet input of no rows keeps none: a Parquet file of its schema and no rows.
    let empty = dir.path().join("empty.parquet");
    let mut writer = parquet::arrow::ArrowWriter::try_new(
        std::fs::File::create(&empty).unwrap(),
        batch.schema(),
        None,
    )
    .unwrap();
    writer.write(&batch.slice(0, 0)).unwrap();
    writer.close().unwrap();
    let args = [
        "dedup",
        path_str(&path),
        path_str(&empty),
        "--output",
        path_str(&kept),
    ];
    let out = simhashdb(&args, "");
    assert!(out.status.success(), "{}", text(&out.stderr));
    let file = std::fs::File::open(&kept).unwrap();
    let builder =
        parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(file).unwrap();
    assert_eq!(builder.schema().fields(), batch.schema().fields());
    assert_eq!(builder.metadata().file_metadata().num_rows(), 0);
}

#[cfg(unix)]
#[test]
fn outputs_to_pipes_and_devices_are_written_in_place() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s");
    assert!(simhashdb(&["init", path_str(&path)], "").status.success());
    assert!(
        simhashdb(&["insert", path_str(&path)], "old\t00000000000000ff\n")
            .status
            .success()
    );
    let fifo = dir.path().join("dups.fifo");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::read_to_string(fifo).unwrap())
    };
    // A file renamed onto the pipe (or onto /dev/null) would replace it.
    let args = [
        "dedup",
        path_str(&path),
        "--duplicates",
        path_str(&fifo),
        "--output",
        "/dev/null",
    ];
    let out = simhashdb(&args, "a\t00000000000000fe\nb\t0x1234\n");
    assert!(out.status.success(), "{}", text(&out.stderr));
    use std::os::unix::fs::FileTypeExt;
    assert!(std::fs::metadata(&fifo).unwrap().file_type().is_fifo());
    assert_eq!(
        reader.join().unwrap(),
        format!("a\told\t1\t{}\n", stored_by(&path, 1))
    );
    assert!(std::fs::metadata("/dev/null")
        .unwrap()
        .file_type()
        .is_char_device());
}
