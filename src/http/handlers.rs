//! Stateless handlers: health, metrics, the spec, analysis, evaluation, rules and the
//! tool list. Each only translates JSON to library calls and back.
//!
//! Must not hold policy or analysis logic: `analysis`, `tools`, `decide` and `config`
//! do the work; sessions live in `sessions`.

use std::time::Instant;

use axum::Json;
use axum::extract::State;
use axum::http::header;
use axum::response::{IntoResponse, Response};

use super::api::{AnalyzeRequest, Engine, Health};
use super::error::{ApiError, ApiJson, ErrorBody};
use super::{AppState, MAX_COMMAND_BYTES};
use crate::analysis;

/// Liveness: answers as long as the server runs.
#[utoipa::path(get, path = "/healthz", tag = "service",
    responses((status = 200, description = "The server is up", body = Health)))]
pub async fn healthz() -> Json<Health> {
    Json(Health {
        status: "ok".to_string(),
        version: env!("CARGO_PKG_VERSION").to_string(),
    })
}

/// Prometheus text: requests by route and status, decisions by action, fallbacks by
/// reason, analysis latency histogram.
#[utoipa::path(get, path = "/metrics", tag = "service",
    responses(
        (status = 200, description = "Prometheus text exposition", body = String, content_type = "text/plain; version=0.0.4"),
        (status = 401, description = "Missing or invalid bearer token", body = ErrorBody),
    ))]
pub async fn metrics(State(state): State<AppState>) -> Response {
    (
        [(
            header::CONTENT_TYPE,
            "text/plain; version=0.0.4; charset=utf-8",
        )],
        state.metrics().render(),
    )
        .into_response()
}

/// This API's OpenAPI document.
#[utoipa::path(get, path = "/openapi.yaml", tag = "service",
    responses((status = 200, description = "The OpenAPI 3.1 document", body = String, content_type = "application/yaml")))]
pub async fn openapi_yaml() -> Response {
    (
        [(header::CONTENT_TYPE, "application/yaml")],
        super::openapi::yaml(),
    )
        .into_response()
}

/// Analyzes one bash command: class, parts, capability requests, always patterns, risk
/// notes, hardline hit, engine and fallback.
#[utoipa::path(post, path = "/v1/analyze", tag = "analysis", request_body = AnalyzeRequest,
    responses(
        (status = 200, description = "The analysis; for `engine: both` also `lexer` and `agree`", body = super::openapi::BothAnalysisSchema),
        (status = 400, description = "Malformed JSON or a wrong type (the field is named)", body = ErrorBody),
        (status = 401, description = "Missing or invalid bearer token", body = ErrorBody),
        (status = 403, description = "Project root outside the allowed workspace roots", body = ErrorBody),
        (status = 413, description = "Body over 1 MiB", body = ErrorBody),
        (status = 415, description = "Content type is not JSON", body = ErrorBody),
        (status = 422, description = "Relative path, missing project root, or command over 64 KiB", body = ErrorBody),
    ))]
pub async fn analyze(
    State(state): State<AppState>,
    ApiJson(req): ApiJson<AnalyzeRequest>,
) -> Result<Response, ApiError> {
    check_command(&req.command)?;
    let ctx = state.context(&req.project_root, req.cwd.as_deref(), req.home.as_deref())?;
    let start = Instant::now();
    let resp = match req.engine.unwrap_or_default() {
        Engine::Ast => {
            let a = analysis::analyze(&req.command, &ctx);
            state
                .metrics()
                .record_analysis(start.elapsed(), a.fallback.as_ref().map(|f| f.reason));
            Json(a).into_response()
        }
        Engine::Lexer => {
            let a = analysis::analyze_lexer(&req.command, &ctx);
            state.metrics().record_analysis(start.elapsed(), None);
            Json(a).into_response()
        }
        Engine::Both => {
            let b = analysis::analyze_both(&req.command, &ctx);
            state
                .metrics()
                .record_analysis(start.elapsed(), b.ast.fallback.as_ref().map(|f| f.reason));
            Json(b).into_response()
        }
    };
    Ok(resp)
}

/// A command over the limit is refused before any parsing.
pub fn check_command(command: &str) -> Result<(), ApiError> {
    if command.len() > MAX_COMMAND_BYTES {
        return Err(ApiError::unprocessable(
            "command_too_large",
            format!(
                "command is {} bytes, over the limit of {MAX_COMMAND_BYTES} bytes",
                command.len()
            ),
        ));
    }
    Ok(())
}
