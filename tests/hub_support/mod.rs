//! A team's load on replicas sharing one PostgreSQL store, for the proof
//! (tests/replicas_load.rs) and the benchmark (benches/hub.rs): hooks on several
//! "machines" (each its own project and home) making calls through
//! `POST /v1/hooks/codex?wait=…`, each hook waiting on one replica, and a person
//! answering every ask on a different replica than the one its hook waits on. Then
//! the database is read back: every event once, every session numbered 1..n.
//!
//! Needs `crate::http_support` and `crate::pg_support` beside it.
#![allow(
    dead_code,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::http_support::{Client, Dirs, Server, agent};
use crate::pg_support::Postgres;

/// The load's shape.
#[derive(Debug, Clone, Copy)]
pub struct Load {
    /// Concurrent hooks (each its own session).
    pub hooks: usize,
    /// Machines the hooks are spread over (each its own project and home).
    pub machines: usize,
    /// Calls each hook makes, one after the other.
    pub calls_per_hook: usize,
    /// One call in this many asks (the rest the rules allow).
    pub ask_every: usize,
}

/// What a run measured and checked.
#[derive(Debug)]
pub struct Report {
    pub replicas: usize,
    pub calls: usize,
    pub asks: usize,
    pub elapsed: Duration,
    /// Calls answered per second, asks included.
    pub decisions_per_sec: f64,
    /// From the person's answer (its response) to the waiting hook's answer.
    pub ask_p50: Duration,
    pub ask_p95: Duration,
    pub events: u64,
}

/// `n` replicas on `pg`, each with its own state directory.
pub fn replicas(
    pg: &Postgres,
    n: usize,
    home: &std::path::Path,
) -> (Vec<tempfile::TempDir>, Vec<Server>) {
    let states: Vec<tempfile::TempDir> = (0..n).map(|_| tempfile::tempdir().unwrap()).collect();
    let servers = states
        .iter()
        .map(|st| Server::start(st.path(), home, &["--store", &pg.url]))
        .collect();
    (states, servers)
}

fn pre_tool(root: &str, session: &str, call: &str, command: &str) -> Value {
    json!({ "session_id": session, "cwd": root, "hook_event_name": "PreToolUse",
        "permission_mode": "default", "turn_id": "turn-1", "model": "m",
        "tool_name": "Bash", "tool_input": {"command": command}, "tool_use_id": call })
}

/// Codex's `permissionDecision` (`none` when it says nothing: the rules allowed it).
fn decision(text: &str) -> String {
    let v: Value = serde_json::from_str(text).unwrap_or(Value::Null);
    v["hookSpecificOutput"]["permissionDecision"]
        .as_str()
        .unwrap_or("none")
        .to_string()
}

/// Whether the person grants (else denies) the `n`th ask of a hook.
fn grants(n: usize) -> bool {
    n.is_multiple_of(2)
}

/// Runs `load` on `servers` (sharing `pg`), tagging sessions with `tag` so runs on one
/// database do not meet, and checks every answer and the events.
pub fn run(pg: &Postgres, servers: &[Server], load: Load, tag: &str) -> Report {
    let machines: Vec<Dirs> = (0..load.machines).map(|_| Dirs::new()).collect();
    let roots: Vec<String> = machines.iter().map(Dirs::root_str).collect();
    let n = servers.len();
    let clients: Vec<Client> = servers.iter().map(Server::client).collect();
    let done = Arc::new(AtomicBool::new(false));
    // (session, call) -> when the person sent the answer that was recorded.
    let answered: Arc<Mutex<HashMap<(String, String), Instant>>> = Arc::default();

    // The person: reads every replica's pending list in turn and answers each call
    // on the replica after the one its hook waits on.
    let person = {
        let (clients, done, answered) = (clients.clone(), done.clone(), answered.clone());
        std::thread::spawn(move || {
            let mut seen: HashSet<(String, String)> = HashSet::new();
            let mut refused = 0usize;
            let mut turn = 0usize;
            while !done.load(Ordering::SeqCst) {
                let on = &clients[turn % n];
                turn += 1;
                let r = on.get("/v1/pending");
                assert_eq!(r.status, 200, "{}", r.text);
                let calls = r.body["calls"].as_array().cloned().unwrap_or_default();
                if calls.is_empty() {
                    std::thread::sleep(Duration::from_millis(2));
                }
                for c in calls {
                    let session = c["sessionId"].as_str().unwrap().to_string();
                    let call = c["callId"].as_str().unwrap().to_string();
                    if seen.contains(&(session.clone(), call.clone())) {
                        continue;
                    }
                    let hook: usize = session.rsplit('h').next().unwrap().parse().unwrap();
                    let nth: usize = call.trim_start_matches('c').parse().unwrap();
                    let at = &clients[(hook % n + 1) % n];
                    let clicked = Instant::now();
                    let r = if grants(nth) {
                        at.post(
                            &format!("/v1/sessions/{session}/calls/{call}/grant"),
                            &json!({"scope": "once"}),
                        )
                    } else {
                        at.post(
                            &format!("/v1/sessions/{session}/calls/{call}/deny"),
                            &json!({"feedback": "load-deny"}),
                        )
                    };
                    match r.status {
                        200 => {
                            let first = answered
                                .lock()
                                .unwrap()
                                .insert((session.clone(), call.clone()), clicked)
                                .is_none();
                            assert!(first, "{session}/{call} answered twice");
                            seen.insert((session, call));
                        }
                        // Raced another replica's write: nothing was recorded; the
                        // call is still pending and is answered on a later round.
                        409 if r.code() == "session_changed" => refused += 1,
                        _ => panic!("answering {session}/{call}: {} {}", r.status, r.text),
                    }
                }
            }
            refused
        })
    };

    let started = Instant::now();
    let hooks: Vec<_> = (0..load.hooks)
        .map(|t| {
            let client = Client {
                token: None,
                agent: agent(),
                ..clients[t % n].clone()
            };
            let root = roots[t % load.machines].clone();
            let session = format!("{tag}m{}h{t}", t % load.machines);
            std::thread::spawn(move || {
                let mut latencies = Vec::new();
                let mut asks = 0;
                for i in 0..load.calls_per_hook {
                    let ask = i % load.ask_every == 0;
                    let command = if ask {
                        format!("npm install pkg{i}")
                    } else {
                        "git status".to_string()
                    };
                    let call = format!("c{i}");
                    let r = client.post(
                        "/v1/hooks/codex?wait=120",
                        &pre_tool(&root, &session, &call, &command),
                    );
                    let back = Instant::now();
                    assert_eq!(r.status, 200, "{session}/{call}: {}", r.text);
                    let got = decision(&r.text);
                    let want = match (ask, grants(i)) {
                        (false, _) => "none",
                        (true, true) => "allow",
                        (true, false) => "deny",
                    };
                    assert_eq!(got, want, "{session}/{call} `{command}`: {}", r.text);
                    if ask {
                        asks += 1;
                        if !grants(i) {
                            assert!(r.text.contains("load-deny"), "{}", r.text);
                        }
                        latencies.push(((session.clone(), call), back));
                    }
                }
                (asks, latencies)
            })
        })
        .collect();
    let mut backs = Vec::new();
    let mut asks = 0;
    for h in hooks {
        let (a, l) = h.join().unwrap();
        asks += a;
        backs.extend(l);
    }
    let elapsed = started.elapsed();
    done.store(true, Ordering::SeqCst);
    let _refused = person.join().unwrap();
    let answered = answered.lock().unwrap();
    assert_eq!(answered.len(), asks, "every ask answered once");
    let mut latencies: Vec<Duration> = backs
        .iter()
        .map(|(key, back)| {
            let clicked = answered
                .get(key)
                .expect("a hook was answered that the person never answered");
            back.saturating_duration_since(*clicked)
        })
        .collect();
    latencies.sort();
    let pct = |p: usize| {
        latencies
            .get((latencies.len() * p / 100).min(latencies.len().saturating_sub(1)))
            .copied()
            .unwrap_or_default()
    };

    // The database: every event once, every session numbered 1..n without a gap.
    let calls = load.hooks * load.calls_per_hook;
    let like = format!("{tag}%");
    let q = |sql: &str| pg.psql(&sql.replace("$TAG", &like));
    assert_eq!(
        q("SELECT count(*) FROM events WHERE session_id LIKE '$TAG' AND kind = 'ToolRequested'"),
        calls.to_string(),
        "one ToolRequested per call"
    );
    assert_eq!(
        q(
            "SELECT count(*) FROM (SELECT 1 FROM events WHERE session_id LIKE '$TAG' GROUP BY session_id, call_id, kind HAVING count(*) > 1) d"
        ),
        "0",
        "an event recorded twice"
    );
    assert_eq!(
        q(
            "SELECT count(*) FROM (SELECT 1 FROM events WHERE session_id LIKE '$TAG' GROUP BY session_id HAVING count(*) <> max(seq) OR min(seq) <> 1) g"
        ),
        "0",
        "a session's numbers have a gap"
    );
    assert_eq!(
        q(
            "SELECT count(*) FROM events WHERE session_id LIKE '$TAG' AND (kind = 'PermissionGranted' OR (kind = 'PermissionDenied' AND body->>'by' = 'user'))"
        ),
        asks.to_string(),
        "one person's answer per ask"
    );
    let events: u64 = q("SELECT count(*) FROM events WHERE session_id LIKE '$TAG'")
        .parse()
        .unwrap();
    Report {
        replicas: n,
        calls,
        asks,
        elapsed,
        decisions_per_sec: calls as f64 / elapsed.as_secs_f64(),
        ask_p50: pct(50),
        ask_p95: pct(95),
        events,
    }
}
