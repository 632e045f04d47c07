//! The PostgreSQL session store (`serve --store postgres://…`): the same sessions and
//! append-only events as the files of the state directory, in two tables several
//! `serve` replicas share.
//!
//! Owns the connection pool, the schema migrations (versioned SQL files in
//! `migrations/`, run by refinery at start-up under an advisory lock so replicas
//! starting together migrate once), and the few statements the session log needs:
//! read a session's events (all, or from a sequence number on), append events, mark a
//! compaction, list the sessions with a call waiting. It knows nothing of calls or
//! decisions beyond the columns it copies out of each event for queries; the fold
//! into call states stays `Session::apply`, the same for both stores.
//!
//! Sequence numbers are gap-free and never repeated under concurrent writers in many
//! processes: an append locks the session's row, checks that the session's counter is
//! where its writer last saw it (else nothing is written and the writer catches up
//! first), inserts its events from there and moves the counter, in one transaction.
//! Every append also sends `NOTIFY khaelor_events` with `<session id> <last seq>`, so
//! replicas follow each other without polling.
//!
//! Functions that wait on the database are named `blocking_*` and must run on the
//! blocking pool (they drive the async client with the runtime's handle).

use std::time::Duration;

use deadpool_postgres::{Manager, ManagerConfig, Pool, RecyclingMethod};
use tokio_postgres::NoTls;

use super::{Event, EventKind};

mod embedded {
    refinery::embed_migrations!("src/session/migrations");
}

/// The channel every append notifies, with `<session id> <last seq>` as payload.
pub const CHANNEL: &str = "khaelor_events";

/// Connections the pool keeps at most.
const POOL_SIZE: usize = 16;
/// How long connecting (and waiting for a pooled connection) may take before the call
/// fails: a database that is away fails calls closed rather than holding them.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// The advisory lock key replicas take while migrating (any constant both agree on).
const MIGRATE_LOCK: i64 = 0x6b68_6165_6c6f_7201;

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("`{shown}` is not a usable PostgreSQL URL: {reason}")]
    BadUrl { shown: String, reason: String },
    #[error("could not reach the PostgreSQL store `{shown}`: {reason}")]
    Unreachable { shown: String, reason: String },
    #[error("could not migrate the PostgreSQL store's schema: {0}")]
    Migrate(String),
    #[error("the PostgreSQL store failed: {0}")]
    Query(String),
}

fn query_err(e: impl std::fmt::Display) -> StoreError {
    StoreError::Query(e.to_string())
}

/// A pool of connections to one database, and the runtime that drives them.
pub struct PgStore {
    pool: Pool,
    config: tokio_postgres::Config,
    handle: tokio::runtime::Handle,
    shown: String,
}

impl std::fmt::Debug for PgStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgStore").field("url", &self.shown).finish()
    }
}

/// The URL with its password (if any) replaced, for messages and logs.
pub fn redact(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_string();
    };
    let (auth, host) = match rest.rsplit_once('@') {
        Some((auth, host)) => (auth, host),
        None => return url.to_string(),
    };
    let user = auth.split_once(':').map_or(auth, |(u, _)| u);
    if auth.contains(':') {
        format!("{scheme}://{user}:***@{host}")
    } else {
        format!("{scheme}://{user}@{host}")
    }
}

impl PgStore {
    /// Connects to `url`, checks the database answers, and brings its schema up to
    /// date. Must run inside the runtime whose handle the store keeps.
    pub async fn connect(url: &str) -> Result<PgStore, StoreError> {
        let shown = redact(url);
        let mut config: tokio_postgres::Config =
            url.parse()
                .map_err(|e: tokio_postgres::Error| StoreError::BadUrl {
                    shown: shown.clone(),
                    reason: e.to_string(),
                })?;
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(CONNECT_TIMEOUT);
        }
        config.keepalives(true);
        let unreachable = |e: &dyn std::fmt::Display| StoreError::Unreachable {
            shown: shown.clone(),
            reason: e.to_string(),
        };
        // Migrate on a connection of its own, under an advisory lock: replicas that
        // start together run each migration once.
        let (mut client, conn) = config.connect(NoTls).await.map_err(|e| unreachable(&e))?;
        let driver = tokio::spawn(async move {
            let _ = conn.await;
        });
        client
            .execute("SELECT pg_advisory_lock($1)", &[&MIGRATE_LOCK])
            .await
            .map_err(|e| unreachable(&e))?;
        let migrated = embedded::migrations::runner()
            .run_async(&mut client)
            .await
            .map_err(|e| StoreError::Migrate(e.to_string()));
        let _ = client
            .execute("SELECT pg_advisory_unlock($1)", &[&MIGRATE_LOCK])
            .await;
        drop(client);
        driver.abort();
        let report = migrated?;
        for m in report.applied_migrations() {
            tracing::info!(
                version = m.version(),
                name = m.name(),
                "store migration applied"
            );
        }
        let manager = Manager::from_config(
            config.clone(),
            NoTls,
            ManagerConfig {
                recycling_method: RecyclingMethod::Fast,
            },
        );
        let pool = Pool::builder(manager)
            .max_size(POOL_SIZE)
            .runtime(deadpool_postgres::Runtime::Tokio1)
            .wait_timeout(Some(CONNECT_TIMEOUT))
            .create_timeout(Some(CONNECT_TIMEOUT))
            .build()
            .map_err(|e| unreachable(&e))?;
        Ok(PgStore {
            pool,
            config,
            handle: tokio::runtime::Handle::current(),
            shown,
        })
    }

    /// The connection settings (for the replicas' listener).
    pub fn config(&self) -> &tokio_postgres::Config {
        &self.config
    }

    /// The URL, password hidden.
    pub fn shown(&self) -> &str {
        &self.shown
    }

    async fn client(&self) -> Result<deadpool_postgres::Object, StoreError> {
        self.pool.get().await.map_err(query_err)
    }

    /// Whether the database answers now.
    pub async fn ping(&self) -> bool {
        match self.client().await {
            Ok(c) => c.simple_query("SELECT 1").await.is_ok(),
            Err(_) => false,
        }
    }

    /// The events of session `id` from `from_seq` on, in order, compacted ones left
    /// out; and a warning for each row that is not an event this version reads.
    pub fn blocking_events(
        &self,
        id: &str,
        from_seq: u64,
    ) -> Result<(Vec<Event>, Vec<String>), StoreError> {
        self.handle.block_on(async {
            let client = self.client().await?;
            let rows = client
                .query(
                    "SELECT seq, body::text FROM events \
                     WHERE session_id = $1 AND seq >= $2 AND NOT compacted ORDER BY seq",
                    &[&id, &to_i64(from_seq)],
                )
                .await
                .map_err(query_err)?;
            Ok(decode(id, rows))
        })
    }

    /// The events of session `id` with the sequence numbers `seqs`.
    pub fn blocking_events_at(&self, id: &str, seqs: &[u64]) -> Result<Vec<Event>, StoreError> {
        let seqs: Vec<i64> = seqs.iter().map(|s| to_i64(*s)).collect();
        self.handle.block_on(async {
            let client = self.client().await?;
            let rows = client
                .query(
                    "SELECT seq, body::text FROM events \
                     WHERE session_id = $1 AND seq = ANY($2) ORDER BY seq",
                    &[&id, &seqs],
                )
                .await
                .map_err(query_err)?;
            Ok(decode(id, rows).0)
        })
    }

    /// Appends `events` (numbered from `expected`, each with the host of its call) to
    /// session `id`, creating the session on its first event. `Ok(false)` when the
    /// session's counter is no longer `expected` (another writer appended since this
    /// copy last read it): nothing is written.
    pub fn blocking_append(
        &self,
        id: &str,
        expected: u64,
        events: &[(Event, Option<String>)],
    ) -> Result<bool, StoreError> {
        self.handle.block_on(async {
            let mut client = self.client().await?;
            let tx = client.transaction().await.map_err(query_err)?;
            if !lock_counter(&tx, id, expected).await? {
                return Ok(false);
            }
            let next = insert_events(&tx, id, events).await?;
            finish(tx, id, next.unwrap_or(expected)).await?;
            Ok(true)
        })
    }

    /// Marks every event of session `id` not in `keep` compacted and appends `marker`
    /// (numbered `expected`). `Ok(false)` as for `blocking_append`.
    pub fn blocking_compact(
        &self,
        id: &str,
        expected: u64,
        keep: &[u64],
        marker: &Event,
    ) -> Result<bool, StoreError> {
        let keep: Vec<i64> = keep.iter().map(|s| to_i64(*s)).collect();
        self.handle.block_on(async {
            let mut client = self.client().await?;
            let tx = client.transaction().await.map_err(query_err)?;
            if !lock_counter(&tx, id, expected).await? {
                return Ok(false);
            }
            tx.execute(
                "UPDATE events SET compacted = true \
                 WHERE session_id = $1 AND NOT compacted AND seq <> ALL($2)",
                &[&id, &keep],
            )
            .await
            .map_err(query_err)?;
            let next = insert_events(&tx, id, &[(marker.clone(), None)]).await?;
            finish(tx, id, next.unwrap_or(expected)).await?;
            Ok(true)
        })
    }

    /// The sessions with a call waiting for a person (a `PermissionRequested` nothing
    /// answered or superseded yet): where the panels' index starts.
    pub fn blocking_waiting_sessions(&self) -> Result<Vec<String>, StoreError> {
        self.handle.block_on(async {
            let client = self.client().await?;
            let rows = client
                .query(
                    "SELECT DISTINCT r.session_id FROM events r \
                     WHERE r.kind = 'PermissionRequested' AND NOT r.compacted \
                     AND NOT EXISTS (SELECT 1 FROM events a \
                        WHERE a.session_id = r.session_id AND a.call_id = r.call_id \
                        AND a.seq > r.seq AND a.kind IN \
                        ('ToolApproved', 'PermissionDenied', 'ToolFailed', 'ToolRequested')) \
                     ORDER BY 1",
                    &[],
                )
                .await
                .map_err(query_err)?;
            rows.iter()
                .map(|r| r.try_get::<_, String>(0).map_err(query_err))
                .collect()
        })
    }
}

fn to_i64(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

/// Rows of `(seq, body)` as events; a row this version cannot read is a warning.
fn decode(id: &str, rows: Vec<tokio_postgres::Row>) -> (Vec<Event>, Vec<String>) {
    let mut events = Vec::with_capacity(rows.len());
    let mut warnings = Vec::new();
    for row in rows {
        let seq: i64 = row.try_get(0).unwrap_or_default();
        let parsed = row
            .try_get::<_, String>(1)
            .map_err(|e| e.to_string())
            .and_then(|body| serde_json::from_str::<Event>(&body).map_err(|e| e.to_string()));
        match parsed {
            Ok(ev) => events.push(ev),
            Err(e) => {
                let w = format!("session `{id}` event {seq}: unreadable event skipped: {e}");
                tracing::warn!(session = %id, "{w}");
                warnings.push(w);
            }
        }
    }
    (events, warnings)
}

/// Creates the session row if needed and locks it; whether its counter is `expected`.
async fn lock_counter(
    tx: &deadpool_postgres::Transaction<'_>,
    id: &str,
    expected: u64,
) -> Result<bool, StoreError> {
    tx.execute(
        "INSERT INTO sessions (id) VALUES ($1) ON CONFLICT (id) DO NOTHING",
        &[&id],
    )
    .await
    .map_err(query_err)?;
    let row = tx
        .query_one(
            "SELECT next_seq FROM sessions WHERE id = $1 FOR UPDATE",
            &[&id],
        )
        .await
        .map_err(query_err)?;
    let next: i64 = row.try_get(0).map_err(query_err)?;
    Ok(next == to_i64(expected))
}

/// Inserts `events` in order; the sequence number after the last one.
async fn insert_events(
    tx: &deadpool_postgres::Transaction<'_>,
    id: &str,
    events: &[(Event, Option<String>)],
) -> Result<Option<u64>, StoreError> {
    let stmt = tx
        .prepare(
            "INSERT INTO events (session_id, seq, at, kind, call_id, host, decision, body) \
             VALUES ($1, $2, $3::text::timestamptz, $4, $5, $6, $7, $8::text::json)",
        )
        .await
        .map_err(query_err)?;
    let mut next = None;
    for (ev, host) in events {
        let body = serde_json::to_string(ev).map_err(query_err)?;
        let (kind, decision) = kind_and_decision(&ev.kind);
        let call_id = Some(ev.kind.call_id()).filter(|c| !c.is_empty());
        tx.execute(
            &stmt,
            &[
                &id,
                &to_i64(ev.seq),
                &ev.at,
                &kind,
                &call_id,
                host,
                &decision,
                &body,
            ],
        )
        .await
        .map_err(query_err)?;
        next = Some(ev.seq + 1);
    }
    Ok(next)
}

/// Moves the counter to `next`, notifies the replicas, commits.
async fn finish(
    tx: deadpool_postgres::Transaction<'_>,
    id: &str,
    next: u64,
) -> Result<(), StoreError> {
    tx.execute(
        "UPDATE sessions SET next_seq = $2, updated_at = now() WHERE id = $1",
        &[&id, &to_i64(next)],
    )
    .await
    .map_err(query_err)?;
    let payload = format!("{id} {}", next.saturating_sub(1));
    tx.execute("SELECT pg_notify($1, $2)", &[&CHANNEL, &payload])
        .await
        .map_err(query_err)?;
    tx.commit().await.map_err(query_err)
}

/// The event's type name, and the answer it records (`allow`, `ask`, `deny`) if any.
fn kind_and_decision(kind: &EventKind) -> (&'static str, Option<&'static str>) {
    match kind {
        EventKind::ToolRequested { .. } => ("ToolRequested", None),
        EventKind::PermissionRequested { .. } => ("PermissionRequested", Some("ask")),
        EventKind::ToolApproved { .. } => ("ToolApproved", Some("allow")),
        EventKind::PermissionGranted { .. } => ("PermissionGranted", None),
        EventKind::PermissionDenied { .. } => ("PermissionDenied", Some("deny")),
        EventKind::ToolFailed { .. } => ("ToolFailed", None),
        EventKind::Compacted { .. } => ("Compacted", None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_never_reach_messages() {
        assert_eq!(
            redact("postgres://app:s3cret@db:5432/hub"),
            "postgres://app:***@db:5432/hub"
        );
        assert_eq!(redact("postgres://app@db/hub"), "postgres://app@db/hub");
        assert_eq!(redact("host=db user=app"), "host=db user=app");
    }
}
