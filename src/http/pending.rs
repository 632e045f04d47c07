//! `GET /v1/pending` and `GET /v1/pending/stream`: every call waiting for a person,
//! across sessions, for the terminal and web panels (the index and its channel are
//! `panel`; the first request seeds the index from the session logs on disk, one
//! session at a time under that session's lock).

use std::convert::Infallible;
use std::time::Duration;

use axum::extract::State;
use axum::response::sse::{Event as SseEvent, KeepAlive, Sse};
use axum::{Json, response::IntoResponse};
use futures_util::stream;
use tokio::sync::broadcast;

use super::AppState;
use super::api::{PanelCall, PanelResponse};
use super::error::{ApiError, ErrorBody};
use super::panel::{self, PanelEvent};
use super::sessions;

/// How often an idle stream sends a comment, so proxies and clients see it alive.
const KEEP_ALIVE: Duration = Duration::from_secs(15);

/// Reads the pending calls of every session on disk into the index.
async fn seed(state: &AppState) -> Result<(), ApiError> {
    let dir = state.config().state_dir.join("sessions");
    let ids = state
        .blocking(move || crate::session::blocking_session_ids(&dir))
        .await?
        .map_err(ApiError::internal)?;
    for id in ids {
        session_calls(state, &id).await?;
    }
    Ok(())
}

/// The pending calls of one session, read under its lock with their decisions; the
/// index is set to exactly them.
async fn session_calls(state: &AppState, id: &str) -> Result<Vec<PanelCall>, ApiError> {
    let guard = state.sessions().lock(state, id).await?;
    let pending = sessions::pending_with_decisions(state, &guard).await?;
    let calls: Vec<PanelCall> = pending
        .into_iter()
        .map(|c| panel::panel_call(id, c.decision.clone().unwrap_or_default(), &c))
        .collect();
    state.panel().replace(id, &calls);
    Ok(calls)
}

/// Every pending call of every session, oldest first (by request time, then session
/// and call id), read from the sessions the index says have one.
async fn snapshot(state: &AppState) -> Result<Vec<PanelCall>, ApiError> {
    let mut all = Vec::new();
    for id in state.panel().sessions(|| seed(state)).await? {
        all.extend(session_calls(state, &id).await?);
    }
    all.sort_by(|a, b| {
        (&a.requested_at, &a.session_id, &a.call_id).cmp(&(
            &b.requested_at,
            &b.session_id,
            &b.call_id,
        ))
    });
    Ok(all)
}

/// Every call waiting for a person, in every session.
#[utoipa::path(get, path = "/v1/pending", tag = "sessions",
    responses(
        (status = 200, description = "Every pending call of every session, oldest first", body = PanelResponse),
        (status = 401, description = "Missing or invalid bearer token", body = ErrorBody),
        (status = 503, description = "At the concurrency cap (`overloaded`) or over the request timeout (`request_timeout`); `Retry-After` says when to retry", body = ErrorBody),
    ))]
pub async fn pending(State(state): State<AppState>) -> Result<Json<PanelResponse>, ApiError> {
    let calls = snapshot(&state).await?;
    Ok(Json(PanelResponse { calls }))
}

/// The pending calls as server-sent events: `snapshot` first (`{"calls":[…]}`), then
/// `pending` (a call) and `resolved` (`{sessionId, callId, status, by}`); a subscriber
/// that falls behind gets a fresh `snapshot`. The stream ends when the server drains.
#[utoipa::path(get, path = "/v1/pending/stream", tag = "sessions",
    responses(
        (status = 200, description = "Server-sent events: `snapshot`, `pending`, `resolved`", content_type = "text/event-stream"),
        (status = 401, description = "Missing or invalid bearer token", body = ErrorBody),
    ))]
pub async fn stream(State(state): State<AppState>) -> Result<impl IntoResponse, ApiError> {
    // Subscribe before the snapshot, so nothing between the two is missed (a change
    // seen in both is applied twice, which the clients' keyed lists absorb).
    let rx = state.panel().subscribe();
    let first = snapshot(&state).await?;
    let start = snapshot_event(first);
    let events = stream::unfold(
        (Some(start), rx, state),
        |(first, mut rx, state)| async move {
            if let Some(ev) = first {
                return Some((Ok::<_, Infallible>(ev), (None, rx, state)));
            }
            loop {
                if state.draining() {
                    return None;
                }
                // The drain flag is polled: a stream must not hold shutdown for long.
                let next = tokio::time::timeout(Duration::from_millis(500), rx.recv()).await;
                let ev = match next {
                    Err(_) => continue,
                    Ok(Ok(PanelEvent::Pending(c))) => json_event("pending", &c),
                    Ok(Ok(PanelEvent::Resolved(r))) => json_event("resolved", &r),
                    Ok(Err(broadcast::error::RecvError::Lagged(_))) => {
                        match snapshot(&state).await {
                            Ok(calls) => snapshot_event(calls),
                            // The panel cannot be brought up to date: end the stream,
                            // and the client reconnects for a fresh snapshot.
                            Err(_) => return None,
                        }
                    }
                    Ok(Err(broadcast::error::RecvError::Closed)) => return None,
                };
                return Some((Ok(ev), (None, rx, state)));
            }
        },
    );
    Ok(Sse::new(events).keep_alive(KeepAlive::new().interval(KEEP_ALIVE).text("keep-alive")))
}

fn snapshot_event(calls: Vec<PanelCall>) -> SseEvent {
    json_event("snapshot", &PanelResponse { calls })
}

fn json_event(name: &str, data: &impl serde::Serialize) -> SseEvent {
    // These types always serialize; an empty object is the fallback a client can
    // still parse.
    let data = serde_json::to_string(data).unwrap_or_else(|_| "{}".to_string());
    SseEvent::default().event(name).data(data)
}
