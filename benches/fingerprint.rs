//! Fingerprinting throughput (harness = false): MB of text per second on one core, per scheme.
//!
//! usage: cargo bench --bench fingerprint -- [CORPUS.jsonl]   (default ../shared/eval/docs.jsonl)
//! Times `Scheme::fingerprint` alone (the texts are read and parsed first), 5 rounds, median;
//! then the default scheme's fingerprint with a verification sketch (`Scheme::document`, as
//! an insert into a store made with `init --sketch` computes it) at 128 and 512 bytes; then
//! the same by document length (words, split at whitespace), with the sketch's cost as a ratio of throughputs.

use std::time::Instant;

use simhashdb::Scheme;

fn main() {
    let path = std::env::args()
        .skip(1)
        .find(|a| a != "--bench")
        .unwrap_or_else(|| "../shared/eval/docs.jsonl".into());
    let corpus = std::fs::read_to_string(&path).expect("corpus");
    let texts: Vec<String> = corpus
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).expect("JSON line");
            v["text"].as_str().expect("text").to_string()
        })
        .collect();
    let bytes: usize = texts.iter().map(String::len).sum();
    for (name, shingle, weight) in [
        ("words", Some(2), Some("minhash")),
        ("words", Some(3), Some("minhash")),
        ("words", Some(1), Some("set")),
        ("words", Some(3), Some("set")),
        ("words", Some(3), Some("count")),
        ("chars", Some(4), None),
        ("seomoz", None, None),
    ] {
        let scheme = Scheme::from_parts(name, shingle, weight).unwrap();
        let mut rounds: Vec<f64> = (0..5)
            .map(|_| {
                let t = Instant::now();
                let x = texts.iter().fold(0u64, |x, t| x ^ scheme.fingerprint(t));
                std::hint::black_box(x);
                bytes as f64 / 1e6 / t.elapsed().as_secs_f64()
            })
            .collect();
        rounds.sort_by(|a, b| a.partial_cmp(b).unwrap());
        println!(
            "{{\"figure\":\"fingerprint_throughput\",\"scheme\":\"{scheme}\",\"mb_per_s_one_core_median\":{:.1}}}",
            rounds[2]
        );
    }
    for bytes in [0u16, 128, 512] {
        let scheme = Scheme::default().with_sketch(bytes).unwrap();
        let mut rounds: Vec<f64> = (0..5)
            .map(|_| {
                let t = Instant::now();
                for text in &texts {
                    std::hint::black_box(scheme.document(text).unwrap());
                }
                t.elapsed().as_secs_f64() * 1e6 / texts.len() as f64
            })
            .collect();
        rounds.sort_by(|a, b| a.partial_cmp(b).unwrap());
        println!(
            "{{\"figure\":\"document_with_sketch\",\"scheme\":\"{scheme}\",\"sketch_bytes\":{bytes},\"us_per_document_one_core_median\":{:.2}}}",
            rounds[2]
        );
    }
    // By length: the sketch's cost per document has a part that grows with the shingles
    // (hashing, the rounds) and a fixed part (the bits of every bin), so short documents pay
    // the most for it.
    let plain = Scheme::default();
    let sketched = Scheme::default().with_sketch(128).unwrap();
    for (least, most) in [
        (0, 100),
        (100, 1_000),
        (1_000, 10_000),
        (10_000, usize::MAX),
    ] {
        let group: Vec<&String> = texts
            .iter()
            .filter(|t| (least..most).contains(&t.split_whitespace().count()))
            .collect();
        if group.is_empty() {
            continue;
        }
        let time = |scheme: &Scheme| {
            let mut rounds: Vec<f64> = (0..5)
                .map(|_| {
                    let t = Instant::now();
                    for text in &group {
                        std::hint::black_box(scheme.document(text).unwrap());
                    }
                    t.elapsed().as_secs_f64() * 1e6 / group.len() as f64
                })
                .collect();
            rounds.sort_by(|a, b| a.partial_cmp(b).unwrap());
            rounds[2]
        };
        // Side by side, alternating, so drift on a shared machine falls on both.
        let (mut without, mut with) = (Vec::new(), Vec::new());
        for _ in 0..3 {
            without.push(time(&plain));
            with.push(time(&sketched));
        }
        without.sort_by(|a, b| a.partial_cmp(b).unwrap());
        with.sort_by(|a, b| a.partial_cmp(b).unwrap());
        println!(
            "{{\"figure\":\"sketch_cost_by_length\",\"words_from\":{least},\"words_below\":{},\"documents\":{},\"us_without\":{:.2},\"us_with_128\":{:.2},\"throughput_ratio\":{:.3}}}",
            if most == usize::MAX { "null".to_string() } else { most.to_string() },
            group.len(),
            without[1],
            with[1],
            without[1] / with[1]
        );
    }
}
