//! Errors as the HTTP API answers them: a status and `{"error": "..."}`.

use axum::extract::rejection::{BytesRejection, PathRejection, QueryRejection};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use simhashdb::Error;

/// An answer other than success.
#[derive(Debug)]
pub struct ApiError {
    pub status: StatusCode,
    pub message: String,
    /// The pid holding the store's writer lock, for 409.
    pub pid: Option<String>,
    /// The records a refused read skipped, as a successful answer lists them.
    pub rejects: Option<serde_json::Value>,
}

impl ApiError {
    pub fn new(status: StatusCode, message: impl Into<String>) -> Self {
        ApiError {
            status,
            message: message.into(),
            pid: None,
            rejects: None,
        }
    }

    pub fn bad_request(message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, message)
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let mut body = serde_json::json!({ "error": self.message });
        if let Some(pid) = self.pid {
            // A number, as a pid is; what a damaged lock file holds, as written.
            body["pid"] = match pid.trim().parse::<u64>() {
                Ok(n) => n.into(),
                Err(_) => pid.into(),
            };
        }
        if let Some(rejects) = self.rejects {
            body["rejects"] = rejects;
        }
        (self.status, Json(body)).into_response()
    }
}

/// The library's errors with the status its table gives their kind ([`Error::kind`]).
impl From<Error> for ApiError {
    fn from(error: Error) -> Self {
        let status = StatusCode::from_u16(error.kind().http_status())
            .unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        let pid = match &error {
            Error::Locked { pid, .. } => Some(pid.clone()),
            _ => None,
        };
        ApiError {
            status,
            message: error.message(),
            pid,
            rejects: None,
        }
    }
}

/// Extractor rejections keep their status (413 for a body over the limit) with a JSON body.
macro_rules! from_rejection {
    ($($rejection:ty),*) => {$(
        impl From<$rejection> for ApiError {
            fn from(rejection: $rejection) -> Self {
                ApiError::new(rejection.status(), rejection.body_text())
            }
        }
    )*};
}
from_rejection!(BytesRejection, PathRejection, QueryRejection);
