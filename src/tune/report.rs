//! What `tune` measured as JSON: the lines `simhashdb tune --json` prints, which Python's
//! `simhashdb.tune` returns as a dict, built once here.

use serde::Serialize;

use super::{Choice, Score, TruthSource, Tuning};

impl Choice {
    /// The arguments of `simhashdb init STORE` that create a store for this choice. A
    /// scheme's name is `seomoz` or `KIND-N-WEIGHT`, which `--scheme KIND --shingle N --weight
    /// WEIGHT` spell.
    pub fn init_args(&self) -> Vec<String> {
        let name = self.scheme.name();
        let mut args = match name.split('-').collect::<Vec<_>>()[..] {
            [kind, n, weight] => ["--scheme", kind, "--shingle", n, "--weight", weight]
                .map(String::from)
                .to_vec(),
            _ => vec!["--scheme".to_string(), name.clone()],
        };
        args.extend([
            "--distance".to_string(),
            self.settings.distance.to_string(),
            "--expected-size".to_string(),
            self.expected_size.to_string(),
        ]);
        if let Some(bytes) = self.sketch_bytes {
            args.extend([
                "--sketch".to_string(),
                "--sketch-bytes".to_string(),
                bytes.to_string(),
            ]);
        }
        args
    }
}

impl Tuning {
    /// Everything measured, as lines of JSON text: first `{"corpus": ...}` (the documents and
    /// where the truth came from), then one object per scheme, use (`"mode"`: `fingerprints`,
    /// `verified` or `sketch`, the last with `sketch_bytes` and the `min_jaccard` it scored
    /// best at) and distance with its score, and last `{"recommend": {"fingerprints_only":
    /// ..., "verified": ..., "sketched": ...}}` (`sketched` null when no sketch size was
    /// measured). `tune --json` prints them.
    pub fn json_lines(&self) -> Vec<String> {
        let mut lines = vec![text(&CorpusLine {
            corpus: self.corpus(),
        })];
        for scheme in &self.schemes {
            let uses = [
                ("fingerprints", &scheme.fingerprints),
                ("verified", &scheme.verified),
            ];
            let sketched = scheme.sketched.iter().map(|scores| ("sketch", scores));
            for (mode, scores) in uses.into_iter().chain(sketched) {
                for score in scores {
                    lines.push(text(&ScoreLine {
                        scheme: scheme.scheme.name(),
                        mode,
                        score,
                    }));
                }
            }
        }
        lines.push(text(&RecommendLine {
            recommend: Recommend {
                fingerprints_only: ChoiceJson::of(&self.fingerprints_only),
                verified: ChoiceJson::of(&self.verified),
                sketched: self.sketched.as_ref().map(ChoiceJson::of),
            },
        }));
        lines
    }

    fn corpus(&self) -> Corpus {
        let gold_agreement = match self.truth {
            TruthSource::Exact => None,
            TruthSource::Gold {
                agreed,
                gold_only,
                text_only,
                ..
            } => Some(GoldAgreement {
                agreed,
                gold_only,
                text_only,
            }),
        };
        Corpus {
            documents: self.corpus_documents,
            measured: self.documents,
            sampled: self.sampled,
            skipped: self.skipped,
            min_jaccard: self.min_jaccard,
            true_pairs: self.true_pairs,
            truth: if gold_agreement.is_some() {
                "gold"
            } else {
                "exact"
            },
            gold_agreement,
        }
    }
}

/// A line's JSON text.
fn text(line: &impl Serialize) -> String {
    serde_json::to_string(line).expect("a tune line serializes")
}

/// The first line: the corpus and where the truth came from.
#[derive(Serialize)]
struct CorpusLine {
    corpus: Corpus,
}

#[derive(Serialize)]
struct Corpus {
    documents: u64,
    measured: u64,
    sampled: bool,
    skipped: u64,
    min_jaccard: f64,
    true_pairs: u64,
    truth: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    gold_agreement: Option<GoldAgreement>,
}

#[derive(Serialize)]
struct GoldAgreement {
    agreed: u64,
    gold_only: u64,
    text_only: u64,
}

/// The last line.
#[derive(Serialize)]
struct RecommendLine<'a> {
    recommend: Recommend<'a>,
}

#[derive(Serialize)]
struct Recommend<'a> {
    fingerprints_only: ChoiceJson<'a>,
    verified: ChoiceJson<'a>,
    sketched: Option<ChoiceJson<'a>>,
}

/// One score: the scheme, the use, and the score's fields.
#[derive(Serialize)]
struct ScoreLine<'a> {
    scheme: String,
    mode: &'static str,
    #[serde(flatten)]
    score: &'a Score,
}

/// A recommendation.
#[derive(Serialize)]
struct ChoiceJson<'a> {
    init_args: Vec<String>,
    distance: u8,
    scheme: String,
    blocks: u8,
    tables: usize,
    disk_bytes_per_document: f64,
    query_micros: f64,
    score: &'a Score,
    #[serde(skip_serializing_if = "Option::is_none")]
    min_jaccard: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    sketch_bytes: Option<u16>,
}

impl<'a> ChoiceJson<'a> {
    fn of(choice: &'a Choice) -> Self {
        ChoiceJson {
            init_args: choice.init_args(),
            distance: choice.distance(),
            scheme: choice.scheme.name(),
            blocks: choice.settings.blocks,
            tables: choice.settings.table_count(),
            disk_bytes_per_document: choice.disk_bytes_per_document().round(),
            query_micros: choice
                .settings
                .estimated_query_micros(choice.expected_size)
                .round(),
            score: &choice.score,
            min_jaccard: choice.min_jaccard,
            sketch_bytes: choice.sketch_bytes,
        }
    }
}
