//! `/v1/documents/{id}` and `/v1/stats`.

use super::*;

pub(super) async fn document(
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

pub(super) async fn stats(State(service): State<Shared>) -> Result<Json<Value>, ApiError> {
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
