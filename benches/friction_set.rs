//! The friction benchmark's evaluation, shared by `benches/friction.rs`
//! (prints the table for BENCHMARKS.md) and `tests/friction.rs` (holds the targets):
//! every command of `fixtures/friction.jsonl` decided in a temp project under the seed's
//! defaults, each preset, and a model of Codex's known-safe-command list.
#![allow(
    dead_code,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing
)]

use std::path::{Path, PathBuf};

use khaelor_perm::model::vocab::{AnalysisContext, CommandClass};
use khaelor_perm::policy::config::Policy;
use khaelor_perm::policy::decide::decide;
use khaelor_perm::policy::presets::Preset;
use khaelor_perm::policy::rules::{Action, DEFAULT_RULES, PermissionRule, RuleSource};
use khaelor_perm::tools::map_call;
use serde::Deserialize;

#[derive(Debug, Clone, Deserialize)]
pub struct Row {
    pub command: String,
    pub label: String,
    pub kind: String,
    pub source: String,
}

pub fn rows() -> Vec<Row> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/friction.jsonl");
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .filter(|l| l.trim_start().starts_with('{'))
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// A project with the files the set names (and secrets), a home with credentials.
pub struct World {
    _tmp: tempfile::TempDir,
    pub root: PathBuf,
    pub home: PathBuf,
}

pub fn world() -> World {
    let tmp = tempfile::tempdir().unwrap();
    let base = std::fs::canonicalize(tmp.path()).unwrap();
    let root = base.join("proj");
    let home = base.join("home");
    for f in [
        "README.md",
        "Cargo.toml",
        "src/main.rs",
        "src/lib.rs",
        "src/old.rs",
        "package.json",
        "src/app.ts",
        "tests/test_app.py",
        "Makefile",
        "docs/guide.md",
        "src/util/mod.rs",
        "go.mod",
        "tox.ini",
        ".env",
        ".env.local",
        ".env.production",
        "config/secrets.pem",
        "server.key",
        "notes.txt",
        "x.yaml",
    ] {
        let p = root.join(f);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, "x\n").unwrap();
    }
    std::fs::create_dir_all(root.join("build/out")).unwrap();
    for f in [
        ".aws/credentials",
        ".ssh/id_rsa",
        ".ssh/id_ed25519",
        ".netrc",
        ".git-credentials",
        ".npmrc",
        ".pypirc",
        ".docker/config.json",
        ".kube/config",
        ".config/gh/hosts.yml",
        ".cargo/credentials.toml",
        ".gnupg/secring.gpg",
        ".config/gcloud/credentials.db",
        ".azure/accessTokens.json",
        ".bash_history",
        ".zsh_history",
        ".password-store/x.gpg",
        ".bashrc",
    ] {
        let p = home.join(f);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, "secret\n").unwrap();
    }
    World {
        _tmp: tmp,
        root,
        home,
    }
}

/// The policies compared, by name.
pub fn policies(w: &World) -> Vec<(&'static str, Policy)> {
    let seed: Vec<PermissionRule> = DEFAULT_RULES
        .iter()
        .map(|(c, p, a)| PermissionRule::new(*c, *p, *a, RuleSource::Default))
        .collect();
    let mut out = vec![("seed defaults", Policy::from_rules(seed))];
    for p in Preset::ALL {
        let policy =
            khaelor_perm::policy::config::load_policy_preset(&w.root, &w.home, None, None, Some(p));
        out.push((p.as_str(), policy));
    }
    out
}

/// Whether the call runs without asking.
pub fn allowed(policy: &Policy, command: &str, ctx: &AnalysisContext) -> bool {
    match map_call("bash", &serde_json::json!({ "command": command }), ctx) {
        Ok(call) => decide(policy, &[], &call, ctx, true).decision == Action::Allow,
        Err(_) => false,
    }
}

/// A model of Codex's known-safe-command list (codex-rs `is_known_safe_command`, read
/// to learn and written anew): plain commands only (no substitution, redirection or
/// assignment), joined by `&&`, `||`, `;`, `|`, each one on the list.
pub fn codex_safe(command: &str, ctx: &AnalysisContext) -> bool {
    if command.contains(['>', '<', '$', '`', '(', ')', '&']) && !plain_and_or(command) {
        return false;
    }
    let a = khaelor_perm::analysis::analyze(command, ctx);
    if a.class == CommandClass::Obfuscated || a.parts.is_empty() {
        return false;
    }
    a.parts
        .iter()
        .all(|p| p.text == p.words.join(" ") && codex_exec_safe(&p.words))
}

/// `&&` is an operator Codex accepts; any other `&`, `>`, `<`, `$`, `` ` ``, `(` is not.
fn plain_and_or(command: &str) -> bool {
    let stripped = command.replace("&&", "");
    !stripped.contains(['>', '<', '$', '`', '(', ')', '&'])
}

fn codex_exec_safe(words: &[String]) -> bool {
    let Some(first) = words.first() else {
        return false;
    };
    let name = first.rsplit('/').next().unwrap_or(first);
    let args: Vec<&str> = words.iter().skip(1).map(String::as_str).collect();
    match name {
        "numfmt" | "tac" | "cat" | "cd" | "cut" | "echo" | "expr" | "false" | "grep" | "head"
        | "id" | "ls" | "nl" | "paste" | "pwd" | "rev" | "seq" | "stat" | "tail" | "tr"
        | "true" | "uname" | "uniq" | "wc" | "which" | "whoami" => true,
        "base64" => !args.iter().any(|a| {
            *a == "-o"
                || *a == "--output"
                || a.starts_with("--output=")
                || (a.starts_with("-o") && a.len() > 2)
        }),
        "find" => !args.iter().any(|a| {
            matches!(
                *a,
                "-exec"
                    | "-execdir"
                    | "-ok"
                    | "-okdir"
                    | "-delete"
                    | "-fls"
                    | "-fprint"
                    | "-fprint0"
                    | "-fprintf"
            )
        }),
        "rg" => !args.iter().any(|a| {
            matches!(*a, "--search-zip" | "-z" | "--pre" | "--hostname-bin")
                || a.starts_with("--pre=")
                || a.starts_with("--hostname-bin=")
        }),
        "git" => codex_git(&args),
        "sed" => {
            words.len() <= 4
                && args.first() == Some(&"-n")
                && args.get(1).is_some_and(|s| {
                    s.strip_suffix('p').is_some_and(|core| {
                        let parts: Vec<&str> = core.split(',').collect();
                        (1..=2).contains(&parts.len())
                            && parts
                                .iter()
                                .all(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit()))
                    })
                })
        }
        _ => false,
    }
}

fn codex_git(args: &[&str]) -> bool {
    if args.iter().any(|a| {
        *a == "-c"
            || *a == "--config-env"
            || (a.starts_with("-c") && a.len() > 2)
            || a.starts_with("--config-env=")
    }) {
        return false;
    }
    // The first non-option word (after options and their values) is the subcommand.
    let mut i = 0;
    while let Some(a) = args.get(i) {
        if matches!(*a, "-C" | "--git-dir" | "--work-tree" | "--namespace") {
            i += 2;
        } else if a.starts_with('-') {
            i += 1;
        } else {
            break;
        }
    }
    let Some(sub) = args.get(i) else { return false };
    let rest = args.get(i + 1..).unwrap_or_default();
    let read_only = !rest.iter().any(|a| {
        matches!(
            *a,
            "--output" | "--ext-diff" | "--textconv" | "--exec" | "--paginate"
        ) || a.starts_with("--output=")
            || a.starts_with("--exec=")
    });
    match *sub {
        "status" | "log" | "diff" | "show" => read_only,
        "branch" => {
            read_only
                && (rest.is_empty()
                    || rest.iter().all(|a| {
                        matches!(
                            *a,
                            "--list"
                                | "-l"
                                | "--show-current"
                                | "-a"
                                | "--all"
                                | "-r"
                                | "--remotes"
                                | "-v"
                                | "-vv"
                                | "--verbose"
                        ) || a.starts_with("--format=")
                    }))
        }
        _ => false,
    }
}

/// One policy's results: per kind, (allowed, total); and the risky rows it allowed.
pub struct Tally {
    pub name: &'static str,
    pub by_kind: Vec<(String, usize, usize)>,
    pub risky_allowed: Vec<String>,
}

pub const KINDS: &[&str] = &["read", "build", "edit", "other", "risky"];

pub fn tally(name: &'static str, rows: &[Row], allow: impl Fn(&str) -> bool) -> Tally {
    let mut by_kind: Vec<(String, usize, usize)> =
        KINDS.iter().map(|k| ((*k).to_string(), 0, 0)).collect();
    let mut risky_allowed = Vec::new();
    for r in rows {
        let ok = allow(&r.command);
        if let Some(slot) = by_kind.iter_mut().find(|(k, _, _)| *k == r.kind) {
            slot.2 += 1;
            if ok {
                slot.1 += 1;
            }
        }
        if ok && r.label == "risky" {
            risky_allowed.push(r.command.clone());
        }
    }
    Tally {
        name,
        by_kind,
        risky_allowed,
    }
}

/// All tallies: the seed's defaults, the presets, Codex's list.
pub fn run_all() -> (Vec<Row>, Vec<Tally>) {
    let rows = rows();
    let w = world();
    let ctx = AnalysisContext::new(&w.root, None, &w.home).unwrap();
    let mut out = Vec::new();
    for (name, policy) in policies(&w) {
        out.push(tally(name, &rows, |c| allowed(&policy, c, &ctx)));
    }
    out.push(tally("Codex safe list", &rows, |c| codex_safe(c, &ctx)));
    (rows, out)
}
