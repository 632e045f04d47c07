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
//! client can only turn them off), `searchPath=` (the PATH the command runs with),
//! `wait=SECS` (below).
//!
//! **Hooks that wait.** With `wait=SECS` (1 to `MAX_WAIT_SECS`; a person answers, so
//! it implies `interactive=true`), a call decided `ask` stays pending and the request
//! waits — on the panel hub, no polling — for a person to answer it through the panel
//! (`approve`, the web page, or the grant and deny routes, all of which need the panel
//! token). The hub is subscribed to before the call is recorded, so an answer given at
//! once is not missed. Approved by the person (or by their "always" grant on another
//! call) → the host's explicit allow; denied → the host's deny carrying the model's
//! message with the person's reason. Nobody in time → Claude Code's own ask (the call
//! stays pending: Claude's dialog asks next, and its post-call events settle it), for
//! any other host a deny, recorded as `PermissionDenied` by `timeout` so the log and
//! the panels say why. With `grantBack=true` the waiting hook writes the person's
//! "always" grant on its own machine: the call is recorded with `grantBack`, the replica
//! that takes the grant writes no file (it may not see the agent's files) and records
//! the rules as handed to the hook, and the answer is `api::HookAnswer`, the host's
//! answer beside the grant read back from the session's events (`returned_grant`).
//! Anything else that ends the wait (an approval not by a person,
//! a panel that fell too far behind to be sure) is a deny: fail closed. A server
//! shutting down ends the wait as a timeout. The service's whole-request timeout is
//! extended by SECS for such a request (`mod.rs`).
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

use std::time::Duration;

use super::api::ReturnedGrant;
use super::panel::PanelEvent;
use super::{ApiError, AppState, sessions};
use crate::hosts::outcome::Outcome;
use crate::hosts::{self, Host, Rendered};
use crate::policy::rules::Action;
use crate::session::CallStatus;

/// The longest a hook may wait for a person's answer (`wait=SECS`), an hour: longer
/// than any host lets a hook run (Claude Code's command hooks default to ten minutes).
pub const MAX_WAIT_SECS: u64 = 3600;

/// The `wait=SECS` of a hook request: `None` when absent or `0`.
pub fn wait_param(query: Option<&str>) -> Result<Option<Duration>, String> {
    match query_param(query, "wait").as_deref() {
        None | Some("0") => Ok(None),
        Some(v) => match v.parse::<u64>() {
            Ok(secs) if secs <= MAX_WAIT_SECS => Ok(Some(Duration::from_secs(secs))),
            _ => Err(format!(
                "`wait={v}` is not a number of seconds from 0 to {MAX_WAIT_SECS}"
            )),
        },
    }
}

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
    refused(path, message)
}

/// The host's deny when the service refuses or cuts a hook request (no token, the
/// request timeout): a host reads a non-2xx answer as "run it". `None` when the path is
/// not a known host's hook.
pub fn refused(path: &str, message: &str) -> Option<Response> {
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

pub(crate) fn percent_decode(s: &str) -> String {
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
        ("host" = String, Path, description = "`claude`, `codex`, `gemini`, `qwen`, `copilot`, `droid`, `cline` or `opencode`"),
        ("interactive" = Option<bool>, Query, description = "Whether a human answers prompts (default: true, false for gemini, droid and cline)"),
        ("projectRoot" = Option<String>, Query, description = "Absolute project root (default: the root or cwd in the hook input)"),
        ("hostRules" = Option<bool>, Query, description = "`false` leaves the host's own permission rules out of this decision (default: true; the service's `--no-host-rules` turns them off for every call)"),
        ("searchPath" = Option<String>, Query, description = "The `PATH` the host runs the command with, as the environment holds it (`hook --url` sends its own): a program name that finds a file of the project there is read as the project's code, not as the system's program. Without it, names are the system's programs"),
        ("grantBack" = Option<bool>, Query, description = "With `wait`: the caller (`hook --url --wait`) writes a person's \"always\" grant of this call into the project config on its own machine. The call is marked so; the replica that takes the grant writes no file and hands the rules back; and the answer is a `HookAnswer` (the host's answer in `hookAnswer`, the grant in `grant`) instead of the host's answer alone. Failures stay the host's deny form"),
        ("wait" = Option<u64>, Query, description = "Seconds (1 to 3600) to wait for a person's answer when the decision is ask: the call stays pending until the panel (or the grant and deny routes, with the panel token) answers; approved → the host's allow, denied → its deny with the person's reason, nobody → Claude Code's own ask, any other host a deny recorded as `PermissionDenied` by `timeout`. Implies `interactive=true`; the request timeout is extended by it"),
    ),
    request_body(content = Object, description = "The host's hook JSON, as the host sends it", content_type = "application/json"),
    responses(
        (status = 200, description = "The host's answer (for codex an allow or ask is an empty body); with `grantBack=true`, a `HookAnswer` carrying it and the person's \"always\" grant; every failure is the host's deny", content_type = "application/json"),
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
            format!("no hook for host `{host}`: expected claude, codex, gemini, qwen, copilot, droid, cline or opencode"),
        )
        .into_response();
    };
    let envelope = query_param(query.as_deref(), "grantBack").as_deref() == Some("true");
    match answer(&state, host, query.as_deref(), body).await {
        Ok((r, _)) if !envelope => respond(r),
        Ok((r, grant)) => {
            let body = super::api::HookAnswer {
                hook_answer: r.stdout,
                grant,
            };
            match serde_json::to_string(&body) {
                Ok(text) => respond(Rendered {
                    stdout: text,
                    exit: 0,
                }),
                Err(e) => failure(host, &format!("cannot encode the answer: {e}")),
            }
        }
        Err(e) => failure(host, &e),
    }
}

async fn answer(
    state: &AppState,
    host: Host,
    query: Option<&str>,
    body: Result<Bytes, BytesRejection>,
) -> Result<(Rendered, Option<ReturnedGrant>), String> {
    let body = body.map_err(|e| format!("cannot read the request body: {}", e.body_text()))?;
    let wait = wait_param(query)?;
    // Only a waiting hook hears the person's grant, so only it can write it back.
    let grant_back = match query_param(query, "grantBack").as_deref() {
        None | Some("false") => false,
        Some("true") if wait.is_some() => true,
        Some("true") => {
            return Err(
                "`grantBack=true` needs `wait`: only a waiting hook hears the person's grant"
                    .into(),
            );
        }
        Some(other) => return Err(format!("`grantBack={other}` is not true or false")),
    };
    let interactive = match (query_param(query, "interactive").as_deref(), wait) {
        (Some("false"), Some(_)) => {
            return Err(
                "`wait` waits for a person's answer, which `interactive=false` rules out".into(),
            );
        }
        (Some("true"), _) | (None, Some(_)) => true,
        (Some("false"), None) => false,
        (Some(other), _) => return Err(format!("`interactive={other}` is not true or false")),
        (None, None) => host.interactive_by_default(),
    };
    // A client may leave the host's rules out (`hook --url --no-host-rules`), never
    // bring them back when the service runs with `--no-host-rules`.
    let host_rules = match query_param(query, "hostRules").as_deref() {
        None | Some("true") => true,
        Some("false") => false,
        Some(other) => return Err(format!("`hostRules={other}` is not true or false")),
    };
    let query_root = query_param(query, "projectRoot");
    // The PATH the hook was started with (`hook --url` sends it): program names are the
    // files it finds, as a hook deciding alone reads them.
    let search_path = query_param(query, "searchPath");
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
                .map_err(|e| e.message)?
                .with_search_path(search_path.as_deref().map(std::ffi::OsStr::new));
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
            return Ok((
                Rendered {
                    stdout: String::new(),
                    exit: 0,
                },
                None,
            ));
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
    let session_id = call.session_id.clone();
    let call_id = call.call_id.clone();
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
    let mut events = events.map_err(|e| format!("cannot encode the session events: {e}"))?;
    let asks = decided.decision.decision == Action::Ask;
    for ev in &mut events {
        if let crate::session::EventKind::ToolRequested { grant_back: g, .. } = ev {
            *g = grant_back && asks;
        }
    }
    state
        .metrics()
        .record_decision(decided.decision.decision.as_str());
    // Subscribed before the call is recorded: an answer given at once is not missed.
    let waiting = wait
        .filter(|_| decided.decision.decision == Action::Ask)
        .map(|w| (w, state.panel().subscribe()));
    // The guard goes with the append: the session is free for the person's answer.
    drop(
        sessions::append_call(state, guard, events)
            .await
            .map_err(|e| e.message)?,
    );
    let Some((wait, rx)) = waiting else {
        return Ok((hosts::render_decided(host, &input, &decided), None));
    };
    let waited = wait_for_person(state, rx, &session_id, &call_id, wait).await;
    let grant = match waited {
        Waited::Answered { approved: true } if grant_back => {
            returned_grant(state, &session_id, &call_id).await
        }
        _ => None,
    };
    Ok((
        waited_answer(
            state,
            host,
            &input,
            &decided,
            &session_id,
            &call_id,
            wait,
            waited,
        )
        .await?,
        grant,
    ))
}

/// The host's answer once the wait ended (see the module doc).
#[expect(
    clippy::too_many_arguments,
    reason = "the one call's parts, passed through from `answer`"
)]
async fn waited_answer(
    state: &AppState,
    host: Host,
    input: &serde_json::Value,
    decided: &hosts::HookDecision,
    session_id: &str,
    call_id: &str,
    wait: Duration,
    waited: Waited,
) -> Result<Rendered, String> {
    match waited {
        Waited::Answered { approved: true } => {
            Ok(hosts::render_answered(host, &decided.decision, true, ""))
        }
        Waited::Answered { approved: false } | Waited::Unsure => {
            let message = denial_message(state, session_id, call_id)
                .await
                .unwrap_or_else(|| {
                    hosts::failure_message("the call stopped waiting without a person's approval")
                });
            Ok(hosts::render_answered(
                host,
                &decided.decision,
                false,
                &message,
            ))
        }
        Waited::TimedOut => timed_out(state, host, input, decided, session_id, call_id, wait).await,
    }
}

/// The person's "always" grant of `call_id`, read from the session's events: its
/// `PermissionGranted` with scope `always`, handed to the hook, then `ToolApproved` by
/// the user. Anything else (a grant once, an approval by another call's grant, a grant
/// a replica wrote itself, a session that cannot be read) is no grant to return: the
/// person's answer stands, the hook writes nothing.
async fn returned_grant(
    state: &AppState,
    session_id: &str,
    call_id: &str,
) -> Option<ReturnedGrant> {
    let guard = state.sessions().lock(state, session_id).await.ok()?;
    let (guard, events) = state
        .blocking(move || {
            let events = guard.as_ref().map(crate::session::Session::blocking_events);
            (guard, events)
        })
        .await
        .ok()?;
    let project_root = guard.as_ref()?.call(call_id)?.project_root.clone();
    drop(guard);
    let (events, _) = events?.ok()?;
    grant_of(&events, session_id, call_id, project_root)
}

/// The grant of `call_id` among `events` (see `returned_grant`).
fn grant_of(
    events: &[crate::session::Event],
    session_id: &str,
    call_id: &str,
    project_root: String,
) -> Option<ReturnedGrant> {
    use crate::session::{ApprovedBy, EventKind, GrantScope};
    let mut grant = None;
    let mut approved_by_user = false;
    for ev in events.iter().filter(|e| e.kind.call_id() == call_id) {
        match &ev.kind {
            EventKind::PermissionGranted {
                scope: GrantScope::Always,
                pattern: Some(pattern),
                persisted_rules,
                handed_to_hook: true,
                ..
            } if !persisted_rules.is_empty() => {
                grant = Some((pattern.clone(), persisted_rules.clone()));
            }
            EventKind::ToolApproved {
                by: ApprovedBy::User,
                ..
            } => approved_by_user = grant.is_some(),
            _ => {}
        }
    }
    let (pattern, rules) = grant.filter(|_| approved_by_user)?;
    Some(ReturnedGrant {
        session_id: session_id.to_string(),
        call_id: call_id.to_string(),
        scope: GrantScope::Always,
        pattern,
        rules,
        granted_by: ApprovedBy::User,
        project_root,
    })
}

/// How a wait for a person ended.
enum Waited {
    /// The call was resolved: approved by the person (or their "always" grant on
    /// another call), or denied by anyone.
    Answered { approved: bool },
    /// Resolved some other way, or the hub lost track (a subscriber too far behind):
    /// not a person's approval.
    Unsure,
    /// Nobody answered in time.
    TimedOut,
}

/// Waits on the panel hub for the call to stop waiting, up to `wait`.
/// A server shutting down ends the wait as a timeout would: nobody can answer now.
async fn wait_for_person(
    state: &AppState,
    mut rx: tokio::sync::broadcast::Receiver<PanelEvent>,
    session_id: &str,
    call_id: &str,
    wait: Duration,
) -> Waited {
    use tokio::sync::broadcast::error::RecvError;
    let deadline = tokio::time::Instant::now() + wait;
    loop {
        let next = tokio::select! {
            next = tokio::time::timeout_at(deadline, rx.recv()) => next,
            () = state.drained() => return Waited::TimedOut,
        };
        match next {
            Err(_) => return Waited::TimedOut,
            Ok(Ok(PanelEvent::Resolved(r)))
                if r.session_id == session_id && r.call_id == call_id =>
            {
                return match r.status {
                    // Only a person approves a waiting call: through a grant (`user`) or
                    // their "always" grant on another call (`autoResolve`).
                    CallStatus::Approved if r.by == "user" || r.by == "autoResolve" => {
                        Waited::Answered { approved: true }
                    }
                    CallStatus::Approved => Waited::Unsure,
                    _ => Waited::Answered { approved: false },
                };
            }
            Ok(Ok(_)) => {}
            // Events were dropped: whatever happened to this call cannot be told apart.
            Ok(Err(RecvError::Lagged(_)) | Err(RecvError::Closed)) => return Waited::Unsure,
        }
    }
}

/// The model-facing message recorded for a denied call (the person's reason in it).
async fn denial_message(state: &AppState, session_id: &str, call_id: &str) -> Option<String> {
    let guard = state.sessions().lock(state, session_id).await.ok()?;
    let c = guard.as_ref()?.call(call_id)?;
    (c.status == CallStatus::Denied)
        .then(|| c.message.clone())
        .flatten()
}

/// Nobody answered in time. Claude Code has a prompt of its own: its ask, the call left
/// pending for its dialog and post-call events. Any other host: a deny, recorded as
/// `PermissionDenied` by `timeout` — unless the person answered in the last instant,
/// which the session (locked) shows and which then stands.
async fn timed_out(
    state: &AppState,
    host: Host,
    input: &serde_json::Value,
    decided: &hosts::HookDecision,
    session_id: &str,
    call_id: &str,
    wait: Duration,
) -> Result<Rendered, String> {
    if host == Host::Claude {
        return Ok(hosts::render_decided(host, input, decided));
    }
    let guard = state
        .sessions()
        .lock(state, session_id)
        .await
        .map_err(|e| e.message)?;
    let status = guard
        .as_ref()
        .and_then(|s| s.call(call_id))
        .map(|c| (c.status, c.message.clone()));
    match status {
        Some((CallStatus::Pending, _)) => {
            let message = crate::presentation::messages::wait_timeout_message(
                &decided.decision.summary,
                wait.as_secs(),
            );
            sessions::append(
                state,
                guard,
                crate::session::flow::timed_out(call_id, &message),
            )
            .await
            .map_err(|e| e.message)?;
            Ok(hosts::render_answered(
                host,
                &decided.decision,
                false,
                &message,
            ))
        }
        Some((CallStatus::Denied, Some(message))) => Ok(hosts::render_answered(
            host,
            &decided.decision,
            false,
            &message,
        )),
        // Approved at the deadline, by whom cannot be told here: not vouched for.
        _ => Ok(hosts::render_answered(
            host,
            &decided.decision,
            false,
            &hosts::failure_message("the call stopped waiting without a person's approval"),
        )),
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::grants::PersistedRule;
    use crate::session::{ApprovedBy, Event, EventKind, GrantScope};

    fn ev(seq: u64, kind: EventKind) -> Event {
        Event {
            seq,
            at: "2026-01-01T00:00:00.000Z".into(),
            kind,
        }
    }

    fn granted(call: &str, handed_to_hook: bool) -> EventKind {
        EventKind::PermissionGranted {
            call_id: call.into(),
            scope: GrantScope::Always,
            pattern: Some("npm install *".into()),
            persisted_rules: vec![PersistedRule {
                capability: "process.execute".into(),
                pattern: "npm install *".into(),
                action: "allow".into(),
            }],
            persisted: !handed_to_hook,
            handed_to_hook,
            config_file: Some("/p/.khaelor/config.json".into()),
            persist_error: None,
        }
    }

    fn approved(call: &str, by: ApprovedBy) -> EventKind {
        EventKind::ToolApproved {
            call_id: call.into(),
            by,
            decisions: serde_json::json!([]),
            resolved_by: None,
            contained: None,
        }
    }

    /// Only the person's "always" grant of this very call, handed to its hook, goes
    /// back: not another call's, not one a replica wrote itself, not an approval that
    /// came from another call's grant.
    #[test]
    fn only_this_calls_handed_grant_goes_back() {
        let of = |events: Vec<EventKind>| {
            let events: Vec<Event> = (1..).zip(events).map(|(i, k)| ev(i, k)).collect();
            grant_of(&events, "s", "c1", "/p".into())
        };
        let g = of(vec![granted("c1", true), approved("c1", ApprovedBy::User)]).unwrap();
        assert_eq!(
            (g.call_id.as_str(), g.pattern.as_str()),
            ("c1", "npm install *")
        );
        assert_eq!(g.granted_by, ApprovedBy::User);
        assert_eq!(
            of(vec![granted("c1", false), approved("c1", ApprovedBy::User)]),
            None
        );
        assert_eq!(
            of(vec![granted("c2", true), approved("c2", ApprovedBy::User)]),
            None
        );
        assert_eq!(
            of(vec![
                granted("c2", true),
                approved("c2", ApprovedBy::User),
                approved("c1", ApprovedBy::AutoResolve)
            ]),
            None
        );
        assert_eq!(of(vec![granted("c1", true)]), None, "not approved");
    }
}
