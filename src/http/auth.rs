//! Bearer-token authentication of the service.
//!
//! Owns the check only: which token is configured and whether the server may start
//! without one is the `serve` command's business. `/healthz` (container health checks)
//! and `/openapi.yaml` (a public contract) are open; everything else needs the token
//! when one is set. The web panel's session cookie stands in for the token on the
//! panel's routes (`web::cookie_credential`).

use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::{ApiError, AppState};

/// Paths answered without a token.
const OPEN_PATHS: [&str; 2] = ["/healthz", "/openapi.yaml"];

pub async fn require_token(State(state): State<AppState>, req: Request, next: Next) -> Response {
    // The web panel's session cookie (with its CSRF checks) is a credential for the
    // panel's own routes; everything else is the bearer token's business below.
    match super::web::cookie_credential(&state, &req) {
        super::web::CookieCredential::Allowed => return next.run(req).await,
        super::web::CookieCredential::Refused(resp) => return resp,
        super::web::CookieCredential::NotUsed => {}
    }
    let Some(token) = state.config().token.as_deref() else {
        return next.run(req).await;
    };
    if OPEN_PATHS.contains(&req.uri().path()) {
        return next.run(req).await;
    }
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
    fn compare() {
        assert!(constant_time_eq(b"secret", b"secret"));
        assert!(!constant_time_eq(b"secret", b"secreT"));
        assert!(!constant_time_eq(b"secret", b"secret2"));
        assert!(!constant_time_eq(b"", b"x"));
        assert!(!constant_time_eq(b"x", b""));
    }
}
