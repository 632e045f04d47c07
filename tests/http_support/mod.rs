//! Test support for the HTTP integration tests: starts the real `khaelor-perm serve`
//! binary on an ephemeral loopback port and talks to it with a real HTTP client.
//!
//! Each server gets its own state dir and `$HOME` (so the developer's own
//! `~/.khaelor/config.json` never leaks in) and is killed in `Drop`, whatever happens.
#![allow(
    dead_code,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;

pub const BIN: &str = env!("CARGO_BIN_EXE_khaelor-perm");

/// A running server.
pub struct Server {
    child: Option<Child>,
    /// `http://127.0.0.1:PORT`
    pub base: String,
    /// What the server wrote on stderr so far (its logs).
    pub stderr: Arc<Mutex<String>>,
    /// What the server wrote on stdout so far (its address, the web panel's login link).
    pub stdout: Arc<Mutex<String>>,
    pub token: Option<String>,
}

/// The command that starts a server with `state` and `home`, plus `extra` flags.
pub fn serve_command(state: &Path, home: &Path, extra: &[&str]) -> Command {
    serve_command_at("127.0.0.1:0", state, home, extra)
}

/// As `serve_command`, listening on `addr`.
pub fn serve_command_at(addr: &str, state: &Path, home: &Path, extra: &[&str]) -> Command {
    let mut cmd = Command::new(BIN);
    cmd.arg("serve")
        .arg("--addr")
        .arg(addr)
        .arg("--state-dir")
        .arg(state);
    cmd.args(extra);
    for var in [
        "KHAELOR_PERM_ADDR",
        "KHAELOR_PERM_STATE_DIR",
        "KHAELOR_PERM_TOKEN_FILE",
        "KHAELOR_PERM_MANAGED_CONFIG",
    ] {
        cmd.env_remove(var);
    }
    cmd.env("HOME", home)
        .env("RUST_LOG", "warn")
        .env("NO_COLOR", "1");
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    cmd
}

impl Server {
    /// Starts a server and waits for its `listening on` line.
    pub fn start(state: &Path, home: &Path, extra: &[&str]) -> Server {
        Self::spawn(serve_command(state, home, extra))
    }

    pub fn spawn(mut cmd: Command) -> Server {
        let mut child = cmd.spawn().expect("spawn khaelor-perm serve");
        let stdout = child.stdout.take().unwrap();
        let stderr_pipe = child.stderr.take().unwrap();
        let stderr = Arc::new(Mutex::new(String::new()));
        let sink = stderr.clone();
        std::thread::spawn(move || {
            let mut r = BufReader::new(stderr_pipe);
            let mut line = String::new();
            while r.read_line(&mut line).unwrap_or(0) > 0 {
                sink.lock().unwrap().push_str(&line);
                line.clear();
            }
        });
        let (tx, rx) = mpsc::channel();
        let stdout_text = Arc::new(Mutex::new(String::new()));
        let out_sink = stdout_text.clone();
        std::thread::spawn(move || {
            let mut r = BufReader::new(stdout);
            let mut line = String::new();
            while r.read_line(&mut line).unwrap_or(0) > 0 {
                out_sink.lock().unwrap().push_str(&line);
                if let Some(url) = line.trim().strip_prefix("listening on ") {
                    let _ = tx.send(url.to_string());
                }
                line.clear();
            }
        });
        // Without `--token-file` the server makes its panel token in its state dir: the
        // client sends it, as the person's panel does (tests of what is open without it
        // make a client with no token).
        let panel_token = if cmd.get_args().any(|a| a == "--token-file") {
            None
        } else {
            let args: Vec<_> = cmd.get_args().collect();
            args.iter()
                .position(|a| *a == "--state-dir")
                .and_then(|i| args.get(i + 1))
                .map(|d| Path::new(d).join("panel-token"))
        };
        let mut server = Server {
            child: Some(child),
            base: String::new(),
            stderr,
            stdout: stdout_text,
            token: None,
        };
        match rx.recv_timeout(Duration::from_secs(30)) {
            Ok(url) => {
                server.base = url.replace("0.0.0.0", "127.0.0.1");
                server.token = panel_token
                    .and_then(|f| std::fs::read_to_string(f).ok())
                    .map(|t| t.trim().to_string());
            }
            Err(_) => {
                let status = server.child.as_mut().unwrap().try_wait();
                panic!(
                    "server did not start ({status:?}); stderr:\n{}",
                    server.stderr.lock().unwrap()
                );
            }
        }
        server
    }

    /// The web panel's one-time login link, from the line `serve` prints after
    /// `listening on` (waits for it a little).
    pub fn login_link(&self) -> String {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let out = self.stdout.lock().unwrap().clone();
            if let Some(link) = out.lines().find_map(|l| {
                l.strip_prefix("web panel: ")
                    .and_then(|rest| rest.split_whitespace().next())
            }) {
                return link.to_string();
            }
            assert!(Instant::now() < deadline, "no login link on stdout:\n{out}");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    pub fn with_token(mut self, token: &str) -> Server {
        self.token = Some(token.to_string());
        self
    }

    /// Kills with SIGKILL (no shutdown at all, as a crash) and waits for the exit.
    pub fn kill9(&mut self) {
        let mut child = self.child.take().expect("server already stopped");
        let _ = child.kill();
        let _ = child.wait();
    }

    /// Stops with SIGTERM (graceful) and waits for the exit.
    pub fn stop(&mut self) -> ExitStatus {
        let mut child = self.child.take().expect("server already stopped");
        let _ = Command::new("kill")
            .arg("-TERM")
            .arg(child.id().to_string())
            .status();
        let deadline = Instant::now() + Duration::from_secs(15);
        loop {
            if let Some(status) = child.try_wait().unwrap() {
                return status;
            }
            if Instant::now() > deadline {
                let _ = child.kill();
                panic!("server did not stop on SIGTERM");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    pub fn client(&self) -> Client {
        Client {
            base: self.base.clone(),
            token: self.token.clone(),
            agent: agent(),
        }
    }

    pub fn get(&self, path: &str) -> Resp {
        self.client().get(path)
    }
    pub fn post(&self, path: &str, body: &Value) -> Resp {
        self.client().post(path, body)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

pub fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(Duration::from_secs(60)))
        .build()
        .into()
}

/// An answer: status, headers we look at, body (JSON when it parses, else a string).
#[derive(Debug, Clone)]
pub struct Resp {
    pub status: u16,
    pub body: Value,
    pub text: String,
    pub content_type: String,
    pub request_id: Option<String>,
    pub www_authenticate: Option<String>,
}

impl Resp {
    /// The error code of an error body.
    pub fn code(&self) -> &str {
        self.body["error"]["code"].as_str().unwrap_or("")
    }
    pub fn message(&self) -> &str {
        self.body["error"]["message"].as_str().unwrap_or("")
    }
    /// Asserts the status and that the body is our error shape.
    #[track_caller]
    pub fn assert_error(&self, status: u16, code: &str) {
        assert_eq!(self.status, status, "body: {}", self.text);
        assert_eq!(self.code(), code, "body: {}", self.text);
        assert!(
            !self.message().is_empty(),
            "error without message: {}",
            self.text
        );
        assert!(
            self.content_type.starts_with("application/json"),
            "content type {}",
            self.content_type
        );
    }
}

#[derive(Clone)]
pub struct Client {
    pub base: String,
    pub token: Option<String>,
    pub agent: ureq::Agent,
}

impl Client {
    fn finish(res: Result<ureq::http::Response<ureq::Body>, ureq::Error>) -> Resp {
        let mut res = res.expect("HTTP request failed");
        let header = |name: &str| {
            res.headers()
                .get(name)
                .and_then(|v| v.to_str().ok())
                .map(String::from)
        };
        let content_type = header("content-type").unwrap_or_default();
        let request_id = header("x-request-id");
        let www_authenticate = header("www-authenticate");
        let status = res.status().as_u16();
        let mut text = String::new();
        res.body_mut()
            .as_reader()
            .read_to_string(&mut text)
            .unwrap();
        let body = serde_json::from_str(&text).unwrap_or(Value::String(text.clone()));
        Resp {
            status,
            body,
            text,
            content_type,
            request_id,
            www_authenticate,
        }
    }

    fn auth<B>(&self, req: ureq::RequestBuilder<B>) -> ureq::RequestBuilder<B> {
        match &self.token {
            Some(t) => req.header("authorization", format!("Bearer {t}")),
            None => req,
        }
    }

    pub fn get(&self, path: &str) -> Resp {
        Self::finish(
            self.auth(self.agent.get(format!("{}{path}", self.base)))
                .call(),
        )
    }

    pub fn get_with(&self, path: &str, headers: &[(&str, &str)]) -> Resp {
        let mut req = self.auth(self.agent.get(format!("{}{path}", self.base)));
        for (k, v) in headers {
            req = req.header(*k, *v);
        }
        Self::finish(req.call())
    }

    pub fn post(&self, path: &str, body: &Value) -> Resp {
        Self::finish(
            self.auth(self.agent.post(format!("{}{path}", self.base)))
                .send_json(body),
        )
    }

    pub fn post_raw(&self, path: &str, content_type: Option<&str>, body: &[u8]) -> Resp {
        let mut req = self.auth(self.agent.post(format!("{}{path}", self.base)));
        if let Some(ct) = content_type {
            req = req.header("content-type", ct);
        }
        Self::finish(req.send(body))
    }

    pub fn put(&self, path: &str) -> Resp {
        Self::finish(
            self.auth(self.agent.put(format!("{}{path}", self.base)))
                .send_empty(),
        )
    }
}

/// A project, a home and a state dir, all temporary.
pub struct Dirs {
    pub project: tempfile::TempDir,
    pub home: tempfile::TempDir,
    pub state: tempfile::TempDir,
}

impl Dirs {
    pub fn new() -> Dirs {
        Dirs {
            project: tempfile::tempdir().unwrap(),
            home: tempfile::tempdir().unwrap(),
            state: tempfile::tempdir().unwrap(),
        }
    }
    /// The canonical project root (tempdirs may sit behind a symlink).
    pub fn root(&self) -> PathBuf {
        std::fs::canonicalize(self.project.path()).unwrap()
    }
    pub fn root_str(&self) -> String {
        self.root().display().to_string()
    }
    pub fn home_str(&self) -> String {
        self.home.path().display().to_string()
    }
    pub fn start(&self, extra: &[&str]) -> Server {
        Server::start(self.state.path(), self.home.path(), extra)
    }
    pub fn config_path(&self) -> PathBuf {
        self.root().join(".khaelor").join("config.json")
    }
    pub fn write_config(&self, text: &str) {
        std::fs::create_dir_all(self.root().join(".khaelor")).unwrap();
        std::fs::write(self.config_path(), text).unwrap();
    }
}

/// Trusts the project config as it is now through `POST /v1/trust` (project
/// allows apply only to content the user trusted).
pub fn trust(s: &Server, dirs: &Dirs) {
    let r = s.post(
        "/v1/trust",
        &serde_json::json!({"projectRoot": dirs.root_str()}),
    );
    assert_eq!(r.status, 200, "{}", r.text);
}

/// A `bash` tool call body for `/v1/evaluate`.
pub fn bash(dirs: &Dirs, command: &str) -> Value {
    serde_json::json!({"tool": "bash", "input": {"command": command}, "projectRoot": dirs.root_str()})
}

/// A `bash` call body for `/v1/sessions/{id}/calls`.
pub fn bash_call(dirs: &Dirs, call_id: &str, turn_id: Option<&str>, command: &str) -> Value {
    let mut v = serde_json::json!({
        "callId": call_id,
        "tool": "bash",
        "input": {"command": command},
        "projectRoot": dirs.root_str(),
    });
    if let Some(t) = turn_id {
        v["turnId"] = Value::String(t.to_string());
    }
    v
}

/// Runs the binary to completion with `args` (for start-up refusals).
pub fn run_to_exit(mut cmd: Command, timeout: Duration) -> (Option<i32>, String) {
    let mut child = cmd.spawn().unwrap();
    let deadline = Instant::now() + timeout;
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            let mut err = String::new();
            if let Some(mut e) = child.stderr.take() {
                let _ = e.read_to_string(&mut err);
            }
            return (status.code(), err);
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            return (None, String::new());
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}
