//! `khaelor-perm hook <host>` as a host runs it: the real binary, real
//! files, stdin in the host's shape, the answer in the host's form.
//!
//! The golden table `fixtures/hosts_hook.jsonl` maps each host's tool names and inputs
//! (one case per line: host, tool, input, flags, project config, the decision the host
//! must read and the tool of ours the log records). Around it: failing closed on bad
//! input per host, the session log under the host's session id (parallel hooks of one
//! session included), and the service route `POST /v1/hooks/{host}` directly and through
//! `hook --url`.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod http_support;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::{Value, json};

const BIN: &str = env!("CARGO_BIN_EXE_khaelor-perm");

/// A project with a few files, a home, a directory outside both, and a state dir.
struct Scene {
    _tmp: tempfile::TempDir,
    root: PathBuf,
    home: PathBuf,
    outside: PathBuf,
    state: PathBuf,
}

impl Scene {
    fn new() -> Scene {
        let tmp = tempfile::tempdir().unwrap();
        let base = tmp.path().canonicalize().unwrap();
        let s = Scene {
            root: base.join("proj"),
            home: base.join("home"),
            outside: base.join("outside"),
            state: base.join("state"),
            _tmp: tmp,
        };
        for d in [&s.root, &s.home, &s.outside, &s.state] {
            std::fs::create_dir_all(d).unwrap();
        }
        std::fs::create_dir_all(s.root.join("src")).unwrap();
        std::fs::create_dir_all(s.root.join(".git/hooks")).unwrap();
        std::fs::write(s.root.join("src/a.txt"), "hello\n").unwrap();
        std::fs::write(s.root.join(".env"), "SECRET=1\n").unwrap();
        s
    }

    fn fill(&self, v: &Value) -> Value {
        let text = v
            .to_string()
            .replace("$ROOT", &self.root.display().to_string())
            .replace("$OUT", &self.outside.display().to_string());
        serde_json::from_str(&text).unwrap()
    }

    /// The hook input for `host` in its own shape.
    fn stdin(&self, host: &str, session: &str, call: &str, tool: &str, input: &Value) -> Value {
        let cwd = self.root.display().to_string();
        match host {
            "opencode" => json!({ "tool": tool, "sessionID": session, "callID": call,
                "args": input, "cwd": cwd, "root": cwd }),
            // Copilot CLI names no call.
            "copilot" => json!({ "sessionId": session, "timestamp": 1, "cwd": cwd,
                "toolName": tool, "toolArgs": input }),
            // What our Cline plugin sends.
            "cline" => json!({ "hookName": "tool_call", "taskId": session, "cwd": cwd,
                "workspaceRoots": [cwd], "tool_call": { "id": call, "name": tool, "input": input } }),
            _ => json!({ "session_id": session, "cwd": cwd, "hook_event_name": "PreToolUse",
                "permission_mode": "default", "turn_id": "turn-1", "model": "m",
                "tool_name": tool, "tool_input": input, "tool_use_id": call }),
        }
    }

    /// Runs `hook <host> flags…` with `stdin`; returns (stdout, stderr, exit status).
    fn hook(&self, host: &str, flags: &[&str], stdin: &[u8]) -> (String, String, i32) {
        let mut cmd = Command::new(BIN);
        cmd.arg("hook")
            .arg(host)
            .arg("--state-dir")
            .arg(&self.state)
            .args(flags)
            .env("HOME", &self.home)
            .env_remove("CLAUDE_PROJECT_DIR")
            .env_remove("GEMINI_PROJECT_DIR")
            .env_remove("QWEN_PROJECT_DIR")
            .env_remove("COPILOT_PROJECT_DIR")
            .env_remove("FACTORY_PROJECT_DIR")
            .env_remove("KHAELOR_PERM_URL")
            .env_remove("KHAELOR_PERM_TOKEN_FILE")
            .env_remove("KHAELOR_PERM_STATE_DIR")
            .env_remove("KHAELOR_PERM_MANAGED_CONFIG")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = cmd.spawn().unwrap();
        child.stdin.take().unwrap().write_all(stdin).unwrap();
        let out = child.wait_with_output().unwrap();
        (
            String::from_utf8(out.stdout).unwrap(),
            String::from_utf8(out.stderr).unwrap(),
            out.status.code().unwrap_or(-1),
        )
    }

    /// `khaelor-perm trust` of the project's config, in the scene's state directory.
    fn trust(&self) {
        let out = Command::new(BIN)
            .arg("trust")
            .arg("--state-dir")
            .arg(&self.state)
            .arg(&self.root)
            .env("HOME", &self.home)
            .env_remove("KHAELOR_PERM_STATE_DIR")
            .env_remove("KHAELOR_PERM_MANAGED_CONFIG")
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
    }

    fn events(&self, session: &str) -> Vec<Value> {
        let p = self.state.join("sessions").join(format!("{session}.jsonl"));
        std::fs::read_to_string(&p)
            .unwrap_or_else(|e| panic!("no log {}: {e}", p.display()))
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }
}

/// The decision a host reads from our stdout: `allow`/`ask`/`deny`, or `none` for an
/// empty answer (Codex: "decide yourself").
fn decision_read_by(host: &str, stdout: &str) -> String {
    if stdout.trim().is_empty() {
        return "none".into();
    }
    let v: Value = serde_json::from_str(stdout)
        .unwrap_or_else(|e| panic!("{host} answer is not JSON ({e}): {stdout}"));
    match host {
        "claude" | "codex" | "qwen" | "droid" => {
            let o = &v["hookSpecificOutput"];
            assert_eq!(o["hookEventName"], "PreToolUse", "{stdout}");
            assert!(o["permissionDecisionReason"].is_string(), "{stdout}");
            // Codex's output schema rejects unknown fields: exactly these three.
            assert_eq!(o.as_object().unwrap().len(), 3, "{stdout}");
            assert_eq!(v.as_object().unwrap().len(), 1, "{stdout}");
            o["permissionDecision"].as_str().unwrap().to_string()
        }
        "copilot" => {
            assert!(v["permissionDecisionReason"].is_string(), "{stdout}");
            assert_eq!(v.as_object().unwrap().len(), 2, "{stdout}");
            v["permissionDecision"].as_str().unwrap().to_string()
        }
        _ => {
            assert!(v["reason"].is_string(), "{stdout}");
            v["decision"].as_str().unwrap().to_string()
        }
    }
}

#[test]
fn golden_table_of_host_tools() {
    let table = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/fixtures/hosts_hook.jsonl"
    ))
    .unwrap();
    let mut n = 0;
    for line in table.lines().filter(|l| !l.trim().is_empty()) {
        let case: Value = serde_json::from_str(line).unwrap();
        let id = case["id"].as_str().unwrap();
        let host = case["host"].as_str().unwrap();
        let scene = Scene::new();
        if let Some(cfg) = case.get("config") {
            std::fs::create_dir_all(scene.root.join(".khaelor")).unwrap();
            std::fs::write(scene.root.join(".khaelor/config.json"), cfg.to_string()).unwrap();
            // The user reviewed the file unless the row says it was not.
            if case.get("untrusted") != Some(&Value::Bool(true)) {
                scene.trust();
            }
        }
        let flags: Vec<&str> = case["flags"]
            .as_array()
            .map(|a| a.iter().map(|f| f.as_str().unwrap()).collect())
            .unwrap_or_default();
        let input = scene.fill(&case["input"]);
        let stdin = scene.stdin(
            host,
            "sess-1",
            "call-1",
            case["tool"].as_str().unwrap(),
            &input,
        );
        let (out, err, code) = scene.hook(host, &flags, stdin.to_string().as_bytes());
        assert_eq!(code, 0, "{id}: exit status\nstderr: {err}");
        assert_eq!(
            decision_read_by(host, &out),
            case["want"].as_str().unwrap(),
            "{id}\nstdout: {out}\nstderr: {err}"
        );
        let events = scene.events("sess-1");
        assert_eq!(events[0]["type"], "ToolRequested", "{id}: {events:#?}");
        if host == "copilot" {
            // Copilot CLI sends no id of the call: the log makes one.
            assert!(
                events[0]["callId"]
                    .as_str()
                    .unwrap()
                    .starts_with("copilot-"),
                "{id}"
            );
        } else {
            assert_eq!(events[0]["callId"], "call-1", "{id}");
        }
        assert_eq!(
            events[0]["tool"],
            format!("{host}:{}", case["ours"].as_str().unwrap()),
            "{id}: {events:#?}"
        );
        assert_eq!(events[0]["input"]["hostInput"], input, "{id}");
        n += 1;
    }
    assert!(n >= 60, "the table lost cases: {n}");
}

#[test]
fn model_and_user_texts() {
    let scene = Scene::new();
    let run = |host: &str, flags: &[&str], tool: &str, input: Value| {
        let stdin = scene.stdin(host, "texts", &format!("c{}", rand_id()), tool, &input);
        scene.hook(host, flags, stdin.to_string().as_bytes()).0
    };
    // Claude: the floor's message reaches the model word for word (seed §5.4).
    let out: Value =
        serde_json::from_str(&run("claude", &[], "Bash", json!({"command": "rm -rf /"}))).unwrap();
    let reason = out["hookSpecificOutput"]["permissionDecisionReason"]
        .as_str()
        .unwrap();
    assert!(
        reason.contains("Blocked by KHAELOR's built-in safety floor"),
        "{reason}"
    );
    // An ask shows the user the rule behind each request, and an MCP call its arguments.
    let out: Value = serde_json::from_str(&run(
        "claude",
        &[],
        "mcp__github__create_issue",
        json!({"title": "from e2e"}),
    ))
    .unwrap();
    let reason = out["hookSpecificOutput"]["permissionDecisionReason"]
        .as_str()
        .unwrap();
    assert!(reason.contains("mcp.call github/create_issue"), "{reason}");
    assert!(
        reason.contains(r#"Arguments: {"title":"from e2e"}"#),
        "{reason}"
    );
    // Gemini: the deny's reason is the model-facing message.
    let out: Value = serde_json::from_str(&run(
        "gemini",
        &[],
        "run_shell_command",
        json!({"command": "npm install"}),
    ))
    .unwrap();
    assert_eq!(out["decision"], "deny");
    assert!(
        out["reason"]
            .as_str()
            .unwrap()
            .contains("KHAELOR is running non-interactively")
    );
}

fn rand_id() -> u128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos()
}

/// Whatever cannot be read is the host's deny, exit 0, never a crash: every host reads
/// a crash or most non-zero statuses as "run the tool".
#[test]
fn bad_input_is_the_hosts_deny() {
    let scene = Scene::new();
    let inputs: [&[u8]; 5] = [
        b"",
        b"not json",
        b"[1, 2]",
        br#"{"session_id": "s", "tool_input": {}}"#,
        b"\xff\xfe",
    ];
    for host in [
        "claude", "codex", "gemini", "opencode", "qwen", "copilot", "droid", "cline",
    ] {
        for input in inputs {
            let (out, err, code) = scene.hook(host, &[], input);
            assert_eq!(code, 0, "{host} {input:?}: {err}");
            assert_eq!(
                decision_read_by(host, &out),
                "deny",
                "{host} {input:?}: {out}"
            );
            assert!(out.contains("could not check this tool call"), "{out}");
            assert!(
                err.contains("khaelor-perm hook"),
                "the reason goes to stderr: {err}"
            );
        }
    }
    // A root that does not exist, and a state dir that cannot be written.
    let gone = json!({ "session_id": "s", "cwd": "/nonexistent/khaelor", "tool_name": "Bash",
        "tool_input": {"command": "ls"} });
    let (out, _, _) = scene.hook("claude", &[], gone.to_string().as_bytes());
    assert_eq!(decision_read_by("claude", &out), "deny", "{out}");
    let mut unwritable = Scene::new();
    unwritable.state = unwritable.root.join("state-is-a-file");
    std::fs::write(&unwritable.state, "x").unwrap();
    let ok = unwritable.stdin("claude", "s", "c", "Bash", &json!({"command": "ls"}));
    let (out, err, _) = unwritable.hook("claude", &[], ok.to_string().as_bytes());
    assert_eq!(decision_read_by("claude", &out), "deny", "{out} {err}");
    // Too large an input.
    let big = vec![b' '; 8 * 1024 * 1024 + 2];
    let (out, _, _) = scene.hook("codex", &[], &big);
    assert_eq!(decision_read_by("codex", &out), "deny", "{out}");
}

/// One session log per host session, events in order, even when the host runs the
/// hooks of one session in parallel (Claude Code does for parallel tool calls).
#[test]
fn parallel_hooks_of_one_session_share_one_ordered_log() {
    let scene = Scene::new();
    let handles: Vec<_> = (0..8)
        .map(|i| {
            let stdin = scene.stdin(
                "claude",
                "parallel",
                &format!("call-{i}"),
                "Bash",
                &json!({ "command": if i % 2 == 0 { "git status" } else { "rm -rf /" } }),
            );
            let mut cmd = Command::new(BIN);
            cmd.args(["hook", "claude", "--state-dir"])
                .arg(&scene.state)
                .env("HOME", &scene.home)
                .env_remove("CLAUDE_PROJECT_DIR")
                .stdin(Stdio::piped())
                .stdout(Stdio::piped());
            let mut child = cmd.spawn().unwrap();
            child
                .stdin
                .take()
                .unwrap()
                .write_all(stdin.to_string().as_bytes())
                .unwrap();
            child
        })
        .collect();
    for h in handles {
        assert!(h.wait_with_output().unwrap().status.success());
    }
    let events = scene.events("parallel");
    let seqs: Vec<u64> = events.iter().map(|e| e["seq"].as_u64().unwrap()).collect();
    // 4 allowed (requested + approved), 4 denied (requested + denied + failed).
    assert_eq!(seqs, (1..=20).collect::<Vec<_>>(), "{events:#?}");
    let calls: std::collections::BTreeSet<&str> = events
        .iter()
        .filter(|e| e["type"] == "ToolRequested")
        .map(|e| e["callId"].as_str().unwrap())
        .collect();
    assert_eq!(calls.len(), 8);
}

/// A host that sends the same call id twice (or a hook run twice) gets a second entry,
/// never a rewritten first one.
#[test]
fn a_repeated_call_id_is_a_new_call() {
    let scene = Scene::new();
    let stdin = scene.stdin("claude", "again", "same", "Bash", &json!({"command": "ls"}));
    for _ in 0..2 {
        scene.hook("claude", &[], stdin.to_string().as_bytes());
    }
    let ids: Vec<String> = scene
        .events("again")
        .iter()
        .filter(|e| e["type"] == "ToolRequested")
        .map(|e| e["callId"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(ids.len(), 2);
    assert_eq!(ids[0], "same");
    assert_ne!(ids[1], "same");
}

/// A long session's hook calls read the log's index checkpoint and the lines after it,
/// not every earlier call: what they read still holds. An id from the first calls,
/// sent again after many more, is still known, and numbers run on without a gap.
#[test]
fn a_long_session_reads_from_its_index_checkpoint() {
    let scene = Scene::new();
    let call = |id: &str| {
        let stdin = scene.stdin(
            "claude",
            "long",
            id,
            "Bash",
            &json!({"command": "git status"}),
        );
        scene.hook("claude", &[], stdin.to_string().as_bytes());
    };
    for i in 0..40 {
        call(&format!("call-{i}"));
    }
    let index = scene.state.join("sessions").join("long.index");
    assert!(index.exists(), "a checkpoint beside the log");
    call("call-0");
    let events = scene.events("long");
    let seqs: Vec<u64> = events.iter().map(|e| e["seq"].as_u64().unwrap()).collect();
    assert_eq!(seqs, (1..=82).collect::<Vec<_>>());
    let last = events
        .iter()
        .rev()
        .find(|e| e["type"] == "ToolRequested")
        .unwrap();
    assert_ne!(last["callId"], "call-0", "a known id gets a fresh one");
}

fn write_token(dir: &Path) -> (PathBuf, String) {
    let token = "hook-test-token-1234567890";
    let p = dir.join("token");
    std::fs::write(&p, format!("{token}\n")).unwrap();
    (p, token.to_string())
}

/// `POST /v1/hooks/{host}` on the real service, and `hook --url` forwarding to it.
#[test]
fn service_route_and_url_forwarding() {
    let scene = Scene::new();
    let (token_file, token) = write_token(&scene.home);
    let tf = token_file.to_str().unwrap();
    let server = http_support::Server::start(&scene.state, &scene.home, &["--token-file", tf])
        .with_token(&token);
    let client = server.client();

    let call = |tool: &str, input: Value, id: &str| scene.stdin("claude", "svc", id, tool, &input);
    // Claude Code's HTTP hook: the same JSON, answered in its form.
    let r = client.post(
        "/v1/hooks/claude",
        &call("Bash", json!({"command": "git status"}), "a"),
    );
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(decision_read_by("claude", &r.text), "allow", "{}", r.text);
    let r = client.post(
        "/v1/hooks/claude",
        &call("Bash", json!({"command": "rm -rf ~"}), "b"),
    );
    assert_eq!(decision_read_by("claude", &r.text), "deny", "{}", r.text);
    let r = client.post("/v1/hooks/claude", &call("Zap", json!({}), "c"));
    assert_eq!(decision_read_by("claude", &r.text), "ask", "{}", r.text);

    // Failures are a 2xx deny: no token, a wrong token, a body that is not JSON, a root
    // that does not exist.
    // Refused requests get their own connection pool: the server does not read a
    // refused body and may close the connection, which a pooled client would reuse.
    let anon = http_support::Client {
        token: None,
        agent: http_support::agent(),
        ..client.clone()
    };
    let r = anon.post(
        "/v1/hooks/claude",
        &call("Bash", json!({"command": "ls"}), "d"),
    );
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(decision_read_by("claude", &r.text), "deny", "{}", r.text);
    let wrong = http_support::Client {
        token: Some("nope".into()),
        agent: http_support::agent(),
        ..client.clone()
    };
    let r = wrong.post(
        "/v1/hooks/gemini",
        &call("Bash", json!({"command": "ls"}), "e"),
    );
    assert_eq!(r.status, 200);
    assert_eq!(decision_read_by("gemini", &r.text), "deny", "{}", r.text);
    let r = client.post_raw("/v1/hooks/claude", Some("application/json"), b"{nope");
    assert_eq!(r.status, 200);
    assert_eq!(decision_read_by("claude", &r.text), "deny", "{}", r.text);
    let r = client.post(
        "/v1/hooks/claude",
        &json!({"session_id": "svc", "cwd": "/nonexistent/x", "tool_name": "Bash",
            "tool_input": {"command": "ls"}}),
    );
    assert_eq!(decision_read_by("claude", &r.text), "deny", "{}", r.text);
    // An unknown host cannot be answered in its form: a plain 404.
    client
        .post("/v1/hooks/vim", &json!({}))
        .assert_error(404, "unknown_host");

    // The session log holds the calls the service decided.
    let ev = client.get("/v1/sessions/svc/events");
    assert_eq!(ev.status, 200, "{}", ev.text);
    let requested = ev.body["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["type"] == "ToolRequested")
        .count();
    assert_eq!(requested, 3, "{}", ev.text);

    // The CLI forwards to the service and prints its answer as is.
    let stdin = scene.stdin(
        "codex",
        "fwd",
        "f1",
        "Bash",
        &json!({"command": "rm -rf /"}),
    );
    let (out, err, code) = scene.hook(
        "codex",
        &["--url", &server.base, "--token-file", tf],
        stdin.to_string().as_bytes(),
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(decision_read_by("codex", &out), "deny", "{out} {err}");
    let stdin = scene.stdin(
        "codex",
        "fwd",
        "f2",
        "Bash",
        &json!({"command": "git status"}),
    );
    let (out, err, _) = scene.hook(
        "codex",
        &["--url", &server.base, "--token-file", tf],
        stdin.to_string().as_bytes(),
    );
    assert_eq!(decision_read_by("codex", &out), "none", "{out} {err}");
    let ev = client.get("/v1/sessions/fwd/events");
    assert_eq!(ev.status, 200, "{}", ev.text);
    // A service that is not there is a deny.
    let (out, _, _) = scene.hook(
        "claude",
        &["--url", "http://127.0.0.1:9"],
        stdin.to_string().as_bytes(),
    );
    assert_eq!(decision_read_by("claude", &out), "deny", "{out}");
}

/// Qwen Code's post-call events name the `tool_use_id` of the `PreToolUse`: a call we
/// asked about that then ran (`PostToolUse`, or `PostToolUseFailure`: it ran and
/// failed) is approved by the host; Qwen reports no refusal, and its `Stop` is not
/// read, so a call never followed by one stays waiting.
#[test]
fn qwen_post_call_events_record_what_ran() {
    let scene = Scene::new();
    let run = |v: Value| scene.hook("qwen", &[], v.to_string().as_bytes());
    let pre = |id: &str, cmd: &str| {
        let (out, err, code) = run(scene.stdin(
            "qwen",
            "after",
            id,
            "run_shell_command",
            &json!({ "command": cmd }),
        ));
        assert_eq!(code, 0, "{err}");
        decision_read_by("qwen", &out)
    };
    let post = |event: &str, id: &str| {
        let (out, err, code) = run(json!({ "session_id": "after", "cwd": scene.root,
            "hook_event_name": event, "permission_mode": "yolo", "tool_name": "run_shell_command",
            "tool_input": {}, "tool_response": {}, "tool_use_id": id }));
        assert_eq!(code, 0, "{err}");
        out
    };
    assert_eq!(pre("toolu_1", "rm -r x"), "ask");
    assert_eq!(
        post("PostToolUse", "toolu_1"),
        "",
        "no decision after the call"
    );
    assert_eq!(pre("toolu_2", "rm -r y"), "ask");
    post("PostToolUseFailure", "toolu_2");
    assert_eq!(pre("toolu_3", "rm -r z"), "ask");
    post("Stop", "");
    post("PostToolUse", "unknown");
    let events = scene.events("after");
    let approved: Vec<&str> = events
        .iter()
        .filter(|e| e["type"] == "ToolApproved")
        .map(|e| e["callId"].as_str().unwrap())
        .collect();
    assert_eq!(approved, ["toolu_1", "toolu_2"], "{events:#?}");
    assert!(
        !events
            .iter()
            .any(|e| e["type"] == "PermissionDenied" && e["callId"] == "toolu_3"),
        "{events:#?}"
    );
}
