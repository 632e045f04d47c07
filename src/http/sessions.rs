//! The durable session flow over HTTP (seed §5, §8): record a call, list pending
//! approvals, grant once or always, deny with feedback, replay the events.
//!
//! Owns the orchestration only: which events a step records, in which order, under the
//! session's lock. Deciding is `decide`, the log is `session`, the config write is
//! `grants`. A session's lock is held across its disk writes so two requests on one
//! session never interleave; different sessions never wait on each other (except on
//! the project config's file lock).

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::Json;
use axum::extract::State;
use serde::Serialize;
use tokio::sync::{Mutex as AsyncMutex, OwnedMutexGuard};
use utoipa::ToSchema;

use super::AppState;
use super::api::{
    DeniedCall, DenyRequest, DenyResponse, EventsResponse, GrantRequest, GrantResponse,
    PendingCall, PendingResponse, RecordCallRequest,
};
use super::error::{ApiError, ApiJson, ApiPath, ErrorBody};
use super::handlers::map_call;
use crate::policy::decide::{self, CallDecision, GrantError};
use crate::policy::rules::{Action, PermissionRule};
use crate::session::audit::{self, AuditSink};
use crate::session::flow;
use crate::session::grants::{self, PersistedRule};
use crate::session::{
    Backend, CallRecord, CallStatus, EventKind, GrantScope, Session, SessionError, valid_id,
};

/// The sessions held in memory, each behind its own async lock: a bounded cache over
/// the logs on disk, which stay the truth. A slot holds `None` until its log has been
/// read. Idle sessions are evicted (`idle`); beyond `max` sessions, or beyond
/// `max_bytes` of sessions (`Session::resident_bytes`), the least recently used ones
/// go first, those without a pending call before those with one. Only a slot nobody
/// holds or awaits is evicted, so no request in flight loses its session, and what was
/// written is in the log: an evicted session is read back from it on its next use,
/// exactly as after a restart.
#[derive(Debug)]
pub struct SessionStore {
    dir: PathBuf,
    backend: Backend,
    open: Mutex<Index>,
    max: usize,
    max_bytes: usize,
    idle: Duration,
}

#[derive(Debug, Default)]
struct Index {
    slots: HashMap<String, Slot>,
    last_sweep: Option<Instant>,
}

#[derive(Debug)]
struct Slot {
    cell: Arc<AsyncMutex<Option<Session>>>,
    last_used: Instant,
    /// The session's resident bytes and whether it has a pending call, as last
    /// measured (`measured`), which happens while nobody holds it.
    bytes: usize,
    pending: bool,
    measured: Option<Instant>,
}

pub(crate) type Guard = OwnedMutexGuard<Option<Session>>;

impl SessionStore {
    pub fn new(dir: PathBuf) -> Self {
        Self::with_limits(dir, DEFAULT_MAX_SESSIONS, DEFAULT_SESSION_IDLE)
    }

    /// A store keeping at most `max` sessions in memory, each for at most `idle` after
    /// its last use.
    pub fn with_limits(dir: PathBuf, max: usize, idle: Duration) -> Self {
        SessionStore {
            dir,
            backend: Backend::Files,
            open: Mutex::new(Index::default()),
            max: max.max(1),
            max_bytes: DEFAULT_MAX_SESSION_MEMORY,
            idle,
        }
    }

    /// The same store with its sessions kept in `backend` (files by default).
    pub fn with_backend(mut self, backend: Backend) -> Self {
        self.backend = backend;
        self
    }

    /// Where the sessions are kept.
    pub fn backend(&self) -> &Backend {
        &self.backend
    }

    /// The session directory (the file store's; unused by the PostgreSQL store).
    pub fn dir(&self) -> &std::path::Path {
        &self.dir
    }

    /// The same store keeping at most about `bytes` of sessions in memory.
    pub fn with_max_bytes(mut self, bytes: usize) -> Self {
        self.max_bytes = bytes;
        self
    }

    /// How many sessions are in memory now.
    pub fn in_memory(&self) -> usize {
        self.open.lock().map_or(0, |i| i.slots.len())
    }

    /// The bytes the sessions in memory hold, as last measured.
    pub fn resident_bytes(&self) -> usize {
        self.open
            .lock()
            .map_or(0, |i| i.slots.values().map(|s| s.bytes).sum())
    }

    /// Locks session `id`, reading its log (on the blocking pool) on first use. A
    /// session in the shared PostgreSQL store is first brought up to date with what
    /// other replicas appended, and what it learns goes to the panels.
    pub(crate) async fn lock(&self, state: &AppState, id: &str) -> Result<Guard, ApiError> {
        let slot = {
            let mut index = self
                .open
                .lock()
                .map_err(|_| ApiError::internal("session index lock poisoned"))?;
            let now = Instant::now();
            self.evict(&mut index, now, id);
            let slot = index.slots.entry(id.to_string()).or_insert_with(|| Slot {
                cell: Arc::default(),
                last_used: now,
                bytes: 0,
                pending: false,
                measured: None,
            });
            slot.last_used = now;
            slot.cell.clone()
        };
        let mut guard = slot.lock_owned().await;
        if guard.is_none() {
            let dir = self.dir.clone();
            let id = id.to_string();
            let backend = self.backend.clone();
            let session = state
                .blocking(move || backend.blocking_open(&dir, &id))
                .await?
                .map_err(session_error)?;
            *guard = Some(session);
        } else if guard.as_ref().is_some_and(Session::is_shared) {
            let (back, result) = state
                .blocking(move || {
                    let result = match guard.as_mut() {
                        Some(s) => s
                            .blocking_catch_up()
                            .map(|events| super::panel::changes(s, &events)),
                        None => Ok(Vec::new()),
                    };
                    (guard, result)
                })
                .await?;
            guard = back;
            state.panel().publish(result.map_err(session_error)?);
        }
        Ok(guard)
    }

    /// Drops idle slots (at most every `SWEEP_EVERY`) and, over `max`, the least
    /// recently used ones, never `keep` and never a slot anyone holds or awaits.
    fn evict(&self, index: &mut Index, now: Instant, keep: &str) {
        // INVARIANT: slots are cloned only under this index lock, so a count of one (the
        // index alone) means no request holds or awaits the slot: dropping it cannot
        // leave two in-memory copies of one log.
        let free = |id: &String, slot: &Slot| id != keep && Arc::strong_count(&slot.cell) == 1;
        let due = index
            .last_sweep
            .is_none_or(|t| now.duration_since(t) >= SWEEP_EVERY);
        if due {
            index.last_sweep = Some(now);
            let idle = self.idle;
            index
                .slots
                .retain(|id, slot| !(free(id, slot) && now.duration_since(slot.last_used) >= idle));
        }
        if index.slots.len() >= self.max {
            // Evict a tenth at once so a full cache does not sort on every call.
            let excess = index.slots.len() + 1 - self.max + self.max / 10;
            let mut victims: Vec<(Instant, String)> = index
                .slots
                .iter()
                .filter(|(id, slot)| free(id, slot))
                .map(|(id, slot)| (slot.last_used, id.clone()))
                .collect();
            victims.sort();
            for (_, id) in victims.into_iter().take(excess) {
                index.slots.remove(&id);
            }
        }
        // Measure the sessions used since they were last measured and now free.
        for (id, slot) in index.slots.iter_mut() {
            if !free(id, slot) || slot.measured.is_some_and(|t| t >= slot.last_used) {
                continue;
            }
            if let Ok(session) = slot.cell.try_lock() {
                slot.bytes = session.as_ref().map_or(0, Session::resident_bytes);
                slot.pending = session
                    .as_ref()
                    .is_some_and(|s| s.pending().next().is_some());
                slot.measured = Some(now);
            }
        }
        let mut total: usize = index.slots.values().map(|s| s.bytes).sum();
        if total > self.max_bytes {
            let mut victims: Vec<(bool, Instant, String)> = index
                .slots
                .iter()
                .filter(|(id, slot)| free(id, slot))
                .map(|(id, slot)| (slot.pending, slot.last_used, id.clone()))
                .collect();
            victims.sort();
            for (_, _, id) in victims {
                if total <= self.max_bytes {
                    break;
                }
                if let Some(slot) = index.slots.remove(&id) {
                    total = total.saturating_sub(slot.bytes);
                }
            }
        }
    }

    /// Whether session `id` is in memory with its event `seq` already applied (a
    /// notification about it brings nothing new). A slot someone holds is not
    /// current: its holder caught up before this event may have been written.
    pub(crate) fn is_current(&self, id: &str, seq: u64) -> bool {
        let Ok(index) = self.open.lock() else {
            return false;
        };
        index.slots.get(id).is_some_and(|slot| {
            slot.cell
                .try_lock()
                .is_ok_and(|s| s.as_ref().is_some_and(|s| s.next_seq() > seq))
        })
    }

    /// Drops the slot of a session that turned out not to exist, so probing ids does
    /// not grow the index.
    fn forget_if_empty(&self, guard: &Guard) {
        if let Some(s) = guard.as_ref()
            && !s.exists()
            && let Ok(mut index) = self.open.lock()
        {
            // INVARIANT: slots are cloned only under this index lock, so a count of two
            // (the index and this guard) means no other request holds or awaits the
            // slot. Removing a slot someone else waits on would let a second slot load
            // the same session beside it: two in-memory copies of one log.
            if Arc::strong_count(OwnedMutexGuard::mutex(guard)) == 2 {
                index.slots.remove(s.id());
            }
        }
    }
}

/// Sessions kept in memory at most (`--max-sessions`).
pub const DEFAULT_MAX_SESSIONS: usize = 1024;
/// Bytes of sessions kept in memory at most (`--max-session-memory`).
pub const DEFAULT_MAX_SESSION_MEMORY: usize = 64 * 1024 * 1024;
/// A session unused this long leaves memory (`--session-idle-secs`).
pub const DEFAULT_SESSION_IDLE: Duration = Duration::from_secs(600);
/// Events a session's log may hold (`--max-session-events`); the hook command uses the
/// same budget.
pub const DEFAULT_MAX_SESSION_EVENTS: usize = crate::session::DEFAULT_MAX_EVENTS;
/// How often the idle sweep runs (on the next session request after this long).
const SWEEP_EVERY: Duration = Duration::from_secs(5);

/// Appends events with the disk work on the blocking pool; gives the guard back.
pub(crate) async fn append(
    state: &AppState,
    mut guard: Guard,
    kinds: Vec<EventKind>,
) -> Result<Guard, ApiError> {
    if kinds.is_empty() {
        return Ok(guard);
    }
    let audit = state.config().audit.clone();
    let (guard, result) = state
        .blocking(move || {
            let result = match guard.as_mut() {
                Some(s) => s
                    .blocking_append(kinds)
                    .map(|events| published(&audit, s, &events)),
                None => Ok(Vec::new()),
            };
            (guard, result)
        })
        .await?;
    state.panel().publish(result.map_err(session_error)?);
    Ok(guard)
}

/// Appends the events of a newly recorded call within the session's event budget:
/// over it the log is compacted first, and a session still over it is a 409
/// `session_event_budget` with nothing recorded.
pub(crate) async fn append_call(
    state: &AppState,
    mut guard: Guard,
    kinds: Vec<EventKind>,
) -> Result<Guard, ApiError> {
    let budget = state.config().limits.max_session_events;
    let audit = state.config().audit.clone();
    let (guard, result) = state
        .blocking(move || {
            let result = match guard.as_mut() {
                Some(s) => s
                    .blocking_make_room(budget, kinds.len(), crate::session::LogLock::Take)
                    .and_then(|_| s.blocking_append(kinds))
                    .map(|events| published(&audit, s, &events)),
                None => Ok(Vec::new()),
            };
            (guard, result)
        })
        .await?;
    state.panel().publish(result.map_err(session_error)?);
    Ok(guard)
}

/// What appended events change for the panels; on the way, their audit records go to
/// the sink (`serve --audit-log`). The log is the truth: a sink that fails is logged,
/// and the call goes on.
fn published(
    audit: &Option<Arc<AuditSink>>,
    s: &Session,
    events: &[crate::session::Event],
) -> Vec<super::panel::PanelEvent> {
    if let Some(sink) = audit {
        let records = audit::records(s.id(), events, Some(audit::Origin::current()), |id| {
            s.call(id).map(audit::CallContext::of)
        });
        if let Err(e) = sink.write(&records) {
            tracing::error!(session = %s.id(), "{e}");
        }
    }
    super::panel::changes(s, events)
}

fn session_error(e: SessionError) -> ApiError {
    match e {
        SessionError::InvalidId(_) => ApiError::bad_request("invalid_id", e.to_string()),
        SessionError::Budget { .. } => ApiError::conflict("session_event_budget", e.to_string()),
        SessionError::Behind => ApiError::conflict("session_changed", e.to_string()),
        SessionError::Store(_) => {
            // Fails closed: no decision is answered without its events recorded.
            tracing::error!(error = %e, "session store unavailable");
            ApiError::new(
                axum::http::StatusCode::SERVICE_UNAVAILABLE,
                "store_unavailable",
                "the session store is unavailable, see the server log",
            )
        }
        _ => ApiError::internal(e),
    }
}

fn check_id(what: &str, id: &str) -> Result<(), ApiError> {
    if valid_id(id) {
        Ok(())
    } else {
        let shown: String = id.chars().take(40).collect();
        let more = if shown.len() < id.len() { "…" } else { "" };
        Err(ApiError::bad_request(
            "invalid_id",
            format!("invalid {what} id `{shown}{more}`: expected 1 to 128 of A-Z a-z 0-9 _ -"),
        ))
    }
}

fn session_of(guard: &Guard, session_id: &str) -> Result<(), ApiError> {
    match guard.as_ref() {
        Some(s) if s.exists() => Ok(()),
        _ => Err(ApiError::not_found(
            "unknown_session",
            format!("no session `{session_id}`"),
        )),
    }
}

/// Reads the recorded decisions of `calls` from the session's log (on the blocking
/// pool): a resident session keeps only where they are (`CallRecord`).
async fn with_decisions(
    state: &AppState,
    guard: &Guard,
    mut calls: Vec<CallRecord>,
) -> Result<Vec<CallRecord>, ApiError> {
    let Some(source) = guard.as_ref().map(Session::decision_source) else {
        return Ok(calls);
    };
    if calls.iter().all(|c| c.decision_at.is_none()) {
        return Ok(calls);
    }
    state
        .blocking(move || source.blocking_read(&mut calls).map(|()| calls))
        .await?
        .map_err(session_error)
}

/// The pending calls of the locked session, oldest first, with their recorded
/// decisions.
pub(crate) async fn pending_with_decisions(
    state: &AppState,
    guard: &Guard,
) -> Result<Vec<CallRecord>, ApiError> {
    let calls: Vec<CallRecord> = guard
        .as_ref()
        .map(|s| s.pending().cloned().collect())
        .unwrap_or_default();
    with_decisions(state, guard, calls).await
}

/// The pending call `call_id` of the locked session, with its recorded decision.
async fn pending_call(
    state: &AppState,
    guard: &Guard,
    session_id: &str,
    call_id: &str,
) -> Result<(CallRecord, CallDecision), ApiError> {
    session_of(guard, session_id)?;
    let call = guard
        .as_ref()
        .and_then(|s| s.call(call_id))
        .cloned()
        .ok_or_else(|| {
            ApiError::not_found(
                "unknown_call",
                format!("no call `{call_id}` in session `{session_id}`"),
            )
        })?;
    if call.status != CallStatus::Pending {
        let status = match call.status {
            CallStatus::Approved => "approved",
            CallStatus::Denied => "denied",
            CallStatus::Requested | CallStatus::Pending => "not waiting for the user",
        };
        return Err(ApiError::conflict(
            "not_pending",
            format!("call `{call_id}` is not pending: it is {status}"),
        ));
    }
    let call = with_decisions(state, guard, vec![call])
        .await?
        .pop()
        .ok_or_else(|| ApiError::internal("a call went missing reading its decision"))?;
    let decision = call
        .decision
        .clone()
        .ok_or_else(|| {
            ApiError::internal(format!("pending call `{call_id}` has no recorded decision"))
        })
        .and_then(|d| serde_json::from_value::<CallDecision>(d).map_err(ApiError::internal))?;
    Ok((call, decision))
}

/// Session rules for a project: "always" grants of this session, on this project, that
/// could not reach its config file.
pub(crate) fn session_rules(guard: &Guard, root: &std::path::Path) -> Vec<PermissionRule> {
    guard
        .as_ref()
        .map(|s| crate::session::allow_rules(&s.session_rules_for(root)))
        .unwrap_or_default()
}

fn to_value<T: Serialize>(v: &T) -> Result<serde_json::Value, ApiError> {
    serde_json::to_value(v).map_err(ApiError::internal)
}

/// The answer to recording a call: where it stands, and the decision.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CallResponse {
    pub call_id: String,
    /// `approved` (run it), `pending` (ask the user, then grant or deny), `denied`.
    pub status: CallStatus,
    #[serde(flatten)]
    #[schema(inline, value_type = crate::model::schema::CallDecisionSchema)]
    pub decision: CallDecision,
}

/// Records a tool call and decides it: `ToolRequested`, then `ToolApproved` (allow),
/// `PermissionRequested` (ask: pending), or `PermissionDenied` + `ToolFailed` (deny).
/// Creates the session on its first call.
#[utoipa::path(post, path = "/v1/sessions/{sessionId}/calls", tag = "sessions",
    params(("sessionId" = String, Path, description = "Session id, `[A-Za-z0-9_-]{1,128}`", pattern = "^[A-Za-z0-9_-]{1,128}$")),
    request_body = RecordCallRequest,
    responses(
        (status = 200, description = "The call's status and decision", body = CallResponse),
        (status = 400, description = "Malformed JSON, a wrong type, an invalid session, call or turn id", body = ErrorBody),
        (status = 401, description = "Missing or invalid bearer token", body = ErrorBody),
        (status = 503, description = "At the concurrency cap (`overloaded`) or over the request timeout (`request_timeout`), `Retry-After` says when to retry; or the PostgreSQL session store does not answer (`store_unavailable`)", body = ErrorBody),
        (status = 403, description = "Project root outside the allowed workspace roots", body = ErrorBody),
        (status = 409, description = "The call id is already recorded in this session (`call_exists`), or the session is over its event budget even compacted (`session_event_budget`), or another replica wrote the session first (`session_changed`): nothing was recorded, send it again", body = ErrorBody),
        (status = 408, description = "The body did not arrive within the body timeout", body = ErrorBody),
        (status = 413, description = "Body over 1 MiB", body = ErrorBody),
        (status = 415, description = "Content type is not JSON", body = ErrorBody),
        (status = 404, description = "The project root, `cwd` or the input's working directory names no existing directory (`missing_project_root`, `bad_cwd`)", body = ErrorBody),
        (status = 422, description = "Unknown tool, relative path, command over 64 KiB, unusable input", body = ErrorBody),
    ))]
pub async fn record_call(
    State(state): State<AppState>,
    ApiPath(session_id): ApiPath<String>,
    ApiJson(req): ApiJson<RecordCallRequest>,
) -> Result<Json<CallResponse>, ApiError> {
    check_id("session", &session_id)?;
    check_id("call", &req.call_id)?;
    if let Some(turn) = &req.turn_id {
        check_id("turn", turn)?;
    }
    let st = state.clone();
    let (project_root, cwd, home) = (req.project_root.clone(), req.cwd.clone(), req.home.clone());
    let (tool, input) = (req.tool.clone(), req.input.clone());
    let (ctx, call) = state
        .blocking(move || {
            let ctx = st.context(&project_root, cwd.as_deref(), home.as_deref())?;
            st.confine_workdir(&tool, &input, &ctx)?;
            let call = map_call(&st, &tool, &input, &ctx)?;
            Ok::<_, ApiError>((ctx, call))
        })
        .await??;

    let guard = state.sessions().lock(&state, &session_id).await?;
    // A call whose decision was lost (a torn last line cut its `PermissionRequested`)
    // is recorded again by the same request: decided now, its `ToolRequested` kept.
    let mut recovering = false;
    if let Some(existing) = guard.as_ref().and_then(|s| s.call(&req.call_id)) {
        let same = existing.tool == req.tool
            && existing.input == req.input
            && existing.project_root == ctx.root().display().to_string();
        if existing.status == CallStatus::Requested && same {
            recovering = true;
        } else {
            let why = if existing.status == CallStatus::Requested {
                " with a different tool, input or project (its decision was lost; record it again with the same call)"
            } else {
                ""
            };
            return Err(ApiError::conflict(
                "call_exists",
                format!(
                    "call `{}` is already recorded in session `{session_id}`{why}",
                    req.call_id
                ),
            ));
        }
    }
    let interactive = req.interactive.unwrap_or(true);
    let st = state.clone();
    let (guard, ctx, call, decision) = state
        .blocking(move || {
            let policy = st.blocking_policy(&ctx);
            let decision = decide::decide(
                &policy,
                &session_rules(&guard, ctx.root()),
                &call,
                &ctx,
                interactive,
            );
            (guard, ctx, call, decision)
        })
        .await?;
    state.metrics().record_decision(decision.decision.as_str());

    let call_id = req.call_id.clone();
    let mut events = vec![EventKind::ToolRequested {
        call_id: call_id.clone(),
        turn_id: req.turn_id.clone(),
        tool: req.tool.clone(),
        input: req.input.clone(),
        project_root: ctx.root().display().to_string(),
        cwd: ctx.cwd().display().to_string(),
        home: ctx.home().display().to_string(),
        interactive,
        host: None,
        requests: to_value(&call.requests)?,
        grant_back: false,
        search_path: ctx.search_path_text(),
    }];
    if recovering {
        events.clear();
    }
    let (outcome, status) = flow::decided(&call_id, &decision).map_err(ApiError::internal)?;
    events.extend(outcome);
    append_call(&state, guard, events).await?;
    Ok(Json(CallResponse {
        call_id,
        status,
        decision,
    }))
}

/// The calls waiting for the user, oldest first. They survive a restart: the request
/// is in the log and the answer is not.
#[utoipa::path(get, path = "/v1/sessions/{sessionId}/pending", tag = "sessions",
    params(("sessionId" = String, Path, description = "Session id", pattern = "^[A-Za-z0-9_-]{1,128}$")),
    responses(
        (status = 200, description = "Pending calls", body = PendingResponse),
        (status = 400, description = "Invalid session id", body = ErrorBody),
        (status = 401, description = "Missing or invalid bearer token", body = ErrorBody),
        (status = 503, description = "At the concurrency cap (`overloaded`) or over the request timeout (`request_timeout`), `Retry-After` says when to retry; or the PostgreSQL session store does not answer (`store_unavailable`)", body = ErrorBody),
        (status = 404, description = "Unknown session", body = ErrorBody),
    ))]
pub async fn pending(
    State(state): State<AppState>,
    ApiPath(session_id): ApiPath<String>,
) -> Result<Json<PendingResponse>, ApiError> {
    check_id("session", &session_id)?;
    let guard = state.sessions().lock(&state, &session_id).await?;
    state.sessions().forget_if_empty(&guard);
    session_of(&guard, &session_id)?;
    let pending = pending_with_decisions(&state, &guard)
        .await?
        .into_iter()
        .map(|c| PendingCall {
            call_id: c.call_id,
            turn_id: c.turn_id,
            tool: c.tool,
            input: c.input,
            project_root: c.project_root,
            requested_at: c.requested_at,
            decision: c.decision.unwrap_or_default(),
        })
        .collect();
    Ok(Json(PendingResponse {
        session_id,
        pending,
    }))
}

/// The session's event log, in order, with warnings for lines that could not be read.
#[utoipa::path(get, path = "/v1/sessions/{sessionId}/events", tag = "sessions",
    params(("sessionId" = String, Path, description = "Session id", pattern = "^[A-Za-z0-9_-]{1,128}$")),
    responses(
        (status = 200, description = "Every event of the session", body = EventsResponse),
        (status = 400, description = "Invalid session id", body = ErrorBody),
        (status = 401, description = "Missing or invalid bearer token", body = ErrorBody),
        (status = 503, description = "At the concurrency cap (`overloaded`) or over the request timeout (`request_timeout`), `Retry-After` says when to retry; or the PostgreSQL session store does not answer (`store_unavailable`)", body = ErrorBody),
        (status = 404, description = "Unknown session", body = ErrorBody),
    ))]
pub async fn events(
    State(state): State<AppState>,
    ApiPath(session_id): ApiPath<String>,
) -> Result<Json<EventsResponse>, ApiError> {
    check_id("session", &session_id)?;
    let guard = state.sessions().lock(&state, &session_id).await?;
    state.sessions().forget_if_empty(&guard);
    session_of(&guard, &session_id)?;
    // The events live in the log; the session's lock keeps this server's own writers
    // out while it is read.
    let (guard, read) = state
        .blocking(move || {
            let read = guard.as_ref().map(Session::blocking_events).transpose();
            (guard, read)
        })
        .await?;
    drop(guard);
    let (events, warnings) = read.map_err(session_error)?.unwrap_or_default();
    Ok(Json(EventsResponse {
        session_id,
        events,
        warnings,
    }))
}

/// Grants a pending call: `PermissionGranted` then `ToolApproved`. `always` appends the
/// rules for the chosen pattern to `<root>/.khaelor/config.json` and approves the
/// session's other pending calls that now evaluate to allow. When the config file
/// cannot be written (malformed, unwritable) the grant still holds for this session
/// and the answer is a 409 saying so. A call whose waiting hook writes its own grants
/// (`hook --url --wait`, `grantBack`) gets the rules back in the hook's answer instead:
/// this replica writes no file (`handedToHook`), and the rules hold for the session.
#[utoipa::path(post, path = "/v1/sessions/{sessionId}/calls/{callId}/grant", tag = "sessions",
    params(
        ("sessionId" = String, Path, description = "Session id", pattern = "^[A-Za-z0-9_-]{1,128}$"),
        ("callId" = String, Path, description = "Call id", pattern = "^[A-Za-z0-9_-]{1,128}$"),
    ),
    request_body = GrantRequest,
    responses(
        (status = 200, description = "Granted and approved", body = GrantResponse),
        (status = 400, description = "Malformed JSON, a wrong type, an invalid id", body = ErrorBody),
        (status = 401, description = "Missing or invalid bearer token", body = ErrorBody),
        (status = 503, description = "At the concurrency cap (`overloaded`) or over the request timeout (`request_timeout`), `Retry-After` says when to retry; or the PostgreSQL session store does not answer (`store_unavailable`)", body = ErrorBody),
        (status = 403, description = "Project root outside the allowed workspace roots", body = ErrorBody),
        (status = 404, description = "Unknown session or call", body = ErrorBody),
        (status = 409, description = "The call is not pending; `always` with a pattern the call does not offer (`pattern_not_offered`) or on a call that offers none (`no_always_patterns`); or the project config could not be updated (`config_malformed`, `config_write_failed`: the grant applies to this session only); or another replica wrote the session first (`session_changed`): send it again", body = ErrorBody),
        (status = 408, description = "The body did not arrive within the body timeout", body = ErrorBody),
        (status = 413, description = "Body over 1 MiB", body = ErrorBody),
        (status = 415, description = "Content type is not JSON", body = ErrorBody),
        (status = 422, description = "`pattern` with scope `once` (`pattern_with_once`)", body = ErrorBody),
    ))]
pub async fn grant(
    State(state): State<AppState>,
    ApiPath((session_id, call_id)): ApiPath<(String, String)>,
    ApiJson(req): ApiJson<GrantRequest>,
) -> Result<Json<GrantResponse>, ApiError> {
    check_id("session", &session_id)?;
    check_id("call", &call_id)?;
    let guard = state.sessions().lock(&state, &session_id).await?;
    state.sessions().forget_if_empty(&guard);
    let (call, decision) = pending_call(&state, &guard, &session_id, &call_id).await?;

    if req.scope == GrantScope::Once {
        if req.pattern.is_some() {
            return Err(ApiError::unprocessable(
                "pattern_with_once",
                "`pattern` is only meaningful with scope `always`",
            ));
        }
        let events = flow::granted(&call_id, &decision, None).map_err(ApiError::internal)?;
        append(&state, guard, events).await?;
        return Ok(Json(GrantResponse {
            call_id,
            status: CallStatus::Approved,
            scope: GrantScope::Once,
            pattern: None,
            persisted_rules: Vec::new(),
            config_file: None,
            handed_to_hook: false,
            auto_approved: Vec::new(),
        }));
    }

    let pattern = match (&req.pattern, decision.always_patterns.first()) {
        (Some(p), _) => p.clone(),
        (None, Some(first)) => first.clone(),
        (None, None) => String::new(),
    };
    let rules = decide::grant_rules(&decision, &pattern).map_err(|e| match e {
        GrantError::NotAsking => ApiError::conflict("not_pending", e.to_string()),
        // Both depend on the call's state (what its decision offers), not on the
        // body's form: a conflict with the resource, like a call that is not pending.
        GrantError::NothingOffered => ApiError::conflict("no_always_patterns", e.to_string()),
        GrantError::NotOffered(_) => ApiError::conflict(
            "pattern_not_offered",
            format!("{e}; offered: {}", offered(&decision.always_patterns)),
        ),
    })?;
    // The project may have left the allowed workspaces since the call was recorded.
    // A call whose waiting hook writes the grant (`grantBack`) needs no project on this
    // replica, which writes nothing: a hub that does not see the agents' files takes
    // the grant, still inside the workspace roots (checked before the root's existence).
    let st = state.clone();
    let (root, cwd, home) = (
        call.project_root.clone(),
        call.cwd.clone(),
        call.home.clone(),
    );
    let ctx = match state
        .blocking(move || st.context(&root, Some(&cwd), Some(&home)))
        .await?
    {
        Ok(ctx) => Some(ctx),
        Err(e) if call.grant_back && e.code == "missing_project_root" => None,
        Err(e) => return Err(e),
    };
    let persisted_rules: Vec<PersistedRule> = rules.iter().map(PersistedRule::of).collect();
    let config_file = crate::policy::config::project_config_path(
        ctx.as_ref()
            .map_or(std::path::Path::new(&call.project_root), |c| c.root()),
    )
    .display()
    .to_string();
    // `None`: handed to the waiting hook, nothing written here.
    let written = match ctx.filter(|_| !call.grant_back) {
        None => None,
        Some(ctx) => {
            let root = ctx.root().to_path_buf();
            let to_write = persisted_rules.clone();
            let trust = state.config().trust_store();
            Some(
                state
                    .blocking(move || grants::blocking_append_rules(&root, &to_write, Some(&trust)))
                    .await?,
            )
        }
    };
    let persist_error = match &written {
        Some(Err(e)) => {
            tracing::warn!(error = %e, "always grant not persisted; it applies to this session only");
            Some(e.to_string())
        }
        _ => None,
    };
    let persisted = flow::Persisted {
        pattern: pattern.clone(),
        rules: persisted_rules.clone(),
        config_file: config_file.clone(),
        error: persist_error,
        handed_to_hook: written.is_none(),
    };
    let events =
        flow::granted(&call_id, &decision, Some(&persisted)).map_err(ApiError::internal)?;
    let guard = append(&state, guard, events).await?;

    // Seed §5.2: the grant may settle the session's other pending calls.
    let (guard, auto_approved) = auto_resolve(&state, guard, &call_id).await?;
    drop(guard);

    match written {
        None => Ok(Json(GrantResponse {
            call_id,
            status: CallStatus::Approved,
            scope: GrantScope::Always,
            pattern: Some(pattern),
            persisted_rules,
            config_file: None,
            handed_to_hook: true,
            auto_approved,
        })),
        Some(Ok(_)) => Ok(Json(GrantResponse {
            call_id,
            status: CallStatus::Approved,
            scope: GrantScope::Always,
            pattern: Some(pattern),
            persisted_rules,
            config_file: Some(config_file),
            handed_to_hook: false,
            auto_approved,
        })),
        Some(Err(e)) => {
            let code = match e {
                grants::GrantError::Malformed { .. } => "config_malformed",
                grants::GrantError::Unreadable { .. } => "config_malformed",
                grants::GrantError::Io { .. } | grants::GrantError::Escapes { .. } => {
                    "config_write_failed"
                }
            };
            Err(ApiError::conflict(
                code,
                format!(
                    "the grant applies to this session only: could not update the project config: {e}"
                ),
            ))
        }
    }
}

/// Approves every other pending call of the session that now evaluates to allow.
async fn auto_resolve(
    state: &AppState,
    guard: Guard,
    granted: &str,
) -> Result<(Guard, Vec<String>), ApiError> {
    let others: Vec<CallRecord> = guard
        .as_ref()
        .map(|s| {
            s.pending()
                .filter(|c| c.call_id != granted)
                .cloned()
                .collect()
        })
        .unwrap_or_default();
    let st = state.clone();
    let granted_id = granted.to_string();
    let (guard, found) = state
        .blocking(move || {
            let mut found = Vec::new();
            for c in others {
                // A call whose context no longer builds (root gone, now outside the
                // workspaces) simply stays pending.
                let Ok(ctx) = st.context(&c.project_root, Some(&c.cwd), Some(&c.home)) else {
                    continue;
                };
                let Ok(call) = map_call(&st, &c.tool, &c.input, &ctx) else {
                    continue;
                };
                let policy = st.blocking_policy(&ctx);
                let rules = session_rules(&guard, ctx.root());
                let d = decide::decide(&policy, &rules, &call, &ctx, c.interactive);
                if d.decision == Action::Allow {
                    found.push((c.call_id, d));
                }
            }
            (guard, found)
        })
        .await?;
    let mut events = Vec::new();
    let mut approved = Vec::new();
    for (call_id, d) in found {
        events.push(flow::auto_approved(&call_id, &d, &granted_id).map_err(ApiError::internal)?);
        approved.push(call_id);
    }
    let guard = append(state, guard, events).await?;
    Ok((guard, approved))
}

fn offered(patterns: &[String]) -> String {
    if patterns.is_empty() {
        "none".to_string()
    } else {
        patterns
            .iter()
            .map(|p| format!("`{p}`"))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// Denies a pending call: `PermissionDenied` (with the user's feedback) then
/// `ToolFailed` with the model-facing message; every other pending call of the same
/// turn is denied with it (seed §5.2).
#[utoipa::path(post, path = "/v1/sessions/{sessionId}/calls/{callId}/deny", tag = "sessions",
    params(
        ("sessionId" = String, Path, description = "Session id", pattern = "^[A-Za-z0-9_-]{1,128}$"),
        ("callId" = String, Path, description = "Call id", pattern = "^[A-Za-z0-9_-]{1,128}$"),
    ),
    request_body = DenyRequest,
    responses(
        (status = 200, description = "Denied; the message goes to the model", body = DenyResponse),
        (status = 400, description = "Malformed JSON, a wrong type, an invalid id", body = ErrorBody),
        (status = 401, description = "Missing or invalid bearer token", body = ErrorBody),
        (status = 503, description = "At the concurrency cap (`overloaded`) or over the request timeout (`request_timeout`), `Retry-After` says when to retry; or the PostgreSQL session store does not answer (`store_unavailable`)", body = ErrorBody),
        (status = 404, description = "Unknown session or call", body = ErrorBody),
        (status = 409, description = "The call is not pending; or another replica wrote the session first (`session_changed`): nothing was recorded, send it again", body = ErrorBody),
        (status = 408, description = "The body did not arrive within the body timeout", body = ErrorBody),
        (status = 413, description = "Body over 1 MiB", body = ErrorBody),
        (status = 415, description = "Content type is not JSON", body = ErrorBody),
    ))]
pub async fn deny(
    State(state): State<AppState>,
    ApiPath((session_id, call_id)): ApiPath<(String, String)>,
    ApiJson(req): ApiJson<DenyRequest>,
) -> Result<Json<DenyResponse>, ApiError> {
    check_id("session", &session_id)?;
    check_id("call", &call_id)?;
    let guard = state.sessions().lock(&state, &session_id).await?;
    state.sessions().forget_if_empty(&guard);
    let (call, decision) = pending_call(&state, &guard, &session_id, &call_id).await?;
    let feedback = req.feedback.filter(|f| !f.trim().is_empty());
    // Every other pending call of the same turn is denied with it (seed §5.2).
    let same_turn: Vec<CallRecord> = match &call.turn_id {
        Some(turn) => guard
            .as_ref()
            .map(|s| {
                s.pending()
                    .filter(|c| c.turn_id.as_ref() == Some(turn))
                    .cloned()
                    .collect()
            })
            .unwrap_or_default(),
        None => Vec::new(),
    };
    let same_turn = with_decisions(&state, &guard, same_turn).await?;
    let (events, message, also) =
        flow::denied(&call_id, &decision, feedback.as_deref(), &same_turn);
    let also_denied = also
        .into_iter()
        .map(|(call_id, message)| DeniedCall { call_id, message })
        .collect();
    append(&state, guard, events).await?;
    Ok(Json(DenyResponse {
        call_id,
        message,
        also_denied,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A probe of a session that does not exist must not drop the slot another request
    /// already holds a handle to, or two copies of the session could be loaded.
    fn state(dir: &std::path::Path) -> AppState {
        AppState::new(crate::http::ServiceConfig {
            state_dir: dir.to_path_buf(),
            token: None,
            panel_token: None,
            workspace_roots: Vec::new(),
            managed_config: None,
            preset: None,
            host_rules: true,
            default_home: PathBuf::from("/"),
            allow_request_home: false,
            allowed_hosts: Vec::new(),
            allowed_origins: Vec::new(),
            limits: crate::http::Limits::default(),
            audit: None,
        })
    }

    #[tokio::test]
    async fn forgetting_an_empty_session_keeps_a_slot_others_hold() {
        let dir = tempfile::tempdir().unwrap();
        let state = state(dir.path());
        let store = state.sessions();
        let guard = store.lock(&state, "s1").await.unwrap();
        let waiter = store
            .open
            .lock()
            .unwrap()
            .slots
            .get("s1")
            .map(|s| s.cell.clone())
            .unwrap();
        store.forget_if_empty(&guard);
        assert!(store.open.lock().unwrap().slots.contains_key("s1"));
        drop(waiter);
        store.forget_if_empty(&guard);
        assert!(!store.open.lock().unwrap().slots.contains_key("s1"));
    }

    /// Over the cap, the least recently used free sessions leave memory; a held one
    /// stays whatever its age.
    #[tokio::test]
    async fn the_cache_is_bounded_and_spares_held_sessions() {
        let dir = tempfile::tempdir().unwrap();
        let state = state(dir.path());
        let store =
            SessionStore::with_limits(dir.path().to_path_buf(), 10, Duration::from_secs(3600));
        let held = store.lock(&state, "held").await.unwrap();
        for i in 0..50 {
            drop(store.lock(&state, &format!("s{i}")).await.unwrap());
            assert!(store.in_memory() <= 10, "{}", store.in_memory());
        }
        assert!(store.open.lock().unwrap().slots.contains_key("held"));
        assert!(store.open.lock().unwrap().slots.contains_key("s49"));
        drop(held);
        // Idle eviction: with a zero idle time every free slot goes on the next sweep.
        let store = SessionStore::with_limits(dir.path().to_path_buf(), 100, Duration::ZERO);
        for i in 0..5 {
            drop(store.lock(&state, &format!("t{i}")).await.unwrap());
        }
        store.open.lock().unwrap().last_sweep = None;
        drop(store.lock(&state, "last").await.unwrap());
        assert_eq!(store.in_memory(), 1);
    }

    /// Writes session `id` with one call of a `size`-byte command, pending or approved.
    fn write_session(dir: &std::path::Path, id: &str, size: usize, pending: bool) {
        let mut s = Session::blocking_open(dir, id).unwrap();
        let mut events = vec![EventKind::ToolRequested {
            call_id: "c1".into(),
            turn_id: None,
            tool: "bash".into(),
            input: serde_json::json!({ "command": "x".repeat(size) }),
            project_root: "/p".into(),
            cwd: "/p".into(),
            home: "/h".into(),
            interactive: true,
            host: None,
            requests: serde_json::json!([]),
            grant_back: false,
            search_path: None,
        }];
        events.push(if pending {
            EventKind::PermissionRequested {
                call_id: "c1".into(),
                decision: serde_json::json!({ "decision": "ask", "summary": id }),
            }
        } else {
            EventKind::ToolApproved {
                call_id: "c1".into(),
                by: crate::session::ApprovedBy::Policy,
                decisions: serde_json::json!([]),
                resolved_by: None,
                contained: None,
            }
        });
        s.blocking_append(events).unwrap();
    }

    /// Over the byte budget, free sessions leave memory, oldest first and those with a
    /// pending call last; the one in use stays. A session that left is read back whole,
    /// its pending call's decision included.
    #[tokio::test]
    async fn the_cache_is_bounded_in_bytes_and_keeps_pending_calls_longest() {
        let dir = tempfile::tempdir().unwrap();
        let state = state(dir.path());
        let size = 100_000;
        for i in 0..4 {
            write_session(dir.path(), &format!("pending{i}"), size, true);
            write_session(dir.path(), &format!("done{i}"), size, false);
        }
        // Room for about three sessions.
        let store =
            SessionStore::with_limits(dir.path().to_path_buf(), 100, Duration::from_secs(3600))
                .with_max_bytes(3 * size + size / 2);
        for i in 0..4 {
            drop(store.lock(&state, &format!("pending{i}")).await.unwrap());
            drop(store.lock(&state, &format!("done{i}")).await.unwrap());
        }
        let held = store.lock(&state, "pending0").await.unwrap();
        let in_memory: Vec<String> = {
            let index = store.open.lock().unwrap();
            let mut v: Vec<String> = index.slots.keys().cloned().collect();
            v.sort();
            v
        };
        // Every finished session left before any pending one; the one in use stays.
        assert!(
            in_memory.iter().all(|id| id.starts_with("pending")),
            "{in_memory:?}"
        );
        assert!(in_memory.contains(&"pending0".to_string()), "{in_memory:?}");
        assert!(
            store.resident_bytes() <= 4 * size,
            "{}",
            store.resident_bytes()
        );
        let measured = held.as_ref().map_or(0, Session::resident_bytes);
        assert!(measured > size && measured < 2 * size, "{measured}");
        drop(held);
        // Read back from its log: the pending call and its decision are whole.
        let guard = store.lock(&state, "done0").await.unwrap();
        drop(guard);
        let guard = store.lock(&state, "pending3").await.unwrap();
        let pending: Vec<CallRecord> = guard.as_ref().unwrap().pending().cloned().collect();
        assert!(pending.iter().all(|c| c.decision.is_none()));
        let read = with_decisions(&state, &guard, pending).await.unwrap();
        assert_eq!(read.len(), 1);
        assert_eq!(read[0].input["command"].as_str().map(str::len), Some(size));
        assert_eq!(
            read[0].decision,
            Some(serde_json::json!({ "decision": "ask", "summary": "pending3" }))
        );
    }

    /// Records an ask for `npm install left-pad` on `root` in session `s`, call `c1`,
    /// as a hook does (`grant_back` as given).
    fn record_ask(st: &AppState, dir: &std::path::Path, root: &std::path::Path, grant_back: bool) {
        let ctx = st.context(root.to_str().unwrap(), None, None).unwrap();
        let input = serde_json::json!({ "command": "npm install left-pad" });
        let call = map_call(st, "bash", &input, &ctx).unwrap();
        let d = decide::decide(&st.blocking_policy(&ctx), &[], &call, &ctx, true);
        assert_eq!(d.decision, Action::Ask);
        let mut s = Session::blocking_open(&dir.join("sessions"), "s").unwrap();
        s.blocking_append(vec![
            EventKind::ToolRequested {
                call_id: "c1".into(),
                turn_id: None,
                tool: "bash".into(),
                input,
                project_root: ctx.root().display().to_string(),
                cwd: ctx.cwd().display().to_string(),
                home: ctx.home().display().to_string(),
                interactive: true,
                host: Some("codex".into()),
                requests: serde_json::to_value(&call.requests).unwrap(),
                grant_back,
                search_path: None,
            },
            EventKind::PermissionRequested {
                call_id: "c1".into(),
                decision: serde_json::to_value(&d).unwrap(),
            },
        ])
        .unwrap();
    }

    /// A replica that does not see the agent's project takes an "always" grant of a
    /// call whose hook writes it back: it writes nothing (not even the project's
    /// directory) and hands the rules on; without `grantBack` the same grant is refused
    /// as before, since the replica could not write it.
    #[tokio::test]
    async fn a_grant_handed_to_the_hook_needs_no_project_here() {
        for grant_back in [true, false] {
            let dir = tempfile::tempdir().unwrap();
            let st = state(dir.path());
            let project = tempfile::tempdir().unwrap();
            let root = std::fs::canonicalize(project.path()).unwrap();
            record_ask(&st, dir.path(), &root, grant_back);
            drop(project);
            assert!(!root.exists());
            let r = grant(
                State(st.clone()),
                ApiPath(("s".to_string(), "c1".to_string())),
                ApiJson(GrantRequest {
                    scope: GrantScope::Always,
                    pattern: None,
                }),
            )
            .await;
            assert!(!root.exists(), "nothing is created on this replica");
            if !grant_back {
                assert_eq!(r.unwrap_err().code, "missing_project_root");
                continue;
            }
            let Json(r) = r.unwrap();
            assert!(r.handed_to_hook);
            assert_eq!(r.config_file, None);
            assert_eq!(r.pattern.as_deref(), Some("npm install *"));
            assert_eq!(
                r.persisted_rules,
                [PersistedRule {
                    capability: "process.execute".into(),
                    pattern: "npm install *".into(),
                    action: "allow".into(),
                }]
            );
            // The grant holds for the session: its rules are session rules here.
            let guard = st.sessions().lock(&st, "s").await.unwrap();
            let session = guard.as_ref().unwrap();
            assert_eq!(session.call("c1").unwrap().status, CallStatus::Approved);
            assert_eq!(session.session_rules_for(&root), r.persisted_rules);
        }
    }
}
