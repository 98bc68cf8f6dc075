//! The probes and the metrics: `/livez`, `/readyz`, `/metrics`.

use super::*;

pub(super) async fn livez() -> Json<Value> {
    Json(json!({ "status": "alive" }))
}

pub(super) async fn readyz(State(service): State<Shared>) -> Response {
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

pub(super) async fn metrics(State(service): State<Shared>) -> Response {
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
