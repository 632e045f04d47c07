//! End to end with a real host whose own prompt cannot be used: `codex exec` (pinned by
//! `tests/setup/hosts.sh`) against the scripted model server, its pre-tool hook wired
//! by `install codex --url … --wait 20` to the real service. A thread playing the
//! person finds the call in `GET /v1/pending` and answers it with the panel token:
//! approved, the command runs (its marker appears, and not before the answer); denied
//! with a reason, the command does not run and the model's next request carries the
//! reason.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod hosts_support;
mod http_support;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use hosts_support::{Api, ModelServer, host_bin};
use http_support::{BIN, Client, Server};
use serde_json::{Value, json};

const HOST_TIMEOUT: Duration = Duration::from_secs(120);

struct Scene {
    _tmp: tempfile::TempDir,
    home: PathBuf,
    proj: PathBuf,
    state: PathBuf,
}

impl Scene {
    fn new() -> Scene {
        let tmp = tempfile::tempdir().unwrap();
        let base = tmp.path().canonicalize().unwrap();
        let (home, proj, state) = (base.join("home"), base.join("proj"), base.join("state"));
        for d in [&home, &proj, &state, &home.join(".codex")] {
            std::fs::create_dir_all(d).unwrap();
        }
        Scene {
            _tmp: tmp,
            home,
            proj,
            state,
        }
    }
}

/// The person: waits for the scene's call to be pending, checks its command has not
/// run yet, then answers it (`grant` or `deny` with `body`).
fn person(
    client: Client,
    marker: PathBuf,
    route: &'static str,
    body: Value,
) -> std::thread::JoinHandle<String> {
    std::thread::spawn(move || {
        let deadline = Instant::now() + Duration::from_secs(90);
        let (session, call) = loop {
            let r = client.get("/v1/pending");
            assert_eq!(r.status, 200, "{}", r.text);
            if let Some(c) = r.body["calls"].as_array().unwrap().first() {
                break (
                    c["sessionId"].as_str().unwrap().to_string(),
                    c["callId"].as_str().unwrap().to_string(),
                );
            }
            assert!(Instant::now() < deadline, "no call waited for the person");
            std::thread::sleep(Duration::from_millis(50));
        };
        assert!(
            !marker.exists(),
            "the command ran before the person answered"
        );
        let r = client.post(
            &format!("/v1/sessions/{session}/calls/{call}/{route}"),
            &body,
        );
        assert_eq!(r.status, 200, "{}", r.text);
        r.text
    })
}

/// One `codex exec` run of a one-call script through the waiting hook; the person
/// answers with `route` and `body`. Returns the tool results the model received.
fn run(route: &'static str, body: Value) -> (Vec<String>, PathBuf, Scene) {
    let codex = host_bin("codex", "codex");
    let scene = Scene::new();
    let marker = scene.proj.join("asked_marker");
    // Asks under the defaults: `-t` is not among the options the edit model reads.
    let command = format!("touch -t 202001010000 {}", marker.display());
    let model = ModelServer::start(
        Api::Responses,
        vec![("exec_command".to_string(), json!({ "cmd": command }))],
    );
    let service = Server::start(&scene.state, &scene.home, &[]);
    let config = scene.home.join(".codex/config.toml");
    std::fs::write(
        &config,
        format!(
            "model = \"e2e-model\"\nmodel_provider = \"e2e\"\n\n[model_providers.e2e]\nname = \"e2e\"\nbase_url = \"{}/v1\"\nwire_api = \"responses\"\nenv_key = \"KHAELOR_E2E_KEY\"\n",
            model.base
        ),
    )
    .unwrap();
    let out = Command::new(BIN)
        .args([
            "install",
            "codex",
            "--user",
            "--url",
            &service.base,
            "--wait",
            "20",
        ])
        .env("HOME", &scene.home)
        .env("KHAELOR_PERM_STATE_DIR", &scene.state)
        .env_remove("CODEX_HOME")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The pre-tool hook's timeout is above the wait: Codex will not kill it first.
    let wired = std::fs::read_to_string(&config).unwrap();
    assert!(wired.contains("timeout = 30"), "{wired}");
    assert!(wired.contains("--wait 20 --host-timeout 30"), "{wired}");

    let answer = person(service.client(), marker.clone(), route, body);
    let mut cmd = Command::new(&codex);
    cmd.current_dir(&scene.proj)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", &scene.home)
        .env("CODEX_HOME", scene.home.join(".codex"))
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
        .arg("--dangerously-bypass-hook-trust")
        .args(["--json", "run the e2e script"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let child = cmd.spawn().unwrap();
    let started = Instant::now();
    let output = wait_with_timeout(child);
    assert!(started.elapsed() < HOST_TIMEOUT);
    answer.join().unwrap();
    let results = model.tool_results();
    let ctx = format!(
        "stdout:\n{}\nstderr:\n{}\nresults: {results:#?}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(results.len(), 1, "{ctx}");
    (results, marker, scene)
}

fn wait_with_timeout(mut child: std::process::Child) -> std::process::Output {
    let start = Instant::now();
    loop {
        if child.try_wait().unwrap().is_some() {
            return child.wait_with_output().unwrap();
        }
        if start.elapsed() > HOST_TIMEOUT {
            let _ = child.kill();
            let out = child.wait_with_output().unwrap();
            panic!(
                "codex timed out\nstdout:\n{}\nstderr:\n{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn log_has(state: &Path, kind: &str, by: &str) -> bool {
    std::fs::read_dir(state.join("sessions"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .flat_map(|p| {
            std::fs::read_to_string(p)
                .unwrap()
                .lines()
                .map(|l| serde_json::from_str::<Value>(l).unwrap())
                .collect::<Vec<_>>()
        })
        .any(|e| e["type"] == kind && e["by"] == by)
}

#[test]
fn codex_waits_for_the_person_who_approves() {
    let (results, marker, scene) = run("grant", json!({"scope": "once"}));
    assert!(marker.exists(), "the approved command ran: {results:?}");
    assert!(log_has(&scene.state, "ToolApproved", "user"));
}

#[test]
fn codex_waits_for_the_person_who_denies_with_a_reason() {
    let (results, marker, scene) = run("deny", json!({"feedback": "use the staging db"}));
    assert!(!marker.exists(), "the denied command must not run");
    assert!(
        results[0].contains("use the staging db"),
        "the model reads the person's reason: {results:?}"
    );
    assert!(log_has(&scene.state, "PermissionDenied", "user"));
}
