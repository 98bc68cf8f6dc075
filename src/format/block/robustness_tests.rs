//! Decoders never panic on any bytes. A block's checksum guards it against damage on disk,
//! but a block damaged before it was sealed (or by a bug) passes the checksum: these blocks
//! are sealed after their bodies are made arbitrary or mutated from valid ones, so every
//! decoder past the checksum sees them. Each must answer a value or an error.

use proptest::collection::vec;
use proptest::prelude::*;

use super::docs::DocState;
use super::postings::{Posting, SketchedPosting};
use super::sketches::SketchEntry;
use super::*;

/// `body` behind a checksum that matches it.
fn sealed(body: &[u8]) -> Vec<u8> {
    let mut block = vec![0; CRC_BYTES];
    block.extend_from_slice(body);
    seal(&mut block);
    block
}

/// The body of a valid block, mutated: bytes overwritten at `edits` (position modulo its
/// length), then cut to `keep` bytes when that is shorter.
fn mutated(block: &[u8], edits: &[(usize, u8)], keep: usize) -> Vec<u8> {
    let mut body = block[CRC_BYTES..].to_vec();
    for &(at, byte) in edits {
        if !body.is_empty() {
            let i = at % body.len();
            body[i] = byte;
        }
    }
    body.truncate(keep.max(1));
    sealed(&body)
}

/// Decodes `block` as each kind of entry block and as a key block, reading every value.
fn decode_every_way(block: &[u8], lo: u64, hi: u64) {
    let _ = entries::decode::<DocState>(block, |_, _, _| true);
    let _ = entries::decode::<Posting>(block, |_, _, _| true);
    let _ = entries::decode::<SketchedPosting>(block, |_, _, _| true);
    let _ = entries::decode::<SketchEntry>(block, |_, _, _| true);
    if let Ok(keys) = keys::KeyBlock::parse(block) {
        let _ = keys.len();
        let _ = keys.for_each(|_| {});
        let _ = keys.for_each_in(lo.min(hi), lo.max(hi), |_| {});
    }
}

/// A valid key block of `codec` of `keys` (sorted, made distinct).
fn key_block(codec: keys::KeyCodec, mut keys: Vec<u64>) -> Vec<u8> {
    keys.sort_unstable();
    keys.dedup();
    let mut first = None;
    keys::encode(codec, &keys, |_, block| {
        first.get_or_insert_with(|| block.to_vec());
        Ok(())
    })
    .unwrap();
    first.unwrap()
}

/// A valid docs block of `ids` (made sorted and distinct), its keys stored or (`hashed`)
/// the ids' hashes.
fn docs_block(mut ids: Vec<(u64, String)>, hashed: bool) -> Vec<u8> {
    let keys = if hashed {
        for (key, id) in ids.iter_mut() {
            *key = super::docs::id_hash(id.as_bytes());
        }
        entries::Keys::IdHashes
    } else {
        entries::Keys::Stored
    };
    ids.sort();
    ids.dedup();
    let mut first = None;
    let entries = ids.iter().map(|(k, id)| {
        let state = DocState::Live {
            fingerprint: *k,
            batch: k % 7,
        };
        (*k, id.as_bytes(), state)
    });
    super::entry_writer::encode(keys, entries, |_, block| {
        first.get_or_insert_with(|| block.to_vec());
        Ok(())
    })
    .unwrap();
    first.unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3000))]

    #[test]
    fn arbitrary_sealed_bodies_never_panic(body in vec(any::<u8>(), 0..700), lo: u64, hi: u64) {
        decode_every_way(&sealed(&body), lo, hi);
        decode_every_way(&body, lo, hi);
        // Marked as an Elias-Fano key block.
        let mut marked = body.clone();
        if marked.len() >= 4 {
            marked[2..4].fill(0);
            decode_every_way(&sealed(&marked), lo, hi);
        }
    }

    #[test]
    fn elias_fano_blocks_of_any_values_never_panic(
        n in 1usize..700,
        first: u64,
        l in 0u8..64,
        lows in vec(any::<u8>(), 0..6000),
        gaps in vec(any::<u8>(), 700),
        lo: u64,
        hi: u64,
    ) {
        // A block that passes every check of the header and the high area (exactly n - 1
        // high bits, the last byte not zero), with any values in them.
        let mut body = Vec::new();
        body.extend_from_slice(&(n as u16).to_le_bytes());
        body.extend_from_slice(&[0, 0]);
        body.extend_from_slice(&first.to_le_bytes());
        body.push(l);
        let low_bytes = ((n - 1) * usize::from(l)).div_ceil(8);
        body.extend((0..low_bytes).map(|i| lows.get(i).copied().unwrap_or(0)));
        let mut bit = 0usize;
        let mut highs = Vec::new();
        for (i, gap) in gaps.iter().take(n - 1).enumerate() {
            bit += usize::from(gap % 16) + usize::from(i > 0);
            highs.resize(bit / 8 + 1, 0);
            highs[bit / 8] |= 1 << (bit % 8);
        }
        body.extend_from_slice(&highs);
        decode_every_way(&sealed(&body), lo, hi);
    }

    #[test]
    fn mutated_key_blocks_never_panic(
        keys in vec(any::<u64>(), 1..400),
        edits in vec((any::<usize>(), any::<u8>()), 1..6),
        keep: usize,
        lo: u64,
        hi: u64,
        elias_fano: bool,
    ) {
        let codec = if elias_fano { keys::KeyCodec::EliasFano } else { keys::KeyCodec::Restarts };
        let block = key_block(codec, keys);
        decode_every_way(&mutated(&block, &edits, keep), lo, hi);
    }

    #[test]
    fn mutated_entry_blocks_never_panic(
        ids in vec((any::<u64>(), "[a-z0-9/]{1,30}"), 1..100),
        edits in vec((any::<usize>(), any::<u8>()), 1..6),
        keep: usize,
        hashed: bool,
    ) {
        let block = docs_block(ids, hashed);
        decode_every_way(&mutated(&block, &edits, keep), 0, u64::MAX);
    }
}
