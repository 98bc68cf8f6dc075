//! `/v1/insert` and `/v1/dedup`: a request body of documents, read as `insert` reads files, handed
//! to the library's insert and dedup.

use super::*;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct InsertParams {
    label: Option<String>,
    #[serde(default)]
    skip_invalid: bool,
    max_skipped: Option<String>,
    format: Option<String>,
    fingerprint_format: Option<String>,
}

/// The format of an insert body: `?format=`, else its Content-Type, else detected.
pub(super) fn insert_format(
    format: Option<&str>,
    headers: &HeaderMap,
) -> Result<Option<InputFormat>, ApiError> {
    let content_type = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok());
    InputFormat::of_body(format, content_type)
        .map_err(|e| ApiError::bad_request(format!("format: {e}")))
}

pub(super) async fn insert(
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
    let refusals = skips.clone();
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
        .await
        .map_err(|e| refusals.refused(e))?;
    answer["compaction_started"] = json!(!compacting_before && service.compacting());
    Ok(Json(answer))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct DedupParams {
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
pub(super) async fn dedup(
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
        ..DedupOptions::default()
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
            .await
    } else {
        let snapshot = service.database()?.current();
        blocking("the dedup", move || {
            let source = Source::Bytes {
                bytes: &body,
                name: "request body",
            };
            Ok(snapshot.dedup_from(source, &options, &read, &())?)
        })
        .await
    }
    .map_err(|e| skips.refused(e))?;
    let mut json = json_of(&answer)?;
    json["first_skipped"] = json!(answer.first_skipped);
    skips.answer(&mut json);
    Ok(Json(json))
}
