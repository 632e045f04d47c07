//! What the panels read, against the real server: `GET /v1/pending` lists every call
//! waiting for a person across sessions (also those recorded before a restart), and
//! `GET /v1/pending/stream` announces each call that starts waiting and each one a
//! person answers, as server-sent events, starting with a snapshot.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod http_support;

use std::io::{BufRead, BufReader, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use http_support::{Dirs, Server, bash_call};
use serde_json::{Value, json};

fn call_ids(v: &Value) -> Vec<(String, String)> {
    v["calls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["sessionId"].as_str().unwrap().to_string(),
                c["callId"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[test]
fn pending_lists_every_session_and_survives_restart() {
    let d = Dirs::new();
    let mut s = d.start(&[]);
    let ask = |s: &Server, session: &str, call: &str, cmd: &str| {
        let r = s.post(
            &format!("/v1/sessions/{session}/calls"),
            &bash_call(&d, call, None, cmd),
        );
        assert_eq!(r.status, 200, "{}", r.text);
        r.body["status"].as_str().unwrap().to_string()
    };
    assert_eq!(ask(&s, "a", "a1", "npm install"), "pending");
    assert_eq!(ask(&s, "a", "a2", "git status"), "approved");
    assert_eq!(ask(&s, "b", "b1", "rm -r notes.txt"), "pending");
    let list = s.get("/v1/pending");
    assert_eq!(list.status, 200, "{}", list.text);
    assert_eq!(
        call_ids(&list.body),
        [("a".into(), "a1".into()), ("b".into(), "b1".into())]
    );
    let first = &list.body["calls"][0];
    assert_eq!(first["tool"], "bash");
    assert_eq!(first["input"]["command"], "npm install");
    assert_eq!(first["cwd"], d.root_str());
    assert_eq!(first["decision"]["alwaysPatterns"], json!(["npm install"]));
    assert!(first.get("host").is_none(), "no host sent this call");

    // A fresh server reads the logs on disk for its first listing.
    assert!(s.stop().success());
    drop(s);
    let s = d.start(&[]);
    assert_eq!(
        call_ids(&s.get("/v1/pending").body),
        [("a".into(), "a1".into()), ("b".into(), "b1".into())]
    );
    let r = s.post("/v1/sessions/a/calls/a1/grant", &json!({"scope": "once"}));
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(
        call_ids(&s.get("/v1/pending").body),
        [("b".into(), "b1".into())]
    );
}

/// A reader of the server-sent events of one connection.
struct Events {
    lines: BufReader<TcpStream>,
}

impl Events {
    fn open(s: &Server) -> Events {
        let addr = s.base.strip_prefix("http://").unwrap();
        let mut conn = TcpStream::connect(addr).unwrap();
        conn.set_read_timeout(Some(Duration::from_secs(10)))
            .unwrap();
        // The stream shows what waits for the person: it needs the panel token.
        let auth = s
            .token
            .as_ref()
            .map_or(String::new(), |t| format!("Authorization: Bearer {t}\r\n"));
        write!(
            conn,
            "GET /v1/pending/stream HTTP/1.1\r\nHost: {addr}\r\n{auth}Accept: text/event-stream\r\n\r\n"
        )
        .unwrap();
        let mut lines = BufReader::new(conn);
        let mut status = String::new();
        lines.read_line(&mut status).unwrap();
        assert!(status.starts_with("HTTP/1.1 200"), "{status}");
        loop {
            let mut h = String::new();
            lines.read_line(&mut h).unwrap();
            if h == "\r\n" {
                break;
            }
            if h.to_ascii_lowercase().starts_with("content-type:") {
                assert!(h.contains("text/event-stream"), "{h}");
            }
        }
        Events { lines }
    }

    /// The next event's name and data (chunk sizes and keep-alive comments skipped).
    fn next(&mut self) -> (String, Value) {
        let deadline = Instant::now() + Duration::from_secs(10);
        let (mut name, mut data) = (String::new(), String::new());
        while Instant::now() < deadline {
            let mut line = String::new();
            self.lines.read_line(&mut line).unwrap();
            let line = line.trim_end_matches(['\r', '\n']);
            if let Some(n) = line.strip_prefix("event: ") {
                name = n.to_string();
            } else if let Some(d) = line.strip_prefix("data: ") {
                data.push_str(d);
            } else if line.is_empty() && !name.is_empty() {
                return (name, serde_json::from_str(&data).unwrap());
            }
        }
        panic!("no event within 10 s");
    }
}

#[test]
fn stream_announces_waiting_and_answered_calls() {
    let d = Dirs::new();
    let s = d.start(&[]);
    let r = s.post(
        "/v1/sessions/s/calls",
        &bash_call(&d, "before", None, "npm install"),
    );
    assert_eq!(r.body["status"], "pending", "{}", r.text);

    let mut ev = Events::open(&s);
    let (name, snap) = ev.next();
    assert_eq!(name, "snapshot");
    assert_eq!(call_ids(&snap), [("s".into(), "before".into())]);

    // An allowed call never waits: nothing is announced for it, so the next event
    // is the call that asks.
    s.post("/v1/sessions/s/calls", &bash_call(&d, "ok", None, "ls"));
    s.post(
        "/v1/sessions/s/calls",
        &bash_call(&d, "c2", Some("t"), "rm -r notes.txt"),
    );
    let (name, call) = ev.next();
    assert_eq!(name, "pending");
    assert_eq!(
        (call["sessionId"].as_str(), call["callId"].as_str()),
        (Some("s"), Some("c2"))
    );
    assert_eq!(call["decision"]["decision"], "ask");

    let r = s.post(
        "/v1/sessions/s/calls/c2/deny",
        &json!({"feedback": "not now"}),
    );
    assert_eq!(r.status, 200, "{}", r.text);
    let (name, done) = ev.next();
    assert_eq!(name, "resolved");
    assert_eq!(
        done,
        json!({"sessionId": "s", "callId": "c2", "status": "denied", "by": "user"})
    );

    // A host's call carries its host.
    let hook = json!({
        "session_id": "claude-1", "cwd": d.root_str(), "hook_event_name": "PreToolUse",
        "permission_mode": "default", "tool_name": "Bash",
        "tool_input": {"command": "npm install"}, "tool_use_id": "tu1",
    });
    let r = s.post("/v1/hooks/claude", &hook);
    assert_eq!(r.status, 200, "{}", r.text);
    let (name, call) = ev.next();
    assert_eq!(name, "pending", "{call}");
    assert_eq!(call["host"], "claude");
    assert_eq!(call["sessionId"], "claude-1");

    // An "always" grant on the first call resolves it.
    let r = s.post(
        "/v1/sessions/s/calls/before/grant",
        &json!({"scope": "always", "pattern": "npm install"}),
    );
    assert_eq!(r.status, 200, "{}", r.text);
    let (name, done) = ev.next();
    assert_eq!(name, "resolved");
    assert_eq!(done["callId"], "before");
    assert_eq!(done["status"], "approved");
    assert_eq!(done["by"], "user");
}
