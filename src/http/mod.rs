//! The HTTP service: `app(state) -> Router` with every route and the middleware stack,
//! and `serve` with graceful shutdown.
//!
//! Owns routing, limits, auth, request ids, logging spans, panic capture and metrics
//! wiring. Handlers only translate between JSON and the library (`analysis`, `tools`,
//! `decide`, `config`, `session`, `grants`); no policy or analysis logic lives here.

pub mod api;
pub mod audit;
pub mod auth;
pub mod conn;
pub mod credential;
pub mod error;
pub mod handlers;
pub mod hooks;
pub mod hosts;
pub mod metrics;
pub mod openapi;
pub mod panel;
pub mod pending;
pub mod policy_cache;
pub mod replicas;
pub mod sessions;
pub mod web;

use std::any::Any;
use std::future::Future;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use axum::Router;
use axum::error_handling::HandleErrorLayer;
use axum::extract::{DefaultBodyLimit, MatchedPath, Request, State};
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use tower::limit::GlobalConcurrencyLimitLayer;
use tower::{BoxError, ServiceBuilder};
use tower_http::catch_panic::CatchPanicLayer;
use tower_http::request_id::{
    MakeRequestUuid, PropagateRequestIdLayer, RequestId, SetRequestIdLayer,
};
use tower_http::timeout::RequestBodyTimeoutLayer;
use tower_http::trace::{DefaultOnResponse, TraceLayer};
use tracing::Level;

use crate::model::paths;
use crate::model::vocab::{AnalysisContext, ContextError};
pub use error::ApiError;

/// Largest request body accepted (413 beyond).
pub const BODY_LIMIT: usize = 1024 * 1024;
// A hook's outbox sends any batch up to this size in one request, wrapped in
// `{"records": […]}`: the hub must accept it.
const _: () = assert!(crate::session::outbox::MAX_SENDABLE_BYTES + 64 * 1024 <= BODY_LIMIT);

/// Largest bash command accepted (422 `command_too_large` beyond): a command is a field
/// of a valid body, so its limit is a validation error, not a transport one.
pub const MAX_COMMAND_BYTES: usize = 64 * 1024;

/// How the service was configured at start.
#[derive(Debug, Clone)]
pub struct ServiceConfig {
    /// Where session logs live (`<state>/sessions/<id>.jsonl`).
    pub state_dir: PathBuf,
    /// The operator's bearer token (`--token-file`): every request but `/healthz` and
    /// `/openapi.yaml` must carry it.
    pub token: Option<String>,
    /// Without an operator's token, the panel token (`<state-dir>/panel-token`): every
    /// route that answers a prompt or shows what waits for one must carry it, on
    /// loopback too (`auth` lists the routes open without it). `None` with no `token`
    /// leaves every route open, which only embedding tests do.
    pub panel_token: Option<String>,
    /// When non-empty, project roots must be inside one of these (canonical) dirs.
    pub workspace_roots: Vec<PathBuf>,
    /// An extra, highest-precedence config file set by the operator.
    pub managed_config: Option<PathBuf>,
    /// The preset chosen with `--preset`; `None`: what the configs choose.
    pub preset: Option<crate::policy::presets::Preset>,
    /// Whether hook calls read the host's own permission rules (`--no-host-rules`
    /// turns it off).
    pub host_rules: bool,
    /// The home used when a request gives none: `--home`, else the server's `$HOME`.
    /// Its `.khaelor/config.json` is the user layer.
    pub default_home: PathBuf,
    /// Whether a request may name another `home` (`--allow-request-home`); never one
    /// inside a workspace root.
    pub allow_request_home: bool,
    /// `Host` names accepted besides IP literals and `localhost` (`--allowed-host`).
    pub allowed_hosts: Vec<String>,
    /// Browser origins accepted (`--allowed-origin`); any other `Origin` is a 403.
    pub allowed_origins: Vec<String>,
    pub limits: Limits,
    /// Where every appended event also goes as an audit record, one JSON line each
    /// (`--audit-log`).
    pub audit: Option<std::sync::Arc<crate::session::audit::AuditSink>>,
}

impl ServiceConfig {
    /// The user's trust store of project configs: `<state-dir>/trust/`.
    pub fn trust_store(&self) -> crate::policy::trust::TrustStore {
        crate::policy::trust::TrustStore::new(&self.state_dir)
    }
}

/// Every bound the service enforces, each with its `serve` flag (the book: docs/src/reliability.md).
#[derive(Debug, Clone)]
pub struct Limits {
    /// Blocking jobs (analysis, decisions, config and session I/O) running at once;
    /// more wait their turn off the reactor (`--blocking-threads`).
    pub blocking_threads: usize,
    /// Sessions kept in memory at most (`--max-sessions`).
    pub max_sessions: usize,
    /// Bytes of sessions kept in memory at most (`--max-session-memory`).
    pub max_session_memory: usize,
    /// A session unused this long leaves memory (`--session-idle-secs`).
    pub session_idle: std::time::Duration,
    /// Events a session's log may hold: recording a call beyond it compacts the log,
    /// and a log still over it after compaction refuses new calls
    /// (`--max-session-events`).
    pub max_session_events: usize,
    /// Time a client has to send a request's head; the same hyper timer closes a
    /// keep-alive connection idle that long between requests (`--header-timeout-secs`).
    pub header_timeout: Duration,
    /// Time a client has to send a request's body (`--body-timeout-secs`).
    pub body_timeout: Duration,
    /// Time a whole request may take, head read to answer (`--request-timeout-secs`).
    pub request_timeout: Duration,
    /// Open connections at most; more are answered 503 and closed (`--max-connections`).
    pub max_connections: usize,
    /// `/v1` requests handled at once; more are answered 503 (`--max-concurrent-requests`).
    pub max_concurrent: usize,
    /// After SIGTERM, how long in-flight requests may finish before connections are cut
    /// (`--shutdown-timeout-secs`).
    pub shutdown_timeout: Duration,
}

/// Seconds a client is told to wait (`Retry-After`) when a cap is full.
pub const RETRY_AFTER_SECS: u64 = 1;

/// Largest request head (request line and headers) hyper accepts: beyond it the
/// connection gets a JSON 431 (`conn::JsonParseErrors`) and is closed.
pub const MAX_HEAD_BYTES: usize = 64 * 1024;

/// Largest request target (path and query) accepted: beyond it a JSON 414. No route
/// needs more: the longest query names a few paths, each at most `PATH_MAX` (4 KiB).
pub const MAX_URI_BYTES: usize = 16 * 1024;

impl Default for Limits {
    fn default() -> Self {
        Limits {
            blocking_threads: default_blocking_threads(),
            max_sessions: sessions::DEFAULT_MAX_SESSIONS,
            max_session_memory: sessions::DEFAULT_MAX_SESSION_MEMORY,
            session_idle: sessions::DEFAULT_SESSION_IDLE,
            max_session_events: sessions::DEFAULT_MAX_SESSION_EVENTS,
            header_timeout: Duration::from_secs(10),
            body_timeout: Duration::from_secs(10),
            request_timeout: Duration::from_secs(30),
            max_connections: 512,
            max_concurrent: 256,
            shutdown_timeout: Duration::from_secs(10),
        }
    }
}

/// Two per core: analysis is CPU-bound, file I/O mostly waits.
pub fn default_blocking_threads() -> usize {
    std::thread::available_parallelism().map_or(4, |n| n.get() * 2)
}

/// Shared state of every handler.
#[derive(Clone)]
pub struct AppState {
    inner: Arc<Inner>,
}

struct Inner {
    config: ServiceConfig,
    metrics: metrics::Metrics,
    policies: policy_cache::PolicyCache,
    sessions: sessions::SessionStore,
    /// Every pending call across sessions, and the channel the panels follow.
    panel: panel::PanelHub,
    /// Permits of the bounded blocking pool.
    blocking: Arc<tokio::sync::Semaphore>,
    /// Permits of the `/v1` concurrency cap, shared by every route.
    concurrent: Arc<tokio::sync::Semaphore>,
    /// Set once shutdown began: `/readyz` answers 503 so balancers stop sending.
    draining: AtomicBool,
    /// Wakes what waits on `drained` (hooks waiting for a person) when shutdown begins.
    drain: tokio::sync::Notify,
    /// The web panel's login codes and browser sessions.
    web: web::WebAuth,
    /// The signed bundle the managed layer comes from (`--managed-url`).
    managed_bundle: std::sync::Mutex<Option<crate::policy::bundle::store::BundleStatus>>,
}

impl AppState {
    pub fn new(config: ServiceConfig) -> Self {
        Self::with_backend(config, crate::session::Backend::Files)
    }

    /// A state whose sessions live in `backend` (the state directory's files, or a
    /// PostgreSQL store several replicas share).
    pub fn with_backend(config: ServiceConfig, backend: crate::session::Backend) -> Self {
        AppState {
            inner: Arc::new(Inner {
                metrics: metrics::Metrics::new(),
                policies: policy_cache::PolicyCache::new(),
                sessions: sessions::SessionStore::with_limits(
                    config.state_dir.join("sessions"),
                    config.limits.max_sessions,
                    config.limits.session_idle,
                )
                .with_max_bytes(config.limits.max_session_memory)
                .with_backend(backend),
                panel: panel::PanelHub::default(),
                blocking: Arc::new(tokio::sync::Semaphore::new(
                    config.limits.blocking_threads.max(1),
                )),
                concurrent: Arc::new(tokio::sync::Semaphore::new(
                    config.limits.max_concurrent.max(1),
                )),
                draining: AtomicBool::new(false),
                drain: tokio::sync::Notify::new(),
                web: web::WebAuth::new(),
                managed_bundle: std::sync::Mutex::new(None),
                config,
            }),
        }
    }

    pub fn config(&self) -> &ServiceConfig {
        &self.inner.config
    }
    /// The managed bundle in force, as its poller last saw it.
    pub fn managed_bundle(&self) -> Option<crate::policy::bundle::store::BundleStatus> {
        self.inner
            .managed_bundle
            .lock()
            .map_or_else(|p| p.into_inner().clone(), |g| g.clone())
    }
    /// Records the managed bundle in force (the poller).
    pub fn set_managed_bundle(&self, status: Option<crate::policy::bundle::store::BundleStatus>) {
        match self.inner.managed_bundle.lock() {
            Ok(mut g) => *g = status,
            Err(p) => *p.into_inner() = status,
        }
    }
    pub fn metrics(&self) -> &metrics::Metrics {
        &self.inner.metrics
    }
    pub fn policies(&self) -> &policy_cache::PolicyCache {
        &self.inner.policies
    }
    /// Runs blocking work (analysis, decisions, config and session file I/O) on the
    /// blocking pool, at most `limits.blocking_threads` jobs at once, so the reactor
    /// threads only do socket I/O and `/healthz` answers under heavy commands. The
    /// permit travels with the job: a client that hangs up does not free a slot its
    /// job still occupies.
    pub async fn blocking<T, F>(&self, job: F) -> Result<T, ApiError>
    where
        T: Send + 'static,
        F: FnOnce() -> T + Send + 'static,
    {
        let permit = self
            .inner
            .blocking
            .clone()
            .acquire_owned()
            .await
            .map_err(ApiError::internal)?;
        self.metrics().blocking_queued(1);
        let metrics = self.clone();
        tokio::task::spawn_blocking(move || {
            metrics.metrics().blocking_queued(-1);
            let out = job();
            drop(permit);
            out
        })
        .await
        .map_err(ApiError::internal)
    }

    /// The (cached) policy for a request's project, home and the managed config.
    /// Blocks on the file system: call it inside `blocking`.
    pub fn blocking_policy(&self, ctx: &AnalysisContext) -> crate::policy::config::Policy {
        self.policies().blocking_get_preset(
            ctx.root(),
            ctx.home(),
            self.config().managed_config.as_deref(),
            Some(&self.config().trust_store()),
            self.config().preset,
        )
    }
    /// The (cached) policy a hook call of `host` is decided by: as `blocking_policy`,
    /// with the host's own rules unless the service runs with `--no-host-rules`
    /// (`hosts::grants::hook_policy`). Blocks on the file system.
    /// `host` is `None` when the client left the host's rules out.
    pub fn blocking_hook_policy(
        &self,
        ctx: &AnalysisContext,
        host: Option<crate::hosts::Host>,
    ) -> crate::policy::config::Policy {
        self.policies().blocking_get_for_host(
            ctx.root(),
            ctx.home(),
            self.config().managed_config.as_deref(),
            Some(&self.config().trust_store()),
            self.config().preset,
            host.filter(|_| self.config().host_rules),
        )
    }
    /// Every pending call across sessions, and the channel the panels follow.
    pub fn panel(&self) -> &panel::PanelHub {
        &self.inner.panel
    }

    pub fn sessions(&self) -> &sessions::SessionStore {
        &self.inner.sessions
    }
    /// The web panel's sign-in state (`serve` mints the first login code from it).
    pub fn web(&self) -> &web::WebAuth {
        &self.inner.web
    }

    /// Whether shutdown has begun.
    pub fn draining(&self) -> bool {
        self.inner.draining.load(Ordering::Relaxed)
    }

    /// Resolves once shutdown has begun (at once when it has).
    pub async fn drained(&self) {
        // Registered before the flag is read: a drain between the two still wakes it.
        let notified = self.inner.drain.notified();
        if self.draining() {
            return;
        }
        notified.await;
    }

    /// Builds the analysis context of a request (blocks on the file system: call it
    /// inside `blocking`): absolute project root inside the
    /// allowed workspaces (checked before existence, so a confined client cannot probe
    /// the rest of the disk), cwd defaulting to the root, home to the server's.
    pub fn context(
        &self,
        project_root: &str,
        cwd: Option<&str>,
        home: Option<&str>,
    ) -> Result<AnalysisContext, ApiError> {
        for (field, value) in [
            ("projectRoot", Some(project_root)),
            ("cwd", cwd),
            ("home", home),
        ] {
            if let Some(c) = value.and_then(paths::control_char) {
                return Err(ApiError::bad_request(
                    "control_character",
                    format!(
                        "`{field}` holds the control character U+{:04X}; a path may not contain one",
                        u32::from(c)
                    ),
                ));
            }
            if value.is_some_and(|v| paths::is_process_alias(Path::new(v))) {
                return Err(ApiError::unprocessable(
                    "aliasing_path",
                    format!(
                        "`{field}` names a process's own view of the file system (/proc/self, /dev/fd), not a directory"
                    ),
                ));
            }
        }
        if project_root.is_empty() {
            return Err(ApiError::unprocessable(
                "missing_project_root",
                "`projectRoot` is empty",
            ));
        }
        let root = Path::new(project_root);
        if !root.is_absolute() {
            return Err(ApiError::unprocessable(
                "relative_path",
                format!("project root `{project_root}` is not an absolute path"),
            ));
        }
        let roots = &self.config().workspace_roots;
        let outside = || {
            ApiError::forbidden(
                "outside_workspace",
                format!("project root `{project_root}` is not under an allowed workspace root"),
            )
        };
        // Checked before the root's existence, so a confined client cannot probe the
        // disk. No lexical clean first: `/ws/link/../p` must follow `link` as the kernel
        // would, which `resolve_existing_prefix` does.
        if !roots.is_empty() {
            let resolved = paths::resolve_existing_prefix(root);
            if !roots.iter().any(|r| paths::is_inside(&resolved, r)) {
                return Err(outside());
            }
        }
        let home = self.request_home(home)?;
        let ctx = AnalysisContext::new(root, cwd.map(Path::new), &home).map_err(|e| match e {
            ContextError::Relative { .. } => {
                ApiError::unprocessable("relative_path", e.to_string())
            }
            // Well-formed, but naming nothing on this machine: not found, like an
            // unknown session (a schema can say "absolute", never "exists").
            ContextError::MissingRoot { .. } => {
                ApiError::not_found("missing_project_root", e.to_string())
            }
        })?;
        // INVARIANT: the canonical root every later step uses is itself confined.
        if !roots.is_empty() && !roots.iter().any(|r| paths::is_inside(ctx.root(), r)) {
            return Err(outside());
        }
        // The cwd is validated like the root.
        self.confine_dir("cwd", ctx.cwd())?;
        Ok(ctx)
    }

    /// The home of a request: the server's own unless the server allows
    /// requests to name another, and never one inside a workspace root (that would make
    /// a project file act as the user's config).
    fn request_home(&self, home: Option<&str>) -> Result<PathBuf, ApiError> {
        let own = &self.config().default_home;
        let Some(h) = home else {
            return Ok(own.clone());
        };
        let asked = PathBuf::from(h);
        if !asked.is_absolute() || paths::clean(&asked) == paths::clean(own) {
            // Relative: AnalysisContext reports it; the server's own: nothing changes.
            return Ok(asked);
        }
        if !self.config().allow_request_home {
            return Err(ApiError::forbidden(
                "home_not_allowed",
                format!(
                    "this server uses its own home `{}`; a request may name another only when the server runs with `--allow-request-home`",
                    own.display()
                ),
            ));
        }
        let resolved = paths::resolve_existing_prefix(&asked);
        if self
            .config()
            .workspace_roots
            .iter()
            .any(|r| paths::is_inside(&resolved, r) || paths::is_inside(r, &resolved))
        {
            return Err(ApiError::forbidden(
                "home_in_workspace",
                format!(
                    "home `{h}` overlaps a workspace root: a project file would act as the user's config"
                ),
            ));
        }
        Ok(asked)
    }

    /// A working directory (the request's `cwd`, or the one a host sent in the tool
    /// input) must be a real directory, and inside a workspace root when any is set.
    pub fn confine_dir(&self, field: &str, dir: &Path) -> Result<(), ApiError> {
        if !dir.is_absolute() {
            return Err(ApiError::unprocessable(
                "bad_cwd",
                format!(
                    "`{field}` `{}` names a process's own view of the file system, not a directory",
                    dir.display()
                ),
            ));
        }
        if !dir.is_dir() {
            return Err(ApiError::not_found(
                "bad_cwd",
                format!("`{field}` `{}` is not an existing directory", dir.display()),
            ));
        }
        let roots = &self.config().workspace_roots;
        if !roots.is_empty() && !roots.iter().any(|r| paths::is_inside(dir, r)) {
            return Err(ApiError::forbidden(
                "outside_workspace",
                format!(
                    "`{field}` `{}` is not under an allowed workspace root",
                    dir.display()
                ),
            ));
        }
        Ok(())
    }

    /// The host-sent working directory of a tool call (`cwd`, `workdir`, `dir_path` in
    /// its input), confined like the request's own cwd.
    pub fn confine_workdir(
        &self,
        tool: &str,
        input: &serde_json::Value,
        ctx: &AnalysisContext,
    ) -> Result<(), ApiError> {
        if let Some((field, w)) =
            crate::tools::host_workdir(tool, input).map_err(handlers::tool_error)?
        {
            let dir = crate::tools::resolve_path(w, ctx.cwd(), ctx.home());
            self.confine_dir(field, &dir)?;
        }
        Ok(())
    }
}

/// The router with every route and middleware; tests drive it directly or over a socket.
pub fn app(state: AppState) -> Router {
    // Probes, metrics and the spec stay outside the concurrency cap: a full server must
    // still say it is alive.
    let service = Router::new()
        .route("/healthz", get(handlers::healthz))
        .route("/readyz", get(handlers::readyz))
        .route("/metrics", get(handlers::metrics))
        .route("/openapi.yaml", get(openapi::openapi_yaml));
    let api = Router::new()
        .route("/v1/analyze", post(handlers::analyze))
        .route("/v1/evaluate", post(handlers::evaluate))
        .route("/v1/explain", post(handlers::explain))
        .route("/v1/rules", get(handlers::rules))
        .route("/v1/tools/available", post(handlers::tools_available))
        .route("/v1/trust", post(handlers::trust))
        .route("/v1/hooks/{host}", post(hooks::hook))
        .route(
            "/v1/sessions/{session_id}/calls",
            post(sessions::record_call),
        )
        .route("/v1/pending", get(pending::pending))
        .route("/v1/audit", get(audit::audit))
        .route("/v1/audit/records", post(audit::receive))
        .route("/v1/pending/stream", get(pending::stream))
        .route("/v1/sessions/{session_id}/pending", get(sessions::pending))
        .route("/v1/sessions/{session_id}/events", get(sessions::events))
        .route(
            "/v1/sessions/{session_id}/calls/{call_id}/grant",
            post(sessions::grant),
        )
        .route(
            "/v1/sessions/{session_id}/calls/{call_id}/deny",
            post(sessions::deny),
        )
        // One semaphore for every route (`Router::layer` wraps each route apart).
        .layer(
            ServiceBuilder::new()
                .layer(HandleErrorLayer::new(overloaded))
                .load_shed()
                .layer(GlobalConcurrencyLimitLayer::with_semaphore(
                    state.inner.concurrent.clone(),
                )),
        );
    let routes = service
        .merge(web::routes())
        .merge(api)
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed);
    with_middleware(routes, state)
}

/// The middleware stack, outermost first: request id, trace span, id echo, metrics,
/// URI length, whole-request timeout, panic capture, Host/Origin guard, auth, body read timeout, body
/// limit.
fn with_middleware(routes: Router<AppState>, state: AppState) -> Router {
    let limits = state.config().limits.clone();
    routes
        .layer(
            ServiceBuilder::new()
                .layer(SetRequestIdLayer::x_request_id(MakeRequestUuid))
                .layer(
                    TraceLayer::new_for_http()
                        .make_span_with(|req: &Request<_>| {
                            let id = req
                                .extensions()
                                .get::<RequestId>()
                                .and_then(|id| id.header_value().to_str().ok())
                                .unwrap_or("-");
                            tracing::info_span!("request", request_id = %id, method = %req.method(), path = %req.uri().path())
                        })
                        .on_request(())
                        .on_response(DefaultOnResponse::new().level(Level::INFO)),
                )
                .layer(PropagateRequestIdLayer::x_request_id())
                .layer(middleware::from_fn_with_state(state.clone(), count_request))
                .layer(middleware::from_fn(uri_limit))
                .layer(middleware::from_fn_with_state(state.clone(), request_timeout))
                .layer(CatchPanicLayer::custom(panic_response))
                .layer(middleware::from_fn_with_state(state.clone(), hosts::guard))
                .layer(middleware::from_fn_with_state(state.clone(), auth::require_token))
                .layer(RequestBodyTimeoutLayer::new(limits.body_timeout))
                .layer(DefaultBodyLimit::max(BODY_LIMIT)),
        )
        .with_state(state)
}

/// A request target over `MAX_URI_BYTES`: 414 before anything reads it.
async fn uri_limit(req: Request, next: Next) -> Response {
    let len = req.uri().path_and_query().map_or(0, |p| p.as_str().len());
    if len > MAX_URI_BYTES {
        return ApiError::new(
            StatusCode::URI_TOO_LONG,
            "uri_too_long",
            format!("the request URI is {len} bytes, over the limit of {MAX_URI_BYTES}"),
        )
        .into_response();
    }
    next.run(req).await
}

/// A full concurrency cap: 503 with `Retry-After`, at once rather than queued.
async fn overloaded(err: BoxError) -> Response {
    if err.is::<tower::load_shed::error::Overloaded>() {
        return busy(
            "overloaded",
            "the server is at its limit of concurrent requests; retry shortly",
        );
    }
    ApiError::internal(err).into_response()
}

/// The whole-request timeout (`--request-timeout-secs`): 503 with `Retry-After` (the
/// server, not the client, was too slow, or the client held the request open). A hook
/// that waits for a person (`POST /v1/hooks/{host}?wait=SECS`) gets SECS on top: that
/// wait is what it asked for, and the hook's own deadline bounds it.
async fn request_timeout(State(state): State<AppState>, req: Request, next: Next) -> Response {
    let mut limit = state.config().limits.request_timeout;
    let path = req.uri().path().to_string();
    if path.starts_with("/v1/hooks/")
        && let Ok(Some(wait)) = hooks::wait_param(req.uri().query())
    {
        limit += wait;
    }
    const TOO_LONG: &str = "the request took longer than the server's request timeout";
    match tokio::time::timeout(limit, next.run(req)).await {
        Ok(resp) => resp,
        // A host reads a non-2xx answer to its hook as "run it": its deny instead.
        Err(_) => {
            hooks::refused(&path, TOO_LONG).unwrap_or_else(|| busy("request_timeout", TOO_LONG))
        }
    }
}

fn busy(code: &'static str, message: &str) -> Response {
    let mut resp = ApiError::new(StatusCode::SERVICE_UNAVAILABLE, code, message).into_response();
    resp.headers_mut()
        .insert(header::RETRY_AFTER, HeaderValue::from(RETRY_AFTER_SECS));
    resp
}

/// Serves `app(state)` on `listener` until `shutdown` resolves; then stops accepting,
/// lets in-flight requests finish for up to `limits.shutdown_timeout`, and cuts the
/// connections still open after that (a client stalled mid-request cannot hold the
/// process up).
///
/// Each connection is hyper's HTTP/1 server with the header-read timeout and head size
/// limit set, over a socket that gives hyper's own 400/414/431 answers the JSON error
/// body (`conn`); at most `limits.max_connections` are open at once, and one over the cap
/// gets a 503 with `Retry-After` and is closed without being read, so idle sockets
/// cannot exhaust the descriptors `/healthz` needs.
pub async fn serve(
    listener: tokio::net::TcpListener,
    state: AppState,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let limits = state.config().limits.clone();
    let app = app(state.clone());
    let connections = Arc::new(tokio::sync::Semaphore::new(limits.max_connections.max(1)));
    let graceful = hyper_util::server::graceful::GracefulShutdown::new();
    let mut http = hyper::server::conn::http1::Builder::new();
    http.timer(hyper_util::rt::TokioTimer::new())
        .header_read_timeout(limits.header_timeout)
        .max_header_size(MAX_HEAD_BYTES)
        .max_buf_size(MAX_HEAD_BYTES);
    let http = Arc::new(http);
    tokio::pin!(shutdown);
    loop {
        let stream = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                Err(e) => {
                    // Out of descriptors, most likely: back off instead of spinning.
                    tracing::warn!(error = %e, "accept failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        let Ok(permit) = connections.clone().try_acquire_owned() else {
            tokio::spawn(refuse_connection(stream));
            continue;
        };
        let service = hyper_util::service::TowerToHyperService::new(app.clone());
        let conn = graceful.watch(http.serve_connection(
            hyper_util::rt::TokioIo::new(conn::JsonParseErrors::new(stream)),
            service,
        ));
        let state = state.clone();
        tokio::spawn(async move {
            let _open = state.metrics().connection_opened();
            if let Err(e) = conn.await {
                tracing::debug!(error = %e, "connection ended with an error");
            }
            drop(permit);
        });
    }
    state.inner.draining.store(true, Ordering::Relaxed);
    state.inner.drain.notify_waiters();
    drop(listener);
    tokio::select! {
        () = graceful.shutdown() => {}
        () = tokio::time::sleep(limits.shutdown_timeout) => {
            tracing::warn!(
                open = state.metrics().connections(),
                "shutdown timeout passed: cutting the connections still open"
            );
        }
    }
    Ok(())
}

/// Answers a connection over the cap with a 503 and closes it, reading nothing; the
/// few bytes fit the socket buffer, so this never waits on the client for long.
async fn refuse_connection(mut stream: tokio::net::TcpStream) {
    use tokio::io::AsyncWriteExt;
    let body = serde_json::json!({"error": {
        "code": "too_many_connections",
        "message": "the server is at its limit of open connections; retry shortly",
    }})
    .to_string();
    let head = format!(
        "HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\nretry-after: {RETRY_AFTER_SECS}\r\nconnection: close\r\ncontent-length: {}\r\n\r\n",
        body.len()
    );
    let write = async {
        stream.write_all(head.as_bytes()).await?;
        stream.write_all(body.as_bytes()).await?;
        stream.shutdown().await
    };
    let _ = tokio::time::timeout(Duration::from_secs(1), write).await;
}

async fn count_request(State(state): State<AppState>, req: Request, next: Next) -> Response {
    let route = req
        .extensions()
        .get::<MatchedPath>()
        .map_or("unmatched", |p| p.as_str())
        .to_string();
    // Custom methods would make the label space unbounded.
    let method = match *req.method() {
        Method::GET
        | Method::POST
        | Method::PUT
        | Method::DELETE
        | Method::PATCH
        | Method::HEAD
        | Method::OPTIONS => req.method().as_str().to_string(),
        _ => "OTHER".to_string(),
    };
    let in_flight = state.metrics().request_started();
    let resp = next.run(req).await;
    drop(in_flight);
    state
        .metrics()
        .record_request(&route, &method, resp.status().as_u16());
    resp
}

fn panic_response(err: Box<dyn Any + Send + 'static>) -> Response {
    let detail = if let Some(s) = err.downcast_ref::<String>() {
        s.clone()
    } else if let Some(s) = err.downcast_ref::<&str>() {
        (*s).to_string()
    } else {
        "unknown panic payload".to_string()
    };
    tracing::error!(panic = %detail, "handler panicked");
    ApiError::new(
        StatusCode::INTERNAL_SERVER_ERROR,
        "internal",
        "internal error, see the server log",
    )
    .into_response()
}

async fn not_found(req: Request) -> ApiError {
    let path = req.uri().path();
    // A session or call id with a slash in it splits into more segments than any route
    // has: say what is wrong with the id rather than a bare 404.
    if let Some(rest) = path.strip_prefix("/v1/sessions/")
        && ["/events", "/pending", "/calls", "/grant", "/deny"]
            .iter()
            .any(|s| rest.ends_with(s))
    {
        return ApiError::bad_request(
            "invalid_id",
            "invalid session or call id: expected 1 to 128 of A-Z a-z 0-9 _ -",
        );
    }
    ApiError::not_found("not_found", format!("no route for `{path}`"))
}

async fn method_not_allowed(req: Request) -> ApiError {
    // The router adds the `Allow` header itself.
    ApiError::new(
        StatusCode::METHOD_NOT_ALLOWED,
        "method_not_allowed",
        format!(
            "method `{}` is not allowed on `{}`",
            req.method(),
            req.uri().path()
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::body::Body;
    use tower::ServiceExt;

    fn state() -> AppState {
        AppState::new(ServiceConfig {
            state_dir: std::env::temp_dir(),
            token: None,
            panel_token: None,
            workspace_roots: Vec::new(),
            managed_config: None,
            preset: None,
            host_rules: true,
            default_home: PathBuf::from("/"),
            allow_request_home: false,
            allowed_hosts: Vec::new(),
            allowed_origins: Vec::new(),
            limits: Limits::default(),
            audit: None,
        })
    }

    #[tokio::test]
    async fn a_panic_is_a_json_500_and_counted() {
        async fn boom() -> &'static str {
            panic!("boom")
        }
        let state = state();
        let app = with_middleware(Router::new().route("/boom", get(boom)), state.clone());
        let resp = app
            .oneshot(Request::get("/boom").body(Body::empty()).unwrap())
            .await
            .unwrap();
        assert_eq!(resp.status(), StatusCode::INTERNAL_SERVER_ERROR);
        assert!(resp.headers().contains_key("x-request-id"));
        let body = axum::body::to_bytes(resp.into_body(), 1 << 16)
            .await
            .unwrap();
        let v: serde_json::Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(v["error"]["code"], "internal");
        assert!(
            !v.to_string().contains("boom"),
            "panic details stay in the log"
        );
        assert!(
            state
                .metrics()
                .render()
                .contains("route=\"/boom\",method=\"GET\",status=\"500\"} 1")
        );
    }
}
