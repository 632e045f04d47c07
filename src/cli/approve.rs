//! `khaelor-perm approve`: the terminal panel (seed §6.1) for the calls a running service
//! holds pending, for a person beside the agent (a tmux split, an SSH session).
//!
//! Owns the I/O: the terminal (raw mode and the alternate screen, given back on every
//! exit, a panic and SIGTERM included), the keys, the service's event stream
//! (`GET /v1/pending/stream`, server-sent events read over hyper's HTTP/1 client) and
//! the answers (`POST /v1/sessions/{id}/calls/{call}/grant|deny`, the routes every other
//! client uses). What is drawn and what each key means is the child module `panel`
//! (drawn from the decision's own `messages::Panel`); this file never decides and never
//! builds panel text.
//!
//! A lost stream is retried with a visible "disconnected, retrying" header; the queue
//! then starts again from the snapshot the service sends first. An answer that fails
//! is shown as an error and the call stays on screen.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use crossterm::event::{self, Event};
use http_body_util::{BodyExt, Full};
use hyper::body::Bytes;
use hyper::{Method, Request, Uri};
use hyper_util::rt::TokioIo;
use tokio::sync::mpsc;

use crate::presentation::messages::terminal_safe_line;
use panel::{App, Command, Link, PanelCall, StreamEvent, color_allowed};

mod panel;

/// `serve`'s default address (a test holds the two together).
pub const DEFAULT_URL: &str = "http://127.0.0.1:8790";
/// How long one answer may take.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(10);
/// The service sends a keep-alive comment every 15 s; a stream silent for this long is
/// dead and is opened again.
const STREAM_SILENCE: Duration = Duration::from_secs(45);
/// Longest event (a snapshot of every pending call) read from the stream.
const MAX_EVENT_BYTES: usize = 32 * 1024 * 1024;
/// Largest answer body read.
const MAX_RESPONSE_BYTES: usize = 4 * 1024 * 1024;

#[derive(Debug, clap::Args)]
#[command(
    after_help = "Keys: Enter allow once · A always (again: the next pattern; \
Enter confirms, Esc backs out) · Esc deny, then an optional one-line reason (Enter sends) · \
Tab details · j/k or ↑/↓ the queue · PgUp/PgDn scroll · q quit.\n\n\
Examples:\n  khaelor-perm approve\n  \
khaelor-perm approve --url http://127.0.0.1:8790 --token-file ~/.local/state/khaelor-perm/panel-token"
)]
pub struct Args {
    /// The service (`khaelor-perm serve`); plain `http://` only (run it on loopback, or
    /// reach it through an SSH tunnel).
    #[arg(long, env = "KHAELOR_PERM_URL", value_name = "URL", default_value = DEFAULT_URL)]
    pub url: String,
    /// File holding the service's bearer token [default: `<state-dir>/panel-token` when
    /// it exists].
    #[arg(long, env = "KHAELOR_PERM_TOKEN_FILE", value_name = "FILE")]
    pub token_file: Option<PathBuf>,
    /// The service's state directory, where `serve` keeps `panel-token` [default: as
    /// `serve`: $XDG_STATE_HOME/khaelor-perm or $HOME/.local/state/khaelor-perm].
    #[arg(long, env = "KHAELOR_PERM_STATE_DIR", value_name = "DIR")]
    pub state_dir: Option<PathBuf>,
}

pub fn run(args: Args) -> ExitCode {
    let service = match Service::new(&args) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("khaelor-perm approve: {}", terminal_safe_line(&e));
            return ExitCode::from(2);
        }
    };
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("khaelor-perm approve: could not start the async runtime: {e}");
            return ExitCode::from(1);
        }
    };
    // Raw mode and the alternate screen; ratatui's panic hook gives them back before a
    // panic message prints, and `Restore` on every other way out.
    let mut terminal = match ratatui::try_init() {
        Ok(t) => t,
        Err(e) => {
            ratatui::restore();
            eprintln!("khaelor-perm approve: cannot use this terminal: {e}");
            return ExitCode::from(1);
        }
    };
    let _restore = Restore;
    let outcome = runtime.block_on(main_loop(&mut terminal, service));
    drop(_restore);
    // An answer or a connection still under way must not hold the exit.
    runtime.shutdown_timeout(Duration::from_millis(200));
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("khaelor-perm approve: {}", terminal_safe_line(&e));
            ExitCode::from(1)
        }
    }
}

/// Gives the terminal back when dropped.
struct Restore;

impl Drop for Restore {
    fn drop(&mut self) {
        ratatui::restore();
    }
}

/// Where the service is and how to authenticate.
#[derive(Debug, Clone)]
struct Service {
    /// `host:port`.
    authority: String,
    /// A path the service is mounted under (`http://h/khaelor` → `/khaelor`).
    prefix: String,
    token: Option<String>,
    /// As typed, for the header.
    url: String,
}

impl Service {
    fn new(args: &Args) -> Result<Service, String> {
        let uri: Uri = args
            .url
            .parse()
            .map_err(|e| format!("`--url {}` is not a URL: {e}", args.url))?;
        if uri.scheme_str() != Some("http") {
            return Err(format!("`--url {}` is not an `http://` URL", args.url));
        }
        let authority = uri
            .authority()
            .ok_or_else(|| format!("`--url {}` names no host", args.url))?;
        let authority = if authority.port().is_some() {
            authority.to_string()
        } else {
            format!("{authority}:80")
        };
        let token_file = match &args.token_file {
            Some(f) => Some(f.clone()),
            None => args
                .state_dir
                .clone()
                .or_else(crate::policy::trust::default_state_dir)
                .map(|d| d.join("panel-token"))
                .filter(|f| f.exists()),
        };
        let token = match token_file {
            Some(f) => {
                let t = std::fs::read_to_string(&f)
                    .map_err(|e| format!("cannot read token file `{}`: {e}", f.display()))?;
                Some(t.trim().to_string()).filter(|t| !t.is_empty())
            }
            None => None,
        };
        Ok(Service {
            authority,
            prefix: uri.path().trim_end_matches('/').to_string(),
            token,
            url: args.url.clone(),
        })
    }

    fn request(
        &self,
        method: Method,
        path: &str,
        body: Option<Vec<u8>>,
    ) -> Result<Request<Full<Bytes>>, String> {
        let mut req = Request::builder()
            .method(method)
            .uri(format!("{}{path}", self.prefix))
            .header("host", &self.authority);
        if let Some(t) = &self.token {
            req = req.header("authorization", format!("Bearer {t}"));
        }
        let body = match body {
            Some(b) => {
                req = req.header("content-type", "application/json");
                Full::new(Bytes::from(b))
            }
            None => Full::new(Bytes::new()),
        };
        req.body(body)
            .map_err(|e| format!("cannot build the request: {e}"))
    }

    /// One HTTP/1.1 exchange on a fresh connection: the status and the response.
    async fn send(
        &self,
        req: Request<Full<Bytes>>,
    ) -> Result<hyper::Response<hyper::body::Incoming>, String> {
        let tcp = tokio::net::TcpStream::connect(&self.authority)
            .await
            .map_err(|e| format!("cannot reach the service at `{}`: {e}", self.url))?;
        let _ = tcp.set_nodelay(true);
        let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(tcp))
            .await
            .map_err(|e| format!("the service at `{}` failed: {e}", self.url))?;
        tokio::spawn(async move {
            let _ = conn.await;
        });
        sender
            .send_request(req)
            .await
            .map_err(|e| format!("the service at `{}` failed: {e}", self.url))
    }

    /// A JSON request and its JSON answer; a non-2xx status is an error with the
    /// service's own message.
    async fn json(
        &self,
        path: &str,
        body: &serde_json::Value,
    ) -> Result<serde_json::Value, String> {
        let req = self.request(Method::POST, path, Some(body.to_string().into_bytes()))?;
        let exchange = async {
            let resp = self.send(req).await?;
            let status = resp.status();
            let body = http_body_util::Limited::new(resp.into_body(), MAX_RESPONSE_BYTES)
                .collect()
                .await
                .map_err(|e| format!("the service's answer could not be read: {e}"))?
                .to_bytes();
            let v: serde_json::Value = serde_json::from_slice(&body).unwrap_or_default();
            if status.is_success() {
                Ok(v)
            } else {
                let msg = error_message(&v)
                    .map(str::to_string)
                    .unwrap_or_else(|| String::from_utf8_lossy(&body).trim().to_string());
                Err(format!("the service answered {}: {msg}", status.as_u16()))
            }
        };
        tokio::time::timeout(REQUEST_TIMEOUT, exchange)
            .await
            .map_err(|_| "the service did not answer in time".to_string())?
    }
}

/// The message of the service's error body `{"error":{"message":…}}`.
fn error_message(v: &serde_json::Value) -> Option<&str> {
    v.get("error")?.get("message")?.as_str()
}

/// What the loop waits on.
enum Input {
    Key(event::KeyEvent),
    Redraw,
    Stream(StreamEvent),
    Link(Link),
    Done {
        session_id: String,
        call_id: String,
        result: Result<String, String>,
    },
    Stop,
}

async fn main_loop(
    terminal: &mut ratatui::DefaultTerminal,
    service: Service,
) -> Result<(), String> {
    let color = color_allowed(
        std::env::var("NO_COLOR").ok().as_deref(),
        std::env::var("TERM").ok().as_deref(),
    );
    let mut app = App::new(service.url.clone(), color);
    let (tx, mut rx) = mpsc::unbounded_channel::<Input>();
    spawn_keys(tx.clone());
    tokio::spawn(stream_loop(service.clone(), tx.clone()));
    {
        let tx = tx.clone();
        tokio::spawn(async move {
            let Ok(mut term) =
                tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
            else {
                return;
            };
            let Ok(mut hup) =
                tokio::signal::unix::signal(tokio::signal::unix::SignalKind::hangup())
            else {
                return;
            };
            // Ctrl-C in raw mode is a key; a SIGINT comes from `kill -INT`.
            let Ok(mut int) =
                tokio::signal::unix::signal(tokio::signal::unix::SignalKind::interrupt())
            else {
                return;
            };
            tokio::select! {
                _ = term.recv() => {}
                _ = hup.recv() => {}
                _ = int.recv() => {}
            }
            let _ = tx.send(Input::Stop);
        });
    }
    let draw = |terminal: &mut ratatui::DefaultTerminal, app: &App| {
        terminal
            .draw(|f| app.draw(f))
            .map(|_| ())
            .map_err(|e| format!("cannot draw: {e}"))
    };
    draw(terminal, &app)?;
    while let Some(input) = rx.recv().await {
        let now = Instant::now();
        match input {
            Input::Key(k) => match app.key(k, now) {
                Some(Command::Quit) => return Ok(()),
                Some(cmd) => {
                    tokio::spawn(answer(service.clone(), cmd, tx.clone()));
                }
                None => {}
            },
            Input::Redraw => {}
            Input::Stream(e) => app.apply(e, now),
            Input::Link(l) => app.set_link(l),
            Input::Done {
                session_id,
                call_id,
                result,
            } => app.finished(&session_id, &call_id, result, now),
            Input::Stop => return Ok(()),
        }
        draw(terminal, &app)?;
    }
    Ok(())
}

/// Keys and resizes, read on their own thread (crossterm's read blocks).
fn spawn_keys(tx: mpsc::UnboundedSender<Input>) {
    std::thread::spawn(move || {
        loop {
            let input = match event::read() {
                Ok(Event::Key(k)) => Input::Key(k),
                Ok(Event::Resize(..)) => Input::Redraw,
                Ok(_) => continue,
                Err(_) => Input::Stop,
            };
            let stop = matches!(input, Input::Stop);
            if tx.send(input).is_err() || stop {
                return;
            }
        }
    });
}

/// Sends one answer and reports how it went.
async fn answer(service: Service, cmd: Command, tx: mpsc::UnboundedSender<Input>) {
    let (session_id, call_id, route, body) = match &cmd {
        Command::AllowOnce {
            session_id,
            call_id,
        } => (
            session_id,
            call_id,
            "grant",
            serde_json::json!({ "scope": "once" }),
        ),
        Command::AllowAlways {
            session_id,
            call_id,
            pattern,
        } => (
            session_id,
            call_id,
            "grant",
            serde_json::json!({ "scope": "always", "pattern": pattern }),
        ),
        Command::Deny {
            session_id,
            call_id,
            feedback,
        } => (
            session_id,
            call_id,
            "deny",
            match feedback {
                Some(f) => serde_json::json!({ "feedback": f }),
                None => serde_json::json!({}),
            },
        ),
        Command::Quit => return,
    };
    let path = format!("/v1/sessions/{session_id}/calls/{call_id}/{route}");
    let result = service
        .json(&path, &body)
        .await
        .map(|v| outcome_line(&cmd, &v));
    let _ = tx.send(Input::Done {
        session_id: session_id.clone(),
        call_id: call_id.clone(),
        result,
    });
}

/// The status line for an answer the service took.
fn outcome_line(cmd: &Command, v: &serde_json::Value) -> String {
    let also = |key: &str, what: &str| {
        let n = v.get(key).and_then(|a| a.as_array()).map_or(0, Vec::len);
        if n > 0 {
            format!(
                " ({n} other waiting call{} {what})",
                if n == 1 { "" } else { "s" }
            )
        } else {
            String::new()
        }
    };
    match cmd {
        Command::AllowOnce { call_id, .. } => format!("✓ allowed once: call {call_id}"),
        Command::AllowAlways { pattern, .. } => format!(
            "✓ always allowed \"{pattern}\", written to {}{}",
            v.get("configFile")
                .and_then(|f| f.as_str())
                .unwrap_or("the project config"),
            also("autoApproved", "now allowed too")
        ),
        Command::Deny { .. } => format!(
            "✗ denied; the model reads: {}{}",
            v.get("message").and_then(|m| m.as_str()).unwrap_or(""),
            also("alsoDenied", "of the same turn denied too")
        ),
        Command::Quit => String::new(),
    }
}

/// Keeps the event stream open: reads it into `tx`, and on a loss says so and opens it
/// again after a pause that grows to a few seconds.
async fn stream_loop(service: Service, tx: mpsc::UnboundedSender<Input>) {
    let mut pause = Duration::from_millis(250);
    loop {
        let started = Instant::now();
        let why = match read_stream(&service, &tx).await {
            Ok(()) => "the service closed the stream".to_string(),
            Err(e) => e,
        };
        if tx.is_closed() {
            return;
        }
        if started.elapsed() > Duration::from_secs(10) {
            pause = Duration::from_millis(250);
        }
        let _ = tx.send(Input::Link(Link::Retrying { why }));
        tokio::time::sleep(pause).await;
        pause = (pause * 2).min(Duration::from_secs(5));
    }
}

/// Reads one connection of the stream until it ends.
async fn read_stream(service: &Service, tx: &mpsc::UnboundedSender<Input>) -> Result<(), String> {
    let mut req = service.request(Method::GET, "/v1/pending/stream", None)?;
    req.headers_mut().insert(
        "accept",
        hyper::header::HeaderValue::from_static("text/event-stream"),
    );
    let resp = tokio::time::timeout(REQUEST_TIMEOUT, service.send(req))
        .await
        .map_err(|_| "the service did not answer in time".to_string())??;
    let status = resp.status();
    let mut body = resp.into_body();
    if !status.is_success() {
        let text = tokio::time::timeout(REQUEST_TIMEOUT, async {
            http_body_util::Limited::new(body, MAX_RESPONSE_BYTES)
                .collect()
                .await
        })
        .await
        .ok()
        .and_then(Result::ok)
        .map(|b| b.to_bytes())
        .unwrap_or_default();
        let v: serde_json::Value = serde_json::from_slice(&text).unwrap_or_default();
        let msg = error_message(&v).unwrap_or("");
        return Err(format!("the service answered {}: {msg}", status.as_u16()));
    }
    let mut parser = SseParser::default();
    loop {
        let frame = match tokio::time::timeout(STREAM_SILENCE, body.frame()).await {
            Err(_) => return Err("the stream went silent".into()),
            Ok(None) => return Ok(()),
            Ok(Some(Err(e))) => return Err(format!("the stream broke: {e}")),
            Ok(Some(Ok(f))) => f,
        };
        let Ok(data) = frame.into_data() else {
            continue;
        };
        for (name, data) in parser.push(&data)? {
            match stream_event(&name, &data) {
                Ok(Some(e)) => {
                    if tx.send(Input::Stream(e)).is_err() {
                        return Ok(());
                    }
                }
                Ok(None) => {}
                Err(e) => return Err(e),
            }
        }
    }
}

/// One server-sent event read as what the panel knows; `None` for an event it does
/// not use.
fn stream_event(name: &str, data: &str) -> Result<Option<StreamEvent>, String> {
    let bad = |e: serde_json::Error| {
        format!("the service sent a `{name}` event this panel cannot read: {e}")
    };
    Ok(match name {
        "snapshot" => {
            #[derive(serde::Deserialize)]
            struct Snapshot {
                calls: Vec<PanelCall>,
            }
            let s: Snapshot = serde_json::from_str(data).map_err(bad)?;
            Some(StreamEvent::Snapshot(s.calls))
        }
        "pending" => Some(StreamEvent::Pending(Box::new(
            serde_json::from_str(data).map_err(bad)?,
        ))),
        "resolved" => Some(StreamEvent::Resolved(
            serde_json::from_str(data).map_err(bad)?,
        )),
        _ => None,
    })
}

/// The server-sent events wire format (the WHATWG `text/event-stream` rules this
/// client needs): lines ending in LF, CRLF or CR; `event:` names the event, `data:`
/// lines join with LF, a blank line dispatches, a line starting with `:` is a comment.
#[derive(Debug, Default)]
struct SseParser {
    /// Bytes of a line not yet ended.
    line: Vec<u8>,
    /// A CR ended the last line: an LF right after it belongs to it.
    after_cr: bool,
    event: String,
    data: String,
    /// Whether the event has a `data` field (an event without one is not dispatched).
    has_data: bool,
}

impl SseParser {
    /// Feeds a chunk; returns the events it completed as (name, data).
    fn push(&mut self, chunk: &[u8]) -> Result<Vec<(String, String)>, String> {
        let mut out = Vec::new();
        for &b in chunk {
            if self.after_cr && b == b'\n' {
                self.after_cr = false;
                continue;
            }
            self.after_cr = b == b'\r';
            if b == b'\n' || b == b'\r' {
                let line = String::from_utf8_lossy(&std::mem::take(&mut self.line)).into_owned();
                if let Some(e) = self.line_done(&line) {
                    out.push(e);
                }
            } else {
                self.line.push(b);
            }
            if self.line.len() + self.data.len() > MAX_EVENT_BYTES {
                return Err("the service sent an event larger than this panel reads".into());
            }
        }
        Ok(out)
    }

    fn line_done(&mut self, line: &str) -> Option<(String, String)> {
        if line.is_empty() {
            let event = std::mem::take(&mut self.event);
            let data = std::mem::take(&mut self.data);
            let has = std::mem::take(&mut self.has_data);
            return has.then(|| {
                (
                    if event.is_empty() {
                        "message".into()
                    } else {
                        event
                    },
                    data,
                )
            });
        }
        if line.starts_with(':') {
            return None;
        }
        let (field, value) = match line.split_once(':') {
            Some((f, v)) => (f, v.strip_prefix(' ').unwrap_or(v)),
            None => (line, ""),
        };
        match field {
            "event" => self.event = value.to_string(),
            "data" => {
                if self.has_data {
                    self.data.push('\n');
                }
                self.data.push_str(value);
                self.has_data = true;
            }
            _ => {}
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_url_is_where_serve_listens() {
        use clap::{Args as _, FromArgMatches};
        let cmd = crate::cli::serve::Args::augment_args(clap::Command::new("serve"));
        let m = cmd.try_get_matches_from(["serve"]).unwrap_or_default();
        let serve = crate::cli::serve::Args::from_arg_matches(&m);
        let addr = serve.map(|a| a.addr.to_string()).unwrap_or_default();
        assert_eq!(DEFAULT_URL, format!("http://{addr}"));
    }

    #[test]
    fn sse_events_across_chunks_and_line_endings() {
        let mut p = SseParser::default();
        let mut got = p.push(b": keep-alive\n\nevent: snap").unwrap_or_default();
        got.extend(
            p.push(b"shot\r\ndata: {\"a\":\r\ndata:1}\r\n\r")
                .unwrap_or_default(),
        );
        got.extend(
            p.push(b"\nevent: x\rdata: y\r\rdata\n\n")
                .unwrap_or_default(),
        );
        assert_eq!(
            got,
            vec![
                ("snapshot".to_string(), "{\"a\":\n1}".to_string()),
                ("x".to_string(), "y".to_string()),
                ("message".to_string(), String::new()),
            ]
        );
    }

    #[test]
    fn sse_utf8_split_across_chunks_is_kept() {
        let mut p = SseParser::default();
        let bytes = "data: é\n\n".as_bytes();
        let (a, b) = bytes.split_at(7);
        let mut got = p.push(a).unwrap_or_default();
        got.extend(p.push(b).unwrap_or_default());
        assert_eq!(got, vec![("message".to_string(), "é".to_string())]);
    }

    #[test]
    fn resolved_and_unknown_events() {
        let r = stream_event(
            "resolved",
            r#"{"sessionId":"s","callId":"c","status":"approved","by":"user"}"#,
        );
        assert!(matches!(r, Ok(Some(StreamEvent::Resolved(ref x))) if x.call_id == "c"));
        assert!(matches!(stream_event("other", "{}"), Ok(None)));
        assert!(stream_event("snapshot", "not json").is_err());
    }

    #[test]
    fn url_and_token_file() {
        let dir = tempfile::tempdir().unwrap_or_else(|_| std::process::abort());
        let f = dir.path().join("panel-token");
        std::fs::write(&f, "abc\n").unwrap_or_default();
        let args = Args {
            url: "http://127.0.0.1:9/k/".into(),
            token_file: None,
            state_dir: Some(dir.path().to_path_buf()),
        };
        let s = Service::new(&args).map_err(|e| e.to_string());
        let s = s
            .as_ref()
            .map(|s| (s.authority.as_str(), s.prefix.as_str(), s.token.as_deref()));
        assert_eq!(s, Ok(("127.0.0.1:9", "/k", Some("abc"))));
        let https = Args {
            url: "https://h".into(),
            token_file: None,
            state_dir: None,
        };
        assert!(Service::new(&https).is_err());
    }
}
