//! The state every request shares: the store's handle once it is warm, the limits, and the
//! metrics. Reads, writes, reloads and background merges are the library's [`Database`].

use std::path::PathBuf;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use axum::http::StatusCode;
use simhashdb::{Database, Store};

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
    database: OnceLock<Database>,
    pub read_only: bool,
    pub api_key: Option<String>,
    pub limits: Limits,
    pub metrics: Metrics,
    /// Requests' writes queue here, not on blocking threads: a request whose client gave up
    /// while waiting drops out and never writes.
    writes: tokio::sync::Mutex<()>,
}

impl Service {
    pub fn new(dir: PathBuf, read_only: bool, api_key: Option<String>, limits: Limits) -> Self {
        Service {
            dir,
            database: OnceLock::new(),
            read_only,
            api_key,
            limits,
            metrics: Metrics::new(),
            writes: tokio::sync::Mutex::new(()),
        }
    }

    /// Makes `database` the one requests use.
    pub fn set_ready(&self, database: Database) {
        let _ = self.database.set(database);
    }

    /// The store's handle, if the store is ready.
    pub fn database_if_ready(&self) -> Option<&Database> {
        self.database.get()
    }

    /// The store's handle, or 503 while the store is loading.
    pub fn database(&self) -> Result<&Database, ApiError> {
        self.database.get().ok_or_else(|| {
            ApiError::new(
                StatusCode::SERVICE_UNAVAILABLE,
                "the store is still loading its tables into memory; retry shortly (GET /readyz \
                 says when it is ready)",
            )
        })
    }

    /// 403 on a read-only server: every write endpoint refuses, dry runs included.
    pub fn check_writable(&self) -> Result<(), ApiError> {
        if self.read_only {
            return Err(ApiError::new(
                StatusCode::FORBIDDEN,
                "this server is read-only (started with --read-only)",
            ));
        }
        Ok(())
    }

    /// Whether a background compaction is running.
    pub fn compacting(&self) -> bool {
        self.database.get().is_some_and(Database::compacting)
    }

    /// Runs `write` on the store with its writer lock held, as the CLI does (see
    /// [`Database::write`]): the new state is current for queries before the answer, and a
    /// merge the store's policy asks for then runs in the background. A store locked by
    /// another process is 409.
    pub async fn write<T: Send + 'static>(
        self: &Arc<Self>,
        write: impl FnOnce(&mut Store) -> Result<T, ApiError> + Send + 'static,
    ) -> Result<T, ApiError> {
        self.check_writable()?;
        let database = self.database()?.clone();
        let _queue = self.writes.lock().await;
        blocking("the write", move || database.write(write)).await
    }
}

/// Runs `work` on the blocking pool, off the async threads (work that reads many files or
/// waits for the writer's turn); a panic in it is a 500 saying `what` failed.
pub async fn blocking<T: Send + 'static>(
    what: &str,
    work: impl FnOnce() -> Result<T, ApiError> + Send + 'static,
) -> Result<T, ApiError> {
    tokio::task::spawn_blocking(work).await.map_err(|e| {
        ApiError::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            format!("{what} failed unexpectedly: {e}"),
        )
    })?
}
