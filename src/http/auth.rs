//! Bearer-token authentication of the service.
//!
//! Owns the check only: which token is configured and whether the server may start
//! without one is the `serve` command's business, the panel token's file is
//! `credential`'s. Two credentials, two rules:
//!
//! - **`--token-file` (the operator's token).** Every route needs it but `/healthz` and
//!   `/openapi.yaml` (container probes and a public contract).
//! - **No `--token-file`: the panel token** (`<state-dir>/panel-token`, made by `serve`).
//!   Approvals belong to the person, never to the agent: any process of the same user
//!   can reach loopback, a test script an agent wrote among them, so every route that
//!   answers a prompt, grants, trusts or shows what waits for an answer needs the panel
//!   token — grant, deny, `/v1/trust`, a session's pending calls and events,
//!   `/v1/pending` and its stream, and any route not in the list below (a new route is
//!   closed until it is added here). What hooks and read-only tools need stays open on
//!   loopback: the probes, `/metrics`, `/openapi.yaml`, `/v1/analyze`, `/v1/evaluate`,
//!   `/v1/explain`, `/v1/rules`, `/v1/tools/available`, `POST /v1/hooks/{host}` and
//!   `POST /v1/sessions/{id}/calls` (recording a call is what a hook does: it asks, it
//!   never answers), and `POST /v1/audit/records` (a decider handing over its audit
//!   records; reading the trail, `GET /v1/audit`, needs the token).
//!
//! The web panel's session cookie stands in for either token on the panel's routes
//! (`web::cookie_credential`), and its page paths are open.

use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::{ApiError, AppState};

/// Paths answered without the operator's token.
const OPEN_PATHS: [&str; 2] = ["/healthz", "/openapi.yaml"];

/// Paths answered without the panel token (when the operator gave no token): what a
/// hook and a read-only client need. Everything else needs it. By path, whatever the
/// method: each of these paths has only its read-only or hook method, and the router
/// answers any other with 405 before a handler runs.
const OPEN_WITHOUT_PANEL_TOKEN: &[&str] = &[
    "/healthz",
    "/readyz",
    "/metrics",
    "/openapi.yaml",
    "/v1/analyze",
    "/v1/evaluate",
    "/v1/explain",
    "/v1/rules",
    "/v1/tools/available",
    "/v1/audit/records",
];

/// Whether `path` is open without the panel token (see the module doc).
pub fn open_without_panel_token(path: &str) -> bool {
    if OPEN_WITHOUT_PANEL_TOKEN.contains(&path) {
        return true;
    }
    // `/v1/hooks/{host}`: one segment after the prefix.
    if let Some(host) = path.strip_prefix("/v1/hooks/") {
        return !host.is_empty() && !host.contains('/');
    }
    // `/v1/sessions/{id}/calls`: recording a call, never answering one.
    path.strip_prefix("/v1/sessions/")
        .and_then(|rest| rest.strip_suffix("/calls"))
        .is_some_and(|id| !id.is_empty() && !id.contains('/'))
}

pub async fn require_token(State(state): State<AppState>, req: Request, next: Next) -> Response {
    // The web panel's session cookie (with its CSRF checks) is a credential for the
    // panel's own routes; everything else is the bearer token's business below.
    match super::web::cookie_credential(&state, &req) {
        super::web::CookieCredential::Allowed => return next.run(req).await,
        super::web::CookieCredential::Refused(resp) => return resp,
        super::web::CookieCredential::NotUsed => {}
    }
    let config = state.config();
    let token = match (config.token.as_deref(), config.panel_token.as_deref()) {
        (Some(_), _) if OPEN_PATHS.contains(&req.uri().path()) => return next.run(req).await,
        (Some(t), _) => t,
        (None, Some(_)) if open_without_panel_token(req.uri().path()) => {
            return next.run(req).await;
        }
        (None, Some(p)) => p,
        (None, None) => return next.run(req).await,
    };
    let given = req
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| {
            v.strip_prefix("Bearer ")
                .or_else(|| v.strip_prefix("bearer "))
        })
        .map(str::trim);
    let refused = match given {
        Some(given) if constant_time_eq(given.as_bytes(), token.as_bytes()) => {
            return next.run(req).await;
        }
        Some(_) => "invalid bearer token",
        None => "missing bearer token: send `authorization: Bearer <token>`",
    };
    // A hook host reads a 401 as "run the tool": it gets its own deny instead.
    super::hooks::unauthorized(req.uri().path(), refused).unwrap_or_else(|| unauthorized(refused))
}

fn unauthorized(message: &str) -> Response {
    let mut resp = ApiError::new(StatusCode::UNAUTHORIZED, "unauthorized", message).into_response();
    resp.headers_mut()
        .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
    resp
}

/// Compares without an early exit on the first differing byte, so response timing
/// does not reveal how much of a guessed token was right.
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    let mut diff = a.len() ^ b.len();
    for (i, x) in a.iter().enumerate() {
        let y = b.get(i % b.len().max(1)).copied().unwrap_or(0);
        diff |= usize::from(x ^ y);
    }
    diff == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_hooks_need_is_open_and_answers_are_not() {
        for p in [
            "/v1/hooks/claude",
            "/v1/sessions/s-1/calls",
            "/v1/evaluate",
            "/healthz",
        ] {
            assert!(open_without_panel_token(p), "{p}");
        }
        for p in [
            "/v1/sessions/s/calls/c/grant",
            "/v1/sessions/s/calls/c/deny",
            "/v1/trust",
            "/v1/sessions/s/pending",
            "/v1/sessions/s/events",
            "/v1/pending",
            "/v1/pending/stream",
            "/v1/sessions//calls",
            "/v1/sessions/a/b/calls",
            "/v1/hooks/",
            "/v1/hooks/a/b",
            "/v1/some-future-route",
            "/",
        ] {
            assert!(!open_without_panel_token(p), "{p}");
        }
    }

    #[test]
    fn compare() {
        assert!(constant_time_eq(b"secret", b"secret"));
        assert!(!constant_time_eq(b"secret", b"secreT"));
        assert!(!constant_time_eq(b"secret", b"secret2"));
        assert!(!constant_time_eq(b"", b"x"));
        assert!(!constant_time_eq(b"x", b""));
    }
}
