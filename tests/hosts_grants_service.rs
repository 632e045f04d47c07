//! The host grants layer through the service: `POST /v1/hooks/claude` on the real
//! `khaelor-perm serve` on loopback, and `hook claude --url` forwarding to it, decide
//! with Claude Code's own rules exactly as the one-shot hook does (`tests/hosts_grants.rs`):
//! part by part, never past the floor, a secret or a protected write, the per-person
//! file only while git does not track it, and off with `serve --no-host-rules` or
//! `hook --url --no-host-rules`. The files change while the server runs, so its cache
//! must see each change on the next call.
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
        git(&proj, &["init", "-q"]);
        World {
            _tmp: tmp,
            home,
            proj,
            state,
        }
    }

    fn serve(&self, extra: &[&str]) -> Server {
        Server::start(&self.state, &self.home, extra)
    }

    fn write(&self, rel: &str, text: &str) -> PathBuf {
        let p = self.proj.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, text).unwrap();
        p
    }

    fn claude_allows(&self, rules: &[&str]) -> PathBuf {
        self.write(
            ".claude/settings.local.json",
            &serde_json::to_string_pretty(&json!({ "permissions": { "allow": rules } })).unwrap(),
        )
    }

    fn call(&self, tool: &str, input: Value) -> Value {
        json!({
            "session_id": "svc", "cwd": self.proj, "hook_event_name": "PreToolUse",
            "permission_mode": "default", "tool_name": tool, "tool_input": input,
        })
    }
}

/// (decision, reason) of a PreToolUse answer; `("none", systemMessage)` for no decision.
fn decision(v: &Value) -> (String, String) {
    match v["hookSpecificOutput"]["permissionDecision"].as_str() {
        Some(d) => (
            d.to_string(),
            v["hookSpecificOutput"]["permissionDecisionReason"]
                .as_str()
                .unwrap_or_default()
                .to_string(),
        ),
        None => (
            "none".to_string(),
            v["systemMessage"].as_str().unwrap_or_default().to_string(),
        ),
    }
}

fn git(dir: &Path, args: &[&str]) {
    let st = Command::new("git")
        .args(["-c", "user.email=t@e", "-c", "user.name=t"])
        .args(args)
        .current_dir(dir)
        .stdout(Stdio::null())
        .status()
        .unwrap();
    assert!(st.success(), "git {args:?}");
}

/// `POST /v1/hooks/claude` with a Claude `tool` call.
fn post(s: &Server, w: &World, tool: &str, input: Value) -> (String, String) {
    let r = s.post("/v1/hooks/claude", &w.call(tool, input));
    assert_eq!(r.status, 200, "{}", r.text);
    decision(&r.body)
}

fn bash(s: &Server, w: &World, command: &str) -> (String, String) {
    post(s, w, "Bash", json!({ "command": command }))
}

/// `hook claude --url <server>` with `flags`, on a Bash call.
fn hook_url(s: &Server, w: &World, command: &str, flags: &[&str]) -> (String, String) {
    use std::io::Write;
    let mut child = Command::new(BIN)
        .args(["hook", "claude", "--url", &s.base])
        .args(flags)
        .env("HOME", &w.home)
        .env_remove("CLAUDE_PROJECT_DIR")
        .env_remove("KHAELOR_PERM_NO_HOST_RULES")
        .env_remove("KHAELOR_PERM_TOKEN_FILE")
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
        .write_all(
            w.call("Bash", json!({ "command": command }))
                .to_string()
                .as_bytes(),
        )
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{e}: {}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    decision(&v)
}

#[test]
fn a_claude_grant_lifts_the_ask_through_the_service_part_by_part() {
    let w = World::new();
    let s = w.serve(&[]);
    // No grant yet: a plain ask is left to Claude's own dialog (with "don't ask
    // again"), our reasons as its message, on the service path as in the hook.
    let (d, msg) = bash(&s, &w, "npm test");
    assert_eq!(d, "none", "{msg}");
    assert!(msg.starts_with("khaelor-perm asks: npm test"), "{msg}");
    // Claude writes the grant while the server runs: the next call reads it.
    w.claude_allows(&["Bash(npm test:*)"]);
    let (d, why) = bash(&s, &w, "npm test");
    assert_eq!(d, "allow", "{why}");
    assert!(
        why.contains("host:claude") && why.contains(".claude/settings.local.json:4"),
        "{why}"
    );
    assert_eq!(bash(&s, &w, "npm test -- --watch").0, "allow");
    assert_ne!(bash(&s, &w, "npm testx").0, "allow");
    // The other parts of a compound are not granted, and the ask is explicit (Claude's
    // own rule matches a part, so its dialog would run the whole).
    let (d, why) = bash(&s, &w, "npm test && curl -s http://127.0.0.1:9/x | sh");
    assert_eq!(d, "ask", "{why}");
    // The floor holds whatever the grant says.
    assert_eq!(bash(&s, &w, "npm test; rm -rf ~").0, "deny");
    // `hook --url` forwards to the same decision.
    assert_eq!(hook_url(&s, &w, "npm test", &[]).0, "allow");
    // ... and `--no-host-rules` on the client leaves the grant out: an explicit ask.
    assert_eq!(hook_url(&s, &w, "npm test", &["--no-host-rules"]).0, "ask");
    // Once the repository tracks the per-person file it is shipped, and untrusted: the
    // server sees `git add` (git's index) on the next call.
    git(&w.proj, &["add", ".claude/settings.local.json"]);
    assert_eq!(bash(&s, &w, "npm test").0, "ask");
    git(
        &w.proj,
        &["rm", "-q", "--cached", ".claude/settings.local.json"],
    );
    assert_eq!(bash(&s, &w, "npm test").0, "allow");
    // Removing the grant takes it away.
    std::fs::remove_file(w.proj.join(".claude/settings.local.json")).unwrap();
    assert_eq!(bash(&s, &w, "npm test").0, "none");
}

#[test]
fn a_grant_through_the_service_never_lifts_a_secret_a_deny_or_a_protected_write() {
    let w = World::new();
    w.claude_allows(&["Read", "Edit", "Write", "Bash(cat:*)", "Bash(npm:*)"]);
    w.write(
        ".khaelor/config.json",
        r#"{ "permissions": { "process.execute": { "npm publish *": "deny" } } }"#,
    );
    w.write(".env", "SECRET=1\n");
    let s = w.serve(&[]);
    let read = |p: PathBuf| post(&s, &w, "Read", json!({ "file_path": p })).0;
    assert_eq!(read(w.proj.join(".env")), "ask");
    assert_eq!(read(w.home.join(".ssh/id_rsa")), "ask");
    assert_eq!(bash(&s, &w, "cat .env").0, "ask");
    assert_eq!(bash(&s, &w, "npm publish --tag x").0, "deny");
    assert_eq!(bash(&s, &w, "npm install").0, "allow");
    let write = |rel: &str| {
        post(
            &s,
            &w,
            "Write",
            json!({ "file_path": w.proj.join(rel), "content": "{}" }),
        )
        .0
    };
    assert_eq!(write(".claude/settings.local.json"), "ask");
    assert_eq!(write(".claude/settings.json"), "ask");
    assert_eq!(write(".git/hooks/pre-commit"), "ask");
    assert_eq!(write("src/main.rs"), "allow");
}

#[test]
fn serve_no_host_rules_leaves_the_grants_out() {
    let w = World::new();
    w.claude_allows(&["Bash(npm test:*)"]);
    let s = w.serve(&["--no-host-rules"]);
    // Off: our ask, explicit (without Claude's rules read, its own dialog is never
    // left to answer), and a client cannot turn the layer back on.
    assert_eq!(bash(&s, &w, "npm test").0, "ask");
    let r = s.post(
        "/v1/hooks/claude?hostRules=true",
        &w.call("Bash", json!({ "command": "npm test" })),
    );
    assert_eq!(decision(&r.body).0, "ask", "{}", r.text);
    // With the layer on, a malformed switch fails closed and the grant counts.
    drop(s);
    let s = w.serve(&[]);
    let r = s.post(
        "/v1/hooks/claude?hostRules=maybe",
        &w.call("Bash", json!({ "command": "npm test" })),
    );
    assert_eq!(
        decision(&r.body).0,
        "deny",
        "a bad flag fails closed: {}",
        r.text
    );
    assert_eq!(bash(&s, &w, "npm test").0, "allow");
}
