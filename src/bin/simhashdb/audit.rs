//! `simhashdb audit`: every near-duplicate pair and cluster in a store.

use std::io::Write;
use std::path::PathBuf;
use std::time::Instant;

use anyhow::{Context, Result};
use simhashdb::parquet::ParquetTable;
use simhashdb::{clusters, verify_with_corpus, DocumentPair, Snapshot};

use crate::documents::FieldArgs;
use crate::{output, progress};

/// List every pair of stored documents within D bits, and their clusters.
///
/// Pairs: ID_A<TAB>ID_B<TAB>DISTANCE, each pair once with ID_A < ID_B, sorted; documents that
/// share a fingerprint pair at distance 0. Clusters (connected components of the pairs):
/// CLUSTER_ID<TAB>ID, one member per line, clusters numbered from 1 in order of their smallest
/// id. With neither --pairs nor --clusters, pairs go to stdout. A FILE ending in .parquet is
/// written as Parquet: pairs (id_a, id_b, distance[, jaccard]), clusters (cluster_id, id). A
/// summary goes to stderr.
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
    /// Also list documents with no near duplicate, each as a cluster of one.
    #[arg(long)]
    singletons: bool,
    /// Write JSON Lines: pairs {"a", "b", "distance"[, "jaccard"]}, clusters {"cluster", "ids"}.
    #[arg(long)]
    json: bool,
    /// Re-read the documents (JSON Lines {"id", "text"}, Parquet with id and text columns, or
    /// a directory of text files) and keep only pairs whose word 3-shingle Jaccard similarity
    /// is at least --min-jaccard, printed as a fourth column.
    #[arg(long, value_name = "CORPUS")]
    verify_text: Option<PathBuf>,
    #[command(flatten)]
    fields: FieldArgs,
    /// The least Jaccard similarity a verified pair keeps (with --verify-text).
    #[arg(
        long,
        value_name = "J",
        default_value_t = 0.8,
        requires = "verify_text"
    )]
    min_jaccard: f64,
}

pub fn run(args: Args) -> Result<()> {
    let started = Instant::now();
    let snapshot = Snapshot::open_for_scan(&args.store)
        .with_context(|| format!("{}: cannot open the store", args.store.display()))?;
    let distance = snapshot.distance(args.distance)?;
    let pairs = snapshot.audit(distance, &progress::Bars::default())?;
    let pairs: Vec<(DocumentPair, Option<f64>)> = match &args.verify_text {
        None => pairs.into_iter().map(|p| (p, None)).collect(),
        Some(corpus) => {
            let options = args
                .fields
                .options(simhashdb::ReadOptions::default().scheme, false);
            verify_with_corpus(pairs, corpus, &options, args.min_jaccard)?
                .into_iter()
                .map(|(p, j)| (p, Some(j)))
                .collect()
        }
    };

    let pairs_to = match (&args.pairs, &args.clusters) {
        (None, None) => Some(PathBuf::from("-")),
        (pairs, _) => pairs.clone(),
    };
    if let Some(path) = &pairs_to {
        if output::is_parquet_name(path) {
            ParquetTable::write_pairs(path, &pairs)?;
        } else {
            output::write_to(Some(path), |out| write_pairs(out, &pairs, args.json))?;
        }
    }
    let plain: Vec<DocumentPair> = pairs.iter().map(|(p, _)| p.clone()).collect();
    let groups = clusters(&plain);
    let largest = groups.iter().map(Vec::len).max().unwrap_or(0);
    let clustered = groups.len();
    if let Some(path) = &args.clusters {
        let groups = if args.singletons {
            snapshot.clusters_with_singletons(&plain, true)?
        } else {
            groups
        };
        if output::is_parquet_name(path) {
            ParquetTable::write_clusters(path, &groups)?;
        } else {
            output::write_to(Some(path), |out| write_clusters(out, &groups, args.json))?;
        }
    }
    eprintln!(
        "audit: {} documents, distance {distance}: {} pairs, {clustered} clusters, largest {largest}, {:.2} s",
        snapshot.documents(),
        pairs.len(),
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

fn write_pairs(
    out: &mut dyn Write,
    pairs: &[(DocumentPair, Option<f64>)],
    json: bool,
) -> Result<()> {
    /// A pair as `--json` prints it: the library's pair, and its Jaccard when verified.
    #[derive(serde::Serialize)]
    struct PairLine<'a> {
        #[serde(flatten)]
        pair: &'a DocumentPair,
        #[serde(skip_serializing_if = "Option::is_none")]
        jaccard: Option<f64>,
    }
    for (p, jaccard) in pairs {
        match (json, jaccard) {
            (true, &jaccard) => output::json_line(out, &PairLine { pair: p, jaccard })?,
            (false, None) => writeln!(out, "{}\t{}\t{}", p.a, p.b, p.distance)?,
            (false, Some(j)) => writeln!(out, "{}\t{}\t{}\t{j:.6}", p.a, p.b, p.distance)?,
        }
    }
    Ok(())
}

fn write_clusters(out: &mut dyn Write, groups: &[Vec<String>], json: bool) -> Result<()> {
    for (n, members) in groups.iter().enumerate() {
        let cluster = n + 1;
        if json {
            #[derive(serde::Serialize)]
            struct ClusterLine<'a> {
                cluster: usize,
                ids: &'a [String],
            }
            output::json_line(
                out,
                &ClusterLine {
                    cluster,
                    ids: members,
                },
            )?;
        } else {
            for id in members {
                writeln!(out, "{cluster}\t{id}")?;
            }
        }
    }
    Ok(())
}
