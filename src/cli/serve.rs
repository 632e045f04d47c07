//! `khaelor-perm serve`: runs the HTTP service until SIGTERM or SIGINT.
//!
//! Owns flag and environment handling, the start-up safety checks (no unauthenticated
//! listener beyond loopback unless waived; the panel token made when no token file is
//! given), logging set-up and the shutdown signal.
//! The service itself is `crate::http`.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use crate::http::{self, AppState, ServiceConfig, credential};

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum LogFormat {
    Text,
    Json,
}

#[derive(clap::Args, Debug)]
pub struct Args {
    /// Address to listen on; port 0 picks a free one (the bound address is printed).
    #[arg(long, env = "KHAELOR_PERM_ADDR", default_value = "127.0.0.1:8790")]
    pub addr: SocketAddr,
    /// Directory for session logs [default: $XDG_STATE_HOME/khaelor-perm or
    /// $HOME/.local/state/khaelor-perm].
    #[arg(long, env = "KHAELOR_PERM_STATE_DIR", value_name = "DIR")]
    pub state_dir: Option<PathBuf>,
    /// File holding the bearer token clients must send (surrounding whitespace ignored).
    /// Without it, `<state-dir>/panel-token` is made on first start (mode 0600) and
    /// answering a prompt (grant, deny, trust, the pending calls) needs it, on loopback
    /// too; hooks and the read-only routes stay open on loopback.
    #[arg(long, env = "KHAELOR_PERM_TOKEN_FILE", value_name = "FILE")]
    pub token_file: Option<PathBuf>,
    /// Only serve projects under this directory (repeatable); others get 403.
    #[arg(long = "workspace-root", value_name = "DIR")]
    pub workspace_roots: Vec<PathBuf>,
    /// Operator-managed config file, layered above project rules.
    #[arg(long, env = "KHAELOR_PERM_MANAGED_CONFIG", value_name = "FILE")]
    pub managed_config: Option<PathBuf>,
    /// The preset (strict, recommended, autonomous); a managed config's preset caps
    /// it, an untrusted project file may still narrow it [default: recommended, or
    /// what the configs choose].
    #[arg(long, value_name = "PRESET")]
    pub preset: Option<crate::policy::presets::Preset>,
    /// Leave the agent hosts' own permission rules out of the decisions of
    /// `/v1/hooks/{host}` (as `hook --no-host-rules`); a config's `"hostRules": false`
    /// does the same for its projects.
    #[arg(long, env = "KHAELOR_PERM_NO_HOST_RULES")]
    pub no_host_rules: bool,
    /// Allow listening beyond loopback without a token.
    #[arg(long)]
    pub insecure_no_auth: bool,
    /// The home whose `.khaelor/config.json` is the user layer and that `~` expands to
    /// [default: $HOME].
    #[arg(long, env = "KHAELOR_PERM_HOME", value_name = "DIR")]
    pub home: Option<PathBuf>,
    /// Let requests name their own `home` (never one overlapping a workspace root).
    #[arg(long)]
    pub allow_request_home: bool,
    /// Accept this `Host` name besides IP literals and `localhost` (repeatable).
    #[arg(long = "allowed-host", value_name = "NAME")]
    pub allowed_hosts: Vec<String>,
    /// Accept requests from this browser origin, e.g. `http://localhost:3000`
    /// (repeatable); any other `Origin` is refused with 403.
    #[arg(long = "allowed-origin", value_name = "ORIGIN")]
    pub allowed_origins: Vec<String>,
    /// Seconds a client has to send a request's head; also how long a keep-alive
    /// connection may sit idle between requests (one hyper timer).
    #[arg(long, env = "KHAELOR_PERM_HEADER_TIMEOUT_SECS", default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..))]
    pub header_timeout_secs: u64,
    /// Seconds a client has to send a request's body (408 beyond).
    #[arg(long, env = "KHAELOR_PERM_BODY_TIMEOUT_SECS", default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..))]
    pub body_timeout_secs: u64,
    /// Seconds a whole request may take (503 with Retry-After beyond).
    #[arg(long, env = "KHAELOR_PERM_REQUEST_TIMEOUT_SECS", default_value_t = 30, value_parser = clap::value_parser!(u64).range(1..))]
    pub request_timeout_secs: u64,
    /// Open connections at most; more get a 503 with Retry-After and are closed.
    #[arg(long, env = "KHAELOR_PERM_MAX_CONNECTIONS", default_value_t = 512, value_parser = clap::value_parser!(u64).range(1..))]
    pub max_connections: u64,
    /// `/v1` requests handled at once; more get a 503 with Retry-After.
    #[arg(long, env = "KHAELOR_PERM_MAX_CONCURRENT_REQUESTS", default_value_t = 256, value_parser = clap::value_parser!(u64).range(1..))]
    pub max_concurrent_requests: u64,
    /// Analysis, decision and file jobs run at once on the blocking pool [default: 2 per core].
    #[arg(long, env = "KHAELOR_PERM_BLOCKING_THREADS", value_parser = clap::value_parser!(u64).range(1..=1024))]
    pub blocking_threads: Option<u64>,
    /// Sessions kept in memory at most (least recently used leave first; logs stay).
    #[arg(long, env = "KHAELOR_PERM_MAX_SESSIONS", default_value_t = 1024, value_parser = clap::value_parser!(u64).range(1..))]
    pub max_sessions: u64,
    /// Bytes of sessions kept in memory at most, as a number with an optional `K`, `M`
    /// or `G` suffix (powers of 1024); least recently used idle sessions leave first
    /// (logs stay).
    #[arg(long, env = "KHAELOR_PERM_MAX_SESSION_MEMORY", default_value = "64M", value_parser = parse_size)]
    pub max_session_memory: u64,
    /// Seconds an unused session stays in memory.
    #[arg(long, env = "KHAELOR_PERM_SESSION_IDLE_SECS", default_value_t = 600)]
    pub session_idle_secs: u64,
    /// Events a session's log may hold: recording a call beyond it compacts the log
    /// (finished calls dropped); a session still over it gets 409 session_event_budget.
    #[arg(long, env = "KHAELOR_PERM_MAX_SESSION_EVENTS", default_value_t = 10_000, value_parser = clap::value_parser!(u64).range(16..))]
    pub max_session_events: u64,
    /// Remove session logs not written for this many days, at start-up (0 keeps them
    /// all).
    #[arg(long, env = "KHAELOR_PERM_RETAIN_DAYS", default_value_t = 0)]
    pub retain_days: u64,
    /// After SIGTERM, seconds in-flight requests get to finish before connections are cut.
    #[arg(long, env = "KHAELOR_PERM_SHUTDOWN_TIMEOUT_SECS", default_value_t = 10)]
    pub shutdown_timeout_secs: u64,
    /// Also write every event (decision, answer, grant) as one JSON line to FILE
    /// (appended, created owner-only), or `-` for standard output after the start-up
    /// lines, for a log shipper.
    #[arg(long, env = "KHAELOR_PERM_AUDIT_LOG", value_name = "FILE")]
    pub audit_log: Option<PathBuf>,
    /// Log format on stderr (filter with RUST_LOG, default `info`).
    #[arg(
        long,
        value_enum,
        env = "KHAELOR_PERM_LOG_FORMAT",
        default_value = "text"
    )]
    pub log_format: LogFormat,
}

/// Why the server refuses to start.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    #[error(
        "refusing to listen on `{0}` without a token: pass --token-file FILE (or KHAELOR_PERM_TOKEN_FILE), or --insecure-no-auth to serve without authentication"
    )]
    NoToken(SocketAddr),
    #[error("could not read token file `{path}`: {source}")]
    TokenFile {
        path: String,
        source: std::io::Error,
    },
    #[error("token file `{0}` is empty")]
    EmptyToken(String),
    #[error("{0}")]
    PanelToken(credential::CredentialError),
    #[error("workspace root `{path}` does not exist or is not a directory")]
    WorkspaceRoot { path: String },
    #[error("no state directory: set --state-dir, KHAELOR_PERM_STATE_DIR, XDG_STATE_HOME or HOME")]
    NoStateDir,
    #[error("could not create state directory `{path}`: {source}")]
    StateDir {
        path: String,
        source: std::io::Error,
    },
    #[error("managed config `{0}` is not an absolute path")]
    ManagedRelative(String),
    #[error("managed config `{0}` is not a readable file")]
    ManagedMissing(String),
    #[error("{0}")]
    AuditLog(String),
    #[error("home `{0}` is not an absolute path")]
    HomeRelative(String),
}

pub fn run(args: Args) -> ExitCode {
    init_logging(args.log_format);
    let config = match service_config(&args) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("khaelor-perm serve: {e}");
            tracing::error!("{e}");
            return ExitCode::from(2);
        }
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("khaelor-perm serve: could not start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    runtime.block_on(async move {
        let listener = match tokio::net::TcpListener::bind(args.addr).await {
            Ok(l) => l,
            Err(e) => {
                eprintln!("khaelor-perm serve: could not listen on `{}`: {e}", args.addr);
                return ExitCode::FAILURE;
            }
        };
        let bound = listener.local_addr().unwrap_or(args.addr);
        // Tests and supervisors read this line to learn the port picked for `:0`.
        println!("listening on http://{bound}");
        tracing::info!(addr = %bound, state_dir = %config.state_dir.display(), auth = config.token.is_some(), "listening");
        if config.panel_token.is_some() {
            tracing::info!(
                file = %credential::panel_token_path(&config.state_dir).display(),
                "answering permission prompts needs the panel token in this file"
            );
        }
        let state = AppState::new(config);
        print_panel_link(&state, bound);
        match http::serve(listener, state, shutdown_signal()).await {
            Ok(()) => {
                tracing::info!("stopped");
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("khaelor-perm serve: {e}");
                ExitCode::FAILURE
            }
        }
    })
}

/// Prints the web panel's one-time login link (as notebook servers do): single-use,
/// valid ten minutes, and not the bearer token. Without random bytes there is no link
/// and the panel stays closed; the API is unaffected.
fn print_panel_link(state: &AppState, bound: SocketAddr) {
    match state.web().mint_login_code() {
        Ok(code) => {
            println!(
                "web panel: {} (one-time link, valid {} minutes)",
                http::web::login_url(bound, &code),
                http::web::LOGIN_CODE_TTL.as_secs() / 60
            );
        }
        Err(e) => {
            eprintln!("khaelor-perm serve: no web panel login link: {e}");
            tracing::error!("no web panel login link: {e}");
        }
    }
}

/// Checks the flags and builds the service configuration.
pub fn service_config(args: &Args) -> Result<ServiceConfig, ServeError> {
    let token = match &args.token_file {
        Some(path) => Some(credential::read_token_file(path).map_err(|e| match e {
            credential::CredentialError::Empty(p) => ServeError::EmptyToken(p),
            credential::CredentialError::Io { source, .. } => ServeError::TokenFile {
                path: path.display().to_string(),
                source,
            },
            other => ServeError::PanelToken(other),
        })?),
        None => None,
    };
    if token.is_none() && !args.addr.ip().is_loopback() && !args.insecure_no_auth {
        return Err(ServeError::NoToken(args.addr));
    }
    let workspace_roots = args
        .workspace_roots
        .iter()
        .map(|p| {
            std::fs::canonicalize(p)
                .ok()
                .filter(|c| c.is_dir())
                .ok_or_else(|| ServeError::WorkspaceRoot {
                    path: p.display().to_string(),
                })
        })
        .collect::<Result<Vec<_>, _>>()?;
    if let Some(m) = &args.managed_config {
        if !m.is_absolute() {
            return Err(ServeError::ManagedRelative(m.display().to_string()));
        }
        // The operator asked for it: fail now rather than cap every decision at ask.
        if !m.is_file() {
            return Err(ServeError::ManagedMissing(m.display().to_string()));
        }
    }
    let state_dir = match &args.state_dir {
        Some(d) => d.clone(),
        None => default_state_dir().ok_or(ServeError::NoStateDir)?,
    };
    let sessions = state_dir.join("sessions");
    std::fs::create_dir_all(&sessions).map_err(|source| ServeError::StateDir {
        path: sessions.display().to_string(),
        source,
    })?;
    // Without the operator's token, answering a prompt needs the panel token, made on
    // first start; the person's panel reads it from the same file.
    let panel_token = match token {
        Some(_) => None,
        None => Some(credential::blocking_panel_token(&state_dir).map_err(ServeError::PanelToken)?),
    };
    let retain = (args.retain_days > 0)
        .then(|| Duration::from_secs(args.retain_days.saturating_mul(86_400)));
    let swept = crate::session::blocking_sweep(&sessions, retain);
    if swept != crate::session::SweepReport::default() {
        tracing::info!(
            expired_logs = swept.expired,
            temp_files = swept.temp_files,
            "swept the session directory"
        );
    }
    let audit = match &args.audit_log {
        Some(path) => Some(std::sync::Arc::new(
            crate::session::audit::AuditSink::open(path).map_err(ServeError::AuditLog)?,
        )),
        None => None,
    };
    let default_home = match &args.home {
        Some(h) if !h.is_absolute() => {
            return Err(ServeError::HomeRelative(h.display().to_string()));
        }
        Some(h) => h.clone(),
        None => std::env::var_os("HOME").map_or_else(|| PathBuf::from("/"), PathBuf::from),
    };
    Ok(ServiceConfig {
        state_dir,
        token,
        panel_token,
        workspace_roots,
        managed_config: args.managed_config.clone(),
        preset: args.preset,
        host_rules: !args.no_host_rules,
        default_home,
        allow_request_home: args.allow_request_home,
        allowed_hosts: args.allowed_hosts.clone(),
        allowed_origins: args.allowed_origins.clone(),
        limits: limits(args),
        audit,
    })
}

/// A size in bytes: digits with an optional `K`, `M` or `G` suffix (powers of 1024,
/// `KiB`/`MiB`/`GiB` accepted too).
fn parse_size(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let (digits, unit) = match t.find(|c: char| !c.is_ascii_digit()) {
        Some(at) => t.split_at(at),
        None => (t, ""),
    };
    let shift = match unit.to_ascii_lowercase().as_str() {
        "" | "b" => 0,
        "k" | "kib" => 10,
        "m" | "mib" => 20,
        "g" | "gib" => 30,
        _ => return Err(format!("unknown size unit `{unit}`, expected K, M or G")),
    };
    let n: u64 = digits
        .parse()
        .map_err(|_| format!("`{text}` is not a size such as 64M"))?;
    n.checked_mul(1u64 << shift)
        .ok_or_else(|| format!("`{text}` is too large"))
}

/// The service limits from the flags.
fn limits(args: &Args) -> http::Limits {
    let size = |n: u64| usize::try_from(n).unwrap_or(usize::MAX);
    http::Limits {
        blocking_threads: args
            .blocking_threads
            .map_or_else(http::default_blocking_threads, size),
        max_sessions: size(args.max_sessions),
        max_session_memory: size(args.max_session_memory),
        session_idle: Duration::from_secs(args.session_idle_secs),
        max_session_events: size(args.max_session_events),
        header_timeout: Duration::from_secs(args.header_timeout_secs),
        body_timeout: Duration::from_secs(args.body_timeout_secs),
        request_timeout: Duration::from_secs(args.request_timeout_secs),
        max_connections: size(args.max_connections),
        max_concurrent: size(args.max_concurrent_requests),
        shutdown_timeout: Duration::from_secs(args.shutdown_timeout_secs),
    }
}

/// `$XDG_STATE_HOME/khaelor-perm`, else `$HOME/.local/state/khaelor-perm` (shared with
/// `khaelor-perm trust`, so both find the same trust store).
pub fn default_state_dir() -> Option<PathBuf> {
    crate::policy::trust::default_state_dir()
}

fn init_logging(format: LogFormat) {
    use tracing_subscriber::EnvFilter;
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    let ansi = std::io::IsTerminal::is_terminal(&std::io::stderr());
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(ansi)
        .with_writer(std::io::stderr);
    let _ = match format {
        LogFormat::Text => builder.try_init(),
        LogFormat::Json => builder
            .json()
            .flatten_event(true)
            .with_current_span(true)
            .with_span_list(false)
            .try_init(),
    };
}

/// Resolves on SIGTERM or SIGINT; the server then stops accepting and drains.
async fn shutdown_signal() {
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        () = terminate => {}
    }
    tracing::info!("shutdown signal received: finishing in-flight requests");
}
