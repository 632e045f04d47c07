//! `khaelor-perm serve`: runs the HTTP service until SIGTERM or SIGINT.
//!
//! Owns flag and environment handling, the start-up safety checks (no unauthenticated
//! listener beyond loopback unless waived), logging set-up and the shutdown signal.
//! The service itself is `crate::http`.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use crate::http::{self, AppState, ServiceConfig};

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
    #[arg(long, env = "KHAELOR_PERM_TOKEN_FILE", value_name = "FILE")]
    pub token_file: Option<PathBuf>,
    /// Only serve projects under this directory (repeatable); others get 403.
    #[arg(long = "workspace-root", value_name = "DIR")]
    pub workspace_roots: Vec<PathBuf>,
    /// Operator-managed config file, layered above project rules.
    #[arg(long, env = "KHAELOR_PERM_MANAGED_CONFIG", value_name = "FILE")]
    pub managed_config: Option<PathBuf>,
    /// Allow listening beyond loopback without a token.
    #[arg(long)]
    pub insecure_no_auth: bool,
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
        match http::serve(listener, AppState::new(config), shutdown_signal()).await {
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

/// Checks the flags and builds the service configuration.
pub fn service_config(args: &Args) -> Result<ServiceConfig, ServeError> {
    let token = match &args.token_file {
        Some(path) => {
            let text = std::fs::read_to_string(path).map_err(|source| ServeError::TokenFile {
                path: path.display().to_string(),
                source,
            })?;
            let token = text.trim().to_string();
            if token.is_empty() {
                return Err(ServeError::EmptyToken(path.display().to_string()));
            }
            Some(token)
        }
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
    let default_home = std::env::var_os("HOME").map_or_else(|| PathBuf::from("/"), PathBuf::from);
    Ok(ServiceConfig {
        state_dir,
        token,
        workspace_roots,
        managed_config: args.managed_config.clone(),
        default_home,
    })
}

/// `$XDG_STATE_HOME/khaelor-perm`, else `$HOME/.local/state/khaelor-perm`.
pub fn default_state_dir() -> Option<PathBuf> {
    let absolute = |v: std::ffi::OsString| Some(PathBuf::from(v)).filter(|p| p.is_absolute());
    if let Some(x) = std::env::var_os("XDG_STATE_HOME").and_then(absolute) {
        return Some(x.join("khaelor-perm"));
    }
    std::env::var_os("HOME")
        .and_then(absolute)
        .map(|h| h.join(Path::new(".local/state/khaelor-perm")))
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
