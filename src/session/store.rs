//! Where a session's events are kept: the JSON Lines files of the state directory (the
//! default) or the PostgreSQL store (`pg`), behind one `Session`.
//!
//! Owns the choice and the PostgreSQL side of the session's durable operations: open
//! (read every event), append, compact, catch up with what other replicas appended,
//! read recorded decisions. The fold of events into call states is `Session::apply`,
//! shared by both stores, so a session reads the same whichever keeps it.
//!
//! With several replicas a session in one replica's memory can fall behind the
//! database: `blocking_catch_up` reads the events numbered from the copy's next
//! sequence number on, and an append whose numbering is no longer the database's is
//! refused as `SessionError::Behind` with nothing written (the caller decided on a
//! stale state: its request fails closed and is sent again).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::audit::{AuditError, AuditFilter, AuditPage, AuditRecord, Cursor, MAX_PAGE, Received};
use super::pg::PgStore;
use super::{
    CallRecord, CompactReport, Event, EventKind, Session, SessionError, decision_in, valid_id,
};

/// The store sessions are read from and appended to.
#[derive(Debug, Clone, Default)]
pub enum Backend {
    /// `<state>/sessions/<id>.jsonl`.
    #[default]
    Files,
    /// A PostgreSQL database several replicas may share.
    Postgres(Arc<PgStore>),
}

impl Backend {
    /// Opens session `id`: its log under `dir`, or its events in the database.
    pub fn blocking_open(&self, dir: &Path, id: &str) -> Result<Session, SessionError> {
        match self {
            Backend::Files => Session::blocking_open(dir, id),
            Backend::Postgres(store) => Session::blocking_open_pg(store, id),
        }
    }

    /// The ids of the sessions that may have a call waiting (files: every log).
    pub fn blocking_waiting_sessions(&self, dir: &Path) -> Result<Vec<String>, SessionError> {
        match self {
            Backend::Files => {
                super::blocking_session_ids(dir).map_err(|e| super::io_err("read", dir, e))
            }
            Backend::Postgres(store) => Ok(store.blocking_waiting_sessions()?),
        }
    }
}

/// Where the recorded decisions of a session's calls are read from, detached from the
/// session so the read can run without holding it borrowed.
#[derive(Debug, Clone)]
pub enum DecisionSource {
    File(PathBuf),
    Postgres(Arc<PgStore>, String),
}

impl DecisionSource {
    /// Fills in the decision of each call that has one recorded (see `CallRecord`).
    pub fn blocking_read(&self, calls: &mut [CallRecord]) -> Result<(), SessionError> {
        match self {
            DecisionSource::File(path) => super::blocking_read_decisions(path, calls),
            DecisionSource::Postgres(store, id) => {
                let seqs: Vec<u64> = calls
                    .iter()
                    .filter_map(|c| c.decision_at.map(|s| s.seq))
                    .collect();
                if seqs.is_empty() {
                    return Ok(());
                }
                let events = store.blocking_events_at(id, &seqs)?;
                for c in calls.iter_mut() {
                    let Some(spot) = c.decision_at else { continue };
                    let at: Vec<Event> = events
                        .iter()
                        .filter(|e| e.seq == spot.seq)
                        .cloned()
                        .collect();
                    c.decision = decision_in(&at, &c.call_id);
                }
                Ok(())
            }
        }
    }
}

impl Session {
    /// Session `id` as the database holds it.
    fn blocking_open_pg(store: &Arc<PgStore>, id: &str) -> Result<Session, SessionError> {
        if !valid_id(id) {
            return Err(SessionError::InvalidId(id.to_string()));
        }
        let mut s = Session::empty(id, PathBuf::from(format!("postgres:{id}")), 1);
        s.pg = Some(store.clone());
        let (events, warnings) = store.blocking_events(id, 0)?;
        for ev in events {
            s.apply(ev, 0);
        }
        for w in warnings {
            s.resident += w.len();
            s.warnings.push(w);
        }
        s.warn_stuck();
        Ok(s)
    }

    /// Where this session's recorded decisions are read from.
    pub fn decision_source(&self) -> DecisionSource {
        match &self.pg {
            Some(store) => DecisionSource::Postgres(store.clone(), self.id.clone()),
            None => DecisionSource::File(self.path.clone()),
        }
    }

    /// Whether the session lives in the PostgreSQL store (which other replicas share).
    pub fn is_shared(&self) -> bool {
        self.pg.is_some()
    }

    /// The sequence number the next event of this copy takes.
    pub fn next_seq(&self) -> u64 {
        self.next_seq
    }

    /// Brings this copy up to date with events other replicas appended, and returns
    /// them (for the panels). Nothing to do for a log file, which only this process's
    /// locked copy appends to. A compaction elsewhere rebuilds the copy from the store.
    pub fn blocking_catch_up(&mut self) -> Result<Vec<Event>, SessionError> {
        let Some(store) = self.pg.clone() else {
            return Ok(Vec::new());
        };
        let (events, warnings) = store.blocking_events(&self.id, self.next_seq)?;
        if events
            .iter()
            .any(|e| matches!(e.kind, EventKind::Compacted { .. }))
        {
            *self = Session::blocking_open_pg(&store, &self.id)?;
            return Ok(events);
        }
        for ev in &events {
            self.apply(ev.clone(), 0);
        }
        for w in warnings {
            self.warnings.push(w);
        }
        Ok(events)
    }

    /// `blocking_append` on the PostgreSQL store: numbered from this copy's counter,
    /// refused (`Behind`, nothing written) when another writer got there first.
    pub(super) fn blocking_append_pg(
        &mut self,
        store: &PgStore,
        kinds: Vec<EventKind>,
    ) -> Result<Vec<Event>, SessionError> {
        let at = super::now_rfc3339();
        let mut hosts: std::collections::HashMap<String, Option<String>> =
            std::collections::HashMap::new();
        let mut rows = Vec::with_capacity(kinds.len());
        for (i, kind) in kinds.into_iter().enumerate() {
            let call = kind.call_id().to_string();
            let host = match &kind {
                EventKind::ToolRequested { host, .. } => host.clone(),
                _ => hosts
                    .get(&call)
                    .cloned()
                    .unwrap_or_else(|| self.calls.get(&call).and_then(|c| c.host.clone())),
            };
            hosts.insert(call, host.clone());
            let ev = Event {
                seq: self.next_seq + i as u64,
                at: at.clone(),
                kind,
            };
            rows.push((ev, host));
        }
        if !store.blocking_append(&self.id, self.next_seq, &rows)? {
            return Err(SessionError::Behind);
        }
        let events: Vec<Event> = rows.into_iter().map(|(ev, _)| ev).collect();
        for ev in &events {
            self.apply(ev.clone(), 0);
        }
        Ok(events)
    }

    /// `blocking_compact` on the PostgreSQL store: the events of finished calls are
    /// marked compacted (kept for the trail, no longer read), the marker appended.
    pub(super) fn blocking_compact_pg(
        &mut self,
        store: &Arc<PgStore>,
    ) -> Result<CompactReport, SessionError> {
        let (events, _) = store.blocking_events(&self.id, 0)?;
        if events.last().map_or(1, |e| e.seq + 1) != self.next_seq {
            return Err(SessionError::Behind);
        }
        let (kept, report) = self.compacted_events(&events, self.next_seq);
        drop(events);
        let Some((marker, live)) = kept.split_last() else {
            return Err(SessionError::Behind);
        };
        let keep: Vec<u64> = live.iter().map(|e| e.seq).collect();
        if !store.blocking_compact(&self.id, self.next_seq, &keep, marker)? {
            return Err(SessionError::Behind);
        }
        let mut fresh = Session::empty(&self.id, self.path.clone(), self.next_seq);
        fresh.pg = Some(store.clone());
        for ev in kept {
            fresh.apply(ev, 0);
        }
        *self = fresh;
        tracing::info!(
            session = %self.id,
            before = report.events_before,
            after = report.events_after,
            calls_dropped = report.calls_dropped,
            "session events compacted"
        );
        Ok(report)
    }
}

/// As `audit::blocking_query`, over the PostgreSQL store: its events (each with the machine and
/// user of the replica that appended it) and the records it received. Reads the trail
/// in batches after the cursor until a page is full or the trail ends.
pub fn blocking_query_pg(
    store: &PgStore,
    filter: &AuditFilter,
    after: Option<&Cursor>,
    limit: usize,
) -> Result<AuditPage, AuditError> {
    use super::audit::{Origin, record, requested_context};
    use super::pg::AuditRowKind;
    let limit = limit.clamp(1, MAX_PAGE);
    let batch = i64::try_from(limit.max(200) + 1).unwrap_or(i64::MAX);
    let mut cursor = after.cloned();
    let mut kept: Vec<AuditRecord> = Vec::new();
    loop {
        let rows = store
            .blocking_audit_rows(
                filter.session.as_deref(),
                filter.since.as_deref(),
                filter.until.as_deref(),
                cursor
                    .as_ref()
                    .map(|c| (c.at.as_str(), c.session.as_str(), c.seq, c.machine.as_str())),
                batch,
            )
            .map_err(|e| AuditError::Store(e.to_string()))?;
        let full = i64::try_from(rows.len()).unwrap_or(i64::MAX) == batch;
        for row in rows {
            let (at, session, seq, machine) = row.key;
            cursor = Some(Cursor {
                at,
                session,
                seq,
                machine,
            });
            let record = match row.what {
                AuditRowKind::Received(body) => serde_json::from_str::<AuditRecord>(&body).ok(),
                AuditRowKind::Local {
                    session,
                    event,
                    requested,
                    machine,
                    user,
                } => {
                    let origin = (!machine.is_empty()).then_some(Origin { user, machine });
                    let ctx = requested
                        .and_then(|t| serde_json::from_str::<Event>(&t).ok())
                        .and_then(|e| requested_context(&e.kind))
                        .unwrap_or_default();
                    serde_json::from_str::<Event>(&event)
                        .ok()
                        .and_then(|ev| record(&session, &ev, ctx, origin.as_ref()))
                }
            };
            if let Some(r) = record.filter(|r| filter.keeps(r)) {
                kept.push(r);
                if kept.len() > limit {
                    break;
                }
            }
        }
        if kept.len() > limit || !full {
            break;
        }
    }
    Ok(AuditPage::first(kept, limit))
}

/// Stores records another decider sent in the PostgreSQL store, each once (see
/// `audit::blocking_receive` for what a request must hold).
pub fn blocking_receive_pg(
    store: &PgStore,
    records: Vec<AuditRecord>,
) -> Result<Received, AuditError> {
    super::audit::check_received(&records).map_err(AuditError::Bad)?;
    let (stored, duplicates) = store
        .blocking_receive(&records)
        .map_err(|e| AuditError::Store(e.to_string()))?;
    Ok(Received { stored, duplicates })
}
