//! Compaction figures (harness = false): merge speed in table entries per second, bytes on disk
//! before and after, and query latency before and after, for a store built from daily runs.
//!
//! usage: cargo bench --bench compact -- N [--runs 8] [--delete 0.05] [--blocks M] [--dir DIR]
//!        [--keep]
//!   N         fingerprints in all (random, splitmix64 seed 42), inserted as --runs equal batches
//!             with automatic compaction off
//!   --delete  the fraction of documents deleted (in one batch) before compacting
//!   --keep    leave the compacted store at DIR (for scripts/reopen.sh)
//! Prints one JSON object per figure.

use std::path::PathBuf;
use std::time::Instant;

use simhashdb::CompactionPolicy;
use simhashdb::{Batch, Settings, Snapshot, Store};

mod common;
use common::{splitmix, Args};

/// Median and p99 single-query latency in microseconds over `queries`.
fn latency(dir: &std::path::Path, queries: &[u64]) -> (f64, f64) {
    let snapshot = Snapshot::open(dir).unwrap();
    let mut micros: Vec<f64> = queries
        .iter()
        .map(|&q| {
            let t = Instant::now();
            std::hint::black_box(snapshot.query(q, 3).unwrap());
            t.elapsed().as_secs_f64() * 1e6
        })
        .collect();
    micros.sort_by(f64::total_cmp);
    (micros[micros.len() / 2], micros[micros.len() * 99 / 100])
}

fn main() {
    let args = Args::from_env();
    let n: usize = args
        .first()
        .and_then(|a| a.parse().ok())
        .unwrap_or(1_000_000);
    let runs: usize = args
        .flag("--runs")
        .and_then(|r| r.parse().ok())
        .unwrap_or(8);
    let delete: f64 = args
        .flag("--delete")
        .and_then(|d| d.parse().ok())
        .unwrap_or(0.05);
    let dir = PathBuf::from(
        args.flag("--dir")
            .unwrap_or_else(|| format!("bench-data/compact-{n}")),
    );
    let _ = std::fs::remove_dir_all(&dir);

    let mut rng = 42u64;
    let settings = Settings {
        blocks: args
            .flag("--blocks")
            .map_or(Settings::default().blocks, |m| {
                m.parse().expect("--blocks M")
            }),
        ..Settings::default()
    };
    let mut store = Store::create(&dir, settings).unwrap();
    store
        .set_compaction_policy(CompactionPolicy {
            max_runs: 0,
            merge_factor: 4,
        })
        .unwrap();
    let t = Instant::now();
    let per_run = n / runs;
    let mut fps = Vec::with_capacity(n);
    for r in 0..runs {
        let mut batch = Batch::new();
        for i in 0..per_run {
            let fp = splitmix(&mut rng);
            fps.push(fp);
            batch
                .push(&format!("doc-{:010}", r * per_run + i), fp)
                .unwrap();
        }
        store.insert(&batch, Some(&format!("day{r}"))).unwrap();
    }
    let build = t.elapsed().as_secs_f64();
    let deleted = (fps.len() as f64 * delete) as usize;
    let ids: Vec<String> = (0..deleted)
        .map(|i| format!("doc-{:010}", (i * 7919) % fps.len()))
        .collect();
    store.delete(ids.iter().map(String::as_str)).unwrap();
    println!(
        "{{\"figure\":\"build\",\"n\":{},\"runs\":{runs},\"seconds\":{build:.2},\"deleted\":{deleted}}}",
        fps.len()
    );

    let queries: Vec<u64> = (0..10_000)
        .map(|i| fps[(i * 104_729) % fps.len()] ^ 0b101)
        .collect();
    let (p50_before, p99_before) = latency(&dir, &queries);
    let s = store.compact().unwrap();
    let (p50_after, p99_after) = latency(&dir, &queries);
    println!(
        "{{\"figure\":\"compact\",\"n\":{},\"runs_before\":{},\"seconds\":{:.2},\"table_entries\":{},\
         \"entries_per_s\":{:.0},\"bytes_before\":{},\"bytes_after\":{},\"dropped_fingerprints\":{},\
         \"dropped_documents\":{},\"query_p50_us_before\":{p50_before:.0},\"query_p99_us_before\":{p99_before:.0},\
         \"query_p50_us_after\":{p50_after:.0},\"query_p99_us_after\":{p99_after:.0}}}",
        fps.len(),
        s.runs_before,
        s.seconds,
        s.table_entries,
        s.table_entries as f64 / s.seconds,
        s.bytes_before,
        s.bytes_after,
        s.dropped_fingerprints,
        s.dropped_documents,
    );
    drop(store);
    if !args.has("--keep") {
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
