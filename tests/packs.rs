//! Domain packs (src/programs/packs/*.json) through the real analysis and decision:
//! each golden row of fixtures/packs.jsonl names the pack and severity that name the
//! command (or none), its decision under `recommended` and `autonomous`, and the
//! "always" patterns offered. A pack only adds scrutiny: a row no pack names is
//! decided exactly as with every pack off. Then the config key `permissions.packs`:
//! `deny` anywhere, `off` only from the user's own file, unknown names are errors; and
//! how a person's rules meet the severities.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod common;

use std::path::Path;

use khaelor_perm::model::vocab::{AnalysisContext, Reason, Severity};
use khaelor_perm::policy::config::{Policy, load_policy_preset};
use khaelor_perm::policy::decide::{CallDecision, decide_with};
use khaelor_perm::policy::presets::Preset;
use khaelor_perm::policy::rules::Action;
use khaelor_perm::policy::trust::TrustStore;
use khaelor_perm::tools::map_call;
use serde::Deserialize;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Case {
    command: String,
    pack: Option<String>,
    #[serde(default)]
    severity: Option<Severity>,
    recommended: Action,
    autonomous: Action,
    #[serde(default)]
    always: Option<Vec<String>>,
}

struct World {
    _tmp: tempfile::TempDir,
    root: std::path::PathBuf,
    home: std::path::PathBuf,
    state: std::path::PathBuf,
}

fn world() -> World {
    let tmp = tempfile::tempdir().unwrap();
    let base = std::fs::canonicalize(tmp.path()).unwrap();
    let (root, home, state) = (base.join("proj"), base.join("home"), base.join("state"));
    for d in [root.clone(), home.clone(), state.clone()] {
        std::fs::create_dir_all(d).unwrap();
    }
    std::fs::write(root.join("package.json"), "{\"name\":\"x\"}").unwrap();
    let git = std::process::Command::new("git")
        .args(["init", "-q"])
        .current_dir(&root)
        .status()
        .unwrap();
    assert!(git.success());
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

fn policy(w: &World, preset: Preset, trust_project: bool) -> Policy {
    let store = TrustStore::new(&w.state);
    let cfg = khaelor_perm::policy::config::project_config_path(&w.root);
    if trust_project && cfg.exists() {
        store.blocking_trust(&cfg).unwrap();
    }
    load_policy_preset(&w.root, &w.home, None, Some(&store), Some(preset))
}

fn decide(w: &World, p: &Policy, command: &str) -> CallDecision {
    let ctx = AnalysisContext::new(&w.root, None, &w.home).unwrap();
    let call = map_call("bash", &serde_json::json!({ "command": command }), &ctx).unwrap();
    decide_with(p, &[], &call, &ctx, true, common::sandbox())
}

/// The pack and severity of the decision's destructive reason, if any.
fn destructive(d: &CallDecision) -> Option<(String, Severity)> {
    d.requests
        .iter()
        .flat_map(|r| r.reasons.iter())
        .find_map(|r| match r {
            Reason::Destructive { pack, severity, .. } => Some((pack.clone(), *severity)),
            _ => None,
        })
}

const ALL_OFF: &str = r#"{ "permissions": { "packs": { "databases": "off", "kubernetes": "off",
    "containers": "off", "cloud": "off", "infrastructure": "off", "git": "off" } } }"#;

#[test]
fn golden_rows() {
    let w = world();
    let table: Vec<(usize, Case)> = common::load_table("packs.jsonl");
    assert!(table.len() >= 50);
    let recommended = policy(&w, Preset::Recommended, false);
    let autonomous = policy(&w, Preset::Autonomous, false);
    let off = world();
    write(
        &khaelor_perm::policy::config::user_config_path(&off.home),
        ALL_OFF,
    );
    let off_policies = [
        policy(&off, Preset::Recommended, false),
        policy(&off, Preset::Autonomous, false),
    ];
    let mut failures = Vec::new();
    for (line, case) in &table {
        let d = decide(&w, &recommended, &case.command);
        let got = destructive(&d);
        let want = case.pack.clone().zip(case.severity);
        if got != want {
            failures.push(format!(
                "line {line} `{}`: pack {want:?}, got {got:?}",
                case.command
            ));
        }
        if d.decision != case.recommended {
            failures.push(format!(
                "line {line} `{}` under recommended: {}, expected {}",
                case.command, d.decision, case.recommended
            ));
        }
        if let Some(always) = &case.always
            && &d.always_patterns != always
        {
            failures.push(format!(
                "line {line} `{}`: always {:?}, expected {always:?}",
                case.command, d.always_patterns
            ));
        }
        let a = decide(&w, &autonomous, &case.command);
        if a.decision != case.autonomous {
            failures.push(format!(
                "line {line} `{}` under autonomous: {}, expected {}",
                case.command, a.decision, case.autonomous
            ));
        }
        if case.pack.is_some() {
            // Never contained or allowed without a person, under any preset.
            assert!(
                [Action::Ask, Action::Deny].contains(&a.decision),
                "line {line}"
            );
        } else {
            // A command no pack names is decided as with every pack off.
            for (p, on) in off_policies.iter().zip([&d, &a]) {
                let without = decide(&off, p, &case.command);
                if (without.decision, &without.always_patterns)
                    != (on.decision, &on.always_patterns)
                {
                    failures.push(format!(
                        "line {line} `{}`: packs changed a command they do not name",
                        case.command
                    ));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn deny_anywhere_off_only_from_the_user() {
    let w = world();
    let project = khaelor_perm::policy::config::project_config_path(&w.root);
    let user = khaelor_perm::policy::config::user_config_path(&w.home);

    // A repository cannot turn a pack off, trusted or not.
    write(
        &project,
        r#"{ "permissions": { "packs": { "git": "off" } } }"#,
    );
    for trusted in [false, true] {
        let p = policy(&w, Preset::Recommended, trusted);
        let d = decide(&w, &p, "git reset --hard");
        assert_eq!(
            destructive(&d),
            Some(("git".into(), Severity::High)),
            "trusted: {trusted}"
        );
    }
    // It can make one deny.
    write(
        &project,
        r#"{ "permissions": { "packs": { "git": "deny" } } }"#,
    );
    let p = policy(&w, Preset::Recommended, false);
    assert_eq!(decide(&w, &p, "git reset --hard").decision, Action::Deny);
    assert_eq!(
        decide(&w, &p, "git reset --soft HEAD~1").decision,
        Action::Ask
    );
    // The user may turn one off, but a project's deny still wins.
    write(&user, r#"{ "permissions": { "packs": { "git": "off" } } }"#);
    let p = policy(&w, Preset::Recommended, false);
    assert_eq!(decide(&w, &p, "git reset --hard").decision, Action::Deny);
    std::fs::remove_file(&project).unwrap();
    let p = policy(&w, Preset::Recommended, false);
    let d = decide(&w, &p, "git reset --hard");
    assert_eq!(destructive(&d), None);
    assert_eq!(d.decision, Action::Ask);
    // Kubernetes is still on.
    assert!(destructive(&decide(&w, &p, "kubectl delete ns prod")).is_some());

    // Unknown packs and modes are config errors at their position, capping at ask.
    write(
        &user,
        "{ \"permissions\": {\n  \"packs\": { \"kubernets\": \"deny\", \"git\": \"maybe\" } } }",
    );
    let p = policy(&w, Preset::Recommended, false);
    let errors: Vec<String> = p.errors().iter().map(|e| e.to_string()).collect();
    assert_eq!(errors.len(), 2, "{errors:?}");
    assert!(errors[0].contains("unknown pack `kubernets`"), "{errors:?}");
    assert!(errors[0].contains(":2:"), "{errors:?}");
    assert!(
        errors[1].contains("must be \"off\", \"on\" or \"deny\""),
        "{errors:?}"
    );
}

#[test]
fn rules_meet_severities() {
    let w = world();
    let user = khaelor_perm::policy::config::user_config_path(&w.home);
    // A broad allow a person wrote does not reach a high or critical operation; an
    // allow naming the exact command does, for a high one only.
    write(
        &user,
        r#"{ "permissions": {
            "process.execute": {
                "git *": "allow",
                "git reset --hard": "allow",
                "kubectl delete ns prod": "allow"
            },
            "git.modify": { "git *": "allow" }
        } }"#,
    );
    let p = policy(&w, Preset::Recommended, false);
    assert_eq!(decide(&w, &p, "git reset --hard").decision, Action::Allow);
    assert_eq!(decide(&w, &p, "git clean -fdx").decision, Action::Ask);
    assert_eq!(decide(&w, &p, "git stash drop").decision, Action::Allow);
    assert_eq!(
        decide(&w, &p, "git stash drop stash@{1}").decision,
        Action::Allow
    );
    let d = decide(&w, &p, "git status");
    assert_eq!(d.decision, Action::Allow);
    assert_eq!(
        decide(&w, &p, "kubectl delete ns prod").requests[0].decision,
        Action::Ask
    );
}
