//! The HTTP service: `app(state) -> Router` with every route and the middleware stack,
//! and `serve` with graceful shutdown.
//!
//! Owns routing, limits, auth, request ids, logging spans, panic capture and metrics
//! wiring. Handlers only translate between JSON and the library (`analysis`, `tools`,
//! `decide`, `config`, `session`, `grants`); no policy or analysis logic lives here.

pub mod api;
pub mod auth;
pub mod error;
pub mod handlers;
pub mod hooks;
pub mod metrics;
pub mod openapi;
pub mod policy_cache;
pub mod sessions;

use std::any::Any;
use std::future::Future;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use axum::Router;
use axum::extract::{DefaultBodyLimit, MatchedPath, Request, State};
use axum::http::{Method, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use tower::ServiceBuilder;
use tower_http::catch_panic::CatchPanicLayer;
use tower_http::request_id::{
    MakeRequestUuid, PropagateRequestIdLayer, RequestId, SetRequestIdLayer,
};
use tower_http::trace::{DefaultOnResponse, TraceLayer};
use tracing::Level;

use crate::paths;
use crate::vocab::{AnalysisContext, ContextError};
pub use error::ApiError;

/// Largest request body accepted (413 beyond).
pub const BODY_LIMIT: usize = 1024 * 1024;

/// Largest bash command accepted (422 `command_too_large` beyond): a command is a field
/// of a valid body, so its limit is a validation error, not a transport one.
pub const MAX_COMMAND_BYTES: usize = 64 * 1024;

/// How the service was configured at start.
#[derive(Debug, Clone)]
pub struct ServiceConfig {
    /// Where session logs live (`<state>/sessions/<id>.jsonl`).
    pub state_dir: PathBuf,
    /// The bearer token every request but `/healthz` and `/openapi.yaml` must carry.
    pub token: Option<String>,
    /// When non-empty, project roots must be inside one of these (canonical) dirs.
    pub workspace_roots: Vec<PathBuf>,
    /// An extra, highest-precedence config file set by the operator.
    pub managed_config: Option<PathBuf>,
    /// The home used when a request gives none (the server's `$HOME`).
    pub default_home: PathBuf,
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
}

impl AppState {
    pub fn new(config: ServiceConfig) -> Self {
        AppState {
            inner: Arc::new(Inner {
                metrics: metrics::Metrics::new(),
                policies: policy_cache::PolicyCache::new(),
                sessions: sessions::SessionStore::new(config.state_dir.join("sessions")),
                config,
            }),
        }
    }

    pub fn config(&self) -> &ServiceConfig {
        &self.inner.config
    }
    pub fn metrics(&self) -> &metrics::Metrics {
        &self.inner.metrics
    }
    pub fn policies(&self) -> &policy_cache::PolicyCache {
        &self.inner.policies
    }
    /// The (cached) policy for a request's project, home and the managed config.
    pub fn policy(&self, ctx: &AnalysisContext) -> crate::config::Policy {
        self.policies().get(
            ctx.root(),
            ctx.home(),
            self.config().managed_config.as_deref(),
        )
    }
    pub fn sessions(&self) -> &sessions::SessionStore {
        &self.inner.sessions
    }

    /// Builds the analysis context of a request: absolute project root inside the
    /// allowed workspaces (checked before existence, so a confined client cannot probe
    /// the rest of the disk), cwd defaulting to the root, home to the server's.
    pub fn context(
        &self,
        project_root: &str,
        cwd: Option<&str>,
        home: Option<&str>,
    ) -> Result<AnalysisContext, ApiError> {
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
        let home = home.map_or_else(|| self.config().default_home.clone(), PathBuf::from);
        let ctx = AnalysisContext::new(root, cwd.map(Path::new), &home).map_err(|e| match e {
            ContextError::Relative { .. } => {
                ApiError::unprocessable("relative_path", e.to_string())
            }
            ContextError::MissingRoot { .. } => {
                ApiError::unprocessable("missing_project_root", e.to_string())
            }
        })?;
        // INVARIANT: the canonical root every later step uses is itself confined.
        if !roots.is_empty() && !roots.iter().any(|r| paths::is_inside(ctx.root(), r)) {
            return Err(outside());
        }
        Ok(ctx)
    }
}

/// The router with every route and middleware; tests drive it directly or over a socket.
pub fn app(state: AppState) -> Router {
    let routes = Router::new()
        .route("/healthz", get(handlers::healthz))
        .route("/metrics", get(handlers::metrics))
        .route("/openapi.yaml", get(handlers::openapi_yaml))
        .route("/v1/analyze", post(handlers::analyze))
        .route("/v1/evaluate", post(handlers::evaluate))
        .route("/v1/rules", get(handlers::rules))
        .route("/v1/tools/available", post(handlers::tools_available))
        .route("/v1/hooks/{host}", post(hooks::hook))
        .route(
            "/v1/sessions/{session_id}/calls",
            post(sessions::record_call),
        )
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
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed);
    with_middleware(routes, state)
}

/// The middleware stack, outermost first: request id, trace span, id echo, metrics,
/// panic capture, auth, body limit.
fn with_middleware(routes: Router<AppState>, state: AppState) -> Router {
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
                .layer(CatchPanicLayer::custom(panic_response))
                .layer(middleware::from_fn_with_state(state.clone(), auth::require_token))
                .layer(DefaultBodyLimit::max(BODY_LIMIT)),
        )
        .with_state(state)
}

/// Serves `app(state)` on `listener` until `shutdown` resolves, then stops accepting
/// and lets in-flight requests finish.
pub async fn serve(
    listener: tokio::net::TcpListener,
    state: AppState,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    axum::serve(listener, app(state))
        .with_graceful_shutdown(shutdown)
        .await
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
    let resp = next.run(req).await;
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
            workspace_roots: Vec::new(),
            managed_config: None,
            default_home: PathBuf::from("/"),
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
