//! Stateless handlers: health, metrics, analysis, evaluation, rules and the
//! tool list. Each only translates JSON to library calls and back.
//!
//! Must not hold policy or analysis logic: `analysis`, `tools`, `decide` and `config`
//! do the work; sessions live in `sessions`.

use std::time::Instant;

use axum::Json;
use axum::extract::State;
use axum::http::header;
use axum::response::{IntoResponse, Response};

use super::api::{
    AnalyzeRequest, Engine, EvaluateRequest, Health, RulesQuery, RulesResponse,
    ToolsAvailableRequest, ToolsAvailableResponse, TrustRequest, TrustResponse,
};
use super::error::{ApiError, ApiJson, ApiQuery, ErrorBody};
use super::{AppState, MAX_COMMAND_BYTES};
use crate::analysis;
use crate::model::vocab::AnalysisContext;
use crate::policy::decide::{self, CallDecision};
use crate::tools::{self, MappedCall, ToolError};

/// Liveness: answers as long as the server runs.
#[utoipa::path(get, path = "/healthz", tag = "service",
    responses((status = 200, description = "The server is up", body = Health)))]
pub async fn healthz() -> Json<Health> {
    Json(Health {
        status: "ok".to_string(),
        version: env!("CARGO_PKG_VERSION").to_string(),
    })
}

/// Readiness: 200 while the server takes work, 503 once shutdown began, when the
/// session directory is gone, or when the PostgreSQL store does not answer (a
/// balancer stops sending; liveness is `/healthz`).
#[utoipa::path(get, path = "/readyz", tag = "service",
    responses(
        (status = 200, description = "The server takes work", body = Health),
        (status = 503, description = "Shutting down, the state directory is unusable, or the PostgreSQL session store does not answer (`store_unavailable`)", body = ErrorBody),
    ))]
pub async fn readyz(State(state): State<AppState>) -> Response {
    if state.draining() {
        return ApiError::new(
            axum::http::StatusCode::SERVICE_UNAVAILABLE,
            "draining",
            "the server is shutting down",
        )
        .into_response();
    }
    let dir = state.config().state_dir.join("sessions");
    let usable = state
        .blocking(move || std::fs::metadata(&dir).is_ok_and(|m| m.is_dir()))
        .await
        .unwrap_or(false);
    if !usable {
        return ApiError::new(
            axum::http::StatusCode::SERVICE_UNAVAILABLE,
            "state_dir_unusable",
            "the session directory is missing or not a directory",
        )
        .into_response();
    }
    if let crate::session::Backend::Postgres(store) = state.sessions().backend()
        && !store.ping().await
    {
        return ApiError::new(
            axum::http::StatusCode::SERVICE_UNAVAILABLE,
            "store_unavailable",
            "the session store does not answer",
        )
        .into_response();
    }
    Json(Health {
        status: "ready".to_string(),
        version: env!("CARGO_PKG_VERSION").to_string(),
    })
    .into_response()
}

/// Prometheus text: requests by route and status, decisions by action, fallbacks by
/// reason, analysis latency histogram.
#[utoipa::path(get, path = "/metrics", tag = "service",
    responses(
        (status = 200, description = "Prometheus text exposition", body = String, content_type = "text/plain; version=0.0.4"),
        (status = 401, description = "Missing or invalid bearer token", body = ErrorBody),
        (status = 503, description = "At the concurrency cap (`overloaded`) or over the request timeout (`request_timeout`); `Retry-After` says when to retry", body = ErrorBody),
    ))]
pub async fn metrics(State(state): State<AppState>) -> Response {
    (
        [(
            header::CONTENT_TYPE,
            "text/plain; version=0.0.4; charset=utf-8",
        )],
        state.metrics().render_with(
            state.sessions().in_memory(),
            state.sessions().resident_bytes(),
        ),
    )
        .into_response()
}

/// Analyzes one bash command: class, parts, capability requests, always patterns, risk
/// notes, hardline hit, engine and fallback.
#[utoipa::path(post, path = "/v1/analyze", tag = "analysis", request_body = AnalyzeRequest,
    responses(
        (status = 200, description = "The analysis; for `engine: both` also `lexer` and `agree`", body = crate::model::schema::BothAnalysisSchema),
        (status = 400, description = "Malformed JSON or a wrong type (the field is named)", body = ErrorBody),
        (status = 401, description = "Missing or invalid bearer token", body = ErrorBody),
        (status = 503, description = "At the concurrency cap (`overloaded`) or over the request timeout (`request_timeout`); `Retry-After` says when to retry", body = ErrorBody),
        (status = 403, description = "Project root outside the allowed workspace roots", body = ErrorBody),
        (status = 408, description = "The body did not arrive within the body timeout", body = ErrorBody),
        (status = 413, description = "Body over 1 MiB", body = ErrorBody),
        (status = 415, description = "Content type is not JSON", body = ErrorBody),
        (status = 404, description = "The project root (or `cwd`) names no existing directory (`missing_project_root`, `bad_cwd`)", body = ErrorBody),
        (status = 422, description = "Relative path or command over 64 KiB", body = ErrorBody),
    ))]
pub async fn analyze(
    State(state): State<AppState>,
    ApiJson(req): ApiJson<AnalyzeRequest>,
) -> Result<Response, ApiError> {
    check_command(&req.command)?;
    let st = state.clone();
    state
        .blocking(move || {
            let ctx = st.context(&req.project_root, req.cwd.as_deref(), req.home.as_deref())?;
            let start = Instant::now();
            let resp = match req.engine.unwrap_or_default() {
                Engine::Ast => {
                    let a = analysis::analyze(&req.command, &ctx);
                    st.metrics()
                        .record_analysis(start.elapsed(), a.fallback.as_ref().map(|f| f.reason));
                    Json(a).into_response()
                }
                Engine::Lexer => {
                    let a = analysis::analyze_lexer(&req.command, &ctx);
                    st.metrics().record_analysis(start.elapsed(), None);
                    Json(a).into_response()
                }
                Engine::Both => {
                    let b = analysis::analyze_both(&req.command, &ctx);
                    st.metrics().record_analysis(
                        start.elapsed(),
                        b.ast.fallback.as_ref().map(|f| f.reason),
                    );
                    Json(b).into_response()
                }
            };
            Ok(resp)
        })
        .await?
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

/// Decides the call of an evaluate or explain request: the call mapped in its context,
/// the project's policy, and the decision. A contained answer carries the profile and
/// the rewritten command; a client that cannot run it treats it as ask.
fn decide_request(
    st: &AppState,
    req: &EvaluateRequest,
) -> Result<(MappedCall, crate::policy::config::Policy, CallDecision), ApiError> {
    let ctx = st.context(&req.project_root, req.cwd.as_deref(), req.home.as_deref())?;
    st.confine_workdir(&req.tool, &req.input, &ctx)?;
    let call = map_call(st, &req.tool, &req.input, &ctx)?;
    let policy = st.blocking_policy(&ctx);
    let runner = crate::contain::runner();
    let decision = decide::decide_with(
        &policy,
        &[],
        &call,
        &ctx,
        req.interactive.unwrap_or(true),
        runner.as_ref().map(|r| r as &dyn decide::Sandbox),
    );
    Ok((call, policy, decision))
}

/// Decides one tool call against the layered rules, statelessly: nothing is recorded.
#[utoipa::path(post, path = "/v1/evaluate", tag = "policy", request_body = EvaluateRequest,
    responses(
        (status = 200, description = "The call decision", body = crate::model::schema::CallDecisionSchema),
        (status = 400, description = "Malformed JSON, a wrong type or a missing field (the field is named)", body = ErrorBody),
        (status = 401, description = "Missing or invalid bearer token", body = ErrorBody),
        (status = 503, description = "At the concurrency cap (`overloaded`) or over the request timeout (`request_timeout`); `Retry-After` says when to retry", body = ErrorBody),
        (status = 403, description = "Project root outside the allowed workspace roots", body = ErrorBody),
        (status = 408, description = "The body did not arrive within the body timeout", body = ErrorBody),
        (status = 413, description = "Body over 1 MiB", body = ErrorBody),
        (status = 415, description = "Content type is not JSON", body = ErrorBody),
        (status = 404, description = "The project root, `cwd` or the input's working directory names no existing directory (`missing_project_root`, `bad_cwd`)", body = ErrorBody),
        (status = 422, description = "Unknown tool, relative path, command over 64 KiB, unusable input", body = ErrorBody),
    ))]
pub async fn evaluate(
    State(state): State<AppState>,
    ApiJson(req): ApiJson<EvaluateRequest>,
) -> Result<Json<CallDecision>, ApiError> {
    let st = state.clone();
    state
        .blocking(move || {
            let (_, _, decision) = decide_request(&st, &req)?;
            st.metrics().record_decision(decision.decision.as_str());
            Ok(Json(decision))
        })
        .await?
}

/// Decides one tool call as `/v1/evaluate` does and returns the decision with its
/// trace: how the command was read, the floor, each request with every rule naming its
/// capability and why it did or did not match, the caps, and why "always" was or was
/// not offered. Stateless: nothing is recorded.
#[utoipa::path(post, path = "/v1/explain", tag = "policy", request_body = EvaluateRequest,
    responses(
        (status = 200, description = "The decision and how it was reached", body = crate::model::schema::ExplanationSchema),
        (status = 400, description = "Malformed JSON, a wrong type or a missing field (the field is named)", body = ErrorBody),
        (status = 401, description = "Missing or invalid bearer token", body = ErrorBody),
        (status = 503, description = "At the concurrency cap (`overloaded`) or over the request timeout (`request_timeout`); `Retry-After` says when to retry", body = ErrorBody),
        (status = 403, description = "Project root outside the allowed workspace roots", body = ErrorBody),
        (status = 408, description = "The body did not arrive within the body timeout", body = ErrorBody),
        (status = 413, description = "Body over 1 MiB", body = ErrorBody),
        (status = 415, description = "Content type is not JSON", body = ErrorBody),
        (status = 404, description = "The project root, `cwd` or the input's working directory names no existing directory (`missing_project_root`, `bad_cwd`)", body = ErrorBody),
        (status = 422, description = "Unknown tool, relative path, command over 64 KiB, unusable input", body = ErrorBody),
    ))]
pub async fn explain(
    State(state): State<AppState>,
    ApiJson(req): ApiJson<EvaluateRequest>,
) -> Result<Json<crate::policy::explain::Explanation>, ApiError> {
    let st = state.clone();
    state
        .blocking(move || {
            let (call, policy, decision) = decide_request(&st, &req)?;
            Ok(Json(crate::policy::explain::explain(
                &policy, &call, &decision,
            )))
        })
        .await?
}

/// The effective rules for a project, in evaluation order, each with its source and
/// file position, and every config error.
#[utoipa::path(get, path = "/v1/rules", tag = "policy", params(RulesQuery),
    responses(
        (status = 200, description = "Effective rules and config errors", body = RulesResponse),
        (status = 400, description = "Missing or malformed query parameter", body = ErrorBody),
        (status = 401, description = "Missing or invalid bearer token", body = ErrorBody),
        (status = 503, description = "At the concurrency cap (`overloaded`) or over the request timeout (`request_timeout`); `Retry-After` says when to retry", body = ErrorBody),
        (status = 403, description = "Project root outside the allowed workspace roots", body = ErrorBody),
        (status = 404, description = "The project root names no existing directory (`missing_project_root`)", body = ErrorBody),
        (status = 422, description = "Relative path", body = ErrorBody),
    ))]
pub async fn rules(
    State(state): State<AppState>,
    ApiQuery(q): ApiQuery<RulesQuery>,
) -> Result<Json<RulesResponse>, ApiError> {
    let st = state.clone();
    let policy = state
        .blocking(move || {
            let ctx = st.context(&q.project_root, None, q.home.as_deref())?;
            Ok::<_, ApiError>(st.blocking_policy(&ctx))
        })
        .await??;
    Ok(Json(RulesResponse {
        rules: policy.rules().to_vec(),
        errors: policy.errors().to_vec(),
        files: policy
            .files()
            .iter()
            .map(|f| f.display().to_string())
            .collect(),
        ignored: policy.ignored().to_vec(),
        protected: crate::policy::protected::table(),
        managed_bundle: state.managed_bundle(),
    }))
}

/// Trusts (or with `revoke`, forgets) the current content of a project's
/// `.khaelor/config.json`, so its allow rules apply. For hosts with a UI:
/// call it only on the user's explicit say-so.
#[utoipa::path(post, path = "/v1/trust", tag = "policy", request_body = TrustRequest,
    responses(
        (status = 200, description = "Trust recorded or revoked", body = TrustResponse),
        (status = 400, description = "Malformed JSON, a wrong type, or a control character in a path", body = ErrorBody),
        (status = 401, description = "Missing or invalid bearer token", body = ErrorBody),
        (status = 403, description = "Project root outside the allowed workspace roots, or the managed config forbids trusting project configs", body = ErrorBody),
        (status = 408, description = "The body did not arrive within the body timeout", body = ErrorBody),
        (status = 413, description = "Body over 1 MiB", body = ErrorBody),
        (status = 415, description = "Content type is not JSON", body = ErrorBody),
        (status = 404, description = "The project root names no existing directory (`missing_project_root`), or the project has no `.khaelor/config.json` (`no_project_config`)", body = ErrorBody),
        (status = 422, description = "Relative path", body = ErrorBody),
    ))]
pub async fn trust(
    State(state): State<AppState>,
    ApiJson(req): ApiJson<TrustRequest>,
) -> Result<Json<TrustResponse>, ApiError> {
    let st = state.clone();
    state
        .blocking(move || {
            let ctx = st.context(&req.project_root, None, None)?;
            let file = crate::policy::config::project_config_path(ctx.root());
            let store = st.config().trust_store();
            let shown = file.display().to_string();
            if req.revoke.unwrap_or(false) {
                let was = store.blocking_revoke(&file).map_err(ApiError::internal)?;
                return Ok(Json(TrustResponse {
                    file: shown,
                    status: crate::policy::trust::TrustStatus::Untrusted,
                    sha256: None,
                    was_trusted: Some(was),
                }));
            }
            if st.blocking_policy(&ctx).trust_forbidden() {
                return Err(ApiError::forbidden(
                    "trust_forbidden",
                    crate::policy::trust::TrustError::Forbidden.to_string(),
                ));
            }
            let record = store.blocking_trust(&file).map_err(|e| match e {
                crate::policy::trust::TrustError::NoConfig(_)
                | crate::policy::trust::TrustError::NotAFile(_) => {
                    ApiError::not_found("no_project_config", e.to_string())
                }
                other => ApiError::internal(other),
            })?;
            Ok(Json(TrustResponse {
                file: shown,
                status: crate::policy::trust::TrustStatus::Trusted,
                sha256: Some(record.sha256),
                was_trusted: None,
            }))
        })
        .await?
}

/// The tools still worth offering the model: a tool whose needed capability is denied
/// for every subject is removed (seed §7.2).
#[utoipa::path(post, path = "/v1/tools/available", tag = "policy", request_body = ToolsAvailableRequest,
    responses(
        (status = 200, description = "The tools still offered, in the order given", body = ToolsAvailableResponse),
        (status = 400, description = "Malformed JSON or a wrong type (the field is named)", body = ErrorBody),
        (status = 401, description = "Missing or invalid bearer token", body = ErrorBody),
        (status = 503, description = "At the concurrency cap (`overloaded`) or over the request timeout (`request_timeout`); `Retry-After` says when to retry", body = ErrorBody),
        (status = 403, description = "Project root outside the allowed workspace roots", body = ErrorBody),
        (status = 408, description = "The body did not arrive within the body timeout", body = ErrorBody),
        (status = 413, description = "Body over 1 MiB", body = ErrorBody),
        (status = 415, description = "Content type is not JSON", body = ErrorBody),
        (status = 404, description = "The project root names no existing directory (`missing_project_root`)", body = ErrorBody),
        (status = 422, description = "Relative path", body = ErrorBody),
    ))]
pub async fn tools_available(
    State(state): State<AppState>,
    ApiJson(req): ApiJson<ToolsAvailableRequest>,
) -> Result<Json<ToolsAvailableResponse>, ApiError> {
    let st = state.clone();
    let project_root = req.project_root;
    let home = req.home;
    let policy = state
        .blocking(move || {
            let ctx = st.context(&project_root, None, home.as_deref())?;
            Ok::<_, ApiError>(st.blocking_policy(&ctx))
        })
        .await??;
    Ok(Json(ToolsAvailableResponse {
        tools: decide::available_tools(&policy, &req.tools),
    }))
}

/// Maps a tool call, timing the bash analysis inside it for the metrics.
pub fn map_call(
    state: &AppState,
    tool: &str,
    input: &serde_json::Value,
    ctx: &AnalysisContext,
) -> Result<MappedCall, ApiError> {
    let start = Instant::now();
    let call = tools::map_call(tool, input, ctx).map_err(tool_error)?;
    if let Some(a) = &call.analysis {
        state
            .metrics()
            .record_analysis(start.elapsed(), a.fallback.as_ref().map(|f| f.reason));
    }
    Ok(call)
}

/// A tool input the mapping refused: a wrong shape is a 400 naming the field (as for
/// the body itself), anything else (unknown tool, too large, unusable) a 422.
pub fn tool_error(e: ToolError) -> ApiError {
    let message = format!("invalid tool call: {e}");
    match &e {
        ToolError::NotAnObject { .. }
        | ToolError::MissingField { .. }
        | ToolError::WrongType { .. } => ApiError::bad_request("invalid_input", message),
        ToolError::UnknownTool(_) => ApiError::unprocessable("unknown_tool", e.to_string()),
        ToolError::TooLarge {
            field: "command", ..
        } => ApiError::unprocessable("command_too_large", message),
        ToolError::TooLarge { .. } => ApiError::unprocessable("input_too_large", message),
        ToolError::Empty { .. } => ApiError::unprocessable("empty_input", message),
        ToolError::BadPatch { .. } => ApiError::unprocessable("bad_patch", message),
        ToolError::BadCwd { .. } | ToolError::ConflictingCwd { .. } => {
            ApiError::unprocessable("bad_cwd", message)
        }
        ToolError::MissingCwd { .. } => ApiError::not_found("bad_cwd", message),
        ToolError::ControlChar { .. } => ApiError::bad_request("control_character", message),
    }
}
