//! Presets from config and flag, their precedence, and decisions under each
//! (fixtures/presets.jsonl): what `recommended` and `autonomous` add (allowed, or
//! contained in the sandbox), and the risky commands (secrets, network, git.modify,
//! outside writes, the floor) that stay ask or deny under every preset.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod common;

use std::path::{Path, PathBuf};

use khaelor_perm::model::vocab::AnalysisContext;
use khaelor_perm::policy::config::{Policy, load_policy_preset};
use khaelor_perm::policy::decide::decide_with;
use khaelor_perm::policy::presets::Preset;
use khaelor_perm::policy::rules::Action;
use khaelor_perm::policy::trust::TrustStore;
use khaelor_perm::tools::map_call;
use serde::Deserialize;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Case {
    command: String,
    strict: Action,
    recommended: Action,
    autonomous: Action,
}

struct World {
    _tmp: tempfile::TempDir,
    root: PathBuf,
    home: PathBuf,
    state: PathBuf,
}

fn world() -> World {
    let tmp = tempfile::tempdir().unwrap();
    let base = std::fs::canonicalize(tmp.path()).unwrap();
    let root = base.join("proj");
    let home = base.join("home");
    let state = base.join("state");
    for d in [
        root.join("src"),
        root.join(".git/hooks"),
        home.join(".aws"),
        state.clone(),
    ] {
        std::fs::create_dir_all(d).unwrap();
    }
    for (f, text) in [
        ("Cargo.toml", "[package]\nname = \"x\"\n"),
        (
            "package.json",
            "{\"name\":\"x\",\"scripts\":{\"build\":\"true\"}}",
        ),
        ("go.mod", "module x\n"),
        ("Makefile", "test:\n\ttrue\n"),
        ("a.txt", "a\n"),
        (".env", "K=1\n"),
        ("src/main.rs", "fn main() {}\n"),
    ] {
        std::fs::write(root.join(f), text).unwrap();
    }
    std::fs::write(home.join(".aws/credentials"), "k").unwrap();
    World {
        _tmp: tmp,
        root,
        home,
        state,
    }
}

fn write(p: &Path, text: &str) {
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

fn preset_config(p: &str) -> String {
    format!("{{ \"permissions\": {{ \"preset\": \"{p}\" }} }}")
}

#[test]
fn decisions_under_each_preset() {
    let w = world();
    let ctx = AnalysisContext::new(&w.root, None, &w.home).unwrap();
    let table: Vec<(usize, Case)> = common::load_table("presets.jsonl");
    assert!(table.len() >= 40);
    let mut failures = Vec::new();
    for preset in Preset::ALL {
        let policy = common::load_trusted_policy_preset(&w.root, &w.home, preset);
        assert_eq!(policy.preset(), preset);
        for (line, case) in &table {
            let want = match preset {
                Preset::Strict => case.strict,
                Preset::Recommended => case.recommended,
                Preset::Autonomous => case.autonomous,
            };
            let call = map_call(
                "bash",
                &serde_json::json!({ "command": case.command }),
                &ctx,
            )
            .unwrap_or_else(|e| panic!("line {line}: {e}"));
            let d = decide_with(&policy, &[], &call, &ctx, true, common::sandbox());
            if d.decision != want {
                failures.push(format!(
                    "line {line} `{}` under {preset}: expected {want}, got {}: {:?}",
                    case.command,
                    d.decision,
                    d.requests
                        .iter()
                        .map(|r| format!(
                            "{} {} {}",
                            r.decision, r.request.capability, r.request.subject
                        ))
                        .collect::<Vec<_>>()
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

fn load(w: &World, managed: Option<&Path>, trust: bool, flag: Option<Preset>) -> Policy {
    let store = TrustStore::new(&w.state);
    let cfg = khaelor_perm::policy::config::project_config_path(&w.root);
    if trust && cfg.exists() {
        store.blocking_trust(&cfg).unwrap();
    }
    load_policy_preset(&w.root, &w.home, managed, Some(&store), flag)
}

#[test]
fn precedence_managed_caps_flag_then_trusted_project_then_user_untrusted_narrows() {
    let w = world();
    let user = w.home.join(".khaelor/config.json");
    let project = w.root.join(".khaelor/config.json");
    let managed = w.root.parent().unwrap().join("managed.json");
    // Nothing chosen: recommended.
    assert_eq!(load(&w, None, false, None).preset(), Preset::Recommended);
    assert_eq!(load(&w, None, false, None).preset_source(), "default");
    // The user file chooses; the flag overrides it.
    write(&user, &preset_config("autonomous"));
    assert_eq!(load(&w, None, false, None).preset(), Preset::Autonomous);
    assert_eq!(
        load(&w, None, false, Some(Preset::Strict)).preset(),
        Preset::Strict
    );
    // An untrusted project file cannot widen, but may narrow.
    write(&user, &preset_config("strict"));
    write(&project, &preset_config("autonomous"));
    assert_eq!(load(&w, None, false, None).preset(), Preset::Strict);
    write(&user, "{}");
    assert_eq!(load(&w, None, false, None).preset(), Preset::Recommended);
    write(&project, &preset_config("strict"));
    assert_eq!(load(&w, None, false, None).preset(), Preset::Strict);
    assert_eq!(
        load(&w, None, false, Some(Preset::Autonomous)).preset(),
        Preset::Strict,
        "an untrusted project file narrows even the flag"
    );
    // A trusted project file may widen.
    write(&project, &preset_config("autonomous"));
    assert_eq!(load(&w, None, true, None).preset(), Preset::Autonomous);
    // The managed file's choice is the default and a cap.
    write(&managed, &preset_config("recommended"));
    assert_eq!(
        load(&w, Some(&managed), true, Some(Preset::Autonomous)).preset(),
        Preset::Recommended
    );
    std::fs::remove_file(&project).unwrap();
    write(&managed, &preset_config("autonomous"));
    assert_eq!(
        load(&w, Some(&managed), false, None).preset(),
        Preset::Autonomous
    );
    write(&user, &preset_config("strict"));
    assert_eq!(
        load(&w, Some(&managed), false, None).preset(),
        Preset::Strict
    );
}

#[test]
fn a_bad_preset_is_a_config_error_and_caps_at_ask() {
    let w = world();
    write(&w.home.join(".khaelor/config.json"), &preset_config("yolo"));
    let p = load(&w, None, false, None);
    assert_eq!(p.errors().len(), 1, "{:?}", p.errors());
    assert!(p.errors()[0].message.contains("unknown preset `yolo`"));
    let ctx = AnalysisContext::new(&w.root, None, &w.home).unwrap();
    let call = map_call("bash", &serde_json::json!({ "command": "echo hi" }), &ctx).unwrap();
    assert_eq!(
        decide_with(&p, &[], &call, &ctx, true, common::sandbox()).decision,
        Action::Ask
    );
}

#[test]
fn the_cli_flag_and_rules_listing() {
    let w = world();
    let bin = env!("CARGO_BIN_EXE_khaelor-perm");
    let run = |args: &[&str]| {
        std::process::Command::new(bin)
            .args(args)
            .env("KHAELOR_PERM_STATE_DIR", &w.state)
            .output()
            .unwrap()
    };
    let root = w.root.to_str().unwrap();
    let home = w.home.to_str().unwrap();
    // `recommended` contains a project build (exit 5); bubblewrap runs here
    // (tests/setup/contain.sh).
    let o = run(&["check", "--root", root, "--home", home, "--", "cargo test"]);
    assert_eq!(o.status.code(), Some(5));
    let o = run(&[
        "check",
        "--root",
        root,
        "--home",
        home,
        "--preset",
        "autonomous",
        "--",
        "cargo test",
    ]);
    assert_eq!(o.status.code(), Some(0));
    let o = run(&[
        "check", "--root", root, "--home", home, "--preset", "strict", "--", "echo hi",
    ]);
    assert_eq!(o.status.code(), Some(3));
    let o = run(&[
        "rules",
        "--root",
        root,
        "--home",
        home,
        "--preset",
        "autonomous",
        "--json",
    ]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["preset"], "autonomous");
    assert_eq!(v["presetSource"], "--preset");
    let preset_rules: Vec<&serde_json::Value> = v["rules"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["source"] == "preset")
        .collect();
    assert_eq!(preset_rules.len(), 5);
    assert!(
        v["rules"]
            .as_array()
            .unwrap()
            .iter()
            .any(|r| r["name"] == "secret: AWS credentials and config")
    );
    let o = run(&["rules", "--root", root, "--home", home]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.starts_with("Preset: recommended (from default)"),
        "{text}"
    );
    assert!(text.contains("when the command is verified read-only"));
    let o = run(&[
        "check", "--root", root, "--home", home, "--preset", "lenient", "--", "ls",
    ]);
    assert_eq!(o.status.code(), Some(2));
}

/// `git add` of literal paths in the project's own repository is an in-project edit:
/// what it stores is judged as reads (a secret-shaped file asks, and so does a
/// directory or the whole tree holding one git would store), and what git writes in
/// `.git/` is its own bookkeeping. Committing stays `git.modify`, which asks.
#[test]
fn git_add_in_the_projects_own_repository_is_an_edit() {
    let w = world();
    let ok = std::process::Command::new("git")
        .args(["init", "-q"])
        .current_dir(&w.root)
        .env("HOME", &w.home)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .status()
        .unwrap()
        .success();
    assert!(ok);
    let ctx = AnalysisContext::new(&w.root, None, &w.home).unwrap();
    let decide = |preset: Preset, command: &str| {
        let policy = common::load_trusted_policy_preset(&w.root, &w.home, preset);
        let call = map_call("bash", &serde_json::json!({ "command": command }), &ctx).unwrap();
        decide_with(&policy, &[], &call, &ctx, true, common::sandbox()).decision
    };
    for (command, recommended) in [
        ("git add src/main.rs a.txt", Action::Allow),
        ("git add src", Action::Allow),
        ("cd src && git add main.rs", Action::Allow),
        ("git add -- a.txt", Action::Allow),
        // The tree holds `.env`.
        ("git add .", Action::Ask),
        ("git add -A", Action::Ask),
        ("git add .env", Action::Ask),
        ("git add -f .env", Action::Ask),
        ("git add '*.rs'", Action::Ask),
        ("git add -p", Action::Ask),
        ("git add a.txt && git commit -m x", Action::Ask),
        ("git add ../x", Action::Ask),
    ] {
        assert_eq!(
            decide(Preset::Recommended, command),
            recommended,
            "{command}"
        );
        assert_eq!(decide(Preset::Strict, command), Action::Ask, "{command}");
    }
    // git itself says what it stores from a directory: an ignored `.env` is not read,
    // unless `-f` adds ignored files too or the path names it.
    write(&w.root.join(".gitignore"), ".env\n");
    for (command, recommended) in [
        ("git add .", Action::Allow),
        ("git add -A", Action::Allow),
        ("git add -u", Action::Allow),
        ("git add -f .", Action::Ask),
        ("git add -f .env", Action::Ask),
    ] {
        assert_eq!(
            decide(Preset::Recommended, command),
            recommended,
            "{command}"
        );
    }
}
