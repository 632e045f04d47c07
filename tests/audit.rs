//! The audit trail, end to end: a real server on loopback writes every event as a JSON
//! line (`serve --audit-log`) and pages through the same records with filters
//! (`GET /v1/audit`); the per-call hook writes its own (`hook --audit-log`).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod http_support;

use std::collections::BTreeSet;
use std::io::Write;
use std::process::{Command, Stdio};

use http_support::{Dirs, Server, agent, bash_call};
use serde_json::{Value, json};

const BIN: &str = env!("CARGO_BIN_EXE_khaelor-perm");

fn lines(path: &std::path::Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

fn keys(records: &[Value]) -> Vec<(String, u64)> {
    records
        .iter()
        .map(|r| {
            (
                r["sessionId"].as_str().unwrap().to_string(),
                r["seq"].as_u64().unwrap(),
            )
        })
        .collect()
}

/// Every page of `query` (`limit` records each), following `next`.
fn all_pages(s: &Server, query: &str, limit: usize) -> Vec<Value> {
    let mut out = Vec::new();
    let mut after: Option<String> = None;
    for _ in 0..100 {
        let mut path = format!("/v1/audit?limit={limit}");
        if !query.is_empty() {
            path.push('&');
            path.push_str(query);
        }
        if let Some(a) = &after {
            path.push_str(&format!("&after={a}"));
        }
        let r = s.get(&path);
        assert_eq!(r.status, 200, "{path}: {}", r.text);
        let page = r.body["records"].as_array().unwrap().clone();
        assert!(page.len() <= limit);
        out.extend(page);
        match r.body.get("next").and_then(Value::as_str) {
            Some(n) => after = Some(n.to_string()),
            None => return out,
        }
    }
    panic!("more than 100 pages");
}

#[test]
fn the_service_writes_and_serves_the_same_trail() {
    let d = Dirs::new();
    let sink = d.state.path().join("audit.jsonl");
    let s = d.start(&["--audit-log", sink.to_str().unwrap()]);
    let call = |session: &str, id: &str, turn: Option<&str>, cmd: &str| {
        let r = s.post(
            &format!("/v1/sessions/{session}/calls"),
            &bash_call(&d, id, turn, cmd),
        );
        assert_eq!(r.status, 200, "{}", r.text);
        r.body["status"].as_str().unwrap().to_string()
    };
    assert_eq!(call("a", "a1", None, "git status"), "approved");
    assert_eq!(call("a", "a2", None, "npm install"), "pending");
    assert_eq!(
        call("b", "b1", Some("t"), "curl https://example.com/x"),
        "pending"
    );
    assert_eq!(
        call("b", "b2", Some("t"), "wget https://example.com/y"),
        "pending"
    );
    let r = s.post("/v1/sessions/a/calls/a2/grant", &json!({"scope": "once"}));
    assert_eq!(r.status, 200, "{}", r.text);
    let r = s.post(
        "/v1/sessions/b/calls/b1/deny",
        &json!({"feedback": "no network today"}),
    );
    assert_eq!(r.status, 200, "{}", r.text);

    // The sink and the query tell the same story, record for record.
    let written = lines(&sink);
    let served = all_pages(&s, "", 1000);
    assert_eq!(written, served);
    // Paging by two walks the same records once each, in order.
    assert_eq!(all_pages(&s, "", 2), served);
    let mut sorted = keys(&served);
    sorted.sort();
    let unique: BTreeSet<_> = sorted.iter().cloned().collect();
    assert_eq!(unique.len(), served.len(), "a record twice");

    let machine = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap();
    for r in &served {
        assert_eq!(r["machine"], machine.trim(), "{r}");
        assert!(r["user"].as_str().is_some_and(|u| !u.is_empty()), "{r}");
        assert_eq!(r["project"], d.root_str(), "{r}");
        assert_eq!(r["tool"], "bash", "{r}");
    }
    // The policy's approval names the rule that allowed it and its layer.
    let approved = served
        .iter()
        .find(|r| r["callId"] == "a1" && r["event"] == "toolApproved")
        .unwrap();
    assert_eq!(approved["decision"], "allow");
    assert_eq!(approved["by"], "policy");
    let req = &approved["requests"][0];
    assert_eq!(req["capability"], "process.execute");
    assert!(req["rule"].as_str().is_some(), "{approved}");
    assert!(req["source"].as_str().is_some(), "{approved}");

    // Filters.
    let denied = all_pages(&s, "decision=deny", 100);
    let denied_calls: BTreeSet<_> = denied
        .iter()
        .map(|r| r["callId"].as_str().unwrap())
        .collect();
    assert_eq!(
        denied_calls,
        BTreeSet::from(["b1", "b2"]),
        "the turn's other call too"
    );
    assert!(denied.iter().all(|r| r["event"] == "permissionDenied"));
    let by_user = denied.iter().find(|r| r["callId"] == "b1").unwrap();
    assert_eq!(by_user["by"], "user");
    assert_eq!(by_user["message"], "no network today");
    assert_eq!(
        denied.iter().find(|r| r["callId"] == "b2").unwrap()["by"],
        "turn"
    );
    let asks = all_pages(&s, "decision=ask&session=a", 100);
    assert_eq!(asks.len(), 1, "{asks:?}");
    assert_eq!(asks[0]["callId"], "a2");
    assert_eq!(asks[0]["event"], "permissionRequested");
    let network = all_pages(&s, "capability=network", 100);
    assert!(!network.is_empty());
    assert!(network.iter().all(|r| r["sessionId"] == "b"), "{network:?}");
    let grants = all_pages(&s, "event=permissionGranted", 100);
    assert_eq!(grants.len(), 1);
    assert_eq!(grants[0]["scope"], "once");
    // Time bounds: everything is after yesterday's midnight; nothing before it.
    let first_at = served[0]["at"].as_str().unwrap();
    let day = &first_at[..10];
    assert_eq!(all_pages(&s, &format!("since={day}"), 1000), served);
    assert!(all_pages(&s, &format!("until={day}"), 1000).is_empty());
    let last_at = served.last().unwrap()["at"].as_str().unwrap().to_string();
    let after_last = all_pages(&s, &format!("since={last_at}"), 1000);
    assert!(
        after_last
            .iter()
            .all(|r| r["at"].as_str().unwrap() >= last_at.as_str())
    );
    assert!(!after_last.is_empty());

    // A misspelt filter is refused, not read as "everything".
    s.get("/v1/audit?sesion=a").assert_error(400, "bad_query");
    s.get("/v1/audit?limit=0").assert_error(400, "bad_query");
    s.get("/v1/audit?since=2026-12-05T10:00:00%2B01:00")
        .assert_error(400, "bad_query");
    s.get("/v1/audit?after=not-a-cursor")
        .assert_error(400, "bad_query");

    // The trail shows every command and every answer: it needs the panel token.
    let anon = agent().get(&format!("{}/v1/audit", s.base)).call().unwrap();
    assert_eq!(anon.status().as_u16(), 401);
}

#[test]
fn a_sink_that_cannot_be_opened_stops_the_service_with_a_clear_error() {
    let d = Dirs::new();
    let missing = d.state.path().join("no/such/dir/audit.jsonl");
    let cmd = http_support::serve_command(
        d.state.path(),
        d.home.path(),
        &["--audit-log", missing.to_str().unwrap()],
    );
    let (code, stderr) = http_support::run_to_exit(cmd, std::time::Duration::from_secs(20));
    assert_ne!(code, Some(0));
    assert!(
        stderr.contains("cannot open the audit log") && stderr.contains("no/such/dir"),
        "{stderr}"
    );
}

fn hook(state: &std::path::Path, home: &std::path::Path, flags: &[&str], stdin: &Value) -> String {
    let mut child = Command::new(BIN)
        .arg("hook")
        .arg("claude")
        .arg("--state-dir")
        .arg(state)
        .args(flags)
        .env("HOME", home)
        .env_remove("KHAELOR_PERM_AUDIT_LOG")
        .env_remove("CLAUDE_PROJECT_DIR")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.to_string().as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn the_hook_writes_its_own_records_and_never_into_the_hosts_answer() {
    let d = Dirs::new();
    let sink = d.state.path().join("hook-audit.jsonl");
    let flags = ["--audit-log", sink.to_str().unwrap()];
    let pre = |id: &str, cmd: &str| {
        json!({"session_id": "s1", "cwd": d.root_str(), "hook_event_name": "PreToolUse",
            "permission_mode": "default", "tool_name": "Bash",
            "tool_input": {"command": cmd}, "tool_use_id": id})
    };
    let out = hook(
        d.state.path(),
        d.home.path(),
        &flags,
        &pre("t1", "git status"),
    );
    assert!(out.contains("\"allow\""), "{out}");
    let out = hook(
        d.state.path(),
        d.home.path(),
        &flags,
        &pre("t2", "npm install"),
    );
    assert!(out.contains("khaelor-perm asks"), "{out}");
    // Claude reports the asked call ran: the person approved it in its own dialog.
    let post = json!({"session_id": "s1", "cwd": d.root_str(), "hook_event_name": "PostToolUse",
        "tool_name": "Bash", "tool_input": {"command": "npm install"}, "tool_use_id": "t2",
        "tool_response": {"stdout": ""}});
    hook(d.state.path(), d.home.path(), &flags, &post);

    let records = lines(&sink);
    let events: Vec<(&str, &str)> = records
        .iter()
        .map(|r| (r["callId"].as_str().unwrap(), r["event"].as_str().unwrap()))
        .collect();
    assert_eq!(
        events,
        [
            ("t1", "toolRequested"),
            ("t1", "toolApproved"),
            ("t2", "toolRequested"),
            ("t2", "permissionRequested"),
            ("t2", "toolApproved"),
        ]
    );
    assert!(
        records
            .iter()
            .all(|r| r["host"] == "claude" && r["sessionId"] == "s1")
    );
    assert_eq!(records[3]["decision"], "ask");
    assert_eq!(records[4]["by"], "host");
    // Sequence numbers are the session log's own.
    let seqs: Vec<u64> = records.iter().map(|r| r["seq"].as_u64().unwrap()).collect();
    assert_eq!(seqs, [1, 2, 3, 4, 5]);

    // Standard output is the host's channel: `-` is refused, and the call is denied.
    let out = hook(
        d.state.path(),
        d.home.path(),
        &["--audit-log", "-"],
        &pre("t3", "git status"),
    );
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        v["hookSpecificOutput"]["permissionDecision"], "deny",
        "{out}"
    );
}
