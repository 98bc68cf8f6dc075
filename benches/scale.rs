//! Large-scale figures (harness = false): bulk insert, a daily batch into a big store, single
//! query latency and parallel query throughput, bytes on disk.
//!
//! usage: cargo bench --bench scale -- N [--dir DIR] [--data FILE.u64] [--daily 1000000]
//!        [--blocks M] [--run-documents R] [--batches B]   (K = 3; default M = 5, R = 1e7, B = 1)
//!   N       fingerprints to bulk-load (e.g. 10000000)
//!   --data  raw little-endian u64 fingerprints (as ../shared/bench/peers.py writes); else
//!           N random ones (splitmix64, seed 42)
//!   --batches  bulk-load in B equal batches, each written as runs of R and committed, so the
//!           policy merges each batch's runs after its commit (a store of B large runs)
//! Prints one JSON object per figure.

use std::path::PathBuf;
use std::time::Instant;

use simhashdb::{Batch, OpenOptions, Query, Settings, Snapshot, Stats, Store};

mod common;
use common::{splitmix, Args};

fn percentile(sorted: &[f64], p: f64) -> f64 {
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

/// Bulk-loads `fps` into a new store at `dir` as `batches` batches of runs of
/// `run_documents`, then inserts `daily` fresh fingerprints.
fn build(
    dir: &std::path::Path,
    settings: Settings,
    fps: &[u64],
    run_documents: usize,
    batches: usize,
    daily: usize,
    rng: &mut u64,
) {
    let n = fps.len();
    let t = Instant::now();
    let mut store = Store::create(dir, settings).unwrap();
    let mut secs = t.elapsed().as_secs_f64();
    let mut inserted = 0;
    let per_batch = n.div_ceil(batches.max(1)).max(1);
    // What `chunks` makes: fewer than asked when N does not divide evenly.
    let made = n.div_ceil(per_batch);
    for (b, part) in fps.chunks(per_batch).enumerate() {
        // Library end to end, timing the writes and the commit (with the merges the policy
        // runs after it): each run's documents are made into a batch in memory first, as a
        // reader would hand them over.
        let first = b * per_batch;
        let batch_secs = secs;
        let mut insertion = store.begin_insert(Some("bulk"));
        for (c, chunk) in part.chunks(run_documents).enumerate() {
            let mut batch = Batch::new();
            for (i, &fp) in chunk.iter().enumerate() {
                batch
                    .push(&format!("doc-{:010}", first + c * run_documents + i), fp)
                    .unwrap();
            }
            let t = Instant::now();
            insertion.write(&batch).unwrap();
            secs += t.elapsed().as_secs_f64();
        }
        let t = Instant::now();
        inserted += insertion.commit().unwrap().inserted;
        secs += t.elapsed().as_secs_f64();
        if batches > 1 {
            println!(
                "{{\"figure\":\"bulk_batch\",\"batch\":{b},\"documents\":{},\"seconds\":{:.3},\"runs_after\":{}}}",
                part.len(),
                secs - batch_secs,
                store.run_count()
            );
        }
    }
    println!(
        "{{\"figure\":\"bulk_insert\",\"n\":{n},\"run_documents\":{run_documents},\"batches\":{made},\"runs\":{},\"seconds\":{secs:.3},\"fingerprints_per_s\":{:.0},\"inserted\":{inserted}}}",
        store.run_count(),
        n as f64 / secs,
    );

    // A daily batch of fresh documents into the store.
    let mut day = Batch::new();
    for i in 0..daily {
        day.push(&format!("day-{i:010}"), splitmix(rng)).unwrap();
    }
    let t = Instant::now();
    let s = store.insert(&day, Some("daily")).unwrap();
    let secs = t.elapsed().as_secs_f64();
    println!("{{\"figure\":\"daily_batch\",\"store\":{n},\"batch\":{daily},\"seconds\":{secs:.3},\"inserted\":{}}}", s.inserted);
    drop(day);
}

fn main() {
    let args = Args::from_env();
    let n: usize = args
        .first()
        .and_then(|a| a.parse().ok())
        .unwrap_or(1_000_000);
    let dir = PathBuf::from(
        args.flag("--dir")
            .unwrap_or_else(|| format!("bench-data/scale-{n}")),
    );
    let daily: usize = args
        .flag("--daily")
        .and_then(|d| d.parse().ok())
        .unwrap_or(1_000_000);
    let mut rng = 42u64;
    let fps: Vec<u64> = match args.flag("--data") {
        Some(path) => std::fs::read(&path)
            .expect("data file")
            .chunks_exact(8)
            .take(n)
            .map(|c| u64::from_le_bytes(c.try_into().unwrap()))
            .collect(),
        None => (0..n).map(|_| splitmix(&mut rng)).collect(),
    };
    let reuse = args.has("--reuse") && dir.join("CATALOG").exists();
    let cache: usize = args
        .flag("--cache")
        .and_then(|c| c.parse().ok())
        .unwrap_or(simhashdb::DatabaseOptions::default().cache_bytes);
    if !reuse {
        let _ = std::fs::remove_dir_all(&dir);
        let settings = Settings {
            blocks: args
                .flag("--blocks")
                .map_or(5, |m| m.parse().expect("--blocks M")),
            ..Settings::default()
        };
        let run_documents = args
            .flag("--run-documents")
            .map_or(simhashdb::Insertion::DEFAULT_RUN_DOCUMENTS, |r| {
                r.parse().expect("--run-documents N")
            });
        let batches = args
            .flag("--batches")
            .map_or(1, |b| b.parse().expect("--batches B"));
        build(
            &dir,
            settings,
            &fps,
            run_documents,
            batches,
            daily,
            &mut rng,
        );
    }

    // Queries: half near stored fingerprints (1..3 bits flipped), half random.
    let mut rng = 7u64; // queries do not depend on whether the store was built or reused
    let snapshot = Snapshot::open_with(&dir, OpenOptions::new().cache_bytes(cache)).unwrap();

    let queries: Vec<u64> = (0..10_000)
        .map(|i| {
            if i % 2 == 0 {
                let base = fps[(splitmix(&mut rng) % n as u64) as usize];
                (0..1 + splitmix(&mut rng) % 3)
                    .fold(base, |q, _| q ^ (1 << (splitmix(&mut rng) % 64)))
            } else {
                splitmix(&mut rng)
            }
        })
        .collect();
    // Warm the file handles and caches once, then time single queries.
    let warm_matches: usize = queries
        .iter()
        .map(|&q| snapshot.query(q, 3).unwrap().len())
        .sum();
    let mut lat: Vec<f64> = queries
        .iter()
        .map(|&q| {
            let t = Instant::now();
            std::hint::black_box(snapshot.query(q, 3).unwrap());
            t.elapsed().as_secs_f64() * 1e6
        })
        .collect();
    lat.sort_by(|a, b| a.partial_cmp(b).unwrap());
    println!(
        "{{\"figure\":\"single_query_warm\",\"store\":{},\"queries\":{},\"p50_us\":{:.1},\"p99_us\":{:.1},\"matches\":{warm_matches}}}",
        snapshot.documents(),
        queries.len(),
        percentile(&lat, 0.5),
        percentile(&lat, 0.99)
    );
    let asked: Vec<Query> = queries.iter().map(|&q| Query::from(q)).collect();
    let mut rounds = Vec::new();
    for _ in 0..5 {
        let t = Instant::now();
        let m: usize = snapshot
            .query_many(&asked, 3, None)
            .unwrap()
            .iter()
            .map(Vec::len)
            .sum();
        assert_eq!(m, warm_matches);
        rounds.push(queries.len() as f64 / t.elapsed().as_secs_f64());
    }
    rounds.sort_by(|a, b| a.partial_cmp(b).unwrap());
    println!(
        "{{\"figure\":\"batch_queries\",\"store\":{},\"threads\":{},\"queries_per_s_median\":{:.0}}}",
        snapshot.documents(),
        rayon::current_num_threads(),
        rounds[2]
    );
    let stats = Stats::of(&snapshot).unwrap();
    println!(
        "{{\"figure\":\"bytes\",\"fingerprints\":{},\"disk_bytes_per_fingerprint_per_table\":{:.3},\"block_bytes_per_fingerprint_t000\":{:.3},\"total_bytes\":{},\"disk_bytes_per_document\":{:.1}}}",
        stats.fingerprints,
        stats.disk_bytes_per_fingerprint_per_table,
        stats.per_table[0].block_bytes_per_fingerprint,
        stats.total_bytes,
        stats.disk_bytes_per_document
    );
}
