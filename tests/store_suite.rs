//! One session-flow suite, both stores: each flow below runs against the real server
//! keeping its sessions in the state directory's files (`--store files`, the default)
//! and in a PostgreSQL cluster the test starts (`--store postgres://…`). Record a call,
//! pending, grant once and always, deny with its turn, replay the events, the event
//! budget, a restart — the same requests, the same answers.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod http_support;
mod pg_support;

use http_support::{Dirs, Server, bash_call, trust};
use pg_support::Postgres;
use serde_json::{Value, json};

/// The store a flow runs against.
enum Store {
    Files,
    Postgres(Postgres),
}

impl Store {
    fn flags(&self) -> Vec<String> {
        match self {
            Store::Files => vec!["--store".into(), "files".into()],
            Store::Postgres(pg) => vec!["--store".into(), pg.url.clone()],
        }
    }
    fn start(&self, d: &Dirs, extra: &[&str]) -> Server {
        let mut flags = self.flags();
        flags.extend(extra.iter().map(|s| s.to_string()));
        let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
        d.start(&flags)
    }
}

fn event_types(events: &Value) -> Vec<String> {
    events["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["type"].as_str().unwrap().to_string())
        .collect()
}

fn seqs(events: &Value) -> Vec<u64> {
    events["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["seq"].as_u64().unwrap())
        .collect()
}

fn record_pending_and_replay(store: Store) {
    let d = Dirs::new();
    let s = store.start(&d, &[]);
    let r = s.post(
        "/v1/sessions/s1/calls",
        &bash_call(&d, "c1", Some("t1"), "git status"),
    );
    assert_eq!(r.body["status"], "approved", "{}", r.text);
    let r = s.post(
        "/v1/sessions/s1/calls",
        &bash_call(&d, "c2", Some("t1"), "npm install"),
    );
    assert_eq!(r.body["status"], "pending", "{}", r.text);
    let r = s.post(
        "/v1/sessions/s1/calls",
        &bash_call(&d, "c3", Some("t1"), "rm -rf /"),
    );
    assert_eq!(r.body["status"], "denied", "{}", r.text);
    s.post(
        "/v1/sessions/s1/calls",
        &bash_call(&d, "c1", None, "git status"),
    )
    .assert_error(409, "call_exists");

    let p = s.get("/v1/sessions/s1/pending");
    assert_eq!(p.status, 200, "{}", p.text);
    let pending = p.body["pending"].as_array().unwrap();
    assert_eq!(pending.len(), 1);
    assert_eq!(pending[0]["callId"], "c2");
    assert_eq!(pending[0]["decision"]["decision"], "ask");
    assert_eq!(
        pending[0]["decision"]["alwaysPatterns"],
        json!(["npm install"])
    );
    // The panels' index across sessions.
    let all = s.get("/v1/pending");
    assert_eq!(
        all.body["calls"].as_array().unwrap().len(),
        1,
        "{}",
        all.text
    );

    let e = s.get("/v1/sessions/s1/events");
    assert_eq!(
        event_types(&e.body),
        [
            "ToolRequested",
            "ToolApproved",
            "ToolRequested",
            "PermissionRequested",
            "ToolRequested",
            "PermissionDenied",
            "ToolFailed"
        ]
    );
    assert_eq!(seqs(&e.body), (1..=7).collect::<Vec<_>>());
    assert_eq!(e.body["warnings"], json!([]));
    let evs = e.body["events"].as_array().unwrap();
    assert_eq!(evs[1]["decisions"][0]["rule"]["source"], "preset");
    assert_eq!(evs[5]["decisions"][0]["rule"]["source"], "hardline");
    s.get("/v1/sessions/nope/events")
        .assert_error(404, "unknown_session");
}

fn grant_once_then_deny_with_turn(store: Store) {
    let d = Dirs::new();
    let s = store.start(&d, &[]);
    for (call, turn, cmd) in [
        ("a", "t1", "npm install"),
        ("b", "t1", "make deploy"),
        ("c", "t2", "cargo publish"),
        ("e", "t2", "npm ci"),
    ] {
        let r = s.post(
            "/v1/sessions/s/calls",
            &bash_call(&d, call, Some(turn), cmd),
        );
        assert_eq!(r.body["status"], "pending", "{cmd}: {}", r.text);
    }
    let r = s.post("/v1/sessions/s/calls/c/grant", &json!({"scope": "once"}));
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.body["status"], "approved");
    s.post("/v1/sessions/s/calls/c/grant", &json!({"scope": "once"}))
        .assert_error(409, "not_pending");
    assert!(!d.config_path().exists(), "a once grant writes no config");

    let r = s.post(
        "/v1/sessions/s/calls/a/deny",
        &json!({"feedback": "not on a Friday"}),
    );
    assert_eq!(r.status, 200, "{}", r.text);
    assert!(
        r.body["message"]
            .as_str()
            .unwrap()
            .contains("not on a Friday")
    );
    let also: Vec<&str> = r.body["alsoDenied"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["callId"].as_str().unwrap())
        .collect();
    assert_eq!(also, ["b"]);
    let p = s.get("/v1/sessions/s/pending");
    let left: Vec<&str> = p.body["pending"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["callId"].as_str().unwrap())
        .collect();
    assert_eq!(left, ["e"]);
    let e = s.get("/v1/sessions/s/events");
    let evs = e.body["events"].as_array().unwrap();
    let turn = evs
        .iter()
        .find(|e| e["callId"] == "b" && e["type"] == "PermissionDenied")
        .unwrap();
    assert_eq!(turn["by"], "turn");
    assert_eq!(turn["deniedWith"], "a");
    assert_eq!(seqs(&e.body), (1..=evs.len() as u64).collect::<Vec<_>>());
}

fn grant_always_resolves_and_survives_restart(store: Store) {
    let d = Dirs::new();
    d.write_config("{\n  // ours\n  \"permissions\": {}\n}\n");
    let mut s = store.start(&d, &[]);
    trust(&s, &d);
    for (call, cmd) in [
        ("c1", "npm run dev"),
        ("c2", "npm run dev"),
        ("c3", "npm publish"),
    ] {
        let r = s.post("/v1/sessions/g/calls", &bash_call(&d, call, None, cmd));
        assert_eq!(r.body["status"], "pending", "{cmd}: {}", r.text);
    }
    let r = s.post(
        "/v1/sessions/g/calls/c1/grant",
        &json!({"scope": "always", "pattern": "npm run dev"}),
    );
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.body["autoApproved"], json!(["c2"]));
    let text = std::fs::read_to_string(d.config_path()).unwrap();
    assert!(
        text.contains("// ours") && text.contains("npm run dev"),
        "{text}"
    );

    // A new server on the same store: c3 still waits, c1 and c2 are answered.
    s.stop();
    let s = store.start(&d, &[]);
    let p = s.get("/v1/sessions/g/pending");
    let left: Vec<&str> = p.body["pending"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["callId"].as_str().unwrap())
        .collect();
    assert_eq!(left, ["c3"], "{}", p.text);
    assert_eq!(p.body["pending"][0]["decision"]["decision"], "ask");
    let all = s.get("/v1/pending");
    assert_eq!(all.body["calls"][0]["callId"], "c3", "{}", all.text);
    // The grant persisted in the config: the same command is allowed in a new session.
    let r = s.post(
        "/v1/sessions/g2/calls",
        &bash_call(&d, "x", None, "npm run dev"),
    );
    assert_eq!(r.body["status"], "approved", "{}", r.text);
    let r = s.post("/v1/sessions/g/calls/c3/deny", &json!({}));
    assert_eq!(r.status, 200, "{}", r.text);
    let e = s.get("/v1/sessions/g/events");
    let n = e.body["events"].as_array().unwrap().len() as u64;
    assert_eq!(seqs(&e.body), (1..=n).collect::<Vec<_>>());
}

fn event_budget_compacts_then_refuses(store: Store) {
    let d = Dirs::new();
    let s = store.start(&d, &["--max-session-events", "16"]);
    // Five finished calls (two events each), three waiting (two each): 16 events.
    for i in 0..5 {
        let r = s.post(
            "/v1/sessions/b/calls",
            &bash_call(&d, &format!("ok{i}"), None, "git status"),
        );
        assert_eq!(r.body["status"], "approved", "{}", r.text);
    }
    for i in 0..3 {
        let r = s.post(
            "/v1/sessions/b/calls",
            &bash_call(&d, &format!("ask{i}"), None, "npm install"),
        );
        assert_eq!(r.body["status"], "pending", "{}", r.text);
    }
    // Over the budget: compacted (the finished calls go), then recorded.
    let r = s.post(
        "/v1/sessions/b/calls",
        &bash_call(&d, "ok5", None, "git status"),
    );
    assert_eq!(r.body["status"], "approved", "{}", r.text);
    let e = s.get("/v1/sessions/b/events");
    let types = event_types(&e.body);
    assert_eq!(
        types.iter().filter(|t| *t == "Compacted").count(),
        1,
        "{types:?}"
    );
    assert!(
        !e.text.contains("\"ok0\""),
        "finished calls dropped: {}",
        e.text
    );
    let seqs = seqs(&e.body);
    // The waiting calls keep their numbers (11 to 16), the marker takes 17, the new
    // call 18 and 19: numbers go on, never reused.
    assert_eq!(seqs, (11..=19).collect::<Vec<_>>());
    // Waiting calls cannot be dropped: asks fill the budget, then a 409.
    let mut refused = false;
    for i in 3..12 {
        let r = s.post(
            "/v1/sessions/b/calls",
            &bash_call(&d, &format!("ask{i}"), None, "npm install"),
        );
        if r.status == 409 {
            r.assert_error(409, "session_event_budget");
            refused = true;
            break;
        }
        assert_eq!(r.body["status"], "pending", "{}", r.text);
    }
    assert!(refused, "the budget never refused");
    assert_eq!(
        s.get("/v1/sessions/b/pending").body["pending"]
            .as_array()
            .unwrap()
            .len(),
        7
    );
}

macro_rules! both_stores {
    ($($flow:ident),* $(,)?) => {
        mod files {
            $(#[test] fn $flow() { super::$flow(super::Store::Files) })*
        }
        mod postgres {
            $(#[test] fn $flow() { super::$flow(super::Store::Postgres(super::Postgres::start())) })*
        }
    };
}

both_stores!(
    record_pending_and_replay,
    grant_once_then_deny_with_turn,
    grant_always_resolves_and_survives_restart,
    event_budget_compacts_then_refuses,
);

/// A URL that is not one, and a database that does not answer, stop `serve` at
/// start-up with a clear message (exit 2), never a panic.
#[test]
fn a_bad_or_unreachable_store_refuses_to_start() {
    let d = Dirs::new();
    for (store, says) in [
        (
            "mysql://x",
            "expected `files` or a URL starting with `postgres://`",
        ),
        (
            "postgres://u:secret@127.0.0.1:1/db",
            "could not reach the PostgreSQL store `postgres://u:***@127.0.0.1:1/db`",
        ),
        (
            "postgres://u@127.0.0.1:notaport/db",
            "is not a usable PostgreSQL URL",
        ),
    ] {
        let cmd = http_support::serve_command(d.state.path(), d.home.path(), &["--store", store]);
        let (code, err) = http_support::run_to_exit(cmd, std::time::Duration::from_secs(30));
        assert_eq!(code, Some(2), "{store}: {err}");
        assert!(err.contains(says), "{store}: {err}");
        assert!(
            !err.contains("secret") && !err.contains("panicked"),
            "{store}: {err}"
        );
    }
}
