//! End to end against the real Cline CLI, installed at its pinned version by
//! `tests/setup/hosts.sh`, offline: the person's provider (`cline auth -p
//! openai-compatible -b URL`: the scripted Chat Completions server of
//! `hosts_support`, a fake key) needs no Cline account, the
//! session runs in process (`CLINE_SESSION_BACKEND_MODE=local`: no hub daemon is left
//! behind), and `khaelor-perm install cline` writes our plugin to
//! `~/.cline/plugins/`.
//!
//! `cline --json "task"` (its headless run, tools approved by Cline itself): a command
//! the defaults allow runs; a command that asks, `curl … | sh`, a write outside the
//! project and a floor command do not run, and the model reads our message; the
//! plugin file goes away with `uninstall`. Installed `--interactive`, our ask becomes
//! Cline's own approval, which a headless run refuses. A hook that cannot answer
//! blocks the call. A plugin Cline could not load in time is left out and the call
//! runs unchecked: the host's limit, shown here so a change in it is seen. A missing
//! host fails the test, naming the setup script.
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

use hosts_support::{Api, ModelServer, SessionDirs, host_bin, run_host};
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

    /// The person's model: `model`.
    fn auth(&self, model: &ModelServer) {
        let scene = self;
        // The person's provider, set the documented way.
        let mut auth = Command::new(host_bin("cline", "cline"));
        auth.current_dir(&scene.proj)
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", &scene.home)
            .env("CLINE_SESSION_BACKEND_MODE", "local")
            .args([
                "auth",
                "-p",
                "openai-compatible",
                "-k",
                "e2e",
                "-m",
                "e2e",
                "-b",
            ])
            .arg(format!("{}/v1", model.base));
        let (out, err) = run_host(&mut auth, HOST_TIMEOUT);
        assert!(
            scene
                .home
                .join(".cline/data/settings/providers.json")
                .exists(),
            "cline auth:\n{out}\n{err}"
        );
    }

    /// Cline's `run_commands` for each command, one per call.
    fn script(cmds: &[(String, PathBuf)]) -> Vec<(String, Value)> {
        cmds.iter()
            .map(|(c, _)| ("run_commands".to_string(), json!({ "commands": [c] })))
            .collect()
    }

    fn khaelor(&self, args: &[&str]) -> String {
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
        String::from_utf8_lossy(&out.stdout).to_string()
    }

    fn plugin(&self) -> PathBuf {
        self.home.join(".cline/plugins/khaelor-perm.js")
    }

    /// `cline --json "…"` in the project, with `env` added.
    fn run(&self, env: &[(&str, &str)]) -> (String, String) {
        let mut cmd = Command::new(host_bin("cline", "cline"));
        cmd.current_dir(&self.proj)
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", &self.home)
            .env("KHAELOR_PERM_STATE_DIR", &self.state)
            .env("CLINE_SESSION_BACKEND_MODE", "local")
            .env("CLINE_NO_AUTO_UPDATE", "1")
            // Cline starts its plugins in a sandbox process and runs the session
            // without any that is not loaded in 4 s, silently: on this shared machine
            // that happened with three runs at once. The person's own setting for it.
            .env("CLINE_PLUGIN_IMPORT_TIMEOUT_MS", "60000")
            .envs(env.iter().copied())
            // Cline ends a run after a few failed calls in a row (`--retries`, its
            // "consecutive mistakes"): a denial is one.
            .args(["--json", "--retries", "20", "run the e2e script"]);
        run_host(&mut cmd, HOST_TIMEOUT)
    }
}

#[test]
fn cline_end_to_end() {
    let scene = Scene::new();
    let cmds = scene.commands();
    let model = ModelServer::start(Api::Chat, Scene::script(&cmds));
    scene.auth(&model);
    // The hook's default for Cline: an ask is a deny.
    scene.khaelor(&["install", "cline", "--user"]);
    assert!(scene.plugin().exists());
    let (out, err) = scene.run(&[]);
    let results = model.tool_results();
    let ctx = format!("stdout:\n{out}\nstderr:\n{err}\nresults:\n{results:#?}");
    assert_eq!(results.len(), cmds.len(), "every call answered\n{ctx}");
    assert!(cmds[0].1.exists(), "the allowed command ran\n{ctx}");
    for (cmd, marker) in &cmds[1..] {
        assert!(!marker.exists(), "`{cmd}` must not run\n{ctx}");
    }
    for r in &results[1..4] {
        assert!(
            r.starts_with(r#"{"error":"#) && r.contains("KHAELOR is running non-interactively"),
            "the ask's denial reaches the model: {r}\n{ctx}"
        );
    }
    assert!(
        results[4].contains("Blocked by KHAELOR's built-in safety floor"),
        "the floor's message reaches the model\n{ctx}"
    );
    // The run went on after every denial.
    assert!(out.contains(r#""finishReason":"completed""#), "{ctx}");
    let events = scene.log_events();
    let count = |t: &str| events.iter().filter(|e| e["type"] == t).count();
    assert_eq!(count("ToolRequested"), cmds.len(), "{events:#?}");
    assert_eq!(count("ToolApproved"), 1, "{events:#?}");
    assert_eq!(count("ToolFailed"), 4, "{events:#?}");
    let requested = events
        .iter()
        .find(|e| e["type"] == "ToolRequested")
        .unwrap();
    assert_eq!(requested["tool"], "cline:bash", "{requested}");
    assert_eq!(requested["projectRoot"], json!(scene.proj), "{requested}");
    // Doctor, with the pinned binary on PATH.
    let cline = host_bin("cline", "cline");
    let path = format!(
        "{}:{}",
        cline.parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let doctor = Command::new(BIN)
        .args(["doctor", "--host", "cline", "--root"])
        .arg(&scene.proj)
        .env("HOME", &scene.home)
        .env("PATH", &path)
        .env("KHAELOR_PERM_STATE_DIR", &scene.state)
        .output()
        .unwrap();
    let t = String::from_utf8_lossy(&doctor.stdout);
    assert!(doctor.status.success(), "{t}");
    assert!(t.contains("ok   host binary: `cline` 3.0.65"), "{t}");
    scene.khaelor(&["uninstall", "cline", "--user"]);
    assert!(!scene.plugin().exists());
}

/// Installed `--interactive`, our ask is Cline's own approval (`autoApprove: false`),
/// which its TUI asks and a headless run refuses: the call does not run, and our log
/// says we asked.
#[test]
fn cline_interactive_ask_is_clines_approval() {
    let scene = Scene::new();
    let asked = scene.commands()[1].clone();
    let model = ModelServer::start(Api::Chat, Scene::script(std::slice::from_ref(&asked)));
    scene.auth(&model);
    scene.khaelor(&["install", "cline", "--user", "--interactive"]);
    let (out, err) = scene.run(&[]);
    let results = model.tool_results();
    let ctx = format!("stdout:\n{out}\nstderr:\n{err}\nresults:\n{results:#?}");
    assert!(
        !asked.1.exists(),
        "the asked call must not run headless\n{ctx}"
    );
    assert_eq!(results.len(), 1, "{ctx}");
    assert!(
        results[0].contains("requires approval in a TTY session"),
        "Cline's own refusal: {ctx}"
    );
    let kinds: Vec<String> = scene
        .log_events()
        .iter()
        .filter_map(|e| e["type"].as_str().map(str::to_string))
        .collect();
    assert!(
        kinds.iter().any(|k| k == "PermissionRequested"),
        "{kinds:?}"
    );
    assert!(!kinds.iter().any(|k| k == "ToolApproved"), "{kinds:?}");
}

/// A hook that cannot answer blocks the call: a binary that is not there, and one that
/// answers after Cline's 3 s (the plugin stops waiting at 2.5 s).
#[test]
fn cline_plugin_blocks_when_the_hook_cannot_answer() {
    let scene = Scene::new();
    let allowed = scene.commands()[0].clone();
    let model = ModelServer::start(Api::Chat, Scene::script(std::slice::from_ref(&allowed)));
    scene.auth(&model);
    scene.khaelor(&["install", "cline", "--user"]);
    let slow = scene.outside.join("slow-hook");
    std::fs::write(
        &slow,
        "#!/bin/sh\nsleep 10\necho '{\"decision\":\"allow\"}'\n",
    )
    .unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&slow, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let missing = scene.outside.join("no-such-binary");
    for bin in [&missing, &slow] {
        let (out, err) = scene.run(&[("KHAELOR_PERM_BIN", bin.to_str().unwrap())]);
        let results = model.tool_results();
        let ctx = format!("stdout:\n{out}\nstderr:\n{err}\nresults:\n{results:#?}");
        assert!(!allowed.1.exists(), "{} must block\n{ctx}", bin.display());
        assert!(
            results
                .first()
                .is_some_and(|r| r.contains("khaelor-perm could not check this tool call")),
            "{ctx}"
        );
    }
}

/// Cline's limit, not ours: a plugin that does not load within
/// `CLINE_PLUGIN_IMPORT_TIMEOUT_MS` (4 s by default) is left out without a word, and
/// the call runs unchecked. Shown with 1 ms, so a Cline that starts refusing to run
/// without its plugins is noticed here.
#[test]
fn cline_runs_unchecked_when_the_plugin_loads_late() {
    let scene = Scene::new();
    let asked = scene.commands()[1].clone();
    let model = ModelServer::start(Api::Chat, Scene::script(std::slice::from_ref(&asked)));
    scene.auth(&model);
    scene.khaelor(&["install", "cline", "--user"]);
    let (out, err) = scene.run(&[("CLINE_PLUGIN_IMPORT_TIMEOUT_MS", "1")]);
    assert!(
        asked.1.exists(),
        "Cline ran the call without the plugin\n{out}\n{err}"
    );
    let sessions = scene.state.join("sessions");
    assert!(
        !sessions.exists() || std::fs::read_dir(&sessions).unwrap().next().is_none(),
        "the hook was never asked"
    );
}
