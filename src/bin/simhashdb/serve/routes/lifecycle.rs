//! `/v1/delete`: removing documents, with a dry run.

use super::*;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct DeleteBody {
    ids: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct DeleteParams {
    #[serde(default)]
    dry_run: bool,
}

pub(super) async fn delete(
    State(service): State<Shared>,
    params: Result<Query<DeleteParams>, axum::extract::rejection::QueryRejection>,
    headers: HeaderMap,
    body: Body,
) -> Result<Json<Value>, ApiError> {
    let Query(params) = params?;
    let body: DeleteBody = parse_json(&read_body(&service, &headers, body).await?)?;
    let answer = if params.dry_run {
        // A dry run reads the current state: no lock, nothing written (a read-only server
        // answers it too).
        let snapshot = service.database()?.current();
        let summary = blocking("the dry run", move || {
            snapshot
                .preview_delete(body.ids.iter().map(String::as_str))
                .map_err(not_changed)
        })
        .await?;
        json_of(&summary)?
    } else {
        service
            .write(move |store| {
                let ids = body.ids.iter().map(String::as_str);
                let summary = store.delete(ids).map_err(not_changed)?;
                json_of(&summary)
            })
            .await?
    };
    Ok(Json(answer))
}
