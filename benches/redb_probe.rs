//! The floor redb puts on a batch of queries (harness = false): how long the redb lookups
//! alone of a batch of prefix probes take, with no checksum, no decoding and no documents.
//! A query probes each of its C(m, K) tables with one `range(lo..)` step that lands on one
//! key block (sometimes two), so no batch of queries can be answered faster than this.
//!
//! usage: cargo bench --bench redb_probe -- [FINGERPRINTS] [--queries Q] [--tables T]
//!                                         [--threads N] [--cache-mib MIB] [--dir DIR]
//!   FINGERPRINTS  keys per table (default 1e7), random, encoded as the store encodes them
//!   --queries     probes per table (default 10,000: the CLI batch of docs/benchmarks.md)
//!   --tables      tables (default 4: m = 4, K = 3)
//!   --threads     threads the probes are spread over (default 2)
//!   --cache-mib   redb cache of the reader (default 25, what `query` gives a 1e7 store)
//!   --prefix-bits the key bits a probe fixes (default 16: m = 4; 26 for m = 5 at 1e9)
//! The tables are written twice, in each key block layout (format 5's Elias-Fano blocks and
//! format 3's restart blocks), and each round measures both, side by side. Each round opens
//! the file afresh (as a `query` process does) and runs every probe three ways: the redb step
//! only; plus the block checksum; plus decoding the prefix range. Prints one JSON
//! object per round and layout (five rounds), then the medians. `memory_decode_s` is the
//! probes' decoding alone (blocks in memory, one thread); `memory_scan_s` decodes every block
//! whole, as pinning a run does.

use std::path::PathBuf;
use std::time::Instant;

use rayon::prelude::*;
use redb::{Database, ReadableDatabase, TableDefinition};
use simhashdb::internals::{KeyBlock, KeyCodec};

mod common;
use common::{append_blocks, encode_blocks, splitmix, Args};

fn table(t: usize) -> TableDefinition<'static, u64, &'static [u8]> {
    // Leaked once per table: TableDefinition borrows its name.
    TableDefinition::new(Box::leak(format!("t{t:03}").into_boxed_str()))
}

#[derive(Clone, Copy)]
enum Work {
    Lookup,
    Checksum,
    Decode,
}

fn main() {
    let args = Args::from_env();
    let fingerprints = args.count(10_000_000);
    let queries = args.number("--queries", 1e4) as usize;
    let tables = args.number("--tables", 4.0) as usize;
    let threads = args.number("--threads", 2.0) as usize;
    let cache = (args.number("--cache-mib", 25.0) as usize) << 20;
    let prefix_bits = args.number("--prefix-bits", 16.0) as u32;
    // The key bits a probe's range leaves free.
    let suffix = u64::MAX >> prefix_bits;
    let dir = PathBuf::from(
        args.flag("--dir")
            .unwrap_or_else(|| "bench-data/redb-probe".into()),
    );
    std::fs::create_dir_all(&dir).unwrap();
    let codecs = [
        ("restarts", KeyCodec::Restarts),
        ("elias_fano", KeyCodec::EliasFano),
    ];

    let mut rng = 7u64;
    let mut keys: Vec<u64> = (0..fingerprints).map(|_| splitmix(&mut rng)).collect();
    keys.sort_unstable();
    keys.dedup();
    let mut in_memory = Vec::new();
    for (name, codec) in codecs {
        let path = dir.join(format!("{name}.redb"));
        let _ = std::fs::remove_file(&path);
        let db = Database::builder()
            .set_cache_size(256 << 20)
            .create(&path)
            .unwrap();
        let blocks = encode_blocks(codec, &keys);
        let txn = db.begin_write().unwrap();
        for t in 0..tables {
            let blocks = blocks.iter().map(|(last, b)| (*last, &b[..]));
            append_blocks(&txn, &format!("t{t:03}"), blocks);
        }
        txn.commit().unwrap();
        in_memory.push(blocks);
    }
    let probes: Vec<u64> = (0..queries).map(|_| splitmix(&mut rng)).collect();
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap();

    let mut figures: Vec<Vec<[f64; 5]>> = vec![Vec::new(); codecs.len()];
    for round in 0..5 {
        for (c, (name, _)) in codecs.iter().enumerate() {
            let path = dir.join(format!("{name}.redb"));
            let bytes: usize = in_memory[c].iter().map(|(_, b)| b.len()).sum();
            // The decoding alone: the blocks in memory, each probe's block found by binary
            // search, on one thread.
            let start = Instant::now();
            let mut found = 0u64;
            for _ in 0..tables {
                for &q in &probes {
                    let (lo, hi) = (q & !suffix, q | suffix);
                    let blocks = &in_memory[c];
                    let mut b = blocks.partition_point(|(last, _)| *last < lo);
                    while b < blocks.len() {
                        let (last, bytes) = &blocks[b];
                        let block = KeyBlock::parse(bytes).unwrap();
                        block.for_each_in(lo, hi, |_| found += 1).unwrap();
                        if *last >= hi {
                            break;
                        }
                        b += 1;
                    }
                }
            }
            let memory_s = start.elapsed().as_secs_f64();
            // Every block decoded whole, as pinning a run or a merge does.
            let start = Instant::now();
            for (_, bytes) in &in_memory[c] {
                let block = KeyBlock::parse(bytes).unwrap();
                found += block.for_each(|k| found ^= k).unwrap();
            }
            let scan_s = start.elapsed().as_secs_f64();
            std::hint::black_box(found);
            let mut seconds = Vec::new();
            for work in [Work::Lookup, Work::Checksum, Work::Decode] {
                let start = Instant::now();
                let db = redb::Builder::new()
                    .set_cache_size(cache)
                    .open_read_only(&path)
                    .unwrap();
                let txn = db.begin_read().unwrap();
                let opened: Vec<_> = (0..tables)
                    .map(|t| txn.open_table(table(t)).unwrap())
                    .collect();
                let found: u64 = pool.install(|| {
                    probes
                        .par_iter()
                        .map(|&q| {
                            let (lo, hi) = (q & !suffix, q | suffix);
                            let mut found = 0u64;
                            for table in &opened {
                                for item in table.range(lo..).unwrap() {
                                    let (last, block) = item.unwrap();
                                    let bytes = block.value();
                                    match work {
                                        Work::Lookup => found += u64::from(bytes[bytes.len() / 2]),
                                        Work::Checksum => {
                                            found += KeyBlock::parse(bytes).unwrap().len() as u64
                                        }
                                        Work::Decode => KeyBlock::parse(bytes)
                                            .unwrap()
                                            .for_each_in(lo, hi, |_| found += 1)
                                            .unwrap(),
                                    }
                                    if last.value() >= hi {
                                        break;
                                    }
                                }
                            }
                            found
                        })
                        .sum()
                });
                seconds.push(start.elapsed().as_secs_f64());
                std::hint::black_box(found);
            }
            println!(
            "{{\"figure\":\"redb_probe\",\"layout\":\"{name}\",\"block_bytes\":{bytes},\"memory_decode_s\":{memory_s:.4},\"memory_scan_s\":{scan_s:.4},\"round\":{round},\"fingerprints\":{},\"tables\":{tables},\"queries\":{queries},\"threads\":{threads},\"cache_mib\":{},\"lookup_s\":{:.4},\"lookup_checksum_s\":{:.4},\"lookup_checksum_decode_s\":{:.4}}}",
            keys.len(),
            cache >> 20,
            seconds[0],
            seconds[1],
            seconds[2],
        );
            figures[c].push([seconds[0], seconds[1], seconds[2], memory_s, scan_s]);
        }
    }
    for ((name, _), rounds) in codecs.iter().zip(&mut figures) {
        let median = |i: usize| {
            let mut v: Vec<f64> = rounds.iter().map(|r| r[i]).collect();
            v.sort_by(f64::total_cmp);
            v[v.len() / 2]
        };
        println!(
            "{{\"figure\":\"redb_probe_median\",\"layout\":\"{name}\",\"lookup_s\":{:.4},\"lookup_checksum_s\":{:.4},\"lookup_checksum_decode_s\":{:.4},\"memory_decode_s\":{:.4},\"memory_scan_s\":{:.4}}}",
            median(0),
            median(1),
            median(2),
            median(3),
            median(4),
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}
