//! `POST /v1/hooks/{host}`: an agent host's hook JSON, answered in that host's form
//! (Claude Code's HTTP hooks POST here directly; `khaelor-perm hook <host> --url`
//! forwards its stdin here).
//!
//! Owns translation only: the body goes to `hosts::parse`, the call is decided as the
//! one-shot hook decides it (`hosts::decide_host_call`) with the service's cached
//! policy, the host's own rules included unless `--no-host-rules`, and recorded in the session's log like
//! `POST /v1/sessions/{id}/calls`, and the host's answer is the body. Every failure is a
//! 200 carrying the host's deny: hosts read a non-2xx answer as "run the tool".
//! Query: `interactive=true|false` (default: the host's), `projectRoot=` (default: the
//! root or cwd the host sends), `hostRules=false` (leave the host's rules out; a
//! client can only turn them off).
//!
//! A host's post-call event (Claude Code and Codex `PostToolUse`, Gemini CLI
//! `AfterTool`, OpenCode's `tool.execute.after`, Claude's `PermissionDenied` and
//! `Stop`: `hosts::outcome`) is not a call to decide: it is recorded in the session
//! the service holds (a pending call approved or denied by the host) and answered
//! with an empty body.

use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{Path, RawQuery, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};

use super::{ApiError, AppState, sessions};
use crate::hosts::outcome::Outcome;
use crate::hosts::{self, Host, Rendered};

/// The answer for a host: its stdout text as the body, always 200.
fn respond(r: Rendered) -> Response {
    (
        StatusCode::OK,
        [(header::CONTENT_TYPE, "application/json")],
        r.stdout,
    )
        .into_response()
}

/// The host's deny for a failure, logged for the operator.
pub fn failure(host: Host, err: &str) -> Response {
    tracing::warn!(host = %host, error = %err, "hook call denied: it could not be checked");
    respond(hosts::render_failure(host, err))
}

/// The auth layer's answer on a hook path: the host's deny instead of a 401, which
/// the host would take as "run it". `None` when the path is not a known host's hook.
pub fn unauthorized(path: &str, message: &str) -> Option<Response> {
    let host = Host::from_name(path.strip_prefix("/v1/hooks/")?)?;
    Some(failure(
        host,
        &format!("the service refused the hook: {message}"),
    ))
}

fn query_param(query: Option<&str>, key: &str) -> Option<String> {
    query?.split('&').find_map(|kv| {
        let (k, v) = kv.split_once('=')?;
        (k == key).then(|| percent_decode(v))
    })
}

fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        let hex = bytes
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        match (b, hex) {
            (b'%', Some(v)) => {
                out.push(v);
                i += 3;
            }
            (b'+', _) => {
                out.push(b' ');
                i += 1;
            }
            _ => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Answers one hook call of `host` (see the module doc).
#[utoipa::path(post, path = "/v1/hooks/{host}", tag = "hooks",
    params(
        ("host" = String, Path, description = "`claude`, `codex`, `gemini` or `opencode`"),
        ("interactive" = Option<bool>, Query, description = "Whether a human answers prompts (default: true, false for gemini)"),
        ("projectRoot" = Option<String>, Query, description = "Absolute project root (default: the root or cwd in the hook input)"),
        ("hostRules" = Option<bool>, Query, description = "`false` leaves the host's own permission rules out of this decision (default: true; the service's `--no-host-rules` turns them off for every call)"),
    ),
    request_body(content = Object, description = "The host's hook JSON, as the host sends it", content_type = "application/json"),
    responses(
        (status = 200, description = "The host's answer (for codex an allow or ask is an empty body); every failure is the host's deny", content_type = "application/json"),
        (status = 404, description = "Unknown host", body = super::error::ErrorBody),
    ))]
pub async fn hook(
    State(state): State<AppState>,
    Path(host): Path<String>,
    RawQuery(query): RawQuery,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    let Some(host) = Host::from_name(&host) else {
        return ApiError::not_found(
            "unknown_host",
            format!("no hook for host `{host}`: expected claude, codex, gemini or opencode"),
        )
        .into_response();
    };
    match answer(&state, host, query.as_deref(), body).await {
        Ok(r) => respond(r),
        Err(e) => failure(host, &e),
    }
}

async fn answer(
    state: &AppState,
    host: Host,
    query: Option<&str>,
    body: Result<Bytes, BytesRejection>,
) -> Result<Rendered, String> {
    let body = body.map_err(|e| format!("cannot read the request body: {}", e.body_text()))?;
    let interactive = match query_param(query, "interactive").as_deref() {
        Some("true") => true,
        Some("false") => false,
        Some(other) => return Err(format!("`interactive={other}` is not true or false")),
        None => host.interactive_by_default(),
    };
    // A client may leave the host's rules out (`hook --url --no-host-rules`), never
    // bring them back when the service runs with `--no-host-rules`.
    let host_rules = match query_param(query, "hostRules").as_deref() {
        None | Some("true") => true,
        Some("false") => false,
        Some(other) => return Err(format!("`hostRules={other}` is not true or false")),
    };
    let query_root = query_param(query, "projectRoot");
    // Parsing, path resolution and the workdir check touch the disk: blocking pool.
    let st = state.clone();
    let read = state
        .blocking(move || {
            if let Some(outcome) = hosts::outcome::post_call_event(host, &body) {
                return Ok(Read::After(outcome));
            }
            let call = hosts::parse(host, &body).map_err(|e| e.to_string())?;
            let root = query_root
                .or_else(|| call.project_root.clone())
                .or_else(|| call.cwd.clone())
                .ok_or("the hook input names no project root or cwd")?;
            let ctx = st
                .context(&root, call.cwd.as_deref(), None)
                .map_err(|e| e.message)?;
            if let hosts::Mapped::Tool { tool, input } = &call.mapped {
                st.confine_workdir(tool, input, &ctx)
                    .map_err(|e| e.message)?;
            }
            Ok::<_, String>(Read::Before(Box::new((call, ctx))))
        })
        .await
        .map_err(|e| e.message)??;
    let (mut call, ctx) = match read {
        Read::After(outcome) => {
            record_outcome(state, host, &outcome).await?;
            return Ok(Rendered {
                stdout: String::new(),
                exit: 0,
            });
        }
        Read::Before(read) => *read,
    };
    let guard = state
        .sessions()
        .lock(state, &call.session_id)
        .await
        .map_err(|e| e.message)?;
    if guard.as_ref().and_then(|s| s.call(&call.call_id)).is_some() {
        call.call_id = hosts::fresh_call_id(host);
    }
    let rules = sessions::session_rules(&guard, ctx.root());
    let st = state.clone();
    let (decided, events, input) = state
        .blocking(move || {
            let policy = st.blocking_hook_policy(&ctx, host_rules.then_some(host));
            let d = hosts::decide_host_call(&call, &policy, &rules, &ctx, interactive);
            let events = hosts::events(&call, d.mapped.as_ref(), &ctx, interactive, &d.decision);
            (d, events, call.input)
        })
        .await
        .map_err(|e| e.message)?;
    let events = events.map_err(|e| format!("cannot encode the session events: {e}"))?;
    state
        .metrics()
        .record_decision(decided.decision.decision.as_str());
    sessions::append_call(state, guard, events)
        .await
        .map_err(|e| e.message)?;
    Ok(hosts::render_decided(host, &input, &decided))
}

/// A hook input: a call to decide, or a post-call event.
enum Read {
    Before(Box<(hosts::HookCall, crate::model::vocab::AnalysisContext)>),
    After(Outcome),
}

/// Records a post-call event in the session the service holds, through
/// `sessions::append` so the session's live stream carries it: a pending call that ran
/// is approved by the host, one the host refused (or whose turn ended) denied by it
/// (`hosts::outcome`). Nothing is decided and the host is told nothing.
async fn record_outcome(state: &AppState, host: Host, outcome: &Outcome) -> Result<(), String> {
    let guard = state
        .sessions()
        .lock(state, outcome.session())
        .await
        .map_err(|e| e.message)?;
    let events = match guard.as_ref() {
        Some(session) => {
            let pending: Vec<String> = session.pending().map(|c| c.call_id.clone()).collect();
            hosts::outcome::outcome_events(host, outcome, &pending, |tool, input| {
                Ok::<_, String>(
                    session
                        .pending()
                        .find(|c| hosts::outcome::same_host_call(&c.input, tool, input))
                        .map(|c| c.call_id.clone()),
                )
            })?
        }
        None => Vec::new(),
    };
    sessions::append(state, guard, events)
        .await
        .map_err(|e| e.message)?;
    Ok(())
}
