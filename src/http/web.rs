//! The web panel: a page served by `serve` at `/` that lists pending calls live and
//! answers them through the same grant and deny routes as every other client.
//!
//! Owns the page's routes (`/`, `/panel.js`, `/panel.css`, `/login`, and
//! `/login-link`, which mints a new link for a bearer-token holder), its sign-in and its
//! browser-facing defences. The page is plain HTML, CSS and JavaScript embedded in
//! the binary (`assets/panel/`): nothing is fetched from elsewhere and nothing is built.
//!
//! How a browser gets in: `serve` prints a one-time link `/login?t=CODE` (as notebook
//! servers do). The code is random, single-use, valid ten minutes, and is not the bearer
//! token. `GET /login` trades it for a session cookie (`HttpOnly; SameSite=Strict`,
//! random, held only in this process) and redirects to `/`. That cookie is a credential
//! for the panel's routes only (`cookie_credential`); every state-changing request made
//! with it must also carry the session's CSRF token (from the page's meta tag) and a
//! same-origin `Origin`, else 403. Every page answer carries a strict
//! Content-Security-Policy (no inline script or style anywhere), `nosniff` and
//! `frame-ancestors 'none'`; the page inserts every command, path and diff with
//! `textContent`, never as markup.

use std::collections::HashMap;
use std::io::Read;
use std::net::SocketAddr;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use axum::Router;
use axum::extract::{Query, Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde::Deserialize;
use sha2::{Digest, Sha256};

use super::{ApiError, AppState};

/// How long a login link stays valid.
pub const LOGIN_CODE_TTL: Duration = Duration::from_secs(10 * 60);

/// How long a browser session lasts after its last use.
pub const SESSION_IDLE: Duration = Duration::from_secs(12 * 60 * 60);

/// Unused login codes kept at most: minting more forgets the oldest.
const MAX_CODES: usize = 16;

/// Browser sessions kept at most: signing in more forgets the least recently used.
const MAX_SESSIONS: usize = 32;

/// The session cookie's name.
pub const COOKIE: &str = "khaelor_panel";

/// The header the page sends its CSRF token in.
pub const CSRF_HEADER: &str = "x-csrf-token";

/// The Content-Security-Policy of every page answer: the page's own script and style
/// files only, requests to this origin only, no frames, no inline anything.
pub const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

const PAGE: &str = include_str!("../../assets/panel/index.html");
const SCRIPT: &str = include_str!("../../assets/panel/panel.js");
const STYLE: &str = include_str!("../../assets/panel/panel.css");
const SIGNED_OUT: &str = include_str!("../../assets/panel/signed-out.html");

/// The page's paths: `/` checks the cookie itself, the rest need no credential (the
/// login code is one; the assets hold nothing secret).
const PAGE_PATHS: [&str; 4] = ["/", "/login", "/panel.js", "/panel.css"];

/// The sign-in state of the web panel: login codes not yet used and browser sessions.
/// Codes and cookies are kept as SHA-256 digests, so a lookup's timing says nothing
/// about how much of a guess was right.
#[derive(Debug, Default)]
pub struct WebAuth {
    inner: Mutex<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    /// Digest of a code → when it was minted.
    codes: HashMap<[u8; 32], Instant>,
    /// Digest of a cookie → the session.
    sessions: HashMap<[u8; 32], WebSession>,
}

#[derive(Debug, Clone)]
struct WebSession {
    csrf: String,
    last_used: Instant,
}

/// Why a login code could not be made.
#[derive(Debug, thiserror::Error)]
#[error("could not read random bytes from `/dev/urandom`: {0}")]
pub struct RandomError(#[from] std::io::Error);

/// `n` random bytes from the kernel, as lowercase hex.
fn random_hex(n: usize) -> Result<String, RandomError> {
    let mut buf = vec![0u8; n];
    std::fs::File::open("/dev/urandom")?.read_exact(&mut buf)?;
    Ok(buf.iter().map(|b| format!("{b:02x}")).collect())
}

fn digest(text: &str) -> [u8; 32] {
    Sha256::digest(text.as_bytes()).into()
}

impl WebAuth {
    pub fn new() -> Self {
        Self::default()
    }

    /// A fresh one-time login code (32 random bytes, hex), valid `LOGIN_CODE_TTL`.
    pub fn mint_login_code(&self) -> Result<String, RandomError> {
        let code = random_hex(32)?;
        let now = Instant::now();
        if let Ok(mut inner) = self.inner.lock() {
            inner
                .codes
                .retain(|_, minted| now.duration_since(*minted) < LOGIN_CODE_TTL);
            while inner.codes.len() >= MAX_CODES {
                let Some(oldest) = inner
                    .codes
                    .iter()
                    .min_by_key(|(_, minted)| **minted)
                    .map(|(k, _)| *k)
                else {
                    break;
                };
                inner.codes.remove(&oldest);
            }
            inner.codes.insert(digest(&code), now);
        }
        Ok(code)
    }

    /// Spends a login code: when it is known and not expired, it is forgotten and a new
    /// session is made; returns the session's cookie value. A code works once.
    fn redeem(&self, code: &str) -> Option<String> {
        let now = Instant::now();
        let mut inner = self.inner.lock().ok()?;
        let minted = inner.codes.remove(&digest(code))?;
        if now.duration_since(minted) >= LOGIN_CODE_TTL {
            return None;
        }
        let cookie = random_hex(32).ok()?;
        let csrf = random_hex(32).ok()?;
        inner
            .sessions
            .retain(|_, s| now.duration_since(s.last_used) < SESSION_IDLE);
        while inner.sessions.len() >= MAX_SESSIONS {
            let Some(oldest) = inner
                .sessions
                .iter()
                .min_by_key(|(_, s)| s.last_used)
                .map(|(k, _)| *k)
            else {
                break;
            };
            inner.sessions.remove(&oldest);
        }
        inner.sessions.insert(
            digest(&cookie),
            WebSession {
                csrf,
                last_used: now,
            },
        );
        Some(cookie)
    }

    /// The CSRF token of the live session whose cookie is `cookie`, refreshing its use.
    fn session(&self, cookie: &str) -> Option<String> {
        let now = Instant::now();
        let mut inner = self.inner.lock().ok()?;
        let key = digest(cookie);
        let live = inner
            .sessions
            .get(&key)
            .is_some_and(|s| now.duration_since(s.last_used) < SESSION_IDLE);
        if !live {
            inner.sessions.remove(&key);
            return None;
        }
        let s = inner.sessions.get_mut(&key)?;
        s.last_used = now;
        Some(s.csrf.clone())
    }
}

/// The login link `serve` prints for the address it listens on: a wildcard address is
/// reached through loopback.
pub fn login_url(bound: SocketAddr, code: &str) -> String {
    let host = match bound {
        SocketAddr::V4(a) if a.ip().is_unspecified() => format!("127.0.0.1:{}", a.port()),
        SocketAddr::V6(a) if a.ip().is_unspecified() => format!("[::1]:{}", a.port()),
        other => other.to_string(),
    };
    format!("http://{host}/login?t={code}")
}

/// The value of the session cookie, when the request carries one.
fn session_cookie(headers: &HeaderMap) -> Option<&str> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(name, _)| *name == COOKIE)
        .map(|(_, value)| value.trim())
}

/// Whether `origin` is exactly the origin of this request's `Host` (plain HTTP: the
/// service never terminates TLS itself). The `Host` was already checked to name this
/// machine or an allowed host (`hosts::guard`).
pub fn same_origin(headers: &HeaderMap, origin: &str) -> bool {
    let Some(host) = headers.get(header::HOST).and_then(|h| h.to_str().ok()) else {
        return false;
    };
    let origin = origin.trim();
    let host = host.trim();
    !host.is_empty()
        && origin
            .strip_prefix("http://")
            .is_some_and(|rest| rest.eq_ignore_ascii_case(host))
}

/// Whether the session cookie is a credential for this route: the page's routes only
/// (the pending list and its stream, a session's pending calls and events, grant and
/// deny). Trust, hooks, recording calls and the rest stay bearer-only.
fn panel_route(method: &Method, path: &str) -> bool {
    let segs: Vec<&str> = path.split('/').collect();
    matches!(
        (method, segs.as_slice()),
        (
            &Method::GET | &Method::HEAD,
            ["", "v1", "pending"]
                | ["", "v1", "pending", "stream"]
                | ["", "v1", "sessions", _, "events" | "pending"]
        ) | (
            &Method::POST,
            ["", "v1", "sessions", _, "calls", _, "grant" | "deny"]
        )
    )
}

/// What the session cookie says about a request (`auth::require_token` asks first).
pub enum CookieCredential {
    /// No cookie, a stale one, or a route the cookie does not open: the bearer token
    /// decides, as for any client.
    NotUsed,
    /// A page route, or a live session on a panel route (with CSRF token and
    /// same-origin `Origin` when it changes state).
    Allowed,
    /// A state-changing request that carries the cookie without passing the CSRF
    /// checks: 403, whatever else it carries.
    Refused(Response),
}

/// Decides what the session cookie is worth for `req`.
pub fn cookie_credential(state: &AppState, req: &Request) -> CookieCredential {
    let path = req.uri().path();
    if PAGE_PATHS.contains(&path) {
        return CookieCredential::Allowed;
    }
    let headers = req.headers();
    let Some(cookie) = session_cookie(headers) else {
        return CookieCredential::NotUsed;
    };
    let method = req.method();
    let changes_state = !matches!(*method, Method::GET | Method::HEAD | Method::OPTIONS);
    let session = state.web().session(cookie);
    if changes_state {
        // A browser attaches the cookie by itself, so a request that changes state
        // with it must prove it came from the page: its origin, and the token only
        // the page can read.
        if let Err(e) = check_csrf(headers, session.as_deref()) {
            return CookieCredential::Refused(e.into_response());
        }
    }
    match session {
        Some(_) if panel_route(method, path) => CookieCredential::Allowed,
        _ => CookieCredential::NotUsed,
    }
}

/// The two CSRF checks of a state-changing request made with the cookie. The tokens
/// are compared as digests, so the comparison's timing says nothing about the token.
fn check_csrf(headers: &HeaderMap, csrf: Option<&str>) -> Result<(), ApiError> {
    let origin = headers.get(header::ORIGIN).and_then(|o| o.to_str().ok());
    if !origin.is_some_and(|o| same_origin(headers, o)) {
        return Err(ApiError::forbidden(
            "cross_origin",
            "a state-changing request from the panel must carry this page's own `Origin`",
        ));
    }
    let given = headers.get(CSRF_HEADER).and_then(|v| v.to_str().ok());
    match (given, csrf) {
        (Some(given), Some(csrf)) if digest(given) == digest(csrf) => Ok(()),
        (_, None) => Err(ApiError::forbidden(
            "panel_signed_out",
            "the panel's session is over (the server restarted or it expired); open a new login link",
        )),
        _ => Err(ApiError::forbidden(
            "csrf_token",
            format!(
                "a state-changing request from the panel must carry the page's `{CSRF_HEADER}`"
            ),
        )),
    }
}

/// The page's routes, with its security headers.
pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/", get(page))
        .route("/login", get(login))
        .route("/panel.js", get(script))
        .route("/panel.css", get(style))
        .route("/login-link", post(new_login_link))
        .layer(middleware::from_fn(page_headers))
}

/// Every page answer: the CSP, no sniffing, no framing, no referrer (the login URL
/// holds a code), no caching (the page holds the CSRF token).
async fn page_headers(req: Request, next: Next) -> Response {
    let mut resp = next.run(req).await;
    let h = resp.headers_mut();
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CSP),
    );
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    h.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    h.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    h.insert(
        "cross-origin-opener-policy",
        HeaderValue::from_static("same-origin"),
    );
    h.insert(
        "cross-origin-resource-policy",
        HeaderValue::from_static("same-origin"),
    );
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    resp
}

/// The panel page with the session's CSRF token in its meta tag; without a live
/// session, a short page saying how to sign in.
async fn page(State(state): State<AppState>, headers: HeaderMap) -> Response {
    let csrf = session_cookie(&headers).and_then(|c| state.web().session(c));
    match csrf {
        // The token is hex from `random_hex`: nothing in it needs escaping.
        Some(csrf) => html(StatusCode::OK, PAGE.replace("{{CSRF}}", &csrf)),
        None => html(StatusCode::UNAUTHORIZED, SIGNED_OUT.to_string()),
    }
}

fn html(status: StatusCode, body: String) -> Response {
    (
        status,
        [(header::CONTENT_TYPE, "text/html; charset=utf-8")],
        body,
    )
        .into_response()
}

#[derive(Deserialize)]
struct LoginQuery {
    #[serde(default)]
    t: String,
}

/// Trades a one-time code for the session cookie and sends the browser to `/`.
async fn login(State(state): State<AppState>, Query(q): Query<LoginQuery>) -> Response {
    let Some(cookie) = (!q.t.is_empty())
        .then(|| state.web().redeem(&q.t))
        .flatten()
    else {
        tracing::warn!("a panel login link was refused (unknown, used or expired)");
        return html(StatusCode::FORBIDDEN, SIGNED_OUT.to_string());
    };
    let set = format!("{COOKIE}={cookie}; HttpOnly; SameSite=Strict; Path=/");
    let Ok(set) = HeaderValue::from_str(&set) else {
        return ApiError::internal("session cookie is not a header value").into_response();
    };
    let mut resp = StatusCode::SEE_OTHER.into_response();
    resp.headers_mut().insert(header::SET_COOKIE, set);
    resp.headers_mut()
        .insert(header::LOCATION, HeaderValue::from_static("/"));
    resp
}

/// A fresh one-time login link, for a client holding the bearer token (the first link
/// `serve` printed is single-use and expires): `{"url", "expiresInSecs"}`. The link
/// names the host the request was sent to, which `hosts::guard` already checked.
async fn new_login_link(State(state): State<AppState>, headers: HeaderMap) -> Response {
    let Some(host) = headers
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .filter(|h| !h.is_empty())
    else {
        return ApiError::bad_request("missing_host", "the request has no `Host` header")
            .into_response();
    };
    match state.web().mint_login_code() {
        Ok(code) => axum::Json(serde_json::json!({
            "url": format!("http://{host}/login?t={code}"),
            "expiresInSecs": LOGIN_CODE_TTL.as_secs(),
        }))
        .into_response(),
        Err(e) => ApiError::internal(e).into_response(),
    }
}

async fn script() -> Response {
    (
        [(header::CONTENT_TYPE, "text/javascript; charset=utf-8")],
        SCRIPT,
    )
        .into_response()
}

async fn style() -> Response {
    ([(header::CONTENT_TYPE, "text/css; charset=utf-8")], STYLE).into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_code_works_once_and_makes_a_session() {
        let auth = WebAuth::new();
        let code = auth.mint_login_code().unwrap();
        assert_eq!(code.len(), 64);
        assert!(auth.redeem("not-a-code").is_none());
        let cookie = auth.redeem(&code).unwrap();
        assert_ne!(cookie, code);
        assert!(auth.redeem(&code).is_none(), "a code is single-use");
        let csrf = auth.session(&cookie).unwrap();
        assert_eq!(csrf.len(), 64);
        assert_ne!(csrf, cookie);
        assert!(auth.session(&code).is_none());
    }

    #[test]
    fn an_expired_code_is_refused() {
        let auth = WebAuth::new();
        let code = auth.mint_login_code().unwrap();
        if let Ok(mut inner) = auth.inner.lock() {
            for minted in inner.codes.values_mut() {
                *minted = Instant::now()
                    .checked_sub(LOGIN_CODE_TTL + Duration::from_secs(1))
                    .unwrap();
            }
        }
        assert!(auth.redeem(&code).is_none());
    }

    #[test]
    fn codes_and_sessions_are_bounded() {
        let auth = WebAuth::new();
        let first = auth.mint_login_code().unwrap();
        for _ in 0..MAX_CODES {
            auth.mint_login_code().unwrap();
        }
        assert!(
            auth.redeem(&first).is_none(),
            "the oldest code was forgotten"
        );
        let mut cookies = Vec::new();
        for _ in 0..=MAX_SESSIONS {
            let code = auth.mint_login_code().unwrap();
            cookies.push(auth.redeem(&code).unwrap());
        }
        assert!(auth.session(&cookies[0]).is_none());
        assert!(auth.session(cookies.last().unwrap()).is_some());
    }

    #[test]
    fn cookie_is_found_among_others() {
        let mut h = HeaderMap::new();
        h.insert(
            header::COOKIE,
            HeaderValue::from_static("a=1; khaelor_panel=abc ; b=2"),
        );
        assert_eq!(session_cookie(&h), Some("abc"));
        let mut h = HeaderMap::new();
        h.insert(
            header::COOKIE,
            HeaderValue::from_static("xkhaelor_panel=abc"),
        );
        assert_eq!(session_cookie(&h), None);
    }

    #[test]
    fn origins() {
        let mut h = HeaderMap::new();
        h.insert(header::HOST, HeaderValue::from_static("127.0.0.1:8790"));
        assert!(same_origin(&h, "http://127.0.0.1:8790"));
        for bad in [
            "http://127.0.0.1:8791",
            "https://127.0.0.1:8790",
            "http://localhost:8790",
            "null",
            "",
            "http://127.0.0.1:8790.evil.example",
        ] {
            assert!(!same_origin(&h, bad), "{bad}");
        }
        assert!(!same_origin(&HeaderMap::new(), "http://127.0.0.1:8790"));
    }

    #[test]
    fn the_cookie_opens_panel_routes_only() {
        for (m, p) in [
            (Method::GET, "/v1/pending"),
            (Method::GET, "/v1/pending/stream"),
            (Method::GET, "/v1/sessions/s1/events"),
            (Method::GET, "/v1/sessions/s1/pending"),
            (Method::POST, "/v1/sessions/s1/calls/c1/grant"),
            (Method::POST, "/v1/sessions/s1/calls/c1/deny"),
        ] {
            assert!(panel_route(&m, p), "{m} {p}");
        }
        for (m, p) in [
            (Method::POST, "/v1/trust"),
            (Method::POST, "/v1/sessions/s1/calls"),
            (Method::POST, "/v1/hooks/claude"),
            (Method::POST, "/v1/evaluate"),
            (Method::GET, "/v1/rules"),
            (Method::GET, "/v1/sessions/s1/calls/c1/grant"),
            (Method::POST, "/v1/sessions/s1/calls/c1/grant/x"),
            (Method::POST, "/v1/pending"),
        ] {
            assert!(!panel_route(&m, p), "{m} {p}");
        }
    }

    #[test]
    fn login_urls() {
        let code = "ab";
        assert_eq!(
            login_url("0.0.0.0:8790".parse().unwrap(), code),
            "http://127.0.0.1:8790/login?t=ab"
        );
        assert_eq!(
            login_url("[::]:1".parse().unwrap(), code),
            "http://[::1]:1/login?t=ab"
        );
        assert_eq!(
            login_url("127.0.0.1:5".parse().unwrap(), code),
            "http://127.0.0.1:5/login?t=ab"
        );
    }
}
