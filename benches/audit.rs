//! The audit at scale (harness = false), on fingerprints from ../shared/bench/peers.py.
//!
//! usage: cargo bench --bench audit -- DATA.u64 [--dir DIR] [--pairs-out FILE] [--reuse] [--batches B]
//!   DATA.u64   raw little-endian u64 fingerprints (peers.py writes fp_n{N}_p{P}_s{SEED}.u64)
//!   --batches  insert the fingerprints as B equal batches (B runs), e.g. 1e8 as 10 x 1e7
//!   --pairs-out  writes the fingerprint pairs as little-endian (lo, hi) u64s sorted, the
//!              layout `peers.py --digest-pairs FILE` digests, to compare with seomoz's find_all
//!   --reuse    audit the store already in DIR instead of building it
//! Prints one JSON object per figure: building the store from the hashes, auditing it (opened
//! fresh, as the CLI does), the build + audit total, and the process's peak RSS.

use std::io::Write;
use std::path::PathBuf;
use std::time::Instant;

use simhashdb::{Batch, Settings, Snapshot, Store, Verification};

mod common;
use common::Args;

fn peak_rss_mib() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map_or(0.0, |kb| kb / 1024.0)
}

fn main() {
    let args = Args::from_env();
    let data = args.first().expect("usage: audit DATA.u64 [--dir DIR]");
    let dir = PathBuf::from(
        args.flag("--dir")
            .unwrap_or_else(|| "bench-data/audit".into()),
    );
    let reuse = args.has("--reuse") && dir.join("CATALOG").exists();

    let mut build_s = 0.0;
    if !reuse {
        let t = Instant::now();
        let bytes = std::fs::read(data).expect("data file");
        let batches: usize = args
            .flag("--batches")
            .map_or(1, |b| b.parse().expect("--batches B"));
        let n = bytes.len() / 8;
        let _ = std::fs::remove_dir_all(&dir);
        let mut store = Store::create(&dir, Settings::default()).unwrap();
        let mut id = String::new();
        for b in 0..batches {
            let mut batch = Batch::new();
            for i in n * b / batches..n * (b + 1) / batches {
                use std::fmt::Write;
                id.clear();
                write!(id, "{i}").unwrap();
                let fp = u64::from_le_bytes(bytes[8 * i..8 * i + 8].try_into().unwrap());
                batch.push(&id, fp).unwrap();
            }
            store.insert(&batch, None).unwrap();
        }
        drop(bytes);
        build_s = t.elapsed().as_secs_f64();
        println!(
            "{{\"figure\":\"build_store\",\"fingerprints\":{n},\"batches\":{batches},\"seconds\":{build_s:.3}}}"
        );
    }

    let t = Instant::now();
    let snapshot = Snapshot::open(&dir).unwrap();
    let k = u32::from(snapshot.settings().distance);
    let pairs = snapshot.fingerprint_pairs(k, &()).unwrap();
    let audit_s = t.elapsed().as_secs_f64();
    println!(
        "{{\"figure\":\"audit_fingerprint_pairs\",\"fingerprints\":{},\"distance\":{k},\"pairs\":{},\"seconds\":{audit_s:.3}}}",
        snapshot.documents(),
        pairs.len()
    );
    let t = Instant::now();
    let near = snapshot
        .near_duplicates(k, &Verification::None, &())
        .unwrap();
    // Every document pair held and sorted, as the figure has always measured it.
    let mut documents = Vec::new();
    near.for_each_pair(|a, b, d, _| {
        documents.push((a.to_string(), b.to_string(), d));
        Ok::<_, std::convert::Infallible>(())
    })
    .unwrap();
    documents.sort_unstable();
    println!(
        "{{\"figure\":\"audit_document_pairs\",\"pairs\":{},\"seconds\":{:.3}}}",
        documents.len(),
        t.elapsed().as_secs_f64()
    );
    if !reuse {
        println!(
            "{{\"figure\":\"build_plus_audit\",\"seconds\":{:.3}}}",
            build_s + audit_s
        );
    }
    println!("{{\"figure\":\"peak_rss\",\"mib\":{:.0}}}", peak_rss_mib());
    if let Some(path) = args.flag("--pairs-out") {
        let mut out = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
        for p in &pairs {
            out.write_all(&p.a.to_le_bytes()).unwrap();
            out.write_all(&p.b.to_le_bytes()).unwrap();
        }
        out.flush().unwrap();
    }
}
