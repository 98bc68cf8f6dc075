//! What the harness = false benches share: reading their arguments, random fingerprints, and
//! writing key blocks into a redb table the way a run does.
#![allow(dead_code)] // each bench uses a part

use redb::TableDefinition;

/// splitmix64: the benches' random fingerprints (the same sequence as ../shared/bench uses
/// for its seeds).
pub fn splitmix(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A bench's command line, without the `--bench` cargo adds.
pub struct Args(Vec<String>);

impl Args {
    pub fn from_env() -> Self {
        Args(
            std::env::args()
                .skip(1)
                .filter(|a| a != "--bench")
                .collect(),
        )
    }

    /// The first argument, when it is not a flag.
    pub fn first(&self) -> Option<&str> {
        self.0
            .first()
            .map(String::as_str)
            .filter(|a| !a.starts_with("--"))
    }

    /// The first argument read as a count (`1e7` allowed), or `default`.
    pub fn count(&self, default: usize) -> usize {
        self.first()
            .map_or(default as f64, |a| a.parse::<f64>().expect("a count")) as usize
    }

    /// The value after flag `name`.
    pub fn flag(&self, name: &str) -> Option<String> {
        let at = self.0.iter().position(|a| a == name)?;
        Some(
            self.0
                .get(at + 1)
                .unwrap_or_else(|| panic!("{name} needs a value"))
                .clone(),
        )
    }

    /// The value after flag `name` read as a number (`1e6` allowed), or `default`.
    pub fn number(&self, name: &str, default: f64) -> f64 {
        self.flag(name).map_or(default, |v| {
            v.parse()
                .unwrap_or_else(|_| panic!("{name} takes a number"))
        })
    }

    /// Whether flag `name` (one without a value) was given.
    pub fn has(&self, name: &str) -> bool {
        self.0.iter().any(|a| a == name)
    }
}

/// Appends key blocks, as `(last key, block)` in ascending order, to table `name` of a write
/// transaction through a cursor, as a run is written.
pub fn append_blocks<'b>(
    txn: &redb::WriteTransaction,
    name: &str,
    blocks: impl IntoIterator<Item = (u64, &'b [u8])>,
) {
    let mut table = txn
        .open_table(TableDefinition::<u64, &[u8]>::new(name))
        .unwrap();
    let mut cursor = table
        .upper_bound_mut(std::ops::Bound::<u64>::Unbounded)
        .unwrap();
    for (last, block) in blocks {
        cursor.insert_before(last, block).unwrap();
    }
    cursor.close().unwrap();
}

/// Strictly increasing `keys` encoded as a run encodes them: `(last key, block)` per block.
#[cfg(feature = "internals")]
pub fn encode_blocks(codec: simhashdb::internals::KeyCodec, keys: &[u64]) -> Vec<(u64, Vec<u8>)> {
    let mut blocks = Vec::new();
    simhashdb::internals::encode_key_blocks(codec, keys, |last, block| {
        blocks.push((last, block.to_vec()));
        Ok(())
    })
    .unwrap();
    blocks
}
