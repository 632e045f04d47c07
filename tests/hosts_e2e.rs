//! End to end against the real agent hosts: each host, installed at its
//! pinned version by `tests/setup/hosts.sh`, runs offline against the scripted model
//! server of `hosts_support`, with `khaelor-perm hook <host>` as its pre-tool hook.
//!
//! One scripted session per host: a command the defaults allow runs; a command that
//! asks is handled as the host allows (headless here, so it does not run); `curl … |
//! sh`, a write outside the project and a floor command are blocked (the marker file
//! each would create stays absent); the model receives our denial message in the next
//! request's tool result; the session log holds the calls. A missing host fails the
//! test with a message naming `tests/setup/hosts.sh`.
//!
//! Qwen Code's own approval runs before its hook, and its headless `default` mode
//! refuses shell calls before asking the hook: its sessions run with
//! `--approval-mode yolo`, so the hook is what decides.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod hosts_support;
mod http_support;

use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use hosts_support::{Api, ModelServer, SessionDirs, host_bin};
use serde_json::{Value, json};

const BIN: &str = env!("CARGO_BIN_EXE_khaelor-perm");
/// A host run that takes longer than this is killed and the test fails.
const HOST_TIMEOUT: Duration = Duration::from_secs(120);

/// The session's directories, and what this host's runs need around them.
struct Scene {
    dirs: SessionDirs,
}

impl std::ops::Deref for Scene {
    type Target = SessionDirs;
    fn deref(&self) -> &SessionDirs {
        &self.dirs
    }
}

impl Scene {
    fn new() -> Scene {
        Scene {
            dirs: SessionDirs::new(),
        }
    }

    /// Runs `khaelor-perm install|uninstall …` with the scene's home and state dir; a
    /// non-empty `dir` is appended (the value of a trailing `--project`).
    fn install(&self, args: &[&str], dir: &Path) {
        let mut c = Command::new(BIN);
        c.args(args);
        if !dir.as_os_str().is_empty() {
            c.arg(dir);
        }
        let out = c
            .env("HOME", &self.home)
            .env("KHAELOR_PERM_STATE_DIR", &self.state)
            .env_remove("CODEX_HOME")
            .env_remove("XDG_CONFIG_HOME")
            .env_remove("QWEN_HOME")
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{args:?}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// Runs `cmd` to completion (killed after `HOST_TIMEOUT`); returns stdout and stderr.
fn run_host(mut cmd: Command) -> (String, String) {
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    let mut out = child.stdout.take().unwrap();
    let mut err = child.stderr.take().unwrap();
    let t_out = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = out.read_to_string(&mut s);
        s
    });
    let t_err = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = err.read_to_string(&mut s);
        s
    });
    let start = Instant::now();
    loop {
        if child.try_wait().unwrap().is_some() {
            break;
        }
        if start.elapsed() > HOST_TIMEOUT {
            let _ = child.kill();
            let _ = child.wait();
            let (o, e) = (t_out.join().unwrap(), t_err.join().unwrap());
            panic!("host timed out after {HOST_TIMEOUT:?}\nstdout:\n{o}\nstderr:\n{e}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    (t_out.join().unwrap(), t_err.join().unwrap())
}

/// The checks every host's session must pass. `results` are the tool results the model
/// received, in order; `ran` says which markers exist.
fn check_session(scene: &Scene, model: &ModelServer, out: &str, err: &str) {
    let cmds = scene.commands();
    let ctx = || {
        format!(
            "host stdout:\n{out}\nhost stderr:\n{err}\ntool results:\n{:#?}",
            model.tool_results()
        )
    };
    let results = model.tool_results();
    assert_eq!(
        results.len(),
        cmds.len(),
        "every scripted call answered\n{}",
        ctx()
    );
    assert!(cmds[0].1.exists(), "the allowed command ran\n{}", ctx());
    for (cmd, marker) in &cmds[1..] {
        assert!(!marker.exists(), "`{cmd}` must not run\n{}", ctx());
    }
    // The model received our denial: the floor's message, and for each ask the
    // non-interactive one.
    assert!(
        results[4].contains("Blocked by KHAELOR's built-in safety floor"),
        "the floor's message reaches the model\n{}",
        ctx()
    );
    for r in &results[1..4] {
        assert!(
            r.contains("KHAELOR is running non-interactively"),
            "the ask's denial reaches the model: {r}\n{}",
            ctx()
        );
    }
    let events = scene.log_events();
    let requested: Vec<&Value> = events
        .iter()
        .filter(|e| e["type"] == "ToolRequested")
        .collect();
    assert_eq!(
        requested.len(),
        cmds.len(),
        "the log holds every call: {events:#?}"
    );
    let approved = events
        .iter()
        .filter(|e| e["type"] == "ToolApproved")
        .count();
    let failed: Vec<&Value> = events
        .iter()
        .filter(|e| e["type"] == "ToolFailed")
        .collect();
    assert_eq!(approved, 1, "{events:#?}");
    assert_eq!(failed.len(), 4, "{events:#?}");
    assert!(
        failed[3]["message"]
            .as_str()
            .unwrap()
            .contains("safety floor")
    );
}

fn shell_script(scene: &Scene, tool: &str, field: &str, extra: Value) -> Vec<(String, Value)> {
    scene
        .commands()
        .into_iter()
        .map(|(c, _)| {
            let mut args = json!({ field: c });
            if let (Some(a), Some(e)) = (args.as_object_mut(), extra.as_object()) {
                a.extend(e.clone());
            }
            (tool.to_string(), args)
        })
        .collect()
}

#[test]
fn claude_code_end_to_end() {
    let claude = host_bin("claude", "claude");
    let scene = Scene::new();
    let model = ModelServer::start(
        Api::Messages,
        shell_script(
            &scene,
            "Bash",
            "command",
            json!({ "description": "e2e step" }),
        ),
    );
    // The project's own settings, then the hook wired by `install` (headless: nobody
    // answers, asks are denied), taken out again after the run.
    std::fs::create_dir_all(scene.proj.join(".claude")).unwrap();
    let local = scene.proj.join(".claude/settings.local.json");
    // (Plain JSON: Claude Code ignores a settings file with comments.)
    let before = "{\n  \"env\": { \"E2E\": \"1\" }\n}";
    std::fs::write(&local, before).unwrap();
    scene.install(
        &["install", "claude", "--non-interactive", "--project"],
        &scene.proj,
    );
    let mut cmd = Command::new(&claude);
    cmd.current_dir(&scene.proj)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", &scene.home)
        .env("ANTHROPIC_BASE_URL", &model.base)
        .env("ANTHROPIC_API_KEY", "e2e")
        .env("KHAELOR_PERM_STATE_DIR", &scene.state)
        .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
        .env("DISABLE_TELEMETRY", "1")
        .env("DISABLE_AUTOUPDATER", "1")
        .args(["-p", "run the e2e script", "--output-format", "json"])
        .args(["--allowedTools", "Bash"]);
    let (out, err) = run_host(cmd);
    check_session(&scene, &model, &out, &err);
    scene.install(&["uninstall", "claude", "--project"], &scene.proj);
    assert_eq!(std::fs::read_to_string(&local).unwrap(), before);
}

/// The scene's paths, for a failing test's message.
fn _show(p: &Path) -> String {
    p.display().to_string()
}

/// Claude Code's HTTP hook against the real service (`POST /v1/hooks/claude`), with a
/// bearer token passed the way the book shows (docs/src/hosts/claude-code.md).
#[test]
fn claude_code_http_hook_end_to_end() {
    let claude = host_bin("claude", "claude");
    let scene = Scene::new();
    let token = "e2e-http-hook-token-0123456789";
    let token_file = scene.home.join("token");
    std::fs::write(&token_file, token).unwrap();
    let service = http_support::Server::start(
        &scene.state,
        &scene.home,
        &["--token-file", token_file.to_str().unwrap()],
    );
    let model = ModelServer::start(
        Api::Messages,
        shell_script(
            &scene,
            "Bash",
            "command",
            json!({ "description": "e2e step" }),
        ),
    );
    let settings = json!({
        "hooks": { "PreToolUse": [{ "matcher": "*", "hooks": [{
            "type": "http",
            "url": format!("{}/v1/hooks/claude?interactive=false", service.base),
            "headers": { "Authorization": "Bearer $KHAELOR_PERM_TOKEN" },
            "allowedEnvVars": ["KHAELOR_PERM_TOKEN"],
        }] }] }
    });
    std::fs::create_dir_all(scene.proj.join(".claude")).unwrap();
    std::fs::write(
        scene.proj.join(".claude/settings.json"),
        serde_json::to_string_pretty(&settings).unwrap(),
    )
    .unwrap();
    let mut cmd = Command::new(&claude);
    cmd.current_dir(&scene.proj)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", &scene.home)
        .env("KHAELOR_PERM_TOKEN", token)
        .env("ANTHROPIC_BASE_URL", &model.base)
        .env("ANTHROPIC_API_KEY", "e2e")
        .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
        .env("DISABLE_TELEMETRY", "1")
        .env("DISABLE_AUTOUPDATER", "1")
        .args(["-p", "run the e2e script", "--output-format", "json"])
        .args(["--allowedTools", "Bash"]);
    let (out, err) = run_host(cmd);
    check_session(&scene, &model, &out, &err);
}

#[test]
fn codex_end_to_end() {
    let codex = host_bin("codex", "codex");
    let scene = Scene::new();
    let model = ModelServer::start(
        Api::Responses,
        shell_script(&scene, "exec_command", "cmd", json!({})),
    );
    let codex_home = scene.home.join(".codex");
    std::fs::create_dir_all(&codex_home).unwrap();
    let before = format!(
        r#"# the person's own settings
model = "e2e-model"
model_provider = "e2e"

[model_providers.e2e]
name = "e2e"
base_url = "{}/v1"
wire_api = "responses"
env_key = "KHAELOR_E2E_KEY"
"#,
        model.base,
    );
    let config = codex_home.join("config.toml");
    std::fs::write(&config, &before).unwrap();
    // Wired by `install` (the user's file); `codex exec` has nobody to answer a
    // prompt: asks are denied by the hook.
    scene.install(
        &["install", "codex", "--user", "--non-interactive"],
        Path::new(""),
    );
    let mut cmd = Command::new(&codex);
    cmd.current_dir(&scene.proj)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", &scene.home)
        .env("CODEX_HOME", &codex_home)
        .env("KHAELOR_PERM_STATE_DIR", &scene.state)
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
        // The review Codex requires before it runs a new hook (`/hooks` in its TUI)
        // cannot be given headless; `install` prints it as the next step, and
        // `tests/hosts_install.rs` checks doctor reads Codex's trust of it.
        .arg("--dangerously-bypass-hook-trust")
        .args(["--json", "run the e2e script"]);
    let (out, err) = run_host(cmd);
    check_session(&scene, &model, &out, &err);
    scene.install(&["uninstall", "codex", "--user"], Path::new(""));
    assert_eq!(std::fs::read_to_string(&config).unwrap(), before);
}

#[test]
fn gemini_cli_end_to_end() {
    let gemini = host_bin("gemini", "gemini");
    let scene = Scene::new();
    let model = ModelServer::start(
        Api::Gemini,
        shell_script(
            &scene,
            "run_shell_command",
            "command",
            json!({ "description": "e2e step" }),
        ),
    );
    // A hook of the person's own beside ours, which keeps what Gemini sends before and
    // after each call: the after-call outcome is matched on exactly these fields.
    let seen = scene.outside.join("gemini-hook-inputs.jsonl");
    let tee = format!("tee -a {} >/dev/null", seen.display());
    let settings = json!({
        "security": {
            "auth": { "selectedType": "gemini-api-key" },
            "folderTrust": { "enabled": false }
        },
        "hooks": {
            "BeforeTool": [{ "matcher": ".*", "hooks": [{ "type": "command", "command": tee }] }],
            "AfterTool": [{ "matcher": ".*", "hooks": [{ "type": "command", "command": tee }] }],
        },
    });
    let dir = scene.home.join(".gemini");
    std::fs::create_dir_all(&dir).unwrap();
    let before = serde_json::to_string_pretty(&settings).unwrap();
    std::fs::write(dir.join("settings.json"), &before).unwrap();
    // Wired by `install` (the user's file); a headless run: the hook's default for
    // gemini is already non-interactive.
    scene.install(&["install", "gemini", "--user"], Path::new(""));
    let mut cmd = Command::new(&gemini);
    cmd.current_dir(&scene.proj)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", &scene.home)
        .env("GOOGLE_GEMINI_BASE_URL", &model.base)
        .env("GEMINI_API_KEY", "e2e")
        .env("KHAELOR_PERM_STATE_DIR", &scene.state)
        .env("GEMINI_CLI_NO_RELAUNCH", "true")
        .args([
            "-m",
            "gemini-2.5-flash",
            "--yolo",
            "-o",
            "json",
            "-p",
            "run the e2e script",
        ]);
    let (out, err) = run_host(cmd);
    check_session(&scene, &model, &out, &err);
    // Gemini's `AfterTool` carries no call id; each names the session, tool and input
    // of a `BeforeTool` exactly, which is what the outcome is matched on.
    let inputs: Vec<Value> = std::fs::read_to_string(&seen)
        .unwrap()
        .split_inclusive('}')
        .scan(String::new(), |acc, part| {
            acc.push_str(part);
            match serde_json::from_str::<Value>(acc.trim()) {
                Ok(v) => {
                    acc.clear();
                    Some(Some(v))
                }
                Err(_) => Some(None),
            }
        })
        .flatten()
        .collect();
    let key = |v: &Value| {
        (
            v["session_id"].clone(),
            v["tool_name"].clone(),
            v["tool_input"].clone(),
        )
    };
    let befores: Vec<_> = inputs
        .iter()
        .filter(|v| v["hook_event_name"] == "BeforeTool")
        .map(key)
        .collect();
    let after: Vec<_> = inputs
        .iter()
        .filter(|v| v["hook_event_name"] == "AfterTool")
        .collect();
    assert!(!after.is_empty(), "{inputs:?}");
    for a in after {
        assert!(
            a.get("tool_use_id").is_none() && a.get("call_id").is_none(),
            "{a}"
        );
        assert!(befores.contains(&key(a)), "{a}\n{befores:?}");
    }
    scene.install(&["uninstall", "gemini", "--user"], Path::new(""));
    assert_eq!(
        std::fs::read_to_string(dir.join("settings.json")).unwrap(),
        before
    );
}

#[test]
fn opencode_end_to_end() {
    let scene = Scene::new();
    let model = ModelServer::start(
        Api::Chat,
        shell_script(
            &scene,
            "bash",
            "command",
            json!({ "description": "e2e step" }),
        ),
    );
    let plugin = scene.proj.join(".opencode/plugin/khaelor-perm.js");
    let (out, err) = opencode_run(&scene, &model, &[]);
    check_session(&scene, &model, &out, &err);
    scene.install(&["uninstall", "opencode", "--project"], &scene.proj);
    assert!(!plugin.exists());
}

/// With a human attached (`KHAELOR_PERM_INTERACTIVE=1`) an ask is OpenCode's own to
/// answer; its default `permission` lets the call run, and the plugin's
/// `tool.execute.after` records it as approved in the host.
#[test]
fn opencode_records_an_ask_that_ran_as_approved_by_the_host() {
    let scene = Scene::new();
    let marker = scene.proj.join("asked_marker");
    let model = ModelServer::start(
        Api::Chat,
        vec![(
            "bash".to_string(),
            // `-t`: not an option the edit model reads, so the call asks
            json!({ "command": format!("touch -t 202001010000 {}", marker.display()), "description": "e2e step" }),
        )],
    );
    let (out, err) = opencode_run(&scene, &model, &[("KHAELOR_PERM_INTERACTIVE", "1")]);
    assert!(marker.exists(), "the call ran\n{out}\n{err}");
    let log = Command::new(BIN)
        .args(["log", "--json", "--state-dir"])
        .arg(&scene.state)
        .output()
        .unwrap();
    let rows: Vec<Value> = String::from_utf8_lossy(&log.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let touch: Vec<&Value> = rows
        .iter()
        .filter(|r| r["what"].as_str().is_some_and(|w| w.starts_with("touch ")))
        .collect();
    assert_eq!(touch.len(), 1, "{rows:?}\n{err}");
    assert_eq!(touch[0]["decision"], "ask", "{rows:?}");
    assert_eq!(touch[0]["outcome"], "approved by host", "{rows:?}");
}

/// Runs `opencode run` in the scene against `model`, with our plugin wired by
/// `install` into the project (one copy: a second, user-level one would run every
/// check twice) and `env` added.
fn opencode_run(scene: &Scene, model: &ModelServer, env: &[(&str, &str)]) -> (String, String) {
    let opencode = host_bin("opencode", "opencode");
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
    std::fs::write(scene.proj.join("opencode.json"), config.to_string()).unwrap();
    // The plugin package OpenCode would otherwise try to download (the hosts script
    // installed the same version).
    let modules = hosts_support::hosts_dir().join("opencode/node_modules");
    let xdg_config = scene.home.join(".config");
    for dir in [scene.proj.join(".opencode"), xdg_config.join("opencode")] {
        std::fs::create_dir_all(&dir).unwrap();
        std::os::unix::fs::symlink(&modules, dir.join("node_modules")).unwrap();
        // OpenCode reinstalls unless the lock file's root lists every declared package.
        let deps = json!({ "@opencode-ai/plugin": opencode_version() });
        std::fs::write(
            dir.join("package.json"),
            json!({ "dependencies": deps }).to_string(),
        )
        .unwrap();
        std::fs::write(
            dir.join("package-lock.json"),
            json!({ "lockfileVersion": 3, "packages": { "": { "dependencies": deps } } })
                .to_string(),
        )
        .unwrap();
    }
    scene.install(&["install", "opencode", "--project"], &scene.proj);
    let plugin = scene.proj.join(".opencode/plugin/khaelor-perm.js");
    assert!(std::fs::read_to_string(&plugin).unwrap().contains(BIN));
    let mut cmd = Command::new(&opencode);
    cmd.current_dir(&scene.proj)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", &scene.home)
        .env("XDG_CONFIG_HOME", &xdg_config)
        .env("XDG_DATA_HOME", scene.home.join(".local/share"))
        .env("XDG_CACHE_HOME", scene.home.join(".cache"))
        .env("XDG_STATE_HOME", scene.home.join(".local/state"))
        .env("OPENCODE_DISABLE_AUTOUPDATE", "1")
        .env("OPENCODE_DISABLE_DEFAULT_PLUGINS", "1")
        .env("OPENCODE_DISABLE_LSP_DOWNLOAD", "1")
        .env("KHAELOR_PERM_STATE_DIR", &scene.state)
        .envs(env.iter().copied())
        .args([
            "run",
            "-m",
            "local/e2e",
            "--format",
            "json",
            "run the e2e script",
        ]);
    run_host(cmd)
}

/// The pinned OpenCode version, read from what the hosts script installed.
fn opencode_version() -> String {
    let stamp = hosts_support::hosts_dir().join("opencode/.installed");
    let text = std::fs::read_to_string(&stamp).unwrap();
    text.split_whitespace()
        .find_map(|p| p.strip_prefix("@opencode-ai/plugin@"))
        .unwrap_or_else(|| panic!("no plugin version in {}", stamp.display()))
        .to_string()
}

/// The hooks `codex app-server` lists for `proj` (its `hooks/list` answer), as the
/// pinned Codex computes them: key, command, current hash and trust status.
fn codex_hooks(codex: &Path, home: &Path, proj: &Path) -> Vec<Value> {
    use std::io::{BufRead, Write};
    let mut child = Command::new(codex)
        .arg("app-server")
        .current_dir(proj)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", home)
        .env("CODEX_HOME", home.join(".codex"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    for r in [
        json!({ "id": 1, "method": "initialize", "params": { "clientInfo": { "name": "t", "version": "0" } } }),
        json!({ "method": "initialized" }),
        json!({ "id": 2, "method": "hooks/list", "params": { "cwds": [proj] } }),
    ] {
        writeln!(stdin, "{r}").unwrap();
    }
    let mut answer = Value::Null;
    for line in std::io::BufReader::new(child.stdout.take().unwrap()).lines() {
        let v: Value = serde_json::from_str(&line.unwrap()).unwrap_or(Value::Null);
        if v["id"] == 2 {
            answer = v;
            break;
        }
    }
    drop(stdin);
    let _ = child.kill();
    let _ = child.wait();
    answer["result"]["data"][0]["hooks"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

#[test]
fn codex_install_doctor_reads_codexs_own_hook_trust() {
    let codex = host_bin("codex", "codex");
    let scene = Scene::new();
    let codex_home = scene.home.join(".codex");
    std::fs::create_dir_all(&codex_home).unwrap();
    let config = codex_home.join("config.toml");
    let before = "# mine\nmodel = \"m\"\n";
    std::fs::write(&config, before).unwrap();
    scene.install(
        &["install", "codex", "--user", "--non-interactive"],
        Path::new(""),
    );
    let path = format!(
        "{}:{}",
        codex.parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let doctor = || {
        let out = Command::new(BIN)
            .args(["doctor", "--host", "codex", "--root"])
            .arg(&scene.proj)
            .env("HOME", &scene.home)
            .env("PATH", &path)
            .env("KHAELOR_PERM_STATE_DIR", &scene.state)
            .env_remove("CODEX_HOME")
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).to_string()
    };
    // Codex sees both hooks, and trusts neither yet: doctor says so, with the fix.
    let hooks = codex_hooks(&codex, &scene.home, &scene.proj);
    assert_eq!(hooks.len(), 2, "{hooks:?}");
    assert!(
        hooks.iter().all(|h| h["trustStatus"] == "untrusted"),
        "{hooks:?}"
    );
    let t = doctor();
    assert!(
        t.contains("FAIL codex hook trust") && t.contains("type `/hooks`"),
        "{t}"
    );
    for line in [
        "ok   hook wiring",
        "ok   live allow: `git status` -> allow",
        "ok   live floor deny: `rm -rf /` -> deny",
    ] {
        assert!(t.contains(line), "{line}\n{t}");
    }
    // The person trusts them (what Codex's `/hooks` review writes: the hash Codex
    // computed, under the hook's key).
    let mut trusted = std::fs::read_to_string(&config).unwrap();
    for h in &hooks {
        trusted.push_str(&format!(
            "\n[hooks.state.{}]\ntrusted_hash = {}\n",
            h["key"], h["currentHash"]
        ));
    }
    std::fs::write(&config, &trusted).unwrap();
    let hooks = codex_hooks(&codex, &scene.home, &scene.proj);
    assert!(
        hooks.iter().all(|h| h["trustStatus"] == "trusted"),
        "{hooks:?}"
    );
    let t = doctor();
    assert!(t.contains("ok   codex hook trust"), "{t}");
    // Uninstall takes the hooks and Codex's trust of them: the file as before.
    scene.install(&["uninstall", "codex", "--user"], Path::new(""));
    assert_eq!(std::fs::read_to_string(&config).unwrap(), before);
}

/// Runs `qwen -p` in the scene against `model` (`OPENAI_BASE_URL`, the scripted Chat
/// Completions server), in the `yolo` approval mode: Qwen's own approval, which runs
/// before its hook, lets every call through to the hook.
fn qwen_run(scene: &Scene, model: &ModelServer) -> (String, String) {
    let qwen = host_bin("qwen", "qwen");
    let mut cmd = Command::new(&qwen);
    cmd.current_dir(&scene.proj)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", &scene.home)
        .env("OPENAI_BASE_URL", format!("{}/v1", model.base))
        .env("OPENAI_API_KEY", "e2e")
        .env("OPENAI_MODEL", "e2e")
        .env("QWEN_CODE_SUPPRESS_YOLO_WARNING", "1")
        .env("KHAELOR_PERM_STATE_DIR", &scene.state)
        .args(["--auth-type", "openai", "-m", "e2e"])
        .args(["--approval-mode", "yolo", "-p", "run the e2e script"]);
    run_host(cmd)
}

/// The hook inputs a `tee` hook beside ours kept (one JSON object after another).
fn teed_inputs(file: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(file).unwrap();
    serde_json::Deserializer::from_str(&text)
        .into_iter::<Value>()
        .map(Result::unwrap)
        .collect()
}

#[test]
fn qwen_code_end_to_end() {
    let scene = Scene::new();
    let model = ModelServer::start(
        Api::Chat,
        shell_script(
            &scene,
            "run_shell_command",
            "command",
            json!({ "description": "e2e step" }),
        ),
    );
    // The person's own settings, with a hook of theirs beside ours that keeps what Qwen
    // sends before and after each call. (`$version` is the settings format Qwen 0.24.4
    // writes: an older file it migrates in place when it starts. Without
    // `usageStatisticsEnabled: false` it looks up its telemetry host; with it, strace
    // shows only loopback connections.)
    let seen = scene.outside.join("qwen-hook-inputs.jsonl");
    let tee = format!("tee -a {} >/dev/null", seen.display());
    let settings = json!({
        "$version": 4,
        "privacy": { "usageStatisticsEnabled": false },
        "model": { "name": "e2e" },
        "hooks": {
            "PreToolUse": [{ "matcher": "*", "hooks": [{ "type": "command", "command": tee }] }],
            "PostToolUse": [{ "matcher": "*", "hooks": [{ "type": "command", "command": tee }] }],
        },
    });
    let dir = scene.home.join(".qwen");
    std::fs::create_dir_all(&dir).unwrap();
    let before = serde_json::to_string_pretty(&settings).unwrap();
    std::fs::write(dir.join("settings.json"), &before).unwrap();
    // Wired by `install` (the user's file); headless: nobody answers, asks are denied
    // by the hook with its own message.
    scene.install(
        &["install", "qwen", "--user", "--non-interactive"],
        Path::new(""),
    );
    let (out, err) = qwen_run(&scene, &model);
    check_session(&scene, &model, &out, &err);
    // What Qwen sent: Claude Code's fields, its tool names, and a `tool_use_id` that
    // the `PostToolUse` of the one call that ran repeats.
    let inputs = teed_inputs(&seen);
    let pre: Vec<&Value> = inputs
        .iter()
        .filter(|v| v["hook_event_name"] == "PreToolUse")
        .collect();
    assert_eq!(pre.len(), 5, "{inputs:#?}");
    for v in &pre {
        assert_eq!(v["tool_name"], "run_shell_command", "{v}");
        assert_eq!(v["cwd"], json!(scene.proj), "{v}");
        assert_eq!(v["permission_mode"], "yolo", "{v}");
        assert!(
            v["session_id"].is_string() && v["tool_use_id"].is_string(),
            "{v}"
        );
    }
    let post: Vec<&Value> = inputs
        .iter()
        .filter(|v| v["hook_event_name"] == "PostToolUse")
        .collect();
    assert_eq!(post.len(), 1, "only the allowed call ran: {inputs:#?}");
    assert_eq!(post[0]["tool_use_id"], pre[0]["tool_use_id"]);
    // Doctor, with the pinned binary on PATH: every check holds.
    let qwen = host_bin("qwen", "qwen");
    let path = format!(
        "{}:{}",
        qwen.parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let doctor = Command::new(BIN)
        .args(["doctor", "--host", "qwen", "--root"])
        .arg(&scene.proj)
        .env("HOME", &scene.home)
        .env("PATH", &path)
        .env("KHAELOR_PERM_STATE_DIR", &scene.state)
        .env_remove("QWEN_HOME")
        .output()
        .unwrap();
    let t = String::from_utf8_lossy(&doctor.stdout);
    assert!(doctor.status.success(), "{t}");
    assert!(t.contains("ok   host binary: `qwen` 0.24.4"), "{t}");
    scene.install(&["uninstall", "qwen", "--user"], Path::new(""));
    assert_eq!(
        std::fs::read_to_string(dir.join("settings.json")).unwrap(),
        before
    );
}

/// The hook left interactive in a headless run: our ask reaches Qwen as an ask, and
/// Qwen, with nobody to confirm it, does not run the call and gives the model our
/// ask's text. The log keeps the call waiting (asked, never approved).
#[test]
fn qwen_code_turns_an_ask_into_a_deny_when_headless() {
    let scene = Scene::new();
    let cmds = scene.commands();
    let (asked, marker) = cmds[1].clone();
    let model = ModelServer::start(
        Api::Chat,
        vec![(
            "run_shell_command".to_string(),
            json!({ "command": asked, "description": "e2e step" }),
        )],
    );
    let dir = scene.home.join(".qwen");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("settings.json"),
        json!({ "$version": 4, "privacy": { "usageStatisticsEnabled": false } }).to_string(),
    )
    .unwrap();
    scene.install(&["install", "qwen", "--user"], Path::new(""));
    let (out, err) = qwen_run(&scene, &model);
    let results = model.tool_results();
    let ctx = format!("stdout:\n{out}\nstderr:\n{err}\nresults:\n{results:#?}");
    assert_eq!(results.len(), 1, "{ctx}");
    assert!(!marker.exists(), "`{asked}` must not run\n{ctx}");
    assert!(results[0].contains("khaelor-perm asks:"), "{ctx}");
    let events = scene.log_events();
    let kinds: Vec<&str> = events.iter().filter_map(|e| e["type"].as_str()).collect();
    assert!(kinds.contains(&"PermissionRequested"), "{events:#?}");
    assert!(!kinds.contains(&"ToolApproved"), "{events:#?}");
}
