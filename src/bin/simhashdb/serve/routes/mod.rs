//! The HTTP API (docs/serve.md): the routes, and a module per group of endpoints, each
//! handler a thin call into the library.

use std::sync::Arc;
use std::time::Instant;

use axum::body::{Body, Bytes};
use axum::extract::{MatchedPath, Path, Query, Request, State};
use axum::http::{header, HeaderMap, Method, StatusCode, Uri};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde::Deserialize;
use serde_json::{json, Value};
use simhashdb::{
    CompactSummary, DedupOptions, ExpireSelector, FingerprintFormat, InputFormat, InsertOptions,
    Match, MaxSkipped, ReadOptions, Rejects, Snapshot, Source,
};

use super::api_error::ApiError;
use super::service::{blocking, Service};

mod body;
mod ingest;
mod layers;
mod lifecycle;
mod maintenance;
mod probes;
mod query;
mod reads;
mod skips;

use body::*;
use ingest::*;
use layers::*;
use lifecycle::*;
use maintenance::*;
use probes::*;
use query::*;
use reads::*;
use skips::*;

type Shared = Arc<Service>;

pub fn router(service: Shared) -> Router {
    let api = Router::new()
        .route("/v1/query", post(post_query).get(get_query))
        .route("/v1/insert", post(insert))
        .route("/v1/dedup", post(dedup))
        .route("/v1/delete", post(delete))
        .route("/v1/expire", post(expire))
        .route("/v1/compact", post(compact))
        .route("/v1/batches", get(batches))
        .route("/v1/documents/{id}", get(document))
        .route("/v1/stats", get(stats))
        .route("/metrics", get(metrics));
    Router::new()
        .route("/livez", get(livez))
        .route("/readyz", get(readyz))
        .merge(api)
        .fallback(no_such_endpoint)
        .method_not_allowed_fallback(method_not_allowed)
        .layer(middleware::from_fn(refuse_undecodable_query))
        // Every request, unknown paths and methods too (no probing), but the probes' GETs.
        .layer(middleware::from_fn_with_state(
            Arc::clone(&service),
            require_key,
        ))
        .layer(middleware::from_fn(close_after_errors))
        .layer(middleware::from_fn_with_state(
            Arc::clone(&service),
            record_metrics,
        ))
        .with_state(service)
}

/// The JSON form of a library value (its serde form: the same in every client).
pub(super) fn json_of(value: &impl serde::Serialize) -> Result<Value, ApiError> {
    serde_json::to_value(value)
        .map_err(|e| ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()))
}

/// An error of an insert that stored nothing, saying so.
pub(super) fn not_stored(error: simhashdb::Error) -> ApiError {
    saying(error, "nothing was stored")
}

/// An error of a delete or an expiry that changed nothing, saying so.
pub(super) fn not_changed(error: simhashdb::Error) -> ApiError {
    saying(error, "nothing was changed")
}

fn saying(error: simhashdb::Error, what: &str) -> ApiError {
    let mut api = ApiError::from(error);
    api.message = format!("{} ({what})", api.message);
    api
}
