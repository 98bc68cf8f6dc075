//! `simhashdb tune`: the scheme and distance that find a corpus's near-duplicates best.

use std::io::Write;
use std::path::PathBuf;

use anyhow::Result;
use simhashdb::tune::{TuneOptions, Tuning};
use simhashdb::Scheme;

use crate::documents::FieldArgs;
use crate::exit_codes::usage;
use crate::init::parse_size;
use crate::{output, progress};

/// Measure every fingerprint scheme at every distance on a corpus, and recommend the best.
///
/// For each scheme (word and character shingles of several sizes, each weighting, seomoz)
/// and each k = 0..12: the precision, recall and F1 of the pairs within k bits against the
/// pairs whose word 3-shingle Jaccard similarity is at least J, from fingerprints alone,
/// verified by exact Jaccard (as `audit --verify-text` does), and verified by sketches of
/// each --sketch-bytes size (as `audit --min-jaccard` does on a store made with `init
/// --sketch`; each at the threshold near J that scores best). The truth is --gold, or the
/// exact Jaccard of every pair of the corpus (or of --sample documents of it), computed here.
/// Prints the recommended `init` command for stores that keep no text, for stores that keep
/// sketches, and for audits that re-read the text; --json writes every score as JSON Lines,
/// the recommendation last.
#[derive(clap::Args)]
pub struct Args {
    /// The documents: JSON Lines with an id and a text, Parquet with those columns, or text
    /// files and directories of them ('-' = stdin).
    #[arg(value_name = "CORPUS", required = true)]
    corpus: Vec<PathBuf>,
    /// Measure on N documents drawn at random (reproducibly, by a hash of their ids).
    #[arg(long, value_name = "N", value_parser = parse_size)]
    sample: Option<u64>,
    /// The seed of the sample.
    #[arg(long, value_name = "S", default_value_t = 1)]
    seed: u64,
    /// A pair is a near-duplicate when its Jaccard similarity is at least J, in (0, 1].
    #[arg(long, value_name = "J", default_value_t = TuneOptions::DEFAULT_MIN_JACCARD, allow_negative_numbers = true)]
    min_jaccard: f64,
    /// The true pairs: ID_A ID_B [JACCARD [INTER UNION]] per line (tabs or spaces); pairs
    /// below J by their JACCARD or INTER/UNION are not true.
    #[arg(long, value_name = "PAIRS.tsv")]
    gold: Option<PathBuf>,
    /// The store size to plan the recommended settings for [default: the corpus's size].
    #[arg(long, value_name = "N", value_parser = parse_size)]
    expected_size: Option<u64>,
    /// Draw precision-recall and F1-against-k to FILE (.svg or .png).
    #[arg(long, value_name = "FILE")]
    plot: Option<PathBuf>,
    /// Write JSON Lines: the corpus, one line per scheme, use and distance, and last
    /// {"recommend": ...}.
    #[arg(long)]
    json: bool,
    /// Measure distances 0..=K.
    #[arg(long, value_name = "K", default_value_t = TuneOptions::DEFAULT_MAX_DISTANCE, allow_negative_numbers = true)]
    max_distance: u8,
    /// Measure only these schemes (comma-separated names such as words-2-minhash,seomoz)
    /// [default: all].
    #[arg(long, value_name = "NAMES", value_delimiter = ',')]
    schemes: Vec<String>,
    #[command(flatten)]
    fields: FieldArgs,
    /// Leave out documents with no letter or digit instead of failing.
    #[arg(long)]
    skip_invalid: bool,
    /// Score verification by sketches of these sizes in bytes (comma-separated, each 64 to
    /// 1024).
    #[arg(long, value_name = "BYTES", value_delimiter = ',', default_values_t = TuneOptions::DEFAULT_SKETCH_BYTES,
          value_parser = clap::value_parser!(u16).range(64..=1024), conflicts_with = "no_sketch")]
    sketch_bytes: Vec<u16>,
    /// Score no sketch (fingerprints alone and verified by the text only).
    #[arg(long)]
    no_sketch: bool,
}

pub fn run(args: Args) -> Result<()> {
    let schemes = if args.schemes.is_empty() {
        TuneOptions::candidate_schemes()
    } else {
        args.schemes
            .iter()
            .map(|name| Scheme::from_name(name).map_err(|e| usage(format!("--schemes: {e}"))))
            .collect::<Result<_>>()?
    };
    if let Some(plot) = &args.plot {
        // Before the run: a wrong name should not cost a whole measurement.
        Tuning::check_plot_path(plot).map_err(|e| usage(format!("--plot {e}")))?;
    }
    let options = TuneOptions {
        min_jaccard: args.min_jaccard,
        sample: args.sample.map(|n| n as usize),
        seed: args.seed,
        schemes,
        max_distance: args.max_distance,
        expected_size: args.expected_size,
        gold: args.gold.clone(),
        sketch_bytes: if args.no_sketch {
            Vec::new()
        } else {
            args.sketch_bytes.clone()
        },
        read: args
            .fields
            .options(simhashdb::ReadOptions::default().scheme, args.skip_invalid),
    };
    let bars = progress::Bars::default();
    let tuning = Tuning::measure(&args.corpus, &options, &bars)?;
    if let Some(plot) = &args.plot {
        tuning.write_plot(plot)?;
    }
    let mut out = output::stdout();
    if args.json {
        write_json(&mut out, &tuning)?;
    } else {
        tuning.write_text(&mut out)?;
    }
    out.flush()?;
    Ok(())
}

fn write_json(out: &mut dyn Write, tuning: &Tuning) -> Result<()> {
    for line in tuning.json_lines() {
        writeln!(out, "{line}")?;
    }
    Ok(())
}
