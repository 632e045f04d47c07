//! Never-quiet writes, through the CLI and the real server: writes that make code run later or
//! change what git or the shell does always ask, never with an "always" pattern, even
//! under the user's allow-everything config, through the write tool and through bash;
//! their neighbours stay free. And, in a real git repository, the reason `.git/commondir`
//! is on the list.
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
const ALLOW_ALL: &str = r#"{"permissions": {"*": "allow"}}"#;

#[derive(Debug, Deserialize)]
struct Case {
    id: String,
    path: String,
    decision: String,
}

struct World {
    _tmp: tempfile::TempDir,
    root: PathBuf,
    home: PathBuf,
}

fn world() -> World {
    let tmp = tempfile::tempdir().unwrap();
    let base = std::fs::canonicalize(tmp.path()).unwrap();
    let (root, home) = (base.join("proj"), base.join("home"));
    std::fs::create_dir_all(root.join(".git/hooks")).unwrap();
    std::fs::create_dir_all(home.join(".khaelor")).unwrap();
    // The user's own config: no trust involved, and it allows everything.
    std::fs::write(home.join(".khaelor/config.json"), ALLOW_ALL).unwrap();
    World {
        _tmp: tmp,
        root,
        home,
    }
}

fn cli(w: &World, tool: &str, input: Value) -> Value {
    let o = Command::new(BIN)
        .args(["check", "--json", "--tool", tool, "--input"])
        .arg(input.to_string())
        .arg("--root")
        .arg(&w.root)
        .arg("--home")
        .arg(&w.home)
        .env("KHAELOR_PERM_STATE_DIR", w.root.with_file_name("state"))
        .output()
        .unwrap();
    serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|_| panic!("not JSON: {}", String::from_utf8_lossy(&o.stdout)))
}

fn inputs(c: &Case) -> [(&'static str, Value); 2] {
    [
        ("write", json!({"path": c.path, "content": "x"})),
        ("bash", json!({"command": format!("echo x > {}", c.path)})),
    ]
}

fn judge(failures: &mut Vec<String>, how: &str, c: &Case, tool: &str, v: &Value) {
    if v["decision"] != c.decision.as_str() {
        failures.push(format!(
            "{how} {} ({tool} {}): expected {}, got {}",
            c.id, c.path, c.decision, v["decision"]
        ));
    }
    if c.decision == "ask" && v["alwaysPatterns"] != json!([]) {
        failures.push(format!(
            "{how} {}: offers always {}",
            c.id, v["alwaysPatterns"]
        ));
    }
}

#[test]
fn protected_writes_ask_through_the_cli() {
    let w = world();
    let table: Vec<(usize, Case)> = common::load_table("trust_protected.jsonl");
    assert!(table.len() >= 30);
    let mut failures = Vec::new();
    for (_, c) in &table {
        for (tool, input) in inputs(c) {
            let v = cli(&w, tool, input);
            judge(&mut failures, "cli", c, tool, &v);
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn protected_writes_ask_over_http() {
    let d = http_support::Dirs::new();
    std::fs::create_dir_all(d.home.path().join(".khaelor")).unwrap();
    std::fs::write(d.home.path().join(".khaelor/config.json"), ALLOW_ALL).unwrap();
    let s = d.start(&[]);
    let table: Vec<(usize, Case)> = common::load_table("trust_protected.jsonl");
    let mut failures = Vec::new();
    for (_, c) in &table {
        for (tool, input) in inputs(c) {
            let r = s.post(
                "/v1/evaluate",
                &json!({"tool": tool, "input": input, "projectRoot": d.root_str()}),
            );
            assert_eq!(r.status, 200, "{}", r.text);
            judge(&mut failures, "http", c, tool, &r.body);
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn rules_shows_the_table_with_reasons() {
    let w = world();
    let o = Command::new(BIN)
        .args(["rules", "--root"])
        .arg(&w.root)
        .arg("--home")
        .arg(&w.home)
        .env("KHAELOR_PERM_STATE_DIR", w.root.with_file_name("state"))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&o.stdout);
    for shown in [
        ".git/commondir",
        ".gitattributes",
        ".husky/",
        ".envrc",
        ".khaelor/",
    ] {
        assert!(text.contains(shown), "{shown} missing from:\n{text}");
    }
    assert!(text.contains("core.fsmonitor"), "{text}");
}

fn git(dir: &std::path::Path, args: &[&str]) -> std::process::Output {
    Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("HOME", dir)
        .output()
        .unwrap_or_else(|e| {
            panic!("cannot run git ({e}); run `bash tests/setup/trust.sh` to install it")
        })
}

/// The reason `.git/commondir` is on the list, shown in a real repository: pointing it
/// at a copy of the repository directory whose config names a `core.fsmonitor` makes a
/// plain `git status` run that program. Then the write that does it asks, by both tools.
#[test]
fn commondir_runs_a_foreign_fsmonitor_in_a_real_repo_and_its_write_asks() {
    let w = world();
    let repo = &w.root;
    assert!(git(repo, &["init", "-q"]).status.success());
    std::fs::write(repo.join("a.txt"), "a").unwrap();
    assert!(git(repo, &["add", "a.txt"]).status.success());
    assert!(
        git(
            repo,
            &[
                "-c",
                "user.email=a@b",
                "-c",
                "user.name=a",
                "commit",
                "-qm",
                "a"
            ]
        )
        .status
        .success()
    );
    let outside = w.root.with_file_name("elsewhere");
    let common_dir = outside.join("common");
    std::fs::create_dir_all(&outside).unwrap();
    let copy = Command::new("cp")
        .arg("-r")
        .arg(repo.join(".git"))
        .arg(&common_dir)
        .status()
        .unwrap();
    assert!(copy.success());
    let marker = outside.join("fsmonitor-ran");
    let script = outside.join("fsmonitor.sh");
    std::fs::write(
        &script,
        format!("#!/bin/sh\ntouch '{}'\n", marker.display()),
    )
    .unwrap();
    assert!(
        Command::new("chmod")
            .arg("+x")
            .arg(&script)
            .status()
            .unwrap()
            .success()
    );
    let cfg = common_dir.join("config");
    assert!(
        git(
            repo,
            &[
                "config",
                "-f",
                cfg.to_str().unwrap(),
                "core.fsmonitor",
                script.to_str().unwrap()
            ]
        )
        .status
        .success()
    );

    // What the agent would write, judged first: it asks, with no "always".
    let content = format!("{}\n", common_dir.display());
    for (tool, input) in [
        (
            "write",
            json!({"path": ".git/commondir", "content": content}),
        ),
        (
            "bash",
            json!({"command": format!("echo {} > .git/commondir", common_dir.display())}),
        ),
    ] {
        let v = cli(&w, tool, input);
        assert_eq!(v["decision"], "ask", "{tool}: {v}");
        assert_eq!(v["alwaysPatterns"], json!([]), "{tool}: {v}");
    }

    // Why: once written, `git status` runs the foreign program.
    assert!(!marker.exists());
    std::fs::write(repo.join(".git/commondir"), content).unwrap();
    let _ = git(repo, &["status"]);
    assert!(
        marker.exists(),
        "git status did not run core.fsmonitor from the common dir"
    );
}
