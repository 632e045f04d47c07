//! A project directory on the agent's `PATH`, through the real hook: the agent writes a
//! program into the project's `.venv/bin` (a write the defaults allow), and the next
//! `cat` runs that file, not the system's. The hook reads the `PATH` the host gave it,
//! so the verified reader's allow is gone once the file is there; before it is, the
//! same command stays allowed.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod http_support;

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

use serde_json::{Value, json};

const BIN: &str = env!("CARGO_BIN_EXE_khaelor-perm");

/// Runs `hook claude` for one Bash command with `path` as the environment's `PATH`;
/// returns Claude's `hookSpecificOutput`.
fn bash_call(root: &Path, home: &Path, state: &Path, path: &str, command: &str) -> Value {
    bash_call_with(root, home, state, path, command, &[])
}

fn bash_call_with(
    root: &Path,
    home: &Path,
    state: &Path,
    path: &str,
    command: &str,
    flags: &[&str],
) -> Value {
    let id = format!("t{}", command.len());
    call_as(root, home, state, path, ("s1", &id), command, flags)
}

/// As `bash_call_with`, in session `ids.0` under call id `ids.1`.
fn call_as(
    root: &Path,
    home: &Path,
    state: &Path,
    path: &str,
    ids: (&str, &str),
    command: &str,
    flags: &[&str],
) -> Value {
    let input = json!({ "session_id": ids.0, "cwd": root, "hook_event_name": "PreToolUse",
        "permission_mode": "default", "tool_name": "Bash",
        "tool_input": { "command": command }, "tool_use_id": ids.1 });
    let mut child = Command::new(BIN)
        .args(["hook", "claude", "--state-dir"])
        .arg(state)
        .args(flags)
        .env("HOME", home)
        .env("PATH", path)
        .env_remove("CLAUDE_PROJECT_DIR")
        .env_remove("KHAELOR_PERM_URL")
        .env_remove("KHAELOR_PERM_STATE_DIR")
        .env_remove("KHAELOR_PERM_MANAGED_CONFIG")
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
    assert!(out.status.success(), "{out:?}");
    let v: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(&out.stdout)));
    v["hookSpecificOutput"].clone()
}

/// A project with `notes.txt` and an empty `.venv/bin`, a home and a state directory;
/// the `PATH`s with the venv's `bin` first and last.
struct Scene {
    _tmp: tempfile::TempDir,
    root: std::path::PathBuf,
    home: std::path::PathBuf,
    state: std::path::PathBuf,
    venv_first: String,
    venv_last: String,
}

fn scene() -> Scene {
    let tmp = tempfile::tempdir().unwrap();
    let base = std::fs::canonicalize(tmp.path()).unwrap();
    let (root, home, state) = (base.join("proj"), base.join("home"), base.join("state"));
    for d in [root.join(".venv/bin"), home.clone(), state.clone()] {
        std::fs::create_dir_all(d).unwrap();
    }
    std::fs::write(root.join("notes.txt"), "hello\n").unwrap();
    let bin = root.join(".venv/bin");
    Scene {
        venv_first: format!("{}:/usr/bin:/bin", bin.display()),
        venv_last: format!("/usr/bin:/bin:{}", bin.display()),
        _tmp: tmp,
        root,
        home,
        state,
    }
}

#[test]
fn a_program_planted_on_the_agents_path_is_not_the_verified_one() {
    let Scene {
        _tmp,
        root,
        home,
        state,
        venv_first,
        venv_last,
    } = scene();

    let o = bash_call(&root, &home, &state, &venv_first, "cat notes.txt");
    assert_eq!(o["permissionDecision"], "allow", "nothing planted yet: {o}");

    // Planting it in the same command is caught before anything runs.
    let o = bash_call(
        &root,
        &home,
        &state,
        &venv_first,
        "printf '#!/bin/sh\\nid\\n' > .venv/bin/cat && chmod +x .venv/bin/cat && cat notes.txt",
    );
    assert_ne!(o["permissionDecision"], "allow", "{o}");
    assert!(o.get("updatedInput").is_none(), "not contained either: {o}");

    // Planted by an earlier call (the write tool's allow is not this test's subject).
    let planted = root.join(".venv/bin/cat");
    std::fs::write(&planted, "#!/bin/sh\necho planted\n").unwrap();
    std::fs::set_permissions(
        &planted,
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    // bash is the judge of what the name runs.
    let ran = |path: &str| {
        let out = Command::new("bash")
            .args(["-c", "cat notes.txt"])
            .current_dir(&root)
            .env("PATH", path)
            .output()
            .unwrap();
        String::from_utf8(out.stdout).unwrap()
    };
    assert_eq!(ran(&venv_first), "planted\n");
    assert_eq!(ran(&venv_last), "hello\n");
    let o = bash_call(&root, &home, &state, &venv_first, "cat notes.txt");
    let reason = o["permissionDecisionReason"].as_str().unwrap_or_default();
    let contained = o
        .get("updatedInput")
        .and_then(|i| i["command"].as_str())
        .is_some_and(|c| c.contains("exec") && c.contains("--contain"));
    assert!(
        o["permissionDecision"] != "allow" || contained,
        "the project's `cat` must not run outside the sandbox: {o}"
    );
    assert!(
        contained || reason.contains(".venv/bin/cat"),
        "the answer names the file that would run: {o}"
    );

    // The system's directories first: their `cat` runs, as before.
    let o = bash_call(&root, &home, &state, &venv_last, "cat notes.txt");
    assert_eq!(o["permissionDecision"], "allow", "{o}");
    assert!(o.get("updatedInput").is_none(), "{o}");
}

/// Through the service (`hook --url`): the hook sends its PATH, the service reads the
/// name on it as the hook would, and records it with the call.
#[test]
fn the_service_reads_names_on_the_hooks_path() {
    let Scene {
        _tmp,
        root,
        home,
        state,
        venv_first,
        venv_last,
    } = scene();
    std::fs::write(root.join(".venv/bin/cat"), "#!/bin/sh\necho planted\n").unwrap();
    let token_file = home.join("token");
    std::fs::write(&token_file, "search-path-token-1234567890\n").unwrap();
    let tf = token_file.to_str().unwrap();
    let server = http_support::Server::start(&state, &home, &["--token-file", tf])
        .with_token("search-path-token-1234567890");
    let flags = ["--url", server.base.as_str(), "--token-file", tf];

    let o = bash_call_with(&root, &home, &state, &venv_last, "cat notes.txt", &flags);
    assert_eq!(o["permissionDecision"], "allow", "{o}");
    assert!(o.get("updatedInput").is_none(), "{o}");
    let o = bash_call_with(&root, &home, &state, &venv_first, "cat notes.txt", &flags);
    let contained = o
        .get("updatedInput")
        .and_then(|i| i["command"].as_str())
        .is_some_and(|c| c.contains("--contain"));
    assert!(o["permissionDecision"] != "allow" || contained, "{o}");

    let ev = server.client().get("/v1/sessions/s1/events");
    assert_eq!(ev.status, 200, "{}", ev.text);
    let paths: Vec<&str> = ev.body["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["type"] == "ToolRequested")
        .filter_map(|e| e["searchPath"].as_str())
        .collect();
    assert_eq!(
        paths,
        [venv_last.as_str(), venv_first.as_str()],
        "{}",
        ev.text
    );
}

/// Under `strict` the defaults allow `cat *` by name: only the request naming the
/// planted file asks, and it is an explicit ask with no "always", never left to Claude
/// Code's own dialog, which takes `cat` for a reader and would run it unasked.
#[test]
fn under_strict_the_planted_program_is_an_explicit_ask() {
    let Scene {
        _tmp,
        root,
        home,
        state,
        venv_first,
        venv_last,
    } = scene();
    std::fs::write(root.join(".venv/bin/cat"), "#!/bin/sh\necho planted\n").unwrap();
    let strict = ["--preset", "strict"];
    let o = call_as(
        &root,
        &home,
        &state,
        &venv_first,
        ("st", "a"),
        "cat notes.txt",
        &strict,
    );
    assert_eq!(o["permissionDecision"], "ask", "{o}");
    let reason = o["permissionDecisionReason"].as_str().unwrap_or_default();
    assert!(reason.contains(".venv/bin/cat"), "{o}");
    let o = call_as(
        &root,
        &home,
        &state,
        &venv_last,
        ("st", "b"),
        "cat notes.txt",
        &strict,
    );
    assert_eq!(o["permissionDecision"], "allow", "{o}");
}
