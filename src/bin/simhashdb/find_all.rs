//! `simhashdb find-all`: seomoz's find_all on a list of fingerprints, without a store.

use std::io::Write;
use std::path::PathBuf;
use std::time::Instant;

use anyhow::Result;
use simhashdb::{find_all, InputFormat, NearDuplicates, Query, ReadOptions, Settings, Source};

use crate::documents::{FieldArgs, SchemeArgs};
use crate::exit_codes::usage;
use crate::{output, progress};

/// Print every pair within K bits in a list of fingerprints, in memory, with no store.
///
/// Input: one fingerprint per line (16 hex digits, 0x hex or decimal), or documents: lines
/// ID<TAB>FINGERPRINT, JSON Lines {"id", "fingerprint"} or {"id", "text"}, or a directory of
/// text files (text fingerprinted with the scheme flags, as `fingerprint` does). For bare fingerprints, equal values
/// count once, as in seomoz's find_all, and the output is FP_A<TAB>FP_B<TAB>DISTANCE with
/// FP_A < FP_B, sorted. For documents the output is ID_A<TAB>ID_B<TAB>DISTANCE as `audit`
/// prints it, in its order and streamed as `audit` streams it: documents sharing a fingerprint
/// pair at distance 0, so --distance 0 lists the exact duplicates.
#[derive(clap::Args)]
pub struct Args {
    /// Files of fingerprints or documents ('-' or none = stdin).
    inputs: Vec<PathBuf>,
    /// Blocks m each fingerprint is split into [default: chosen for K and the number of
    /// fingerprints, as `init` chooses for --expected-size].
    #[arg(long, value_name = "M", allow_negative_numbers = true)]
    blocks: Option<u8>,
    /// Largest distance K to report (below M).
    #[arg(long, value_name = "K", default_value_t = Settings::default().distance,
          allow_negative_numbers = true)]
    distance: u8,
    /// Print JSON Lines: {"a", "b", "distance"}.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    scheme: SchemeArgs,
    #[command(flatten)]
    fields: FieldArgs,
}

pub fn run(args: Args) -> Result<()> {
    let started = Instant::now();
    let inputs = if args.inputs.is_empty() {
        vec![PathBuf::from("-")]
    } else {
        args.inputs.clone()
    };
    if inputs.iter().filter(|i| i.as_os_str() == "-").count() > 1 {
        return Err(usage("stdin ('-') can be read only once"));
    }
    let options = ReadOptions {
        fallback: InputFormat::Fingerprints,
        ..args.fields.options(Ok(args.scheme.scheme()?), false)
    };
    let mut queries: Vec<Query> = Vec::new();
    for input in &inputs {
        let summary = Source::Files(std::slice::from_ref(input)).queries(&options, &mut queries)?;
        crate::documents::tell_read(&summary.first_skipped, &summary.warnings);
    }
    let documents = queries.iter().any(|q| q.id.is_some());
    let mut out = output::stdout();
    let count = if documents {
        let labelled: Vec<(String, u64)> = queries
            .into_iter()
            .map(|q| {
                let id = q.id.unwrap_or_else(|| format!("{:016x}", q.fingerprint));
                (id, q.fingerprint)
            })
            .collect();
        let bars = progress::Bars::default();
        let near = NearDuplicates::of_documents(&labelled, args.distance, args.blocks, &bars)?;
        drop(labelled);
        near.for_each_pair(|a, b, distance, _| -> Result<()> {
            if args.json {
                output::json_line(
                    &mut out,
                    &serde_json::json!({"a": a, "b": b, "distance": distance}),
                )
            } else {
                Ok(writeln!(out, "{a}\t{b}\t{distance}")?)
            }
        })?;
        let summary = near.summary();
        (summary.documents as usize, summary.pairs as usize)
    } else {
        let fingerprints: Vec<u64> = queries.iter().map(|q| q.fingerprint).collect();
        let bars = progress::Bars::default();
        let pairs = find_all(&fingerprints, args.distance, args.blocks, &bars)?;
        for p in &pairs {
            if args.json {
                output::json_line(&mut out, p)?;
            } else {
                writeln!(out, "{:016x}\t{:016x}\t{}", p.a, p.b, p.distance)?;
            }
        }
        (fingerprints.len(), pairs.len())
    };
    out.flush()?;
    eprintln!(
        "find-all: {} {}, K={}: {} pairs, {:.2} s",
        count.0,
        if documents {
            "documents"
        } else {
            "fingerprints"
        },
        args.distance,
        count.1,
        started.elapsed().as_secs_f64()
    );
    Ok(())
}
