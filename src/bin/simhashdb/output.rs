//! Writing results: to stdout, or to a file a flag names.

use std::io::{BufWriter, Write};
use std::path::Path;

use anyhow::{Context, Result};
use simhashdb::OutputFile;

/// A buffered, locked stdout.
pub fn stdout() -> BufWriter<std::io::StdoutLock<'static>> {
    BufWriter::with_capacity(1 << 16, std::io::stdout().lock())
}

/// Runs `write` on the file at `path`, which appears whole when `write` succeeds and not at
/// all when it fails (the library's [`OutputFile`]), or on stdout for None or '-'.
pub fn write_to(
    path: Option<&Path>,
    write: impl FnOnce(&mut dyn Write) -> Result<()>,
) -> Result<()> {
    match path.filter(|p| p.as_os_str() != "-") {
        None => {
            let mut out = stdout();
            write(&mut out)?;
            out.flush()?;
        }
        Some(path) => {
            let cannot = || format!("{}: cannot write", path.display());
            let mut out = OutputFile::create(path)
                .with_context(|| format!("{}: cannot create", path.display()))?;
            write(&mut out).with_context(cannot)?;
            out.finish().with_context(cannot)?;
        }
    }
    Ok(())
}

/// Whether an output path names a Parquet file (by its `.parquet` extension).
pub fn is_parquet_name(path: &Path) -> bool {
    path.extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("parquet"))
}

/// Whether a results file is written as JSON Lines: when its name says so (`.jsonl`,
/// `.ndjson`, `.json`), not when it says TSV (`.tsv`), else as `--json` says (stdout too).
/// `--json` asks for the summary as JSON; a file keeps the form its name gives it.
pub fn is_json_output(path: &Path, json: bool) -> bool {
    match path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase)
    {
        Some(e) if matches!(e.as_str(), "jsonl" | "ndjson" | "json") => true,
        Some(e) if e == "tsv" => false,
        _ => json,
    }
}

/// Writes `value` as one JSON line, its keys sorted (as every JSON line the CLI prints: the
/// shapes are the library's serde forms, so CLI, HTTP and Python answer alike).
pub fn json_line(out: &mut dyn Write, value: &impl serde::Serialize) -> Result<()> {
    writeln!(out, "{}", serde_json::to_value(value)?)?;
    Ok(())
}

/// What a pair line carries after its distance: nothing (unverified audits), a Jaccard
/// similarity, or the flag of a pair that could not be verified.
#[derive(Clone, Copy)]
pub enum Fourth {
    None,
    Jaccard(f64),
    Unverified,
}

/// Pair lines built into one buffer, `A<TAB>B<TAB>DISTANCE[<TAB>FOURTH]` each: a pair list
/// runs to 1e8 lines, and the formatting machinery per field costs more than the write.
pub struct PairLines {
    pub bytes: Vec<u8>,
    /// The six-decimal text of the Jaccard values printed last, in slots chosen by their
    /// bits: an estimate is one of 8N + 1 values (N sketch bytes), printed millions of times.
    jaccards: Box<[(u64, [u8; 8])]>,
}

impl PairLines {
    const SLOTS: usize = 64;

    pub fn with_capacity(bytes: usize) -> Self {
        PairLines {
            bytes: Vec::with_capacity(bytes),
            // f64 bits of -1.0: never a Jaccard value, so no slot matches before it is set.
            jaccards: vec![((-1.0f64).to_bits(), [0; 8]); Self::SLOTS].into_boxed_slice(),
        }
    }

    /// Appends the line of a pair and a newline. The Jaccard prints as `{:.6}` does, digit
    /// for digit.
    pub fn push(&mut self, a: &str, b: &str, distance: u32, fourth: Fourth) {
        let out = &mut self.bytes;
        out.extend_from_slice(a.as_bytes());
        out.push(b'\t');
        out.extend_from_slice(b.as_bytes());
        out.push(b'\t');
        push_decimal(out, u64::from(distance));
        match fourth {
            Fourth::None => {}
            Fourth::Jaccard(j) if (0.0..=1.0).contains(&j) => {
                out.push(b'\t');
                // In 0..=1, six decimals are 8 bytes: "0.dddddd" or "1.000000".
                let bits = j.to_bits();
                let slot =
                    &mut self.jaccards[(bits.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 58) as usize];
                if slot.0 != bits {
                    let mut text = Vec::with_capacity(8);
                    push_fixed6(&mut text, j);
                    *slot = (bits, text.try_into().expect("8 bytes in 0..=1"));
                }
                out.extend_from_slice(&slot.1);
            }
            Fourth::Jaccard(j) => {
                out.push(b'\t');
                push_fixed6(out, j);
            }
            Fourth::Unverified => out.extend_from_slice(b"\tunverified"),
        }
        out.push(b'\n');
    }
}

/// Appends `n` in decimal.
fn push_decimal(line: &mut Vec<u8>, mut n: u64) {
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    loop {
        at -= 1;
        digits[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    line.extend_from_slice(&digits[at..]);
}

/// Appends `x` with six decimals, exactly as `format!("{x:.6}")` (the exact binary value
/// rounded half to even), computed with integers for x in 0..=1 (a Jaccard similarity).
fn push_fixed6(line: &mut Vec<u8>, x: f64) {
    use std::io::Write as _;
    if !(0.0..=1.0).contains(&x) {
        let _ = write!(line, "{x:.6}");
        return;
    }
    // x = mantissa * 2^-shift, so x * 10^6 = mantissa * 10^6 >> shift, below 2^73.
    let bits = x.to_bits();
    let exponent = ((bits >> 52) & 0x7ff) as u32;
    let fraction = u128::from(bits & ((1 << 52) - 1));
    let (mantissa, shift) = match exponent {
        0 => (fraction, 1074),
        e => (fraction | 1 << 52, 1075 - e),
    };
    let scaled = mantissa * 1_000_000;
    let micros = if shift >= 100 {
        0 // x * 10^6 < 2^73 / 2^100: far below one half
    } else {
        let (whole, rest) = (scaled >> shift, scaled & ((1 << shift) - 1));
        let half = 1u128 << (shift - 1);
        let up = rest > half || (rest == half && whole % 2 == 1);
        (whole + u128::from(up)) as u64
    };
    push_decimal(line, micros / 1_000_000);
    line.push(b'.');
    let fraction = micros % 1_000_000;
    let mut digits = [b'0'; 6];
    let mut n = fraction;
    for d in digits.iter_mut().rev() {
        *d = b'0' + (n % 10) as u8;
        n /= 10;
    }
    line.extend_from_slice(&digits);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixed6(x: f64) -> String {
        let mut line = Vec::new();
        push_fixed6(&mut line, x);
        String::from_utf8(line).expect("ASCII")
    }

    #[test]
    fn six_decimals_print_as_the_formatter_prints_them() {
        // Every estimate a sketch of 64 to 1024 bytes gives (1 - 2d/bits), ties included
        // (k/512 often ends in a 5 at the seventh decimal).
        for bytes in [64u32, 100, 128, 160, 333, 512, 1000, 1024] {
            let bits = f64::from(bytes * 8);
            for d in 0..=bytes * 8 {
                let x = (1.0 - 2.0 * f64::from(d) / bits).max(0.0);
                assert_eq!(fixed6(x), format!("{x:.6}"), "{d}/{bits}");
            }
        }
        // Ratios as exact Jaccard gives them, the ends, and values near ties and tiny ones.
        for union in 1..400u32 {
            for inter in 0..=union {
                let x = f64::from(inter) / f64::from(union);
                assert_eq!(fixed6(x), format!("{x:.6}"));
            }
        }
        let mut state = 0x9E37_79B9_7F4A_7C15u64;
        for _ in 0..200_000 {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let x = (state >> 11) as f64 / (1u64 << 53) as f64;
            for y in [x, x * 1e-6, x * 1e-9, (x * 1e6).round() / 1e6 + 5e-7] {
                if (0.0..=1.0).contains(&y) {
                    assert_eq!(fixed6(y), format!("{y:.6}"), "{y:e}");
                }
            }
        }
        for x in [
            0.0,
            1.0,
            5e-7,
            4.999999e-7,
            5.000001e-7,
            f64::MIN_POSITIVE,
            1e-300,
            0.9999995,
        ] {
            assert_eq!(fixed6(x), format!("{x:.6}"), "{x:e}");
        }
        assert_eq!(fixed6(-0.5), "-0.500000");
    }

    #[test]
    fn pair_lines_are_the_formatted_ones() {
        let mut out = PairLines::with_capacity(0);
        out.push("a", "b", 0, Fourth::None);
        out.push("x", "y", 12, Fourth::Jaccard(0.8125));
        out.push("p", "q", 3, Fourth::Unverified);
        out.push("x", "y", 1, Fourth::Jaccard(0.8125));
        out.push("u", "v", 2, Fourth::Jaccard(1.0));
        assert_eq!(
            String::from_utf8(out.bytes).unwrap(),
            "a\tb\t0\nx\ty\t12\t0.812500\np\tq\t3\tunverified\nx\ty\t1\t0.812500\nu\tv\t2\t1.000000\n"
        );
    }

    #[test]
    fn remembered_jaccards_print_as_the_formatter_prints_them() {
        // Every estimate of 128- and 1000-byte sketches, twice over (the second time from the
        // slots, where values sharing a slot replace each other).
        let mut out = PairLines::with_capacity(0);
        let mut expected = String::new();
        for _ in 0..2 {
            for bits in [1024u32, 8000] {
                for d in (0..=bits).rev() {
                    let x = (1.0 - 2.0 * f64::from(d) / f64::from(bits)).max(0.0);
                    out.push("a", "b", 3, Fourth::Jaccard(x));
                    expected.push_str(&format!("a\tb\t3\t{x:.6}\n"));
                }
            }
        }
        assert_eq!(String::from_utf8(out.bytes).unwrap(), expected);
    }
}
