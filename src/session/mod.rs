//! The durable session log (seed §5, §8): one JSON Lines file of events per session in
//! the state directory, and the call states (pending, approved, denied) derived from it.
//!
//! Owns the event shapes, the append protocol (write, flush, `sync_data` before the
//! caller answers), the tolerant load (a torn or corrupt line is skipped and reported,
//! never fatal) and id validation (ids never become paths unchecked). It does not
//! evaluate anything: decisions and requests arrive already serialized from the policy,
//! and the HTTP layer decides which events to record. Functions that touch the disk are
//! named `blocking_*`.

pub mod audit;
mod checkpoint;
pub mod flow;
pub mod grants;
pub mod outbox;
pub mod pg;
mod store;
pub mod suggest;

pub use store::{Backend, DecisionSource, blocking_query_pg, blocking_receive_pg};

use std::collections::HashMap;
use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::session::checkpoint::Folded;
use crate::session::grants::PersistedRule;

/// Events a session's log may hold before it is compacted, and past which (compacted)
/// no new call is recorded: `serve --max-session-events`, and the hook command's budget.
pub const DEFAULT_MAX_EVENTS: usize = 10_000;

/// Longest session or call id accepted.
pub const MAX_ID_LEN: usize = 128;

/// Whether `id` is a valid session or call id: `[A-Za-z0-9_-]{1,128}`. Anything else
/// (dots, slashes, percent signs, NUL) is refused before it can reach a path.
pub fn valid_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= MAX_ID_LEN
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// How long a grant lasts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum GrantScope {
    /// Exactly this call (seed §7.7).
    Once,
    /// A rule appended to the project config.
    Always,
}

/// What approved a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub enum ApprovedBy {
    /// The rules allowed it without asking.
    Policy,
    /// The user granted it.
    User,
    /// An "always" grant on another call of the session made it evaluate to allow.
    AutoResolve,
    /// The rules contain it: it runs without asking, inside the sandbox.
    Contained,
    /// The person approved it in the agent host's own dialog: the host reported that
    /// a call we answered `ask` ran (its post-call event).
    Host,
}

/// What denied a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub enum DeniedBy {
    /// A deny rule or the hardline floor (no panel).
    Policy,
    /// The user denied this call.
    User,
    /// The user denied another pending call of the same turn (seed §5.2).
    Turn,
    /// The agent host reported that a call we answered `ask` did not run (refused in
    /// its dialog, or the turn ended without it).
    Host,
    /// A hook waited for a person's answer (`POST /v1/hooks/{host}?wait=SECS`) and
    /// none came in time, on a host with no prompt of its own to fall back on.
    Timeout,
}

/// One event of the seed's flow (§5.1), with what §8 requires each to carry.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(tag = "type")]
pub enum EventKind {
    #[serde(rename_all = "camelCase")]
    ToolRequested {
        call_id: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        turn_id: Option<String>,
        tool: String,
        #[schema(value_type = Object)]
        input: Value,
        project_root: String,
        cwd: String,
        home: String,
        interactive: bool,
        /// The agent host whose hook sent the call (`claude`, `codex`, `gemini`,
        /// `opencode`); absent for calls recorded through the sessions API.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        host: Option<String>,
        /// The capability requests of the call.
        #[schema(value_type = Vec<crate::model::schema::CapabilityRequestSchema>)]
        requests: Value,
        /// The call came from a hook that waits for a person and writes an "always"
        /// grant into the project config on its own machine (`hook --url --wait`): a
        /// replica that takes the grant hands the rules back to that hook instead of
        /// writing a config file itself.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        grant_back: bool,
        /// The `PATH` the call's command runs with, when the hook gave one: the one
        /// its program names were read on (`programs::search_path`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        search_path: Option<String>,
    },
    #[serde(rename_all = "camelCase")]
    PermissionRequested {
        call_id: String,
        /// The whole decision: evaluated requests with matched rule and source, always
        /// patterns, panel.
        #[schema(value_type = crate::model::schema::CallDecisionSchema)]
        decision: Value,
    },
    #[serde(rename_all = "camelCase")]
    ToolApproved {
        call_id: String,
        by: ApprovedBy,
        /// The evaluated requests (matched rule and source of each).
        #[schema(value_type = Vec<crate::model::schema::EvaluatedRequestSchema>)]
        decisions: Value,
        /// For `autoResolve`: the call whose "always" grant resolved this one.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        resolved_by: Option<String>,
        /// For `contained`: the sandbox profile and the rewritten command it runs as.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[schema(value_type = Option<crate::model::schema::ContainmentSchema>)]
        contained: Option<Value>,
    },
    #[serde(rename_all = "camelCase")]
    PermissionGranted {
        call_id: String,
        scope: GrantScope,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pattern: Option<String>,
        /// The rules an "always" grant added.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        persisted_rules: Vec<PersistedRule>,
        /// Whether those rules reached the config file; when not, they apply to this
        /// session only and `persistError` says why.
        #[serde(default)]
        persisted: bool,
        /// The rules were handed back to the waiting hook of a `grantBack` call, which
        /// writes them into the project config on the agent's machine; the replica wrote
        /// no file (`persisted` is false, and the rules hold for this session).
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        handed_to_hook: bool,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        config_file: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        persist_error: Option<String>,
    },
    #[serde(rename_all = "camelCase")]
    PermissionDenied {
        call_id: String,
        by: DeniedBy,
        /// For `policy`: the evaluated requests, the denying rule among them.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[schema(value_type = Option<Vec<crate::model::schema::EvaluatedRequestSchema>>)]
        decisions: Option<Value>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        feedback: Option<String>,
        /// For `turn`: the call the user denied.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        denied_with: Option<String>,
    },
    #[serde(rename_all = "camelCase")]
    ToolFailed {
        call_id: String,
        /// The model-facing message (seed §5.4).
        message: String,
    },
    /// The log was compacted (`Session::blocking_compact`): the events of finished
    /// calls were dropped; the counts add up over every compaction of the session.
    #[serde(rename_all = "camelCase")]
    Compacted {
        /// Events dropped so far.
        removed_events: u64,
        /// Finished calls whose events were dropped so far.
        removed_calls: u64,
    },
}

impl EventKind {
    pub fn call_id(&self) -> &str {
        match self {
            EventKind::ToolRequested { call_id, .. }
            | EventKind::PermissionRequested { call_id, .. }
            | EventKind::ToolApproved { call_id, .. }
            | EventKind::PermissionGranted { call_id, .. }
            | EventKind::PermissionDenied { call_id, .. }
            | EventKind::ToolFailed { call_id, .. } => call_id,
            EventKind::Compacted { .. } => "",
        }
    }
}

/// An event as stored: sequence number, timestamp, then the event's own fields.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Event {
    pub seq: u64,
    /// RFC 3339 UTC, millisecond precision.
    pub at: String,
    #[serde(flatten)]
    pub kind: EventKind,
}

/// Where a call stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub enum CallStatus {
    /// Requested; no decision recorded yet (a crash between the two appends).
    Requested,
    /// Waiting for the user.
    Pending,
    Approved,
    Denied,
}

/// One call of a session, as the log tells it. A resident session keeps the call's
/// input (it is compared when a call id is recorded again, and decided again after an
/// "always" grant) but not its requests or decision, which can be many times the input
/// (a decision repeats a command in every request, panel line and summary): those stay
/// in the log, and `decision_at` says where (`blocking_read_decisions` reads them).
#[derive(Debug, Clone, PartialEq)]
pub struct CallRecord {
    pub call_id: String,
    pub turn_id: Option<String>,
    pub tool: String,
    pub input: Value,
    pub project_root: String,
    pub cwd: String,
    pub home: String,
    pub interactive: bool,
    /// The agent host whose hook sent the call, if one did.
    pub host: Option<String>,
    /// An "always" grant of this call travels back to its waiting hook (`ToolRequested`'s
    /// `grantBack`).
    pub grant_back: bool,
    pub requested_at: String,
    /// The decision recorded with `PermissionRequested` (or the approval's decisions),
    /// once read from the log (`blocking_read_decisions`); `None` in a resident session.
    pub decision: Option<Value>,
    /// Where that decision is in the log.
    pub decision_at: Option<LogSpot>,
    pub status: CallStatus,
    /// The model-facing message of a denial.
    pub message: Option<String>,
}

/// Where an event is in its log: the byte offset of its line and its sequence number,
/// which a read checks (a log rewritten behind this copy's back is read in full).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LogSpot {
    pub offset: u64,
    pub seq: u64,
}

/// How far an append goes before it returns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Durability {
    /// Written and `sync_data`'d (and a new file's directory synced): it survives a
    /// power loss. The service answers only after this, since its client acts on the
    /// state (a pending call, a grant).
    Synced,
    /// Written and flushed to the kernel: it survives the process being killed, not a
    /// power loss. The per-call hook records its audit events this way: nothing acts on
    /// them across a power loss (the host dies too), and a sync doubled the hook's
    /// latency on a loaded disk.
    Flushed,
}

#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    #[error("invalid id `{0}`: expected 1 to 128 of A-Z a-z 0-9 _ -")]
    InvalidId(String),
    #[error("could not {action} `{path}`: {source}")]
    Io {
        action: &'static str,
        path: String,
        source: io::Error,
    },
    #[error("could not encode an event: {0}")]
    Encode(#[from] serde_json::Error),
    #[error(
        "the session has reached its budget of {max_events} events: even compacted, its pending calls and session grants take {live}; answer its pending calls or start a new session"
    )]
    Budget { max_events: usize, live: usize },
    #[error("{0}")]
    Store(#[from] pg::StoreError),
    #[error(
        "the session changed on another replica while this request was being decided; nothing was recorded: send it again"
    )]
    Behind,
}

/// One session: its log file and the state derived from its events. The events
/// themselves stay in the log (`blocking_events` reads them): what a session needs in
/// memory is its calls, and only their small parts (`CallRecord`).
#[derive(Debug)]
pub struct Session {
    id: String,
    path: PathBuf,
    /// Events in the log (read or written through this copy), for the event budget.
    event_count: usize,
    /// An estimate of the bytes this session holds in memory (`resident_bytes`).
    resident: usize,
    warnings: Vec<String>,
    calls: HashMap<String, CallRecord>,
    order: Vec<String>,
    /// Unpersisted "always" grants, with the project root of the call they were granted
    /// on (`None` when that call is not in the log: such a rule applies nowhere).
    session_rules: Vec<(Option<String>, PersistedRule)>,
    /// Calls with an unpersisted "always" grant: a compaction keeps their events.
    always_calls: Vec<String>,
    next_seq: u64,
    /// The file ends without a newline (a torn last line): the next append starts a
    /// new line so it is not glued to the fragment.
    needs_newline: bool,
    /// The PostgreSQL store the events live in, instead of the file at `path`
    /// (`store.rs`); `path` then only names the session in messages.
    pg: Option<Arc<pg::PgStore>>,
}

impl Session {
    /// Opens the session `id` under `dir`, reading its log if there is one. Corrupt
    /// lines are skipped with a warning (logged and kept in `warnings`).
    pub fn blocking_open(dir: &Path, id: &str) -> Result<Session, SessionError> {
        Self::blocking_load(dir, id, |_| {})
    }

    /// As `blocking_open`, also returning every event read, in order.
    fn blocking_open_with_events(
        dir: &Path,
        id: &str,
    ) -> Result<(Session, Vec<Event>), SessionError> {
        let mut events = Vec::new();
        let s = Self::blocking_load(dir, id, |ev| events.push(ev.clone()))?;
        Ok((s, events))
    }

    /// An empty session `id` whose log is `path`.
    fn empty(id: &str, path: PathBuf, next_seq: u64) -> Session {
        let mut s = Session {
            id: id.to_string(),
            path,
            event_count: 0,
            resident: 0,
            warnings: Vec::new(),
            calls: HashMap::new(),
            order: Vec::new(),
            session_rules: Vec::new(),
            always_calls: Vec::new(),
            next_seq,
            needs_newline: false,
            pg: None,
        };
        s.resident = std::mem::size_of::<Session>() + s.id.len() + s.path.as_os_str().len();
        s
    }

    /// Reads the log, folding each event into the state and handing it to `seen`.
    fn blocking_load(
        dir: &Path,
        id: &str,
        mut seen: impl FnMut(&Event),
    ) -> Result<Session, SessionError> {
        if !valid_id(id) {
            return Err(SessionError::InvalidId(id.to_string()));
        }
        let mut s = Session::empty(id, dir.join(format!("{id}.jsonl")), 1);
        let mut bytes = Vec::new();
        match File::open(&s.path) {
            Ok(mut f) => {
                f.read_to_end(&mut bytes)
                    .map_err(|e| io_err("read", &s.path, e))?;
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(s),
            Err(e) => return Err(io_err("open", &s.path, e)),
        }
        s.needs_newline = bytes.last().is_some_and(|b| *b != b'\n');
        let lines = log_lines(&bytes);
        let total = lines.len();
        for (i, (offset, raw)) in lines.into_iter().enumerate() {
            let line = String::from_utf8_lossy(raw);
            if line.trim().is_empty() {
                continue;
            }
            match serde_json::from_str::<Event>(&line) {
                Ok(ev) => {
                    seen(&ev);
                    s.apply(ev, offset);
                }
                Err(e) => {
                    let torn = i + 1 == total && s.needs_newline;
                    let what = if torn {
                        "torn last line"
                    } else {
                        "corrupt line"
                    };
                    let w = format!("{}:{}: {what} skipped: {e}", s.path.display(), i + 1);
                    tracing::warn!(session = %s.id, "{w}");
                    s.resident += w.len();
                    s.warnings.push(w);
                }
            }
        }
        s.warn_stuck();
        Ok(s)
    }

    /// A crash between a call's `ToolRequested` and its decision leaves it neither
    /// pending nor answerable: say so, and how to recover (the HTTP layer decides a
    /// call recorded again with the same tool and input).
    fn warn_stuck(&mut self) {
        let stuck: Vec<String> = self
            .calls()
            .filter(|c| c.status == CallStatus::Requested)
            .map(|c| c.call_id.clone())
            .collect();
        for id in stuck {
            let w = format!(
                "{}: call `{id}` was requested but its decision was lost; record it again with the same tool and input to decide it",
                self.path.display()
            );
            tracing::warn!(session = %self.id, "{w}");
            self.warnings.push(w);
        }
    }

    pub fn id(&self) -> &str {
        &self.id
    }

    /// Whether the session has a log with anything in it (an unknown session has
    /// none; a log of only unreadable lines still exists, with its warnings).
    pub fn exists(&self) -> bool {
        self.event_count > 0 || !self.warnings.is_empty()
    }

    /// Every event of the log, read from disk, and what went wrong reading it.
    pub fn blocking_events(&self) -> Result<(Vec<Event>, Vec<String>), SessionError> {
        if let Some(store) = &self.pg {
            return Ok(store.blocking_events(&self.id, 0)?);
        }
        let dir = self.path.parent().unwrap_or_else(|| Path::new("."));
        let (s, events) = Session::blocking_open_with_events(dir, &self.id)?;
        Ok((events, s.warnings))
    }

    /// Events in the log, as this copy counts them.
    pub fn event_count(&self) -> usize {
        self.event_count
    }

    /// An estimate of the bytes this session holds in memory: its calls (ids, context
    /// paths, input), session rules and warnings, with their allocations' headers. The
    /// server bounds the sum over its cached sessions (`--max-session-memory`).
    pub fn resident_bytes(&self) -> usize {
        self.resident
    }

    /// The session's log file.
    pub fn log_path(&self) -> &Path {
        &self.path
    }

    /// What went wrong reading the log (skipped lines).
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    pub fn call(&self, call_id: &str) -> Option<&CallRecord> {
        self.calls.get(call_id)
    }

    /// Calls in the order they were requested.
    pub fn calls(&self) -> impl Iterator<Item = &CallRecord> {
        self.order.iter().filter_map(|id| self.calls.get(id))
    }

    /// Calls waiting for the user, oldest first.
    pub fn pending(&self) -> impl Iterator<Item = &CallRecord> {
        self.calls().filter(|c| c.status == CallStatus::Pending)
    }

    /// Rules of "always" grants that could not be written to the config file: they
    /// apply to this session only (seed §6.2).
    /// Every unpersisted "always" grant of the session, whatever its project.
    pub fn session_rules(&self) -> Vec<PersistedRule> {
        self.session_rules.iter().map(|(_, r)| r.clone()).collect()
    }

    /// The unpersisted "always" grants that apply to `root` (canonical): a grant that
    /// could not reach one project's config file must not widen into other projects the
    /// same session later names.
    pub fn session_rules_for(&self, root: &Path) -> Vec<PersistedRule> {
        session_rules_on(&self.session_rules, root)
    }

    /// Appends `kinds` as events, flushed and synced before returning; the in-memory
    /// state changes only once they are durable.
    pub fn blocking_append(&mut self, kinds: Vec<EventKind>) -> Result<Vec<Event>, SessionError> {
        self.blocking_append_with(kinds, Durability::Synced)
    }

    /// Appends `kinds` as events with the given durability (see `Durability`).
    pub fn blocking_append_with(
        &mut self,
        kinds: Vec<EventKind>,
        durability: Durability,
    ) -> Result<Vec<Event>, SessionError> {
        if let Some(store) = self.pg.clone() {
            return self.blocking_append_pg(&store, kinds);
        }
        let (events, offsets) = blocking_write_events(
            &self.path,
            self.next_seq,
            self.needs_newline,
            kinds,
            durability,
        )?;
        // The events are in the file now: memory follows before anything else can fail,
        // so a retry after an error below sees them and is not recorded twice.
        self.needs_newline = false;
        for (ev, offset) in events.iter().zip(offsets) {
            self.apply(ev.clone(), offset);
        }
        Ok(events)
    }

    /// Folds one event, whose line starts at byte `offset` of the log, into the
    /// derived state.
    fn apply(&mut self, ev: Event, offset: u64) {
        self.next_seq = self.next_seq.max(ev.seq + 1);
        self.event_count += 1;
        let spot = LogSpot {
            offset,
            seq: ev.seq,
        };
        match ev.kind {
            EventKind::ToolRequested {
                call_id,
                turn_id,
                tool,
                input,
                project_root,
                cwd,
                home,
                interactive,
                host,
                requests: _,
                grant_back,
                search_path: _,
            } => {
                if !self.calls.contains_key(&call_id) {
                    self.order.push(call_id.clone());
                    self.resident += STRING_BYTES + call_id.len();
                }
                let record = CallRecord {
                    call_id: call_id.clone(),
                    turn_id,
                    tool,
                    input,
                    project_root,
                    cwd,
                    home,
                    interactive,
                    host,
                    grant_back,
                    requested_at: ev.at,
                    decision: None,
                    decision_at: None,
                    status: CallStatus::Requested,
                    message: None,
                };
                self.resident += record_bytes(&record) + STRING_BYTES + call_id.len();
                if let Some(old) = self.calls.insert(call_id.clone(), record) {
                    self.resident = self
                        .resident
                        .saturating_sub(record_bytes(&old) + STRING_BYTES + call_id.len());
                }
            }
            EventKind::PermissionRequested { call_id, .. } => {
                if let Some(c) = self.calls.get_mut(&call_id) {
                    c.status = CallStatus::Pending;
                    c.decision_at = Some(spot);
                }
            }
            EventKind::ToolApproved { call_id, .. } => {
                if let Some(c) = self.calls.get_mut(&call_id) {
                    c.status = CallStatus::Approved;
                    if c.decision_at.is_none() {
                        c.decision_at = Some(spot);
                    }
                }
            }
            EventKind::PermissionGranted {
                call_id,
                scope,
                persisted_rules,
                persisted,
                ..
            } => {
                if scope == GrantScope::Always && !persisted {
                    let root = self.calls.get(&call_id).map(|c| c.project_root.clone());
                    for r in persisted_rules {
                        let entry = (root.clone(), r);
                        if !self.session_rules.contains(&entry) {
                            self.resident += rule_bytes(&entry);
                            self.session_rules.push(entry);
                        }
                    }
                    if !self.always_calls.contains(&call_id) {
                        self.always_calls.push(call_id);
                    }
                }
            }
            EventKind::PermissionDenied { call_id, .. } => {
                if let Some(c) = self.calls.get_mut(&call_id) {
                    c.status = CallStatus::Denied;
                }
            }
            EventKind::ToolFailed { call_id, message } => {
                if let Some(c) = self.calls.get_mut(&call_id) {
                    c.status = CallStatus::Denied;
                    self.resident += message.len();
                    c.message = Some(message);
                }
            }
            EventKind::Compacted { .. } => {}
        }
    }

    /// The calls whose events must survive a compaction: those still waiting (pending,
    /// or requested with their decision lost), and those whose unpersisted "always"
    /// grant is a session rule (the rule finds its project through the call).
    fn live_calls(&self) -> std::collections::HashSet<&str> {
        let mut live: std::collections::HashSet<&str> = self
            .calls()
            .filter(|c| matches!(c.status, CallStatus::Pending | CallStatus::Requested))
            .map(|c| c.call_id.as_str())
            .collect();
        for call_id in &self.always_calls {
            if self.calls.contains_key(call_id) {
                live.insert(call_id.as_str());
            }
        }
        live
    }

    /// The events a compaction keeps, in their order with their own `seq`, and the
    /// closing `Compacted` event (which takes the next `seq`, so numbers never repeat).
    fn compacted_events(&self, events: &[Event], next_seq: u64) -> (Vec<Event>, CompactReport) {
        let live = self.live_calls();
        let (mut prev_events, mut prev_calls) = (0u64, 0u64);
        let mut kept = Vec::new();
        for ev in events {
            match &ev.kind {
                EventKind::Compacted {
                    removed_events,
                    removed_calls,
                } => {
                    prev_events = *removed_events;
                    prev_calls = *removed_calls;
                }
                kind if live.contains(kind.call_id()) => kept.push(ev.clone()),
                _ => {}
            }
        }
        let dropped_calls = self.calls.len().saturating_sub(live.len()) as u64;
        // The previous marker is replaced, not counted as a dropped event.
        let markers = events
            .iter()
            .filter(|e| matches!(e.kind, EventKind::Compacted { .. }))
            .count();
        let dropped_events = (events.len() - kept.len() - markers) as u64;
        let report = CompactReport {
            events_before: events.len(),
            events_after: kept.len() + 1,
            calls_dropped: dropped_calls as usize,
        };
        kept.push(Event {
            seq: next_seq,
            at: now_rfc3339(),
            kind: EventKind::Compacted {
                removed_events: prev_events + dropped_events,
                removed_calls: prev_calls + dropped_calls,
            },
        });
        (kept, report)
    }

    /// Rewrites the log keeping only what rebuilds the session's state: every event of
    /// its pending and stuck calls, and of the calls whose unpersisted "always" grants
    /// are session rules. Finished calls are forgotten (their ids may be recorded again,
    /// and are then decided afresh). A `Compacted` event closes the new log.
    ///
    /// The log is read again from disk under the session's file lock (`<id>.lock`, the
    /// one `khaelor-perm hook` holds while it appends), so events another writer
    /// appended behind this copy's back are kept, not overwritten; `lock` says whether
    /// the caller already holds it.
    ///
    /// Atomic, so a crash at any point loses nothing: the new log is written to a temp
    /// file beside the old one, synced, renamed over it, and the directory synced
    /// (`replace_atomically`). Until the rename the old log is whole; after it the new
    /// one is. A temp file left by a crash is removed by the start-up sweep. Memory
    /// changes only once the new log is durable.
    pub fn blocking_compact(&mut self, lock: LogLock) -> Result<CompactReport, SessionError> {
        if let Some(store) = self.pg.clone() {
            return self.blocking_compact_pg(&store);
        }
        let dir = self
            .path
            .parent()
            .unwrap_or_else(|| Path::new("."))
            .to_path_buf();
        let _held = match lock {
            LogLock::Held => None,
            LogLock::Take => Some(lock_log(&dir, &self.id)?),
        };
        let (on_disk, events) = Session::blocking_open_with_events(&dir, &self.id)?;
        let next_seq = self.next_seq.max(on_disk.next_seq);
        let (kept, report) = on_disk.compacted_events(&events, next_seq);
        drop(events);
        let mut buf = Vec::new();
        let mut offsets = Vec::with_capacity(kept.len());
        for ev in &kept {
            offsets.push(buf.len() as u64);
            serde_json::to_writer(&mut buf, ev)?;
            buf.push(b'\n');
        }
        replace_atomically(&self.path, &buf)?;
        // The hook's checkpoint describes the old file; its inode and last bytes would
        // tell it apart anyway, but a rewritten log owes no one a stale cache.
        checkpoint::forget(&checkpoint::path(&dir, &self.id));
        let mut fresh = Session::empty(&self.id, self.path.clone(), next_seq);
        for (ev, offset) in kept.into_iter().zip(offsets) {
            fresh.apply(ev, offset);
        }
        *self = fresh;
        tracing::info!(
            session = %self.id,
            before = report.events_before,
            after = report.events_after,
            calls_dropped = report.calls_dropped,
            "session log compacted"
        );
        Ok(report)
    }

    /// Makes room for `incoming` new events within a budget of `max_events` in the log:
    /// compacts when the log would go over, and refuses when even the compacted log
    /// (the state still needed) leaves no room.
    pub fn blocking_make_room(
        &mut self,
        max_events: usize,
        incoming: usize,
        lock: LogLock,
    ) -> Result<Option<CompactReport>, SessionError> {
        if self.event_count + incoming <= max_events {
            return Ok(None);
        }
        let report = self.blocking_compact(lock)?;
        if self.event_count + incoming > max_events {
            return Err(SessionError::Budget {
                max_events,
                live: self.event_count,
            });
        }
        Ok(Some(report))
    }
}

/// The lines of a log as `str::lines` splits them (a trailing `\r` cut, no empty line
/// after the last newline), each with the byte offset it starts at.
fn log_lines(bytes: &[u8]) -> Vec<(u64, &[u8])> {
    let mut out = Vec::new();
    let mut start = 0usize;
    for (i, b) in bytes.iter().enumerate() {
        if *b == b'\n' {
            out.push((start, bytes.get(start..i).unwrap_or_default()));
            start = i + 1;
        }
    }
    if start < bytes.len() {
        out.push((start, bytes.get(start..).unwrap_or_default()));
    }
    out.into_iter()
        .map(|(at, l)| (at as u64, l.strip_suffix(b"\r").unwrap_or(l)))
        .collect()
}

/// What a `String` costs besides its bytes (the pointer, length and capacity, and the
/// allocation's header).
const STRING_BYTES: usize = std::mem::size_of::<String>() + 16;

/// An estimate of the bytes a JSON value holds: its strings and one node per value.
fn value_bytes(v: &Value) -> usize {
    let node = std::mem::size_of::<Value>();
    match v {
        Value::String(s) => node + 16 + s.len(),
        Value::Array(a) => node + 16 + a.iter().map(value_bytes).sum::<usize>(),
        Value::Object(m) => {
            node + 16
                + m.iter()
                    .map(|(k, v)| STRING_BYTES + k.len() + 16 + value_bytes(v))
                    .sum::<usize>()
        }
        Value::Null | Value::Bool(_) | Value::Number(_) => node,
    }
}

/// An estimate of the bytes one call holds in memory.
fn record_bytes(c: &CallRecord) -> usize {
    let text = |s: &str| STRING_BYTES + s.len();
    std::mem::size_of::<CallRecord>()
        + text(&c.call_id)
        + c.turn_id.as_deref().map_or(0, text)
        + text(&c.tool)
        + value_bytes(&c.input)
        + text(&c.project_root)
        + text(&c.cwd)
        + text(&c.home)
        + text(&c.requested_at)
        + c.message.as_deref().map_or(0, text)
        + c.host.as_deref().map_or(0, text)
}

/// An estimate of the bytes one session rule holds in memory.
fn rule_bytes((root, r): &(Option<String>, PersistedRule)) -> usize {
    std::mem::size_of::<(Option<String>, PersistedRule)>()
        + root.as_ref().map_or(0, |r| 16 + r.len())
        + serde_json::to_string(r).map_or(0, |t| t.len())
}

/// Reads the decisions of `calls` from the log at `path` (see `CallRecord`): each from
/// the line its `decision_at` names when that line still holds it, else (the log was
/// rewritten by another writer since) from a full read of the log, as a fresh load
/// would find it. A call with no recorded decision keeps `None`.
pub fn blocking_read_decisions(path: &Path, calls: &mut [CallRecord]) -> Result<(), SessionError> {
    let mut missing = false;
    let mut file = None;
    for c in calls.iter_mut() {
        let Some(spot) = c.decision_at else { continue };
        if file.is_none() {
            file = Some(File::open(path).map_err(|e| io_err("open", path, e))?);
        }
        let Some(f) = file.as_mut() else { continue };
        c.decision = read_decision_at(f, spot, &c.call_id).map_err(|e| io_err("read", path, e))?;
        missing |= c.decision.is_none();
    }
    if !missing {
        return Ok(());
    }
    let dir = path.parent().unwrap_or_else(|| Path::new("."));
    let id = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let (_, events) = Session::blocking_open_with_events(dir, &id)?;
    for c in calls
        .iter_mut()
        .filter(|c| c.decision.is_none() && c.decision_at.is_some())
    {
        c.decision = decision_in(&events, &c.call_id);
    }
    Ok(())
}

/// The decision the event at `spot` holds for `call_id`, or `None` when that line is
/// not (any longer) that event.
fn read_decision_at(f: &mut File, spot: LogSpot, call_id: &str) -> io::Result<Option<Value>> {
    use std::io::BufRead;
    f.seek(SeekFrom::Start(spot.offset))?;
    let mut line = Vec::new();
    io::BufReader::new(&mut *f).read_until(b'\n', &mut line)?;
    let Ok(ev) = serde_json::from_str::<Event>(&String::from_utf8_lossy(&line)) else {
        return Ok(None);
    };
    if ev.seq != spot.seq {
        return Ok(None);
    }
    Ok(match ev.kind {
        EventKind::PermissionRequested {
            call_id: c,
            decision,
        } if c == call_id => Some(decision),
        EventKind::ToolApproved {
            call_id: c,
            decisions,
            ..
        } if c == call_id => Some(decisions),
        _ => None,
    })
}

/// The decision of `call_id` as `Session::apply` folds the events: the last
/// `PermissionRequested` after its last `ToolRequested`, else its first `ToolApproved`.
fn decision_in(events: &[Event], call_id: &str) -> Option<Value> {
    let mut found: Option<&Value> = None;
    for ev in events {
        match &ev.kind {
            EventKind::ToolRequested { call_id: c, .. } if c == call_id => found = None,
            EventKind::PermissionRequested {
                call_id: c,
                decision,
            } if c == call_id => {
                found = Some(decision);
            }
            EventKind::ToolApproved {
                call_id: c,
                decisions,
                ..
            } if c == call_id && found.is_none() => found = Some(decisions),
            _ => {}
        }
    }
    found.cloned()
}

/// Whether the caller of a compaction already holds the session's file lock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogLock {
    /// The caller holds `<id>.lock` (`khaelor-perm hook`): taking it again would wait
    /// on ourselves.
    Held,
    /// Take it for the compaction (the server, whose slot lock only orders its own
    /// requests).
    Take,
}

/// Locks `<dir>/<id>.lock` exclusively (an advisory lock, released when the file is
/// dropped): the lock every writer of the log outside the server's memory takes.
pub fn lock_log(dir: &Path, id: &str) -> Result<File, SessionError> {
    if !valid_id(id) {
        return Err(SessionError::InvalidId(id.to_string()));
    }
    fs::create_dir_all(dir).map_err(|e| io_err("create", dir, e))?;
    let path = dir.join(format!("{id}.lock"));
    let f = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .map_err(|e| io_err("open", &path, e))?;
    f.lock().map_err(|e| io_err("lock", &path, e))?;
    Ok(f)
}

/// What a compaction did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CompactReport {
    pub events_before: usize,
    pub events_after: usize,
    pub calls_dropped: usize,
}

/// Replaces `path` with `bytes` so that a crash leaves either the old file or the new
/// one, whole: write a temp file in the same directory (`.<name>.tmp.compact`, which
/// the start-up sweep removes), flush and fsync it, rename it over `path`, fsync the
/// directory. A failure before the rename removes the temp file and leaves `path` as
/// it was.
pub fn replace_atomically(path: &Path, bytes: &[u8]) -> Result<(), SessionError> {
    let dir = path.parent().unwrap_or_else(|| Path::new("."));
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = dir.join(format!(".{name}.tmp.compact"));
    let written = (|| {
        let mut f = OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .open(&tmp)?;
        f.write_all(bytes)?;
        f.flush()?;
        f.sync_all()
    })();
    if let Err(e) = written {
        let _ = fs::remove_file(&tmp);
        return Err(io_err("write", &tmp, e));
    }
    if let Err(e) = fs::rename(&tmp, path) {
        let _ = fs::remove_file(&tmp);
        return Err(io_err("rename", &tmp, e));
    }
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(|e| io_err("sync", dir, e))
}

/// The append protocol, for `Session` and `SessionIndex`: `kinds` become events from
/// sequence number `next_seq`, serialized one per line (after a newline when the file
/// ends in a torn line) and written in one write at the end of the log, then flushed,
/// and with `Durability::Synced` synced (a new file's directory too). A failed write is
/// cut off again, so no half-written event is left for the next load to trip on.
pub(crate) fn blocking_write_events(
    path: &Path,
    next_seq: u64,
    needs_newline: bool,
    kinds: Vec<EventKind>,
    durability: Durability,
) -> Result<(Vec<Event>, Vec<u64>), SessionError> {
    let synced = durability == Durability::Synced;
    let at = now_rfc3339();
    let mut buf = Vec::new();
    if needs_newline {
        buf.push(b'\n');
    }
    let events: Vec<Event> = kinds
        .into_iter()
        .enumerate()
        .map(|(i, kind)| Event {
            seq: next_seq + i as u64,
            at: at.clone(),
            kind,
        })
        .collect();
    let mut offsets = Vec::with_capacity(events.len());
    for ev in &events {
        offsets.push(buf.len() as u64);
        serde_json::to_writer(&mut buf, ev)?;
        buf.push(b'\n');
    }
    if let Some(dir) = path.parent() {
        fs::create_dir_all(dir).map_err(|e| io_err("create", dir, e))?;
    }
    let created = !path.exists();
    let mut f = OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .map_err(|e| io_err("open", path, e))?;
    let start = f
        .seek(SeekFrom::End(0))
        .map_err(|e| io_err("seek", path, e))?;
    let written = f
        .write_all(&buf)
        .and_then(|()| f.flush())
        .and_then(|()| if synced { f.sync_data() } else { Ok(()) });
    if let Err(e) = written {
        let _ = f.set_len(start);
        return Err(io_err("write", path, e));
    }
    let offsets = offsets.into_iter().map(|o| start + o).collect();
    if synced
        && created
        && let Some(dir) = path.parent()
    {
        // A new file's directory entry must be durable too.
        File::open(dir)
            .and_then(|d| d.sync_all())
            .map_err(|e| io_err("sync", dir, e))?;
    }
    Ok((events, offsets))
}

/// What the per-call hook needs of a session, read without building its events: the
/// call ids (a reused id must not rewrite history), the session-only "always" rules with
/// the root they were granted on, and where the next event goes. A long session's log
/// holds every call's requests and panel; building them all on every hook call made a
/// call cost 76 ms after 1,000 calls (BENCHMARKS.md). Each line is read for these few
/// fields only, the rest skipped unparsed.
#[derive(Debug)]
pub struct SessionIndex {
    dir: PathBuf,
    id: String,
    path: PathBuf,
    folded: Folded,
    needs_newline: bool,
    /// Where this read of the log started: past the part a checkpoint folded, or 0.
    read_from: u64,
}

/// One log line, as much as `SessionIndex` reads of it.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct IndexLine {
    seq: u64,
    #[serde(rename = "type")]
    kind: String,
    #[serde(default)]
    call_id: Option<String>,
    #[serde(default)]
    project_root: Option<String>,
    #[serde(default)]
    scope: Option<GrantScope>,
    #[serde(default)]
    persisted_rules: Vec<PersistedRule>,
    #[serde(default)]
    persisted: bool,
}

impl SessionIndex {
    /// Reads the index of session `id` under `dir` (empty when there is no log). A line
    /// that does not read is skipped, as `Session::blocking_open` skips it. The part of
    /// the log a checkpoint already folded is not read again (`checkpoint`); a read
    /// that folds more than `checkpoint::REFRESH_BYTES` of new lines leaves a new one.
    pub fn blocking_open(dir: &Path, id: &str) -> Result<SessionIndex, SessionError> {
        if !valid_id(id) {
            return Err(SessionError::InvalidId(id.to_string()));
        }
        let mut ix = SessionIndex {
            dir: dir.to_path_buf(),
            id: id.to_string(),
            path: dir.join(format!("{id}.jsonl")),
            folded: Folded::default(),
            needs_newline: false,
            read_from: 0,
        };
        let mut log = match File::open(&ix.path) {
            Ok(f) => f,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(ix),
            Err(e) => return Err(io_err("open", &ix.path, e)),
        };
        let at = checkpoint::path(dir, id);
        if let Some((len, folded)) = checkpoint::load(&at, &log) {
            ix.folded = folded;
            ix.read_from = len;
        }
        let mut bytes = Vec::new();
        log.seek(SeekFrom::Start(ix.read_from))
            .and_then(|_| log.read_to_end(&mut bytes))
            .map_err(|e| io_err("read", &ix.path, e))?;
        ix.needs_newline = bytes.last().is_some_and(|b| *b != b'\n');
        for line in bytes.split(|b| *b == b'\n') {
            if line.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            let Ok(l) = serde_json::from_slice::<IndexLine>(line) else {
                continue;
            };
            // A grant widens what runs: it counts only where the full loader would read
            // it too (grants are rare, so this costs nothing).
            if l.kind == "PermissionGranted" && serde_json::from_slice::<Event>(line).is_err() {
                continue;
            }
            ix.apply(l);
        }
        // The lines read end at the last newline: a torn fragment after it is read
        // again next time, as it would be without a checkpoint.
        let whole = bytes.iter().rposition(|b| *b == b'\n').map_or(0, |i| i + 1) as u64;
        if whole > checkpoint::REFRESH_BYTES {
            checkpoint::store(&at, &log, ix.read_from + whole, &ix.folded);
        }
        Ok(ix)
    }

    fn apply(&mut self, l: IndexLine) {
        self.folded.events += 1;
        self.folded.next_seq = self.folded.next_seq.max(l.seq + 1);
        let Some(call_id) = l.call_id else { return };
        self.track_pending(&l.kind, &call_id);
        match l.kind.as_str() {
            "ToolRequested" => {
                self.folded
                    .calls
                    .insert(call_id, l.project_root.unwrap_or_default());
            }
            // As `Session::apply`: an "always" grant that did not reach the config
            // holds for this session, on the root of the call it was granted on.
            "PermissionGranted" if l.scope == Some(GrantScope::Always) && !l.persisted => {
                let root = self.folded.calls.get(&call_id).cloned();
                for r in l.persisted_rules {
                    let entry = (root.clone(), r);
                    if !self.folded.session_rules.contains(&entry) {
                        self.folded.session_rules.push(entry);
                    }
                }
            }
            _ => {}
        }
    }

    /// As `Session::blocking_make_room`, for a caller holding the log's file lock. A
    /// compaction (rare: once per budget's worth of events) loads the whole session,
    /// compacts it, and reads the index again.
    pub fn blocking_make_room(
        &mut self,
        max_events: usize,
        incoming: usize,
    ) -> Result<Option<CompactReport>, SessionError> {
        if self.folded.events + incoming <= max_events {
            return Ok(None);
        }
        let mut full = Session::blocking_open(&self.dir, &self.id)?;
        let report = full.blocking_make_room(max_events, incoming, LogLock::Held)?;
        *self = SessionIndex::blocking_open(&self.dir, &self.id)?;
        Ok(report)
    }

    /// Whether the log holds a call with this id.
    pub fn has_call(&self, call_id: &str) -> bool {
        self.folded.calls.contains_key(call_id)
    }

    fn track_pending(&mut self, kind: &str, call_id: &str) {
        match kind {
            "PermissionRequested" if !self.folded.pending.iter().any(|c| c == call_id) => {
                self.folded.pending.push(call_id.to_string());
            }
            "ToolApproved" | "PermissionDenied" | "ToolFailed" => {
                self.folded.pending.retain(|c| c != call_id);
            }
            _ => {}
        }
    }

    /// Whether the call's last event asked and nothing resolved it yet.
    pub fn is_pending(&self, call_id: &str) -> bool {
        self.folded.pending.iter().any(|c| c == call_id)
    }

    /// The calls still waiting for an answer, in log order.
    pub fn pending_calls(&self) -> &[String] {
        &self.folded.pending
    }

    /// As `Session::session_rules_for`.
    pub fn session_rules_for(&self, root: &Path) -> Vec<PersistedRule> {
        session_rules_on(&self.folded.session_rules, root)
    }

    /// Appends `kinds` as events (see `blocking_write_events`).
    pub fn blocking_append_with(
        &mut self,
        kinds: Vec<EventKind>,
        durability: Durability,
    ) -> Result<Vec<Event>, SessionError> {
        let (events, _) = blocking_write_events(
            &self.path,
            self.folded.next_seq,
            self.needs_newline,
            kinds,
            durability,
        )?;
        self.needs_newline = false;
        self.folded.next_seq += events.len() as u64;
        self.folded.events += events.len();
        for ev in &events {
            if let EventKind::ToolRequested {
                call_id,
                project_root,
                ..
            } = &ev.kind
            {
                self.folded
                    .calls
                    .insert(call_id.clone(), project_root.clone());
            }
            let kind = match &ev.kind {
                EventKind::PermissionRequested { .. } => "PermissionRequested",
                EventKind::ToolApproved { .. } => "ToolApproved",
                EventKind::PermissionDenied { .. } => "PermissionDenied",
                EventKind::ToolFailed { .. } => "ToolFailed",
                _ => "",
            };
            if let Some(id) = event_call_id(&ev.kind) {
                self.track_pending(kind, &id);
            }
        }
        Ok(events)
    }
}

/// The call an event is about, for the events that resolve a pending call.
fn event_call_id(kind: &EventKind) -> Option<String> {
    match kind {
        EventKind::PermissionRequested { call_id, .. }
        | EventKind::ToolApproved { call_id, .. }
        | EventKind::PermissionDenied { call_id, .. }
        | EventKind::ToolFailed { call_id, .. } => Some(call_id.clone()),
        _ => None,
    }
}

/// Session-only grants as the rules `decide` takes: the allows among them, sourced
/// `session` (the hook and the service read them the same way).
pub fn allow_rules(granted: &[PersistedRule]) -> Vec<crate::policy::rules::PermissionRule> {
    use crate::policy::rules::{Action, PermissionRule, RuleSource};
    granted
        .iter()
        .filter(|r| r.action == "allow")
        .map(|r| {
            PermissionRule::new(
                r.capability.clone(),
                r.pattern.clone(),
                Action::Allow,
                RuleSource::Session,
            )
        })
        .collect()
}

/// The rules of `rules` granted on a call whose root resolves to `root`.
fn session_rules_on(rules: &[(Option<String>, PersistedRule)], root: &Path) -> Vec<PersistedRule> {
    rules
        .iter()
        .filter(|(granted_on, _)| {
            granted_on
                .as_deref()
                .is_some_and(|g| crate::model::paths::resolve_existing_prefix(Path::new(g)) == root)
        })
        .map(|(_, r)| r.clone())
        .collect()
}

/// What the start-up sweep of the session directory did.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct SweepReport {
    /// Session logs removed for being older than the retention.
    pub expired: usize,
    /// Stray temp files removed.
    pub temp_files: usize,
}

/// Sweeps `dir` at start-up: removes session logs (and their index checkpoints) not
/// written for `retain` (when set) and temp files (`*.tmp`, `.*.tmp.*`) no running writer can own, since the
/// server that wrote them is gone. Anything else is left alone; failures are logged
/// and skipped.
pub fn blocking_sweep(dir: &Path, retain: Option<std::time::Duration>) -> SweepReport {
    let mut report = SweepReport::default();
    let Ok(entries) = fs::read_dir(dir) else {
        return report;
    };
    let now = SystemTime::now();
    for entry in entries.flatten() {
        let path = entry.path();
        let Some(name) = entry.file_name().to_str().map(String::from) else {
            continue;
        };
        let Ok(meta) = entry.metadata() else { continue };
        if !meta.is_file() {
            continue;
        }
        let temp = name.ends_with(".tmp") || (name.starts_with('.') && name.contains(".tmp."));
        // A log's index checkpoint ages with it (an expired one beside no log would
        // never be read again).
        let expired = (name.ends_with(".jsonl") || name.ends_with(".index"))
            && retain.is_some_and(|keep| {
                meta.modified()
                    .ok()
                    .and_then(|m| now.duration_since(m).ok())
                    .is_some_and(|age| age > keep)
            });
        if !(temp || expired) {
            continue;
        }
        match fs::remove_file(&path) {
            Ok(()) if temp => report.temp_files += 1,
            Ok(()) if name.ends_with(".index") => {}
            Ok(()) => report.expired += 1,
            Err(e) => tracing::warn!(file = %path.display(), error = %e, "could not remove"),
        }
    }
    report
}

fn io_err(action: &'static str, path: &Path, source: io::Error) -> SessionError {
    SessionError::Io {
        action,
        path: path.display().to_string(),
        source,
    }
}

/// The ids of the session logs in `dir` (none when it does not exist yet).
pub fn blocking_session_ids(dir: &Path) -> std::io::Result<Vec<String>> {
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e),
    };
    let mut ids = Vec::new();
    for entry in entries {
        let name = entry?.file_name();
        if let Some(id) = name.to_str().and_then(|n| n.strip_suffix(".jsonl"))
            && valid_id(id)
        {
            ids.push(id.to_string());
        }
    }
    ids.sort();
    Ok(ids)
}

/// The current time as RFC 3339 UTC with milliseconds, e.g. `2026-05-01T12:00:00.123Z`.
pub fn now_rfc3339() -> String {
    let d = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    rfc3339(d.as_secs(), d.subsec_millis())
}

fn rfc3339(secs: u64, millis: u32) -> String {
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    let (y, m, d) = civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{millis:03}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// Days since 1970-01-01 to (year, month, day), proleptic Gregorian (H. Hinnant's
/// algorithm), so no date crate is needed for a timestamp.
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The events of a session's log, read from disk as `/events` reads them.
    trait Events {
        fn events(&self) -> Vec<Event>;
    }

    impl Events for Session {
        fn events(&self) -> Vec<Event> {
            self.blocking_events().unwrap().0
        }
    }

    fn requested(call: &str, turn: Option<&str>) -> EventKind {
        EventKind::ToolRequested {
            call_id: call.into(),
            turn_id: turn.map(String::from),
            tool: "bash".into(),
            input: json!({"command": "npm test"}),
            project_root: "/p".into(),
            cwd: "/p".into(),
            home: "/h".into(),
            interactive: true,
            host: None,
            requests: json!([]),
            grant_back: false,
            search_path: None,
        }
    }

    #[test]
    fn ids() {
        assert!(valid_id("abc-DEF_123"));
        assert!(valid_id(&"a".repeat(128)));
        for bad in [
            "",
            "..",
            "a/b",
            "a.b",
            "a%2Fb",
            "a b",
            "é",
            &"a".repeat(129),
        ] {
            assert!(!valid_id(bad), "{bad:?}");
        }
        let dir = tempfile::tempdir().unwrap();
        assert!(matches!(
            Session::blocking_open(dir.path(), "../x"),
            Err(SessionError::InvalidId(_))
        ));
    }

    /// The hook's index reads what `Session` reads: call ids, session-only grants on
    /// their call's root, the next sequence number and a torn last line.
    #[test]
    fn the_index_agrees_with_the_full_session() {
        let dir = tempfile::tempdir().unwrap();
        let mut s = Session::blocking_open(dir.path(), "ix").unwrap();
        let grant: EventKind = serde_json::from_value(json!({
            "type": "PermissionGranted", "callId": "c1", "scope": "always",
            "persistedRules": [{"capability": "process.execute", "pattern": "npm test", "action": "allow"}],
            "persisted": false
        }))
        .unwrap();
        let persisted: EventKind = serde_json::from_value(json!({
            "type": "PermissionGranted", "callId": "c2", "scope": "always",
            "persistedRules": [{"capability": "process.execute", "pattern": "make", "action": "allow"}],
            "persisted": true
        }))
        .unwrap();
        s.blocking_append(vec![
            requested("c1", None),
            grant,
            requested("c2", None),
            persisted,
        ])
        .unwrap();
        let path = dir.path().join("ix.jsonl");
        let mut f = OpenOptions::new().append(true).open(&path).unwrap();
        f.write_all(b"{\"seq\":9,\"at\":\"x\",\"type\":\"Tool")
            .unwrap();
        drop(f);

        let full = Session::blocking_open(dir.path(), "ix").unwrap();
        let mut ix = SessionIndex::blocking_open(dir.path(), "ix").unwrap();
        for id in ["c1", "c2", "c3"] {
            assert_eq!(ix.has_call(id), full.call(id).is_some(), "{id}");
        }
        let root = Path::new("/p");
        assert_eq!(ix.session_rules_for(root), full.session_rules_for(root));
        assert_eq!(ix.session_rules_for(root).len(), 1);
        // The next append starts a new line after the fragment, numbered after the log.
        let evs = ix
            .blocking_append_with(vec![requested("c3", None)], Durability::Flushed)
            .unwrap();
        assert_eq!(evs.first().map(|e| e.seq), Some(5));
        assert!(ix.has_call("c3"));
        let again = Session::blocking_open(dir.path(), "ix").unwrap();
        assert!(again.call("c3").is_some());
    }

    /// A session long enough that opening its index leaves a checkpoint: `n` calls,
    /// each requested and approved, the first one granted "always" for the session.
    fn long_session(dir: &Path, id: &str, n: usize) {
        let mut s = Session::blocking_open(dir, id).unwrap();
        for i in 0..n {
            let call = format!("c{i}");
            let mut kinds = vec![requested(&call, None)];
            if i == 0 {
                kinds.push(
                    serde_json::from_value(json!({
                        "type": "PermissionGranted", "callId": call, "scope": "always",
                        "persistedRules": [{"capability": "process.execute", "pattern": "npm test", "action": "allow"}],
                        "persisted": false
                    }))
                    .unwrap(),
                );
            }
            kinds.push(EventKind::ToolApproved {
                call_id: call.clone(),
                by: ApprovedBy::Policy,
                decisions: json!([]),
                resolved_by: None,
                contained: None,
            });
            s.blocking_append(kinds).unwrap();
        }
    }

    /// The index as a read of the whole log gives it: the checkpoint set aside first.
    fn index_without_checkpoint(dir: &Path, id: &str) -> SessionIndex {
        let at = checkpoint::path(dir, id);
        let aside = dir.join("aside");
        let had = std::fs::rename(&at, &aside).is_ok();
        let ix = SessionIndex::blocking_open(dir, id).unwrap();
        assert_eq!(ix.read_from, 0);
        if had {
            std::fs::rename(&aside, &at).unwrap();
        }
        ix
    }

    /// A long session's index is read from its checkpoint and the lines after it, and
    /// folds what a read of the whole log folds: calls, grants, pending calls, the next
    /// number, a torn last line. Lines another writer appended count too.
    #[test]
    fn the_index_resumes_from_its_checkpoint() {
        let dir = tempfile::tempdir().unwrap();
        long_session(dir.path(), "lg", 80);
        let first = SessionIndex::blocking_open(dir.path(), "lg").unwrap();
        assert_eq!(first.read_from, 0, "no checkpoint yet");
        assert!(checkpoint::path(dir.path(), "lg").exists());

        let mut ix = SessionIndex::blocking_open(dir.path(), "lg").unwrap();
        assert!(ix.read_from > 0, "read from the checkpoint");
        ix.blocking_append_with(
            vec![
                requested("p1", None),
                EventKind::PermissionRequested {
                    call_id: "p1".into(),
                    decision: json!({"decision": "ask"}),
                },
            ],
            Durability::Flushed,
        )
        .unwrap();
        let mut other = Session::blocking_open(dir.path(), "lg").unwrap();
        other
            .blocking_append(vec![
                requested("c999", None),
                serde_json::from_value(json!({
                    "type": "PermissionGranted", "callId": "c999", "scope": "always",
                    "persistedRules": [{"capability": "process.execute", "pattern": "make", "action": "allow"}],
                    "persisted": false
                }))
                .unwrap(),
            ])
            .unwrap();
        let mut f = OpenOptions::new()
            .append(true)
            .open(dir.path().join("lg.jsonl"))
            .unwrap();
        f.write_all(b"{\"seq\":9999,\"at\":\"x\",\"type\":\"Tool")
            .unwrap();
        drop(f);

        let resumed = SessionIndex::blocking_open(dir.path(), "lg").unwrap();
        assert!(resumed.read_from > 0);
        let whole = index_without_checkpoint(dir.path(), "lg");
        assert_eq!(resumed.folded, whole.folded);
        assert!(resumed.needs_newline && whole.needs_newline);
        assert!(resumed.has_call("c0") && resumed.has_call("c999"));
        assert_eq!(resumed.pending_calls(), ["p1".to_string()]);
        assert_eq!(resumed.session_rules_for(Path::new("/p")).len(), 2);
        let full = Session::blocking_open(dir.path(), "lg").unwrap();
        assert_eq!(resumed.folded.events, full.event_count);
        assert_eq!(resumed.folded.next_seq, full.next_seq);
    }

    /// A checkpoint counts only for the log it was taken of, as it is: one of a log
    /// rewritten in place, replaced by a copy, cut shorter or compacted, and one that
    /// does not parse, are not read, and the whole log is.
    #[test]
    fn a_checkpoint_of_another_log_is_not_read() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("cp.jsonl");
        let at = checkpoint::path(dir.path(), "cp");
        long_session(dir.path(), "cp", 80);
        let taken = || {
            std::fs::remove_file(&at).ok();
            SessionIndex::blocking_open(dir.path(), "cp").unwrap();
            assert!(
                SessionIndex::blocking_open(dir.path(), "cp")
                    .unwrap()
                    .read_from
                    > 0
            );
        };

        // The same file, the same length, a byte changed in the last line it folded.
        taken();
        let mut bytes = std::fs::read(&log).unwrap();
        let at_byte = bytes.len() - 10;
        bytes[at_byte] = if bytes[at_byte] == b'1' { b'2' } else { b'1' };
        let f = OpenOptions::new().write(true).open(&log).unwrap();
        std::os::unix::fs::FileExt::write_all_at(&f, &bytes, 0).unwrap();
        drop(f);
        assert_eq!(
            SessionIndex::blocking_open(dir.path(), "cp")
                .unwrap()
                .read_from,
            0
        );

        // A copy of the log in its place (another inode), byte for byte.
        taken();
        let copy = dir.path().join("copy");
        std::fs::copy(&log, &copy).unwrap();
        std::fs::rename(&copy, &log).unwrap();
        assert_eq!(
            SessionIndex::blocking_open(dir.path(), "cp")
                .unwrap()
                .read_from,
            0
        );

        // Cut shorter than the checkpoint.
        taken();
        let f = OpenOptions::new().write(true).open(&log).unwrap();
        f.set_len(100).unwrap();
        drop(f);
        let cut = SessionIndex::blocking_open(dir.path(), "cp").unwrap();
        assert_eq!(cut.read_from, 0);
        assert_eq!(cut.folded.events, 0, "the one line left is torn");

        // Compacted: the checkpoint goes with the old file.
        long_session(dir.path(), "cp", 80);
        taken();
        let mut s = Session::blocking_open(dir.path(), "cp").unwrap();
        s.blocking_compact(LogLock::Take).unwrap();
        assert!(!at.exists());

        // Not a checkpoint at all.
        long_session(dir.path(), "cp", 80);
        taken();
        std::fs::write(&at, b"{\"version\":1,").unwrap();
        let ix = SessionIndex::blocking_open(dir.path(), "cp").unwrap();
        assert_eq!(ix.read_from, 0);
        assert_eq!(ix.folded, index_without_checkpoint(dir.path(), "cp").folded);
    }

    /// The hook's index compacts through the full session when a call would take the
    /// log over the budget, and keeps counting after it.
    #[test]
    fn the_index_makes_room_by_compacting() {
        let dir = tempfile::tempdir().unwrap();
        let mut s = Session::blocking_open(dir.path(), "cx").unwrap();
        for i in 0..5 {
            let id = format!("c{i}");
            s.blocking_append(vec![
                requested(&id, None),
                EventKind::ToolApproved {
                    call_id: id.clone(),
                    by: ApprovedBy::Policy,
                    decisions: json!([]),
                    resolved_by: None,
                    contained: None,
                },
            ])
            .unwrap();
        }
        let _lock = lock_log(dir.path(), "cx").unwrap();
        let mut ix = SessionIndex::blocking_open(dir.path(), "cx").unwrap();
        assert_eq!(ix.blocking_make_room(100, 2).unwrap(), None);
        let report = ix.blocking_make_room(8, 2).unwrap();
        assert!(
            report.is_some(),
            "10 events + 2 over a budget of 8 compacts"
        );
        assert!(
            ix.folded.events + 2 <= 8,
            "{} events left",
            ix.folded.events
        );
        // Finished calls are forgotten; the next append is numbered after the log.
        assert!(!ix.has_call("c0"));
        let evs = ix
            .blocking_append_with(vec![requested("c9", None)], Durability::Flushed)
            .unwrap();
        let again = Session::blocking_open(dir.path(), "cx").unwrap();
        assert!(again.call("c9").is_some());
        assert!(evs.first().is_some_and(|e| e.seq > 10));
    }

    /// A resident session keeps where its calls' decisions are, not the decisions: they
    /// are read from the log, from the remembered line while it holds them and from a
    /// full read once another writer has rewritten the log (a compaction moves every
    /// line), and a torn line before them changes nothing.
    #[test]
    fn decisions_are_read_from_the_log_wherever_it_moved_them() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("d.jsonl");
        std::fs::write(&path, b"{\"seq\":1,\"at\":\"x\",\"ty").unwrap();
        let mut s = Session::blocking_open(dir.path(), "d").unwrap();
        let decision = json!({"decision": "ask", "summary": "npm test"});
        s.blocking_append(vec![
            requested("done", None),
            EventKind::ToolApproved {
                call_id: "done".into(),
                by: ApprovedBy::Policy,
                decisions: json!([{"decision": "allow"}]),
                resolved_by: None,
                contained: None,
            },
            requested("p", None),
            EventKind::PermissionRequested {
                call_id: "p".into(),
                decision: decision.clone(),
            },
        ])
        .unwrap();
        let mut calls: Vec<CallRecord> = s.calls().cloned().collect();
        assert!(
            calls
                .iter()
                .all(|c| c.decision.is_none() && c.decision_at.is_some())
        );
        blocking_read_decisions(&path, &mut calls).unwrap();
        assert_eq!(calls[0].decision, Some(json!([{"decision": "allow"}])));
        assert_eq!(calls[1].decision, Some(decision.clone()));
        // Another writer compacts: `done` goes, `p`'s lines move up.
        let mut other = Session::blocking_open(dir.path(), "d").unwrap();
        other.blocking_compact(LogLock::Take).unwrap();
        let mut stale: Vec<CallRecord> = s.pending().cloned().collect();
        assert_eq!(stale.len(), 1);
        blocking_read_decisions(&path, &mut stale).unwrap();
        assert_eq!(stale[0].decision, Some(decision));
        // The resident copy holds the input once and no decision.
        assert!(s.resident_bytes() < 4096, "{}", s.resident_bytes());
    }

    #[test]
    fn timestamps() {
        assert_eq!(rfc3339(0, 0), "1970-01-01T00:00:00.000Z");
        assert_eq!(rfc3339(951_782_400 + 86_399, 5), "2000-02-29T23:59:59.005Z");
        assert_eq!(rfc3339(1_777_593_600, 123), "2026-05-01T00:00:00.123Z");
    }

    #[test]
    fn pending_survives_reopen_and_torn_line_is_skipped() {
        let dir = tempfile::tempdir().unwrap();
        let mut s = Session::blocking_open(dir.path(), "s1").unwrap();
        assert!(!s.exists());
        s.blocking_append(vec![
            requested("c1", Some("t")),
            EventKind::PermissionRequested {
                call_id: "c1".into(),
                decision: json!({"decision": "ask"}),
            },
        ])
        .unwrap();
        s.blocking_append(vec![
            requested("c2", None),
            EventKind::ToolApproved {
                call_id: "c2".into(),
                by: ApprovedBy::Policy,
                decisions: json!([]),
                resolved_by: None,
                contained: None,
            },
        ])
        .unwrap();
        // A crash mid-write leaves a fragment without newline.
        let path = dir.path().join("s1.jsonl");
        let mut f = OpenOptions::new().append(true).open(&path).unwrap();
        f.write_all(b"{\"seq\":5,\"at\":\"x\",\"type\":\"Tool")
            .unwrap();
        drop(f);

        let mut s = Session::blocking_open(dir.path(), "s1").unwrap();
        assert_eq!(s.events().len(), 4);
        assert_eq!(s.warnings().len(), 1);
        assert!(
            s.warnings()[0].contains(":5: torn last line skipped"),
            "{:?}",
            s.warnings()
        );
        let pending: Vec<_> = s.pending().map(|c| c.call_id.clone()).collect();
        assert_eq!(pending, ["c1"]);
        assert_eq!(s.call("c2").unwrap().status, CallStatus::Approved);

        // The next append starts on a fresh line; the fragment stays as a reported line.
        s.blocking_append(vec![EventKind::PermissionDenied {
            call_id: "c1".into(),
            by: DeniedBy::User,
            decisions: None,
            feedback: Some("no".into()),
            denied_with: None,
        }])
        .unwrap();
        let s = Session::blocking_open(dir.path(), "s1").unwrap();
        assert_eq!(s.events().len(), 5);
        assert_eq!(s.events()[4].seq, 5);
        assert_eq!(s.warnings().len(), 1);
        assert!(s.warnings()[0].contains("corrupt line"));
        assert_eq!(s.pending().count(), 0);
    }

    fn rule(pattern: &str) -> PersistedRule {
        PersistedRule {
            capability: "process.execute".into(),
            pattern: pattern.into(),
            action: "allow".into(),
        }
    }

    fn requested_in(call: &str, root: &Path) -> EventKind {
        let mut kind = requested(call, Some("t"));
        if let EventKind::ToolRequested { project_root, .. } = &mut kind {
            *project_root = root.display().to_string();
        }
        kind
    }

    fn ask(call: &str) -> EventKind {
        EventKind::PermissionRequested {
            call_id: call.into(),
            decision: json!({"decision": "ask"}),
        }
    }

    fn approved(call: &str) -> EventKind {
        EventKind::ToolApproved {
            call_id: call.into(),
            by: ApprovedBy::Policy,
            decisions: json!([]),
            resolved_by: None,
            contained: None,
        }
    }

    /// A session with every kind of call: approved, denied, pending, stuck, and one
    /// whose unpersisted "always" grant is a session rule for `root`.
    fn mixed_session(dir: &Path, root: &Path) -> Session {
        let mut s = Session::blocking_open(dir, "s").unwrap();
        for i in 0..5 {
            let id = format!("done{i}");
            s.blocking_append(vec![requested_in(&id, root), approved(&id)])
                .unwrap();
        }
        s.blocking_append(vec![
            requested_in("denied", root),
            EventKind::PermissionDenied {
                call_id: "denied".into(),
                by: DeniedBy::Policy,
                decisions: None,
                feedback: None,
                denied_with: None,
            },
            EventKind::ToolFailed {
                call_id: "denied".into(),
                message: "no".into(),
            },
        ])
        .unwrap();
        s.blocking_append(vec![requested_in("pend", root), ask("pend")])
            .unwrap();
        s.blocking_append(vec![requested_in("stuck", root)])
            .unwrap();
        s.blocking_append(vec![
            requested_in("granted", root),
            ask("granted"),
            EventKind::PermissionGranted {
                call_id: "granted".into(),
                scope: GrantScope::Always,
                pattern: Some("npm test".into()),
                persisted_rules: vec![rule("npm test")],
                persisted: false,
                handed_to_hook: false,
                config_file: None,
                persist_error: Some("malformed".into()),
            },
            approved("granted"),
        ])
        .unwrap();
        s
    }

    /// What must survive a compaction and a crash: pending calls, stuck calls, and the
    /// session rules with the project they apply to.
    fn assert_state_kept(s: &Session, root: &Path) {
        let pending: Vec<_> = s.pending().map(|c| c.call_id.clone()).collect();
        assert_eq!(pending, ["pend"]);
        assert_eq!(s.call("pend").unwrap().turn_id.as_deref(), Some("t"));
        assert_eq!(s.call("stuck").unwrap().status, CallStatus::Requested);
        assert_eq!(s.session_rules_for(root), [rule("npm test")]);
    }

    #[test]
    fn compaction_keeps_pending_calls_and_session_grants() {
        let dir = tempfile::tempdir().unwrap();
        let root = tempfile::tempdir().unwrap();
        let root = fs::canonicalize(root.path()).unwrap();
        let mut s = mixed_session(dir.path(), &root);
        let before = s.events().len();
        let last_seq = s.events().last().unwrap().seq;
        let report = s.blocking_compact(LogLock::Take).unwrap();
        assert_eq!(report.events_before, before);
        assert_eq!(report.calls_dropped, 6, "{report:?}");
        // pend (2) + stuck (1) + granted (4) + the marker.
        assert_eq!(s.events().len(), 8);
        assert_eq!(report.events_after, 8);
        assert_state_kept(&s, &root);
        assert!(s.call("done0").is_none() && s.call("denied").is_none());
        // Sequence numbers never repeat: the marker takes the next one.
        let marker = s.events().last().cloned().unwrap();
        assert_eq!(marker.seq, last_seq + 1);
        assert_eq!(
            marker.kind,
            EventKind::Compacted {
                removed_events: 13,
                removed_calls: 6
            }
        );
        // The log on disk says the same after a restart, with no warning.
        let mut s = Session::blocking_open(dir.path(), "s").unwrap();
        assert_state_kept(&s, &root);
        assert_eq!(s.events().len(), 8);
        // One warning: the stuck call, as before compaction.
        assert_eq!(s.warnings().len(), 1, "{:?}", s.warnings());
        let ev = s.blocking_append(vec![approved("pend")]).unwrap();
        assert_eq!(ev[0].seq, last_seq + 2);
        // A second compaction adds up the counts and drops the old marker.
        s.blocking_compact(LogLock::Take).unwrap();
        assert_eq!(
            s.events().last().unwrap().kind,
            EventKind::Compacted {
                // pend's three events join the thirteen of the first compaction.
                removed_events: 16,
                removed_calls: 7
            }
        );
        assert_eq!(
            s.events()
                .iter()
                .filter(|e| matches!(e.kind, EventKind::Compacted { .. }))
                .count(),
            1
        );
        assert_eq!(s.pending().count(), 0);
        assert_eq!(s.session_rules_for(&root), [rule("npm test")]);
    }

    /// A kill at any point of a compaction loses nothing. Its only change to the log is
    /// one rename of a complete, synced file: before it the old log is untouched
    /// whatever the temp file holds (cut at any byte, as a kill mid-write leaves it),
    /// after it the new log is whole. The temp file left behind is swept at start-up.
    #[test]
    fn a_kill_during_compaction_loses_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let root = tempfile::tempdir().unwrap();
        let root = fs::canonicalize(root.path()).unwrap();
        let s = mixed_session(dir.path(), &root);
        let log = dir.path().join("s.jsonl");
        let old = fs::read(&log).unwrap();
        // The bytes the compaction writes, computed in a scratch copy.
        let scratch = tempfile::tempdir().unwrap();
        fs::write(scratch.path().join("s.jsonl"), &old).unwrap();
        let mut copy = Session::blocking_open(scratch.path(), "s").unwrap();
        copy.blocking_compact(LogLock::Take).unwrap();
        let new = fs::read(scratch.path().join("s.jsonl")).unwrap();
        assert!(new.len() < old.len());
        let tmp = dir.path().join(".s.jsonl.tmp.compact");
        let cuts: Vec<usize> = (0..=20).map(|i| new.len() * i / 20).collect();
        for cut in cuts {
            // Killed while writing the temp file (or before renaming it).
            fs::write(&tmp, &new[..cut]).unwrap();
            assert_eq!(fs::read(&log).unwrap(), old, "the log is untouched");
            let reopened = Session::blocking_open(dir.path(), "s").unwrap();
            assert_state_kept(&reopened, &root);
            assert_eq!(reopened.events().len(), s.events().len());
            let swept = blocking_sweep(dir.path(), None);
            assert_eq!(
                swept.temp_files, 1,
                "the start-up sweep removes the temp file"
            );
            assert!(!tmp.exists());
        }
        // Killed after the rename: the new log, whole.
        fs::write(&tmp, &new).unwrap();
        fs::rename(&tmp, &log).unwrap();
        let reopened = Session::blocking_open(dir.path(), "s").unwrap();
        assert_state_kept(&reopened, &root);
        assert_eq!(reopened.events().len(), 8);
        // And the real protocol leaves no temp file behind.
        let mut s = Session::blocking_open(dir.path(), "s").unwrap();
        s.blocking_compact(LogLock::Take).unwrap();
        assert_eq!(blocking_sweep(dir.path(), None).temp_files, 0);
    }

    /// The server's copy of a session can miss events another writer (the hook
    /// command) appended to the log: compaction works from the log on disk, under the
    /// file lock, so those events survive it.
    #[test]
    fn compaction_keeps_what_another_writer_appended() {
        let dir = tempfile::tempdir().unwrap();
        let root = tempfile::tempdir().unwrap();
        let root = fs::canonicalize(root.path()).unwrap();
        let mut server = mixed_session(dir.path(), &root);
        let mut hook = Session::blocking_open(dir.path(), "s").unwrap();
        {
            let _lock = lock_log(dir.path(), "s").unwrap();
            hook.blocking_append(vec![requested_in("hook", &root), ask("hook")])
                .unwrap();
        }
        server.blocking_compact(LogLock::Take).unwrap();
        for s in [&server, &Session::blocking_open(dir.path(), "s").unwrap()] {
            let pending: Vec<_> = s.pending().map(|c| c.call_id.clone()).collect();
            assert_eq!(pending, ["pend", "hook"]);
            assert_eq!(s.session_rules_for(&root), [rule("npm test")]);
            let seqs: Vec<u64> = s.events().iter().map(|e| e.seq).collect();
            assert!(seqs.windows(2).all(|w| w[0] < w[1]), "{seqs:?}");
        }
    }

    /// A failed compaction (here: the temp file cannot be created) leaves the log and
    /// the session in memory as they were.
    #[test]
    fn a_failed_compaction_changes_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let root = tempfile::tempdir().unwrap();
        let root = fs::canonicalize(root.path()).unwrap();
        let mut s = mixed_session(dir.path(), &root);
        let old = fs::read(dir.path().join("s.jsonl")).unwrap();
        let n = s.events().len();
        // A directory where the temp file would go.
        fs::create_dir(dir.path().join(".s.jsonl.tmp.compact")).unwrap();
        assert!(s.blocking_compact(LogLock::Take).is_err());
        assert_eq!(fs::read(dir.path().join("s.jsonl")).unwrap(), old);
        assert_eq!(s.events().len(), n);
        assert_state_kept(&s, &root);
    }

    #[test]
    fn the_event_budget_compacts_then_refuses() {
        let dir = tempfile::tempdir().unwrap();
        let mut s = Session::blocking_open(dir.path(), "b").unwrap();
        // Finished calls: room is made by compaction, silently.
        for i in 0..20 {
            let id = format!("c{i}");
            s.blocking_make_room(16, 2, LogLock::Take).unwrap();
            s.blocking_append(vec![requested(&id, None), approved(&id)])
                .unwrap();
            assert!(s.events().len() <= 16, "{}", s.events().len());
        }
        // Pending calls are state: once they fill the budget, new calls are refused and
        // nothing is written.
        let mut refused = None;
        for i in 0..20 {
            let id = format!("p{i}");
            match s.blocking_make_room(16, 2, LogLock::Take) {
                Ok(_) => {
                    s.blocking_append(vec![requested(&id, None), ask(&id)])
                        .unwrap();
                }
                Err(e) => {
                    refused = Some((i, e));
                    break;
                }
            }
        }
        let (i, e) = refused.expect("the budget was never hit");
        assert!(
            matches!(e, SessionError::Budget { max_events: 16, .. }),
            "{e}"
        );
        assert!(e.to_string().contains("budget of 16 events"), "{e}");
        assert_eq!(s.pending().count(), i);
        let on_disk = Session::blocking_open(dir.path(), "b").unwrap();
        assert_eq!(on_disk.pending().count(), i);
        assert!(on_disk.events().len() <= 16);
    }

    #[test]
    fn unpersisted_always_grants_become_session_rules() {
        let dir = tempfile::tempdir().unwrap();
        let mut s = Session::blocking_open(dir.path(), "s").unwrap();
        let rule = PersistedRule {
            capability: "process.execute".into(),
            pattern: "npm test".into(),
            action: "allow".into(),
        };
        s.blocking_append(vec![EventKind::PermissionGranted {
            call_id: "c".into(),
            scope: GrantScope::Always,
            pattern: Some("npm test".into()),
            persisted_rules: vec![rule.clone()],
            persisted: false,
            handed_to_hook: false,
            config_file: None,
            persist_error: Some("bad".into()),
        }])
        .unwrap();
        let s = Session::blocking_open(dir.path(), "s").unwrap();
        assert_eq!(s.session_rules(), [rule]);
    }
}
