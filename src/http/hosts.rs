//! What the service believes about who is calling: a DNS-rebinding guard.
//!
//! Owns one middleware: the `Host` header must name this machine (an IP literal,
//! `localhost` or a `*.localhost` name, which browsers resolve to loopback themselves)
//! or a name the operator allowed with `--allowed-host`; a request that carries a
//! browser `Origin` is refused unless that origin was allowed with `--allowed-origin`
//! or is this service's own (the web panel's page, `http://` + the checked `Host`).
//! Both refusals are 403 in the API's error shape. A web page that rebinds its own name
//! to 127.0.0.1 sends its own name as `Host` and its own origin as `Origin`, so it
//! fails both checks; non-browser clients send no `Origin`.

use std::net::IpAddr;

use axum::extract::{Request, State};
use axum::http::header;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::{ApiError, AppState};

/// The host part of a `Host` header value (`name:port`, `[v6]:port`, `v4`), lowercased.
fn host_name(value: &str) -> String {
    let v = value.trim();
    let host = if let Some(rest) = v.strip_prefix('[') {
        rest.split(']').next().unwrap_or_default()
    } else {
        match v.rsplit_once(':') {
            Some((h, port)) if port.bytes().all(|b| b.is_ascii_digit()) => h,
            _ => v,
        }
    };
    host.trim_end_matches('.').to_ascii_lowercase()
}

/// Whether a `Host` name may reach the service.
pub fn host_allowed(value: &str, allowed: &[String]) -> bool {
    let name = host_name(value);
    name.parse::<IpAddr>().is_ok()
        || name == "localhost"
        || name.ends_with(".localhost")
        || allowed.iter().any(|a| a.eq_ignore_ascii_case(&name))
}

/// Whether a browser `Origin` may call the service: only the exact origins allowed.
pub fn origin_allowed(value: &str, allowed: &[String]) -> bool {
    let v = value.trim().trim_end_matches('/');
    allowed
        .iter()
        .any(|a| a.trim_end_matches('/').eq_ignore_ascii_case(v))
}

/// The middleware: 403 `host_not_allowed` or `origin_not_allowed`, else the route.
pub async fn guard(State(state): State<AppState>, req: Request, next: Next) -> Response {
    let cfg = state.config();
    let headers = req.headers();
    // A request without `Host` is not from a browser (browsers always send it).
    if let Some(h) = headers.get(header::HOST) {
        let ok = h
            .to_str()
            .is_ok_and(|v| host_allowed(v, &cfg.allowed_hosts));
        if !ok {
            return ApiError::forbidden(
                "host_not_allowed",
                format!(
                    "the `Host` header `{}` is not a loopback name or an allowed host; start the server with `--allowed-host NAME` to accept it",
                    String::from_utf8_lossy(h.as_bytes())
                ),
            )
            .into_response();
        }
    }
    if let Some(o) = headers.get(header::ORIGIN) {
        // The service's own origin is its own page (`web`): it serves nothing else a
        // browser could run.
        let ok = o.to_str().is_ok_and(|v| {
            origin_allowed(v, &cfg.allowed_origins) || super::web::same_origin(headers, v)
        });
        if !ok {
            return ApiError::forbidden(
                "origin_not_allowed",
                format!(
                    "requests from the browser origin `{}` are refused; start the server with `--allowed-origin ORIGIN` to accept it",
                    String::from_utf8_lossy(o.as_bytes())
                ),
            )
            .into_response();
        }
    }
    next.run(req).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts() {
        let allowed = vec!["perm.internal".to_string()];
        for ok in [
            "127.0.0.1:8790",
            "localhost:8790",
            "LOCALHOST",
            "[::1]:8790",
            "app.localhost:1",
            "10.0.0.5:8790",
            "perm.internal:8790",
        ] {
            assert!(host_allowed(ok, &allowed), "{ok}");
        }
        for bad in [
            "evil.example:8790",
            "localhost.evil.example",
            "127.0.0.1.nip.io",
            "",
        ] {
            assert!(!host_allowed(bad, &allowed), "{bad}");
        }
    }

    #[test]
    fn origins() {
        let allowed = vec!["http://localhost:3000".to_string()];
        assert!(origin_allowed("http://localhost:3000", &allowed));
        assert!(!origin_allowed("http://localhost:3001", &allowed));
        assert!(!origin_allowed("null", &allowed));
        assert!(!origin_allowed("http://evil.example", &[]));
    }
}
