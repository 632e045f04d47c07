//! What a "verified" program really does, end to end, both directions
//! (fixtures/verified.jsonl): each row builds a small world of real files — a project
//! (optionally a real git repository, with commits), a HOME with fake credential
//! stores, symlinks between them — then decides one tool call in it under the presets.
//! The attack rows are commands a verified program turns into code execution, a write
//! anywhere or a secret read; the look-alike rows are the harmless commands next to
//! them that must keep their answer.
//!
//! Row fields: `class` (the attack class, for the report), `command` (a bash call) or
//! `tool` + `input` (any other tool), `world` (below), the expected `decision` under
//! `recommended` (the default preset), and optionally under `strict`, `autonomous` and
//! `allowAll` (a trusted project config that allows everything: only the floor and the
//! caps stop a call there), `hardline` (the floor denies it), `noAlways` (no always
//! pattern may be offered).
//!
//! `world`: `git` (run `git init` in the project), `files` (path -> content; a path
//! starting `~/` is under HOME, any other under the project; parents are made),
//! `dirs` (made empty), `links` (path -> symlink target, written as given except a
//! leading `~/`, which becomes HOME), `commit` (after the files: `git add -A` and a
//! commit, so tracked and historical paths exist), `path` (the `PATH` the command's
//! shell searches, an entry starting `~/` under HOME, any other relative one under the
//! project unless it is `.`, empty or starts `./`; without it, names are the system's
//! programs).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use khaelor_perm::model::vocab::AnalysisContext;
use khaelor_perm::policy::config::Policy;
use khaelor_perm::policy::decide::decide_with;
use khaelor_perm::policy::presets::Preset;
use khaelor_perm::policy::rules::Action;
use khaelor_perm::tools::map_call;
use serde::Deserialize;

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct WorldSpec {
    #[serde(default)]
    git: bool,
    #[serde(default)]
    files: BTreeMap<String, String>,
    #[serde(default)]
    dirs: Vec<String>,
    #[serde(default)]
    links: BTreeMap<String, String>,
    #[serde(default)]
    commit: bool,
    /// The `PATH` the command's shell searches: `/…` as is, `.`, `./…` and the empty
    /// entry relative as written, anything else a directory of the project.
    path: Option<Vec<String>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Case {
    class: u8,
    #[serde(default)]
    command: Option<String>,
    #[serde(default)]
    tool: Option<String>,
    #[serde(default)]
    input: Option<serde_json::Value>,
    #[serde(default)]
    world: WorldSpec,
    decision: Action,
    #[serde(default)]
    strict: Option<Action>,
    #[serde(default)]
    autonomous: Option<Action>,
    #[serde(default)]
    allow_all: Option<Action>,
    #[serde(default)]
    hardline: bool,
    #[serde(default)]
    no_always: bool,
}

struct Built {
    _tmp: tempfile::TempDir,
    root: PathBuf,
    home: PathBuf,
}

fn git(root: &Path, home: &Path, args: &[&str]) {
    let out = Command::new("git")
        .args(args)
        .current_dir(root)
        .env("HOME", home)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@example.invalid")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@example.invalid")
        .output()
        .expect("git runs");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn place(spec_path: &str, root: &Path, home: &Path) -> PathBuf {
    match spec_path.strip_prefix("~/") {
        Some(rest) => home.join(rest),
        None => root.join(spec_path),
    }
}

fn build(spec: &WorldSpec, allow_all: bool) -> Built {
    let tmp = tempfile::tempdir().unwrap();
    let base = std::fs::canonicalize(tmp.path()).unwrap();
    let root = base.join("proj");
    let home = base.join("home");
    std::fs::create_dir_all(&root).unwrap();
    std::fs::create_dir_all(&home).unwrap();
    if spec.git {
        git(&root, &home, &["init", "-q", "-b", "main"]);
    }
    for d in &spec.dirs {
        std::fs::create_dir_all(place(d, &root, &home)).unwrap();
    }
    for (p, content) in &spec.files {
        let path = place(p, &root, &home);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, content).unwrap();
    }
    for (p, target) in &spec.links {
        let path = place(p, &root, &home);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        let target = match target.strip_prefix("~/") {
            Some(rest) => home.join(rest),
            None => PathBuf::from(target),
        };
        std::os::unix::fs::symlink(target, &path).unwrap();
    }
    if spec.commit {
        assert!(spec.git, "`commit` needs `git`");
        git(&root, &home, &["add", "-A"]);
        git(&root, &home, &["commit", "-q", "-m", "world"]);
    }
    if allow_all {
        std::fs::create_dir_all(root.join(".khaelor")).unwrap();
        std::fs::copy(
            common::fixtures_dir().join("configs/allow_all.json"),
            root.join(".khaelor/config.json"),
        )
        .unwrap();
    }
    Built {
        _tmp: tmp,
        root,
        home,
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Setting {
    Preset(Preset),
    AllowAll,
}

fn expected(case: &Case, setting: Setting) -> Option<Action> {
    match setting {
        Setting::Preset(Preset::Recommended) => Some(case.decision),
        Setting::Preset(Preset::Strict) => case.strict,
        Setting::Preset(Preset::Autonomous) => case.autonomous,
        Setting::AllowAll => case.allow_all,
    }
}

/// The world's `PATH`, as the environment would hold it.
fn search_path(spec: &WorldSpec, root: &Path, home: &Path) -> Option<std::ffi::OsString> {
    let entries = spec.path.as_ref()?.iter().map(|e| {
        if let Some(rest) = e.strip_prefix("~/") {
            home.join(rest)
        } else if e.starts_with('/') || e.is_empty() || e == "." || e.starts_with("./") {
            PathBuf::from(e)
        } else {
            root.join(e)
        }
    });
    Some(std::env::join_paths(entries).unwrap())
}

fn check(setting: Setting) {
    let table: Vec<(usize, Case)> = common::load_table("verified.jsonl");
    assert!(!table.is_empty());
    let mut failures = Vec::new();
    let mut checked = 0;
    for (line, case) in &table {
        let Some(want) = expected(case, setting) else {
            continue;
        };
        checked += 1;
        let w = build(&case.world, setting == Setting::AllowAll);
        let policy: Policy = match setting {
            Setting::Preset(p) => common::load_trusted_policy_preset(&w.root, &w.home, p),
            Setting::AllowAll => common::load_trusted_policy(&w.root, &w.home, None),
        };
        assert!(policy.errors().is_empty(), "{:?}", policy.errors());
        let ctx = AnalysisContext::new(&w.root, None, &w.home)
            .unwrap()
            .with_search_path(search_path(&case.world, &w.root, &w.home).as_deref());
        let (tool, input) = match (&case.command, &case.tool, &case.input) {
            (Some(c), None, None) => ("bash".to_string(), serde_json::json!({ "command": c })),
            (None, Some(t), Some(i)) => (t.clone(), i.clone()),
            _ => panic!("line {line}: give `command`, or `tool` and `input`"),
        };
        let tag = format!("line {line} (class {}) {tool} {input}", case.class);
        let call = match map_call(&tool, &input, &ctx) {
            Ok(c) => c,
            Err(e) => {
                failures.push(format!("{tag}: cannot map: {e}"));
                continue;
            }
        };
        let d = decide_with(&policy, &[], &call, &ctx, true, common::sandbox());
        if d.decision != want {
            failures.push(format!(
                "{tag}: expected {want}, got {}\n      {}",
                d.decision,
                common::requests_shown(&d)
            ));
        }
        if case.hardline != d.hardline.is_some() {
            failures.push(format!("{tag}: hardline {:?}", d.hardline));
        }
        if case.no_always && !d.always_patterns.is_empty() {
            failures.push(format!(
                "{tag}: offers an always pattern: {:?}",
                d.always_patterns
            ));
        }
    }
    assert!(checked > 0, "no row gives an answer under {setting:?}");
    assert!(
        failures.is_empty(),
        "{} of {checked} rows failed under {setting:?}:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn recommended() {
    check(Setting::Preset(Preset::Recommended));
}

#[test]
fn strict() {
    check(Setting::Preset(Preset::Strict));
}

#[test]
fn autonomous() {
    check(Setting::Preset(Preset::Autonomous));
}

#[test]
fn allow_all() {
    check(Setting::AllowAll);
}
