//! Panel latency on loopback, against the real `khaelor-perm serve`: how long from a
//! host hook's request (`POST /v1/hooks/codex?wait=30`, a call that asks) to the call
//! appearing on `GET /v1/pending/stream` (what a panel shows), and from the person's
//! grant (`POST …/grant` with the panel token) to the waiting hook's answer. Medians
//! and p95 over `KHAELOR_PANEL_RUNS` runs (default 200). Run:
//! `cargo bench --bench panel_latency`; the numbers go into BENCHMARKS.md, section
//! "Panel latency".
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_khaelor-perm");

struct Service {
    child: Child,
    addr: String,
}

impl Drop for Service {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start(state: &std::path::Path, home: &std::path::Path) -> Service {
    let mut child = Command::new(BIN)
        .args(["serve", "--addr", "127.0.0.1:0", "--state-dir"])
        .arg(state)
        .env("HOME", home)
        .env("RUST_LOG", "warn")
        .env_remove("KHAELOR_PERM_TOKEN_FILE")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let addr = line
        .trim()
        .strip_prefix("listening on http://")
        .unwrap_or_else(|| panic!("no listening line: {line}"))
        .to_string();
    Service { child, addr }
}

/// One HTTP/1.1 request on its own connection; the answer's body.
fn request(addr: &str, method: &str, path: &str, token: Option<&str>, body: &str) -> String {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_nodelay(true).unwrap();
    let auth = token.map_or(String::new(), |t| format!("authorization: Bearer {t}\r\n"));
    write!(
        s,
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\ncontent-type: application/json\r\ncontent-length: {}\r\n{auth}connection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).unwrap();
    let (head, body) = out.split_once("\r\n\r\n").unwrap();
    assert!(head.starts_with("HTTP/1.1 200"), "{method} {path}: {out}");
    body.to_string()
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

fn report(name: &str, mut v: Vec<Duration>) {
    v.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    println!(
        "| {name} | {} | {:.2} ms | {:.2} ms | {:.2} ms |",
        v.len(),
        ms(percentile(&v, 0.5)),
        ms(percentile(&v, 0.95)),
        ms(v[v.len() - 1])
    );
}

fn main() {
    let runs: usize = std::env::var("KHAELOR_PANEL_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(200);
    let tmp = tempfile::tempdir().unwrap();
    let (state, home, proj) = (
        tmp.path().join("state"),
        tmp.path().join("home"),
        tmp.path().join("proj"),
    );
    for d in [&state, &home, &proj] {
        std::fs::create_dir_all(d).unwrap();
    }
    let proj = proj.canonicalize().unwrap();
    let service = start(&state, &home);
    let token = std::fs::read_to_string(state.join("panel-token"))
        .unwrap()
        .trim()
        .to_string();
    let addr = service.addr.clone();

    // The panel: one stream, read line by line.
    let mut stream = TcpStream::connect(&addr).unwrap();
    stream.set_nodelay(true).unwrap();
    write!(
        stream,
        "GET /v1/pending/stream HTTP/1.1\r\nHost: {addr}\r\nauthorization: Bearer {token}\r\naccept: text/event-stream\r\n\r\n"
    )
    .unwrap();
    let mut panel = BufReader::new(stream);
    let mut line = String::new();
    // Up to the snapshot.
    loop {
        line.clear();
        panel.read_line(&mut line).unwrap();
        if line.starts_with("event: snapshot") {
            break;
        }
    }

    let mut shown = Vec::with_capacity(runs);
    let mut answered = Vec::with_capacity(runs);
    for i in 0..runs {
        let session = format!("bench-{i}");
        let body = serde_json::json!({
            "session_id": session, "cwd": proj, "hook_event_name": "PreToolUse",
            "turn_id": "t", "tool_name": "Bash", "tool_use_id": format!("c{i}"),
            "tool_input": {"command": "npm install left-pad"},
        })
        .to_string();
        let hook_addr = addr.clone();
        let sent = Instant::now();
        let hook = std::thread::spawn(move || {
            let answer = request(&hook_addr, "POST", "/v1/hooks/codex?wait=30", None, &body);
            (Instant::now(), answer)
        });
        // The panel sees the call.
        let call = loop {
            line.clear();
            panel.read_line(&mut line).unwrap();
            if let Some(data) = line.strip_prefix("data: ")
                && data.contains(&format!("\"sessionId\":\"{session}\""))
                && data.contains("\"callId\"")
                && !data.contains("\"status\"")
            {
                let v: serde_json::Value = serde_json::from_str(data).unwrap();
                break v["callId"].as_str().unwrap().to_string();
            }
        };
        shown.push(sent.elapsed());
        // The person grants; the hook answers.
        let granted = Instant::now();
        request(
            &addr,
            "POST",
            &format!("/v1/sessions/{session}/calls/{call}/grant"),
            Some(&token),
            r#"{"scope":"once"}"#,
        );
        let (at, answer) = hook.join().unwrap();
        assert!(answer.contains("\"allow\""), "{answer}");
        answered.push(at.duration_since(granted));
    }
    println!("| measure | runs | median | p95 | max |");
    println!("|---|---|---|---|---|");
    report("hook request → call on /v1/pending/stream", shown);
    report("grant POST → waiting hook's answer", answered);
}
