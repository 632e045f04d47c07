//! End to end against the real GitHub Copilot CLI, installed at its pinned version by
//! `tests/setup/hosts.sh`, offline: `COPILOT_OFFLINE=true` with its own-provider
//! variables (`COPILOT_PROVIDER_BASE_URL`, `COPILOT_PROVIDER_API_KEY`, `COPILOT_MODEL`)
//! pointed at the scripted Chat Completions server of `hosts_support` (strace of such
//! a run showed one connection only, to that server), and `khaelor-perm hook copilot`
//! wired by `install` as its `preToolUse` and `postToolUse` hooks.
//!
//! Headless (`copilot -p`, without `--allow-all-tools`): a command the defaults allow
//! runs (our allow skips Copilot's own prompt, which nobody could answer); a command
//! that asks, `curl … | sh`, a write outside the project and a floor command do not
//! run, and the model reads our message in `Denied by preToolUse hook: …`; left
//! interactive, our ask reaches Copilot, which denies it in a headless run with our
//! ask's text. In the TUI (tmux), our ask is Copilot's "Hook permission request"
//! dialog with our text; the person's yes runs the call, and the `postToolUse` that
//! follows marks it approved by the host in our log. A missing host fails the test,
//! naming the setup script.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod hosts_support;
mod tmux_support;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use hosts_support::{Api, ModelServer, SessionDirs, host_bin, hosts_dir};
use serde_json::{Value, json};
use tmux_support::Tmux;

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

    fn script(&self, cmds: &[(String, PathBuf)]) -> Vec<(String, Value)> {
        cmds.iter()
            .map(|(c, _)| {
                (
                    "bash".to_string(),
                    json!({ "command": c, "description": "e2e step" }),
                )
            })
            .collect()
    }

    /// `khaelor-perm install|uninstall …` with the scene's home and state dir.
    fn khaelor(&self, args: &[&str]) -> String {
        let out = Command::new(BIN)
            .args(args)
            .env("HOME", &self.home)
            .env("KHAELOR_PERM_STATE_DIR", &self.state)
            .env_remove("COPILOT_HOME")
            .output()
            .unwrap();
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(out.status.success(), "{args:?}: {text}");
        text
    }

    fn hooks_dir(&self) -> PathBuf {
        self.home.join(".copilot").join("hooks")
    }

    /// The environment of a Copilot run against `model`: offline, its own provider,
    /// the unpacked runtime shared in the hosts' cache (`hosts.sh`).
    fn env(&self, model: &ModelServer) -> Vec<(String, String)> {
        let s = |p: &Path| p.display().to_string();
        vec![
            (
                "PATH".into(),
                std::env::var("PATH").unwrap_or_else(|_| "/usr/bin:/bin".into()),
            ),
            ("HOME".into(), s(&self.home)),
            (
                "COPILOT_CACHE_HOME".into(),
                s(&hosts_dir().join("copilot").join("cache")),
            ),
            ("COPILOT_OFFLINE".into(), "true".into()),
            ("COPILOT_AUTO_UPDATE".into(), "false".into()),
            (
                "COPILOT_PROVIDER_BASE_URL".into(),
                format!("{}/v1", model.base),
            ),
            ("COPILOT_PROVIDER_API_KEY".into(), "e2e".into()),
            ("COPILOT_MODEL".into(), "e2e".into()),
            ("KHAELOR_PERM_STATE_DIR".into(), s(&self.state)),
        ]
    }
}

fn copilot() -> PathBuf {
    host_bin("copilot", "copilot")
}

/// `copilot -p` in the scene against `model`, killed after `HOST_TIMEOUT`.
fn copilot_run(scene: &Scene, model: &ModelServer) -> (String, String) {
    let mut cmd = Command::new(copilot());
    cmd.current_dir(&scene.proj).env_clear();
    for (k, v) in scene.env(model) {
        cmd.env(k, v);
    }
    cmd.args(["-p", "run the e2e script"]);
    hosts_support::run_host(&mut cmd, HOST_TIMEOUT)
}

/// The hook inputs a `tee` hook beside ours kept (one JSON object after another).
fn teed_inputs(file: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(file).unwrap_or_default();
    serde_json::Deserializer::from_str(&text)
        .into_iter::<Value>()
        .map(Result::unwrap)
        .collect()
}

/// Copilot's text for a hook's deny: ours follows it.
const DENIED: &str = "Denied by preToolUse hook: ";

#[test]
fn copilot_cli_end_to_end() {
    let scene = Scene::new();
    let cmds = scene.commands();
    let model = ModelServer::start(Api::Chat, scene.script(&cmds));
    // The person's own hook file beside ours: it keeps what Copilot sends before and
    // after each call, and answers nothing.
    let seen = scene.outside.join("copilot-hook-inputs.jsonl");
    let tee = format!("tee -a {} >/dev/null", seen.display());
    let theirs = json!({ "version": 1, "hooks": {
        "preToolUse": [{ "type": "command", "bash": tee }],
        "postToolUse": [{ "type": "command", "bash": tee }],
    }})
    .to_string();
    std::fs::create_dir_all(scene.hooks_dir()).unwrap();
    std::fs::write(scene.hooks_dir().join("audit.json"), &theirs).unwrap();
    // Wired by `install` (the user's hooks directory); headless: nobody answers, asks
    // are denied by the hook with its own message.
    let said = scene.khaelor(&["install", "copilot", "--user", "--non-interactive"]);
    assert!(said.contains("khaelor-perm.json"), "{said}");
    let (out, err) = copilot_run(&scene, &model);
    let results = model.tool_results();
    let ctx = format!("stdout:\n{out}\nstderr:\n{err}\nresults:\n{results:#?}");
    assert_eq!(results.len(), cmds.len(), "every call answered\n{ctx}");
    assert!(cmds[0].1.exists(), "the allowed command ran\n{ctx}");
    assert!(!results[0].contains(DENIED), "{ctx}");
    for (cmd, marker) in &cmds[1..] {
        assert!(!marker.exists(), "`{cmd}` must not run\n{ctx}");
    }
    for r in &results[1..4] {
        assert!(
            r.starts_with(DENIED) && r.contains("KHAELOR is running non-interactively"),
            "the ask's denial reaches the model: {r}\n{ctx}"
        );
    }
    assert!(
        results[4].starts_with(DENIED)
            && results[4].contains("Blocked by KHAELOR's built-in safety floor"),
        "the floor's message reaches the model\n{ctx}"
    );
    // The log: every call, one approval, four failures (the floor's last).
    let events = scene.log_events();
    let count = |t: &str| events.iter().filter(|e| e["type"] == t).count();
    assert_eq!(count("ToolRequested"), cmds.len(), "{events:#?}");
    assert_eq!(count("ToolApproved"), 1, "{events:#?}");
    let failed: Vec<&Value> = events
        .iter()
        .filter(|e| e["type"] == "ToolFailed")
        .collect();
    assert_eq!(failed.len(), 4, "{events:#?}");
    assert!(
        failed[3]["message"]
            .as_str()
            .unwrap()
            .contains("safety floor")
    );
    let requested = events
        .iter()
        .find(|e| e["type"] == "ToolRequested")
        .unwrap();
    assert_eq!(requested["tool"], "copilot:bash", "{requested}");
    assert_eq!(requested["projectRoot"], json!(scene.proj), "{requested}");
    // What Copilot sent: its fields, and a `postToolUse` (the input plus `toolResult`)
    // only for the call that ran. A deny of ours ends Copilot's hook chain: the
    // person's hook beside ours never sees the calls we denied (seen on 1.0.102).
    let inputs = teed_inputs(&seen);
    let (post, pre): (Vec<&Value>, Vec<&Value>) =
        inputs.iter().partition(|v| v.get("toolResult").is_some());
    assert_eq!(pre.len(), 1, "{inputs:#?}");
    for (v, (c, _)) in pre.iter().zip(&cmds) {
        assert_eq!(v["toolName"], "bash", "{v}");
        assert_eq!(v["toolArgs"]["command"], json!(c), "{v}");
        assert_eq!(v["cwd"], json!(scene.proj), "{v}");
        assert!(v["sessionId"].is_string(), "{v}");
    }
    assert_eq!(post.len(), 1, "only the allowed call ran: {inputs:#?}");
    assert_eq!(post[0]["toolArgs"], pre[0]["toolArgs"]);
    assert_eq!(post[0]["toolResult"]["resultType"], "success");
    // Doctor, with the pinned binary on PATH: every check holds.
    let path = format!(
        "{}:{}",
        copilot().parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let doctor = Command::new(BIN)
        .args(["doctor", "--host", "copilot", "--root"])
        .arg(&scene.proj)
        .env("HOME", &scene.home)
        .env("PATH", &path)
        .env(
            "COPILOT_CACHE_HOME",
            hosts_dir().join("copilot").join("cache"),
        )
        .env("KHAELOR_PERM_STATE_DIR", &scene.state)
        .env_remove("COPILOT_HOME")
        .output()
        .unwrap();
    let t = String::from_utf8_lossy(&doctor.stdout);
    assert!(doctor.status.success(), "{t}");
    assert!(t.contains("ok   host binary: `copilot` 1.0.102"), "{t}");
    assert!(t.contains("ok   live floor deny"), "{t}");
    // Uninstall takes our file out and leaves the person's.
    scene.khaelor(&["uninstall", "copilot", "--user"]);
    assert!(!scene.hooks_dir().join("khaelor-perm.json").exists());
    assert_eq!(
        std::fs::read_to_string(scene.hooks_dir().join("audit.json")).unwrap(),
        theirs
    );
}

/// The hook left interactive in a headless run: our ask reaches Copilot as an ask,
/// and Copilot, with nobody to confirm it, does not run the call and gives the model
/// our ask's text. The log keeps the call waiting (asked, never approved).
#[test]
fn copilot_cli_turns_an_ask_into_a_deny_when_headless() {
    let scene = Scene::new();
    let asked = scene.commands()[1].clone();
    let model = ModelServer::start(Api::Chat, scene.script(std::slice::from_ref(&asked)));
    scene.khaelor(&["install", "copilot", "--user"]);
    let (out, err) = copilot_run(&scene, &model);
    let results = model.tool_results();
    let ctx = format!("stdout:\n{out}\nstderr:\n{err}\nresults:\n{results:#?}");
    assert_eq!(results.len(), 1, "{ctx}");
    assert!(!asked.1.exists(), "`{}` must not run\n{ctx}", asked.0);
    assert!(
        results[0].starts_with(
            "Denied by preToolUse hook (unable to ask user for confirmation): khaelor-perm asks:"
        ),
        "{ctx}"
    );
    let events = scene.log_events();
    let kinds: Vec<&str> = events.iter().filter_map(|e| e["type"].as_str()).collect();
    assert!(kinds.contains(&"PermissionRequested"), "{events:#?}");
    assert!(!kinds.contains(&"ToolApproved"), "{events:#?}");
}

/// The TUI, with the hook wired into the project (`.github/hooks/`, which Copilot runs
/// in a folder the person trusted): our ask is Copilot's "Hook permission request"
/// with our text; the person's yes runs the call and its `postToolUse` marks it
/// approved by the host in our log. The floor command that follows is denied with no
/// dialog.
#[test]
fn copilot_cli_tui_ask_then_the_persons_yes_is_logged() {
    let scene = Scene::new();
    let cmds = scene.commands();
    let steps = vec![cmds[1].clone(), cmds[4].clone()];
    let model = ModelServer::start(Api::Chat, scene.script(&steps));
    let proj = scene.proj.display().to_string();
    scene.khaelor(&["install", "copilot", "--project", &proj]);
    let wired = scene.proj.join(".github/hooks/khaelor-perm.json");
    assert!(wired.exists());
    // The folder is trusted already, so Copilot starts without its trust dialog.
    std::fs::create_dir_all(scene.home.join(".copilot")).unwrap();
    std::fs::write(
        scene.home.join(".copilot").join("config.json"),
        json!({ "trusted_folders": [scene.proj] }).to_string(),
    )
    .unwrap();
    let env: Vec<String> = scene
        .env(&model)
        .into_iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    let command = format!(
        "env -i TERM=xterm-256color {} {} -i 'run the e2e script'; sleep 600",
        env.join(" "),
        copilot().display()
    );
    let tui = Tmux::start(&scene.proj, &command);
    let screen = tui.wait_for("Copilot's hook permission dialog", |s| {
        s.contains("Hook permission request") && s.contains("Do you want to allow this tool call?")
    });
    assert!(screen.contains("khaelor-perm asks:"), "{screen}");
    assert!(!steps[0].1.exists(), "nothing runs before the answer");
    tui.keys(&["Enter"], false);
    tui.wait_for("the end of the turn", |_| {
        model.tool_results().len() == steps.len()
    });
    let results = model.tool_results();
    assert!(steps[0].1.exists(), "the approved call ran: {results:#?}");
    assert!(!steps[1].1.exists(), "the floor command did not run");
    assert!(
        results[1].starts_with(DENIED) && results[1].contains("safety floor"),
        "{results:#?}"
    );
    // The `postToolUse` of the approved call comes right after it ran.
    let start = Instant::now();
    let approved = loop {
        let events = scene.log_events();
        if let Some(a) = events.iter().find(|e| e["type"] == "ToolApproved").cloned() {
            break a;
        }
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "no approval in the log: {events:#?}"
        );
        std::thread::sleep(Duration::from_millis(250));
    };
    assert_eq!(approved["by"], "host", "{approved}");
    let events = scene.log_events();
    let asked = events
        .iter()
        .find(|e| e["type"] == "ToolRequested")
        .unwrap();
    assert_eq!(approved["callId"], asked["callId"], "{events:#?}");
    drop(tui);
    scene.khaelor(&["uninstall", "copilot", "--project", &proj]);
    assert!(!wired.exists());
}
