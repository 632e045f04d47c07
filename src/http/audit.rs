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
use super::error::{ApiError, ApiJson, ErrorBody};
use super::hooks::percent_decode;
use crate::policy::rules::Action;
use crate::session::Backend;
use crate::session::audit::{
    self, AuditError, AuditEvent, AuditFilter, AuditRecord, Cursor, Received,
};

/// Records another decider sends at most per request.
pub const MAX_RECEIVED: usize = 1000;

/// A batch of records from another decider's outbox (`hook --hub`).
#[derive(Debug, serde::Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AuditBatch {
    #[schema(value_type = Vec<ReceivedRecordSchema>, max_items = 1000)]
    pub records: Vec<AuditRecord>,
}

/// A record as a decider hands it over: an `AuditRecord` whose time, session and
/// machine can file it (the schema of `POST /v1/audit/records`).
#[derive(ToSchema)]
#[schema(as = ReceivedRecord)]
#[serde(rename_all = "camelCase")]
#[allow(dead_code)]
pub struct ReceivedRecordSchema {
    #[schema(pattern = "^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\\.[0-9]{3}Z$")]
    at: String,
    #[schema(pattern = "^[A-Za-z0-9_-]{1,128}$")]
    session_id: String,
    #[schema(minimum = 1, maximum = 9_007_199_254_740_992_u64)]
    seq: u64,
    event: AuditEvent,
    call_id: String,
    /// The machine that decided: required here, it files the record.
    #[schema(pattern = "^[A-Za-z0-9_-][A-Za-z0-9._-]{0,252}$")]
    machine: String,
    host: Option<String>,
    user: Option<String>,
    project: Option<String>,
    tool: Option<String>,
    decision: Option<crate::model::schema::ActionSchema>,
    by: Option<String>,
    scope: Option<crate::session::GrantScope>,
    pattern: Option<String>,
    #[serde(default)]
    requests: Vec<audit::AuditRequest>,
    message: Option<String>,
}

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
            "machine" => {
                if !audit::valid_machine(&value) {
                    return Err(format!("`machine={value}` is not a machine name"));
                }
                f.machine = Some(value);
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
                    "unknown query parameter `{other}` (since, until, session, decision, event, capability, host, machine, after, limit)"
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
        ("since" = Option<String>, Query, description = "Records at or after this time (RFC 3339 UTC, or a date)", pattern = "^[0-9]{4}-[0-9]{2}-[0-9]{2}(T[0-9]{2}:[0-9]{2}:[0-9]{2}(\\.[0-9]{3})?Z)?$"),
        ("until" = Option<String>, Query, description = "Records before this time", pattern = "^[0-9]{4}-[0-9]{2}-[0-9]{2}(T[0-9]{2}:[0-9]{2}:[0-9]{2}(\\.[0-9]{3})?Z)?$"),
        ("session" = Option<String>, Query, description = "One session's records", pattern = "^[A-Za-z0-9_-]{1,128}$"),
        ("decision" = Option<String>, Query, description = "`allow`, `contain`, `ask` or `deny`", pattern = "^(allow|contain|ask|deny)$"),
        ("event" = Option<String>, Query, description = "One event type (`permissionDenied`, …)", pattern = "^(toolRequested|permissionRequested|toolApproved|permissionGranted|permissionDenied|toolFailed)$"),
        ("capability" = Option<String>, Query, description = "Records with a request of this capability or family (`file.read` keeps `file.read.secret`)", pattern = "^[a-z_]+(\\.[a-z_]+)*$"),
        ("host" = Option<String>, Query, description = "Calls from this agent host", min_length = 1, max_length = 64),
        ("machine" = Option<String>, Query, description = "Calls decided on this machine", pattern = "^[A-Za-z0-9_-][A-Za-z0-9._-]{0,252}$"),
        ("after" = Option<String>, Query, description = "The `next` of the previous page", pattern = "^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\\.[0-9]{3}Z~[A-Za-z0-9_-]{1,128}~[0-9]{1,18}~([A-Za-z0-9_-][A-Za-z0-9._-]{0,252})?$"),
        ("limit" = Option<usize>, Query, description = "Records per page, 1 to 1000 (default 100)", minimum = 1, maximum = 1000),
    ),
    responses(
        (status = 200, description = "One page of records, oldest first", body = AuditResponse),
        (status = 400, description = "A malformed or unknown query parameter (`bad_query`)", body = ErrorBody),
        (status = 401, description = "Missing or invalid bearer token", body = ErrorBody),
        (status = 503, description = "The store does not answer (`store_unavailable`), at the concurrency cap (`overloaded`) or over the request timeout (`request_timeout`); `Retry-After` says when to retry", body = ErrorBody),
    ))]
pub async fn audit(
    State(state): State<AppState>,
    RawQuery(query): RawQuery,
) -> Result<Json<AuditResponse>, ApiError> {
    let q = parse_query(query.as_deref()).map_err(|m| ApiError::bad_request("bad_query", m))?;
    let sessions = state.config().state_dir.join("sessions");
    let received = state.config().state_dir.join("audit");
    let backend = state.sessions().backend().clone();
    let page = state
        .blocking(move || match backend {
            Backend::Files => audit::blocking_query(
                &sessions,
                Some(&received),
                &q.filter,
                q.after.as_ref(),
                q.limit,
                Some(audit::Origin::current()),
            )
            .map_err(|e| AuditError::Store(e.to_string())),
            Backend::Postgres(store) => {
                crate::session::blocking_query_pg(&store, &q.filter, q.after.as_ref(), q.limit)
            }
        })
        .await?
        .map_err(store_error)?;
    Ok(Json(AuditResponse {
        records: page.records,
        next: page.next.map(|c| c.encode()),
    }))
}

/// Stores the audit records another decider sends from its outbox (`hook --hub`),
/// each once (by machine, session and sequence number). Recording is what a decider
/// does, never answering: like recording a call, it needs no panel token on loopback.
#[utoipa::path(post, path = "/v1/audit/records", tag = "sessions",
    request_body = AuditBatch,
    responses(
        (status = 200, description = "How many records were stored, and how many were already there", body = Received),
        (status = 400, description = "Malformed body, or a record without a valid machine, session id or time", body = ErrorBody),
        (status = 401, description = "Missing or invalid bearer token", body = ErrorBody),
        (status = 413, description = "Body over 1 MiB", body = ErrorBody),
        (status = 415, description = "Content type is not JSON", body = ErrorBody),
        (status = 422, description = "More than 1000 records (`too_many_records`)", body = ErrorBody),
        (status = 503, description = "The store does not answer (`store_unavailable`)", body = ErrorBody),
    ))]
pub async fn receive(
    State(state): State<AppState>,
    ApiJson(batch): ApiJson<AuditBatch>,
) -> Result<Json<Received>, ApiError> {
    if batch.records.len() > MAX_RECEIVED {
        return Err(ApiError::unprocessable(
            "too_many_records",
            format!(
                "{} records in one request; send at most {MAX_RECEIVED}",
                batch.records.len()
            ),
        ));
    }
    let dir = state.config().state_dir.join("audit");
    let backend = state.sessions().backend().clone();
    let received = state
        .blocking(move || match backend {
            Backend::Files => audit::blocking_receive(&dir, batch.records),
            Backend::Postgres(store) => crate::session::blocking_receive_pg(&store, batch.records),
        })
        .await?
        .map_err(store_error)?;
    Ok(Json(received))
}

/// A record that cannot be filed is the request's fault (400); a store that fails is
/// a 503, as on every route that needs it.
fn store_error(e: AuditError) -> ApiError {
    match e {
        AuditError::Bad(m) => ApiError::bad_request("bad_record", m),
        AuditError::Store(m) => {
            tracing::error!(error = %m, "audit trail unavailable");
            ApiError::new(
                axum::http::StatusCode::SERVICE_UNAVAILABLE,
                "store_unavailable",
                "the audit trail's store is unavailable, see the server log",
            )
        }
    }
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
