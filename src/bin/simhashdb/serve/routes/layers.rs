//! The layers every request passes: the key check, the query string's encoding, request metrics,
//! closing the connection after an error, and the answers to unknown paths and methods.

use super::*;

/// Error answers end the connection (`Connection: close`). An error may be answered before
/// the request's body was read (a bad query string, a missing key, an unknown path); the
/// connection then still holds the unread body, so it cannot carry another request and is
/// closed, and a client that kept it for its next request would see that request fail.
pub(super) async fn close_after_errors(request: Request, next: Next) -> Response {
    let mut response = next.run(request).await;
    if response.status().is_client_error() || response.status().is_server_error() {
        response.headers_mut().insert(
            header::CONNECTION,
            header::HeaderValue::from_static("close"),
        );
    }
    response
}

/// A query string whose percent-decoded bytes are not UTF-8 is a 400: read as the parameters'
/// extractor reads it, each bad byte would become U+FFFD, and a label so changed would be
/// stored, never to match again.
pub(super) async fn refuse_undecodable_query(request: Request, next: Next) -> Response {
    match request.uri().query() {
        Some(query) if std::str::from_utf8(&percent_decoded(query)).is_err() => {
            ApiError::bad_request("the query string is not UTF-8 once percent-decoded")
                .into_response()
        }
        _ => next.run(request).await,
    }
}

/// `query`'s bytes with each `%XX` decoded and `+` read as a space; a `%` not followed by two
/// hex digits stays as it is.
fn percent_decoded(query: &str) -> Vec<u8> {
    let bytes = query.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |at: usize| bytes.get(at).and_then(|&b| (b as char).to_digit(16));
        match (bytes[i], hex(i + 1), hex(i + 2)) {
            (b'%', Some(high), Some(low)) => {
                out.push((high * 16 + low) as u8);
                i += 3;
            }
            (b'+', ..) => {
                out.push(b' ');
                i += 1;
            }
            (byte, ..) => {
                out.push(byte);
                i += 1;
            }
        }
    }
    out
}

/// Counts every answer and its latency by endpoint (the route, not the raw path, so ids and
/// unknown paths do not make new series).
pub(super) async fn record_metrics(
    State(service): State<Shared>,
    request: Request,
    next: Next,
) -> Response {
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
pub(super) async fn require_key(
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
pub(super) fn key_refusal(service: &Service, headers: &HeaderMap) -> Option<ApiError> {
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
pub(super) fn same_secret(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

pub(super) async fn no_such_endpoint(method: Method, uri: Uri) -> ApiError {
    ApiError::new(
        StatusCode::NOT_FOUND,
        format!("no such endpoint: {method} {}", uri.path()),
    )
}

pub(super) async fn method_not_allowed(method: Method, uri: Uri) -> ApiError {
    ApiError::new(
        StatusCode::METHOD_NOT_ALLOWED,
        format!("{} does not take {method}", uri.path()),
    )
}
