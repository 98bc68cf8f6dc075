//! Fingerprints written in decimal or hex are read in one notation per input, decided from
//! all its values: never one value read one way and the next the other, never a wrong value
//! without an error or a warning.

use proptest::prelude::*;
use simhashdb::{Batch, ReadOptions, ReadSummary, Source};

use crate::util::{path_str, simhashdb, text};

/// How a value was written: as Python's `str(fp)`, `f"{fp:016x}"` or `f"{fp:x}"` write it.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Writer {
    Decimal,
    HexPadded,
    HexBare,
}

fn written(fp: u64, writer: Writer) -> String {
    match writer {
        Writer::Decimal => fp.to_string(),
        Writer::HexPadded => format!("{fp:016x}"),
        Writer::HexBare => format!("{fp:x}"),
    }
}

/// Whether a written value reads in only one notation (see docs/reliability.md).
fn is_evidence(text: &str) -> bool {
    text.len() > 16
        || text.bytes().any(|b| b.is_ascii_alphabetic())
        || (text.len() == 16 && text.starts_with('0'))
}

/// Values whose written forms are often ambiguous: any u64, 16-digit decimals, hex of digits
/// only, small numbers.
fn value() -> impl Strategy<Value = u64> {
    prop_oneof![
        any::<u64>(),
        1_000_000_000_000_000u64..10_000_000_000_000_000,
        "[1-9][0-9]{0,15}".prop_map(|digits| u64::from_str_radix(&digits, 16).unwrap()),
        0u64..1000,
    ]
}

fn read(tsv: &str) -> simhashdb::Result<(Batch, ReadSummary)> {
    let mut batch = Batch::new();
    let source = Source::Bytes {
        bytes: tsv.as_bytes(),
        name: "in",
    };
    let summary = source.read(&ReadOptions::default(), &mut batch, &())?;
    Ok((batch, summary))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    /// Whatever the writers, a read is right, or it warns (only of an input with no
    /// evidence), or it fails naming a line and --fingerprint-format; an input of one writer
    /// with evidence in it is read right, without a warning.
    #[test]
    fn an_input_is_read_in_one_notation(
        values in proptest::collection::vec((value(), 0..3usize), 1..40),
        mixed: bool,
    ) {
        let writers = [Writer::Decimal, Writer::HexPadded, Writer::HexBare];
        let first = writers[values[0].1];
        let lines: Vec<(u64, Writer, String)> = values
            .iter()
            .map(|&(fp, w)| {
                let writer = if mixed { writers[w] } else { first };
                (fp, writer, written(fp, writer))
            })
            .collect();
        let tsv: String = lines
            .iter()
            .enumerate()
            .map(|(i, (_, _, text))| format!("d{i}\t{text}\n"))
            .collect();
        let evidence = lines.iter().any(|(_, _, text)| is_evidence(text));
        // JSON strings are read as TSV fields are.
        let jsonl: String = lines
            .iter()
            .enumerate()
            .map(|(i, (_, _, text))| format!("{{\"id\": \"d{i}\", \"fingerprint\": \"{text}\"}}\n"))
            .collect();
        let outcome = |read: simhashdb::Result<(Batch, ReadSummary)>| {
            read.map(|(b, s)| ((0..b.len()).map(|i| b.fingerprint(i)).collect::<Vec<_>>(), s.warnings))
                .map_err(|e| e.to_string())
        };
        prop_assert_eq!(outcome(read(&jsonl)), outcome(read(&tsv)));
        let one_writer = lines.iter().all(|(_, w, _)| *w == lines[0].1);
        match read(&tsv) {
            Ok((batch, summary)) => {
                prop_assert_eq!(batch.len(), lines.len());
                let read: Vec<u64> = (0..batch.len()).map(|i| batch.fingerprint(i)).collect();
                let reading = |radix| -> Vec<Option<u64>> {
                    lines.iter().map(|(_, _, t)| u64::from_str_radix(t, radix).ok()).collect()
                };
                let in_one_notation = [16, 10]
                    .iter()
                    .any(|&radix| reading(radix).iter().zip(&read).all(|(r, v)| *r == Some(*v)));
                prop_assert!(in_one_notation, "notations mixed:\n{}", tsv);
                let right = read.iter().zip(&lines).all(|(v, (fp, _, _))| v == fp);
                // Digit strings of at most 14 digits and nothing else are decimal: no printer
                // of 64-bit fingerprints writes them (docs/reliability.md).
                let small = !evidence && lines.iter().all(|(_, _, t)| t.len() <= 14);
                if one_writer && summary.warnings.is_empty() && !small {
                    prop_assert!(right, "read wrong without a warning:\n{}", tsv);
                }
                if !summary.warnings.is_empty() {
                    prop_assert!(!evidence, "warned of an input with evidence:\n{}", tsv);
                    prop_assert!(summary.warnings[0].contains("--fingerprint-format"));
                }
                if one_writer && evidence {
                    prop_assert!(right && summary.warnings.is_empty(), "{}", tsv);
                }
            }
            Err(e) => {
                let message = e.to_string();
                prop_assert!(!(one_writer && evidence), "{message}\n{tsv}");
                prop_assert!(message.starts_with("in:"), "{message}");
                prop_assert!(message.contains("--fingerprint-format"), "{message}");
            }
        }
    }
}

#[test]
fn the_notation_is_said_by_the_evidence() {
    // A 16-digit value in a decimal input is decimal, wherever the evidence is.
    let (batch, summary) = read("a\t1234567890123456\nb\t12345678901234567890\n").unwrap();
    assert_eq!(batch.fingerprint(0), 1234567890123456);
    assert!(summary.warnings.is_empty());
    // A hex value that lost its leading zero is hex in a hex input.
    let (batch, _) = read("a\t234567890123456\nb\tffffffffffffffff\n").unwrap();
    assert_eq!(batch.fingerprint(0), 0x234567890123456);
    // Both: an error naming the second line and the first.
    let err = read("a\tff\nb\t12345678901234567890\n")
        .unwrap_err()
        .to_string();
    assert!(err.starts_with("in:2: ") && err.contains("line 1"), "{err}");
    // No evidence and mixed lengths: an error.
    let err = read("a\t255\nb\t1234567890123456\n")
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("cannot be told") && err.contains("--fingerprint-format"),
        "{err}"
    );
    // No evidence, a short input of 16 digits: hex, with a warning.
    let (batch, summary) = read("a\t1234567890123456\n").unwrap();
    assert_eq!(batch.fingerprint(0), 0x1234567890123456);
    assert!(
        summary.warnings[0].starts_with("warning: in:1: "),
        "{:?}",
        summary.warnings
    );
    // ... and a long one is an error.
    let long: String = (0..17)
        .map(|i| format!("d{i}\t{}\n", 1234567890123456u64 + i))
        .collect();
    let err = read(&long).unwrap_err().to_string();
    assert!(err.contains("17 values of 15 or 16 digits"), "{err}");
    // Small numbers and JSON numbers are what they always were.
    let (batch, summary) = read("a\t255\nb\t0x10\n").unwrap();
    assert_eq!((batch.fingerprint(0), batch.fingerprint(1)), (255, 16));
    assert!(summary.warnings.is_empty());
    let (batch, _) =
        read("{\"id\": \"a\", \"fingerprint\": 12}\n{\"id\": \"b\", \"fingerprint\": \"ff\"}\n")
            .unwrap();
    assert_eq!((batch.fingerprint(0), batch.fingerprint(1)), (12, 255));
}

/// A stream decides on its first group of chunks: a value of the other notation beyond it
/// fails the read, naming its line.
#[test]
fn evidence_after_the_decision_fails_the_read() {
    let lines = 1_500_000u64;
    let mut tsv: String = (0..lines).map(|i| format!("d{i}\t{}\n", i + 1)).collect();
    tsv.push_str("last\tabc\n");
    let one_thread = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap();
    let err = one_thread.install(|| read(&tsv)).unwrap_err().to_string();
    assert!(
        err.starts_with(&format!("in:{}: ", lines + 1)) && err.contains("read as decimal"),
        "{err}"
    );
}

/// The case: 100,000 random u64s written in decimal are all stored right by
/// `insert`, and `query` reads them alike; a mixed file stores nothing and says why.
#[test]
fn the_cli_reads_a_decimal_file_right_and_refuses_a_mixed_one() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("s");
    let s = path_str(&store);
    assert!(simhashdb(&["init", s, "--distance", "3"], "")
        .status
        .success());
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let values: Vec<u64> = (0..100_000)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        })
        .collect();
    let sixteen = values.iter().filter(|v| v.to_string().len() == 16).count();
    assert!(sixteen > 0, "the test needs 16-digit values");
    let input = dir.path().join("decimal.tsv");
    let tsv: String = values
        .iter()
        .enumerate()
        .map(|(i, v)| format!("d{i}\t{v}\n"))
        .collect();
    std::fs::write(&input, &tsv).unwrap();
    let out = simhashdb(&["insert", s, path_str(&input)], "");
    assert!(out.status.success(), "{}", text(&out.stderr));
    let out = simhashdb(&["export", s], "");
    let mut stored: Vec<(usize, u64)> = text(&out.stdout)
        .lines()
        .map(|line| {
            let mut fields = line.split('\t');
            let id: usize = fields.next().unwrap()[1..].parse().unwrap();
            (id, u64::from_str_radix(fields.next().unwrap(), 16).unwrap())
        })
        .collect();
    stored.sort();
    let expected: Vec<(usize, u64)> = values.iter().copied().enumerate().collect();
    assert_eq!(stored, expected);

    // The same file as queries: every value found at distance 0 under its own id.
    let queries = dir.path().join("queries.txt");
    let list: String = values.iter().take(2000).map(|v| format!("{v}\n")).collect();
    std::fs::write(&queries, list).unwrap();
    let out = simhashdb(
        &["query", s, "--distance", "0", "--input", path_str(&queries)],
        "",
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let found = text(&out.stdout);
    for (i, v) in values.iter().take(2000).enumerate() {
        assert!(found.contains(&format!("\td{i}\t")), "query {v} lost");
    }

    // Mixed notations: exit 1, the line named, nothing stored.
    let before = simhashdb(&["export", s], "").stdout;
    std::fs::write(&input, "x\t00000000000000ff\ny\t12345678901234567890\n").unwrap();
    let out = simhashdb(&["insert", s, path_str(&input)], "");
    assert_eq!(out.status.code(), Some(1));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("decimal.tsv:2: ") && stderr.contains("--fingerprint-format"),
        "{stderr}"
    );
    assert_eq!(simhashdb(&["export", s], "").stdout, before);

    // Arguments are one input too: a warning for one that either notation writes.
    let out = simhashdb(&["query", s, "--distance", "0", "1234567890123456"], "");
    assert!(out.status.success());
    assert!(
        text(&out.stderr).contains("warning:"),
        "{}",
        text(&out.stderr)
    );
    let out = simhashdb(
        &[
            "query",
            s,
            "--distance",
            "0",
            "1234567890123456",
            "12345678901234567890",
        ],
        "",
    );
    assert!(out.status.success() && !text(&out.stderr).contains("warning"));
}
