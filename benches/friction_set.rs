//! The friction benchmark's evaluation, shared by `benches/friction.rs`
//! (prints the table for BENCHMARKS.md) and `tests/friction.rs` (holds the targets):
//! every command of `fixtures/friction.jsonl` decided in a temp project under the seed's
//! defaults, each preset, and a model of Codex's known-safe-command list; and, when it
//! is at hand, every command of the agent set (commands agents really ran in public
//! sessions, `agent_set_path`) decided in a git project under each preset, counted as
//! allowed, contained, asked or denied.
#![allow(
    dead_code,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing
)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use khaelor_perm::contain::profile;
use khaelor_perm::model::contain::{Containment, NotContained, ProfileName};
use khaelor_perm::model::vocab::{AnalysisContext, Capability, CommandClass};
use khaelor_perm::policy::config::Policy;
use khaelor_perm::policy::decide::{CallDecision, Sandbox, decide, decide_with};
use khaelor_perm::policy::presets::Preset;
use khaelor_perm::policy::rules::{Action, DEFAULT_RULES, PermissionRule, RuleSource};
use khaelor_perm::tools::MappedCall;
use khaelor_perm::tools::map_call;
use serde::Deserialize;

#[derive(Debug, Clone, Deserialize)]
pub struct Row {
    pub command: String,
    pub label: String,
    pub kind: String,
    pub source: String,
    /// The agent that ran the command (agent_commands.jsonl only).
    #[serde(default)]
    pub agent: Option<String>,
    /// The project directory of the session the command was run in, as the session
    /// named it (agent_commands.jsonl only): the bench reads it as the world's project.
    #[serde(default)]
    pub root: Option<String>,
}

pub fn rows() -> Vec<Row> {
    read_rows("fixtures/friction.jsonl")
}

/// Where the agent set is: `KHAELOR_AGENT_SET`, else `agent_commands.jsonl` in the
/// shared corpus beside the checkout. Its commands are copied from third-party
/// sessions, so they are kept out of this repository; the bench measures them where
/// they are, and `benches/agent_set/assemble.py` rebuilds them from the pinned sources
/// of `benches/agent_set/sources.tsv` (see `benches/agent_set/README.md`).
pub fn agent_set_path() -> Option<PathBuf> {
    let path = match std::env::var_os("KHAELOR_AGENT_SET") {
        Some(p) => PathBuf::from(p),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus/agent_commands.jsonl"),
    };
    path.is_file().then_some(path)
}

/// The commands agents really ran, when the set is at hand (`agent_set_path`).
pub fn agent_rows() -> Option<Vec<Row>> {
    agent_set_path().map(|p| read_rows(&p))
}

fn read_rows(file: impl AsRef<Path>) -> Vec<Row> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(file);
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

// ---------------------------------------------------------------------------------
// Commands agents really ran (the agent set, kept outside the repository)
// ---------------------------------------------------------------------------------

/// The project the agent set is decided in: a git repository with the files an
/// everyday JavaScript/TypeScript, Python and Rust project has, a git-ignored `.env`
/// and dependencies, and a home with the usual credential stores. One world for
/// every row, written from what such a project holds, not from the answers.
pub fn agent_world() -> World {
    let tmp = tempfile::tempdir().unwrap();
    let base = std::fs::canonicalize(tmp.path()).unwrap();
    let root = base.join("proj");
    let home = base.join("home");
    let files: &[(&str, &str)] = &[
        ("README.md", "# proj\n"),
        (
            "package.json",
            "{\"name\":\"proj\",\"version\":\"1.0.0\",\"scripts\":{\"test\":\"jest\",\"build\":\"tsc\",\"dev\":\"next dev\",\"lint\":\"eslint .\"}}\n",
        ),
        ("package-lock.json", "{}\n"),
        ("tsconfig.json", "{}\n"),
        ("src/index.ts", "export {};\n"),
        ("src/app.ts", "export {};\n"),
        ("src/utils.ts", "export {};\n"),
        ("src/components/Button.tsx", "export {};\n"),
        ("src/main.rs", "fn main() {}\n"),
        ("src/cli.ts", "#!/usr/bin/env bun\n"),
        ("src/lib.rs", "\n"),
        ("src/__init__.py", "\n"),
        ("src/core.py", "x = 1\n"),
        ("tests/test_app.py", "def test_x():\n    pass\n"),
        ("tests/app.test.ts", "test('x', () => {});\n"),
        ("docs/guide.md", "# guide\n"),
        ("scripts/build.sh", "#!/bin/sh\necho build\n"),
        ("pyproject.toml", "[project]\nname = \"proj\"\n"),
        ("setup.py", "from setuptools import setup\nsetup()\n"),
        ("requirements.txt", "requests\n"),
        (
            "Cargo.toml",
            "[package]\nname = \"proj\"\nversion = \"0.1.0\"\n",
        ),
        ("go.mod", "module proj\n"),
        ("Makefile", "all:\n\ttrue\n"),
        ("reproduce.py", "print(1)\n"),
        (
            ".gitignore",
            ".env\n.env.*\nnode_modules/\n__pycache__/\n.venv/\ndist/\nbuild/\ntarget/\n",
        ),
        (".env", "API_KEY=secret\n"),
        (".env.local", "API_KEY=secret\n"),
        ("node_modules/left-pad/index.js", "module.exports = 1;\n"),
        ("node_modules/.package-lock.json", "{}\n"),
        ("dist/index.js", "\n"),
    ];
    for (f, text) in files {
        let p = root.join(f);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    let git = |args: &[&str]| {
        let ok = std::process::Command::new("git")
            .args([
                "-c",
                "user.name=bench",
                "-c",
                "user.email=bench@example.com",
            ])
            .args(args)
            .current_dir(&root)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("HOME", &home)
            .output()
            .map(|o| o.status.success())
            .unwrap_or(false);
        assert!(ok, "git {args:?} failed: the agent set's world needs git");
    };
    std::fs::create_dir_all(&home).unwrap();
    git(&["init", "-q", "-b", "main"]);
    git(&["add", "-A"]);
    git(&["commit", "-q", "-m", "init"]);
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
        ".bash_history",
        ".zsh_history",
        ".bashrc",
    ] {
        let p = home.join(f);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, "secret\n").unwrap();
    }
    // The sessions run the project's own CLI by its name (`minsky tasks list`): its
    // README installs it with `bun link`, which puts a link to the project's
    // `src/cli.ts` on `PATH` (`~/.bun/bin`, see `search_path`).
    let bun_bin = home.join(".bun/bin");
    std::fs::create_dir_all(&bun_bin).unwrap();
    std::os::unix::fs::symlink(root.join("src/cli.ts"), bun_bin.join("minsky")).unwrap();
    World {
        _tmp: tmp,
        root,
        home,
    }
}

/// The agent's `PATH` in the agent set's world: bun's links, then the system's.
pub fn search_path(w: &World) -> String {
    format!(
        "{}:/usr/local/bin:/usr/bin:/bin",
        w.home.join(".bun/bin").display()
    )
}

/// A row's command with the session's project directory written as the world's.
pub fn in_world(row: &Row, root: &Path) -> String {
    match row.root.as_deref() {
        Some(r) if !r.is_empty() => row.command.replace(r, &root.display().to_string()),
        _ => row.command.clone(),
    }
}

/// The sandbox as the policy sees it where bubblewrap runs: the profile is built from
/// the policy as `khaelor-perm exec --contain` would build it, nothing is run. The
/// bench measures the policy, so it does not depend on this machine having
/// bubblewrap; where it is missing the hooks ask instead (`NotContained`).
pub struct ProfileOnly;

impl Sandbox for ProfileOnly {
    fn contain(
        &self,
        _call: &MappedCall,
        ctx: &AnalysisContext,
        policy: &Policy,
        name: ProfileName,
    ) -> Result<Containment, NotContained> {
        let profile = profile::build(ctx.root(), ctx.home(), policy, name).map_err(|e| {
            NotContained::Unavailable {
                detail: e.to_string(),
            }
        })?;
        Ok(Containment {
            profile,
            argv: Vec::new(),
            command: String::new(),
        })
    }
}

/// The four answers, in the order of the tables.
pub const OUTCOMES: [&str; 4] = ["allowed", "contained", "asked", "denied"];

/// One command's answer (an index into `OUTCOMES`) and, for an ask, what asked.
pub fn outcome(policy: &Policy, command: &str, ctx: &AnalysisContext) -> (usize, Option<String>) {
    let call = match map_call("bash", &serde_json::json!({ "command": command }), ctx) {
        Ok(call) => call,
        Err(_) => return (2, Some("(not mapped)".to_string())),
    };
    let d = decide_with(policy, &[], &call, ctx, true, Some(&ProfileOnly));
    match d.decision {
        Action::Allow => (0, None),
        Action::Contain => (1, None),
        Action::Ask => (2, Some(ask_key(&d, command, ctx))),
        Action::Deny => (3, None),
    }
}

/// What an ask is counted under: the program and first subcommand of the command that
/// asked; for a read or write that asked, the program of the first part that is not a
/// `cd`, with the capability.
pub fn ask_key(d: &CallDecision, command: &str, ctx: &AnalysisContext) -> String {
    let asking = d.requests.iter().find(|e| e.decision == Action::Ask);
    match asking.map(|e| (e.request.capability, &e.request.subject)) {
        Some((Capability::ProcessExecute | Capability::ProcessBackground, subject)) => {
            let words: Vec<String> = subject.split_whitespace().map(str::to_string).collect();
            program_key(&words)
        }
        Some((cap, _)) => {
            let a = khaelor_perm::analysis::analyze(command, ctx);
            let first = a
                .parts
                .iter()
                .map(|p| p.words.clone())
                .find(|w| w.first().is_some_and(|w0| w0 != "cd"))
                .unwrap_or_default();
            format!("{} ({})", program_key(&first), cap.as_str())
        }
        None => "(no request asked)".to_string(),
    }
}

/// A command's program (its file name) and, for programs with subcommands, the first
/// word that is not an option; a script run by an interpreter counts as `SCRIPT`.
fn program_key(words: &[String]) -> String {
    let mut words = words
        .iter()
        .skip_while(|w| w.contains('=') && !w.starts_with('-'))
        .peekable();
    let Some(first) = words.next() else {
        return "(empty)".to_string();
    };
    let prog = first.rsplit('/').next().unwrap_or(first).to_string();
    let with_sub = [
        "git", "npm", "npx", "pnpm", "yarn", "bun", "cargo", "go", "pip", "pip3", "uv", "poetry",
        "docker", "gh", "make", "python", "python3", "node", "find", "xargs", "sed", "conda",
    ];
    if !with_sub.contains(&prog.as_str()) {
        return prog;
    }
    let sub = words
        .find(|w| {
            !w.starts_with('-') || matches!(w.as_str(), "-m" | "-c" | "-e" | "-exec" | "-i" | "-n")
        })
        .map(|w| {
            let interpreter = prog.starts_with("python") || prog == "node" || prog == "bun";
            let script = [".py", ".js", ".ts", ".mjs", ".cjs"]
                .iter()
                .any(|x| w.ends_with(x));
            if interpreter && script {
                "SCRIPT".to_string()
            } else {
                w.clone()
            }
        })
        .unwrap_or_default();
    format!("{prog} {sub}").trim().to_string()
}

/// One policy's results on the agent set.
pub struct AgentTally {
    pub name: &'static str,
    /// Per kind: counts by `OUTCOMES`, and the total.
    pub by_kind: Vec<(String, [usize; 4], usize)>,
    pub risky_allowed: Vec<String>,
    pub risky_contained: Vec<String>,
    /// Per kind (read, edit, build): what asked, most frequent first.
    pub top_asks: BTreeMap<String, Vec<(String, usize)>>,
}

impl AgentTally {
    pub fn kind(&self, k: &str) -> ([usize; 4], usize) {
        self.by_kind
            .iter()
            .find(|(x, _, _)| x == k)
            .map(|(_, c, t)| (*c, *t))
            .unwrap_or(([0; 4], 0))
    }
}

/// The agent set decided under each preset, in one world.
pub fn run_agent_set() -> Option<(Vec<Row>, Vec<AgentTally>)> {
    let rows = agent_rows()?;
    let w = agent_world();
    let mut ctx = AnalysisContext::new(&w.root, None, &w.home)
        .unwrap()
        .with_search_path(Some(std::ffi::OsStr::new(&search_path(&w))));
    // `KHAELOR_AGENT_VENV=1`: the agent runs in an activated virtual environment of the
    // project (its `.venv/bin` first on `PATH`, holding what a venv holds), to measure
    // what reading names on `PATH` costs.
    if std::env::var_os("KHAELOR_AGENT_VENV").is_some() {
        let bin = w.root.join(".venv/bin");
        std::fs::create_dir_all(&bin).unwrap();
        for f in ["python", "python3", "pip", "pip3", "pytest", "activate"] {
            std::fs::write(bin.join(f), "#!/bin/sh\n").unwrap();
        }
        let path = format!("{}:{}", bin.display(), search_path(&w));
        ctx = ctx.with_search_path(Some(std::ffi::OsStr::new(&path)));
    }
    let commands: Vec<String> = rows.iter().map(|r| in_world(r, &w.root)).collect();
    let mut out = Vec::new();
    for (name, policy) in policies(&w) {
        if name == "seed defaults" {
            continue;
        }
        let mut by_kind: Vec<(String, [usize; 4], usize)> = KINDS
            .iter()
            .map(|k| ((*k).to_string(), [0; 4], 0))
            .collect();
        let mut risky_allowed = Vec::new();
        let mut risky_contained = Vec::new();
        let mut asks: BTreeMap<String, BTreeMap<String, usize>> = BTreeMap::new();
        for (r, c) in rows.iter().zip(&commands) {
            let (o, key) = outcome(&policy, c, &ctx);
            if let Some(slot) = by_kind.iter_mut().find(|(k, _, _)| *k == r.kind) {
                slot.1[o] += 1;
                slot.2 += 1;
            }
            if r.kind == "risky" && o == 0 {
                risky_allowed.push(r.command.clone());
            }
            if r.kind == "risky" && o == 1 {
                risky_contained.push(r.command.clone());
            }
            if let Some(key) = &key
                && name == "recommended"
                && std::env::var_os("KHAELOR_AGENT_ASKS").is_some()
                && matches!(r.kind.as_str(), "read" | "edit" | "build")
            {
                println!("ASK {}\t{key}\t{c}", r.kind);
            }
            if let Some(key) = key
                && matches!(r.kind.as_str(), "read" | "edit" | "build")
            {
                *asks
                    .entry(r.kind.clone())
                    .or_default()
                    .entry(key)
                    .or_default() += 1;
            }
        }
        let top_asks = asks
            .into_iter()
            .map(|(k, m)| {
                let mut v: Vec<(String, usize)> = m.into_iter().collect();
                v.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
                v.truncate(40);
                (k, v)
            })
            .collect();
        out.push(AgentTally {
            name,
            by_kind,
            risky_allowed,
            risky_contained,
            top_asks,
        });
    }
    Some((rows, out))
}
