//! The live view of every call waiting for a person, across sessions: what the
//! terminal and web panels list and follow (`pending`), and what a waiting hook
//! listens to.
//!
//! Owns the index and the broadcast only. The session logs stay the truth: every
//! event appended through `sessions::append` / `append_call` is turned into panel
//! events here (`changes`) and published; the index (which calls wait, not what they
//! are) is seeded from the logs the first time someone asks for it (`sessions`, with
//! the seeding `pending` gives), one session at a time under that session's lock, so
//! a call recorded while seeding is neither lost nor listed twice.

use std::collections::BTreeMap;
use std::sync::Mutex;

use tokio::sync::{OnceCell, broadcast};

use super::api::{PanelCall, PanelResolved};
use super::error::ApiError;
use crate::session::{ApprovedBy, CallStatus, DeniedBy, Event, EventKind, Session};

/// Panel events a slow subscriber may fall behind by before it is told to start over
/// from a snapshot (`lagged`); each may hold a large call until every subscriber has
/// read it.
const CAPACITY: usize = 256;

/// A change the panels show.
#[derive(Debug, Clone)]
pub enum PanelEvent {
    /// A call started waiting for a person (boxed: a call is large, a resolution
    /// small, and both travel through the channel).
    Pending(Box<PanelCall>),
    /// A waiting call was approved or denied.
    Resolved(PanelResolved),
}

/// Every pending call by session, and the channel that announces changes.
///
/// The index holds only which calls wait (their id and request time), never their
/// inputs or decisions, which can be many times larger: those stay in the sessions'
/// logs, bounded by the session store, and are read for a snapshot.
#[derive(Debug)]
pub struct PanelHub {
    tx: broadcast::Sender<PanelEvent>,
    /// Session id → its pending calls (call id, request time).
    waiting: Mutex<BTreeMap<String, Vec<(String, String)>>>,
    seeded: OnceCell<()>,
}

impl Default for PanelHub {
    fn default() -> Self {
        PanelHub {
            tx: broadcast::channel(CAPACITY).0,
            waiting: Mutex::new(BTreeMap::new()),
            seeded: OnceCell::new(),
        }
    }
}

impl PanelHub {
    /// Every later change, from the moment of the call.
    pub fn subscribe(&self) -> broadcast::Receiver<PanelEvent> {
        self.tx.subscribe()
    }

    /// Applies changes to the index, then announces them (no subscriber is fine).
    pub(crate) fn publish(&self, changes: Vec<PanelEvent>) {
        if changes.is_empty() {
            return;
        }
        {
            let mut waiting = self.waiting.lock().unwrap_or_else(|e| e.into_inner());
            for change in &changes {
                match change {
                    PanelEvent::Pending(c) => {
                        let list = waiting.entry(c.session_id.clone()).or_default();
                        list.retain(|(id, _)| *id != c.call_id);
                        list.push((c.call_id.clone(), c.requested_at.clone()));
                    }
                    PanelEvent::Resolved(r) => {
                        if let Some(list) = waiting.get_mut(&r.session_id) {
                            list.retain(|(id, _)| *id != r.call_id);
                            if list.is_empty() {
                                waiting.remove(&r.session_id);
                            }
                        }
                    }
                }
            }
        }
        for change in changes {
            let _ = self.tx.send(change);
        }
    }

    /// Replaces what the index holds for one session with its pending calls as read
    /// under its lock.
    pub(crate) fn replace(&self, session_id: &str, pending: &[PanelCall]) {
        let mut waiting = self.waiting.lock().unwrap_or_else(|e| e.into_inner());
        if pending.is_empty() {
            waiting.remove(session_id);
        } else {
            let keys = pending
                .iter()
                .map(|c| (c.call_id.clone(), c.requested_at.clone()))
                .collect();
            waiting.insert(session_id.to_string(), keys);
        }
    }

    /// Sets the index for one session to `pending` (its waiting calls as just read
    /// under its lock) and announces the difference: calls the index did not know as
    /// `pending`, calls it knew that no longer wait as `resolved` with their status
    /// and no `by` (who answered is in events this replica did not follow one by one,
    /// so a waiting hook does not take it as a person's approval).
    pub(crate) fn reconcile(&self, session: &Session, pending: &[PanelCall]) {
        let known: Vec<String> = {
            let waiting = self.waiting.lock().unwrap_or_else(|e| e.into_inner());
            waiting
                .get(session.id())
                .map(|l| l.iter().map(|(id, _)| id.clone()).collect())
                .unwrap_or_default()
        };
        let mut changes: Vec<PanelEvent> = pending
            .iter()
            .filter(|c| !known.contains(&c.call_id))
            .map(|c| PanelEvent::Pending(Box::new(c.clone())))
            .collect();
        for id in known {
            if pending.iter().any(|c| c.call_id == id) {
                continue;
            }
            let status = session.call(&id).map_or(CallStatus::Denied, |c| c.status);
            changes.push(resolved(session, &id, status, &""));
        }
        self.replace(session.id(), pending);
        self.publish(changes);
    }

    /// The sessions in the index now (without seeding it).
    pub(crate) fn known_sessions(&self) -> Vec<String> {
        let waiting = self.waiting.lock().unwrap_or_else(|e| e.into_inner());
        waiting.keys().cloned().collect()
    }

    /// The sessions with a call waiting, `seed` run once first to read the logs on
    /// disk (`replace` per session).
    pub async fn sessions<F, Fut>(&self, seed: F) -> Result<Vec<String>, ApiError>
    where
        F: FnOnce() -> Fut,
        Fut: std::future::Future<Output = Result<(), ApiError>>,
    {
        self.seeded.get_or_try_init(seed).await?;
        let waiting = self.waiting.lock().unwrap_or_else(|e| e.into_inner());
        Ok(waiting.keys().cloned().collect())
    }
}

pub(crate) fn panel_call(
    session_id: &str,
    decision: serde_json::Value,
    c: &crate::session::CallRecord,
) -> PanelCall {
    PanelCall {
        session_id: session_id.to_string(),
        host: c.host.clone(),
        call_id: c.call_id.clone(),
        turn_id: c.turn_id.clone(),
        tool: c.tool.clone(),
        input: c.input.clone(),
        project_root: c.project_root.clone(),
        cwd: c.cwd.clone(),
        requested_at: c.requested_at.clone(),
        decision,
    }
}

/// The panel events of events just appended to `session` (which already reflects
/// them): a call that now waits, and a waiting call a person, the host, a grant on
/// another call or a denied turn resolved. Approvals and denials by the rules
/// themselves never waited, so they are not announced.
pub(crate) fn changes(session: &Session, appended: &[Event]) -> Vec<PanelEvent> {
    let mut out = Vec::new();
    for ev in appended {
        match &ev.kind {
            EventKind::PermissionRequested { call_id, decision } => {
                if let Some(c) = session.call(call_id)
                    && c.status == CallStatus::Pending
                {
                    out.push(PanelEvent::Pending(Box::new(panel_call(
                        session.id(),
                        decision.clone(),
                        c,
                    ))));
                }
            }
            EventKind::ToolApproved { call_id, by, .. }
                if !matches!(by, ApprovedBy::Policy | ApprovedBy::Contained) =>
            {
                out.push(resolved(session, call_id, CallStatus::Approved, by));
            }
            EventKind::PermissionDenied { call_id, by, .. } if *by != DeniedBy::Policy => {
                out.push(resolved(session, call_id, CallStatus::Denied, by));
            }
            _ => {}
        }
    }
    out
}

fn resolved(
    session: &Session,
    call_id: &str,
    status: CallStatus,
    by: &impl serde::Serialize,
) -> PanelEvent {
    let by = serde_json::to_value(by)
        .ok()
        .and_then(|v| v.as_str().map(String::from))
        .unwrap_or_default();
    PanelEvent::Resolved(PanelResolved {
        session_id: session.id().to_string(),
        call_id: call_id.to_string(),
        status,
        by,
    })
}
