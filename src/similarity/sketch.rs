//! The verification sketch: N bytes per document whose agreement estimates the Jaccard
//! similarity of two documents' word 3-shingle sets (the similarity `audit --verify-text`
//! computes exactly), so candidates found through the tables can be verified from the store.
//!
//! A sketch is k = 8N one-bit minwise hashes of the shingle set (b-bit minwise hashing with
//! b = 1, Li and König 2010): bit i agrees between two sets with probability (1 + J) / 2, so
//! J is estimated as 2 * (agreeing bits / k) - 1, with standard error sqrt((1 - J^2) / k)
//! (0.019 at J = 0.8 with 128 bytes, 0.009 with 512).
//!
//! The k minwise hashes come from one pass of hashing per round rather than k hash functions:
//! - **Rounds** (fast similarity sketching, Dahlgaard, Knudsen and Thorup 2017): in round r each
//!   shingle is hashed once more and thrown into one of the k bins with the value
//!   `r << 48 | 48 hash bits`; a bin keeps its least value. A value of round r beats every
//!   value of a later round, so a bin's value is the least over the set of a function of each
//!   shingle alone: a true minwise hash, whatever the set's size. Rounds stop when every bin
//!   holds a value, or after k / 128 rounds (later rounds cannot change a bin that holds one).
//! - **Densification** (Shrivastava 2017, "optimal densification"): a bin still empty after
//!   the rounds takes the value of the first bin that holds one along a probe sequence that
//!   depends on the bin only, so two sets agree there with probability J as well.
//! - Bit i is one bit of a hash of bin i's value salted with i, so bins that hold the same
//!   shingle still give independent bits.
//!
//! Rounds without a cap cost ~k ln k hashes for a small set (7,700 at 128 bytes); densification
//! alone costs ~k^2 / n probes for a set of n shingles; the cap of k / 128 rounds keeps both low
//! and measured as accurate as uncapped rounds on ../shared/eval (docs/design.md).
//!
//! Sketch bytes: bit i of the sketch is bit `i mod 8` (least significant first) of byte
//! `i / 8`. A text with no shingle has the all-zero sketch.

use std::cell::RefCell;
use std::sync::Mutex;

use crate::error::{Error, Result, Setting};
pub use crate::format::block::sketches::{MAX_BYTES, MIN_BYTES};

/// Words per shingle in verification and sketches (the usual near-duplicate definition).
pub const SHINGLE_WORDS: u8 = 3;

/// Bytes per sketch when `init --sketch` is given no size.
pub const DEFAULT_BYTES: u16 = 128;

/// Rounds of hashing before densification fills the bins still empty: one per this many bins
/// (8 at 128 bytes), a function of the size alone so that every sketch of a store is made
/// alike. Within a wide range of rounds the estimates are as good and cost about the same
/// (docs/design.md, "The verification sketch"); fewer rounds leave more bins to densification,
/// whose probes cost more.
const BINS_PER_ROUND: u64 = 128;
/// Bits of a bin's value that hold the round.
const VALUE_BITS: u32 = 48;
const VALUE_MASK: u64 = (1 << VALUE_BITS) - 1;
const EMPTY: u64 = u64::MAX;

/// Refuses a sketch size outside `MIN_BYTES..=MAX_BYTES`.
pub(crate) fn check_bytes(bytes: u16) -> Result<()> {
    if (MIN_BYTES..=MAX_BYTES).contains(&bytes) {
        return Ok(());
    }
    Err(Error::settings(
        Setting::SketchBytes,
        format!("{bytes} is not between {MIN_BYTES} and {MAX_BYTES}"),
    ))
}

/// The sketch of `bytes` bytes of a text's word 3-shingles, given the lower-cased text's
/// tokens (as the fingerprint schemes take them; fewer than 3 tokens are one shingle of them
/// all, as `--verify-text` counts them).
///
/// A shingle is hashed from its tokens' XXH3-64 hashes, each token hashed once: the set is
/// the one `--verify-text` compares (up to 2^-64 collisions), its hashes are not.
pub(crate) fn of_tokens(tokens: &[&str], bytes: u16) -> Vec<u8> {
    // Each token hashed once, in a pass of its own: then no shingle waits on the one before
    // (interleaved with the hashing, its branches held them up).
    let hashes: Vec<u64> = tokens
        .iter()
        .map(|t| xxhash_rust::xxh3::xxh3_64(t.as_bytes()))
        .collect();
    of_token_hashes(&hashes, bytes)
}

/// The sketch of the word 3-shingles of the tokens hashed to `hashes`.
fn of_token_hashes(hashes: &[u64], bytes: u16) -> Vec<u8> {
    #[cfg(target_arch = "x86_64")]
    if wide_multiplies() {
        // SAFETY: the CPU has the features, checked just above.
        return unsafe { of_token_hashes_wide(hashes, bytes) };
    }
    sketch_token_hashes(hashes, bytes, false)
}

/// Whether the CPU multiplies 64-bit lanes of vectors (AVX-512DQ, with AVX-512VL for the
/// narrower vectors) and has every other feature [`of_token_hashes_wide`] is compiled for: the
/// sketch then takes about a third less time. The bits are the same either way (tests compare
/// the two).
#[cfg(target_arch = "x86_64")]
fn wide_multiplies() -> bool {
    use std::arch::is_x86_feature_detected as has;
    // The features enabled below and those they imply (AVX-512F implies AVX2, FMA and F16C):
    // running code compiled for one the CPU lacks is undefined behaviour.
    has!("avx512f")
        && has!("avx512dq")
        && has!("avx512vl")
        && has!("avx2")
        && has!("fma")
        && has!("f16c")
        && has!("bmi1")
        && has!("bmi2")
}

/// [`of_token_hashes`] compiled for vectors of 64-bit multiplies ([`wide_multiplies`]).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512dq,avx512vl,avx2,fma,f16c,bmi1,bmi2")]
fn of_token_hashes_wide(hashes: &[u64], bytes: u16) -> Vec<u8> {
    sketch_token_hashes(hashes, bytes, true)
}

/// [`of_token_hashes`], with `vectors` in code compiled for them.
#[inline(always)]
fn sketch_token_hashes(hashes: &[u64], bytes: u16, vectors: bool) -> Vec<u8> {
    let words = usize::from(SHINGLE_WORDS);
    let shingles = match hashes.len() {
        0 => Vec::new(),
        n if n < words => vec![shingle(hashes)],
        n => {
            // Three slices zipped rather than windows: the compiler vectorizes it.
            let (first, second, third) = (&hashes[..n - 2], &hashes[1..n - 1], &hashes[2..]);
            first
                .iter()
                .zip(second)
                .zip(third)
                .map(|((&a, &b), &c)| shingle(&[a, b, c]))
                .collect()
        }
    };
    sketch_shingles(&shingles, bytes, vectors)
}

/// The hash of a shingle from its tokens' hashes: order matters, and shingles of different
/// lengths differ.
#[inline(always)]
fn shingle(tokens: &[u64]) -> u64 {
    const WEIGHTS: [u64; 3] = [
        0x9E37_79B9_7F4A_7C15,
        0xC2B2_AE3D_27D4_EB4F,
        0x1656_67B1_9E37_79F9,
    ];
    let sum = tokens
        .iter()
        .zip(WEIGHTS)
        .fold(tokens.len() as u64, |h, (&t, w)| {
            h.wrapping_add(t.wrapping_mul(w))
        });
    mix(sum)
}

/// The sketch of `bytes` bytes of a set of shingle hashes (any order; repeats change
/// nothing), with `vectors` in code compiled for them.
#[inline(always)]
fn sketch_shingles(shingles: &[u64], bytes: u16, vectors: bool) -> Vec<u8> {
    let k = usize::from(bytes) * 8;
    let mut out = vec![0u8; usize::from(bytes)];
    if shingles.is_empty() {
        return out;
    }
    // Repeats cost a throw each and change nothing: cheaper than sorting them away.
    let mut bins = vec![EMPTY; k];
    // A power of two of bins (the sizes users pick) takes a bin by a shift, the same bin as
    // the product's high bits.
    let filled = match k.is_power_of_two() {
        true => {
            let shift = 64 - k.trailing_zeros();
            throw_rounds(shingles, &mut bins, |x| (x >> shift) as usize, vectors)
        }
        false => throw_rounds(shingles, &mut bins, |x| bin_of(x, k), vectors),
    };
    set_bits(&bins, filled < k, &mut out);
    out
}

/// Throws every shingle into `bins` once a round, each bin keeping its least value, and
/// returns how many bins hold one. `bin` is [`bin_of`] for `bins.len()`. With `vectors` (code
/// compiled for 64-bit multiplies in vectors) a chunk of throws is hashed at once, then their
/// bins updated; without, that costs more than it saves.
#[inline(always)]
fn throw_rounds(
    shingles: &[u64],
    bins: &mut [u64],
    bin: impl Fn(u64) -> usize,
    vectors: bool,
) -> usize {
    let k = bins.len();
    let rounds = (k as u64 / BINS_PER_ROUND).max(1);
    // A set too small to fill every bin before the last round (a coupon collector needs about
    // k ln k throws) takes every round without counting.
    let may_fill_early = shingles.len() as f64 * rounds as f64 > k as f64 * (k as f64).ln();
    // Branch-free: EMPTY is u64::MAX, above every value.
    let keep_least = |bin: &mut u64, value: u64| *bin = (*bin).min(value);
    let mut filled = 0;
    for round in 0..rounds {
        let salt = mix(round ^ 0x243F_6A88_85A3_08D3);
        let base = round << VALUE_BITS;
        if vectors {
            for chunk in shingles.chunks(THROWS_AT_ONCE) {
                let mut at = [0u32; THROWS_AT_ONCE];
                let mut values = [0u64; THROWS_AT_ONCE];
                for ((&h, at), value) in chunk.iter().zip(&mut at).zip(&mut values) {
                    let x = throw(h, salt);
                    (*at, *value) = (bin(x) as u32, base | x & VALUE_MASK);
                }
                for (&at, &value) in at[..chunk.len()].iter().zip(&values) {
                    keep_least(&mut bins[at as usize], value);
                }
            }
        } else {
            for &h in shingles {
                let x = throw(h, salt);
                keep_least(&mut bins[bin(x)], base | x & VALUE_MASK);
            }
        }
        // Counted after the round (a pass the compiler vectorizes) rather than at each throw,
        // which costs the throws a third more.
        if may_fill_early || round + 1 == rounds {
            filled = bins.iter().map(|&v| usize::from(v != EMPTY)).sum();
            if filled == k {
                break;
            }
        }
    }
    filled
}

/// Throws hashed at once, with vectors.
const THROWS_AT_ONCE: usize = 64;

/// The hash of a throw of shingle `h` in the round salted `salt`: its high bits pick the bin,
/// its low [`VALUE_BITS`] are the value. One multiply per throw: `h` is already a strong hash,
/// the salt makes each round's bins another function of it, and the high bits of a product
/// depend on every bit.
#[inline(always)]
fn throw(h: u64, salt: u64) -> u64 {
    let x = (h ^ salt).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    x ^ (x >> 29)
}

/// Bin `i`'s bit: the top bit of a hash of its value salted with i, so that bins holding the
/// same shingle still give independent bits.
#[inline(always)]
fn bit(value: u64, i: usize) -> u64 {
    mix(value ^ (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)) >> 63
}

/// Sets bit i of `out` to [`bit`] of bin i's value, an empty bin's taken by densification
/// first when `densify`. A word of 64 bits is gathered in a register and stored once (a byte
/// updated bit by bit waits on its last store eight times).
#[inline(always)]
fn set_bits(bins: &[u64], densify: bool, out: &mut [u8]) {
    let probes = densify.then(|| probe_table(bins.len()));
    let mut densified_chunk = [0u64; 64];
    for (w, (chunk, bytes)) in bins.chunks(64).zip(out.chunks_mut(8)).enumerate() {
        let values = match probes {
            None => chunk,
            Some(probes) => {
                let values = &mut densified_chunk[..chunk.len()];
                values.copy_from_slice(chunk);
                // The chunk's empty bins as a mask, so that only they are visited.
                let mut empty = chunk.iter().enumerate().fold(0u64, |mask, (j, &value)| {
                    mask | u64::from(value == EMPTY) << j
                });
                while empty != 0 {
                    let j = empty.trailing_zeros() as usize;
                    empty &= empty - 1;
                    values[j] = densified(bins, w * 64 + j, probes);
                }
                values
            }
        };
        let word = values
            .iter()
            .enumerate()
            .fold(0u64, |word, (j, &value)| word | bit(value, w * 64 + j) << j);
        bytes.copy_from_slice(&word.to_le_bytes()[..bytes.len()]);
    }
}

/// Optimal densification: empty bin `i` takes the value of the first bin that holds one along
/// its own probe sequence (among the bins as the rounds left them), whose first attempts are
/// in `probes` ([`probe_table`]).
#[inline(always)]
fn densified(bins: &[u64], i: usize, probes: &[u16]) -> u64 {
    let tabled = &probes[i * TABLED_PROBES..][..TABLED_PROBES];
    // The first attempts without a branch: with many bins empty, whether each finds a value
    // is a coin toss, and mispredicted branches would cost more than the loads.
    let mut first = EMPTY;
    for &bin in tabled[..BRANCH_FREE_PROBES].iter().rev() {
        let v = bins[usize::from(bin)];
        first = if v != EMPTY { v } else { first };
    }
    match first {
        EMPTY => walk(bins, i, &tabled[BRANCH_FREE_PROBES..]),
        value => value,
    }
}

/// The first value along `tabled`, then along bin `i`'s attempts past the table (a sketch of
/// a handful of shingles).
fn walk(bins: &[u64], i: usize, tabled: &[u16]) -> u64 {
    tabled
        .iter()
        .map(|&bin| bins[usize::from(bin)])
        .find(|&v| v != EMPTY)
        .unwrap_or_else(|| {
            (TABLED_PROBES as u64 + 1..)
                .map(|attempt| bins[probe(i, attempt, bins.len())])
                .find(|&v| v != EMPTY)
                .expect("some bin holds a value")
        })
}

/// Attempt `attempt` (from 1) of bin `i`'s densification probe sequence among `k` bins.
fn probe(i: usize, attempt: u64, k: usize) -> usize {
    bin_of(mix((i as u64) << 32 | attempt), k)
}

/// Attempts of each bin's probe sequence kept in a [`probe_table`]: a sketch of a few dozen
/// shingles or more rarely walks past them.
const TABLED_PROBES: usize = 64;

/// Tabled attempts looked at for every empty bin without a branch: with a third of the bins
/// filled (a document of a few dozen shingles) all of them miss one time in 25.
const BRANCH_FREE_PROBES: usize = 8;

/// The first [`TABLED_PROBES`] attempts of every bin's probe sequence among `k` bins, bin i's
/// at `i * TABLED_PROBES..`. The sequences depend on `k` alone, so each size's table is
/// computed once per process and kept for its life (2 bytes per attempt: 128 KiB at 128-byte
/// sketches, 1 MiB at 1,024; a process sketches at one size, tune at a few); walking it costs
/// a load per attempt where computing one costs three multiplications, and a short document's
/// sketch makes thousands of attempts.
fn probe_table(k: usize) -> &'static [u16] {
    type Tables = Vec<(usize, &'static [u16])>;
    static TABLES: Mutex<Tables> = Mutex::new(Vec::new());
    thread_local! {
        /// The tables this thread has used: the lock is taken once per size and thread.
        static USED: RefCell<Tables> = const { RefCell::new(Vec::new()) };
    }
    let find = |tables: &Tables| tables.iter().find(|(size, _)| *size == k).map(|&(_, t)| t);
    let shared = || {
        let mut tables = TABLES.lock().unwrap_or_else(|e| e.into_inner());
        find(&tables).unwrap_or_else(|| {
            let table: Box<[u16]> = (0..k)
                .flat_map(|i| {
                    (1..=TABLED_PROBES as u64).map(move |attempt| {
                        u16::try_from(probe(i, attempt, k)).expect("at most 8,192 bins")
                    })
                })
                .collect();
            let table: &'static [u16] = Box::leak(table);
            tables.push((k, table));
            table
        })
    };
    USED.try_with(|used| {
        let known = find(&used.borrow());
        known.unwrap_or_else(|| {
            let table = shared();
            used.borrow_mut().push((k, table));
            table
        })
    })
    // A thread's locals being torn down: the shared list alone.
    .unwrap_or_else(|_| shared())
}

/// The Jaccard similarity two sketches of the same size estimate: 2 * (agreeing bits / bits)
/// - 1, at least 0. Sketches of different sizes are never compared (a store has one size).
pub fn estimate(a: &[u8], b: &[u8]) -> f64 {
    debug_assert_eq!(a.len(), b.len(), "sketches of one size");
    estimate_of(differing_bits(a, b), a.len().min(b.len()) * 8)
}

/// The bits in which `a` and `b` differ: whole words by popcount, then the bytes left.
fn differing_bits(a: &[u8], b: &[u8]) -> u32 {
    let words = a.len().min(b.len()) / 8 * 8;
    let tail = a[words..].iter().zip(&b[words..]);
    differing_words(&a[..words], &b[..words]) + tail.map(|(p, q)| (p ^ q).count_ones()).sum::<u32>()
}

/// The estimate of sketches of `bits` bits that differ in `differ` of them.
fn estimate_of(differ: u32, bits: usize) -> f64 {
    if bits == 0 {
        return 0.0;
    }
    (1.0 - 2.0 * f64::from(differ) / bits as f64).max(0.0)
}

/// Sketches of one size side by side, one row per document (rows padded with zero bytes to
/// whole 64-bit words, which never differ), so that comparing two is a run of XORs and
/// popcounts over memory already in place: an audit compares millions of pairs.
#[derive(Debug)]
pub(crate) struct SketchTable {
    /// Bytes per sketch.
    bytes: usize,
    /// Bytes per row: `bytes` rounded up to whole words.
    stride: usize,
    data: Vec<u8>,
    /// [`estimate_of`] for each count of differing bits, 0..=8 * bytes: an audit asks for
    /// millions of estimates, and a look here costs less than the division.
    estimates: Box<[f64]>,
}

impl SketchTable {
    /// A table of `rows` all-zero sketches of `bytes` bytes.
    pub(crate) fn new(bytes: usize, rows: usize) -> Self {
        let mut zeros = SketchRows::new(bytes);
        zeros.data = vec![0; zeros.stride * rows];
        zeros.into_table()
    }

    /// The number of rows.
    pub(crate) fn len(&self) -> usize {
        self.data.len() / self.stride.max(1)
    }

    /// The rows' bytes, each `stride` long, its sketch in the first `bytes`: for readers
    /// that fill them.
    pub(crate) fn rows_mut(&mut self) -> (&mut [u8], usize) {
        (&mut self.data, self.stride)
    }

    /// Sketch `i`.
    pub(crate) fn sketch(&self, i: usize) -> &[u8] {
        &self.data[i * self.stride..][..self.bytes]
    }

    /// [`estimate`] of sketches `a` and `b`: the same value, bit for bit.
    pub(crate) fn estimate(&self, a: usize, b: usize) -> f64 {
        let x = &self.data[a * self.stride..][..self.stride];
        let y = &self.data[b * self.stride..][..self.stride];
        // Padding bytes are zero in every row: at most 8 * bytes bits differ.
        self.estimates[differing_words(x, y) as usize]
    }
}

/// Sketches of `bytes` bytes gathered a row at a time, laid out as a [`SketchTable`]'s rows.
#[derive(Debug)]
pub(crate) struct SketchRows {
    bytes: usize,
    /// `bytes` rounded up to whole 64-bit words.
    stride: usize,
    data: Vec<u8>,
}

impl SketchRows {
    /// No rows yet, of sketches of `bytes` bytes.
    pub(crate) fn new(bytes: usize) -> Self {
        Self::with_capacity(bytes, 0)
    }

    /// No rows yet, room for `rows`.
    pub(crate) fn with_capacity(bytes: usize, rows: usize) -> Self {
        let stride = bytes.div_ceil(8) * 8;
        SketchRows {
            bytes,
            stride,
            data: Vec::with_capacity(stride * rows),
        }
    }

    /// Adds `sketch`, which must have `bytes` bytes, as the next row.
    pub(crate) fn push(&mut self, sketch: &[u8]) {
        assert_eq!(sketch.len(), self.bytes, "a sketch of the table's size");
        self.data.extend_from_slice(sketch);
        self.data
            .resize(self.data.len() + self.stride - self.bytes, 0);
    }

    /// Adds the rows of `other` (of the same size) after these.
    pub(crate) fn append(&mut self, other: SketchRows) {
        assert_eq!(other.bytes, self.bytes, "sketches of one size");
        self.data.extend_from_slice(&other.data);
    }

    /// Row `i`'s sketch.
    pub(crate) fn row(&self, i: usize) -> &[u8] {
        &self.data[i * self.stride..][..self.bytes]
    }

    /// The table of these rows.
    pub(crate) fn into_table(self) -> SketchTable {
        let bits = self.bytes * 8;
        SketchTable {
            bytes: self.bytes,
            stride: self.stride,
            data: self.data,
            estimates: (0..=bits as u32)
                .map(|differ| estimate_of(differ, bits))
                .collect(),
        }
    }
}

/// The bits in which `x` and `y` (whole 64-bit words) differ, with the CPU's popcount
/// instruction where it has one: without it (the x86-64 baseline lacks it) a popcount is a
/// dozen instructions, and an audit compares millions of sketches.
fn differing_words(x: &[u8], y: &[u8]) -> u32 {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("popcnt") {
        // SAFETY: the CPU has POPCNT, checked just above.
        return unsafe { differing_words_popcnt(x, y) };
    }
    differing_words_portable(x, y)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "popcnt")]
fn differing_words_popcnt(x: &[u8], y: &[u8]) -> u32 {
    differing_words_portable(x, y)
}

#[inline(always)]
fn differing_words_portable(x: &[u8], y: &[u8]) -> u32 {
    let word = |w: &[u8]| u64::from_le_bytes(w.try_into().expect("8 bytes"));
    x.chunks_exact(8)
        .zip(y.chunks_exact(8))
        .map(|(p, q)| (word(p) ^ word(q)).count_ones())
        .sum()
}

/// The bin of a hash: its high bits scaled to `0..k` (k need not be a power of two).
fn bin_of(x: u64, k: usize) -> usize {
    ((u128::from(x) * k as u128) >> 64) as usize
}

/// splitmix64's finaliser: every input bit moves every output bit.
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The sketch as first written (every probe computed): the definition the tabled probes
    /// must keep bit for bit, since stored sketches are compared with new ones.
    fn of_shingles_as_defined(shingles: &[u64], bytes: u16) -> Vec<u8> {
        let k = usize::from(bytes) * 8;
        let mut out = vec![0u8; usize::from(bytes)];
        if shingles.is_empty() {
            return out;
        }
        let mut bins = vec![EMPTY; k];
        let rounds = (k as u64 / BINS_PER_ROUND).max(1);
        for round in 0..rounds {
            let salt = mix(round ^ 0x243F_6A88_85A3_08D3);
            for &h in shingles {
                let x = (h ^ salt).wrapping_mul(0x9E37_79B9_7F4A_7C15);
                let x = x ^ (x >> 29);
                let value = round << VALUE_BITS | (x & ((1 << VALUE_BITS) - 1));
                let bin = &mut bins[bin_of(x, k)];
                *bin = (*bin).min(value);
            }
        }
        for (i, &own) in bins.iter().enumerate() {
            let value = if own != EMPTY {
                own
            } else {
                (1u64..)
                    .map(|attempt| bins[bin_of(mix((i as u64) << 32 | attempt), k)])
                    .find(|&v| v != EMPTY)
                    .unwrap()
            };
            let bit = mix(value ^ (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)) >> 63;
            out[i / 8] |= (bit as u8) << (i % 8);
        }
        out
    }

    /// The sketch of a set of shingle hashes, as the portable code computes it.
    fn of_shingles(shingles: &[u64], bytes: u16) -> Vec<u8> {
        sketch_shingles(shingles, bytes, false)
    }

    /// The shingles of token hashes as first written: each window of three, rolled along.
    fn shingles_as_defined(hashes: &[u64]) -> Vec<u64> {
        match hashes.len() {
            0 => Vec::new(),
            1 | 2 => vec![shingle(hashes)],
            _ => hashes.windows(3).map(shingle).collect(),
        }
    }

    /// The bits of the definition from every path: sets of shingles and token hashes, throws
    /// one at a time and a chunk at a time (in portable code, on every machine), and the
    /// AVX-512 form where the CPU has it. 66 and 67 tokens are one chunk of shingles and one
    /// more.
    #[test]
    fn sketches_are_as_defined_at_every_size() {
        for bytes in [MIN_BYTES, 90, 100, 128, 200, 512, MAX_BYTES] {
            for n in [
                0usize, 1, 2, 3, 7, 20, 48, 65, 66, 67, 130, 600, 3000, 20_000,
            ] {
                for seed in 0..3u64 {
                    let hashes: Vec<u64> = (0..n as u64).map(|i| mix(seed << 40 ^ i)).collect();
                    let expected = of_shingles_as_defined(&hashes, bytes);
                    for vectors in [false, true] {
                        let got = sketch_shingles(&hashes, bytes, vectors);
                        assert_eq!(got, expected, "{n} shingles, {bytes} B, {vectors}");
                    }
                    let expected = of_shingles_as_defined(&shingles_as_defined(&hashes), bytes);
                    for vectors in [false, true] {
                        let got = sketch_token_hashes(&hashes, bytes, vectors);
                        assert_eq!(got, expected, "{n} tokens, {bytes} B, {vectors}");
                    }
                    // The dispatch: the AVX-512 form where the CPU has it.
                    let got = of_token_hashes(&hashes, bytes);
                    assert_eq!(got, expected, "{n} tokens, {bytes} B");
                }
            }
        }
    }

    /// Two sets of `size` elements sharing enough of them for Jaccard ~`j`, from `seed`.
    fn pair(size: usize, j: f64, seed: u64) -> (Vec<u64>, Vec<u64>, f64) {
        // |A ∩ B| = c, |A ∪ B| = 2 size - c, J = c / (2 size - c): c = 2 size J / (1 + J).
        let common = ((2.0 * size as f64 * j) / (1.0 + j)).round() as usize;
        let element = |i: u64| mix(seed.wrapping_mul(0x1000_0000_01B3) ^ i);
        let a: Vec<u64> = (0..size as u64).map(element).collect();
        let mut b: Vec<u64> = (0..common as u64).map(element).collect();
        b.extend((0..(size - common) as u64).map(|i| element(1 << 40 | i)));
        let exact = common as f64 / (2 * size - common) as f64;
        (a, b, exact)
    }

    /// Mean absolute error and standard deviation of the error over `trials` pairs.
    fn errors(size: usize, j: f64, bytes: u16, trials: u64) -> (f64, f64) {
        let (mut abs, mut sq) = (0.0, 0.0);
        for t in 0..trials {
            let (a, b, exact) = pair(size, j, t * 7919 + size as u64);
            let e = estimate(&of_shingles(&a, bytes), &of_shingles(&b, bytes)) - exact;
            abs += e.abs();
            sq += e * e;
        }
        (abs / trials as f64, (sq / trials as f64).sqrt())
    }

    /// The goals of the estimator: on set pairs of known Jaccard 0.5..1.0, mean absolute
    /// error <= 0.015 with 128 bytes; standard error at J = 0.8 <= 0.02 with 128 bytes and
    /// <= 0.01 with 512 bytes, for sets of 50 to 5,000 shingles (web documents' usual range).
    /// The theoretical standard error of 1-bit minwise hashes
    /// at J = 0.8 is 0.0188 with 128 bytes and 0.0094 with 512.
    #[test]
    fn the_estimator_meets_its_accuracy_goals() {
        for (bytes, most, sizes) in [
            (128u16, 0.02, &[50usize, 300, 1000, 5000][..]),
            (512, 0.01, &[100, 300, 1000, 5000][..]),
        ] {
            for &size in sizes {
                let (_, se) = errors(size, 0.8, bytes, 300);
                assert!(
                    se <= most,
                    "{bytes} B, {size} shingles: standard error {se:.4}"
                );
            }
        }
        // J evenly over 0.5..=1.0, sets of 50 to 5,000 shingles.
        let (mut total, mut n) = (0.0, 0);
        for size in [50usize, 300, 1000, 5000] {
            for step in 0..=10 {
                total += errors(size, 0.5 + 0.05 * f64::from(step), 128, 40).0;
                n += 1;
            }
        }
        let mae = total / f64::from(n);
        assert!(mae <= 0.015, "MAE over J 0.5..1.0 at 128 bytes: {mae:.4}");
    }

    #[test]
    fn equal_sets_agree_and_disjoint_ones_do_not() {
        let (a, _, _) = pair(400, 0.8, 1);
        let mut shuffled = a.clone();
        shuffled.reverse();
        shuffled.extend_from_slice(&a[..50]);
        let s = of_shingles(&a, 128);
        assert_eq!(s, of_shingles(&shuffled, 128), "only the set counts");
        assert_eq!(estimate(&s, &s), 1.0);
        let (c, _, _) = pair(400, 0.8, 2);
        assert!(estimate(&s, &of_shingles(&c, 128)) < 0.15);
        assert_eq!(of_shingles(&Vec::new(), 64), vec![0; 64]);
        // Any size in range, also one that is not a power of two.
        let (x, y, exact) = pair(2000, 0.9, 3);
        let e = estimate(&of_shingles(&x, 100), &of_shingles(&y, 100));
        assert!((e - exact).abs() < 0.06, "{e} vs {exact}");
    }

    #[test]
    fn a_table_estimates_as_the_bytes_do() {
        for bytes in [64u16, 100, 128, 1000] {
            let sketches: Vec<Vec<u8>> = (0..6)
                .map(|s| {
                    let (a, b, _) = pair(300, 0.8, s);
                    of_shingles(if s % 2 == 0 { &a } else { &b }, bytes)
                })
                .collect();
            let mut table = SketchTable::new(usize::from(bytes), sketches.len());
            let (rows, stride) = table.rows_mut();
            for (row, s) in rows.chunks_mut(stride).zip(&sketches) {
                row[..s.len()].copy_from_slice(s);
            }
            for (i, x) in sketches.iter().enumerate() {
                assert_eq!(table.sketch(i), &x[..]);
                for (j, y) in sketches.iter().enumerate() {
                    assert_eq!(table.estimate(i, j), estimate(x, y));
                }
            }
        }
    }

    #[test]
    fn sizes_outside_the_range_are_refused() {
        assert!(check_bytes(63).is_err());
        assert!(check_bytes(1025).is_err());
        assert!(check_bytes(64).is_ok() && check_bytes(1024).is_ok());
    }
}
