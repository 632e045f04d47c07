//! The audit trail: every decision, answer and grant of the session logs as one flat
//! record (who, where, what was called, what was decided, by which rule), for the
//! team's log shipper (`--audit-log`) and for `GET /v1/audit`.
//!
//! Owns the record's shape, the filters and the paging over a state directory's logs,
//! and the JSON-lines sink. It reads events the session layer wrote and writes nothing
//! back: deciding stays `policy::decide`'s, the log stays `session`'s.
//!
//! A record names the machine and the user of the process that decided
//! (`Origin::current`): the decider runs beside the agent, so that is where the call
//! was made. Over the file store the query reads what the logs still hold; a log's
//! compaction drops finished calls, so a durable trail is the sink's file (or a store
//! that keeps every event).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{CallRecord, Event, EventKind, GrantScope, Session};
use crate::policy::rules::Action;

/// Why the trail could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum AuditError {
    /// A record sent to be stored that cannot be filed (the request's fault).
    #[error("{0}")]
    Bad(String),
    /// The store (the state directory, or PostgreSQL) failed.
    #[error("{0}")]
    Store(String),
}

/// Records a page holds when the query names no limit, and the most it may name.
pub const DEFAULT_PAGE: usize = 100;
pub const MAX_PAGE: usize = 1000;

/// The user and machine a decision was made on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Origin {
    pub user: String,
    pub machine: String,
}

impl Origin {
    /// This process's user (`$USER`, else `$LOGNAME`, else `uid:N` from
    /// `/proc/self/status`) and machine (the kernel's host name), read once.
    pub fn current() -> &'static Origin {
        static ORIGIN: OnceLock<Origin> = OnceLock::new();
        ORIGIN.get_or_init(|| Origin {
            user: current_user(),
            machine: current_machine(),
        })
    }
}

fn current_user() -> String {
    for var in ["USER", "LOGNAME"] {
        if let Some(v) = std::env::var(var).ok().filter(|v| !v.trim().is_empty()) {
            return v;
        }
    }
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("Uid:"))
                .and_then(|rest| {
                    rest.split_whitespace()
                        .next()
                        .map(|uid| format!("uid:{uid}"))
                })
        })
        .unwrap_or_else(|| "unknown".to_string())
}

fn current_machine() -> String {
    ["/proc/sys/kernel/hostname", "/etc/hostname"]
        .iter()
        .find_map(|p| {
            std::fs::read_to_string(p)
                .ok()
                .map(|s| s.trim().to_string())
                .filter(|s| !s.is_empty())
        })
        .unwrap_or_else(|| "unknown".to_string())
}

/// Which event a record stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub enum AuditEvent {
    ToolRequested,
    PermissionRequested,
    ToolApproved,
    PermissionGranted,
    PermissionDenied,
    ToolFailed,
}

/// One capability request of a decision, with the rule that decided it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct AuditRequest {
    pub capability: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subject: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<crate::model::schema::ActionSchema>)]
    pub decision: Option<Action>,
    /// The matched rule as `capability pattern` (`None`: no rule matched).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rule: Option<String>,
    /// The matched rule's layer (`default`, `user`, `managed`, `host`, …) and, where it
    /// has one, its name or file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
}

/// One event of a session as the audit shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct AuditRecord {
    /// RFC 3339 UTC, millisecond precision (the event's own time).
    pub at: String,
    pub session_id: String,
    #[serde(deserialize_with = "whole_number")]
    pub seq: u64,
    pub event: AuditEvent,
    pub call_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub machine: Option<String>,
    /// The call's project root.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub project: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    /// What the event decided: `ask` for a call waiting for a person, `allow` or
    /// `contain` for an approval, `allow` for a grant, `deny` for a denial.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<crate::model::schema::ActionSchema>)]
    pub decision: Option<Action>,
    /// Who approved or denied (`policy`, `user`, `autoResolve`, `contained`, `host`,
    /// `turn`, `timeout`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub by: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<GrantScope>,
    /// The pattern an "always" grant wrote.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pattern: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub requests: Vec<AuditRequest>,
    /// A denial's feedback, or the model-facing message of a failed call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

/// A sequence number as JSON may write it: an integer, or a number with no fraction
/// (JSON does not tell `3` from `3.0`, and a sender's encoder may write either).
fn whole_number<'de, D: serde::Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
    let n = serde_json::Number::deserialize(d)?;
    if let Some(u) = n.as_u64() {
        return Ok(u);
    }
    match n.as_f64() {
        // Whole and within the range where every integer is exact in a double.
        Some(f) if f.fract() == 0.0 && (0.0..=9_007_199_254_740_992.0).contains(&f) => Ok(f as u64),
        _ => Err(serde::de::Error::custom(format!(
            "`{n}` is not a whole number"
        ))),
    }
}

/// What a record names about its call, when the event itself does not carry it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CallContext {
    pub host: Option<String>,
    pub project: Option<String>,
    pub tool: Option<String>,
}

impl CallContext {
    pub fn of(call: &CallRecord) -> CallContext {
        CallContext {
            host: call.host.clone(),
            project: Some(call.project_root.clone()),
            tool: Some(call.tool.clone()),
        }
    }
}

/// The records of `events` of session `session_id`, in order. A call's context comes
/// from its `ToolRequested` among `events`, else from `known` (the session's state,
/// or what the caller knows), else stays empty. `origin` is the decider's.
pub fn records(
    session_id: &str,
    events: &[Event],
    origin: Option<&Origin>,
    mut known: impl FnMut(&str) -> Option<CallContext>,
) -> Vec<AuditRecord> {
    let mut seen: Vec<(String, CallContext)> = Vec::new();
    let mut out = Vec::with_capacity(events.len());
    for ev in events {
        if let Some(ctx) = requested_context(&ev.kind) {
            seen.push((ev.kind.call_id().to_string(), ctx));
        }
        let call_id = ev.kind.call_id();
        let ctx = seen
            .iter()
            .rev()
            .find(|(id, _)| id == call_id)
            .map(|(_, c)| c.clone())
            .or_else(|| known(call_id))
            .unwrap_or_default();
        if let Some(r) = record(session_id, ev, ctx, origin) {
            out.push(r);
        }
    }
    out
}

/// The context a call's `ToolRequested` names (`None` for any other event).
pub(crate) fn requested_context(kind: &EventKind) -> Option<CallContext> {
    match kind {
        EventKind::ToolRequested {
            tool,
            project_root,
            host,
            ..
        } => Some(CallContext {
            host: host.clone(),
            project: Some(project_root.clone()),
            tool: Some(tool.clone()),
        }),
        _ => None,
    }
}

/// The record of one event (`None` for a compaction marker, which is no decision).
pub(crate) fn record(
    session_id: &str,
    ev: &Event,
    ctx: CallContext,
    origin: Option<&Origin>,
) -> Option<AuditRecord> {
    let mut r = AuditRecord {
        at: ev.at.clone(),
        session_id: session_id.to_string(),
        seq: ev.seq,
        event: AuditEvent::ToolRequested,
        call_id: ev.kind.call_id().to_string(),
        host: ctx.host,
        user: origin.map(|o| o.user.clone()),
        machine: origin.map(|o| o.machine.clone()),
        project: ctx.project,
        tool: ctx.tool,
        decision: None,
        by: None,
        scope: None,
        pattern: None,
        requests: Vec::new(),
        message: None,
    };
    match &ev.kind {
        EventKind::ToolRequested { requests, .. } => {
            r.requests = audit_requests(requests);
        }
        EventKind::PermissionRequested { decision, .. } => {
            r.event = AuditEvent::PermissionRequested;
            r.decision = decision
                .get("decision")
                .and_then(|d| serde_json::from_value(d.clone()).ok())
                .or(Some(Action::Ask));
            r.requests = decision
                .get("requests")
                .map(audit_requests)
                .unwrap_or_default();
        }
        EventKind::ToolApproved { by, decisions, .. } => {
            r.event = AuditEvent::ToolApproved;
            r.decision = Some(if matches!(by, super::ApprovedBy::Contained) {
                Action::Contain
            } else {
                Action::Allow
            });
            r.by = Some(enum_name(by));
            r.requests = audit_requests(decisions);
        }
        EventKind::PermissionGranted { scope, pattern, .. } => {
            r.event = AuditEvent::PermissionGranted;
            r.decision = Some(Action::Allow);
            r.by = Some("user".to_string());
            r.scope = Some(*scope);
            r.pattern = pattern.clone();
        }
        EventKind::PermissionDenied {
            by,
            decisions,
            feedback,
            ..
        } => {
            r.event = AuditEvent::PermissionDenied;
            r.decision = Some(Action::Deny);
            r.by = Some(enum_name(by));
            r.requests = decisions.as_ref().map(audit_requests).unwrap_or_default();
            r.message = feedback.clone();
        }
        EventKind::ToolFailed { message, .. } => {
            r.event = AuditEvent::ToolFailed;
            r.message = Some(message.clone());
        }
        EventKind::Compacted { .. } => return None,
    }
    Some(r)
}

/// The camelCase name serde gives a unit variant.
fn enum_name(v: &impl Serialize) -> String {
    match serde_json::to_value(v) {
        Ok(Value::String(s)) => s,
        _ => "unknown".to_string(),
    }
}

/// The requests of a stored `requests`/`decisions` array (capability requests, or
/// evaluated ones with their decision and rule). What is not an array of objects
/// gives nothing.
fn audit_requests(v: &Value) -> Vec<AuditRequest> {
    let Some(items) = v.as_array() else {
        return Vec::new();
    };
    items
        .iter()
        .filter_map(|item| {
            let capability = item.get("capability")?.as_str()?.to_string();
            let text = |key: &str| item.get(key).and_then(Value::as_str).map(str::to_string);
            let rule = item.get("rule").filter(|r| r.is_object());
            Some(AuditRequest {
                capability,
                subject: text("subject"),
                decision: item
                    .get("decision")
                    .and_then(|d| serde_json::from_value(d.clone()).ok()),
                rule: rule.map(|r| {
                    let field = |k: &str| r.get(k).and_then(Value::as_str).unwrap_or("*");
                    format!("{} {}", field("capability"), field("pattern"))
                }),
                source: rule.and_then(|r| {
                    let layer = r.get("source").and_then(Value::as_str)?;
                    let name = r.get("name").and_then(Value::as_str);
                    Some(match name {
                        Some(n) => format!("{layer}: {n}"),
                        None => layer.to_string(),
                    })
                }),
            })
        })
        .collect()
}

/// What a query keeps. Every field left out keeps everything.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct AuditFilter {
    /// At or after this time (normalised RFC 3339, see `parse_time`).
    pub since: Option<String>,
    /// Before this time.
    pub until: Option<String>,
    pub session: Option<String>,
    pub decision: Option<Action>,
    /// A capability (`process.execute`) or a family (`file.read` keeps
    /// `file.read.secret` too): a record with a request of it.
    pub capability: Option<String>,
    pub host: Option<String>,
    pub machine: Option<String>,
    pub event: Option<AuditEvent>,
}

impl AuditFilter {
    pub fn keeps(&self, r: &AuditRecord) -> bool {
        self.since.as_deref().is_none_or(|s| r.at.as_str() >= s)
            && self.until.as_deref().is_none_or(|u| r.at.as_str() < u)
            && self.session.as_deref().is_none_or(|s| r.session_id == s)
            && self.decision.is_none_or(|d| r.decision == Some(d))
            && self
                .host
                .as_deref()
                .is_none_or(|h| r.host.as_deref() == Some(h))
            && self
                .machine
                .as_deref()
                .is_none_or(|m| r.machine.as_deref() == Some(m))
            && self.event.is_none_or(|e| r.event == e)
            && self.capability.as_deref().is_none_or(|c| {
                r.requests.iter().any(|q| {
                    q.capability == c
                        || q.capability
                            .strip_prefix(c)
                            .is_some_and(|rest| rest.starts_with('.'))
                })
            })
    }
}

/// A time bound as the records write theirs (`2026-12-05T19:30:00.000Z`), from RFC
/// 3339 UTC with or without milliseconds, or a date alone (its midnight UTC). Anything
/// else (another zone offset among them) is an error naming the accepted forms.
pub fn parse_time(s: &str) -> Result<String, String> {
    let bad = || {
        format!(
            "`{s}` is not a time: use RFC 3339 in UTC (`2026-12-05T19:30:00Z`, milliseconds optional) or a date (`2026-12-05`)"
        )
    };
    let digits = |part: &str, n: usize| part.len() == n && part.bytes().all(|b| b.is_ascii_digit());
    let (date, time) = match s.split_once('T') {
        Some((d, t)) => (d, Some(t)),
        None => (s, None),
    };
    let date_ok = date.len() == 10
        && digits(&date[0..4], 4)
        && &date[4..5] == "-"
        && digits(&date[5..7], 2)
        && &date[7..8] == "-"
        && digits(&date[8..10], 2);
    if !date_ok || !date.is_ascii() {
        return Err(bad());
    }
    let Some(time) = time else {
        return Ok(format!("{date}T00:00:00.000Z"));
    };
    let time = time.strip_suffix('Z').ok_or_else(bad)?;
    let (hms, millis) = match time.split_once('.') {
        Some((hms, ms)) if digits(ms, 3) => (hms, ms),
        Some(_) => return Err(bad()),
        None => (time, "000"),
    };
    let hms_ok = hms.len() == 8
        && hms.is_ascii()
        && digits(&hms[0..2], 2)
        && &hms[2..3] == ":"
        && digits(&hms[3..5], 2)
        && &hms[5..6] == ":"
        && digits(&hms[6..8], 2);
    if !hms_ok {
        return Err(bad());
    }
    Ok(format!("{date}T{hms}.{millis}Z"))
}

/// Where a page ends: the last record's time, session, sequence number and machine.
/// The records are ordered by exactly these, so the next page starts after it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cursor {
    pub at: String,
    pub session: String,
    pub seq: u64,
    pub machine: String,
}

impl Cursor {
    pub fn of(r: &AuditRecord) -> Cursor {
        Cursor {
            at: r.at.clone(),
            session: r.session_id.clone(),
            seq: r.seq,
            machine: r.machine.clone().unwrap_or_default(),
        }
    }

    /// `AT~SESSION~SEQ~MACHINE` (none of the four contains `~`).
    pub fn encode(&self) -> String {
        format!("{}~{}~{}~{}", self.at, self.session, self.seq, self.machine)
    }

    pub fn decode(s: &str) -> Result<Cursor, String> {
        let bad = || format!("`{s}` is not a cursor this service returned");
        let mut parts = s.split('~');
        let (Some(at), Some(session), Some(seq), Some(machine), None) = (
            parts.next(),
            parts.next(),
            parts.next(),
            parts.next(),
            parts.next(),
        ) else {
            return Err(bad());
        };
        let at = parse_time(at).map_err(|_| bad())?;
        if !super::valid_id(session) || !(machine.is_empty() || valid_machine(machine)) {
            return Err(bad());
        }
        let seq = seq.parse().map_err(|_| bad())?;
        Ok(Cursor {
            at,
            session: session.to_string(),
            seq,
            machine: machine.to_string(),
        })
    }

    fn key(&self) -> (&str, &str, u64, &str) {
        (&self.at, &self.session, self.seq, &self.machine)
    }

    fn before(&self, r: &AuditRecord) -> bool {
        self.key() < order_key(r)
    }
}

/// A record's place in the trail's order.
fn order_key(r: &AuditRecord) -> (&str, &str, u64, &str) {
    (
        &r.at,
        &r.session_id,
        r.seq,
        r.machine.as_deref().unwrap_or(""),
    )
}

/// One page of records, oldest first, and where the next starts (`None`: the last).
#[derive(Debug, Clone, PartialEq)]
pub struct AuditPage {
    pub records: Vec<AuditRecord>,
    pub next: Option<Cursor>,
}

impl AuditPage {
    /// The first `limit` of `kept` (in order, at most one more than `limit` read), and
    /// a cursor after the last of them when more were kept.
    pub fn first(mut kept: Vec<AuditRecord>, limit: usize) -> AuditPage {
        let more = kept.len() > limit;
        kept.truncate(limit);
        let next = if more {
            kept.last().map(Cursor::of)
        } else {
            None
        };
        AuditPage {
            records: kept,
            next,
        }
    }
}

/// The records that `filter` keeps, after `after`, at most `limit` (clamped to
/// 1..=`MAX_PAGE`): those of every session log under `sessions` (with `origin`, the
/// machine and user that wrote them), and those other deciders sent to `received`
/// (`blocking_receive`). Reads each log whole; a log that cannot be read is skipped
/// with a warning (the others still answer).
pub fn blocking_query(
    sessions: &Path,
    received: Option<&Path>,
    filter: &AuditFilter,
    after: Option<&Cursor>,
    limit: usize,
    origin: Option<&Origin>,
) -> std::io::Result<AuditPage> {
    let limit = limit.clamp(1, MAX_PAGE);
    let mut kept: Vec<AuditRecord> = Vec::new();
    let keep = |records: Vec<AuditRecord>, kept: &mut Vec<AuditRecord>| {
        kept.extend(
            records
                .into_iter()
                .filter(|r| filter.keeps(r) && after.is_none_or(|c| c.before(r))),
        );
        // Keep memory bounded by the page: only the oldest `limit + 1` can be in it.
        if kept.len() > 4 * (limit + 1) {
            sort(kept);
            kept.truncate(limit + 1);
        }
    };
    let local = filter
        .machine
        .as_deref()
        .is_none_or(|m| origin.is_some_and(|o| o.machine == m));
    let ids: Vec<String> = match (&filter.session, local) {
        (_, false) => Vec::new(),
        (Some(id), true) => vec![id.clone()],
        (None, true) => super::blocking_session_ids(sessions)?,
    };
    for id in ids {
        let events = match Session::blocking_open(sessions, &id).and_then(|s| s.blocking_events()) {
            Ok((events, _)) => events,
            Err(e) => {
                tracing::warn!(session = %id, "audit: log skipped: {e}");
                continue;
            }
        };
        keep(records(&id, &events, origin, |_| None), &mut kept);
    }
    if let Some(dir) = received {
        for path in received_files(dir, filter)? {
            let text = match std::fs::read_to_string(&path) {
                Ok(t) => t,
                Err(e) => {
                    tracing::warn!(file = %path.display(), "audit: skipped: {e}");
                    continue;
                }
            };
            let records = text
                .lines()
                .filter_map(|l| serde_json::from_str::<AuditRecord>(l).ok())
                .collect();
            keep(records, &mut kept);
        }
    }
    sort(&mut kept);
    Ok(AuditPage::first(kept, limit))
}

/// Every record must name a valid machine, session and time (see `blocking_receive`).
pub(crate) fn check_received(records: &[AuditRecord]) -> Result<(), String> {
    for (i, r) in records.iter().enumerate() {
        let machine = r.machine.as_deref().unwrap_or("");
        if !valid_machine(machine) {
            return Err(format!(
                "records[{i}].machine `{machine}` is not a machine name (1 to 253 of A-Z a-z 0-9 . _ -)"
            ));
        }
        if !super::valid_id(&r.session_id) {
            return Err(format!(
                "records[{i}].sessionId `{}` is not a session id",
                r.session_id
            ));
        }
        if parse_time(&r.at).ok().as_deref() != Some(r.at.as_str()) {
            return Err(format!("records[{i}].at `{}` is not a record time", r.at));
        }
        // 2^53: every sequence number a JSON encoder can write exactly.
        if r.seq == 0 || r.seq > 9_007_199_254_740_992 {
            return Err(format!(
                "records[{i}].seq {} is not a sequence number (1 to 2^53)",
                r.seq
            ));
        }
    }
    Ok(())
}

/// The files of received records a query with `filter` reads:
/// `<received>/<machine>/<session>.jsonl`.
fn received_files(dir: &Path, filter: &AuditFilter) -> std::io::Result<Vec<PathBuf>> {
    let machines: Vec<String> = match &filter.machine {
        Some(m) => vec![m.clone()],
        None => match std::fs::read_dir(dir) {
            Ok(entries) => entries
                .filter_map(|e| e.ok()?.file_name().into_string().ok())
                .filter(|m| valid_machine(m))
                .collect(),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
            Err(e) => return Err(e),
        },
    };
    let mut files = Vec::new();
    for m in machines {
        let ids = match &filter.session {
            Some(id) => vec![id.clone()],
            None => super::blocking_session_ids(&dir.join(&m))?,
        };
        files.extend(
            ids.into_iter()
                .map(|id| dir.join(&m).join(format!("{id}.jsonl"))),
        );
    }
    files.retain(|f| f.is_file());
    files.sort();
    Ok(files)
}

/// Whether a machine name can name a directory of received records: 1 to 253 of
/// `A-Z a-z 0-9 . _ -`, not starting with a dot (a host name fits).
pub fn valid_machine(m: &str) -> bool {
    (1..=253).contains(&m.len())
        && !m.starts_with('.')
        && m.bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
}

/// What `blocking_receive` kept.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Received {
    /// Records stored.
    pub stored: usize,
    /// Records already there (a batch sent again after a lost acknowledgement).
    pub duplicates: usize,
}

/// Stores records another decider sent (its outbox), under
/// `<dir>/<machine>/<session>.jsonl`, each once: a record whose sequence number is not
/// above the last one stored for its machine and session is a duplicate (a decider
/// sends a session's records in order). Every record must name a valid machine and
/// session; one that does not refuses the whole request, before anything is stored.
pub fn blocking_receive(dir: &Path, mut records: Vec<AuditRecord>) -> Result<Received, AuditError> {
    check_received(&records).map_err(AuditError::Bad)?;
    records.sort_by(|a, b| {
        (a.machine.as_deref(), a.session_id.as_str(), a.seq).cmp(&(
            b.machine.as_deref(),
            b.session_id.as_str(),
            b.seq,
        ))
    });
    let mut out = Received::default();
    for group in records.chunk_by(|a, b| a.machine == b.machine && a.session_id == b.session_id) {
        let Some(first) = group.first() else { continue };
        let machine = first.machine.as_deref().unwrap_or("");
        let mdir = dir.join(machine);
        std::fs::create_dir_all(&mdir)
            .map_err(|e| AuditError::Store(format!("cannot create `{}`: {e}", mdir.display())))?;
        let path = mdir.join(format!("{}.jsonl", first.session_id));
        let io = |e: std::io::Error| {
            AuditError::Store(format!("cannot store in `{}`: {e}", path.display()))
        };
        use std::io::{Read, Seek};
        let mut file = std::fs::OpenOptions::new()
            .read(true)
            .append(true)
            .create(true)
            .open(&path)
            .map_err(io)?;
        file.lock().map_err(io)?;
        let mut text = String::new();
        file.rewind().map_err(io)?;
        file.read_to_string(&mut text).map_err(io)?;
        let last = text
            .lines()
            .rev()
            .find_map(|l| serde_json::from_str::<AuditRecord>(l).ok())
            .map_or(0, |r| r.seq);
        let mut bytes = Vec::new();
        let mut top = last;
        for r in group {
            if r.seq <= top {
                out.duplicates += 1;
                continue;
            }
            top = r.seq;
            serde_json::to_writer(&mut bytes, r)
                .map_err(|e| AuditError::Store(format!("audit record: {e}")))?;
            bytes.push(b'\n');
            out.stored += 1;
        }
        if !text.is_empty() && !text.ends_with('\n') {
            bytes.insert(0, b'\n');
        }
        file.write_all(&bytes).map_err(io)?;
        file.flush().map_err(io)?;
    }
    Ok(out)
}

fn sort(records: &mut [AuditRecord]) {
    records.sort_by(|a, b| order_key(a).cmp(&order_key(b)));
}

/// Where the sink writes: standard output, or a file opened for appending.
#[derive(Debug)]
enum SinkTarget {
    Stdout,
    File(std::fs::File),
}

/// The JSON-lines sink: one `AuditRecord` per line, each written with one `write` so
/// lines of several processes appending to one file never interleave. A file is
/// created owner-only (it holds the commands agents ran).
#[derive(Debug)]
pub struct AuditSink {
    path: Option<PathBuf>,
    target: Mutex<SinkTarget>,
}

impl AuditSink {
    /// `-` is standard output; anything else a file, created if missing.
    pub fn open(spec: &Path) -> Result<AuditSink, String> {
        if spec == Path::new("-") {
            return Ok(AuditSink {
                path: None,
                target: Mutex::new(SinkTarget::Stdout),
            });
        }
        use std::os::unix::fs::OpenOptionsExt;
        let file = std::fs::OpenOptions::new()
            .append(true)
            .create(true)
            .mode(0o600)
            .open(spec)
            .map_err(|e| format!("cannot open the audit log `{}`: {e}", spec.display()))?;
        Ok(AuditSink {
            path: Some(spec.to_path_buf()),
            target: Mutex::new(SinkTarget::File(file)),
        })
    }

    /// Whether the sink writes to standard output.
    pub fn is_stdout(&self) -> bool {
        self.path.is_none()
    }

    /// Writes `records`, one line each. An error names the file; what was written
    /// before it stays written.
    pub fn write(&self, records: &[AuditRecord]) -> Result<(), String> {
        if records.is_empty() {
            return Ok(());
        }
        let mut target = self
            .target
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        for r in records {
            let mut line = serde_json::to_vec(r).map_err(|e| format!("audit record: {e}"))?;
            line.push(b'\n');
            let result = match &mut *target {
                SinkTarget::Stdout => {
                    let mut out = std::io::stdout().lock();
                    out.write_all(&line).and_then(|_| out.flush())
                }
                SinkTarget::File(f) => f.write_all(&line),
            };
            result.map_err(|e| {
                let path = self.path.as_deref().map_or_else(
                    || "standard output".to_string(),
                    |p| p.display().to_string(),
                );
                format!("cannot write the audit log `{path}`: {e}")
            })?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::{ApprovedBy, DeniedBy};
    use serde_json::json;

    fn ev(seq: u64, at: &str, kind: EventKind) -> Event {
        Event {
            seq,
            at: at.to_string(),
            kind,
        }
    }

    fn requested(id: &str) -> EventKind {
        EventKind::ToolRequested {
            call_id: id.to_string(),
            turn_id: None,
            tool: "bash".to_string(),
            input: json!({"command": "curl x"}),
            project_root: "/p".to_string(),
            cwd: "/p".to_string(),
            home: "/h".to_string(),
            interactive: true,
            host: Some("claude".to_string()),
            requests: json!([{"capability": "network.access", "subject": "x", "display": "x"}]),
            grant_back: false,
            search_path: None,
        }
    }

    #[test]
    fn records_carry_the_calls_context_and_the_deciding_rule() {
        let origin = Origin {
            user: "ana".to_string(),
            machine: "box".to_string(),
        };
        let events = vec![
            ev(1, "2026-12-05T10:00:00.000Z", requested("c1")),
            ev(
                2,
                "2026-12-05T10:00:00.001Z",
                EventKind::PermissionDenied {
                    call_id: "c1".to_string(),
                    by: DeniedBy::Policy,
                    decisions: Some(json!([{
                        "capability": "network.access", "subject": "x", "decision": "deny",
                        "rule": {"capability": "network.*", "pattern": "x", "action": "deny", "source": "managed"}
                    }])),
                    feedback: None,
                    denied_with: None,
                },
            ),
            ev(
                3,
                "2026-12-05T10:00:01.000Z",
                EventKind::ToolApproved {
                    call_id: "c2".to_string(),
                    by: ApprovedBy::Contained,
                    decisions: json!([]),
                    resolved_by: None,
                    contained: None,
                },
            ),
        ];
        let rs = records("s1", &events, Some(&origin), |id| {
            (id == "c2").then(|| CallContext {
                host: Some("codex".to_string()),
                project: Some("/q".to_string()),
                tool: Some("codex:shell".to_string()),
            })
        });
        assert_eq!(rs.len(), 3);
        assert_eq!(rs[1].event, AuditEvent::PermissionDenied);
        assert_eq!(rs[1].decision, Some(Action::Deny));
        assert_eq!(rs[1].by.as_deref(), Some("policy"));
        assert_eq!(rs[1].host.as_deref(), Some("claude"));
        assert_eq!(rs[1].user.as_deref(), Some("ana"));
        assert_eq!(rs[1].requests[0].rule.as_deref(), Some("network.* x"));
        assert_eq!(rs[1].requests[0].source.as_deref(), Some("managed"));
        assert_eq!(rs[2].decision, Some(Action::Contain));
        assert_eq!(rs[2].host.as_deref(), Some("codex"));
        assert_eq!(rs[2].project.as_deref(), Some("/q"));

        let mut f = AuditFilter {
            capability: Some("network".to_string()),
            ..Default::default()
        };
        assert!(f.keeps(&rs[0]));
        f.capability = Some("network.acc".to_string());
        assert!(!f.keeps(&rs[0]), "a family matches at a dot, not mid-word");
        let f = AuditFilter {
            decision: Some(Action::Deny),
            since: Some(parse_time("2026-12-05T10:00:00.001Z").unwrap()),
            until: Some(parse_time("2026-12-05T10:00:01Z").unwrap()),
            ..Default::default()
        };
        let kept: Vec<_> = rs.iter().filter(|r| f.keeps(r)).collect();
        assert_eq!(kept.len(), 1);
        assert_eq!(kept[0].seq, 2);
    }

    #[test]
    fn times_and_cursors_are_read_strictly() {
        assert_eq!(
            parse_time("2026-12-05").unwrap(),
            "2026-12-05T00:00:00.000Z"
        );
        assert_eq!(
            parse_time("2026-12-05T19:30:01Z").unwrap(),
            "2026-12-05T19:30:01.000Z"
        );
        for bad in [
            "2026-12-05T19:30:01+01:00",
            "yesterday",
            "2026-12-5",
            "2026-12-05T19:30Z",
            "2026-12-05T19:30:01.5Z",
            "",
        ] {
            assert!(parse_time(bad).is_err(), "{bad}");
        }
        let mut c = Cursor {
            at: "2026-12-05T19:30:01.000Z".to_string(),
            session: "s-1".to_string(),
            seq: 7,
            machine: String::new(),
        };
        assert_eq!(Cursor::decode(&c.encode()).unwrap(), c);
        c.machine = "box-1.lan".to_string();
        assert_eq!(Cursor::decode(&c.encode()).unwrap(), c);
        for bad in [
            "x",
            "2026-12-05T19:30:01.000Z~s/1~7~m",
            "a~b~c~d",
            "2026-12-05~s~-1~",
            "2026-12-05~s~1~../m",
            "2026-12-05~s~1~m~x",
        ] {
            assert!(Cursor::decode(bad).is_err(), "{bad}");
        }
    }
}
