//! `/v1/query`: fingerprints, texts or documents, answered from the current state, verified with
//! sketches when asked.

use super::*;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct QueryBody {
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
pub(super) struct DocumentBody {
    id: String,
    text: String,
}

/// `fingerprint_format` as a request gives it (a body field or a query parameter).
pub(super) fn fingerprint_format(name: Option<&str>) -> Result<FingerprintFormat, ApiError> {
    name.map_or(Ok(FingerprintFormat::Auto), |name| {
        FingerprintFormat::parse(name)
            .map_err(|e| ApiError::bad_request(format!("fingerprint_format: {e}")))
    })
}

/// The queries of a request: its fingerprints, or its texts or documents fingerprinted (and
/// sketched) with the store's scheme. A warning about the fingerprints' notation goes to
/// `warnings`.
pub(super) fn queries_of(
    body: &QueryBody,
    snapshot: &Snapshot,
    warnings: &mut Vec<String>,
) -> Result<Vec<simhashdb::Query>, ApiError> {
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
        return Ok(fingerprints
            .into_iter()
            .map(simhashdb::Query::from)
            .collect());
    }
    // A store of bare fingerprints refuses texts before any is read.
    snapshot.text_scheme()?;
    let texts: Vec<(String, &str)> = match (&body.texts, &body.documents) {
        (Some(texts), _) => texts
            .iter()
            .enumerate()
            .map(|(i, t)| (format!("texts[{i}]"), t.as_str()))
            .collect(),
        (_, Some(documents)) => documents
            .iter()
            .enumerate()
            .map(|(i, d)| {
                // The ids answer back, as `query --input`'s do: checked as stored ids are.
                simhashdb::Batch::check_id(&d.id)
                    .map_err(|e| ApiError::bad_request(format!("documents[{i}].id: {e}")))?;
                Ok((format!("documents[{i}]"), d.text.as_str()))
            })
            .collect::<Result<_, ApiError>>()?,
        _ => unreachable!("one of the three is given"),
    };
    texts
        .iter()
        .map(|(place, text)| {
            snapshot
                .text_query(text)
                .map_err(|e| ApiError::bad_request(format!("{place}: {e}")))
        })
        .collect()
}

/// Queries answered on the request's own thread; larger batches go to the thread pool.
pub(super) const INLINE_QUERIES: usize = 16;

/// Answers `queries` on `snapshot` (verified at `min_jaccard` when given), counting them.
pub(super) async fn answer(
    service: &Service,
    snapshot: Arc<Snapshot>,
    queries: Vec<simhashdb::Query>,
    distance: u32,
    min_jaccard: Option<f64>,
) -> Result<Vec<Vec<Match>>, ApiError> {
    let results = if queries.len() <= INLINE_QUERIES && min_jaccard.is_none() {
        // On this thread: a few probes cost less than a hop to the pool.
        queries
            .iter()
            .map(|q| snapshot.query(q.fingerprint, distance))
            .collect::<simhashdb::Result<Vec<_>>>()?
    } else {
        blocking("the query", move || {
            snapshot
                .query_many(&queries, distance, min_jaccard)
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

pub(super) async fn post_query(
    State(service): State<Shared>,
    headers: HeaderMap,
    body: Body,
) -> Result<Response, ApiError> {
    let database = service.database()?;
    let body: QueryBody = parse_json(&read_body(&service, &headers, body).await?)?;
    let snapshot = database.current();
    let distance = snapshot.distance(body.distance)?;
    let mut warnings = Vec::new();
    let queries = queries_of(&body, &snapshot, &mut warnings)?;
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
    let fingerprints: Vec<String> = queries
        .iter()
        .map(|q| format!("{:016x}", q.fingerprint))
        .collect();
    // Serialized straight from the matches: a JSON tree of 10,000 answers costs more than
    // the answers.
    #[derive(serde::Serialize)]
    struct Answer<'a> {
        results: &'a [Vec<Match>],
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
    let results = answer(&service, snapshot, queries, distance, body.min_jaccard).await?;
    Ok(Json(Answer {
        results: &results,
        fingerprints,
        ids,
        distance,
        warnings,
    })
    .into_response())
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct GetQuery {
    fingerprint: String,
    distance: Option<i64>,
    fingerprint_format: Option<String>,
}

pub(super) async fn get_query(
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
    let queries = fingerprint
        .into_iter()
        .map(simhashdb::Query::from)
        .collect();
    let results = answer(&service, snapshot, queries, distance, None).await?;
    let mut answer = json!({ "matches": &results[0], "distance": distance });
    if let Some(warning) = warning {
        answer["warnings"] = json!([warning]);
    }
    Ok(Json(answer))
}
