//! What happened after an ask, through the service: each host's post-call event
//! (Claude Code and Codex `PostToolUse`, Gemini CLI `AfterTool`, OpenCode's
//! `tool.execute.after`, Claude's `PermissionDenied`) posted to `POST /v1/hooks/{host}`
//! on the real `khaelor-perm serve` is recorded in the session the service holds (a
//! pending call approved or denied by the host, on `/v1/sessions/{id}/events` and in
//! the panels' `/v1/pending`), is never decided as a new call, and leaves nothing for
//! a call that was not waiting; `hook <host> --url` forwards such an event there
//! instead of writing a local log.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod http_support;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use http_support::{BIN, Server};
use serde_json::{Value, json};

struct World {
    _tmp: tempfile::TempDir,
    home: PathBuf,
    proj: PathBuf,
    state: PathBuf,
}

impl World {
    fn new() -> World {
        let tmp = tempfile::tempdir().unwrap();
        let base = tmp.path().canonicalize().unwrap();
        let (home, proj, state) = (base.join("home"), base.join("proj"), base.join("state"));
        for d in [&home, &proj, &state] {
            std::fs::create_dir_all(d).unwrap();
        }
        World {
            _tmp: tmp,
            home,
            proj,
            state,
        }
    }
}

/// `POST /v1/hooks/{host}` (a person at the host: `interactive=true`); the body text.
fn post(s: &Server, host: &str, body: &Value) -> String {
    let r = s.post(&format!("/v1/hooks/{host}?interactive=true"), body);
    assert_eq!(r.status, 200, "{}", r.text);
    r.text
}

/// The session's events as (type, callId, by).
fn events(s: &Server, session: &str) -> Vec<(String, String, String)> {
    let r = s.get(&format!("/v1/sessions/{session}/events"));
    assert_eq!(r.status, 200, "{}", r.text);
    r.body["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            let s = |k: &str| e[k].as_str().unwrap_or_default().to_string();
            (s("type"), s("callId"), s("by"))
        })
        .collect()
}

/// The events after the first `n`, as (type, callId, by).
fn after(s: &Server, session: &str, n: usize) -> Vec<(String, String, String)> {
    events(s, session).into_iter().skip(n).collect()
}

fn ev(t: &str, call: &str, by: &str) -> (String, String, String) {
    (t.to_string(), call.to_string(), by.to_string())
}

/// The call ids the panels list as waiting (`GET /v1/pending`), every session.
fn panel(s: &Server) -> Vec<String> {
    let r = s.get("/v1/pending");
    assert_eq!(r.status, 200, "{}", r.text);
    r.body["calls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["callId"].as_str().unwrap().to_string())
        .collect()
}

/// The one call of `session` still waiting, after a pre-call that asked.
fn asked(s: &Server, session: &str) -> String {
    let p = s.get(&format!("/v1/sessions/{session}/pending"));
    let pending = p.body["pending"].as_array().unwrap();
    assert_eq!(pending.len(), 1, "{}", p.text);
    pending[0]["callId"].as_str().unwrap().to_string()
}

#[test]
fn each_hosts_post_call_event_is_recorded_in_the_services_session() {
    let w = World::new();
    let s = Server::start(&w.state, &w.home, &[]);
    let cmd = json!({ "command": "tui-probe" });

    // Claude Code: asked, then it ran (the person said yes in Claude's dialog).
    let pre = |id: &str| {
        json!({ "session_id": "o-claude", "cwd": w.proj, "hook_event_name": "PreToolUse",
            "permission_mode": "default", "tool_name": "Bash", "tool_input": cmd, "tool_use_id": id })
    };
    post(&s, "claude", &pre("toolu_1"));
    assert_eq!(asked(&s, "o-claude"), "toolu_1");
    assert_eq!(panel(&s), ["toolu_1"], "the panels see the call waiting");
    let n = events(&s, "o-claude").len();
    let ran = post(
        &s,
        "claude",
        &json!({ "session_id": "o-claude", "cwd": w.proj, "hook_event_name": "PostToolUse",
            "tool_name": "Bash", "tool_input": cmd, "tool_use_id": "toolu_1",
            "tool_response": { "stdout": "", "stderr": "", "interrupted": false } }),
    );
    assert_eq!(ran, "", "a post-call event is answered with nothing");
    assert_eq!(
        after(&s, "o-claude", n),
        [ev("ToolApproved", "toolu_1", "host")],
        "recorded as approved in the host, not decided as a new call"
    );
    assert!(
        panel(&s).is_empty(),
        "the panels see it answered in the host"
    );
    // Asked again, and this time Claude refused it.
    post(&s, "claude", &pre("toolu_2"));
    let n = events(&s, "o-claude").len();
    post(
        &s,
        "claude",
        &json!({ "session_id": "o-claude", "cwd": w.proj, "hook_event_name": "PermissionDenied",
            "tool_name": "Bash", "tool_input": cmd, "tool_use_id": "toolu_2" }),
    );
    assert_eq!(
        after(&s, "o-claude", n),
        [
            ev("PermissionDenied", "toolu_2", "host"),
            ev("ToolFailed", "toolu_2", "")
        ]
    );
    // A post-call event for a call that is not waiting leaves nothing.
    let n = events(&s, "o-claude").len();
    post(
        &s,
        "claude",
        &json!({ "session_id": "o-claude", "cwd": w.proj, "hook_event_name": "PostToolUse",
            "tool_name": "Bash", "tool_input": cmd, "tool_use_id": "toolu_1" }),
    );
    assert_eq!(after(&s, "o-claude", n), []);

    // Codex.
    post(
        &s,
        "codex",
        &json!({ "session_id": "o-codex", "cwd": w.proj, "hook_event_name": "PreToolUse",
            "tool_name": "exec_command", "tool_input": { "cmd": "tui-probe" },
            "tool_use_id": "call_1", "turn_id": "turn_1" }),
    );
    assert_eq!(asked(&s, "o-codex"), "call_1");
    let n = events(&s, "o-codex").len();
    let ran = post(
        &s,
        "codex",
        &json!({ "session_id": "o-codex", "cwd": w.proj, "hook_event_name": "PostToolUse",
            "tool_name": "exec_command", "tool_input": { "cmd": "tui-probe" },
            "tool_use_id": "call_1", "turn_id": "turn_1", "tool_response": "" }),
    );
    assert_eq!(ran, "");
    assert_eq!(
        after(&s, "o-codex", n),
        [ev("ToolApproved", "call_1", "host")]
    );

    // Gemini CLI: `AfterTool` names no call; only the exact tool and input resolve one.
    let gemini = |event: &str, input: &Value| {
        json!({ "session_id": "o-gemini", "cwd": w.proj, "hook_event_name": event,
            "tool_name": "run_shell_command", "tool_input": input })
    };
    let g = json!({ "command": "tui-probe", "description": "x" });
    post(&s, "gemini", &gemini("BeforeTool", &g));
    let id = asked(&s, "o-gemini");
    let n = events(&s, "o-gemini").len();
    let other = json!({ "command": "tui-probe --other", "description": "x" });
    assert_eq!(post(&s, "gemini", &gemini("AfterTool", &other)), "");
    assert_eq!(
        after(&s, "o-gemini", n),
        [],
        "another input resolves nothing"
    );
    post(&s, "gemini", &gemini("AfterTool", &g));
    assert_eq!(after(&s, "o-gemini", n), [ev("ToolApproved", &id, "host")]);

    // OpenCode's plugin.
    post(
        &s,
        "opencode",
        &json!({ "tool": "bash", "sessionID": "o-opencode", "callID": "oc_1",
            "args": { "command": "tui-probe" }, "cwd": w.proj, "root": w.proj }),
    );
    assert_eq!(asked(&s, "o-opencode"), "oc_1");
    let n = events(&s, "o-opencode").len();
    post(
        &s,
        "opencode",
        &json!({ "event": "tool.execute.after", "sessionID": "o-opencode", "callID": "oc_1" }),
    );
    assert_eq!(
        after(&s, "o-opencode", n),
        [ev("ToolApproved", "oc_1", "host")]
    );
}

/// Runs `hook <host> --url <server>` on `input` with its own (empty) state dir.
fn hook_url(s: &Server, w: &World, host: &str, input: &Value, local: &Path) -> String {
    use std::io::Write;
    let mut child = Command::new(BIN)
        .args(["hook", host, "--interactive", "--url", &s.base])
        .env("HOME", &w.home)
        .env("KHAELOR_PERM_STATE_DIR", local)
        .env_remove("CLAUDE_PROJECT_DIR")
        .env_remove("KHAELOR_PERM_TOKEN_FILE")
        .env_remove("KHAELOR_PERM_URL")
        .current_dir(&w.proj)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.to_string().as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn hook_url_forwards_post_call_events_to_the_service() {
    let w = World::new();
    let s = Server::start(&w.state, &w.home, &[]);
    let local = w.proj.parent().unwrap().join("local-state");
    let cmd = json!({ "command": "tui-probe" });
    let pre = json!({ "session_id": "fwd", "cwd": w.proj, "hook_event_name": "PreToolUse",
        "permission_mode": "default", "tool_name": "Bash", "tool_input": cmd, "tool_use_id": "toolu_9" });
    hook_url(&s, &w, "claude", &pre, &local);
    assert_eq!(asked(&s, "fwd"), "toolu_9");
    let n = events(&s, "fwd").len();
    let post = json!({ "session_id": "fwd", "cwd": w.proj, "hook_event_name": "PostToolUse",
        "tool_name": "Bash", "tool_input": cmd, "tool_use_id": "toolu_9", "tool_response": {} });
    assert_eq!(hook_url(&s, &w, "claude", &post, &local), "");
    assert_eq!(after(&s, "fwd", n), [ev("ToolApproved", "toolu_9", "host")]);
    // The service holds the session: no local log was written.
    assert!(
        !local.join("sessions").exists()
            || std::fs::read_dir(local.join("sessions"))
                .unwrap()
                .next()
                .is_none(),
        "the hook kept a local log beside the service's"
    );
}
