//! The warm in-process read path of a long-lived reader (what `serve` answers from), on an
//! existing store (harness = false).
//!
//! usage: cargo bench --bench reader -- --dir STORE [--queries FILE.u64] [--n 10000]
//!        [--cache-mib MIB] [--unpinned]
//!   --queries  raw little-endian u64 queries (as ../shared/bench/peers.py writes); else half
//!              1-3 bits from stored fingerprints (sampled from table 0), half random
//!   --unpinned read every table through redb (the pin budget 0), for the comparison
//! Prints one JSON object: single-query p50 / p99 on one thread, each query on first sight
//! (first_) and again once all were seen (single_), and the wall time of all queries at once
//! (`query_many`, 2 threads).

use std::path::PathBuf;
use std::time::Instant;

use simhashdb::{Database, DatabaseOptions, Query};

mod common;
use common::{splitmix, Args};

fn percentile(sorted: &[f64], p: f64) -> f64 {
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

fn main() {
    let args = Args::from_env();
    let dir = PathBuf::from(args.flag("--dir").expect("--dir STORE"));
    let n = args.number("--n", 10_000.0) as usize;
    let mut options = DatabaseOptions {
        refresh_after: None,
        ..DatabaseOptions::default()
    };
    if let Some(mib) = args.flag("--cache-mib") {
        options.pin_bytes = mib.parse::<u64>().expect("MiB") << 20;
    }
    if args.has("--unpinned") {
        options.pin_bytes = 0;
    }
    let t = Instant::now();
    let reader = Database::open(&dir, options).unwrap();
    let open_s = t.elapsed().as_secs_f64();
    let snapshot = reader.current();
    let k = u32::from(snapshot.settings().distance);
    let queries: Vec<u64> = match args.flag("--queries") {
        Some(path) => std::fs::read(path)
            .unwrap()
            .chunks_exact(8)
            .map(|b| u64::from_le_bytes(b.try_into().unwrap()))
            .collect(),
        None => {
            // Stored fingerprints: every document's, a sample of them.
            let mut stored = Vec::new();
            let mut seen = 0u64;
            snapshot
                .for_each_live_document(|_, fp, _| {
                    seen += 1;
                    if seen.is_multiple_of(97) && stored.len() < n / 2 {
                        stored.push(fp);
                    }
                })
                .unwrap();
            let mut rng = 42u64;
            let mut q: Vec<u64> = stored
                .iter()
                .map(|&fp| {
                    let bits = 1 + splitmix(&mut rng) % 3;
                    (0..bits).fold(fp, |f, _| f ^ (1 << (splitmix(&mut rng) % 64)))
                })
                .collect();
            while q.len() < n {
                q.push(splitmix(&mut rng));
            }
            q
        }
    };
    // Each query on first sight (its pages not in redb's cache yet), then once more, warm.
    let mut first = Vec::with_capacity(queries.len());
    for &q in &queries {
        let t = Instant::now();
        snapshot.query(q, k).unwrap();
        first.push(t.elapsed().as_secs_f64() * 1e6);
    }
    first.sort_by(f64::total_cmp);
    let mut lat = Vec::with_capacity(queries.len());
    let mut matches = 0;
    for &q in &queries {
        let t = Instant::now();
        matches += snapshot.query(q, k).unwrap().len();
        lat.push(t.elapsed().as_secs_f64() * 1e6);
    }
    lat.sort_by(f64::total_cmp);
    let asked: Vec<Query> = queries.iter().map(|&q| Query::from(q)).collect();
    let mut many = Vec::new();
    for _ in 0..5 {
        let t = Instant::now();
        snapshot.query_many(&asked, k, None).unwrap();
        many.push(t.elapsed().as_secs_f64());
    }
    many.sort_by(f64::total_cmp);
    let stats = reader.stats();
    println!(
        "{{\"figure\":\"reader\",\"runs\":{},\"documents\":{},\"queries\":{},\"matches\":{matches},\"open_s\":{open_s:.2},\"pinned_tables\":{},\"disk_tables\":{},\"pinned_mib\":{:.1},\"first_p50_us\":{:.1},\"first_p99_us\":{:.1},\"single_p50_us\":{:.1},\"single_p99_us\":{:.1},\"query_many_s_median\":{:.4},\"query_many_us_per_query\":{:.2}}}",
        snapshot.run_count(),
        snapshot.documents(),
        queries.len(),
        stats.pinned_tables,
        stats.disk_tables,
        stats.pinned_bytes as f64 / (1u64 << 20) as f64,
        percentile(&first, 0.5),
        percentile(&first, 0.99),
        percentile(&lat, 0.5),
        percentile(&lat, 0.99),
        many[2],
        many[2] / queries.len() as f64 * 1e6,
    );
}
