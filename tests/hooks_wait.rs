//! Hooks that wait for a person, against the real server: `POST /v1/hooks/{host}?wait=`
//! and `hook <host> --url --wait`. A call decided `ask` stays pending; a thread playing
//! the person finds it in `GET /v1/pending` and answers it with the panel token; the
//! hook's answer is the host's allow, its deny carrying the person's reason, or, when
//! nobody answers, Claude Code's own ask or any other host's deny recorded as a
//! timeout.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod http_support;

use std::io::Write;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use http_support::{BIN, Client, Dirs, Server};
use serde_json::{Value, json};

/// A host's pre-tool hook input for a Bash call (Claude Code and Codex share it).
fn pre_tool(root: &str, session: &str, call: &str, command: &str) -> Value {
    json!({ "session_id": session, "cwd": root, "hook_event_name": "PreToolUse",
        "permission_mode": "default", "turn_id": "turn-1", "model": "m",
        "tool_name": "Bash", "tool_input": {"command": command}, "tool_use_id": call })
}

/// `permissionDecision` and its reason, as Claude Code and Codex read them (`none`: no
/// decision).
fn decision(text: &str) -> (String, String) {
    let v: Value = serde_json::from_str(text).unwrap_or(Value::Null);
    let o = &v["hookSpecificOutput"];
    (
        o["permissionDecision"]
            .as_str()
            .unwrap_or("none")
            .to_string(),
        o["permissionDecisionReason"]
            .as_str()
            .unwrap_or_default()
            .to_string(),
    )
}

/// Waits until `session` has a call in `GET /v1/pending`; its call id.
fn pending_call(s: &Server, session: &str) -> String {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let r = s.get("/v1/pending");
        assert_eq!(r.status, 200, "{}", r.text);
        if let Some(c) = r.body["calls"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["sessionId"] == session)
        {
            return c["callId"].as_str().unwrap().to_string();
        }
        assert!(Instant::now() < deadline, "no pending call in {session}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Posts a hook call on its own thread (it waits); the handle gives its answer.
fn post_hook(
    s: &Server,
    host: &str,
    query: &str,
    body: Value,
) -> std::thread::JoinHandle<(u16, String)> {
    let client = Client {
        token: None,
        agent: http_support::agent(),
        ..s.client()
    };
    let path = format!("/v1/hooks/{host}?{query}");
    std::thread::spawn(move || {
        let r = client.post(&path, &body);
        (r.status, r.text)
    })
}

fn events(s: &Server, session: &str) -> Vec<Value> {
    let r = s.get(&format!("/v1/sessions/{session}/events"));
    assert_eq!(r.status, 200, "{}", r.text);
    r.body["events"].as_array().unwrap().clone()
}

#[test]
fn a_waiting_hook_gets_the_persons_answer() {
    let d = Dirs::new();
    let s = d.start(&[]);
    let root = d.root_str();

    // Approved once in the panel: Codex's explicit allow (an empty answer would leave
    // the call to Codex's own approval).
    let started = Instant::now();
    let hook = post_hook(
        &s,
        "codex",
        "wait=20",
        pre_tool(&root, "w1", "c1", "npm install left-pad"),
    );
    let call = pending_call(&s, "w1");
    let r = s.post(
        &format!("/v1/sessions/w1/calls/{call}/grant"),
        &json!({"scope": "once"}),
    );
    assert_eq!(r.status, 200, "{}", r.text);
    let (status, text) = hook.join().unwrap();
    assert_eq!(status, 200);
    let (d1, reason) = decision(&text);
    assert_eq!(d1, "allow", "{text}");
    assert!(reason.contains("approved"), "{text}");
    assert!(started.elapsed() < Duration::from_secs(15));

    // Denied with a reason: the host's deny carries it to the model.
    let hook = post_hook(
        &s,
        "claude",
        "wait=20",
        pre_tool(&root, "w2", "c2", "psql -h prod-db -c 'drop table users'"),
    );
    let call = pending_call(&s, "w2");
    let r = s.post(
        &format!("/v1/sessions/w2/calls/{call}/deny"),
        &json!({"feedback": "use the staging db"}),
    );
    assert_eq!(r.status, 200, "{}", r.text);
    let (_, text) = hook.join().unwrap();
    let (d2, reason) = decision(&text);
    assert_eq!(d2, "deny", "{text}");
    assert!(reason.contains("use the staging db"), "{text}");

    // Gemini CLI's shape, approved through an "always" grant: its allow.
    let hook = post_hook(
        &s,
        "gemini",
        "wait=20",
        json!({ "session_id": "w3", "cwd": root, "hook_event_name": "BeforeTool",
            "tool_name": "run_shell_command", "tool_input": {"command": "npm install left-pad"} }),
    );
    let call = pending_call(&s, "w3");
    let p = s.get("/v1/sessions/w3/pending");
    let pattern = p.body["pending"][0]["decision"]["alwaysPatterns"][0]
        .as_str()
        .unwrap()
        .to_string();
    let r = s.post(
        &format!("/v1/sessions/w3/calls/{call}/grant"),
        &json!({"scope": "always", "pattern": pattern}),
    );
    assert_eq!(r.status, 200, "{}", r.text);
    let (_, text) = hook.join().unwrap();
    let v: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["decision"], "allow", "{text}");
}

#[test]
fn nobody_answering_is_the_hosts_ask_or_a_recorded_deny() {
    let d = Dirs::new();
    let s = d.start(&[]);
    let root = d.root_str();

    // Codex has no prompt to fall back on: deny, recorded as a timeout, no longer pending.
    let (_, text) = post_hook(
        &s,
        "codex",
        "wait=1",
        pre_tool(&root, "t1", "c1", "npm install left-pad"),
    )
    .join()
    .unwrap();
    let (d1, reason) = decision(&text);
    assert_eq!(d1, "deny", "{text}");
    assert!(reason.contains("Nobody answered"), "{text}");
    let ev = events(&s, "t1");
    assert!(
        ev.iter()
            .any(|e| e["type"] == "PermissionDenied" && e["by"] == "timeout"),
        "{ev:?}"
    );
    let pending = s.get("/v1/pending");
    assert!(
        !pending.text.contains("\"t1\""),
        "still listed: {}",
        pending.text
    );

    // Claude Code asks itself: its ask, and the call stays pending for its dialog.
    let (_, text) = post_hook(
        &s,
        "claude",
        "wait=1",
        pre_tool(&root, "t2", "c2", "npm install left-pad"),
    )
    .join()
    .unwrap();
    let v: Value = serde_json::from_str(&text).unwrap();
    let asks = v["hookSpecificOutput"]["permissionDecision"] == "ask"
        || v["systemMessage"]
            .as_str()
            .is_some_and(|m| m.starts_with("khaelor-perm asks"));
    assert!(asks, "{text}");
    assert_eq!(pending_call(&s, "t2"), "c2");
    assert!(
        !events(&s, "t2")
            .iter()
            .any(|e| e["type"] == "PermissionDenied"),
    );

    // A script without the panel token cannot answer for the person: refused, and the
    // hook's wait ends as if nobody had answered.
    let hook = post_hook(
        &s,
        "codex",
        "wait=3",
        pre_tool(&root, "t3", "c3", "npm install left-pad"),
    );
    let call = pending_call(&s, "t3");
    let anyone = Client {
        token: None,
        agent: http_support::agent(),
        ..s.client()
    };
    anyone
        .post(
            &format!("/v1/sessions/t3/calls/{call}/grant"),
            &json!({"scope": "once"}),
        )
        .assert_error(401, "unauthorized");
    let (_, text) = hook.join().unwrap();
    assert_eq!(decision(&text).0, "deny", "{text}");

    // What never asks does not wait.
    let started = Instant::now();
    let (_, text) = post_hook(
        &s,
        "codex",
        "wait=30",
        pre_tool(&root, "t4", "c4", "rm -rf /"),
    )
    .join()
    .unwrap();
    assert_eq!(decision(&text).0, "deny", "{text}");
    assert!(started.elapsed() < Duration::from_secs(5));

    // A bad wait is the host's deny, never a wait or a run.
    for q in ["wait=abc", "wait=3601", "wait=5&interactive=false"] {
        let (status, text) =
            post_hook(&s, "codex", q, pre_tool(&root, "t5", "c5", "npm install x"))
                .join()
                .unwrap();
        assert_eq!(status, 200);
        assert_eq!(decision(&text).0, "deny", "{q}: {text}");
    }
}

#[test]
fn the_request_timeout_does_not_cut_a_wait() {
    let d = Dirs::new();
    let s = d.start(&["--request-timeout-secs", "1"]);
    let hook = post_hook(
        &s,
        "codex",
        "wait=20",
        pre_tool(&d.root_str(), "r1", "c1", "npm install left-pad"),
    );
    let call = pending_call(&s, "r1");
    std::thread::sleep(Duration::from_millis(2500));
    let r = s.post(
        &format!("/v1/sessions/r1/calls/{call}/grant"),
        &json!({"scope": "once"}),
    );
    assert_eq!(r.status, 200, "{}", r.text);
    let (status, text) = hook.join().unwrap();
    assert_eq!(status, 200);
    assert_eq!(decision(&text).0, "allow", "{text}");
}

/// `hook <host> --url --wait`: the CLI forwards the wait and reads past its own socket
/// timeout; a wait longer than the host lets its hook run is cut, and says so.
#[test]
fn the_cli_waits_and_fits_inside_the_hosts_timeout() {
    let d = Dirs::new();
    let s = d.start(&[]);
    let root = d.root_str();
    let run = |host: &str, flags: &[&str], stdin: Value| {
        let mut child = Command::new(BIN)
            .args(["hook", host, "--url", &s.base])
            .args(flags)
            .env("HOME", d.home.path())
            .env_remove("KHAELOR_PERM_TOKEN_FILE")
            .env_remove("KHAELOR_PERM_URL")
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
        child
    };
    let child = run(
        "codex",
        &["--wait", "15"],
        pre_tool(&root, "cli1", "c1", "npm install left-pad"),
    );
    let call = pending_call(&s, "cli1");
    // Past the CLI's own 10 s socket timeout would need a long test; answering after a
    // pause shows the answer is read when it comes.
    std::thread::sleep(Duration::from_millis(500));
    let r = s.post(
        &format!("/v1/sessions/cli1/calls/{call}/deny"),
        &json!({"feedback": "use the staging db"}),
    );
    assert_eq!(r.status, 200, "{}", r.text);
    let out = child.wait_with_output().unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    let (d1, reason) = decision(&text);
    assert_eq!(d1, "deny", "{text}");
    assert!(reason.contains("use the staging db"), "{text}");

    // Gemini CLI kills its hook after 60 s unless told otherwise: a 100 s wait is cut
    // to 55 s, on stderr; `--host-timeout` names a longer limit the settings give.
    let child = run(
        "gemini",
        &["--wait", "100", "--host-timeout", "3"],
        json!({ "session_id": "cli2", "cwd": root, "hook_event_name": "BeforeTool",
            "tool_name": "run_shell_command", "tool_input": {"command": "npm install x"} }),
    );
    let started = Instant::now();
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(
        stderr.contains("--wait 100 is longer than Gemini CLI lets its hook run (3 s)"),
        "{stderr}"
    );
    let v: Value = serde_json::from_str(&String::from_utf8(out.stdout).unwrap()).unwrap();
    // 3 s less the margin leaves no wait: nobody can answer, so the host's deny.
    assert_eq!(v["decision"], "deny", "{v}");
    assert!(started.elapsed() < Duration::from_secs(10));
    // Without `--host-timeout`, Gemini CLI's own 60 s (an allowed call: no wait).
    let out = run(
        "gemini",
        &["--wait", "100"],
        json!({ "session_id": "cli3", "cwd": root, "hook_event_name": "BeforeTool",
            "tool_name": "run_shell_command", "tool_input": {"command": "git status"} }),
    )
    .wait_with_output()
    .unwrap();
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(stderr.contains("(60 s): waiting 55 s"), "{stderr}");
}

/// A server shutting down ends a wait at once, as a timeout: the host's deny, never a
/// cut connection (which a host's HTTP hook reads as "run it").
#[test]
fn shutdown_ends_a_wait_with_the_hosts_deny() {
    let d = Dirs::new();
    let mut s = d.start(&["--shutdown-timeout-secs", "30"]);
    let hook = post_hook(
        &s,
        "codex",
        "wait=60",
        pre_tool(&d.root_str(), "s1", "c1", "npm install left-pad"),
    );
    pending_call(&s, "s1");
    let started = Instant::now();
    assert!(s.stop().success());
    let (status, text) = hook.join().unwrap();
    assert_eq!(status, 200, "{text}");
    assert_eq!(decision(&text).0, "deny", "{text}");
    assert!(started.elapsed() < Duration::from_secs(10));
}

/// A stand-in hub that answers every request with `body` (200, JSON), for grants a
/// real replica never sends.
fn fake_hub(body: String) -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            let mut buf = [0u8; 65536];
            let mut got = Vec::new();
            // The head, then the body its content-length names.
            loop {
                let n = std::io::Read::read(&mut stream, &mut buf).unwrap_or(0);
                got.extend_from_slice(&buf[..n]);
                let text = String::from_utf8_lossy(&got).to_string();
                if let Some((head, rest)) = text.split_once("\r\n\r\n") {
                    let len = head
                        .lines()
                        .find_map(|l| {
                            l.to_ascii_lowercase()
                                .strip_prefix("content-length: ")
                                .map(|v| v.trim().parse::<usize>().unwrap())
                        })
                        .unwrap_or(0);
                    if rest.len() >= len {
                        break;
                    }
                }
                if n == 0 {
                    break;
                }
            }
            let _ = write!(
                stream,
                "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    format!("http://{addr}")
}

/// A waiting hook keeps the person's answer but writes only a grant it verifies as the
/// answer to its own call: the pattern its own decision offers, exactly the rules a
/// local "always" of it writes, for its session and call, by a person. A stand-in hub
/// sends each forgery; the genuine grant, sent the same way, is written.
#[test]
fn a_forged_or_broader_grant_is_not_written() {
    let dirs = Dirs::new();
    let root = std::fs::canonicalize(dirs.root()).unwrap();
    let root_str = root.to_str().unwrap().to_string();
    let allow =
        r#"{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow"}}"#;
    let rule = |cap: &str, pattern: &str| json!({"capability": cap, "pattern": pattern, "action": "allow"});
    let genuine = json!({
        "sessionId": "s1", "callId": "c1", "scope": "always", "pattern": "npm install *",
        "rules": [rule("process.execute", "npm install *")], "grantedBy": "user",
        "projectRoot": root_str,
    });
    let with = |key: &str, v: Value| {
        let mut g = genuine.clone();
        g[key] = v;
        g
    };
    let forged = [
        // Broader than the call offers (`npm install *`).
        with("pattern", json!("npm *")),
        json!({"pattern": "npm *", "rules": [rule("process.execute", "npm *")]}),
        // The offered pattern, but a rule for another capability, or one more rule.
        with("rules", json!([rule("network.access", "*")])),
        with(
            "rules",
            json!([
                rule("process.execute", "npm install *"),
                rule("file.read", "*")
            ]),
        ),
        with("rules", json!([rule("process.execute", "*")])),
        // Another call, another session, another project.
        with("callId", json!("c2")),
        with("sessionId", json!("s2")),
        with("projectRoot", json!("/elsewhere")),
        // Not a person's "always".
        with("scope", json!("once")),
        with("grantedBy", json!("policy")),
    ];
    let state = tempfile::tempdir().unwrap();
    let run = |grant: &Value| {
        let grant = if grant.get("sessionId").is_some() {
            grant.clone()
        } else {
            let mut g = genuine.clone();
            for (k, v) in grant.as_object().unwrap() {
                g[k] = v.clone();
            }
            g
        };
        let url = fake_hub(json!({"hookAnswer": allow, "grant": grant}).to_string());
        let mut hook = Command::new(BIN)
            .args(["hook", "codex", "--url", &url, "--wait", "5", "--state-dir"])
            .arg(state.path())
            .env("HOME", dirs.home.path())
            .env_remove("KHAELOR_PERM_TOKEN_FILE")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        hook.stdin
            .take()
            .unwrap()
            .write_all(
                pre_tool(&root_str, "s1", "c1", "npm install left-pad")
                    .to_string()
                    .as_bytes(),
            )
            .unwrap();
        let out = hook.wait_with_output().unwrap();
        assert!(out.status.success());
        (
            String::from_utf8(out.stdout).unwrap(),
            String::from_utf8(out.stderr).unwrap(),
        )
    };
    for grant in &forged {
        let (out, err) = run(grant);
        // The person's answer stands: the host's allow, as the hub sent it.
        assert_eq!(out, allow, "{grant}");
        assert!(err.contains("is not written"), "{grant}: {err}");
        assert!(!dirs.config_path().exists(), "{grant} was written: {err}");
    }
    let (out, err) = run(&genuine);
    assert_eq!(out, allow);
    assert!(err.contains("is written to"), "{err}");
    let written: Value =
        serde_json::from_str(&std::fs::read_to_string(dirs.config_path()).unwrap()).unwrap();
    assert_eq!(
        written["permissions"]["rules"],
        json!([rule("process.execute", "npm install *")])
    );
}
