//! Killing `insert` with SIGKILL at any moment leaves each batch wholly present or absent.

use std::collections::BTreeMap;
use std::process::{Command, Stdio};
use std::time::Duration;

use simhashdb::{Settings, Snapshot, Store};

const BATCH: u64 = 20_000;

fn fingerprint(batch: u64, i: u64) -> u64 {
    (batch * BATCH + i)
        .wrapping_mul(0x9E37_79B9_7F4A_7C15)
        .rotate_left(17)
}

#[test]
fn sigkill_during_insert_leaves_whole_batches() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s");
    drop(
        Store::create(
            &path,
            Settings {
                blocks: 6,
                distance: 3,
                shards: 4,
            },
        )
        .unwrap(),
    );
    let mut committed: BTreeMap<u64, bool> = BTreeMap::new();
    let mut rng = 0x2545_F491_4F6C_DD1Du64;
    // Batch 0 runs to completion and times an insert; later kills land in 0..1.5x that time.
    let mut insert_micros = u64::MAX;
    for batch in 0..21u64 {
        let input = dir.path().join(format!("b{batch}.tsv"));
        let lines: String = (0..BATCH)
            .map(|i| format!("b{batch}-{i}\t{:016x}\n", fingerprint(batch, i)))
            .collect();
        std::fs::write(&input, lines).unwrap();
        let mut child = Command::new(env!("CARGO_BIN_EXE_simhashdb"))
            .args(["insert", path.to_str().unwrap(), input.to_str().unwrap()])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        let started = std::time::Instant::now();
        let status = if batch == 0 {
            let status = child.wait().unwrap();
            insert_micros = started.elapsed().as_micros() as u64;
            status
        } else {
            std::thread::sleep(Duration::from_micros(rng % (insert_micros * 3 / 2)));
            let _ = child.kill();
            child.wait().unwrap()
        };
        committed.insert(batch, status.success());

        // Every batch is all there or not there at all; those that reported success are there.
        let snapshot = Snapshot::open(&path).expect("the store opens after a kill");
        for (&b, &succeeded) in &committed {
            let present: Vec<bool> = [0, BATCH / 2, BATCH - 1]
                .iter()
                .map(|&i| snapshot.get(&format!("b{b}-{i}")).unwrap() == Some(fingerprint(b, i)))
                .collect();
            assert!(
                present.iter().all(|&p| p == present[0]),
                "batch {b} is partly present"
            );
            if succeeded {
                assert!(present[0], "batch {b} reported success but is missing");
            }
            if present[0] {
                let m = snapshot.query(fingerprint(b, 7) ^ 0b100_0001, 3).unwrap();
                assert!(
                    m.iter().any(|m| m.id == format!("b{b}-7")),
                    "batch {b} is not queryable"
                );
            }
        }
    }
    let killed = committed.values().filter(|&&ok| !ok).count();
    assert!(
        killed > 0 && killed < committed.len(),
        "kills landed both before and after commits: {committed:?}"
    );
    // A later writer cleans what the killed ones left and works.
    let store = Store::open(&path).unwrap();
    let live: Vec<u64> = store.catalog().runs.iter().map(|r| r.id).collect();
    for entry in std::fs::read_dir(path.join("runs")).unwrap() {
        let id: u64 = entry
            .unwrap()
            .file_name()
            .to_str()
            .unwrap()
            .parse()
            .unwrap();
        assert!(live.contains(&id), "abandoned run {id} was removed");
    }
}
