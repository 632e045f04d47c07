//! End to end against the real Factory Droid, installed at its pinned version by
//! `tests/setup/hosts.sh`, offline: a custom model in the person's
//! `~/.factory/settings.json` (`generic-chat-completion-api` at the scripted Chat
//! Completions server of `hosts_support`) needs no Factory login, and
//! `khaelor-perm hook droid` wired by `install` as its `PreToolUse` and `PostToolUse`
//! hooks.
//!
//! `droid exec --auto high`: a command the defaults allow runs; a command that asks,
//! `curl … | sh`, a write outside the project and a floor command do not run, and the
//! model reads our message; the person's settings come back byte for byte after
//! `uninstall`. Installed `--interactive`, our ask reaches Droid, whose `exec` hands it
//! to its own autonomy level: the call runs (the model declared it low risk), and its
//! `PostToolUse` marks it approved by the host in our log — which is why the hook
//! denies asks for Droid unless told otherwise. A missing host fails the test, naming
//! the setup script.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod hosts_support;

use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use hosts_support::{Api, ModelServer, SessionDirs, host_bin};
use serde_json::{Value, json};

const BIN: &str = env!("CARGO_BIN_EXE_khaelor-perm");
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

    /// Droid's `Execute` for each command, with the risk fields its schema requires
    /// (the model's own words: low, for every one).
    fn script(cmds: &[(String, PathBuf)]) -> Vec<(String, Value)> {
        cmds.iter()
            .map(|(c, _)| {
                (
                    "Execute".to_string(),
                    json!({ "summary": "Run the next e2e step", "command": c,
                        "riskLevelReason": "an e2e step", "riskLevel": "low" }),
                )
            })
            .collect()
    }

    /// The person's settings: the scripted server as a custom model.
    fn settings(&self, model: &ModelServer) -> String {
        let v = json!({ "customModels": [{
            "model": "e2e", "displayName": "E2E", "baseUrl": format!("{}/v1", model.base),
            "apiKey": "e2e", "provider": "generic-chat-completion-api", "maxOutputTokens": 1000,
        }]});
        let text = serde_json::to_string_pretty(&v).unwrap() + "\n";
        let dir = self.home.join(".factory");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("settings.json"), &text).unwrap();
        text
    }

    fn khaelor(&self, args: &[&str]) {
        let out = Command::new(BIN)
            .args(args)
            .env("HOME", &self.home)
            .env("KHAELOR_PERM_STATE_DIR", &self.state)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{args:?}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// `droid exec --auto high` in the project, killed after `HOST_TIMEOUT`.
    fn run(&self) -> (String, String) {
        let mut cmd = Command::new(host_bin("droid", "droid"));
        cmd.current_dir(&self.proj)
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", &self.home)
            .env("KHAELOR_PERM_STATE_DIR", &self.state)
            .args(["exec", "-m", "custom:E2E-0", "--auto", "high"])
            .arg("run the e2e script");
        hosts_support::run_host(&mut cmd, HOST_TIMEOUT)
    }
}

#[test]
fn factory_droid_end_to_end() {
    let scene = Scene::new();
    let cmds = scene.commands();
    let model = ModelServer::start(Api::Chat, Scene::script(&cmds));
    let before = scene.settings(&model);
    // The hook's default for Droid: an ask is a deny.
    scene.khaelor(&["install", "droid", "--user"]);
    let (out, err) = scene.run();
    let results = model.tool_results();
    let ctx = format!("stdout:\n{out}\nstderr:\n{err}\nresults:\n{results:#?}");
    assert_eq!(results.len(), cmds.len(), "every call answered\n{ctx}");
    assert!(cmds[0].1.exists(), "the allowed command ran\n{ctx}");
    for (cmd, marker) in &cmds[1..] {
        assert!(!marker.exists(), "`{cmd}` must not run\n{ctx}");
    }
    for r in &results[1..4] {
        assert!(
            r.starts_with("Error: ") && r.contains("KHAELOR is running non-interactively"),
            "the ask's denial reaches the model: {r}\n{ctx}"
        );
    }
    assert!(
        results[4].contains("Blocked by KHAELOR's built-in safety floor"),
        "the floor's message reaches the model\n{ctx}"
    );
    let events = scene.log_events();
    let count = |t: &str| events.iter().filter(|e| e["type"] == t).count();
    assert_eq!(count("ToolRequested"), cmds.len(), "{events:#?}");
    assert_eq!(count("ToolApproved"), 1, "{events:#?}");
    assert_eq!(count("ToolFailed"), 4, "{events:#?}");
    let requested = events
        .iter()
        .find(|e| e["type"] == "ToolRequested")
        .unwrap();
    assert_eq!(requested["tool"], "droid:bash", "{requested}");
    assert_eq!(requested["projectRoot"], json!(scene.proj), "{requested}");
    // Doctor, with the pinned binary on PATH.
    let droid = host_bin("droid", "droid");
    let path = format!(
        "{}:{}",
        droid.parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let doctor = Command::new(BIN)
        .args(["doctor", "--host", "droid", "--root"])
        .arg(&scene.proj)
        .env("HOME", &scene.home)
        .env("PATH", &path)
        .env("KHAELOR_PERM_STATE_DIR", &scene.state)
        .output()
        .unwrap();
    let t = String::from_utf8_lossy(&doctor.stdout);
    assert!(doctor.status.success(), "{t}");
    assert!(t.contains("ok   host binary: `droid` 0.215.0"), "{t}");
    scene.khaelor(&["uninstall", "droid", "--user"]);
    assert_eq!(
        std::fs::read_to_string(scene.home.join(".factory/settings.json")).unwrap(),
        before
    );
}

/// Why asks are denies for Droid by default: left as an ask, `droid exec` gives the
/// call to its own autonomy level, which ran it because the model called it low risk.
/// The `PostToolUse` that follows records it as approved by the host.
#[test]
fn factory_droid_exec_runs_an_ask_it_was_told_is_low_risk() {
    let scene = Scene::new();
    let asked = scene.commands()[1].clone();
    let model = ModelServer::start(Api::Chat, Scene::script(std::slice::from_ref(&asked)));
    scene.settings(&model);
    scene.khaelor(&["install", "droid", "--user", "--interactive"]);
    let (out, err) = scene.run();
    assert!(asked.1.exists(), "Droid ran the asked call\n{out}\n{err}");
    let events = scene.log_events();
    let kinds: Vec<&str> = events.iter().filter_map(|e| e["type"].as_str()).collect();
    assert!(kinds.contains(&"PermissionRequested"), "{events:#?}");
    let approved = events
        .iter()
        .find(|e| e["type"] == "ToolApproved")
        .unwrap_or_else(|| panic!("no approval: {events:#?}"));
    assert_eq!(approved["by"], "host", "{approved}");
}
