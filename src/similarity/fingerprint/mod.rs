//! Fingerprints from text: tokens, shingles, a stable 64-bit hash per shingle, and either the
//! simhash bit vote (Charikar 2002) or a 1-bit minhash, whose bits keep near-duplicates closer.
//!
//! Two families of [`Scheme`]:
//! - Shingles (`words-N-WEIGHT`, `chars-N-WEIGHT`), simhashdb's own: text lower-cased, tokens are the maximal runs of
//!   alphanumeric characters (Unicode `Alphabetic` or `Numeric`; everything else separates),
//!   features are word w-grams (tokens joined by one space) or character n-grams of the tokens
//!   joined by single spaces, each hashed with XXH3-64 (seed 0) of its UTF-8 bytes. The bits
//!   come from the distinct features by 1-bit one-permutation minhash (`minhash`, the
//!   default, see [`minhash`]), or from the simhash bit vote over each distinct feature once
//!   (`set`) or each occurrence (`count`).
//!   A text with fewer tokens (or characters) than one shingle is one shingle of all of them.
//! - `seomoz`: seomoz simhash-py 0.4 bit for bit (see `seomoz`).
//!
//! In the bit vote, bit i (0 = least significant) is set iff the weights of the features whose
//! hash has bit i set outweigh those whose hash has it clear. A text with no features is 0.
//! Every hash here is a fixed published function: fingerprints are the same across versions,
//! platforms and runs.

pub(crate) mod hex;
pub mod minhash;
pub mod seomoz;
mod tokens;

use std::fmt;

use crate::error::{Error, Result};
use crate::similarity::sketch;

pub(crate) use tokens::tokens;

/// What a feature is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Features {
    /// w consecutive tokens joined by one space.
    Words(u8),
    /// n consecutive characters of the tokens joined by single spaces.
    Chars(u8),
}

/// How much each feature counts in the bit vote.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Weighting {
    /// Each distinct feature once: the fingerprint approximates the angle between feature sets.
    Set,
    /// Each feature as often as it occurs.
    Count,
    /// Each distinct feature once, in a 1-bit one-permutation minhash instead of the bit vote
    /// (a one-permutation minhash of one bit per position): bits differ with probability ~(1 - J) / 2 for feature sets of
    /// Jaccard J, against ~arccos(2J / (1 + J)) / pi for the vote.
    MinHash,
}

/// How text becomes a fingerprint (see the module docs), named `seomoz` or `KIND-N-WEIGHT`
/// such as `words-2-minhash` ([`Scheme::parse`], [`Scheme::name`]). Part of a store's
/// settings: text inserted or queried is always fingerprinted with the store's scheme, and
/// in a store that keeps verification sketches also sketched ([`Scheme::with_sketch`],
/// [`Scheme::document`]).
///
/// ```
/// use simhashdb::Scheme;
///
/// let scheme = Scheme::from_name("words-2-minhash")?;
/// let a = scheme.fingerprint("the quick brown fox jumps over the lazy dog by the river bank");
/// let b = scheme.fingerprint("the quick brown fox jumps over the lazy dog by the river banks");
/// let c = scheme.fingerprint("an entirely different sentence about storing fingerprints");
/// assert!((a ^ b).count_ones() < (a ^ c).count_ones()); // near texts, near fingerprints
/// # Ok::<(), simhashdb::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Scheme {
    kind: Kind,
    /// Bytes of the sketch each document also gets; 0 for none.
    sketch_bytes: u16,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    /// simhashdb's tokenizer, shingles and XXH3-64 hashes.
    Shingles {
        /// What a feature is.
        features: Features,
        /// How features make the bits.
        weighting: Weighting,
    },
    /// seomoz simhash-py 0.4's README pipeline.
    Seomoz,
}

/// Words per shingle of the default scheme.
const DEFAULT_WORDS: u8 = 2;
/// Characters per n-gram when `chars` is chosen without a size.
const DEFAULT_CHARS: u8 = 5;

impl Default for Scheme {
    /// Word 2-shingles in a 1-bit minhash (`words-2-minhash`): chosen on ../shared/eval
    /// (docs/quality.md) for the best F1 at the default K = 3 (0.886), and the best two-stage
    /// quality (candidates at K = 8, then exact Jaccard: 0.998).
    fn default() -> Self {
        Scheme::shingles(Features::Words(DEFAULT_WORDS), Weighting::MinHash)
    }
}

impl fmt::Display for Scheme {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.parts() {
            None => write!(f, "seomoz"),
            Some((kind, n, weight)) => write!(f, "{kind}, shingle {n}, weight {weight}"),
        }
    }
}

impl Scheme {
    /// seomoz simhash-py 0.4's README pipeline.
    pub(crate) const SEOMOZ: Scheme = Scheme {
        kind: Kind::Seomoz,
        sketch_bytes: 0,
    };

    /// simhashdb's own: `features` of the text, hashed, made bits by `weighting`.
    pub(crate) const fn shingles(features: Features, weighting: Weighting) -> Scheme {
        Scheme {
            kind: Kind::Shingles {
                features,
                weighting,
            },
            sketch_bytes: 0,
        }
    }

    /// The scheme a store records under `name`: None for stores that never recorded one
    /// (made by format v1). A name this build does not know is an error, never a silent
    /// fallback.
    pub(crate) fn recorded(name: Option<&str>) -> Result<Option<Scheme>> {
        name.map(Scheme::from_name).transpose()
    }

    /// The scheme text given to a store that records `name` is fingerprinted with: an error
    /// when the store records none (stores made by format v1 take fingerprints, not text) or
    /// one this build does not know.
    pub(crate) fn for_text(name: Option<&str>) -> Result<Scheme> {
        Scheme::recorded(name)?.ok_or_else(|| {
            Error::Scheme(
                "the store records no fingerprint scheme (it was made before schemes were \
                 recorded), so it takes fingerprints, not text"
                    .into(),
            )
        })
    }

    /// The scheme named `name` (`words`, `chars` or `seomoz`) with shingle size `shingle` and
    /// weighting `weight` (`set` or `count`); the seomoz scheme takes neither.
    pub fn from_parts(name: &str, shingle: Option<u8>, weight: Option<&str>) -> Result<Self> {
        let weighting = match weight {
            None | Some("minhash") => Weighting::MinHash,
            Some("set") => Weighting::Set,
            Some("count") => Weighting::Count,
            Some(other) => {
                return Err(Error::Scheme(format!(
                    "unknown weighting {other:?}: use set, count or minhash"
                )))
            }
        };
        let check = |n: u8| {
            if n == 0 {
                Err(Error::Scheme("the shingle size must be at least 1".into()))
            } else {
                Ok(n)
            }
        };
        match name {
            "seomoz" if shingle.is_some() || weight.is_some() => Err(Error::Scheme(
                "the seomoz scheme has fixed shingles (4 words) and weights".into(),
            )),
            "seomoz" => Ok(Scheme::SEOMOZ),
            "words" => Ok(Scheme::shingles(
                Features::Words(check(shingle.unwrap_or(DEFAULT_WORDS))?),
                weighting,
            )),
            "chars" => Ok(Scheme::shingles(
                Features::Chars(check(shingle.unwrap_or(DEFAULT_CHARS))?),
                weighting,
            )),
            other => Err(Error::Scheme(format!(
                "unknown scheme {other:?}: this build knows words, chars and seomoz"
            ))),
        }
    }

    /// The scheme users name with `name`, `shingle` and `weight`, as every client takes them:
    /// nothing given is the default scheme; a full name such as `words-3-set` or `seomoz`
    /// ([`Scheme::from_name`]) stands alone; otherwise `name` (default `words`) with
    /// [`Scheme::from_parts`].
    ///
    /// ```
    /// use simhashdb::Scheme;
    /// assert_eq!(Scheme::parse(None, None, None).unwrap(), Scheme::default());
    /// assert_eq!(Scheme::parse(Some("words-2-minhash"), None, None).unwrap(), Scheme::default());
    /// assert_eq!(Scheme::parse(Some("words"), Some(2), None).unwrap(), Scheme::default());
    /// assert!(Scheme::parse(Some("words-2-minhash"), Some(3), None).is_err());
    /// ```
    pub fn parse(name: Option<&str>, shingle: Option<u8>, weight: Option<&str>) -> Result<Self> {
        match name {
            None if shingle.is_none() && weight.is_none() => Ok(Scheme::default()),
            Some(full) if full.contains('-') => {
                if shingle.is_some() || weight.is_some() {
                    return Err(Error::Scheme(format!(
                        "scheme {full:?} names its shingle and weight already: give shingle \
                         and weight only with words or chars"
                    )));
                }
                Scheme::from_name(full)
            }
            name => Scheme::from_parts(name.unwrap_or("words"), shingle, weight),
        }
    }

    /// The scheme's name as a store records it: `seomoz`, or `KIND-N-WEIGHT` such as
    /// `words-2-minhash` or `chars-5-count`. [`Scheme::from_name`] reads it back.
    pub fn name(&self) -> String {
        match self.parts() {
            None => "seomoz".to_string(),
            Some((kind, n, weight)) => format!("{kind}-{n}-{weight}"),
        }
    }

    /// The kind, shingle size and weighting of a shingle scheme, as named on the command
    /// line; None for seomoz.
    fn parts(&self) -> Option<(&'static str, u8, &'static str)> {
        let Kind::Shingles {
            features,
            weighting,
        } = self.kind
        else {
            return None;
        };
        let (kind, n) = match features {
            Features::Words(n) => ("words", n),
            Features::Chars(n) => ("chars", n),
        };
        let weight = match weighting {
            Weighting::Set => "set",
            Weighting::Count => "count",
            Weighting::MinHash => "minhash",
        };
        Some((kind, n, weight))
    }

    /// The scheme a store recorded as `name` (see [`Scheme::name`]); an error names a scheme
    /// this build does not know.
    ///
    /// ```
    /// use simhashdb::Scheme;
    /// assert_eq!(Scheme::from_name("words-2-minhash").unwrap(), Scheme::default());
    /// assert!(Scheme::from_name("minhash-3-set").is_err());
    /// ```
    pub fn from_name(name: &str) -> Result<Self> {
        let unknown = || {
            Error::Scheme(format!(
                "fingerprint scheme {name:?} is not known to this build (it knows seomoz and \
                 words-N-WEIGHT and chars-N-WEIGHT, WEIGHT one of minhash, set, count)"
            ))
        };
        if name == "seomoz" {
            return Ok(Scheme::SEOMOZ);
        }
        let mut parts = name.split('-');
        let (Some(kind), Some(n), Some(weight), None) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return Err(unknown());
        };
        // Only the canonical spelling: a name must round-trip exactly.
        let n: u8 = n.parse().map_err(|_| unknown())?;
        if !matches!(weight, "set" | "count" | "minhash") || !matches!(kind, "words" | "chars") {
            return Err(unknown());
        }
        let scheme = Scheme::from_parts(kind, Some(n), Some(weight)).map_err(|_| unknown())?;
        if scheme.name() != name {
            return Err(unknown());
        }
        Ok(scheme)
    }

    /// The most bytes of text a document may have: past this a text is refused rather than
    /// tokenized (its lower-cased copy and its tokens would take several times its size, on
    /// every core at once), and no near-duplicate detection needs that much of one page.
    pub const MAX_TEXT_BYTES: usize = 64 << 20;

    /// Refuses a text longer than [`Scheme::MAX_TEXT_BYTES`].
    fn check_text_size(text: &str) -> Result<()> {
        if text.len() > Self::MAX_TEXT_BYTES {
            return Err(Error::input(format!(
                "the document's text has {} bytes, more than the {} (64 MiB) a document may have",
                text.len(),
                Self::MAX_TEXT_BYTES
            )));
        }
        Ok(())
    }

    /// The fingerprint of a document's `text`, as every reader of documents takes it: a text
    /// without a token is an error, except under the seomoz scheme, which gives it 0 as
    /// simhash-py does; so is a text longer than [`Scheme::MAX_TEXT_BYTES`].
    pub fn fingerprint_document(&self, text: &str) -> Result<u64> {
        Self::check_text_size(text)?;
        if self.kind != Kind::Seomoz && tokens(text).next().is_none() {
            return Err(Error::input(
                "the document has no token (no letter or digit)",
            ));
        }
        Ok(self.fingerprint(text))
    }

    /// Bytes of a verification sketch when none are chosen (`init --sketch`).
    pub const DEFAULT_SKETCH_BYTES: u16 = sketch::DEFAULT_BYTES;

    /// This scheme with a verification sketch of `bytes` bytes (64 to 1024) for each text, as a
    /// store made with `init --sketch` fingerprints text; 0 for none.
    pub fn with_sketch(self, bytes: u16) -> Result<Scheme> {
        if bytes != 0 {
            sketch::check_bytes(bytes)?;
        }
        Ok(Scheme {
            sketch_bytes: bytes,
            ..self
        })
    }

    /// The bytes of the sketch each text gets, if it gets one.
    pub fn sketch_bytes(&self) -> Option<u16> {
        (self.sketch_bytes > 0).then_some(self.sketch_bytes)
    }

    /// A document's fingerprint ([`Scheme::fingerprint_document`]) and, when the scheme has
    /// one, its verification sketch ([`Scheme::sketch`]).
    pub fn document(&self, text: &str) -> Result<(u64, Option<Vec<u8>>)> {
        Self::check_text_size(text)?;
        let Some(bytes) = self.sketch_bytes() else {
            return Ok((self.fingerprint_document(text)?, None));
        };
        // One lower-casing and tokenizing for both.
        let lower = text.to_lowercase();
        let spans: Vec<&str> = tokens(&lower).collect();
        let fingerprint = match self.kind {
            Kind::Seomoz => seomoz::fingerprint(text),
            Kind::Shingles { .. } if spans.is_empty() => {
                return Err(Error::input(
                    "the document has no token (no letter or digit)",
                ))
            }
            Kind::Shingles { .. } => self.fingerprint_tokens(&spans),
        };
        Ok((fingerprint, Some(sketch::of_tokens(&spans, bytes))))
    }

    /// The verification sketch of `text` (its word 3-shingles in the scheme's sketch size),
    /// or None when the scheme has no sketch. Two sketches of one size estimate the Jaccard
    /// similarity of the texts' shingle sets: [`Scheme::estimate_jaccard`].
    pub fn sketch(&self, text: &str) -> Option<Vec<u8>> {
        let bytes = self.sketch_bytes()?;
        let lower = text.to_lowercase();
        let spans: Vec<&str> = tokens(&lower).collect();
        Some(sketch::of_tokens(&spans, bytes))
    }

    /// The sketches of `text` at each of `sizes` (bytes), lower-cased and tokenized once
    /// (`tune` scores every size).
    pub(crate) fn sketches(text: &str, sizes: &[u16]) -> Vec<Vec<u8>> {
        let lower = text.to_lowercase();
        let spans: Vec<&str> = tokens(&lower).collect();
        sizes
            .iter()
            .map(|&b| sketch::of_tokens(&spans, b))
            .collect()
    }

    /// The Jaccard similarity of two texts' word 3-shingle sets that their sketches (of one
    /// size) estimate (see docs/design.md for the estimator and its error).
    ///
    /// ```
    /// use simhashdb::Scheme;
    /// let scheme = Scheme::default().with_sketch(128)?;
    /// let a = scheme.sketch("the quick brown fox jumps over the lazy dog").unwrap();
    /// assert_eq!(Scheme::estimate_jaccard(&a, &a), 1.0);
    /// # Ok::<(), simhashdb::Error>(())
    /// ```
    pub fn estimate_jaccard(a: &[u8], b: &[u8]) -> f64 {
        sketch::estimate(a, b)
    }

    /// The fingerprint of `text`.
    ///
    /// ```
    /// use simhashdb::Scheme;
    /// let scheme = Scheme::default();
    /// let a = scheme.fingerprint("The quick brown fox jumps over the lazy dog, again and again.");
    /// let b = scheme.fingerprint("the QUICK brown fox jumps over the lazy dog -- again and again");
    /// assert_eq!(a, b); // case and punctuation are not tokens
    /// ```
    pub fn fingerprint(&self, text: &str) -> u64 {
        match self.kind {
            Kind::Seomoz => seomoz::fingerprint(text),
            Kind::Shingles { .. } => {
                let lower = text.to_lowercase();
                let spans: Vec<&str> = tokens(&lower).collect();
                self.fingerprint_tokens(&spans)
            }
        }
    }

    /// The fingerprint of a shingle scheme from the lower-cased text's tokens.
    fn fingerprint_tokens(&self, spans: &[&str]) -> u64 {
        let Kind::Shingles {
            features,
            weighting,
        } = self.kind
        else {
            unreachable!("only shingle schemes take tokens")
        };
        let mut hashes = Vec::new();
        token_shingle_hashes(spans, features, |h| hashes.push(h));
        match weighting {
            Weighting::MinHash => minhash::one_bit(&hashes),
            Weighting::Set => {
                hashes.sort_unstable();
                hashes.dedup();
                vote(&hashes)
            }
            Weighting::Count => vote(&hashes),
        }
    }
}

/// Calls `f` on the XXH3-64 hash of every shingle of `text`, in text order.
pub fn shingle_hashes(text: &str, features: Features, f: impl FnMut(u64)) {
    let lower = text.to_lowercase();
    let spans: Vec<&str> = tokens(&lower).collect();
    token_shingle_hashes(&spans, features, f);
}

/// [`shingle_hashes`] of the lower-cased text's tokens.
fn token_shingle_hashes(spans: &[&str], features: Features, mut f: impl FnMut(u64)) {
    if spans.is_empty() {
        return;
    }
    let mut buf = String::new();
    match features {
        Features::Words(1) => spans
            .iter()
            .for_each(|t| f(xxhash_rust::xxh3::xxh3_64(t.as_bytes()))),
        Features::Words(w) => {
            let w = usize::from(w).min(spans.len());
            for window in spans.windows(w) {
                buf.clear();
                for (i, t) in window.iter().enumerate() {
                    if i > 0 {
                        buf.push(' ');
                    }
                    buf.push_str(t);
                }
                f(xxhash_rust::xxh3::xxh3_64(buf.as_bytes()));
            }
        }
        Features::Chars(n) => {
            let joined = spans.join(" ");
            let starts: Vec<usize> = joined
                .char_indices()
                .map(|(i, _)| i)
                .chain([joined.len()])
                .collect();
            let chars = starts.len() - 1;
            let n = usize::from(n).min(chars);
            for i in 0..=chars - n {
                f(xxhash_rust::xxh3::xxh3_64(
                    &joined.as_bytes()[starts[i]..starts[i + n]],
                ));
            }
        }
    }
}

/// The simhash of `hashes`, each counting once: bit i is set iff more hashes have it set than
/// clear (ties clear it).
pub fn vote(hashes: &[u64]) -> u64 {
    // SWAR counting: byte j of lanes[k] counts the hashes with bit 8k + j set. A byte holds
    // up to 255, so the lanes are emptied into the totals every 255 hashes.
    const SPREAD: [u64; 256] = spread_table();
    let mut set = [0u64; 64];
    for chunk in hashes.chunks(255) {
        let mut lanes = [0u64; 8];
        for &h in chunk {
            for (k, lane) in lanes.iter_mut().enumerate() {
                *lane += SPREAD[(h >> (8 * k)) as usize & 0xff];
            }
        }
        for (k, lane) in lanes.iter().enumerate() {
            for j in 0..8 {
                set[8 * k + j] += lane >> (8 * j) & 0xff;
            }
        }
    }
    let n = hashes.len() as u64;
    set.iter()
        .enumerate()
        .fold(0, |fp, (i, &c)| if 2 * c > n { fp | 1 << i } else { fp })
}

/// Byte j of `spread_table()[b]` is bit j of b.
const fn spread_table() -> [u64; 256] {
    let mut table = [0u64; 256];
    let mut b = 0;
    while b < 256 {
        let mut j = 0;
        while j < 8 {
            table[b] |= ((b as u64 >> j) & 1) << (8 * j);
            j += 1;
        }
        b += 1;
    }
    table
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn a_text_past_the_limit_is_refused_before_it_is_read() {
        let huge = "word ".repeat(Scheme::MAX_TEXT_BYTES / 5 + 1);
        for scheme in [Scheme::default(), Scheme::SEOMOZ] {
            let e = scheme.fingerprint_document(&huge).unwrap_err().to_string();
            assert!(e.contains("64 MiB"), "{e}");
            let e = scheme.with_sketch(64).unwrap().document(&huge).unwrap_err();
            assert!(e.to_string().contains("more than the"), "{e}");
        }
        let at_limit = &huge[..Scheme::MAX_TEXT_BYTES];
        assert!(Scheme::check_text_size(at_limit).is_ok());
    }

    #[test]
    fn vote_sets_a_bit_iff_the_majority_has_it() {
        assert_eq!(vote(&[]), 0);
        assert_eq!(vote(&[0b101]), 0b101);
        assert_eq!(vote(&[0b101, 0b100, 0b001]), 0b101);
        assert_eq!(vote(&[0b1, 0b0]), 0, "a tie clears the bit");
        // Past the 255-hash lane flush: 300 hashes with bit 63, 299 without.
        let mut many = vec![1u64 << 63; 300];
        many.extend(vec![0b10; 299]);
        assert_eq!(vote(&many), 1 << 63);
        many.push(0b10);
        assert_eq!(vote(&many), 0);
    }

    #[test]
    fn short_texts_are_one_shingle_and_empty_is_zero() {
        let s = Scheme::from_parts("words", Some(3), Some("set")).unwrap();
        assert_eq!(s.fingerprint(""), 0);
        assert_eq!(s.fingerprint("  ,;  "), 0);
        assert_eq!(
            s.fingerprint("two words"),
            xxhash_rust::xxh3::xxh3_64(b"two words")
        );
        let chars = Scheme::from_parts("chars", Some(4), Some("set")).unwrap();
        assert_eq!(chars.fingerprint("ab"), xxhash_rust::xxh3::xxh3_64(b"ab"));
        assert_eq!(Scheme::default().fingerprint("  ,;  "), 0);
    }

    #[test]
    fn shingles_are_words_joined_by_one_space_or_characters() {
        let mut got = Vec::new();
        shingle_hashes("A b, C!", Features::Words(2), |h| got.push(h));
        let want: Vec<u64> = ["a b", "b c"]
            .iter()
            .map(|s| xxhash_rust::xxh3::xxh3_64(s.as_bytes()))
            .collect();
        assert_eq!(got, want);
        got.clear();
        shingle_hashes("Ab é", Features::Chars(3), |h| got.push(h));
        let want: Vec<u64> = ["ab ", "b é"]
            .iter()
            .map(|s| xxhash_rust::xxh3::xxh3_64(s.as_bytes()))
            .collect();
        assert_eq!(got, want);
    }

    #[test]
    fn weighting_counts_repeats_or_not() {
        let text = "a b c a b c a b c x y z";
        let set = Scheme::from_parts("words", Some(3), Some("set")).unwrap();
        let count = Scheme::from_parts("words", Some(3), Some("count")).unwrap();
        let mut hashes = Vec::new();
        shingle_hashes(text, Features::Words(3), |h| hashes.push(h));
        assert_eq!(count.fingerprint(text), vote(&hashes));
        hashes.sort_unstable();
        hashes.dedup();
        assert_eq!(set.fingerprint(text), vote(&hashes));
    }

    #[test]
    fn fingerprints_never_change_across_versions() {
        // Stores keep fingerprints made by earlier builds: these values are frozen.
        let fox = "The quick brown fox jumps over the lazy dog";
        for (name, want) in [
            ("words-2-minhash", 0x45c9_7c8b_9c40_51a8),
            ("words-1-set", 0x8200_8682_0852_9263),
            ("chars-5-count", 0x0f23_1859_fb18_ce61),
            ("seomoz", 0xa103_cb17_2b8a_9085),
        ] {
            assert_eq!(
                Scheme::from_name(name).unwrap().fingerprint(fox),
                want,
                "{name}"
            );
        }
    }

    #[test]
    fn scheme_names_round_trip_and_unknown_ones_are_refused() {
        for name in [
            "seomoz",
            "words-1-set",
            "words-2-minhash",
            "words-3-count",
            "chars-5-set",
            "chars-4-count",
        ] {
            assert_eq!(Scheme::from_name(name).unwrap().name(), name);
        }
        for bad in [
            "",
            "words",
            "words-0-set",
            "words-01-set",
            "words-1-tfidf",
            "minhash-1-set",
            "words-1-set-x",
            "Seomoz",
        ] {
            let err = Scheme::from_name(bad).unwrap_err();
            assert!(
                err.to_string().contains("not known to this build"),
                "{bad}: {err}"
            );
        }
    }

    #[test]
    fn schemes_parse_and_refuse_unknown_names() {
        assert_eq!(
            Scheme::from_parts("words", None, None).unwrap(),
            Scheme::default()
        );
        assert!(Scheme::from_parts("minhash", None, None)
            .unwrap_err()
            .to_string()
            .contains("unknown scheme"));
        assert!(Scheme::from_parts("words", Some(0), None).is_err());
        assert!(Scheme::from_parts("seomoz", Some(3), None).is_err());
        assert!(Scheme::from_parts("words", None, Some("idf")).is_err());
    }

    proptest! {
        #[test]
        fn the_same_text_gives_the_same_fingerprint(text in "\\PC{0,300}") {
            let s = Scheme::default();
            prop_assert_eq!(s.fingerprint(&text), s.fingerprint(&text.clone()));
        }

        #[test]
        fn a_one_token_edit_moves_few_bits_on_long_texts(seed: u64, at in 0usize..2000) {
            let words: Vec<String> = (0..2000u64)
                .map(|i| format!("w{}", (i.wrapping_mul(seed | 1) ^ seed) % 5000))
                .collect();
            let mut edited = words.clone();
            edited[at] = "replaced".into();
            let s = Scheme::default();
            let d = (s.fingerprint(&words.join(" ")) ^ s.fingerprint(&edited.join(" "))).count_ones();
            prop_assert!(d <= 8, "one edit in 2000 tokens moved {} bits", d);
        }
    }
}
