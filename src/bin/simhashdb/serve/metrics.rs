//! `GET /metrics`: what the service did (requests, latency, queries, matches) and what the
//! store and its reader hold, in Prometheus' text format.

use std::fmt::Write as _;
use std::time::Duration;

use prometheus::{
    Encoder, HistogramOpts, HistogramVec, IntCounter, IntCounterVec, Opts, Registry, TextEncoder,
};
use simhashdb::Database;

/// The service's own counters; the store's figures are read when scraped.
pub struct Metrics {
    registry: Registry,
    requests: IntCounterVec,
    latency: HistogramVec,
    pub queries: IntCounter,
    pub matches: IntCounter,
    pub refresh_errors: IntCounter,
}

impl Metrics {
    pub fn new() -> Self {
        let registry = Registry::new();
        let requests = IntCounterVec::new(
            Opts::new("simhashdb_http_requests_total", "HTTP requests answered"),
            &["endpoint", "status"],
        )
        .expect("valid metric");
        // 50 us to 10 s: a warm single query up to a large insert.
        let buckets = prometheus::exponential_buckets(50e-6, 2.5, 15).expect("valid buckets");
        let latency = HistogramVec::new(
            HistogramOpts::new(
                "simhashdb_http_request_duration_seconds",
                "Time from a request's headers to its answer",
            )
            .buckets(buckets),
            &["endpoint"],
        )
        .expect("valid metric");
        let queries = IntCounter::new("simhashdb_queries_total", "Query fingerprints answered")
            .expect("valid metric");
        let matches =
            IntCounter::new("simhashdb_matches_total", "Matches returned").expect("valid metric");
        let refresh_errors = IntCounter::new(
            "simhashdb_refresh_errors_total",
            "Failed attempts to load a newly committed state",
        )
        .expect("valid metric");
        for collector in [
            Box::new(requests.clone()) as Box<dyn prometheus::core::Collector>,
            Box::new(latency.clone()),
            Box::new(queries.clone()),
            Box::new(matches.clone()),
            Box::new(refresh_errors.clone()),
        ] {
            registry.register(collector).expect("each metric once");
        }
        Metrics {
            registry,
            requests,
            latency,
            queries,
            matches,
            refresh_errors,
        }
    }

    /// Records one answered request.
    pub fn record(&self, endpoint: &str, status: u16, elapsed: Duration) {
        self.requests
            .with_label_values(&[endpoint, &status.to_string()])
            .inc();
        self.latency
            .with_label_values(&[endpoint])
            .observe(elapsed.as_secs_f64());
    }

    /// Every metric, the reader's (when the store is open) after the service's own.
    pub fn render(&self, database: Option<&Database>) -> String {
        let mut buffer = Vec::new();
        TextEncoder::new()
            .encode(&self.registry.gather(), &mut buffer)
            .expect("text encoding into memory");
        let mut text = String::from_utf8(buffer).expect("the text format is UTF-8");
        let mut family = |name: &str, kind: &str, help: &str, samples: &[(&str, u64)]| {
            let _ = writeln!(text, "# HELP {name} {help}\n# TYPE {name} {kind}");
            for (labels, value) in samples {
                let _ = writeln!(text, "{name}{labels} {value}");
            }
        };
        family(
            "simhashdb_ready",
            "gauge",
            "1 once the store is open and its tables are loaded",
            &[("", u64::from(database.is_some()))],
        );
        let Some(database) = database else {
            return text;
        };
        let snapshot = database.current();
        let stats = database.stats();
        family(
            "simhashdb_documents",
            "gauge",
            "Documents stored",
            &[("", snapshot.documents())],
        );
        family(
            "simhashdb_runs",
            "gauge",
            "Runs a query probes",
            &[("", snapshot.run_count() as u64)],
        );
        family(
            "simhashdb_batches",
            "gauge",
            "Batches committed",
            &[("", snapshot.batches().len() as u64)],
        );
        family(
            "simhashdb_pinned_bytes",
            "gauge",
            "Bytes of permuted tables held in memory",
            &[("", stats.pinned_bytes)],
        );
        family(
            "simhashdb_tables",
            "gauge",
            "Permuted tables (one per run and permutation) by where they are read from",
            &[
                ("{where=\"memory\"}", stats.pinned_tables),
                ("{where=\"disk\"}", stats.disk_tables),
            ],
        );
        family(
            "simhashdb_probes_total",
            "counter",
            "Table probes by where they were answered (memory: the cache hits)",
            &[
                ("{where=\"memory\"}", stats.memory_probes),
                ("{where=\"disk\"}", stats.disk_probes),
            ],
        );
        family(
            "simhashdb_refreshes_total",
            "counter",
            "Newly committed states made current",
            &[("", stats.refreshes)],
        );
        text
    }
}
