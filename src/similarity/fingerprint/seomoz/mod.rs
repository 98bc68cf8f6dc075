//! seomoz simhash-py 0.4, bit for bit, so its users can bring their stored fingerprints.
//!
//! - `unsigned_hash(bytes)`: the first 8 bytes of MD5(bytes), read big-endian.
//! - `compute(hashes)`: bit i (0 = least significant) counts +1 for each hash with bit i set
//!   and -1 for each with it clear (repeats count each time); set iff the count is > 0;
//!   no hashes -> 0.
//! - text (simhash-py's README pipeline): tokens = the text split on whitespace as Python's
//!   `str.split()` does; every window of 4 consecutive tokens joined by one space, UTF-8
//!   encoded, hashed with `unsigned_hash`, then `compute`. Fewer than 4 tokens -> 0.
//! - `find_all(hashes, number_of_blocks, different_bits)`: every pair of distinct values within
//!   `different_bits` bits, as (smaller, larger); simhash-cpp's argument checks. Any valid
//!   (blocks, bits) gives the same pairs, so blocks only choose the tables (or, where this
//!   engine's tables cannot take them, a scan of all pairs gives the same answer).
//! - `find_clusters`: the connected components of `find_all`'s pairs.

use md5::{Digest, Md5};

#[cfg(feature = "seomoz")]
mod pairs;
#[cfg(feature = "seomoz")]
pub use pairs::{find_all, find_clusters};

/// Tokens per shingle in simhash-py's README pipeline.
pub(crate) const SHINGLE: usize = 4;

/// The first 8 bytes of the MD5 digest of `bytes`, big-endian.
///
/// ```
/// assert_eq!(simhashdb::seomoz::unsigned_hash(b"hello"), 0x5d41402abc4b2a76);
/// ```
pub fn unsigned_hash(bytes: &[u8]) -> u64 {
    let digest = Md5::digest(bytes);
    u64::from_be_bytes(digest[..8].try_into().expect("MD5 has 16 bytes"))
}

/// simhash-py's `compute`: the bit vote over `hashes`, repeats included.
///
/// ```
/// use simhashdb::seomoz::compute;
/// assert_eq!(compute(&[0b011, 0b110, 0b010]), 0b010); // bit 1 in three, bits 0 and 2 in one
/// assert_eq!(compute(&[]), 0);
/// ```
pub fn compute(hashes: &[u64]) -> u64 {
    super::vote(hashes)
}

/// Whether Python's `str.isspace()` holds: Unicode White_Space plus the four ASCII
/// information separators U+001C..U+001F, which Python also splits on.
fn is_python_space(c: char) -> bool {
    c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c)
}

/// The fingerprint simhash-py's README pipeline gives `text`.
///
/// ```
/// let seomoz = simhashdb::Scheme::from_name("seomoz")?;
/// assert_eq!(seomoz.fingerprint("The quick brown fox jumps over the lazy dog"), 0xa103cb172b8a9085);
/// assert_eq!(seomoz.fingerprint("three tokens only"), 0);
/// # Ok::<(), simhashdb::Error>(())
/// ```
pub(crate) fn fingerprint(text: &str) -> u64 {
    let tokens: Vec<&str> = text
        .split(is_python_space)
        .filter(|t| !t.is_empty())
        .collect();
    let hashes: Vec<u64> = tokens
        .windows(SHINGLE)
        .map(|w| unsigned_hash(w.join(" ").as_bytes()))
        .collect();
    compute(&hashes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_like_python_str_split() {
        // U+001F splits in Python, not in Rust's split_whitespace; U+200B splits in neither.
        let a = fingerprint("a\u{1f}b c d");
        assert_eq!(a, fingerprint("a b c d"));
        assert_ne!(fingerprint("a\u{200b}b c d e"), fingerprint("a b c d e"));
        assert_eq!(
            fingerprint("  a\t\tb\nc\u{3000}d  "),
            fingerprint("a b c d")
        );
    }

    #[test]
    fn four_tokens_are_one_shingle() {
        assert_eq!(fingerprint("a b c d"), unsigned_hash(b"a b c d"));
    }
}
