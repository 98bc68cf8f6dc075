//! `simhashdb tune` against an independent computation: brute-force fingerprint distances, and
//! the truth from a plain re-implementation of word 3-shingle Jaccard over strings.

use std::collections::{BTreeMap, HashSet};
use std::path::Path;

use serde_json::Value;
use simhashdb::Scheme;

use crate::util::{path_str, simhashdb, text};

/// A corpus of families: a base text of random words, and variants that change, drop or add a
/// few words, so pairs fall on both sides of J = 0.8.
fn corpus() -> Vec<(String, String)> {
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let word = |n: u64| format!("w{}", n % 400);
    let mut docs = Vec::new();
    for family in 0..30 {
        let len = 30 + (next() % 60) as usize;
        let base: Vec<String> = (0..len).map(|_| word(next())).collect();
        let variants = 1 + next() % 4;
        for v in 0..=variants {
            let mut words = base.clone();
            for _ in 0..(v * (1 + next() % 3)) {
                let at = (next() % words.len() as u64) as usize;
                match next() % 3 {
                    0 => words[at] = word(next()),
                    1 if words.len() > 5 => {
                        words.remove(at);
                    }
                    _ => words.insert(at, word(next())),
                }
            }
            docs.push((format!("f{family:02}v{v}"), words.join(" ")));
        }
    }
    docs
}

fn write_corpus(dir: &Path, docs: &[(String, String)]) -> std::path::PathBuf {
    let path = dir.join("corpus.jsonl");
    let lines: Vec<String> = docs
        .iter()
        .map(|(id, text)| serde_json::json!({"id": id, "text": text}).to_string())
        .collect();
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    path
}

/// Word 3-shingles as ../shared/eval defines them, over strings.
fn shingles(text: &str) -> HashSet<String> {
    let lower = text.to_lowercase();
    let tokens: Vec<&str> = lower
        .split(|c: char| !c.is_alphanumeric())
        .filter(|t| !t.is_empty())
        .collect();
    if tokens.len() < 3 {
        return HashSet::from([tokens.join(" ")]);
    }
    tokens.windows(3).map(|w| w.join(" ")).collect()
}

/// Every pair (i < j) with its Jaccard, intersection and union.
fn all_pairs(docs: &[(String, String)]) -> Vec<(usize, usize, f64, usize, usize)> {
    let sets: Vec<HashSet<String>> = docs.iter().map(|(_, t)| shingles(t)).collect();
    let mut pairs = Vec::new();
    for i in 0..docs.len() {
        for j in i + 1..docs.len() {
            let inter = sets[i].intersection(&sets[j]).count();
            let union = sets[i].len() + sets[j].len() - inter;
            pairs.push((i, j, inter as f64 / union as f64, inter, union));
        }
    }
    pairs
}

fn tune_json(args: &[&str]) -> Vec<Value> {
    let out = simhashdb(&[&["tune", "--json"], args].concat(), "");
    assert!(out.status.success(), "{}", text(&out.stderr));
    text(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn scores_equal_an_independent_computation() {
    let dir = tempfile::tempdir().unwrap();
    let docs = corpus();
    let path = write_corpus(dir.path(), &docs);
    let pairs = all_pairs(&docs);
    let truth: HashSet<(usize, usize)> = pairs
        .iter()
        .filter(|p| p.2 >= 0.8)
        .map(|p| (p.0, p.1))
        .collect();
    assert!(
        truth.len() > 20,
        "the corpus has near-duplicates: {}",
        truth.len()
    );
    assert!(
        pairs.iter().any(|p| p.2 >= 0.5 && p.2 < 0.8),
        "and pairs just below the threshold"
    );
    let lines = tune_json(&[
        path_str(&path),
        "--schemes",
        "words-2-minhash,words-3-set,seomoz",
    ]);
    assert_eq!(lines[0]["corpus"]["true_pairs"], truth.len());
    assert_eq!(lines[0]["corpus"]["documents"], docs.len());
    let mut checked = 0;
    for name in ["words-2-minhash", "words-3-set", "seomoz"] {
        let scheme = Scheme::from_name(name).unwrap();
        let fps: Vec<u64> = docs.iter().map(|(_, t)| scheme.fingerprint(t)).collect();
        for k in 0..=12u32 {
            let predicted: Vec<(usize, usize)> = pairs
                .iter()
                .filter(|p| (fps[p.0] ^ fps[p.1]).count_ones() <= k)
                .map(|p| (p.0, p.1))
                .collect();
            let tp = predicted.iter().filter(|p| truth.contains(p)).count();
            let verified = predicted
                .iter()
                .filter(|p| pairs.iter().any(|q| (q.0, q.1) == **p && q.2 >= 0.8))
                .count();
            let expect = |pairs: usize, tp: usize| {
                let precision = if pairs == 0 {
                    0.0
                } else {
                    tp as f64 / pairs as f64
                };
                let recall = tp as f64 / truth.len() as f64;
                let f1 = if tp == 0 {
                    0.0
                } else {
                    2.0 * precision * recall / (precision + recall)
                };
                (pairs, tp, precision, recall, f1)
            };
            for (mode, want) in [
                ("fingerprints", expect(predicted.len(), tp)),
                ("verified", expect(verified, verified)),
            ] {
                let line = lines
                    .iter()
                    .find(|l| l["scheme"] == name && l["mode"] == mode && l["distance"] == k)
                    .unwrap_or_else(|| panic!("{name} {mode} {k}"));
                let got = (
                    line["pairs"].as_u64().unwrap() as usize,
                    line["true_positives"].as_u64().unwrap() as usize,
                    line["precision"].as_f64().unwrap(),
                    line["recall"].as_f64().unwrap(),
                    line["f1"].as_f64().unwrap(),
                );
                assert_eq!((got.0, got.1), (want.0, want.1), "{name} {mode} k={k}");
                for (g, w) in [(got.2, want.2), (got.3, want.3), (got.4, want.4)] {
                    assert!(
                        (g - w).abs() < 1e-12,
                        "{name} {mode} k={k}: {got:?} vs {want:?}"
                    );
                }
                let (low, high) = (
                    line["recall_low"].as_f64().unwrap(),
                    line["recall_high"].as_f64().unwrap(),
                );
                assert!(low <= got.3 && got.3 <= high, "{line}");
                checked += 1;
            }
        }
    }
    assert_eq!(checked, 3 * 13 * 2);

    // The recommendation is the best F1 of each use (within the stated tolerance, at a k
    // no larger), and its init arguments are what init takes.
    let last = lines.last().unwrap();
    for (use_, mode) in [
        ("fingerprints_only", "fingerprints"),
        ("verified", "verified"),
    ] {
        let choice = &last["recommend"][use_];
        let best = lines
            .iter()
            .filter(|l| l["mode"] == mode)
            .map(|l| l["f1"].as_f64().unwrap())
            .fold(0.0, f64::max);
        let f1 = choice["score"]["f1"].as_f64().unwrap();
        assert!(
            f1 >= best - simhashdb::tune::Tuning::F1_TOLERANCE,
            "{choice}"
        );
        let args: Vec<&str> = choice["init_args"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a.as_str().unwrap())
            .collect();
        let store = dir.path().join(format!("store-{use_}"));
        let out = simhashdb(&[&["init", path_str(&store)], &args[..]].concat(), "");
        assert!(out.status.success(), "{}", text(&out.stderr));
    }
    assert_eq!(last["recommend"]["verified"]["min_jaccard"], 0.8);
}

/// Verification by sketches: every distance's score equals a model that computes the same
/// estimator (the library's public sketch and estimate) over every pair, at the threshold
/// the line names, and no threshold of the grid scores better.
#[test]
fn sketch_scores_equal_a_model_at_their_best_threshold() {
    let dir = tempfile::tempdir().unwrap();
    let docs = corpus();
    let path = write_corpus(dir.path(), &docs);
    let pairs = all_pairs(&docs);
    let truth: HashSet<(usize, usize)> = pairs
        .iter()
        .filter(|p| p.2 >= 0.8)
        .map(|p| (p.0, p.1))
        .collect();
    let lines = tune_json(&[
        path_str(&path),
        "--schemes",
        "words-2-minhash,seomoz",
        "--sketch-bytes",
        "64,256",
    ]);
    let grid: Vec<f64> = (-10..=5).map(|s| 0.8 + f64::from(s) * 0.01).collect();
    let mut checked = 0;
    for bytes in [64u16, 256] {
        let sketcher = Scheme::default().with_sketch(bytes).unwrap();
        let sketches: Vec<Vec<u8>> = docs
            .iter()
            .map(|(_, t)| sketcher.sketch(t).unwrap())
            .collect();
        let estimate = |a: usize, b: usize| Scheme::estimate_jaccard(&sketches[a], &sketches[b]);
        for name in ["words-2-minhash", "seomoz"] {
            let scheme = Scheme::from_name(name).unwrap();
            let fps: Vec<u64> = docs.iter().map(|(_, t)| scheme.fingerprint(t)).collect();
            for k in 0..=12u32 {
                let model = |t: f64| {
                    let kept: Vec<(usize, usize)> = pairs
                        .iter()
                        .filter(|p| (fps[p.0] ^ fps[p.1]).count_ones() <= k)
                        .filter(|p| estimate(p.0, p.1) >= t)
                        .map(|p| (p.0, p.1))
                        .collect();
                    let tp = kept.iter().filter(|p| truth.contains(p)).count();
                    let (precision, recall) = (
                        if kept.is_empty() {
                            0.0
                        } else {
                            tp as f64 / kept.len() as f64
                        },
                        tp as f64 / truth.len() as f64,
                    );
                    let f1 = if tp == 0 {
                        0.0
                    } else {
                        2.0 * precision * recall / (precision + recall)
                    };
                    (kept.len(), tp, f1)
                };
                let line = lines
                    .iter()
                    .find(|l| {
                        l["scheme"] == name
                            && l["mode"] == "sketch"
                            && l["sketch_bytes"] == bytes
                            && l["distance"] == k
                    })
                    .unwrap_or_else(|| panic!("{name} sketch {bytes} {k}"));
                let t = line["min_jaccard"].as_f64().unwrap();
                assert!(grid.iter().any(|g| (g - t).abs() < 1e-9), "{line}");
                let (kept, tp, f1) = model(t);
                assert_eq!(line["pairs"], kept, "{line}");
                assert_eq!(line["true_positives"], tp, "{line}");
                assert!((line["f1"].as_f64().unwrap() - f1).abs() < 1e-12, "{line}");
                let best = grid.iter().map(|&g| model(g).2).fold(0.0, f64::max);
                assert!(f1 >= best - 1e-12, "{line}: the grid has F1 {best}");
                checked += 1;
            }
        }
    }
    assert_eq!(checked, 2 * 2 * 13);
    assert!(
        lines
            .iter()
            .any(|l| l["mode"] == "sketch" && l["f1"].as_f64().unwrap() > 0.5),
        "the sketches find near-duplicates"
    );

    // The recommendation is within the tolerance of the best sketch score, and its init
    // arguments make a store with sketches of its size.
    let choice = &lines.last().unwrap()["recommend"]["sketched"];
    let best = lines
        .iter()
        .filter(|l| l["mode"] == "sketch")
        .map(|l| l["f1"].as_f64().unwrap())
        .fold(0.0, f64::max);
    assert!(
        choice["score"]["f1"].as_f64().unwrap() >= best - simhashdb::tune::Tuning::F1_TOLERANCE,
        "{choice}"
    );
    let bytes = choice["sketch_bytes"].as_u64().unwrap();
    let args: Vec<&str> = choice["init_args"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    assert!(
        args.windows(2)
            .any(|w| w == ["--sketch-bytes", &bytes.to_string()]),
        "{args:?}"
    );
    let store = dir.path().join("sketched");
    let out = simhashdb(&[&["init", path_str(&store)], &args[..]].concat(), "");
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains(&format!("sketches of {bytes} bytes")),
        "{}",
        text(&out.stderr)
    );

    // Without sketches: no sketch line, no sketch recommendation.
    let lines = tune_json(&[path_str(&path), "--schemes", "seomoz", "--no-sketch"]);
    assert!(lines.iter().all(|l| l["mode"] != "sketch"));
    assert!(lines.last().unwrap()["recommend"]["sketched"].is_null());
}

#[test]
fn gold_pairs_and_computed_truth_agree() {
    let dir = tempfile::tempdir().unwrap();
    let docs = corpus();
    let path = write_corpus(dir.path(), &docs);
    // The eval corpus's format: every pair at J >= 0.5 with its exact counts.
    let gold = dir.path().join("gold.tsv");
    let lines: Vec<String> = all_pairs(&docs)
        .iter()
        .filter(|p| p.2 >= 0.5)
        .map(|p| {
            format!(
                "{}\t{}\t{:.6}\t{}\t{}",
                docs[p.0].0, docs[p.1].0, p.2, p.3, p.4
            )
        })
        .collect();
    std::fs::write(&gold, lines.join("\n") + "\n").unwrap();
    let schemes = ["--schemes", "words-2-minhash,chars-5-set"];
    let computed = tune_json(&[&[path_str(&path)], &schemes[..]].concat());
    let given = tune_json(&[&[path_str(&path), "--gold", path_str(&gold)], &schemes[..]].concat());
    assert_eq!(given[0]["corpus"]["truth"], "gold");
    let agreement = &given[0]["corpus"]["gold_agreement"];
    assert_eq!(agreement["gold_only"], 0, "{agreement}");
    assert_eq!(agreement["text_only"], 0, "{agreement}");
    assert_eq!(computed[1..], given[1..]);

    // At another threshold the gold's counts decide, and still agree.
    let computed = tune_json(&[&[path_str(&path), "--min-jaccard", "0.6"], &schemes[..]].concat());
    let given = tune_json(
        &[
            &[
                path_str(&path),
                "--min-jaccard",
                "0.6",
                "--gold",
                path_str(&gold),
            ],
            &schemes[..],
        ]
        .concat(),
    );
    assert_eq!(
        computed[0]["corpus"]["true_pairs"],
        given[0]["corpus"]["true_pairs"]
    );
    assert_eq!(computed[1..], given[1..]);
}

#[test]
fn the_text_report_says_what_the_json_says() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_corpus(dir.path(), &corpus());
    let args = [
        path_str(&path),
        "--schemes",
        "words-2-minhash,seomoz",
        "--sketch-bytes",
        "128",
    ];
    let json = tune_json(&args);
    let out = simhashdb(&[&["tune"], &args[..]].concat(), "");
    assert!(out.status.success(), "{}", text(&out.stderr));
    let report = text(&out.stdout);
    let corpus = &json[0]["corpus"];
    assert!(
        report.starts_with(&format!(
            "Measured on all {} documents.\n",
            corpus["measured"]
        )),
        "{report}"
    );
    assert!(
        report.contains(&format!("{} true pairs", corpus["true_pairs"])),
        "{report}"
    );
    // Each use's recommended init command, and the audit that goes with it.
    let recommend = &json.last().unwrap()["recommend"];
    let sketch_min = &recommend["sketched"]["min_jaccard"];
    let verified_min = &corpus["min_jaccard"];
    for (use_, audit) in [
        ("fingerprints_only", "\n".to_string()),
        ("sketched", format!(" --min-jaccard {sketch_min}\n")),
        (
            "verified",
            format!(
                " --verify-text {} --min-jaccard {verified_min}\n",
                path_str(&path)
            ),
        ),
    ] {
        let choice = &recommend[use_];
        let init: Vec<&str> = choice["init_args"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a.as_str().unwrap())
            .collect();
        let line = format!("  simhashdb init STORE {}\n", init.join(" "));
        assert!(report.contains(&line), "{use_}: {line} not in\n{report}");
        let audit = format!(
            "  simhashdb audit STORE --distance {}{audit}",
            choice["distance"]
        );
        assert!(report.contains(&audit), "{use_}: {audit} not in\n{report}");
    }
    // One row per scheme, the best first by F1 from fingerprints alone.
    let rows: Vec<&str> = report
        .lines()
        .filter(|l| l.starts_with("words-2-minhash ") || l.starts_with("seomoz "))
        .collect();
    assert_eq!(rows.len(), 2, "{report}");
}

#[test]
fn a_sample_is_reproducible_and_independent_of_input_order() {
    let dir = tempfile::tempdir().unwrap();
    let mut docs = corpus();
    let path = write_corpus(dir.path(), &docs);
    docs.reverse();
    std::fs::create_dir(dir.path().join("reversed")).unwrap();
    let reversed = write_corpus(&dir.path().join("reversed"), &docs);
    let args = ["--sample", "70", "--schemes", "words-2-minhash"];
    let a = tune_json(&[&[path_str(&path)], &args[..]].concat());
    let b = tune_json(&[&[path_str(&reversed)], &args[..]].concat());
    assert_eq!(a, b);
    assert_eq!(a[0]["corpus"]["measured"], 70);
    assert_eq!(a[0]["corpus"]["sampled"], true);
    assert_eq!(a[0]["corpus"]["documents"], docs.len());
    let other_seed = tune_json(&[&[path_str(&path), "--seed", "7"], &args[..]].concat());
    assert_ne!(a[0], other_seed[0], "another seed, another sample");
}

#[test]
fn writes_the_plot_as_svg_or_png() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_corpus(dir.path(), &corpus());
    let svg = dir.path().join("tune.svg");
    let png = dir.path().join("tune.png");
    for plot in [&svg, &png] {
        let out = simhashdb(
            &[
                "tune",
                path_str(&path),
                "--schemes",
                "words-2-minhash,seomoz",
                "--plot",
                path_str(plot),
            ],
            "",
        );
        assert!(out.status.success(), "{}", text(&out.stderr));
        assert!(text(&out.stdout).contains("simhashdb init STORE --scheme"));
    }
    let drawn = std::fs::read_to_string(&svg).unwrap();
    assert!(
        drawn.starts_with("<svg") && drawn.contains("words-2-minhash"),
        "{drawn:.200}"
    );
    assert!(std::fs::read(&png).unwrap().starts_with(b"\x89PNG"));
    let names: BTreeMap<_, _> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| (e.unwrap().file_name(), ()))
        .collect();
    assert_eq!(names.len(), 3, "no temporary file left: {names:?}");
}

#[test]
fn bad_inputs_get_clear_errors() {
    let dir = tempfile::tempdir().unwrap();
    let corpus_path = write_corpus(dir.path(), &corpus());
    let corpus_arg = path_str(&corpus_path);
    let fails = |args: &[&str], code: i32, wanted: &[&str]| {
        let out = simhashdb(&[&["tune"], args].concat(), "");
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(code), "{args:?}: {err}");
        for w in wanted {
            assert!(err.contains(w), "{args:?}: {err:?} lacks {w:?}");
        }
        assert!(out.stdout.is_empty());
    };
    let empty = dir.path().join("empty.jsonl");
    std::fs::write(&empty, "").unwrap();
    fails(
        &[path_str(&empty)],
        1,
        &["holds no document", "empty.jsonl"],
    );
    let gold = dir.path().join("gold.tsv");
    std::fs::write(&gold, "f00v0\tf00v1\t0.9\nf00v0\tnobody\t0.95\n").unwrap();
    fails(
        &[corpus_arg, "--gold", path_str(&gold)],
        1,
        &["gold.tsv:2", "\"nobody\"", "not in the corpus"],
    );
    std::fs::write(&gold, "f00v0 f00v1 high\n").unwrap();
    fails(
        &[corpus_arg, "--gold", path_str(&gold)],
        1,
        &["gold.tsv:1", "\"high\""],
    );
    for j in ["0", "1.5", "-0.2", "NaN"] {
        fails(&[corpus_arg, "--min-jaccard", j], 2, &["(0, 1]"]);
    }
    fails(
        &[corpus_arg, "--plot", "x.pdf"],
        2,
        &["x.pdf", ".svg or .png"],
    );
    fails(
        &[corpus_arg, "--schemes", "words-9-blend"],
        2,
        &["words-9-blend"],
    );
    fails(&[corpus_arg, "--sample", "0"], 2, &["--sample"]);
    fails(&[corpus_arg, "--max-distance", "40"], 2, &["40"]);
    fails(
        &[corpus_arg, "--sketch-bytes", "63"],
        2,
        &["--sketch-bytes", "63"],
    );
    fails(&[corpus_arg, "--sketch-bytes", "128,2048"], 2, &["2048"]);
    fails(
        &[corpus_arg, "--sketch-bytes", "128", "--no-sketch"],
        2,
        &["--no-sketch"],
    );
    fails(&["missing.jsonl"], 1, &["missing.jsonl"]);
    let nowhere = dir.path().join("no-such-dir").join("plot.svg");
    fails(
        &[
            corpus_arg,
            "--schemes",
            "seomoz",
            "--plot",
            path_str(&nowhere),
        ],
        1,
        &["plot.svg"],
    );
    let tsv = dir.path().join("fps.tsv");
    std::fs::write(&tsv, "a\t0123456789abcdef\n").unwrap();
    fails(&[path_str(&tsv)], 1, &["fps.tsv", "fingerprints, not text"]);
    let bad = dir.path().join("bad.jsonl");
    std::fs::write(
        &bad,
        "{\"id\": \"a\", \"text\": \"one two three\"}\n{\"id\": \"b\"}\n",
    )
    .unwrap();
    fails(&[path_str(&bad)], 1, &["bad.jsonl:2", "\"text\""]);
    let far = dir.path().join("far.jsonl");
    std::fs::write(&far, "{\"id\": \"a\", \"text\": \"one two three\"}\n{\"id\": \"b\", \"text\": \"four five six\"}\n").unwrap();
    fails(&[path_str(&far)], 1, &["no pair at Jaccard >= 0.8"]);
    let blank = dir.path().join("blank.jsonl");
    std::fs::write(&blank, "{\"id\": \"a\", \"text\": \"--- !!!\"}\n").unwrap();
    fails(&[path_str(&blank)], 1, &["\"a\"", "no token"]);
}
