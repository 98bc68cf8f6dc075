//! The state every request shares: the store's reader once it is warm, the limits, and the
//! one path by which this server writes.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use axum::http::StatusCode;
use simhashdb::{Reader, Store};

use super::api_error::ApiError;
use super::metrics::Metrics;

/// What a request may ask.
pub struct Limits {
    /// Bytes of a request body.
    pub max_body: usize,
    /// Query fingerprints in one request.
    pub max_queries: usize,
    /// Time to receive a request body.
    pub body_timeout: Duration,
}

pub struct Service {
    pub dir: PathBuf,
    /// Set once the store is open and its tables are in memory.
    reader: OnceLock<Reader>,
    pub read_only: bool,
    pub api_key: Option<String>,
    pub limits: Limits,
    pub metrics: Metrics,
    /// This server's writes and compactions, one at a time: a write waits for the one before
    /// (and for a merge it started); another process's writes meet the store's lock.
    writes: Arc<tokio::sync::Mutex<()>>,
    /// Set while a background compaction holds the store.
    compacting: Arc<AtomicBool>,
}

impl Service {
    pub fn new(dir: PathBuf, read_only: bool, api_key: Option<String>, limits: Limits) -> Self {
        Service {
            dir,
            reader: OnceLock::new(),
            read_only,
            api_key,
            limits,
            metrics: Metrics::new(),
            writes: Arc::default(),
            compacting: Arc::default(),
        }
    }

    /// Makes `reader` the one requests read.
    pub fn set_ready(&self, reader: Reader) {
        let _ = self.reader.set(reader);
    }

    /// The reader, if the store is ready.
    pub fn reader_if_ready(&self) -> Option<&Reader> {
        self.reader.get()
    }

    /// The reader, or 503 while the store is loading.
    pub fn reader(&self) -> Result<&Reader, ApiError> {
        self.reader.get().ok_or_else(|| {
            ApiError::new(
                StatusCode::SERVICE_UNAVAILABLE,
                "the store is still loading its tables into memory; retry shortly (GET /readyz \
                 says when it is ready)",
            )
        })
    }

    /// Whether a background compaction is running.
    pub fn compacting(&self) -> bool {
        self.compacting.load(Ordering::SeqCst)
    }

    /// Runs `write` on the store with its writer lock held, as the CLI does, then makes the
    /// new state current for queries before answering; a merge the store's policy asks for
    /// then runs in the background, and the next write waits for it. A store locked by
    /// another process is 409.
    pub async fn write<T: Send + 'static>(
        self: &Arc<Self>,
        write: impl FnOnce(&mut Store) -> Result<T, ApiError> + Send + 'static,
    ) -> Result<T, ApiError> {
        if self.read_only {
            return Err(ApiError::new(
                StatusCode::FORBIDDEN,
                "this server is read-only (started with --read-only)",
            ));
        }
        self.reader()?;
        let turn = Arc::clone(&self.writes).lock_owned().await;
        let service = Arc::clone(self);
        tokio::task::spawn_blocking(move || {
            let mut store = Store::open(&service.dir).map_err(ApiError::from)?;
            let answer = write(&mut store)?;
            service.refresh();
            service.compact_in_background(store, turn);
            Ok(answer)
        })
        .await
        .map_err(|e| {
            ApiError::new(
                StatusCode::INTERNAL_SERVER_ERROR,
                format!("the write failed unexpectedly: {e}"),
            )
        })?
    }

    /// Makes the committed state current; a failure keeps the old one and is logged.
    pub fn refresh(&self) {
        if let Some(reader) = self.reader.get() {
            if let Err(e) = reader.refresh() {
                self.metrics.refresh_errors.inc();
                eprintln!(
                    "simhashdb serve: {}: cannot load the newly committed state (queries keep \
                     the previous one): {e}",
                    self.dir.display()
                );
            }
        }
    }

    /// Merges runs in a thread of its own if the store's policy asks for it; queries go on
    /// reading the runs they have until the merged one is committed and loaded.
    fn compact_in_background(
        self: &Arc<Self>,
        mut store: Store,
        turn: tokio::sync::OwnedMutexGuard<()>,
    ) {
        if !store.compaction_due() {
            return;
        }
        self.compacting.store(true, Ordering::SeqCst);
        let service = Arc::clone(self);
        std::thread::spawn(move || {
            // At the lowest priority: the queries go on meanwhile, on the same cores.
            match simhashdb::background::run(|| store.compact_if_due()) {
                Ok(Some(summary)) => {
                    eprintln!("simhashdb serve: {}", crate::compact::describe(&summary))
                }
                Ok(None) => {}
                Err(e) => eprintln!(
                    "simhashdb serve: {}: the background compaction failed (the store is \
                     intact; the next write retries it): {e}",
                    service.dir.display()
                ),
            }
            drop(store);
            service.compacting.store(false, Ordering::SeqCst);
            service.refresh();
            drop(turn);
        });
    }
}
