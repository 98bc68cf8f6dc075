//! Helpers shared by the integration tests.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Output};

/// The brute-force answer: every (distance, fingerprint, id) of `model` within `d` of `q`.
pub fn brute_force(model: &BTreeMap<String, u64>, q: u64, d: u32) -> Vec<(u32, u64, String)> {
    let mut out: Vec<(u32, u64, String)> = model
        .iter()
        .filter_map(|(id, &fp)| {
            let dist = (fp ^ q).count_ones();
            (dist <= d).then(|| (dist, fp, id.clone()))
        })
        .collect();
    out.sort();
    out
}

/// A snapshot's answer in the shape of [`brute_force`]'s.
pub fn query_tuples(snapshot: &simhashdb::Snapshot, q: u64, d: u32) -> Vec<(u32, u64, String)> {
    snapshot
        .query(q, d)
        .unwrap()
        .into_iter()
        .map(|m| (m.distance, m.fingerprint, m.id))
        .collect()
}

/// The verdicts of `batch` deduped against `snapshot` within `d` bits (verified at `min` when
/// given), as every client asks for them: `dedup_from` a source of documents.
pub fn dedup_batch(
    snapshot: &simhashdb::Snapshot,
    batch: &simhashdb::Batch,
    d: u32,
    min: Option<f64>,
) -> simhashdb::Result<Vec<simhashdb::Verdict>> {
    let options = simhashdb::DedupOptions {
        distance: Some(i64::from(d)),
        min_jaccard: min,
        ..simhashdb::DedupOptions::default()
    };
    let source = simhashdb::Source::Documents(batch.clone());
    let answer = snapshot.dedup_from(source, &options, &simhashdb::ReadOptions::default(), &())?;
    Ok(answer.results.unwrap_or_default())
}

/// Every pair of live documents within `d` bits, each once with `a < b`, sorted: the audit's
/// pairs collected (the library hands them out one at a time).
pub fn audit_pairs(
    snapshot: &simhashdb::Snapshot,
    d: u32,
) -> simhashdb::Result<Vec<simhashdb::Pair<String>>> {
    let near = snapshot.near_duplicates(d, &simhashdb::Verification::None, &())?;
    let mut pairs = Vec::new();
    near.for_each_pair(|a, b, distance, _| {
        pairs.push(simhashdb::Pair {
            a: a.to_string(),
            b: b.to_string(),
            distance,
        });
        Ok::<_, std::convert::Infallible>(())
    })
    .unwrap_or_else(|never| match never {});
    pairs.sort_unstable();
    Ok(pairs)
}

/// Runs the simhashdb binary with `args` and `stdin`.
pub fn simhashdb(args: &[&str], stdin: &str) -> Output {
    simhashdb_bytes(args, stdin.as_bytes())
}

/// Runs the simhashdb binary with `args` and binary `stdin`.
pub fn simhashdb_bytes(args: &[&str], stdin: &[u8]) -> Output {
    use std::io::Write;
    let mut child = Command::new(env!("CARGO_BIN_EXE_simhashdb"))
        .args(args)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("the binary runs");
    let mut input = child.stdin.take().unwrap();
    let data = stdin.to_vec();
    let feeder = std::thread::spawn(move || {
        let _ = input.write_all(&data);
    });
    let out = child.wait_with_output().unwrap();
    feeder.join().unwrap();
    out
}

pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

pub fn path_str(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// Every file under `dir` with its bytes, and every directory, by path.
pub fn tree(dir: &std::path::Path) -> std::collections::BTreeMap<String, Option<Vec<u8>>> {
    let mut out = std::collections::BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            let name = path.strip_prefix(dir).unwrap().display().to_string();
            if path.is_dir() {
                out.insert(name, None);
                stack.push(path);
            } else {
                out.insert(name, Some(std::fs::read(&path).unwrap()));
            }
        }
    }
    out
}
