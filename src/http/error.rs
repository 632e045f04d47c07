//! The service's one error type and the extractors whose rejections use it.
//!
//! Every error leaves as `{"error": {"code", "message"}}` with the status the brief
//! fixes (400/401/403/404/409/413/415/422, 500). 5xx details are logged, never sent.
//! Owns nothing else: handlers build errors, this file only shapes them.

use axum::body::Bytes;
use axum::extract::{FromRequest, FromRequestParts, Request};
use axum::http::request::Parts;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use serde::de::DeserializeOwned;

/// An error answer: status, stable machine code, one-sentence message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiError {
    pub status: StatusCode,
    pub code: &'static str,
    pub message: String,
}

#[derive(Serialize, utoipa::ToSchema)]
#[schema(as = ErrorBody)]
/// The body of every error answer.
pub struct ErrorBody {
    pub error: ErrorDetail,
}

#[derive(Serialize, utoipa::ToSchema)]
/// What went wrong.
pub struct ErrorDetail {
    /// Stable machine-readable code, e.g. `invalid_body`, `unknown_tool`.
    pub code: String,
    /// One sentence, lowercase, user input in backticks.
    pub message: String,
}

impl ApiError {
    pub fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> Self {
        ApiError {
            status,
            code,
            message: message.into(),
        }
    }
    pub fn bad_request(code: &'static str, message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, code, message)
    }
    pub fn not_found(code: &'static str, message: impl Into<String>) -> Self {
        Self::new(StatusCode::NOT_FOUND, code, message)
    }
    pub fn unprocessable(code: &'static str, message: impl Into<String>) -> Self {
        Self::new(StatusCode::UNPROCESSABLE_ENTITY, code, message)
    }
    pub fn conflict(code: &'static str, message: impl Into<String>) -> Self {
        Self::new(StatusCode::CONFLICT, code, message)
    }
    pub fn forbidden(code: &'static str, message: impl Into<String>) -> Self {
        Self::new(StatusCode::FORBIDDEN, code, message)
    }
    /// A server-side failure: the detail goes to the log, the client gets a generic line.
    pub fn internal(detail: impl std::fmt::Display) -> Self {
        tracing::error!(%detail, "internal error");
        Self::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "internal",
            "internal error, see the server log",
        )
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = ErrorBody {
            error: ErrorDetail {
                code: self.code.to_string(),
                message: self.message,
            },
        };
        (self.status, axum::Json(body)).into_response()
    }
}

/// A JSON request body whose every rejection is an `ApiError`: wrong content type 415,
/// too large 413, malformed or mistyped 400 naming the field.
#[derive(Debug, Clone, Copy, Default)]
pub struct ApiJson<T>(pub T);

impl<T, S> FromRequest<S> for ApiJson<T>
where
    T: DeserializeOwned,
    S: Send + Sync,
{
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        // Requiring a JSON content type keeps browsers from reaching the API with
        // "simple" cross-origin form posts (no preflight) against a loopback server.
        if !is_json_content_type(req.headers().get(header::CONTENT_TYPE)) {
            return Err(ApiError::new(
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                "unsupported_media_type",
                "expected `content-type: application/json`",
            ));
        }
        let bytes = Bytes::from_request(req, state).await.map_err(|e| {
            if is_timeout(&e) {
                ApiError::new(
                    StatusCode::REQUEST_TIMEOUT,
                    "body_timeout",
                    "the request body did not arrive within the server's body timeout",
                )
            } else if e.status() == StatusCode::PAYLOAD_TOO_LARGE {
                ApiError::new(
                    StatusCode::PAYLOAD_TOO_LARGE,
                    "payload_too_large",
                    format!(
                        "request body is over the limit of {} bytes",
                        super::BODY_LIMIT
                    ),
                )
            } else {
                ApiError::bad_request(
                    "invalid_body",
                    format!("could not read the request body: {}", e.body_text()),
                )
            }
        })?;
        from_slice(&bytes).map(ApiJson)
    }
}

/// Decodes a JSON body strictly (`crate::model::json`): one value, no duplicate keys at any
/// depth, the failing field named.
pub fn from_slice<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, ApiError> {
    crate::model::json::from_slice(bytes).map_err(|e| {
        let message = if e.0.starts_with("at `") {
            format!("invalid JSON body {}", e.0)
        } else {
            format!("invalid JSON body: {}", e.0)
        };
        ApiError::bad_request("invalid_body", message)
    })
}

/// Whether reading the body failed because the body-read timeout fired.
fn is_timeout(e: &(dyn std::error::Error + 'static)) -> bool {
    let mut cur: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(err) = cur {
        if err.is::<tower_http::timeout::TimeoutError>() {
            return true;
        }
        cur = err.source();
    }
    false
}

fn is_json_content_type(v: Option<&header::HeaderValue>) -> bool {
    let Some(v) = v.and_then(|v| v.to_str().ok()) else {
        return false;
    };
    let essence = v
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    essence == "application/json"
        || (essence.starts_with("application/") && essence.ends_with("+json"))
}

/// A query string whose rejection is an `ApiError` (400 naming the parameter).
#[derive(Debug, Clone, Copy, Default)]
pub struct ApiQuery<T>(pub T);

impl<T, S> FromRequestParts<S> for ApiQuery<T>
where
    T: DeserializeOwned,
    S: Send + Sync,
{
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Self, Self::Rejection> {
        axum::extract::Query::<T>::try_from_uri(&parts.uri)
            .map(|q| ApiQuery(q.0))
            .map_err(|e| {
                ApiError::bad_request(
                    "invalid_query",
                    crate::presentation::messages::lower_first(&e.body_text()),
                )
            })
    }
}

/// Path parameters whose rejection is an `ApiError`.
#[derive(Debug, Clone, Default)]
pub struct ApiPath<T>(pub T);

impl<T, S> FromRequestParts<S> for ApiPath<T>
where
    T: DeserializeOwned + Send,
    S: Send + Sync,
{
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        axum::extract::Path::<T>::from_request_parts(parts, state)
            .await
            .map(|p| ApiPath(p.0))
            .map_err(|e| {
                ApiError::bad_request(
                    "invalid_path",
                    crate::presentation::messages::lower_first(&e.body_text()),
                )
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(serde::Deserialize, Debug)]
    #[allow(dead_code)]
    #[serde(rename_all = "camelCase", deny_unknown_fields)]
    struct Body {
        command: String,
        project_root: String,
    }

    #[test]
    fn field_is_named() {
        let e = from_slice::<Body>(br#"{"command": 3, "projectRoot": "/"}"#).unwrap_err();
        assert_eq!(e.status, StatusCode::BAD_REQUEST);
        assert!(e.message.contains("`command`"), "{}", e.message);
        let e = from_slice::<Body>(br#"{"command": "x"}"#).unwrap_err();
        assert!(e.message.contains("projectRoot"), "{}", e.message);
        let e = from_slice::<Body>(b"{").unwrap_err();
        assert!(e.message.starts_with("invalid JSON body"), "{}", e.message);
    }

    #[test]
    fn content_types() {
        let h = |s: &'static str| header::HeaderValue::from_static(s);
        assert!(is_json_content_type(Some(&h("application/json"))));
        assert!(is_json_content_type(Some(&h(
            "Application/JSON; charset=utf-8"
        ))));
        assert!(is_json_content_type(Some(&h(
            "application/merge-patch+json"
        ))));
        assert!(!is_json_content_type(Some(&h("text/plain"))));
        assert!(!is_json_content_type(None));
    }
}
