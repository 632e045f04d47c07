//! `contain` delivered through the hosts whose hook can change the tool input (pinned
//! by tests/setup/hosts.sh), offline against the scripted model server: under
//! `recommended`, the model's `npm test` is rewritten (Claude Code and Codex: the
//! hook's `updatedInput` with `permissionDecision: "allow"`; Gemini CLI: the hook's
//! `hookSpecificOutput.tool_input`; OpenCode: the plugin replaces `args.command`) to
//! run through
//! `khaelor-perm exec --contain`, runs without a prompt (its in-project marker
//! appears), its attempt to write `~/x` fails inside the sandbox, and the model
//! receives the sandbox's message in the tool result; the session log records the call
//! as contained, with the profile.
//!
//! The scene lives under Cargo's target tmp dir, not `/tmp`: the sandbox's `/tmp` is
//! private, so a HOME under `/tmp` would be absent inside instead of read-only.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod hosts_support;

use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use hosts_support::{Api, ModelServer, host_bin};
use serde_json::{Value, json};

const BIN: &str = env!("CARGO_BIN_EXE_khaelor-perm");

struct Scene {
    _tmp: tempfile::TempDir,
    home: std::path::PathBuf,
    proj: std::path::PathBuf,
    state: std::path::PathBuf,
}

fn scene() -> Scene {
    if let Err(e) = khaelor_perm::contain::available() {
        panic!("the sandbox cannot run here ({e}); run tests/setup/contain.sh");
    }
    let tmp = tempfile::Builder::new()
        .prefix("contain-claude")
        .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
        .unwrap();
    let base = tmp.path().canonicalize().unwrap();
    let (home, proj, state) = (base.join("home"), base.join("proj"), base.join("state"));
    for d in [&home, &proj, &state] {
        std::fs::create_dir_all(d).unwrap();
    }
    // A repository of its own: OpenCode takes the enclosing git worktree for the
    // project root, and this one lies inside the checkout's target dir.
    let git = Command::new("git")
        .args(["init", "-q"])
        .current_dir(&proj)
        .status()
        .unwrap();
    assert!(git.success());
    std::fs::write(
        proj.join("package.json"),
        "{\"name\":\"e2e\",\"version\":\"1.0.0\",\"scripts\":{\"test\":\"node test.js\"}}\n",
    )
    .unwrap();
    std::fs::write(
        proj.join("test.js"),
        "const fs = require('fs'), os = require('os'), path = require('path');\n\
         fs.writeFileSync('ran_marker', 'ran');\n\
         console.log('tests ran');\n\
         fs.writeFileSync(path.join(os.homedir(), 'x'), 'escaped');\n",
    )
    .unwrap();
    Scene {
        _tmp: tmp,
        home,
        proj,
        state,
    }
}

/// Runs the host to completion (killed after two minutes): stdout and stderr.
fn run(mut cmd: Command) -> (String, String) {
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    let mut o = child.stdout.take().unwrap();
    let mut e = child.stderr.take().unwrap();
    let t_out = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = o.read_to_string(&mut s);
        s
    });
    let t_err = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = e.read_to_string(&mut s);
        s
    });
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > Duration::from_secs(120) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("the host timed out");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    (t_out.join().unwrap(), t_err.join().unwrap())
}

#[test]
fn npm_test_is_contained_in_claude_code() {
    let claude = host_bin("claude", "claude");
    let Scene {
        _tmp,
        home,
        proj,
        state,
    } = scene();
    let model = ModelServer::start(
        Api::Messages,
        vec![(
            "Bash".to_string(),
            json!({ "command": "npm test", "description": "run the tests" }),
        )],
    );
    let settings = json!({
        "hooks": { "PreToolUse": [{ "matcher": "*", "hooks": [{
            "type": "command",
            "command": format!("{BIN} hook claude --non-interactive --state-dir {}", state.display()),
        }] }] }
    });
    std::fs::create_dir_all(proj.join(".claude")).unwrap();
    std::fs::write(
        proj.join(".claude/settings.json"),
        serde_json::to_string_pretty(&settings).unwrap(),
    )
    .unwrap();
    let mut cmd = Command::new(&claude);
    cmd.current_dir(&proj)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", &home)
        .env("ANTHROPIC_BASE_URL", &model.base)
        .env("ANTHROPIC_API_KEY", "e2e")
        .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
        .env("DISABLE_TELEMETRY", "1")
        .env("DISABLE_AUTOUPDATER", "1")
        .args(["-p", "run the tests", "--output-format", "json"])
        .args(["--allowedTools", "Bash"]);
    let (out, err) = run(cmd);
    check(&home, &proj, &state, &model, &out, &err);
}

/// What every host's contained session must show.
fn check(
    home: &std::path::Path,
    proj: &std::path::Path,
    state: &std::path::Path,
    model: &ModelServer,
    out: &str,
    err: &str,
) {
    let results = model.tool_results();
    let ctx = format!("host stdout:\n{out}\nstderr:\n{err}\ntool results:\n{results:#?}");
    assert_eq!(results.len(), 1, "{ctx}");
    // It ran, without a prompt, in the project.
    assert!(
        proj.join("ran_marker").is_file(),
        "npm test did not run\n{ctx}"
    );
    assert!(results[0].contains("tests ran"), "{ctx}");
    // Its write to ~/x failed inside the sandbox, and the model got the message.
    assert!(!home.join("x").exists(), "~/x was written\n{ctx}");
    assert!(
        results[0].contains("EROFS") || results[0].contains("read-only"),
        "{ctx}"
    );
    assert!(
        results[0].contains("KHAELOR's sandbox") && results[0].contains("policy: contain"),
        "the sandbox's message reaches the model\n{ctx}"
    );
    println!("--- tool result the model received:\n{}", results[0]);
    // The session log: requested, then approved as contained with the profile.
    let logs: Vec<_> = std::fs::read_dir(state.join("sessions"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .collect();
    assert_eq!(logs.len(), 1);
    let events: Vec<Value> = std::fs::read_to_string(&logs[0])
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let approved: Vec<&Value> = events
        .iter()
        .filter(|e| e["type"] == "ToolApproved")
        .collect();
    assert_eq!(approved.len(), 1, "{events:#?}");
    assert_eq!(approved[0]["by"], "contained", "{events:#?}");
    assert_eq!(approved[0]["contained"]["profile"]["name"], "project");
    assert_eq!(
        approved[0]["contained"]["profile"]["root"],
        proj.display().to_string()
    );
}

#[test]
fn npm_test_is_contained_in_opencode() {
    let opencode = host_bin("opencode", "opencode");
    let Scene {
        _tmp,
        home,
        proj,
        state,
    } = scene();
    let model = ModelServer::start(
        Api::Chat,
        vec![(
            "bash".to_string(),
            json!({ "command": "npm test", "description": "run the tests" }),
        )],
    );
    let config = json!({
        "$schema": "https://opencode.ai/config.json",
        "provider": { "local": {
            "npm": "@ai-sdk/openai-compatible",
            "name": "local",
            "options": { "baseURL": format!("{}/v1", model.base), "apiKey": "e2e" },
            "models": { "e2e": { "name": "e2e", "tool_call": true } }
        } },
        "model": "local/e2e",
        "autoupdate": false,
        "share": "disabled"
    });
    std::fs::write(proj.join("opencode.json"), config.to_string()).unwrap();
    // The plugin wired by `install` (running this binary), with the plugin package the
    // hosts script installed (OpenCode would otherwise download it).
    let out = Command::new(BIN)
        .args(["install", "opencode", "--project"])
        .arg(&proj)
        .env("HOME", &home)
        .env("KHAELOR_PERM_STATE_DIR", &state)
        .env_remove("XDG_CONFIG_HOME")
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let modules = hosts_support::hosts_dir().join("opencode/node_modules");
    let dir = proj.join(".opencode");
    std::os::unix::fs::symlink(&modules, dir.join("node_modules")).unwrap();
    let stamp =
        std::fs::read_to_string(hosts_support::hosts_dir().join("opencode/.installed")).unwrap();
    let version = stamp
        .split_whitespace()
        .find_map(|p| p.strip_prefix("@opencode-ai/plugin@"))
        .unwrap()
        .to_string();
    let deps = json!({ "@opencode-ai/plugin": version });
    std::fs::write(
        dir.join("package.json"),
        json!({ "dependencies": deps }).to_string(),
    )
    .unwrap();
    std::fs::write(
        dir.join("package-lock.json"),
        json!({ "lockfileVersion": 3, "packages": { "": { "dependencies": deps } } }).to_string(),
    )
    .unwrap();
    let xdg_config = home.join(".config");
    std::fs::create_dir_all(&xdg_config).unwrap();
    let mut cmd = Command::new(&opencode);
    cmd.current_dir(&proj)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", &home)
        .env("XDG_CONFIG_HOME", &xdg_config)
        .env("XDG_DATA_HOME", home.join(".local/share"))
        .env("XDG_CACHE_HOME", home.join(".cache"))
        .env("XDG_STATE_HOME", home.join(".local/state"))
        .env("OPENCODE_DISABLE_AUTOUPDATE", "1")
        .env("OPENCODE_DISABLE_DEFAULT_PLUGINS", "1")
        .env("OPENCODE_DISABLE_LSP_DOWNLOAD", "1")
        .env(
            "KHAELOR_PERM_HOOK_ARGS",
            format!("--state-dir {}", state.display()),
        )
        .args([
            "run",
            "-m",
            "local/e2e",
            "--format",
            "json",
            "run the tests",
        ]);
    let (out, err) = run(cmd);
    check(&home, &proj, &state, &model, &out, &err);
}

#[test]
fn npm_test_is_contained_in_codex() {
    let codex = host_bin("codex", "codex");
    let Scene {
        _tmp,
        home,
        proj,
        state,
    } = scene();
    let model = ModelServer::start(
        Api::Responses,
        vec![("exec_command".to_string(), json!({ "cmd": "npm test" }))],
    );
    let codex_home = home.join(".codex");
    std::fs::create_dir_all(&codex_home).unwrap();
    let hook = format!(
        "{BIN} hook codex --non-interactive --state-dir {}",
        state.display()
    );
    let config = format!(
        r#"model = "e2e-model"
model_provider = "e2e"

[model_providers.e2e]
name = "e2e"
base_url = "{}/v1"
wire_api = "responses"
env_key = "KHAELOR_E2E_KEY"

[[hooks.PreToolUse]]
[[hooks.PreToolUse.hooks]]
type = "command"
command = {}
"#,
        model.base,
        serde_json::to_string(&hook).unwrap()
    );
    std::fs::write(codex_home.join("config.toml"), config).unwrap();
    // Codex's own sandbox off, so the command runs in ours alone (inside Codex's
    // workspace-write sandbox a second one is not started: see the book).
    let mut cmd = Command::new(&codex);
    cmd.current_dir(&proj)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", &home)
        .env("CODEX_HOME", &codex_home)
        .env("KHAELOR_E2E_KEY", "e2e")
        .args(["exec", "--skip-git-repo-check", "--ephemeral"])
        .arg("--dangerously-bypass-approvals-and-sandbox")
        .args([
            "--disable",
            "plugins",
            "--disable",
            "remote_plugin",
            "--disable",
            "apps",
        ])
        .arg("--dangerously-bypass-hook-trust")
        .args(["--json", "run the tests"]);
    let (out, err) = run(cmd);
    check(&home, &proj, &state, &model, &out, &err);
}

#[test]
fn npm_test_is_contained_in_gemini_cli() {
    let gemini = host_bin("gemini", "gemini");
    let Scene {
        _tmp,
        home,
        proj,
        state,
    } = scene();
    let model = ModelServer::start(
        Api::Gemini,
        vec![(
            "run_shell_command".to_string(),
            json!({ "command": "npm test", "description": "run the tests" }),
        )],
    );
    let settings = json!({
        "security": {
            "auth": { "selectedType": "gemini-api-key" },
            "folderTrust": { "enabled": false }
        },
        "hooks": { "BeforeTool": [{ "matcher": ".*", "hooks": [{
            "type": "command",
            "command": format!("{BIN} hook gemini --state-dir {}", state.display()),
        }] }] }
    });
    let dir = home.join(".gemini");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("settings.json"),
        serde_json::to_string_pretty(&settings).unwrap(),
    )
    .unwrap();
    let mut cmd = Command::new(&gemini);
    cmd.current_dir(&proj)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", &home)
        .env("GOOGLE_GEMINI_BASE_URL", &model.base)
        .env("GEMINI_API_KEY", "e2e")
        .env("GEMINI_CLI_NO_RELAUNCH", "true")
        .args([
            "-m",
            "gemini-2.5-flash",
            "--yolo",
            "-o",
            "json",
            "-p",
            "run the tests",
        ]);
    let (out, err) = run(cmd);
    check(&home, &proj, &state, &model, &out, &err);
}
