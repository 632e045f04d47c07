//! Replicas sharing one PostgreSQL store follow each other (`serve --store
//! postgres://…`): every append notifies `khaelor_events` with `<session> <seq>`, and
//! each replica listens on a connection of its own and brings that session up to date
//! in memory, which announces what changed on its panel hub. So a hook waiting on this
//! replica hears a person's answer given on another one as soon as it is committed,
//! and every replica's panels list every pending call. No polling.
//!
//! Owns the listener and its reconnection only; catching up is `SessionStore::lock`
//! (which publishes the events it reads), the index is `panel`. A lost listener
//! connection is retried; once back, every session the index knows or the store says
//! is waiting is caught up again, so an answer given while this replica was deaf
//! still reaches the hook waiting for it, and a call whose answer cannot be told
//! apart is never taken as a person's approval (`PanelHub::reconcile`).

use std::time::Duration;

use futures_util::StreamExt;
use tokio_postgres::{AsyncMessage, NoTls};

use super::AppState;
use super::sessions;
use crate::session::Backend;
use crate::session::pg::CHANNEL;

/// How long the listener waits before connecting again after losing its connection.
const RECONNECT: Duration = Duration::from_millis(500);

/// Starts following the other replicas when the sessions live in PostgreSQL.
pub fn start(state: &AppState) {
    let Backend::Postgres(store) = state.sessions().backend() else {
        return;
    };
    let config = store.config().clone();
    let state = state.clone();
    tokio::spawn(async move {
        let mut resync = false;
        loop {
            if state.draining() {
                return;
            }
            if let Err(e) = listen(&state, &config, resync).await {
                tracing::warn!(error = %e, "replica listener lost; reconnecting");
            }
            resync = true;
            tokio::select! {
                () = tokio::time::sleep(RECONNECT) => {}
                () = state.drained() => return,
            }
        }
    });
}

/// Listens until the connection is lost or the server drains.
async fn listen(
    state: &AppState,
    config: &tokio_postgres::Config,
    resync: bool,
) -> Result<(), String> {
    let (client, mut conn) = config.connect(NoTls).await.map_err(|e| e.to_string())?;
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<Option<String>>();
    let driver = tokio::spawn(async move {
        let mut messages = futures_util::stream::poll_fn(move |cx| conn.poll_message(cx));
        while let Some(message) = messages.next().await {
            match message {
                Ok(AsyncMessage::Notification(n)) => {
                    if tx.send(Some(n.payload().to_string())).is_err() {
                        return;
                    }
                }
                Ok(_) => {}
                Err(_) => break,
            }
        }
        // The connection ended: tell the loop.
        let _ = tx.send(None);
    });
    let listening = client
        .batch_execute(&format!("LISTEN {CHANNEL}"))
        .await
        .map_err(|e| e.to_string());
    if let Err(e) = listening {
        driver.abort();
        return Err(e);
    }
    tracing::info!("following the other replicas");
    if resync {
        resync_all(state).await;
    }
    let result = loop {
        let next = tokio::select! {
            next = rx.recv() => next,
            () = state.drained() => break Ok(()),
        };
        match next {
            Some(Some(payload)) => {
                let state = state.clone();
                tokio::spawn(async move { on_notify(&state, &payload).await });
            }
            Some(None) | None => break Err("the listener's connection closed".to_string()),
        }
    };
    driver.abort();
    drop(client);
    result
}

/// One notification: `<session id> <last seq>`.
async fn on_notify(state: &AppState, payload: &str) {
    let Some((id, seq)) = payload.split_once(' ') else {
        return;
    };
    let Ok(seq) = seq.parse::<u64>() else {
        return;
    };
    if !crate::session::valid_id(id) || state.sessions().is_current(id, seq) {
        return;
    }
    follow(state, id).await;
}

/// Brings session `id` up to date and the panels with it: the events it catches up on
/// are announced (`SessionStore::lock`), and the index is then reconciled with the
/// session's pending calls, which covers a session read afresh (whose events were
/// never announced here). Under the session's lock the index matches the session, so
/// reconciling a session that was followed event by event changes nothing.
async fn follow(state: &AppState, id: &str) {
    let guard = match state.sessions().lock(state, id).await {
        Ok(g) => g,
        Err(e) => {
            tracing::warn!(session = %id, error = %e.message, "could not follow a session");
            return;
        }
    };
    let pending = match sessions::pending_with_decisions(state, &guard).await {
        Ok(p) => p,
        Err(e) => {
            tracing::warn!(session = %id, error = %e.message, "could not read pending calls");
            return;
        }
    };
    let calls: Vec<_> = pending
        .into_iter()
        .map(|c| super::panel::panel_call(id, c.decision.clone().unwrap_or_default(), &c))
        .collect();
    if let Some(s) = guard.as_ref().filter(|s| s.exists()) {
        state.panel().reconcile(s, &calls);
    }
}

/// After the listener was away: every session the index knows or the store says is
/// waiting, caught up.
async fn resync_all(state: &AppState) {
    let mut ids = state.panel().known_sessions();
    let store = state.sessions();
    let (backend, dir) = (store.backend().clone(), store.dir().to_path_buf());
    match state
        .blocking(move || backend.blocking_waiting_sessions(&dir))
        .await
    {
        Ok(Ok(waiting)) => ids.extend(waiting),
        Ok(Err(e)) => tracing::warn!(error = %e, "could not list waiting sessions"),
        Err(e) => tracing::warn!(error = %e.message, "could not list waiting sessions"),
    }
    ids.sort();
    ids.dedup();
    for id in ids {
        follow(state, &id).await;
    }
}
