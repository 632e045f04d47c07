//! `GET /v1/audit`: the audit trail of every session, oldest first, filtered and paged
//! (the records are `session::audit`'s; this module only reads the query and answers).
//!
//! Needs the panel token (or the operator's): the trail shows every command the agents
//! ran and who answered what.

use axum::Json;
use axum::extract::{RawQuery, State};
use serde::Serialize;
use utoipa::ToSchema;

use super::AppState;
use super::error::{ApiError, ErrorBody};
use super::hooks::percent_decode;
use crate::policy::rules::Action;
use crate::session::audit::{self, AuditEvent, AuditFilter, AuditRecord, Cursor};

/// One page of the audit trail.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct AuditResponse {
    pub records: Vec<AuditRecord>,
    /// Pass as `after` for the next page; absent on the last page.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next: Option<String>,
}

/// The query: every key at most once, none unknown (a misspelt filter must not widen
/// the answer to everything).
struct AuditQuery {
    filter: AuditFilter,
    after: Option<Cursor>,
    limit: usize,
}

fn parse_query(query: Option<&str>) -> Result<AuditQuery, String> {
    let mut q = AuditQuery {
        filter: AuditFilter::default(),
        after: None,
        limit: audit::DEFAULT_PAGE,
    };
    let mut seen: Vec<String> = Vec::new();
    for pair in query.unwrap_or("").split('&').filter(|p| !p.is_empty()) {
        let (key, raw) = pair.split_once('=').unwrap_or((pair, ""));
        let key = percent_decode(key);
        let value = percent_decode(raw);
        if seen.contains(&key) {
            return Err(format!("`{key}` is given twice"));
        }
        seen.push(key.clone());
        let f = &mut q.filter;
        match key.as_str() {
            "since" => f.since = Some(audit::parse_time(&value)?),
            "until" => f.until = Some(audit::parse_time(&value)?),
            "session" => {
                if !crate::session::valid_id(&value) {
                    return Err(format!(
                        "`session={value}` is not a session id (1 to 128 of A-Z a-z 0-9 _ -)"
                    ));
                }
                f.session = Some(value);
            }
            "decision" => {
                f.decision = Some(
                    serde_json::from_value::<Action>(serde_json::Value::String(value.clone()))
                        .map_err(|_| {
                            format!("`decision={value}`: expected allow, contain, ask or deny")
                        })?,
                );
            }
            "event" => {
                f.event = Some(
                    serde_json::from_value::<AuditEvent>(serde_json::Value::String(value.clone()))
                        .map_err(|_| {
                            format!(
                                "`event={value}`: expected toolRequested, permissionRequested, toolApproved, permissionGranted, permissionDenied or toolFailed"
                            )
                        })?,
                );
            }
            "capability" => {
                let ok = !value.is_empty()
                    && value.split('.').all(|part| {
                        !part.is_empty()
                            && part.bytes().all(|b| b.is_ascii_lowercase() || b == b'_')
                    });
                if !ok {
                    return Err(format!(
                        "`capability={value}` is not a capability or family (`process.execute`, `file.read`)"
                    ));
                }
                f.capability = Some(value);
            }
            "host" => {
                if value.is_empty() || value.len() > 64 {
                    return Err("`host=` names a host (`claude`, `codex`, …)".to_string());
                }
                f.host = Some(value);
            }
            "after" => q.after = Some(Cursor::decode(&value)?),
            "limit" => {
                q.limit = value
                    .parse::<usize>()
                    .ok()
                    .filter(|n| (1..=audit::MAX_PAGE).contains(n))
                    .ok_or_else(|| format!("`limit={value}`: expected 1 to {}", audit::MAX_PAGE))?;
            }
            other => {
                return Err(format!(
                    "unknown query parameter `{other}` (since, until, session, decision, event, capability, host, after, limit)"
                ));
            }
        }
    }
    Ok(q)
}

/// The audit trail: every event of every session (a decision, an answer, a grant) with
/// its host, user, machine, project, the rule that decided and its source.
#[utoipa::path(get, path = "/v1/audit", tag = "sessions",
    params(
        ("since" = Option<String>, Query, description = "Records at or after this time (RFC 3339 UTC, or a date)"),
        ("until" = Option<String>, Query, description = "Records before this time"),
        ("session" = Option<String>, Query, description = "One session's records"),
        ("decision" = Option<String>, Query, description = "`allow`, `contain`, `ask` or `deny`"),
        ("event" = Option<String>, Query, description = "One event type (`permissionDenied`, …)"),
        ("capability" = Option<String>, Query, description = "Records with a request of this capability or family (`file.read` keeps `file.read.secret`)"),
        ("host" = Option<String>, Query, description = "Calls from this agent host"),
        ("after" = Option<String>, Query, description = "The `next` of the previous page"),
        ("limit" = Option<usize>, Query, description = "Records per page, 1 to 1000 (default 100)"),
    ),
    responses(
        (status = 200, description = "One page of records, oldest first", body = AuditResponse),
        (status = 400, description = "A malformed or unknown query parameter (`bad_query`)", body = ErrorBody),
        (status = 401, description = "Missing or invalid bearer token", body = ErrorBody),
        (status = 503, description = "At the concurrency cap (`overloaded`) or over the request timeout (`request_timeout`); `Retry-After` says when to retry", body = ErrorBody),
    ))]
pub async fn audit(
    State(state): State<AppState>,
    RawQuery(query): RawQuery,
) -> Result<Json<AuditResponse>, ApiError> {
    let q = parse_query(query.as_deref()).map_err(|m| ApiError::bad_request("bad_query", m))?;
    let dir = state.config().state_dir.join("sessions");
    let page = state
        .blocking(move || {
            audit::blocking_query(
                &dir,
                &q.filter,
                q.after.as_ref(),
                q.limit,
                Some(audit::Origin::current()),
            )
        })
        .await?
        .map_err(ApiError::internal)?;
    Ok(Json(AuditResponse {
        records: page.records,
        next: page.next.map(|c| c.encode()),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_query_is_read_strictly() {
        let q = parse_query(Some(
            "since=2026-12-05&decision=deny&capability=file.read&host=claude&limit=5",
        ))
        .unwrap();
        assert_eq!(q.filter.since.as_deref(), Some("2026-12-05T00:00:00.000Z"));
        assert_eq!(q.filter.decision, Some(Action::Deny));
        assert_eq!(q.limit, 5);
        for bad in [
            "sesion=x",
            "decision=maybe",
            "limit=0",
            "limit=1001",
            "since=now",
            "session=a/b",
            "capability=File",
            "host=a&host=b",
            "after=garbage",
        ] {
            assert!(parse_query(Some(bad)).is_err(), "{bad}");
        }
        assert!(parse_query(None).is_ok());
    }
}
