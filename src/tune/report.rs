//! What `tune` measured, as the text `simhashdb tune` prints and as the JSON lines
//! `tune --json` prints (which Python's `simhashdb.tune` returns as a dict), built once here.

use std::io::Write;

use serde::Serialize;

use super::{Choice, Score, TruthSource, Tuning};

impl Choice {
    /// The arguments of `simhashdb init STORE` that create a store for this choice. A
    /// scheme's name is `seomoz` or `KIND-N-WEIGHT`, which `--scheme KIND --shingle N --weight
    /// WEIGHT` spell.
    pub(crate) fn init_args(&self) -> Vec<String> {
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
    /// How much F1 a smaller distance may give up to be chosen over the best: a smaller K
    /// is fewer tables, less disk and faster queries, and F1 differences this small are
    /// within the noise of a sample.
    pub const F1_TOLERANCE: f64 = super::recommend::F1_TOLERANCE;

    /// The report `simhashdb tune` prints: what was measured, every scheme's best score for
    /// each use, and the recommended `init` and `audit` commands with what they cost.
    pub fn write_text(&self, out: &mut dyn Write) -> std::io::Result<()> {
        let tuning = self;
        let corpus = &self.inputs;
        let measured = if tuning.sampled {
            format!(
                "a random sample of {} of its {} documents",
                tuning.documents, tuning.corpus_documents
            )
        } else {
            format!("all {} documents", tuning.documents)
        };
        let truth = match &tuning.truth {
            TruthSource::Exact => "by the exact Jaccard of every pair's texts".to_string(),
            TruthSource::Gold {
                path,
                agreed,
                gold_only,
                text_only,
            } => format!(
                "by the gold pairs of {} (the texts' exact Jaccard agrees on {agreed}; {gold_only} \
                 gold pairs are below J by the texts, {text_only} pairs at J are not in the gold)",
                path.display()
            ),
        };
        writeln!(out, "Measured on {measured}.")?;
        writeln!(
            out,
            "{} true pairs (word 3-shingle Jaccard >= {}), {truth}.",
            tuning.true_pairs, tuning.min_jaccard
        )?;
        if tuning.skipped > 0 {
            writeln!(
                out,
                "{} documents without a letter or digit left out.",
                tuning.skipped
            )?;
        }
        writeln!(out)?;
        let sketched = tuning.sketched.is_some();
        write!(
            out,
            "{:<18} {:>26}   {:>26}",
            "scheme", "fingerprints alone", "verified by Jaccard"
        )?;
        if sketched {
            write!(out, "   {:>38}", "verified by a sketch (best size)")?;
        }
        writeln!(out)?;
        write!(
            out,
            "{:<18} {:>3} {:>6} {:>7} {:>7}   {:>3} {:>6} {:>7} {:>7}",
            "", "k", "F1", "prec", "recall", "k", "F1", "prec", "recall"
        )?;
        if sketched {
            write!(
                out,
                "   {:>3} {:>5} {:>5} {:>6} {:>7} {:>7}",
                "k", "bytes", "J", "F1", "prec", "recall"
            )?;
        }
        writeln!(out)?;
        let best = |scores: &[Score]| {
            *scores
                .iter()
                .max_by(|a, b| a.f1.total_cmp(&b.f1).then(b.distance.cmp(&a.distance)))
                .expect("a distance")
        };
        let mut rows: Vec<(String, Score, Score, Option<Score>)> = tuning
            .schemes
            .iter()
            .map(|s| {
                let all: Vec<Score> = s.sketched.iter().flatten().copied().collect();
                let sketch = (!all.is_empty()).then(|| best(&all));
                (
                    s.scheme.name(),
                    best(&s.fingerprints),
                    best(&s.verified),
                    sketch,
                )
            })
            .collect();
        rows.sort_by(|a, b| b.1.f1.total_cmp(&a.1.f1));
        for (name, f, v, sketch) in rows {
            write!(
                out,
                "{name:<18} {:>3} {:>6.3} {:>7.3} {:>7.3}   {:>3} {:>6.3} {:>7.3} {:>7.3}",
                f.distance, f.f1, f.precision, f.recall, v.distance, v.f1, v.precision, v.recall
            )?;
            if let Some(s) = sketch {
                let (bytes, j) = s.sketch.expect("a sketch score");
                write!(
                    out,
                    "   {:>3} {bytes:>5} {j:>5.2} {:>6.3} {:>7.3} {:>7.3}",
                    s.distance, s.f1, s.precision, s.recall
                )?;
            }
            writeln!(out)?;
        }
        let corpus: Vec<String> = corpus.iter().map(|p| p.display().to_string()).collect();
        let corpus = corpus.join(" ");
        writeln!(out)?;
        writeln!(out, "Recommended for stores that keep no text:")?;
        write_choice(
            out,
            &tuning.fingerprints_only,
            &format!(
                "simhashdb audit STORE --distance {}",
                tuning.fingerprints_only.distance()
            ),
        )?;
        if let Some(s) = &tuning.sketched {
            writeln!(out)?;
            writeln!(
                out,
                "Recommended for stores that keep sketches (verified without the text):"
            )?;
            write_choice(
                out,
                s,
                &format!(
                    "simhashdb audit STORE --distance {} --min-jaccard {}",
                    s.distance(),
                    s.min_jaccard.expect("a sketch threshold")
                ),
            )?;
        }
        writeln!(out)?;
        writeln!(out, "Recommended for audits that re-read the text:")?;
        let v = &tuning.verified;
        write_choice(
            out,
            v,
            &format!(
                "simhashdb audit STORE --distance {} --verify-text {corpus} --min-jaccard {}",
                v.distance(),
                tuning.min_jaccard
            ),
        )?;
        Ok(())
    }

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

fn write_choice(out: &mut dyn Write, choice: &Choice, then: &str) -> std::io::Result<()> {
    let s = &choice.score;
    writeln!(
        out,
        "  simhashdb init STORE {}",
        choice.init_args().join(" ")
    )?;
    writeln!(out, "  {then}")?;
    writeln!(
        out,
        "  F1 {:.3}: precision {:.3}, recall {:.3} (95% interval {:.3}-{:.3}), at k = {}",
        s.f1, s.precision, s.recall, s.recall_interval.0, s.recall_interval.1, s.distance
    )?;
    let settings = &choice.settings;
    let sketch = match choice.sketch_bytes {
        Some(bytes) => format!(" with {bytes}-byte sketches"),
        None => String::new(),
    };
    writeln!(
        out,
        "  costs at {} documents: M = {} blocks, {} tables, ~{:.0} bytes per document on disk{sketch}, \
         ~{:.0} us per query",
        choice.expected_size,
        settings.blocks,
        settings.table_count(),
        choice.disk_bytes_per_document(),
        settings.estimated_query_micros(choice.expected_size)
    )?;
    for warning in settings.warnings(choice.expected_size) {
        writeln!(out, "  note: {warning}")?;
    }
    Ok(())
}
