//! Containers that get the host, through the CLI and the real server: a container that gets the host is
//! an outside write and an execution on the host, with a risk note, and never under a
//! `docker run *` pattern (not as a user's rule, not as an offered "always"); `kubectl`
//! and `helm` against a cluster are network. Ordinary containers stay allowed.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod common;
mod http_support;

use std::path::PathBuf;
use std::process::Command;

use serde::Deserialize;
use serde_json::{Value, json};

const BIN: &str = env!("CARGO_BIN_EXE_khaelor-perm");
const USER: &str = r#"{"permissions": {"process.execute": {
    "docker run *": "allow", "docker exec *": "allow", "podman run *": "allow",
    "sudo *": "allow", "kubectl *": "allow", "helm *": "allow"}}}"#;
const HOST_NOTE: &str = "gives the container the host";

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Case {
    id: String,
    command: String,
    decision: String,
    host_note: bool,
}

fn judge(failures: &mut Vec<String>, how: &str, c: &Case, v: &Value) {
    let notes = v["riskNotes"].to_string();
    if v["decision"] != c.decision.as_str() || notes.contains(HOST_NOTE) != c.host_note {
        failures.push(format!(
            "{how} {} `{}`: expected {} (host note {}), got {} {notes}",
            c.id, c.command, c.decision, c.host_note, v["decision"]
        ));
    }
    if c.host_note && v["alwaysPatterns"] != json!([]) {
        failures.push(format!("{how} {}: offers {}", c.id, v["alwaysPatterns"]));
    }
}

fn home_with_user_config() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let base = std::fs::canonicalize(tmp.path()).unwrap();
    let (root, home) = (base.join("proj"), base.join("home"));
    std::fs::create_dir_all(&root).unwrap();
    std::fs::create_dir_all(home.join(".khaelor")).unwrap();
    std::fs::write(home.join(".khaelor/config.json"), USER).unwrap();
    (tmp, root, home)
}

#[test]
fn containers_through_the_cli() {
    let (_tmp, root, home) = home_with_user_config();
    let table: Vec<(usize, Case)> = common::load_table("trust_containers.jsonl");
    assert!(table.len() >= 20);
    let mut failures = Vec::new();
    for (_, c) in &table {
        let o = Command::new(BIN)
            .args(["check", "--json", "--root"])
            .arg(&root)
            .arg("--home")
            .arg(&home)
            .args(["--", &c.command])
            .env("KHAELOR_PERM_STATE_DIR", home.join("state"))
            .output()
            .unwrap();
        let v: Value = serde_json::from_slice(&o.stdout).unwrap();
        judge(&mut failures, "cli", c, &v);
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn containers_over_http() {
    let (_tmp, root, home) = home_with_user_config();
    let s = http_support::Server::start(&home.join("state"), &home, &[]);
    let table: Vec<(usize, Case)> = common::load_table("trust_containers.jsonl");
    let mut failures = Vec::new();
    for (_, c) in &table {
        let r = s.post(
            "/v1/evaluate",
            &json!({"tool": "bash", "input": {"command": c.command}, "projectRoot": root.display().to_string()}),
        );
        assert_eq!(r.status, 200, "{}", r.text);
        judge(&mut failures, "http", c, &r.body);
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Under the defaults the panel offers `docker run *` for an ordinary container, and
/// nothing at all for one that gets the host.
#[test]
fn no_always_pattern_for_a_host_container() {
    let d = http_support::Dirs::new();
    let s = d.start(&[]);
    let offered = |cmd: &str| {
        s.post("/v1/evaluate", &http_support::bash(&d, cmd)).body["alwaysPatterns"].clone()
    };
    assert_eq!(
        offered("docker run --rm alpine echo hi"),
        json!(["docker run *"])
    );
    assert_eq!(offered("docker run --privileged alpine"), json!([]));
    assert_eq!(offered("docker run -v /:/h alpine"), json!([]));
}
