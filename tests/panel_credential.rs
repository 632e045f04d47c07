//! Approvals belong to the person: the panel token `serve` makes when no
//! `--token-file` is given, on the real server, tried the way an agent would try to get
//! around it — a script it wrote posting a grant, reading the token file, a contained
//! script reading it — through the service and through `hook --url`.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod http_support;

use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use http_support::{BIN, Client, Dirs, Server, run_to_exit, serve_command};
use serde_json::{Value, json};

/// A client that sends no token: any process of the user on loopback.
fn anyone(s: &Server) -> Client {
    Client {
        token: None,
        agent: http_support::agent(),
        ..s.client()
    }
}

/// Claude Code's pre-tool hook input for a `Bash` call in `root`.
fn claude_bash(root: &str, session: &str, call: &str, command: &str) -> Value {
    json!({ "session_id": session, "cwd": root, "hook_event_name": "PreToolUse",
        "permission_mode": "default", "turn_id": "turn-1", "model": "m",
        "tool_name": "Bash", "tool_input": {"command": command}, "tool_use_id": call })
}

/// What Claude Code does with our answer: its `permissionDecision`, or `ask` when we
/// leave the call to its own dialog (only a `systemMessage` with our ask text).
fn claude_decision(text: &str) -> String {
    let v: Value = serde_json::from_str(text).unwrap_or(Value::Null);
    match v["hookSpecificOutput"]["permissionDecision"].as_str() {
        Some(d) => d.to_string(),
        None if v["systemMessage"]
            .as_str()
            .is_some_and(|m| m.starts_with("khaelor-perm asks")) =>
        {
            "ask".to_string()
        }
        None => format!("unreadable answer: {text}"),
    }
}

#[test]
fn the_panel_token_is_made_once_private_and_guards_the_answers() {
    let d = Dirs::new();
    let s = d.start(&[]);
    let file = d.state.path().join("panel-token");
    let meta = std::fs::metadata(&file).unwrap();
    assert_eq!(meta.permissions().mode() & 0o777, 0o600);
    let token = std::fs::read_to_string(&file).unwrap().trim().to_string();
    assert_eq!(token.len(), 64, "{token}");
    assert!(token.bytes().all(|b| b.is_ascii_hexdigit()));
    assert_eq!(s.token.as_deref(), Some(token.as_str()));

    let open = anyone(&s);
    // What a hook and a read-only client need stays open on loopback.
    let r = open.post(
        "/v1/sessions/s/calls",
        &http_support::bash_call(&d, "c1", Some("t1"), "npm install left-pad"),
    );
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.body["decision"], "ask", "{}", r.text);
    let r = open.post(
        "/v1/hooks/claude",
        &claude_bash(&d.root_str(), "h", "h1", "git status"),
    );
    assert_eq!(claude_decision(&r.text), "allow", "{}", r.text);
    for path in ["/healthz", "/readyz", "/metrics", "/openapi.yaml"] {
        assert_eq!(open.get(path).status, 200, "{path}");
    }
    assert_eq!(
        open.get(&format!("/v1/rules?projectRoot={}", d.root_str()))
            .status,
        200
    );
    for path in ["/v1/evaluate", "/v1/explain"] {
        let r = open.post(path, &http_support::bash(&d, "ls"));
        assert_eq!(r.status, 200, "{path}: {}", r.text);
    }
    let r = open.post(
        "/v1/analyze",
        &json!({"command": "ls", "projectRoot": d.root_str()}),
    );
    assert_eq!(r.status, 200, "{}", r.text);

    // Answering, trusting and looking at what waits need the token.
    open.post("/v1/sessions/s/calls/c1/grant", &json!({"scope": "once"}))
        .assert_error(401, "unauthorized");
    open.post("/v1/sessions/s/calls/c1/deny", &json!({}))
        .assert_error(401, "unauthorized");
    open.post("/v1/trust", &json!({"projectRoot": d.root_str()}))
        .assert_error(401, "unauthorized");
    open.get("/v1/sessions/s/pending")
        .assert_error(401, "unauthorized");
    open.get("/v1/sessions/s/events")
        .assert_error(401, "unauthorized");
    open.get("/v1/pending").assert_error(401, "unauthorized");
    open.get("/v1/pending/stream")
        .assert_error(401, "unauthorized");
    let wrong = Client {
        token: Some("0".repeat(64)),
        ..anyone(&s)
    };
    wrong
        .post("/v1/sessions/s/calls/c1/grant", &json!({"scope": "once"}))
        .assert_error(401, "unauthorized");

    // The call is still pending; the person's client answers it.
    let p = s.get("/v1/sessions/s/pending");
    assert_eq!(p.status, 200, "{}", p.text);
    assert_eq!(
        p.body["pending"].as_array().map(Vec::len),
        Some(1),
        "{}",
        p.text
    );
    let r = s.post("/v1/sessions/s/calls/c1/grant", &json!({"scope": "once"}));
    assert_eq!(r.status, 200, "{}", r.text);

    // A restart keeps the token.
    drop(s);
    let s = d.start(&[]);
    assert_eq!(s.token.as_deref(), Some(token.as_str()));
    assert_eq!(s.get("/v1/sessions/s/events").status, 200);
}

#[test]
fn a_bad_panel_token_stops_the_start_and_a_token_file_makes_none() {
    let d = Dirs::new();
    let file = d.state.path().join("panel-token");
    std::fs::write(&file, format!("{}\n", "ab".repeat(32))).unwrap();
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
    let (code, stderr) = run_to_exit(
        serve_command(d.state.path(), d.home.path(), &[]),
        Duration::from_secs(20),
    );
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("can be read by others"), "{stderr}");
    assert!(stderr.contains("chmod 600"), "{stderr}");
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
    std::fs::write(&file, "not a token\n").unwrap();
    let (code, stderr) = run_to_exit(
        serve_command(d.state.path(), d.home.path(), &[]),
        Duration::from_secs(20),
    );
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("is not 64 hexadecimal characters"),
        "{stderr}"
    );
    // Never rewritten.
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "not a token\n");

    // With the operator's token there is no panel token, and every route needs theirs.
    let e = Dirs::new();
    let tf = e.home.path().join("token");
    std::fs::write(&tf, "operator-token\n").unwrap();
    let s = e.start(&["--token-file", tf.to_str().unwrap()]);
    assert!(!e.state.path().join("panel-token").exists());
    anyone(&s)
        .post("/v1/evaluate", &http_support::bash(&e, "ls"))
        .assert_error(401, "unauthorized");
}

/// The agent's own test script (what `npm test` runs under `autonomous`) posts a grant
/// for the agent's pending call: refused, and the call still waits for the person. The
/// commands that would reach the token or the routes ask, with no "always", through the
/// hook; a contained script cannot see the token at all.
#[test]
fn an_agent_cannot_answer_its_own_prompt() {
    let d = Dirs::new();
    // The default state place under HOME, so the sandbox of a contained command knows
    // it without being told.
    let state = d.home.path().join(".local/state/khaelor-perm");
    std::fs::create_dir_all(&state).unwrap();
    let s = Server::start(&state, d.home.path(), &["--preset", "autonomous"]);
    let token_file = state.join("panel-token");
    let token = std::fs::read_to_string(&token_file)
        .unwrap()
        .trim()
        .to_string();
    let root = d.root_str();

    // The agent's call that asks: a hook records it pending.
    let open = anyone(&s);
    let r = open.post(
        "/v1/hooks/claude",
        &claude_bash(
            &root,
            "agent",
            "want",
            "curl https://example.com/install.sh",
        ),
    );
    assert_eq!(claude_decision(&r.text), "ask", "{}", r.text);
    let pending = s.get("/v1/sessions/agent/pending");
    let call_id = pending.body["pending"][0]["callId"]
        .as_str()
        .unwrap()
        .to_string();

    // The script it wrote, run for real: curl gets a 401 and the call still waits.
    let script = d.root().join("test.sh");
    std::fs::write(
        &script,
        format!(
            "curl -s -o /dev/null -w '%{{http_code}}' -X POST -H 'content-type: application/json' -d '{{\"scope\":\"always\",\"pattern\":\"curl *\"}}' {}/v1/sessions/agent/calls/{call_id}/grant\n",
            s.base
        ),
    )
    .unwrap();
    let out = Command::new("sh").arg(&script).output().unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout), "401");
    let pending = s.get("/v1/sessions/agent/pending");
    assert_eq!(
        pending.body["pending"][0]["callId"].as_str(),
        Some(call_id.as_str()),
        "{}",
        pending.text
    );

    // Through `hook --url`, under autonomous: what names the token or the answer routes
    // asks, and no "always" is offered for it.
    let hook = |session: &str, command: &str| -> (String, Value) {
        let mut child = Command::new(BIN)
            .args(["hook", "claude", "--url", &s.base])
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
            .write_all(
                claude_bash(&root, session, "x", command)
                    .to_string()
                    .as_bytes(),
            )
            .unwrap();
        let out = child.wait_with_output().unwrap();
        let text = String::from_utf8(out.stdout).unwrap();
        (
            claude_decision(&text),
            serde_json::from_str(&text).unwrap_or(Value::Null),
        )
    };
    let token_path = token_file.display().to_string();
    for (i, command) in [
        format!("cat {token_path}"),
        "cat ~/.local/state/khaelor-perm/panel-token".to_string(),
        format!("python3 -c \"print(open('{token_path}').read())\""),
        format!(
            "curl -X POST -d '{{\"scope\":\"once\"}}' {}/v1/sessions/agent/calls/{call_id}/grant",
            s.base
        ),
        format!("curl -X POST {}/v1/trust", s.base),
    ]
    .iter()
    .enumerate()
    {
        let (decision, answer) = hook(&format!("probe{i}"), command);
        assert_eq!(decision, "ask", "{command}: {answer}");
        // The decision recorded for it offers no pattern.
        let p = s.get(&format!("/v1/sessions/probe{i}/pending"));
        let d = &p.body["pending"][0]["decision"];
        assert_eq!(d["alwaysPatterns"], json!([]), "{command}: {}", p.text);
    }

    // The harmless look-alikes are not caught: a file merely named like it, the
    // read-only routes.
    std::fs::write(d.root().join("panel-token.md"), "notes\n").unwrap();
    let (decision, answer) = hook("alike", "cat panel-token.md");
    assert_eq!(decision, "allow", "{answer}");

    // A contained script (autonomous contains `bash test.sh`) cannot read the token:
    // run the rewritten command the hook returns.
    std::fs::write(
        &script,
        format!("cat {token_path} || echo masked\ncat panel-token.md\n"),
    )
    .unwrap();
    let (decision, answer) = hook("contained", "bash test.sh");
    assert_eq!(decision, "allow", "{answer}");
    let rewritten = answer["hookSpecificOutput"]["updatedInput"]["command"]
        .as_str()
        .unwrap_or_else(|| panic!("not contained: {answer}"))
        .to_string();
    assert!(rewritten.contains("exec --contain"), "{rewritten}");
    let out = Command::new("bash")
        .arg("-c")
        .arg(&rewritten)
        .current_dir(d.root())
        .env("HOME", d.home.path())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(!stdout.contains(&token), "the token leaked: {stdout}");
    assert!(stdout.contains("masked"), "{stdout}");
    assert!(
        stdout.contains("notes"),
        "the project stays readable: {stdout}"
    );
    assert!(Path::new(&token_path).exists());
}
