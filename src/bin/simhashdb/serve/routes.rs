//! The HTTP API (docs/serve.md): routes, the key check, request metrics, and the handlers,
//! each a thin call into the library.

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
    Batch, CompactSummary, DedupOptions, ExpireSelector, FingerprintFormat, InputFormat,
    InsertOptions, Match, MaxSkipped, ReadOptions, Rejects, Snapshot, Source,
};

use super::api_error::ApiError;
use super::service::{blocking, Service};

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

/// Error answers end the connection (`Connection: close`). An error may be answered before
/// the request's body was read (a bad query string, a missing key, an unknown path); the
/// connection then still holds the unread body, so it cannot carry another request and is
/// closed, and a client that kept it for its next request would see that request fail.
async fn close_after_errors(request: Request, next: Next) -> Response {
    let mut response = next.run(request).await;
    if response.status().is_client_error() || response.status().is_server_error() {
        response.headers_mut().insert(
            header::CONNECTION,
            header::HeaderValue::from_static("close"),
        );
    }
    response
}

/// Counts every answer and its latency by endpoint (the route, not the raw path, so ids and
/// unknown paths do not make new series).
async fn record_metrics(State(service): State<Shared>, request: Request, next: Next) -> Response {
    let start = Instant::now();
    let endpoint = request
        .extensions()
        .get::<MatchedPath>()
        .map(|p| p.as_str().to_string())
        .unwrap_or_else(|| "other".to_string());
    let response = next.run(request).await;
    service
        .metrics
        .record(&endpoint, response.status().as_u16(), start.elapsed());
    response
}

/// With `--api-key-file`, every request but `GET /livez` and `GET /readyz` needs
/// `Authorization: Bearer KEY` (or `X-Api-Key: KEY`): unknown paths and methods too, so
/// nobody probes for endpoints without the key.
async fn require_key(
    State(service): State<Shared>,
    headers: HeaderMap,
    request: Request,
    next: Next,
) -> Response {
    let probe =
        request.method() == Method::GET && matches!(request.uri().path(), "/livez" | "/readyz");
    match key_refusal(&service, &headers).filter(|_| !probe) {
        Some(refusal) => refusal.into_response(),
        None => next.run(request).await,
    }
}

/// The 401 for a request without the server's key (None when it has it, or there is none).
fn key_refusal(service: &Service, headers: &HeaderMap) -> Option<ApiError> {
    let key = service.api_key.as_ref()?;
    let given = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split_once(' '))
        // The scheme's name is case-insensitive (RFC 9110, 11.1).
        .and_then(|(scheme, token)| scheme.eq_ignore_ascii_case("bearer").then_some(token))
        .or_else(|| headers.get("x-api-key").and_then(|v| v.to_str().ok()));
    match given {
        Some(given) if same_secret(given.trim().as_bytes(), key.as_bytes()) => None,
        Some(_) => Some(ApiError::new(StatusCode::UNAUTHORIZED, "wrong API key")),
        None => Some(ApiError::new(
            StatusCode::UNAUTHORIZED,
            "missing API key: send the header 'Authorization: Bearer KEY'",
        )),
    }
}

/// Compares two secrets in time that depends on their lengths only.
fn same_secret(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

async fn no_such_endpoint(method: Method, uri: Uri) -> ApiError {
    ApiError::new(
        StatusCode::NOT_FOUND,
        format!("no such endpoint: {method} {}", uri.path()),
    )
}

async fn method_not_allowed(method: Method, uri: Uri) -> ApiError {
    ApiError::new(
        StatusCode::METHOD_NOT_ALLOWED,
        format!("{} does not take {method}", uri.path()),
    )
}

async fn livez() -> Json<Value> {
    Json(json!({ "status": "alive" }))
}

async fn readyz(State(service): State<Shared>) -> Response {
    match service.database_if_ready() {
        Some(database) => Json(json!({
            "status": "ready",
            "documents": database.current().documents(),
        }))
        .into_response(),
        None => ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "loading: the store's tables are being read into memory",
        )
        .into_response(),
    }
}

async fn metrics(State(service): State<Shared>) -> Response {
    let text = service.metrics.render(service.database_if_ready());
    (
        [(
            header::CONTENT_TYPE,
            "text/plain; version=0.0.4; charset=utf-8",
        )],
        text,
    )
        .into_response()
}

/// Reads a request body, refusing one over the limit (413) or one that takes too long (408).
async fn read_body(service: &Service, headers: &HeaderMap, body: Body) -> Result<Bytes, ApiError> {
    let limit = service.limits.max_body;
    let too_large = || {
        ApiError::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            format!("the request body is over the limit of {limit} bytes (--max-body-mib)"),
        )
    };
    let declared = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > limit as u64) {
        return Err(too_large());
    }
    match tokio::time::timeout(
        service.limits.body_timeout,
        axum::body::to_bytes(body, limit),
    )
    .await
    {
        Err(_) => Err(ApiError::new(
            StatusCode::REQUEST_TIMEOUT,
            format!(
                "the request body did not arrive within {} s",
                service.limits.body_timeout.as_secs_f64()
            ),
        )),
        Ok(Err(e)) => {
            let over = std::error::Error::source(&e)
                .is_some_and(|s| s.is::<http_body_util::LengthLimitError>())
                || e.to_string().contains("length limit");
            Err(if over {
                too_large()
            } else {
                ApiError::bad_request(format!("cannot read the request body: {e}"))
            })
        }
        Ok(Ok(bytes)) => decompressed_body(headers, bytes, limit),
    }
}

/// A body as its sender meant it: gzip or zstd decompressed (said by Content-Encoding, or
/// recognised by its first bytes, as the CLI reads files), within the body limit.
fn decompressed_body(headers: &HeaderMap, bytes: Bytes, limit: usize) -> Result<Bytes, ApiError> {
    let encoding = headers
        .get(header::CONTENT_ENCODING)
        .map(|v| v.to_str().unwrap_or("?").trim().to_ascii_lowercase());
    if let Some(encoding) = encoding.filter(|e| !matches!(e.as_str(), "identity" | "gzip" | "zstd"))
    {
        return Err(ApiError::new(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            format!("Content-Encoding {encoding:?} is not read: send gzip, zstd or identity"),
        ));
    }
    match simhashdb::decompressed(&bytes, "request body", limit as u64) {
        Ok(std::borrow::Cow::Borrowed(_)) => Ok(bytes),
        Ok(std::borrow::Cow::Owned(content)) => Ok(Bytes::from(content)),
        Err(e) if e.kind() == simhashdb::ErrorKind::TooLarge => Err(ApiError {
            message: format!("{} (--max-body-mib)", e.message()),
            ..ApiError::from(e)
        }),
        Err(e) => Err(ApiError::from(e)),
    }
}

/// Parses a JSON body into `T`, naming what is wrong and where.
fn parse_json<T: serde::de::DeserializeOwned>(body: &[u8]) -> Result<T, ApiError> {
    serde_json::from_slice(body)
        .map_err(|e| ApiError::bad_request(format!("invalid JSON body: {e}")))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct QueryBody {
    fingerprints: Option<Vec<Value>>,
    texts: Option<Vec<String>>,
    documents: Option<Vec<DocumentBody>>,
    distance: Option<i64>,
    fingerprint_format: Option<String>,
    /// Verify matches with sketches (a store made with `init --sketch`).
    min_jaccard: Option<f64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct DocumentBody {
    id: String,
    text: String,
}

/// `fingerprint_format` as a request gives it (a body field or a query parameter).
fn fingerprint_format(name: Option<&str>) -> Result<FingerprintFormat, ApiError> {
    name.map_or(Ok(FingerprintFormat::Auto), |name| {
        FingerprintFormat::parse(name)
            .map_err(|e| ApiError::bad_request(format!("fingerprint_format: {e}")))
    })
}

/// A query: its fingerprint, and its text's sketch in a store that keeps sketches.
type QueryDigest = (u64, Option<Vec<u8>>);

/// The query fingerprints of a request: its fingerprints, or its texts or documents
/// fingerprinted with the store's scheme.
/// A warning about the fingerprints' notation goes to `warnings`.
fn query_fingerprints(
    body: &QueryBody,
    snapshot: &Snapshot,
    warnings: &mut Vec<String>,
) -> Result<Vec<QueryDigest>, ApiError> {
    let given = [
        body.fingerprints.is_some(),
        body.texts.is_some(),
        body.documents.is_some(),
    ];
    if given.iter().filter(|&&g| g).count() != 1 {
        return Err(ApiError::bad_request(
            "give exactly one of \"fingerprints\", \"texts\" or \"documents\"",
        ));
    }
    let format = fingerprint_format(body.fingerprint_format.as_deref())?;
    if let Some(values) = &body.fingerprints {
        let (fingerprints, warning) = format
            .read_json_many(values)
            .map_err(|e| ApiError::bad_request(format!("fingerprints: {e}")))?;
        *warnings = warning.into_iter().collect();
        return Ok(fingerprints.into_iter().map(|fp| (fp, None)).collect());
    }
    let scheme = snapshot.text_scheme()?;
    let texts: Vec<(String, &str)> = match (&body.texts, &body.documents) {
        (Some(texts), _) => texts
            .iter()
            .enumerate()
            .map(|(i, t)| (format!("texts[{i}]"), t.as_str()))
            .collect(),
        (_, Some(documents)) => documents
            .iter()
            .enumerate()
            .map(|(i, d)| (format!("documents[{i}]"), d.text.as_str()))
            .collect(),
        _ => unreachable!("one of the three is given"),
    };
    texts
        .iter()
        .map(|(place, text)| {
            scheme
                .document(text)
                .map_err(|e| ApiError::bad_request(format!("{place}: {e}")))
        })
        .collect()
}

/// Queries answered on the request's own thread; larger batches go to the thread pool.
const INLINE_QUERIES: usize = 16;

/// Answers `queries` on `snapshot`, counting them.
async fn answer(
    service: &Service,
    snapshot: Arc<Snapshot>,
    queries: Vec<u64>,
    distance: u32,
) -> Result<Vec<Vec<Match>>, ApiError> {
    let results = if queries.len() <= INLINE_QUERIES {
        queries
            .iter()
            .map(|&q| snapshot.query(q, distance))
            .collect::<simhashdb::Result<Vec<_>>>()?
    } else {
        blocking("the query", move || {
            snapshot
                .query_many(&queries, distance)
                .map_err(ApiError::from)
        })
        .await?
    };
    service.metrics.queries.inc_by(results.len() as u64);
    service
        .metrics
        .matches
        .inc_by(results.iter().map(|r| r.len() as u64).sum());
    Ok(results)
}

/// A match as a query answers it: the library's match, and with `min_jaccard` the
/// estimate, or the flag saying the match could not be verified (a side has no sketch).
#[derive(serde::Serialize)]
struct VerifiedMatch {
    #[serde(flatten)]
    found: Match,
    #[serde(skip_serializing_if = "Option::is_none")]
    jaccard: Option<f64>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    unverified: bool,
}

/// Answers `queries` verified with sketches on the thread pool, counting them.
async fn answer_verified(
    service: &Service,
    snapshot: Arc<Snapshot>,
    queries: Vec<QueryDigest>,
    distance: u32,
    min_jaccard: f64,
) -> Result<Vec<Vec<VerifiedMatch>>, ApiError> {
    let results = blocking("the query", move || {
        let asked: Vec<(u64, Option<&[u8]>)> = queries
            .iter()
            .map(|(q, sketch)| (*q, sketch.as_deref()))
            .collect();
        snapshot
            .query_many_verified(&asked, distance, min_jaccard)
            .map_err(ApiError::from)
    })
    .await?;
    service.metrics.queries.inc_by(results.len() as u64);
    service
        .metrics
        .matches
        .inc_by(results.iter().map(|r| r.len() as u64).sum());
    Ok(results
        .into_iter()
        .map(|matches| {
            matches
                .into_iter()
                .map(|(found, jaccard)| VerifiedMatch {
                    found,
                    unverified: jaccard.is_none(),
                    jaccard,
                })
                .collect()
        })
        .collect())
}

async fn post_query(
    State(service): State<Shared>,
    headers: HeaderMap,
    body: Body,
) -> Result<Response, ApiError> {
    let database = service.database()?;
    let body: QueryBody = parse_json(&read_body(&service, &headers, body).await?)?;
    let snapshot = database.current();
    let distance = snapshot.distance(body.distance)?;
    let mut warnings = Vec::new();
    let queries = query_fingerprints(&body, &snapshot, &mut warnings)?;
    if queries.len() > service.limits.max_queries {
        return Err(ApiError::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            format!(
                "{} queries in one request; the limit is {} (--max-queries): send them in \
                 several requests",
                queries.len(),
                service.limits.max_queries
            ),
        ));
    }
    let fingerprints: Vec<String> = queries.iter().map(|(q, _)| format!("{q:016x}")).collect();
    // Serialized straight from the matches: a JSON tree of 10,000 answers costs more than
    // the answers.
    #[derive(serde::Serialize)]
    struct Answer<'a, M> {
        results: &'a [Vec<M>],
        fingerprints: Vec<String>,
        /// A documents query's ids, in the order of `results`.
        #[serde(skip_serializing_if = "Option::is_none")]
        ids: Option<Vec<String>>,
        distance: u32,
        /// Said when the fingerprints could have been written in either notation.
        #[serde(skip_serializing_if = "Vec::is_empty")]
        warnings: Vec<String>,
    }
    let ids = body
        .documents
        .map(|documents| documents.into_iter().map(|d| d.id).collect());
    Ok(match body.min_jaccard {
        None => {
            let queries = queries.into_iter().map(|(q, _)| q).collect();
            let results = answer(&service, snapshot, queries, distance).await?;
            Json(Answer {
                results: &results,
                fingerprints,
                ids,
                distance,
                warnings,
            })
            .into_response()
        }
        Some(min_jaccard) => {
            let results =
                answer_verified(&service, snapshot, queries, distance, min_jaccard).await?;
            Json(Answer {
                results: &results,
                fingerprints,
                ids,
                distance,
                warnings,
            })
            .into_response()
        }
    })
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct GetQuery {
    fingerprint: String,
    distance: Option<i64>,
    fingerprint_format: Option<String>,
}

async fn get_query(
    State(service): State<Shared>,
    query: Result<Query<GetQuery>, axum::extract::rejection::QueryRejection>,
) -> Result<Json<Value>, ApiError> {
    let Query(query) = query?;
    let database = service.database()?;
    let (fingerprint, warning) = fingerprint_format(query.fingerprint_format.as_deref())?
        .read_many([query.fingerprint.as_str()])
        .map_err(|e| ApiError::bad_request(format!("fingerprint: {e}")))?;
    let snapshot = database.current();
    let distance = snapshot.distance(query.distance)?;
    let results = answer(&service, snapshot, fingerprint, distance).await?;
    let mut answer = json!({ "matches": &results[0], "distance": distance });
    if let Some(warning) = warning {
        answer["warnings"] = json!([warning]);
    }
    Ok(Json(answer))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct InsertParams {
    label: Option<String>,
    #[serde(default)]
    skip_invalid: bool,
    max_skipped: Option<String>,
    format: Option<String>,
    fingerprint_format: Option<String>,
}

/// The format of an insert body: `?format=`, else its Content-Type, else detected.
fn insert_format(
    format: Option<&str>,
    headers: &HeaderMap,
) -> Result<Option<InputFormat>, ApiError> {
    if let Some(format) = format {
        let bad = |e: &dyn std::fmt::Display| ApiError::bad_request(format!("format: {e}"));
        return match InputFormat::parse(format).map_err(|e| bad(&e))? {
            InputFormat::Text => Err(bad(&"a request body holds documents, not one text: \
                 use tsv, jsonl or parquet")),
            format => Ok(Some(format)),
        };
    }
    let content_type = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .map(|v| {
            v.split(';')
                .next()
                .unwrap_or("")
                .trim()
                .to_ascii_lowercase()
        });
    Ok(match content_type.as_deref() {
        Some(
            "application/x-ndjson"
            | "application/jsonl"
            | "application/jsonlines"
            | "application/json-lines"
            | "application/json",
        ) => Some(InputFormat::Jsonl),
        Some("text/tab-separated-values") => Some(InputFormat::Tsv),
        _ => None,
    })
}

async fn insert(
    State(service): State<Shared>,
    params: Result<Query<InsertParams>, axum::extract::rejection::QueryRejection>,
    headers: HeaderMap,
    body: Body,
) -> Result<Json<Value>, ApiError> {
    let Query(params) = params?;
    let insert = InsertOptions {
        label: params.label,
        ..InsertOptions::default()
    };
    insert.check()?;
    let format = insert_format(params.format.as_deref(), &headers)?;
    let fingerprints = fingerprint_format(params.fingerprint_format.as_deref())?;
    let skips = Skips::of(params.skip_invalid, params.max_skipped.as_deref())?;
    let body = read_body(&service, &headers, body).await?;
    let compacting_before = service.compacting();
    let mut answer = service
        .write(move |store| {
            let options = skips.options(format, fingerprints);
            let source = Source::Bytes {
                bytes: &body,
                name: "request body",
            };
            let summary = store
                .insert_from([source], &insert, &options, &())
                .map_err(not_stored)?;
            let mut answer = json_of(&summary)?;
            answer["first_skipped"] = json!(summary.read.first_skipped);
            skips.answer(&mut answer);
            Ok(answer)
        })
        .await?;
    answer["compaction_started"] = json!(!compacting_before && service.compacting());
    Ok(Json(answer))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct DedupParams {
    #[serde(default)]
    insert: bool,
    distance: Option<i64>,
    min_jaccard: Option<f64>,
    label: Option<String>,
    #[serde(default)]
    skip_invalid: bool,
    max_skipped: Option<String>,
    format: Option<String>,
    fingerprint_format: Option<String>,
}

/// Dedups the documents of the body (as `POST /v1/insert` takes them) against the store and
/// each other; with `insert=true`, inserts the kept ones in the same write turn.
async fn dedup(
    State(service): State<Shared>,
    params: Result<Query<DedupParams>, axum::extract::rejection::QueryRejection>,
    headers: HeaderMap,
    body: Body,
) -> Result<Json<Value>, ApiError> {
    let Query(params) = params?;
    // A label names the batch a dedup inserts: without the insert it is a mistake.
    if params.label.is_some() && !params.insert {
        return Err(ApiError::bad_request(
            "label: a label names the batch a dedup inserts: add insert=true",
        ));
    }
    let options = DedupOptions {
        distance: params.distance,
        min_jaccard: params.min_jaccard,
        insert: params.insert.then(|| InsertOptions {
            label: params.label,
            ..InsertOptions::default()
        }),
    };
    if let Some(insert) = &options.insert {
        insert.check()?;
    }
    let format = insert_format(params.format.as_deref(), &headers)?;
    let fingerprints = fingerprint_format(params.fingerprint_format.as_deref())?;
    let skips = Skips::of(params.skip_invalid, params.max_skipped.as_deref())?;
    let body = read_body(&service, &headers, body).await?;
    let read = skips.options(format, fingerprints);
    let answer = if options.insert.is_some() {
        service
            .write(move |store| {
                let source = Source::Bytes {
                    bytes: &body,
                    name: "request body",
                };
                store
                    .dedup_from(source, &options, &read, &())
                    .map_err(not_stored)
            })
            .await?
    } else {
        let snapshot = service.database()?.current();
        blocking("the dedup", move || {
            let source = Source::Bytes {
                bytes: &body,
                name: "request body",
            };
            Ok(snapshot.dedup_from(source, &options, &read, &())?)
        })
        .await?
    };
    let mut json = json_of(&answer)?;
    json["first_skipped"] = json!(answer.summary.first_skipped);
    skips.answer(&mut json);
    Ok(Json(json))
}

/// What becomes of a request's invalid records: `skip_invalid=true` skips them, up to
/// `max_skipped` (N or P%, default 1%), and the answer lists each in `rejects`.
#[derive(Clone)]
struct Skips {
    skip_invalid: bool,
    max_skipped: MaxSkipped,
    rejects: Rejects,
}

impl Skips {
    fn of(skip_invalid: bool, max_skipped: Option<&str>) -> Result<Skips, ApiError> {
        let max_skipped = max_skipped
            .map(MaxSkipped::parse)
            .transpose()
            .map_err(|e| ApiError::bad_request(e.to_string()))?;
        Ok(Skips {
            skip_invalid: skip_invalid || max_skipped.is_some(),
            max_skipped: max_skipped.unwrap_or_default(),
            rejects: Rejects::in_memory(),
        })
    }

    /// Read options for a request body in `format` (None: detected) with these skips.
    fn options(
        &self,
        format: Option<InputFormat>,
        fingerprint_format: FingerprintFormat,
    ) -> ReadOptions {
        ReadOptions {
            format,
            fingerprint_format,
            skip_invalid: self.skip_invalid,
            max_skipped: self.max_skipped,
            rejects: Some(self.rejects.clone()),
            ..ReadOptions::default()
        }
    }

    /// Adds `rejects`: [{"line", "reason", "record"}] for every record skipped.
    fn answer(&self, answer: &mut Value) {
        if !self.skip_invalid {
            return;
        }
        let rejects: Vec<Value> = self
            .rejects
            .lines()
            .into_iter()
            .map(|(_, line, reason, record)| {
                json!({
                    "line": line,
                    "reason": reason,
                    "record": String::from_utf8_lossy(&record),
                })
            })
            .collect();
        answer["rejects"] = json!(rejects);
    }
}

/// The JSON form of a library value (its serde form: the same in every client).
fn json_of(value: &impl serde::Serialize) -> Result<Value, ApiError> {
    serde_json::to_value(value)
        .map_err(|e| ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()))
}

/// An error of a write that stored nothing, saying so.
fn not_stored(error: simhashdb::Error) -> ApiError {
    let mut api = ApiError::from(error);
    api.message = format!("{} (nothing was stored)", api.message);
    api
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct DeleteBody {
    ids: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct DeleteParams {
    #[serde(default)]
    dry_run: bool,
}

async fn delete(
    State(service): State<Shared>,
    params: Result<Query<DeleteParams>, axum::extract::rejection::QueryRejection>,
    headers: HeaderMap,
    body: Body,
) -> Result<Json<Value>, ApiError> {
    let Query(params) = params?;
    let body: DeleteBody = parse_json(&read_body(&service, &headers, body).await?)?;
    for (i, id) in body.ids.iter().enumerate() {
        Batch::check_id(id).map_err(|e| ApiError::bad_request(format!("ids[{i}]: {e}")))?;
    }
    let answer = if params.dry_run {
        // A dry run reads the current state: no lock, nothing written (a read-only server
        // answers it too).
        let snapshot = service.database()?.current();
        let summary = blocking("the dry run", move || {
            snapshot
                .preview_delete(body.ids.iter().map(String::as_str))
                .map_err(not_stored)
        })
        .await?;
        json_of(&summary)?
    } else {
        service
            .write(move |store| {
                let ids = body.ids.iter().map(String::as_str);
                let summary = store.delete(ids).map_err(not_stored)?;
                json_of(&summary)
            })
            .await?
    };
    Ok(Json(answer))
}

async fn document(
    State(service): State<Shared>,
    id: Result<Path<String>, axum::extract::rejection::PathRejection>,
) -> Result<Json<Value>, ApiError> {
    let Path(id) = id?;
    let snapshot = service.database()?.current();
    match snapshot.document(&id)? {
        Some(doc) => Ok(Json(json_of(&doc)?)),
        None => Err(ApiError::new(
            StatusCode::NOT_FOUND,
            format!("no document with id {id:?}"),
        )),
    }
}

async fn stats(State(service): State<Shared>) -> Result<Json<Value>, ApiError> {
    let database = service.database()?.clone();
    // Stats read the run directories: off the async threads, and past a compaction's removals.
    let handle = database.clone();
    let stats = blocking("stats", move || {
        handle.store_stats().map_err(ApiError::from)
    })
    .await?;
    let mut answer = json_of(&stats)?;
    answer["server"] = json_of(&database.stats())?;
    answer["server"]["compacting"] = json!(service.compacting());
    Ok(Json(answer))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct DryRunParams {
    #[serde(default)]
    dry_run: bool,
    /// Compact only: merge only what the policy says is due.
    #[serde(default)]
    if_due: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ExpireBody {
    before: Option<String>,
    batch: Option<String>,
}

/// `expire`: the documents of whole batches, chosen by date or label.
async fn expire(
    State(service): State<Shared>,
    params: Result<Query<DryRunParams>, axum::extract::rejection::QueryRejection>,
    headers: HeaderMap,
    body: Body,
) -> Result<Json<Value>, ApiError> {
    let Query(params) = params?;
    if params.if_due {
        return Err(ApiError::bad_request("if_due: only /v1/compact takes it"));
    }
    let body: ExpireBody = parse_json(&read_body(&service, &headers, body).await?)?;
    let selector = match (body.before, body.batch) {
        (Some(date), None) => ExpireSelector::before_date(&date)
            .map_err(|e| ApiError::bad_request(format!("before: {e}")))?,
        (None, Some(label)) => ExpireSelector::Label(label),
        _ => {
            return Err(ApiError::bad_request(
                "give exactly one of \"before\" (a date) and \"batch\" (a label)",
            ))
        }
    };
    let summary = if params.dry_run {
        // A dry run reads the current state: no lock, nothing written (a read-only server
        // answers it too).
        let snapshot = service.database()?.current();
        blocking("the dry run", move || {
            snapshot.preview_expire(&selector).map_err(not_stored)
        })
        .await?
    } else {
        service
            .write(move |store| store.expire(&selector).map_err(not_stored))
            .await?
    };
    Ok(Json(json_of(&summary)?))
}

/// `compact`: merge the store's runs (all, or what the policy says is due).
async fn compact(
    State(service): State<Shared>,
    params: Result<Query<DryRunParams>, axum::extract::rejection::QueryRejection>,
) -> Result<Json<Value>, ApiError> {
    let Query(params) = params?;
    if params.dry_run {
        // Only reads: a read-only server answers it too.
        let snapshot = service.database()?.current();
        let plan = blocking("the dry run", move || {
            Ok(snapshot.preview_compaction(params.if_due))
        })
        .await?;
        return Ok(Json(json_of(&plan)?));
    }
    let summary = service
        .write(move |store| {
            let summary = if params.if_due {
                // Nothing due: the summary of a compaction that merged nothing.
                let due = store.compact_if_due()?;
                due.unwrap_or_else(|| CompactSummary::unchanged(store))
            } else {
                store.compact()?
            };
            Ok(summary)
        })
        .await?;
    Ok(Json(json_of(&summary)?))
}

/// Every committed batch, oldest first, as `batches --json` lists them.
async fn batches(State(service): State<Shared>) -> Result<Json<Value>, ApiError> {
    let snapshot = service.database()?.current();
    Ok(Json(json!({ "batches": json_of(&snapshot.batches())? })))
}
