//! `/v1/expire`, `/v1/compact` and `/v1/batches`: the store's batches and merges, with dry runs.

use super::*;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct DryRunParams {
    #[serde(default)]
    dry_run: bool,
    /// Compact only: merge only what the policy says is due.
    #[serde(default)]
    if_due: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ExpireBody {
    before: Option<String>,
    batch: Option<String>,
}

/// `expire`: the documents of whole batches, chosen by date or label.
pub(super) async fn expire(
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
            snapshot.preview_expire(&selector).map_err(not_changed)
        })
        .await?
    } else {
        service
            .write(move |store| store.expire(&selector).map_err(not_changed))
            .await?
    };
    Ok(Json(json_of(&summary)?))
}

/// `compact`: merge the store's runs (all, or what the policy says is due).
pub(super) async fn compact(
    State(service): State<Shared>,
    params: Result<Query<DryRunParams>, axum::extract::rejection::QueryRejection>,
    headers: HeaderMap,
    body: Body,
) -> Result<Json<Value>, ApiError> {
    let Query(params) = params?;
    // Its options are in the query string: a body that says something (such as
    // {"if_due": true}) would otherwise be ignored, and a full compaction run in its place.
    let body = read_body(&service, &headers, body).await?;
    let empty_object = || {
        serde_json::from_slice::<Value>(&body)
            .is_ok_and(|v| v.as_object().is_some_and(|o| o.is_empty()))
    };
    if !body.trim_ascii().is_empty() && !empty_object() {
        return Err(ApiError::bad_request(
            "/v1/compact takes no body: give dry_run and if_due in the query string \
             (such as /v1/compact?if_due=true)",
        ));
    }
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
pub(super) async fn batches(State(service): State<Shared>) -> Result<Json<Value>, ApiError> {
    let snapshot = service.database()?.current();
    Ok(Json(json!({ "batches": json_of(&snapshot.batches())? })))
}
