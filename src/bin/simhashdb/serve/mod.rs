//! `simhashdb serve`: the store as a long-running HTTP service (docs/serve.md).
//!
//! A thin layer over [`simhashdb::Reader`]: the reader pins the tables in memory and follows
//! every commit; the HTTP layer parses requests, calls the library and counts what it did.
//! Connections are served by hyper directly (not `axum::serve`) for a header read timeout.

mod api_error;
mod metrics;
mod routes;
mod service;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{anyhow, Context, Result};
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use simhashdb::{Database, DatabaseOptions, Event, Snapshot};
use tokio::sync::watch;

use crate::exit_codes::usage;
use service::{Limits, Service};

/// Serve the store over HTTP: queries, inserts, deletes, stats, health and metrics.
///
/// The tables are read into memory at start (up to --cache-mib); /readyz answers 200 once
/// they are. A batch committed by any process is seen within a second. SIGTERM or SIGINT
/// stops the server: requests in flight finish, new connections are refused. The API and
/// its errors are in docs/serve.md.
#[derive(clap::Args)]
pub struct Args {
    /// The store.
    store: PathBuf,
    /// Address to listen on (port 0 picks a free port; the address is printed).
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:7878")]
    listen: String,
    /// A file holding the API key every request but /livez and /readyz must send (as
    /// 'Authorization: Bearer KEY').
    #[arg(long, value_name = "FILE")]
    api_key_file: Option<PathBuf>,
    /// Refuse inserts and deletes (403; dry runs are answered).
    #[arg(long)]
    read_only: bool,
    /// Listen beyond loopback without --api-key-file: anyone who reaches the port may
    /// insert and delete. Without it such a --listen is refused.
    #[arg(long)]
    insecure_no_key: bool,
    /// MiB of permuted tables to hold in memory (tables past it are read from disk through a
    /// cache of an eighth of it, 16 to 1024 MiB). Default: half the machine's memory.
    #[arg(long, value_name = "MIB",
          value_parser = clap::value_parser!(u64).range(1..=1 << 30), allow_negative_numbers = true)]
    cache_mib: Option<u64>,
    /// Largest request body, in MiB.
    #[arg(long, value_name = "MIB", default_value_t = 256,
          value_parser = clap::value_parser!(u64).range(1..=1 << 20), allow_negative_numbers = true)]
    max_body_mib: u64,
    /// Most query fingerprints in one request.
    #[arg(long, value_name = "N", default_value_t = 100_000,
          value_parser = clap::value_parser!(u64).range(1..=1 << 32), allow_negative_numbers = true)]
    max_queries: u64,
    /// Seconds a client has to send a request's headers, and again its body.
    #[arg(long, value_name = "SECONDS", default_value_t = 30,
          value_parser = clap::value_parser!(u64).range(1..=86_400), allow_negative_numbers = true)]
    request_timeout: u64,
}

/// How often the reader looks for a newer committed state: well within the promised second.
const REFRESH_EVERY: Duration = Duration::from_millis(200);

pub fn run(args: Args) -> Result<()> {
    // Fail before listening on what would only fail later.
    Snapshot::open(&args.store)
        .with_context(|| format!("{}: cannot open the store", args.store.display()))?;
    let api_key = args.api_key_file.as_deref().map(read_key).transpose()?;
    let listen = resolve(&args.listen)?;
    if !listen.ip().is_loopback() && api_key.is_none() && !args.insecure_no_key {
        return Err(usage(format!(
            "--listen {}: beyond loopback, every host that reaches the port could insert and \
             delete; give --api-key-file FILE (or --read-only with --insecure-no-key, or \
             --insecure-no-key to serve it open anyway)",
            args.listen
        )));
    }
    let mut options = DatabaseOptions {
        refresh_after: Some(REFRESH_EVERY),
        refresh_in_background: true,
        compact_in_background: true,
        ..DatabaseOptions::default()
    };
    if let Some(mib) = args.cache_mib {
        let bytes = mib << 20;
        options.pin_bytes = bytes;
        options.cache_bytes = usize::try_from(bytes / 8)
            .unwrap_or(usize::MAX)
            .clamp(16 << 20, 1 << 30);
    }
    let limits = Limits {
        max_body: usize::try_from(args.max_body_mib << 20).unwrap_or(usize::MAX),
        max_queries: usize::try_from(args.max_queries).unwrap_or(usize::MAX),
        body_timeout: Duration::from_secs(args.request_timeout),
    };
    let service = Arc::new(Service::new(
        args.store.clone(),
        args.read_only,
        api_key,
        limits,
    ));
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let header_timeout = Duration::from_secs(args.request_timeout);
    let result = runtime.block_on(serve(service, listen, options, header_timeout));
    // A background compaction still running is abandoned: nothing of it is committed, and
    // the next writer to open the store removes its files.
    runtime.shutdown_timeout(Duration::from_secs(1));
    result
}

/// Reads the API key: the file's content without surrounding whitespace, not empty.
fn read_key(path: &std::path::Path) -> Result<String> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("--api-key-file {}: cannot read it", path.display()))?;
    let key = text.trim();
    if key.is_empty() {
        return Err(usage(format!(
            "--api-key-file {}: the file is empty",
            path.display()
        )));
    }
    Ok(key.to_string())
}

/// The address `--listen` names: IP:PORT, or HOST:PORT resolved (its first address).
fn resolve(listen: &str) -> Result<SocketAddr> {
    use std::net::ToSocketAddrs;
    if let Ok(address) = listen.parse() {
        return Ok(address);
    }
    let bad = |why: String| {
        usage(format!(
            "--listen {listen:?}: {why} (expected IP:PORT or HOST:PORT)"
        ))
    };
    listen
        .to_socket_addrs()
        .map_err(|e| bad(e.to_string()))?
        .next()
        .ok_or_else(|| bad("the name has no address".to_string()))
}

async fn serve(
    service: Arc<Service>,
    listen: SocketAddr,
    options: DatabaseOptions,
    header_timeout: Duration,
) -> Result<()> {
    let listener = tokio::net::TcpListener::bind(listen)
        .await
        .with_context(|| format!("--listen {listen}: cannot listen there"))?;
    let local = listener.local_addr().context("the listening address")?;
    eprintln!(
        "simhashdb serve: {} on http://{local} (loading the tables)",
        service.dir.display()
    );
    // A failure to open the store, or a signal, ends the server.
    let (stop, mut stopped) = watch::channel(None::<String>);
    let stop = Arc::new(stop);
    spawn_warm_up(Arc::clone(&service), options, Arc::clone(&stop));
    tokio::spawn(signals(Arc::clone(&stop)));

    let app = routes::router(Arc::clone(&service));
    let graceful = GracefulShutdown::new();
    loop {
        tokio::select! {
            accepted = listener.accept() => {
                let stream = match accepted {
                    Ok((stream, _)) => stream,
                    Err(e) => {
                        // Out of file descriptors and the like: wait, do not spin.
                        eprintln!("simhashdb serve: cannot accept a connection: {e}");
                        tokio::time::sleep(Duration::from_millis(50)).await;
                        continue;
                    }
                };
                let _ = stream.set_nodelay(true);
                let connection = hyper::server::conn::http1::Builder::new()
                    .timer(TokioTimer::new())
                    .header_read_timeout(header_timeout)
                    .serve_connection(TokioIo::new(stream), TowerToHyperService::new(app.clone()));
                let connection = graceful.watch(connection);
                tokio::spawn(async move {
                    let _ = connection.await;
                });
            }
            _ = stopped.changed() => break,
        }
    }
    drop(listener);
    let reason = stopped.borrow().clone().unwrap_or_default();
    eprintln!("simhashdb serve: {reason}; finishing the requests in flight");
    graceful.shutdown().await;
    if service.compacting() {
        eprintln!(
            "simhashdb serve: a background compaction was running; it is abandoned (nothing \
             of it was committed)"
        );
    }
    match reason.strip_prefix("error: ") {
        Some(error) => Err(anyhow!("{error}")),
        None => Ok(()),
    }
}

/// Opens the store and pins its tables on a thread of its own; the server is ready after.
fn spawn_warm_up(
    service: Arc<Service>,
    mut options: DatabaseOptions,
    stop: Arc<watch::Sender<Option<String>>>,
) {
    std::thread::spawn(move || {
        let start = Instant::now();
        options.on_event = Some(Arc::new(log_event(Arc::downgrade(&service))));
        match Database::open(&service.dir, options) {
            Ok(database) => {
                let stats = database.stats();
                let snapshot = database.current();
                eprintln!(
                    "simhashdb serve: ready: {} documents in {} runs; {} tables ({:.1} MiB) in \
                     memory, {} read from disk; loaded in {:.1} s",
                    snapshot.documents(),
                    snapshot.run_count(),
                    stats.pinned_tables,
                    stats.pinned_bytes as f64 / (1 << 20) as f64,
                    stats.disk_tables,
                    start.elapsed().as_secs_f64()
                );
                service.set_ready(database);
            }
            Err(e) => {
                let _ = stop.send(Some(format!(
                    "error: {}: cannot open the store: {}",
                    service.dir.display(),
                    crate::exit_codes::message(&anyhow::Error::from(e))
                )));
            }
        }
    });
}

/// Logs what the store's handle did in the background, and counts failed loads.
fn log_event(service: std::sync::Weak<Service>) -> impl Fn(Event) + Send + Sync {
    move |event| {
        let Some(service) = service.upgrade() else {
            return;
        };
        let dir = service.dir.display();
        match event {
            Event::Compacted(summary) => {
                eprintln!("simhashdb serve: {}", crate::compact::describe(&summary))
            }
            Event::CompactionFailed(e) => eprintln!(
                "simhashdb serve: {dir}: the background compaction failed (the store is \
                 intact; the next write retries it): {e}"
            ),
            Event::RefreshFailed(e) => {
                service.metrics.refresh_errors.inc();
                eprintln!(
                    "simhashdb serve: {dir}: cannot load the newly committed state (queries \
                     keep the previous one): {e}"
                );
            }
            Event::RemovedDebris(debris) => {
                for item in &debris {
                    eprintln!("simhashdb serve: removed {}", crate::writer::describe(item));
                }
            }
            _ => {}
        }
    }
}

/// Waits for SIGTERM or SIGINT, then asks the server to stop.
async fn signals(stop: Arc<watch::Sender<Option<String>>>) {
    use tokio::signal::unix::{signal, SignalKind};
    let (Ok(mut term), Ok(mut int)) = (
        signal(SignalKind::terminate()),
        signal(SignalKind::interrupt()),
    ) else {
        return;
    };
    let name = tokio::select! {
        _ = term.recv() => "SIGTERM",
        _ = int.recv() => "SIGINT",
    };
    let _ = stop.send(Some(format!("{name} received")));
}
