//! Reliability, "session logs grow without compaction", against the real server: past
//! `--max-session-events` a session's log is compacted (finished calls dropped), its
//! pending calls and session-scoped grants keep working across a restart, a session
//! whose live state alone fills the budget refuses new calls with a clear 409, and a
//! kill -9 at any moment of the compactions loses no pending call and no grant.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod http_support;

use std::time::Duration;

use http_support::{Dirs, Server, agent, bash_call};
use serde_json::{Value, json};

const BUDGET: &str = "16";
/// A config the loader refuses (duplicate key): an "always" grant then holds for the
/// session only, and nothing else is allowed, so each decision is the session rule's.
const BROKEN: &str =
    "{\n  \"permissions\": {\"file.read\": \"allow\"},\n  \"permissions\": {}\n}\n";

fn record(s: &Server, d: &Dirs, session: &str, id: &str, cmd: &str) -> Value {
    let r = s.post(
        &format!("/v1/sessions/{session}/calls"),
        &bash_call(d, id, None, cmd),
    );
    assert_eq!(r.status, 200, "{}", r.text);
    r.body
}

/// Records two `npm run lint` calls, breaks the config and grants `always` on the
/// first: a 409 whose grant holds for this session only.
fn session_grant(s: &Server, d: &Dirs, session: &str) {
    for id in ["g1", "g2"] {
        assert_eq!(
            record(s, d, session, id, "npm run lint")["status"],
            "pending"
        );
    }
    d.write_config(BROKEN);
    let r = s.post(
        &format!("/v1/sessions/{session}/calls/g1/grant"),
        &json!({"scope": "always"}),
    );
    r.assert_error(409, "config_malformed");
}

fn events(s: &Server, session: &str) -> Vec<Value> {
    s.get(&format!("/v1/sessions/{session}/events")).body["events"]
        .as_array()
        .unwrap()
        .clone()
}

fn pending_ids(s: &Server, session: &str) -> Vec<String> {
    let mut ids: Vec<String> = s.get(&format!("/v1/sessions/{session}/pending")).body["pending"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["callId"].as_str().unwrap().to_string())
        .collect();
    ids.sort();
    ids
}

/// The session rule still decides `npm run lint`.
fn assert_session_grant_holds(s: &Server, d: &Dirs, session: &str, id: &str) {
    let r = record(s, d, session, id, "npm run lint");
    assert_eq!(r["status"], "approved", "{r}");
    assert_eq!(r["requests"][0]["rule"]["source"], "session", "{r}");
}

#[test]
fn the_event_budget_compacts_and_state_survives_a_restart() {
    let d = Dirs::new();
    let mut s = d.start(&["--max-session-events", BUDGET]);
    session_grant(&s, &d, "m");
    assert_eq!(record(&s, &d, "m", "p1", "git status")["status"], "pending");
    // Twenty finished calls: far over the budget, and never refused.
    for i in 0..20 {
        assert_session_grant_holds(&s, &d, "m", &format!("a{i}"));
    }
    let log = events(&s, "m");
    assert!(log.len() <= 16, "{} events", log.len());
    let marker = log
        .iter()
        .find(|e| e["type"] == "Compacted")
        .expect("compacted");
    assert!(marker["removedCalls"].as_u64().unwrap() >= 15, "{marker}");
    let seqs: Vec<u64> = log.iter().map(|e| e["seq"].as_u64().unwrap()).collect();
    assert!(seqs.windows(2).all(|w| w[0] < w[1]), "{seqs:?}");
    assert!(
        *seqs.last().unwrap() > 40,
        "sequence numbers go on: {seqs:?}"
    );
    // A dropped call is forgotten; a kept one is still answerable.
    s.post("/v1/sessions/m/calls/a0/grant", &json!({"scope": "once"}))
        .assert_error(404, "unknown_call");

    s.stop();
    let s = d.start(&["--max-session-events", BUDGET]);
    assert_eq!(pending_ids(&s, "m"), ["p1"]);
    assert_session_grant_holds(&s, &d, "m", "after");
    let r = s.post("/v1/sessions/m/calls/p1/grant", &json!({"scope": "once"}));
    assert_eq!(r.status, 200, "{}", r.text);

    // Pending calls are state compaction keeps: once they fill the budget, a new call
    // is a clear 409 and nothing is recorded.
    let mut refused = None;
    for i in 0..20 {
        let r = s.post(
            "/v1/sessions/m/calls",
            &bash_call(&d, &format!("q{i}"), None, "git status"),
        );
        if r.status == 409 {
            refused = Some((i, r));
            break;
        }
        assert_eq!(r.body["status"], "pending", "{}", r.text);
    }
    let (i, r) = refused.expect("the budget was never hit");
    r.assert_error(409, "session_event_budget");
    assert!(
        r.message().contains("budget of 16 events"),
        "{}",
        r.message()
    );
    assert!(
        r.message().contains("start a new session"),
        "{}",
        r.message()
    );
    assert_eq!(pending_ids(&s, "m").len(), i);
    assert!(events(&s, "m").len() <= 16);
    // Answering pending calls makes room again.
    let r = s.post("/v1/sessions/m/calls/q0/deny", &json!({}));
    assert_eq!(r.status, 200, "{}", r.text);
    let r = s.post("/v1/sessions/m/calls/q1/grant", &json!({"scope": "once"}));
    assert_eq!(r.status, 200, "{}", r.text);
    assert_session_grant_holds(&s, &d, "m", "room");
    // Other sessions were never affected.
    assert_eq!(
        record(&s, &d, "other", "x", "git status")["status"],
        "pending"
    );
}

/// POSTs JSON; `None` when the connection died (the server was killed).
fn try_post(base: &str, path: &str, body: &Value) -> Option<(u16, Value)> {
    let mut res = agent().post(format!("{base}{path}")).send_json(body).ok()?;
    let status = res.status().as_u16();
    let text = res.body_mut().read_to_string().ok()?;
    Some((status, serde_json::from_str(&text).unwrap_or(Value::Null)))
}

#[test]
fn kill_9_during_compactions_loses_no_pending_call_and_no_grant() {
    const CYCLES: usize = 10;
    // Room for a cycle's pending calls (at most 12, 2 events each) and the session
    // grant, small enough that each cycle compacts several times.
    const KILL_BUDGET: &str = "48";
    let d = Dirs::new();
    let mut confirmed_pending: Vec<String> = Vec::new();
    let mut compactions = 0u64;
    for cycle in 0..CYCLES {
        let s = d.start(&["--max-session-events", KILL_BUDGET]);
        if cycle == 0 {
            session_grant(&s, &d, "k");
        } else {
            // Everything confirmed before the last kill is still there.
            let pending = pending_ids(&s, "k");
            for id in &confirmed_pending {
                assert!(
                    pending.contains(id),
                    "cycle {cycle}: {id} lost; {pending:?}"
                );
            }
            assert_session_grant_holds(&s, &d, "k", &format!("check{cycle}"));
            let swept: Vec<_> = std::fs::read_dir(d.state.path().join("sessions"))
                .unwrap()
                .flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.contains(".tmp"))
                .collect();
            assert_eq!(swept, Vec::<String>::new(), "temp files swept at start-up");
        }
        // Answer the pending calls of earlier cycles so they never fill the budget.
        for id in std::mem::take(&mut confirmed_pending) {
            let r = s.post(&format!("/v1/sessions/k/calls/{id}/deny"), &json!({}));
            assert_eq!(r.status, 200, "{}", r.text);
        }
        let base = s.base.clone();
        let threads: Vec<_> = (0..4)
            .map(|t| {
                let base = base.clone();
                let root = d.root_str();
                std::thread::spawn(move || {
                    let mut pending = Vec::new();
                    for i in 0..40 {
                        let id = format!("c{cycle}t{t}n{i}");
                        // One call in sixteen stays pending; the rest finish at once.
                        let cmd = if i % 16 == 0 {
                            "git status"
                        } else {
                            "npm run lint"
                        };
                        let body = json!({"callId": id, "tool": "bash",
                            "input": {"command": cmd}, "projectRoot": root});
                        match try_post(&base, "/v1/sessions/k/calls", &body) {
                            Some((200, b)) if b["status"] == "pending" => pending.push(id),
                            Some((200, _)) => {}
                            Some((status, b)) => panic!("{status}: {b}"),
                            None => break,
                        }
                    }
                    pending
                })
            })
            .collect();
        std::thread::sleep(Duration::from_millis(100 + (cycle as u64 * 37) % 400));
        let before_kill = events(&s, "k");
        if let Some(m) = before_kill.iter().find(|e| e["type"] == "Compacted") {
            compactions = compactions.max(m["removedCalls"].as_u64().unwrap_or(0));
        }
        drop(s);
        for t in threads {
            confirmed_pending.extend(t.join().unwrap());
        }
    }
    let s = d.start(&["--max-session-events", KILL_BUDGET]);
    let pending = pending_ids(&s, "k");
    for id in &confirmed_pending {
        assert!(pending.contains(id), "{id} lost; {pending:?}");
    }
    assert_session_grant_holds(&s, &d, "k", "final");
    assert!(
        compactions > 0,
        "no compaction happened: the loop proved nothing"
    );
    eprintln!(
        "kill -9 during compactions: {CYCLES} cycles, {} calls dropped by compaction before the last kill, {} pending calls confirmed in the last cycle, 0 lost",
        compactions,
        confirmed_pending.len()
    );
}
