//! The team hub losing a part of itself under load, against real servers, the real
//! hook binary and a PostgreSQL cluster the test starts: `kill -9` of one replica, and
//! a restart of PostgreSQL, each in the middle of a load of waiting hooks whose asks a
//! person answers on another replica.
//!
//! What must hold, read back from the database at the end:
//! - nothing reads as allow because the hub was down: every hook that printed an allow
//!   (or Codex's silent allow) has its call's `ToolRequested` and `ToolApproved` in the
//!   database, and an ask it allowed was granted by the person (`PermissionGranted`);
//! - no event lost: every answer the person was told succeeded is in the database, and
//!   every deny carrying the person's reason has the person's `PermissionDenied`;
//! - no event doubled: no call has two events of one kind; every session is numbered
//!   1..n without a gap;
//! - a hook waiting on the replica that died ends with the host's deny (its connection
//!   drops), as `docs/src/http/team.md` says: covered by the first point, since the
//!   approval it never heard is not an allow; a hook waiting while the database is down
//!   waits on and hears the answer once it is back (no wait ends in a timeout).
//!
//! Hooks are `khaelor-perm hook codex --url … --wait`, one process per call, spread
//! over the replicas as a load balancer would: once a replica is dead, new calls go to
//! the others. `KHAELOR_HUB_CALLS` sets the calls per hook (default 8: 96 calls per
//! outage, a few seconds in a debug build).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod http_support;
mod pg_support;

use std::collections::{HashMap, HashSet};
use std::io::Write;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use http_support::{BIN, Dirs, Server, agent};
use pg_support::Postgres;
use serde_json::{Value, json};

const HOOKS: usize = 12;
const MACHINES: usize = 3;
const REPLICAS: usize = 3;

fn calls_per_hook() -> usize {
    std::env::var("KHAELOR_HUB_CALLS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(8)
}

/// What goes down in the middle of the load.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Outage {
    /// `kill -9` of replica 0.
    KillReplica,
    /// PostgreSQL stopped, then started again on the same data.
    RestartDatabase,
}

fn pre_tool(root: &str, session: &str, call: &str, command: &str) -> Value {
    json!({ "session_id": session, "cwd": root, "hook_event_name": "PreToolUse",
        "permission_mode": "default", "turn_id": "turn-1", "model": "m",
        "tool_name": "Bash", "tool_input": {"command": command}, "tool_use_id": call })
}

/// Codex's `permissionDecision` and its reason (`none` with an empty answer: the
/// rules allowed it, Codex runs it).
fn decision(text: &str) -> (String, String) {
    if text.trim().is_empty() {
        return ("none".into(), String::new());
    }
    let v: Value = serde_json::from_str(text).unwrap_or(Value::Null);
    let o = &v["hookSpecificOutput"];
    (
        o["permissionDecision"]
            .as_str()
            .unwrap_or("unreadable")
            .to_string(),
        o["permissionDecisionReason"]
            .as_str()
            .unwrap_or_default()
            .to_string(),
    )
}

/// One call through the real hook binary, waiting on `base`; its stdout.
fn hook(base: &str, home: &std::path::Path, state: &std::path::Path, input: &Value) -> String {
    let mut child = Command::new(BIN)
        .args([
            "hook",
            "codex",
            "--url",
            base,
            "--wait",
            "60",
            "--state-dir",
        ])
        .arg(state)
        .env("HOME", home)
        .env_remove("KHAELOR_PERM_TOKEN_FILE")
        .env_remove("KHAELOR_PERM_URL")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.to_string().as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    // Codex reads a non-zero status as "run it": the hook must always exit 0.
    assert!(out.status.success(), "{out:?}");
    String::from_utf8(out.stdout).unwrap()
}

/// A request that may meet a dead replica or a database that is down: `None` when the
/// connection fails.
fn try_request(
    base: &str,
    token: Option<&str>,
    path: &str,
    body: Option<&Value>,
) -> Option<(u16, Value)> {
    let agent = agent();
    let url = format!("{base}{path}");
    let res = match body {
        Some(b) => {
            let mut req = agent.post(&url);
            if let Some(t) = token {
                req = req.header("authorization", format!("Bearer {t}"));
            }
            req.send_json(b)
        }
        None => {
            let mut req = agent.get(&url);
            if let Some(t) = token {
                req = req.header("authorization", format!("Bearer {t}"));
            }
            req.call()
        }
    };
    let mut res = res.ok()?;
    let status = res.status().as_u16();
    let text = res.body_mut().read_to_string().ok()?;
    Some((status, serde_json::from_str(&text).unwrap_or(Value::Null)))
}

/// Whether the person grants (else denies) the `n`th call of a hook (the asks are
/// the even calls: every other one granted).
fn grants(n: usize) -> bool {
    (n / 2).is_multiple_of(2)
}

/// What a hook printed for one of its calls.
struct Answer {
    session: String,
    call: String,
    ask: bool,
    decision: String,
    reason: String,
    /// The replica it went to was dead when the hook ended (killed while it waited,
    /// or just after it answered).
    on_dead: bool,
}

fn outage_under_load(outage: Outage) {
    let mut pg = Postgres::start();
    let home = tempfile::tempdir().unwrap();
    let states: Vec<tempfile::TempDir> = (0..REPLICAS)
        .map(|_| tempfile::tempdir().unwrap())
        .collect();
    let mut servers: Vec<Server> = states
        .iter()
        .map(|st| Server::start(st.path(), home.path(), &["--store", &pg.url]))
        .collect();
    let bases: Vec<String> = servers.iter().map(|s| s.base.clone()).collect();
    let tokens: Vec<Option<String>> = servers.iter().map(|s| s.token.clone()).collect();
    let machines: Vec<Dirs> = (0..MACHINES).map(|_| Dirs::new()).collect();
    let per_hook = calls_per_hook();
    let total = HOOKS * per_hook;

    // Which replicas are up (the load balancer's view), and how many calls are done.
    let alive: Arc<Vec<AtomicBool>> =
        Arc::new((0..REPLICAS).map(|_| AtomicBool::new(true)).collect());
    let done_calls = Arc::new(AtomicUsize::new(0));
    let stop = Arc::new(AtomicBool::new(false));
    // (session, call) -> the person's answer that a replica confirmed (200).
    let confirmed: Arc<Mutex<HashMap<(String, String), bool>>> = Arc::default();

    let person = {
        let (bases, tokens, alive, stop, confirmed) = (
            bases.clone(),
            tokens.clone(),
            alive.clone(),
            stop.clone(),
            confirmed.clone(),
        );
        std::thread::spawn(move || {
            let mut settled: HashSet<(String, String)> = HashSet::new();
            let mut turn = 0usize;
            while !stop.load(Ordering::SeqCst) {
                let live: Vec<usize> = (0..REPLICAS)
                    .filter(|&i| alive[i].load(Ordering::SeqCst))
                    .collect();
                let on = live[turn % live.len()];
                turn += 1;
                let Some((200, list)) =
                    try_request(&bases[on], tokens[on].as_deref(), "/v1/pending", None)
                else {
                    // A replica going down, or the database: try again shortly.
                    std::thread::sleep(Duration::from_millis(50));
                    continue;
                };
                let calls = list["calls"].as_array().cloned().unwrap_or_default();
                if calls.is_empty() {
                    std::thread::sleep(Duration::from_millis(5));
                }
                for c in calls {
                    let session = c["sessionId"].as_str().unwrap().to_string();
                    let call = c["callId"].as_str().unwrap().to_string();
                    let key = (session.clone(), call.clone());
                    if settled.contains(&key) {
                        continue;
                    }
                    let nth: usize = call.trim_start_matches('c').parse().unwrap();
                    // The next replica up after the one listing it.
                    let at = live[turn % live.len()];
                    let (path, body) = if grants(nth) {
                        (
                            format!("/v1/sessions/{session}/calls/{call}/grant"),
                            json!({"scope": "once"}),
                        )
                    } else {
                        (
                            format!("/v1/sessions/{session}/calls/{call}/deny"),
                            json!({"feedback": "outage-deny"}),
                        )
                    };
                    match try_request(&bases[at], tokens[at].as_deref(), &path, Some(&body)) {
                        Some((200, _)) => {
                            let first = confirmed
                                .lock()
                                .unwrap()
                                .insert(key.clone(), grants(nth))
                                .is_none();
                            assert!(first, "{session}/{call} answered twice");
                            settled.insert(key);
                        }
                        // Answered already (a retry whose first try committed but whose
                        // answer was lost), or ended by a timeout: nothing more to do.
                        Some((409, b)) if b["error"]["code"] == "not_pending" => {
                            settled.insert(key);
                        }
                        // Raced another replica's write, or the database is down, or
                        // the replica died under the request: answered on a later round
                        // (the database tells at the end whether it committed).
                        Some((409, _)) | Some((503, _)) | None => {}
                        Some((status, b)) => panic!("answering {session}/{call}: {status} {b}"),
                    }
                }
            }
        })
    };

    let hooks: Vec<_> = (0..HOOKS)
        .map(|t| {
            let (bases, alive, done_calls) = (bases.clone(), alive.clone(), done_calls.clone());
            let root = machines[t % MACHINES].root_str();
            let home = machines[t % MACHINES].home.path().to_path_buf();
            let state = tempfile::tempdir().unwrap();
            let session = format!("o{}m{}h{t}", outage_tag(outage), t % MACHINES);
            std::thread::spawn(move || {
                let mut answers = Vec::new();
                for i in 0..per_hook {
                    let ask = i % 2 == 0;
                    let command = if ask {
                        format!("npm install pkg{i}")
                    } else {
                        "git status".to_string()
                    };
                    let call = format!("c{i}");
                    // The load balancer: this hook's replica while it is up, else the
                    // next one that is.
                    let on = (0..REPLICAS)
                        .map(|k| (t + k) % REPLICAS)
                        .find(|&r| alive[r].load(Ordering::SeqCst))
                        .unwrap();
                    let out = hook(
                        &bases[on],
                        &home,
                        state.path(),
                        &pre_tool(&root, &session, &call, &command),
                    );
                    let (d, why) = decision(&out);
                    answers.push(Answer {
                        session: session.clone(),
                        call,
                        ask,
                        decision: d,
                        reason: why,
                        on_dead: !alive[on].load(Ordering::SeqCst),
                    });
                    done_calls.fetch_add(1, Ordering::SeqCst);
                }
                drop(state);
                answers
            })
        })
        .collect();

    // The outage, a third of the way in.
    let deadline = Instant::now() + Duration::from_secs(120);
    while done_calls.load(Ordering::SeqCst) < total / 3 {
        assert!(Instant::now() < deadline, "the load did not start");
        std::thread::sleep(Duration::from_millis(10));
    }
    match outage {
        Outage::KillReplica => {
            alive[0].store(false, Ordering::SeqCst);
            servers[0].kill9();
        }
        Outage::RestartDatabase => {
            pg.stop();
            std::thread::sleep(Duration::from_secs(2));
            pg.resume();
        }
    }

    let answers: Vec<Answer> = hooks.into_iter().flat_map(|h| h.join().unwrap()).collect();
    stop.store(true, Ordering::SeqCst);
    person.join().unwrap();
    assert_eq!(answers.len(), total);

    // Read back what the database holds, per call: the kinds of its events, and who
    // approved it.
    let tag = format!("o{}%", outage_tag(outage));
    let rows = pg.psql(&format!(
        "SELECT session_id || ' ' || call_id || ' ' || kind || ' ' || coalesce(body->>'by', '-') FROM events WHERE session_id LIKE '{tag}' AND call_id IS NOT NULL"
    ));
    let mut db: HashMap<(String, String), Vec<(String, String)>> = HashMap::new();
    for line in rows.lines() {
        let f: Vec<&str> = line.split(' ').collect();
        db.entry((f[0].to_string(), f[1].to_string()))
            .or_default()
            .push((f[2].to_string(), f[3].to_string()));
    }
    let has = |key: &(String, String), kind: &str, by: Option<&str>| {
        db.get(key).is_some_and(|evs| {
            evs.iter()
                .any(|(k, b)| k == kind && by.is_none_or(|by| b == by))
        })
    };

    let mut allowed = 0;
    let mut failed_closed = 0;
    let mut dropped = 0;
    for a in &answers {
        let key = (a.session.clone(), a.call.clone());
        let what = format!(
            "{}/{} ({}, {}): {}",
            a.session,
            a.call,
            a.decision,
            a.reason,
            if a.ask { "ask" } else { "rules allow" }
        );
        match a.decision.as_str() {
            // Nothing reads as allow unless the database holds the approval it acts on.
            "allow" | "none" => {
                allowed += 1;
                assert!(
                    has(&key, "ToolRequested", None),
                    "no request recorded for {what}"
                );
                if a.ask {
                    assert_eq!(a.decision, "allow", "{what}");
                    assert!(
                        has(&key, "PermissionGranted", None),
                        "allowed without the person: {what}"
                    );
                    assert!(has(&key, "ToolApproved", Some("user")), "{what}");
                } else {
                    assert_eq!(a.decision, "none", "{what}");
                    assert!(has(&key, "ToolApproved", Some("policy")), "{what}");
                }
            }
            "deny" => {
                if a.reason.contains("outage-deny") {
                    assert!(has(&key, "PermissionDenied", Some("user")), "{what}");
                } else {
                    failed_closed += 1;
                }
            }
            _ => panic!("not a host's answer: {what}"),
        }
        // A hook waiting while the database restarted re-attaches: it hears the
        // person's answer once the database is back, it does not wait out its time.
        assert!(
            !a.reason.contains("Nobody answered"),
            "a waiting hook never heard the person: {what}"
        );
        if a.on_dead && a.decision == "deny" {
            dropped += 1;
        }
    }
    // The person's confirmed answers are all there, once.
    for ((session, call), granted) in confirmed.lock().unwrap().iter() {
        let key = (session.clone(), call.clone());
        if *granted {
            assert!(
                has(&key, "PermissionGranted", None),
                "{session}/{call} grant lost"
            );
        } else {
            assert!(
                has(&key, "PermissionDenied", Some("user")),
                "{session}/{call} denial lost"
            );
        }
    }
    for (key, evs) in &db {
        let mut kinds: Vec<&str> = evs.iter().map(|(k, _)| k.as_str()).collect();
        kinds.sort_unstable();
        let before = kinds.len();
        kinds.dedup();
        assert_eq!(
            before,
            kinds.len(),
            "an event recorded twice for {key:?}: {evs:?}"
        );
    }
    assert_eq!(
        pg.psql(&format!(
            "SELECT count(*) FROM (SELECT 1 FROM events WHERE session_id LIKE '{tag}' GROUP BY session_id HAVING count(*) <> max(seq) OR min(seq) <> 1) g"
        )),
        "0",
        "a session's numbers have a gap"
    );
    // The load went on around the outage: most calls were answered by the hub.
    assert!(
        allowed > total / 3,
        "{allowed} of {total} allowed, {failed_closed} failed closed"
    );
    eprintln!(
        "{outage:?}: {total} calls, {allowed} allowed, {failed_closed} denied without a person ({dropped} on the killed replica), {} answered by the person",
        confirmed.lock().unwrap().len()
    );
    let _ = &states;
}

fn outage_tag(outage: Outage) -> &'static str {
    match outage {
        Outage::KillReplica => "k",
        Outage::RestartDatabase => "r",
    }
}

#[test]
fn a_replica_killed_under_load_loses_nothing_and_allows_nothing() {
    outage_under_load(Outage::KillReplica);
}

#[test]
fn a_database_restarted_under_load_loses_nothing_and_allows_nothing() {
    outage_under_load(Outage::RestartDatabase);
}
