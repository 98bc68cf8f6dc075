//! `simhashdb audit`: every near-duplicate pair and cluster in a store.

use std::io::Write;
use std::path::PathBuf;
use std::time::Instant;

use anyhow::{Context, Result};
use simhashdb::parquet::ParquetTable;
use simhashdb::{NearDuplicates, OpenOptions, Progress, Snapshot, Verification};

use crate::documents::FieldArgs;
use crate::exit_codes::usage;
use crate::output::{Fourth, PairLines};
use crate::{output, progress};

/// List every pair of stored documents within D bits, their clusters, and what a dedup drops.
///
/// Pairs: ID_A<TAB>ID_B<TAB>DISTANCE, each pair once with ID_A < ID_B, streamed as they are
/// found, in a fixed order: fingerprints ascending; for each, the pairs of the documents that
/// share it (distance 0), then its pairs with each larger fingerprint in turn; the documents
/// of a fingerprint in id order. The same store gives the same bytes. Clusters (connected
/// components of the pairs, for looking at): CLUSTER_ID<TAB>ID<TAB>KEPT, one member per line,
/// members sorted, clusters numbered from 1 in order of their smallest id, KEPT how many
/// members of the cluster the keep rule keeps. The keep rule is dedup's: documents are taken
/// earliest batch first, then smallest id (byte order); a document is dropped when a document
/// kept before it is within D (and, with --min-jaccard, verified); otherwise it is kept. So a
/// chain of near copies whose ends are far apart keeps several documents, and no document is
/// dropped unless a kept one is near it. Duplicates: ID<TAB>KEPT_ID<TAB>DISTANCE (with
/// --min-jaccard a fourth column, the Jaccard or "unverified"), KEPT_ID the nearest kept
/// document before it (then the smallest id), in the rule's order: line for line what `dedup
/// --duplicates` of the same documents, replayed in that order into an empty store with the
/// same settings, writes. --keep: the kept documents of the clusters (with --singletons, every
/// kept document), one id per line, in the rule's order. With none of --pairs, --clusters,
/// --duplicates, --keep, --report, pairs go to stdout. A FILE ending in .parquet is written as
/// Parquet: pairs (id_a, id_b, distance[, jaccard]), clusters (cluster_id, id, kept),
/// duplicates (id, kept_id, distance[, jaccard]: the ids to remove, as NeMo Curator's removal
/// workflow reads them), kept ids (id). With
/// --min-jaccard (from --verify-text's texts, or else from the store's sketches, `init
/// --sketch`) pairs carry the Jaccard similarity: a fourth column, a "jaccard" field; a pair
/// where a document has no sketch (inserted as a bare fingerprint) is kept and flagged:
/// "unverified" in the fourth column, "unverified": true in JSON, a null jaccard in Parquet. A
/// summary goes to stderr; with --json it is a JSON line {"summary": {...}} on stdout (on
/// stderr when stdout carries results). Memory grows with the fingerprint pairs and the
/// documents that have a near duplicate, never with the document pairs: a page stored 1e5
/// times is one fingerprint.
#[derive(clap::Args)]
pub struct Args {
    /// The store.
    store: PathBuf,
    /// Largest distance to report (at most the store's K; default K).
    #[arg(long, value_name = "D", allow_negative_numbers = true)]
    distance: Option<i64>,
    /// Write the pairs to FILE ('-' = stdout).
    #[arg(long, value_name = "FILE")]
    pairs: Option<PathBuf>,
    /// Write the clusters to FILE ('-' = stdout).
    #[arg(long, value_name = "FILE")]
    clusters: Option<PathBuf>,
    /// Also list documents with no near duplicate: each as a cluster of one in --clusters, and
    /// among the kept ids in --keep.
    #[arg(long)]
    singletons: bool,
    /// Write the documents the keep rule drops to FILE ('-' = stdout):
    /// ID<TAB>KEPT_ID<TAB>DISTANCE[<TAB>JACCARD], in the rule's order (earliest batch, then
    /// smallest id).
    #[arg(long, value_name = "FILE")]
    duplicates: Option<PathBuf>,
    /// Write the ids the keep rule keeps of the clusters to FILE ('-' = stdout), one per line
    /// in the rule's order (with --singletons, of every document).
    #[arg(long, value_name = "FILE")]
    keep: Option<PathBuf>,
    /// Draw the audit at a glance to FILE (.svg or .png): clusters by size (log-log), pairs
    /// by distance, and the headline counts.
    #[arg(long, value_name = "FILE")]
    report: Option<PathBuf>,
    /// Print the summary as a JSON line {"summary": {"documents", "distinct_fingerprints",
    /// "pairs", "clusters", "largest_cluster", "duplicates", "kept",
    /// "clusters_keeping_several", "unverified_pairs"}}, and write JSON Lines to stdout and
    /// to files whose name says no form: pairs {"a", "b", "distance"[, "jaccard" |
    /// "unverified"]}, clusters {"cluster", "ids", "kept"}, duplicates {"id", "kept",
    /// "distance"[, "jaccard" | "unverified"]}. A file's name decides its form when it says
    /// one: .jsonl, .ndjson or .json is JSON Lines, .tsv is TSV, .parquet is Parquet.
    #[arg(long)]
    json: bool,
    /// Re-read the documents (JSON Lines {"id", "text"}, Parquet with id and text columns, or
    /// a directory of text files; several corpora may follow, or the flag be repeated) and
    /// keep only pairs whose word 3-shingle Jaccard similarity is at least --min-jaccard,
    /// printed as a fourth column; clusters and duplicates follow the verified pairs.
    #[arg(long, value_name = "CORPUS", num_args = 1..)]
    verify_text: Vec<PathBuf>,
    #[command(flatten)]
    fields: FieldArgs,
    /// The least word 3-shingle Jaccard similarity a pair keeps [default with --verify-text:
    /// 0.8]. Without --verify-text the store's sketches estimate it (a store made with
    /// `init --sketch`).
    #[arg(long, value_name = "J")]
    min_jaccard: Option<f64>,
}

pub fn run(args: Args) -> Result<()> {
    let started = Instant::now();
    if let Some(report) = &args.report {
        // Before the audit: a wrong name should not cost a whole audit.
        NearDuplicates::check_report_path(report).map_err(|e| usage(format!("--report {e}")))?;
    }
    let to_stdout = [&args.pairs, &args.clusters, &args.duplicates, &args.keep]
        .iter()
        .filter(|p| p.as_deref().is_some_and(|p| p.as_os_str() == "-"))
        .count();
    if to_stdout > 1 {
        return Err(usage(
            "only one of --pairs, --clusters, --duplicates, --keep can be '-'",
        ));
    }
    let snapshot = Snapshot::open_with(&args.store, OpenOptions::new().for_scan())
        .with_context(|| format!("{}: cannot open the store", args.store.display()))?;
    let distance = snapshot.distance(args.distance)?;
    let bars = progress::Bars::default();
    let corpus_fields = args
        .fields
        .options(simhashdb::ReadOptions::default().scheme, false);
    let verification =
        Verification::asked(args.verify_text.clone(), corpus_fields, args.min_jaccard);
    let mut near = snapshot.near_duplicates(distance, &verification, &bars)?;
    if args.singletons && (args.clusters.is_some() || args.keep.is_some()) {
        near.add_singletons(&snapshot)?;
    }
    let summary = near.summary();
    let nothing_asked = [
        &args.pairs,
        &args.clusters,
        &args.duplicates,
        &args.keep,
        &args.report,
    ]
    .iter()
    .all(|p| p.is_none());
    let pairs_to = if nothing_asked {
        Some(PathBuf::from("-"))
    } else {
        args.pairs.clone()
    };
    if let Some(path) = &pairs_to {
        // Writing can be the longest phase (1e8 pairs of one hot page take seconds).
        bars.start("writing pairs", summary.pairs);
        if output::is_parquet_name(path) {
            let mut table = ParquetTable::pairs(path, near.is_verified())?;
            near.for_each_pair(telling(&bars, |a, b, distance, jaccard| {
                Ok(table.push_pair(a, b, distance, jaccard)?)
            }))?;
            table.finish()?;
        } else {
            let json = output::is_json_output(path, args.json);
            output::write_to(Some(path), |out| write_pairs(out, &near, json, &bars))?;
        }
        bars.finish();
    }
    if let Some(path) = &args.clusters {
        if output::is_parquet_name(path) {
            let mut table = ParquetTable::clusters(path)?;
            near.for_each_cluster(|c| -> Result<()> {
                for (id, _) in &c.members {
                    table.push_cluster_member(c.number, id, c.kept.len() as u64)?;
                }
                Ok(())
            })?;
            table.finish()?;
        } else {
            let json = output::is_json_output(path, args.json);
            output::write_to(Some(path), |out| write_clusters(out, &near, json))?;
        }
    }
    if let Some(path) = &args.duplicates {
        if output::is_parquet_name(path) {
            let mut table = ParquetTable::audit_duplicates(path, near.is_verified())?;
            near.for_each_duplicate(|d| -> Result<()> {
                Ok(table.push_audit_duplicate(d.id, d.kept, d.distance, d.jaccard)?)
            })?;
            table.finish()?;
        } else {
            let json = output::is_json_output(path, args.json);
            output::write_to(Some(path), |out| write_duplicates(out, &near, json))?;
        }
    }
    if let Some(path) = &args.keep {
        if output::is_parquet_name(path) {
            let mut table = ParquetTable::ids(path)?;
            near.for_each_kept(|id| -> Result<()> { Ok(table.push_id(id)?) })?;
            table.finish()?;
        } else {
            output::write_to(Some(path), |out| write_kept(out, &near))?;
        }
    }
    if let Some(path) = &args.report {
        near.write_report(path)?;
    }
    if args.json {
        #[derive(serde::Serialize)]
        struct SummaryLine<'a> {
            summary: &'a simhashdb::AuditSummary,
        }
        let line = SummaryLine { summary: &summary };
        if nothing_asked || to_stdout > 0 {
            output::json_line(&mut std::io::stderr().lock(), &line)?;
        } else {
            let mut out = output::stdout();
            output::json_line(&mut out, &line)?;
            out.flush()?;
        }
    }
    let unverified = match summary.unverified_pairs {
        0 => String::new(),
        n => format!(" ({n} unverified: a document has no sketch)"),
    };
    eprintln!(
        "audit: {} documents ({} distinct fingerprints), distance {distance}: {} pairs{unverified}, {} \
         clusters, largest {}, {} duplicates, {} kept, {:.2} s",
        summary.documents,
        summary.distinct_fingerprints,
        summary.pairs,
        summary.clusters,
        summary.largest_cluster,
        summary.duplicates,
        summary.kept,
        started.elapsed().as_secs_f64()
    );
    if summary.clusters_keeping_several > 0 {
        eprintln!(
            "audit: {} clusters keep more than one document (chains of near copies whose ends \
             are not near each other)",
            summary.clusters_keeping_several
        );
    }
    Ok(())
}

/// Pairs written between two progress updates.
const PROGRESS_STEP: u64 = 1 << 16;

/// `write` of each pair, telling `progress` of every [`PROGRESS_STEP`] pairs written.
fn telling<'a>(
    progress: &'a dyn simhashdb::Progress,
    mut write: impl FnMut(&str, &str, u32, Option<f64>) -> Result<()> + 'a,
) -> impl FnMut(&str, &str, u32, Option<f64>) -> Result<()> + 'a {
    let mut written = 0u64;
    move |a, b, distance, jaccard| {
        write(a, b, distance, jaccard)?;
        written += 1;
        if written.is_multiple_of(PROGRESS_STEP) {
            progress.advance(PROGRESS_STEP);
        }
        Ok(())
    }
}

fn write_pairs(
    out: &mut dyn Write,
    near: &NearDuplicates,
    json: bool,
    progress: &dyn simhashdb::Progress,
) -> Result<()> {
    /// A pair as `--json` prints it, with its Jaccard when verified (or the flag saying it
    /// could not be).
    #[derive(serde::Serialize)]
    struct PairLine<'a> {
        a: &'a str,
        b: &'a str,
        distance: u32,
        #[serde(skip_serializing_if = "Option::is_none")]
        jaccard: Option<f64>,
        #[serde(skip_serializing_if = "std::ops::Not::not")]
        unverified: bool,
    }
    let verified = near.is_verified();
    let mut written = 0u64;
    near.for_each_pair_parallel(
        || (PairLines::with_capacity(2 << 20), 0u64),
        |(lines, count), a, b, distance, jaccard| -> Result<()> {
            *count += 1;
            if json {
                return output::json_line(
                    &mut lines.bytes,
                    &PairLine {
                        a,
                        b,
                        distance,
                        jaccard,
                        unverified: verified && jaccard.is_none(),
                    },
                );
            }
            let fourth = match jaccard {
                Some(j) => Fourth::Jaccard(j),
                None if verified => Fourth::Unverified,
                None => Fourth::None,
            };
            lines.push(a, b, distance, fourth);
            Ok(())
        },
        |(lines, count)| {
            out.write_all(&lines.bytes)?;
            written += count;
            progress.advance(count);
            Ok(())
        },
    )?;
    debug_assert_eq!(written, near.summary().pairs);
    Ok(())
}

fn write_clusters(out: &mut dyn Write, near: &NearDuplicates, json: bool) -> Result<()> {
    #[derive(serde::Serialize)]
    struct ClusterLine<'a> {
        cluster: u64,
        ids: Vec<&'a str>,
        kept: usize,
    }
    near.for_each_cluster(|c| -> Result<()> {
        if json {
            let ids = c.members.iter().map(|(id, _)| *id).collect();
            return output::json_line(
                out,
                &ClusterLine {
                    cluster: c.number,
                    ids,
                    kept: c.kept.len(),
                },
            );
        }
        for (id, _) in &c.members {
            writeln!(out, "{}\t{id}\t{}", c.number, c.kept.len())?;
        }
        Ok(())
    })?;
    Ok(())
}

fn write_duplicates(out: &mut dyn Write, near: &NearDuplicates, json: bool) -> Result<()> {
    let verified = near.is_verified();
    near.for_each_duplicate(|d| -> Result<()> {
        if json {
            return output::json_line(out, d);
        }
        write!(out, "{}\t{}\t{}", d.id, d.kept, d.distance)?;
        match (verified, d.jaccard) {
            (false, _) => writeln!(out)?,
            (true, Some(j)) => writeln!(out, "\t{j:.6}")?,
            (true, None) => writeln!(out, "\tunverified")?,
        }
        Ok(())
    })
}

fn write_kept(out: &mut dyn Write, near: &NearDuplicates) -> Result<()> {
    near.for_each_kept(|id| -> Result<()> {
        writeln!(out, "{id}")?;
        Ok(())
    })
}
