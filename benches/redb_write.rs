//! The ceiling redb puts on writing tables (harness = false): how fast already-encoded key
//! blocks go into redb files and commit, with nothing else to do. Any insert or merge writes
//! its table blocks this way, so no merge can write table entries faster than this.
//!
//! usage: cargo bench --bench redb_write -- [ENTRIES] [--files 1,2,8] [--dir DIR]
//!   ENTRIES  table entries in all (default 1e7: 1e6 fingerprints in 10 tables), encoded as
//!            the store encodes them (random keys, ~6.2 bytes each, blocks of ~4 KB)
//!   --files  the numbers of files to spread them over, written in parallel (one write
//!            transaction each, 10 tables per file, appended through a cursor, then commit)
//! Then reads every block back (range scan, CRC, decode) as a merge reads its inputs.
//! Prints one JSON object per file count.

use std::path::PathBuf;
use std::time::Instant;

use rayon::prelude::*;
use redb::{Database, ReadableDatabase, TableDefinition};
use simhashdb::internals::KeyBlock;

mod common;
use common::{append_blocks, encode_blocks, splitmix, Args};

const TABLES: usize = 10;

fn main() {
    let args = Args::from_env();
    let entries: usize = args
        .first()
        .and_then(|a| a.parse::<f64>().ok())
        .map_or(10_000_000, |n| n as usize);
    let files: Vec<usize> = args
        .flag("--files")
        .unwrap_or_else(|| "1,2,8".into())
        .split(',')
        .map(|f| f.parse().expect("--files 1,2,8"))
        .collect();
    let dir = PathBuf::from(
        args.flag("--dir")
            .unwrap_or_else(|| "bench-data/redb-write".into()),
    );
    std::fs::create_dir_all(&dir).unwrap();

    // One table's worth of blocks, written to every table of every file.
    let per_table = entries / TABLES;
    for &f in &files {
        let mut rng = 42u64;
        let mut keys_of_file: Vec<u64> = (0..per_table / f).map(|_| splitmix(&mut rng)).collect();
        keys_of_file.sort_unstable();
        keys_of_file.dedup();
        let blocks = encode_blocks(simhashdb::internals::KeyCodec::EliasFano, &keys_of_file);
        let bytes: usize = blocks.iter().map(|(_, b)| b.len()).sum::<usize>() * TABLES * f;
        let written = keys_of_file.len() * TABLES * f;

        let start = Instant::now();
        (0..f).into_par_iter().for_each(|i| {
            let path = dir.join(format!("file-{i}.redb"));
            let _ = std::fs::remove_file(&path);
            let db = Database::builder()
                .set_cache_size(256 << 20)
                .create(&path)
                .unwrap();
            let txn = db.begin_write().unwrap();
            for t in 0..TABLES {
                let blocks = blocks.iter().map(|(last, b)| (*last, &b[..]));
                append_blocks(&txn, &format!("t{t:03}"), blocks);
            }
            txn.commit().unwrap();
        });
        let secs = start.elapsed().as_secs_f64();

        // Read everything back as a merge reads its inputs: every block, checksum and keys.
        let start = Instant::now();
        let read: usize = (0..f)
            .into_par_iter()
            .map(|i| {
                let db = Database::builder()
                    .set_cache_size(256 << 20)
                    .open(dir.join(format!("file-{i}.redb")))
                    .unwrap();
                let txn = db.begin_read().unwrap();
                let mut n = 0;
                for t in 0..TABLES {
                    let name = format!("t{t:03}");
                    let table = txn
                        .open_table(TableDefinition::<u64, &[u8]>::new(&name))
                        .unwrap();
                    for item in table.range::<u64>(..).unwrap() {
                        let (_, block) = item.unwrap();
                        let block = KeyBlock::parse(block.value()).unwrap();
                        block.for_each(|_| n += 1).unwrap();
                    }
                }
                n
            })
            .sum();
        let read_secs = start.elapsed().as_secs_f64();
        assert_eq!(read, written);
        println!(
            "{{\"figure\":\"redb_write\",\"files\":{f},\"entries\":{written},\"bytes\":{bytes},\"seconds\":{secs:.3},\"entries_per_s\":{:.0},\"mb_per_s\":{:.0},\"read_seconds\":{read_secs:.3},\"read_entries_per_s\":{:.0}}}",
            written as f64 / secs,
            bytes as f64 / secs / 1e6,
            written as f64 / read_secs,
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}
