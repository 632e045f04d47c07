//! Shell options before `-c`, as a property: every command the
//! floor denies in `fixtures/hardline.jsonl`, wrapped as `bash OPTS -c '<cmd>'` with a
//! random mix of options bash knows (`+o history`, `-O nullglob`, `--init-file F`, `-e`,
//! `-x`, `--norc`, `-o posix`, …), is still denied by the floor under a project config
//! that allows everything; with options bash does not know mixed in, the command is never
//! allowed and never offered an always pattern. And every such command behind every
//! prefix in `WRAPPERS` (`sudo`, `nice -n 5`, `time -p`, `!`, `{ …; }`, `if`, `f(){ …; }; f`,
//! `trap … EXIT`, …) is still denied by the floor under that config.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod common;

use std::path::PathBuf;

use khaelor_perm::analysis;
use khaelor_perm::model::vocab::AnalysisContext;
use khaelor_perm::policy::config::{Policy, load_policy};
use khaelor_perm::policy::decide::decide;
use khaelor_perm::policy::rules::Action;
use khaelor_perm::tools::map_call;
use proptest::prelude::*;
use serde::Deserialize;

#[derive(Debug, Deserialize)]
struct Row {
    command: String,
    hit: bool,
    #[serde(default)]
    rule: Option<String>,
}

/// Options bash reads before `-c` (each one or two words).
const KNOWN: &[&str] = &[
    "+o history",
    "-o posix",
    "+o posix",
    "-O nullglob",
    "+O extglob",
    "-O globstar",
    "-e",
    "-x",
    "+x",
    "-u",
    "-eu",
    "-xe",
    "-o pipefail",
    "-o errexit",
    "-i",
    "-l",
    "-p",
    "-B",
    "-H",
    "--norc",
    "--noprofile",
    "--posix",
    "--login",
    "--noediting",
    "--restricted",
    "--init-file F",
    "--rcfile F",
    "--init-file /dev/null",
];

/// Options bash does not have.
const UNKNOWN: &[&str] = &["--weird", "-Z", "-y", "--init", "--rc", "-Q x", "--nope=1"];

struct World {
    _tmp: tempfile::TempDir,
    root: PathBuf,
    home: PathBuf,
    policy: Policy,
}

fn world() -> World {
    let tmp = tempfile::tempdir().unwrap();
    let base = std::fs::canonicalize(tmp.path()).unwrap();
    let root = base.join("proj");
    let home = base.join("home");
    std::fs::create_dir_all(root.join(".khaelor")).unwrap();
    std::fs::create_dir_all(&home).unwrap();
    std::fs::copy(
        common::fixtures_dir().join("configs/allow_all.json"),
        root.join(".khaelor/config.json"),
    )
    .unwrap();
    let policy = load_policy(&root, &home, None);
    assert!(policy.errors().is_empty(), "{:?}", policy.errors());
    World {
        _tmp: tmp,
        root,
        home,
        policy,
    }
}

/// The floor rows that deny, each a command to wrap.
fn floor_commands() -> Vec<String> {
    let rows: Vec<(usize, Row)> = common::load_table("hardline.jsonl");
    let out: Vec<String> = rows
        .into_iter()
        .filter(|(_, r)| r.hit)
        .map(|(_, r)| r.command)
        .collect();
    assert!(out.len() >= 40, "only {} floor rows", out.len());
    out
}

/// Prefixes and constructs around a floor command, `{c}` the command and `{q}` it as one
/// quoted word. `simple` ones make the command an argument of a program or builtin,
/// where bash rejects a function definition (`sudo :(){ …` is a syntax error).
const WRAPPERS: &[(&str, bool)] = &[
    ("sudo {c}", true),
    ("sudo -u root {c}", true),
    ("env {c}", true),
    ("env -i {c}", true),
    ("nice -n 5 {c}", true),
    ("timeout 5 {c}", true),
    ("nohup {c}", true),
    ("command {c}", true),
    ("builtin {c}", true),
    ("exec {c}", true),
    ("ionice -c3 {c}", true),
    ("taskset 1 {c}", true),
    ("stdbuf -o0 {c}", true),
    ("setsid {c}", true),
    ("doas {c}", true),
    ("flock /tmp/l {c}", true),
    ("strace -o /dev/null {c}", true),
    ("eatmydata {c}", true),
    ("cpulimit -l 10 -- {c}", true),
    ("faketime 2020-01-01 {c}", true),
    ("linux64 {c}", true),
    ("setarch x86_64 -R {c}", true),
    ("chpst -u x {c}", true),
    ("gosu root {c}", true),
    ("tini -- {c}", true),
    ("sshpass -p x {c}", true),
    ("uv run {c}", true),
    ("bundle exec {c}", true),
    ("nix develop -c {c}", true),
    ("capsh -- -c {q}", false),
    ("nix-shell --run {q}", false),
    ("sem {q}", false),
    ("x=1 {c}", true),
    ("coproc {c}", true),
    ("time {c}", false),
    ("time -p {c}", false),
    ("! {c}", false),
    ("{{ {c}; }}", false),
    ("( {c} )", false),
    ("if true; then {c}; fi", false),
    ("for i in 1; do {c}; done", false),
    ("while true; do {c}; break; done", false),
    ("until false; do {c}; break; done", false),
    ("case x in x) {c};; esac", false),
    ("f(){{ {c}; }}; f", false),
    ("true && {c}", false),
    ("false || {c}", false),
    ("{c} &", false),
    ("echo | {c}", false),
    ("{c} | cat", false),
    ("cd . && {c}", false),
    ("bash -c {q}", false),
    ("sh -c {q}", false),
    ("bash -lc {q}", false),
    ("eval {q}", false),
    ("su -c {q}", false),
    ("sudo sh -c {q}", false),
    ("watch {q}", false),
    ("trap {q} EXIT", false),
    ("busybox sh -c {q}", false),
];

#[test]
fn every_floor_row_behind_every_wrapper_keeps_the_floor() {
    let w = world();
    let rows: Vec<(usize, Row)> = common::load_table("hardline.jsonl");
    let mut failures = Vec::new();
    let mut n = 0;
    for (_, r) in rows
        .iter()
        .filter(|(_, r)| r.hit && !r.command.contains('\n'))
    {
        let definition = r.rule.as_deref() == Some(":(){ :|:& };:");
        for (wrapper, simple) in WRAPPERS {
            if definition && *simple {
                continue;
            }
            let wrapped = wrapper
                .replace("{{", "\u{1}")
                .replace("}}", "\u{2}")
                .replace("{c}", &r.command)
                .replace("{q}", &single_quoted(&r.command))
                .replace('\u{1}', "{")
                .replace('\u{2}', "}");
            n += 1;
            let (got, floored) = decision(&w, &wrapped);
            if got != Action::Deny || !floored {
                failures.push(format!("`{wrapped}`: {got} (floor: {floored})"));
            }
        }
    }
    assert!(n > 3000, "only {n} wrapped commands");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// `cmd` as one single-quoted bash word.
fn single_quoted(cmd: &str) -> String {
    format!("'{}'", cmd.replace('\'', "'\\''"))
}

fn decision(w: &World, command: &str) -> (Action, bool) {
    let ctx = AnalysisContext::new(&w.root, None, &w.home).unwrap();
    let input = serde_json::json!({ "command": command });
    let call = map_call("bash", &input, &ctx).unwrap();
    let d = decide(&w.policy, &[], &call, &ctx, true);
    (d.decision, d.hardline.is_some())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 16, .. ProptestConfig::default() })]

    #[test]
    fn known_options_before_c_keep_the_floor(
        picks in proptest::collection::vec(0..KNOWN.len(), 1..5),
        shell in prop_oneof![Just("bash"), Just("sh"), Just("/bin/bash")],
    ) {
        let w = world();
        let opts: Vec<&str> = picks.iter().map(|&i| KNOWN[i]).collect();
        let mut failures = Vec::new();
        for cmd in floor_commands() {
            let wrapped = format!("{shell} {} -c {}", opts.join(" "), single_quoted(&cmd));
            let (got, floored) = decision(&w, &wrapped);
            if got != Action::Deny || !floored {
                failures.push(format!("`{wrapped}`: {got} (floor: {floored})"));
            }
        }
        prop_assert!(failures.is_empty(), "{}", failures.join("\n"));
    }

    #[test]
    fn unknown_options_before_c_are_never_allowed(
        known in proptest::collection::vec(0..KNOWN.len(), 0..3),
        unknown in proptest::collection::vec(0..UNKNOWN.len(), 1..3),
        at in 0usize..4,
    ) {
        let w = world();
        let ctx = AnalysisContext::new(&w.root, None, &w.home).unwrap();
        let mut opts: Vec<&str> = known.iter().map(|&i| KNOWN[i]).collect();
        for &u in &unknown {
            opts.insert(at.min(opts.len()), UNKNOWN[u]);
        }
        let mut failures = Vec::new();
        for cmd in floor_commands().iter().map(String::as_str).chain(["ls", "echo hi"]) {
            let wrapped = format!("bash {} -c {}", opts.join(" "), single_quoted(cmd));
            let (got, _) = decision(&w, &wrapped);
            if got == Action::Allow {
                failures.push(format!("`{wrapped}`: allowed"));
            }
            let a = analysis::analyze(&wrapped, &ctx);
            if !a.always_patterns.is_empty()
                || a.requests.iter().any(|r| !r.always_patterns.is_empty())
            {
                failures.push(format!("`{wrapped}`: offers {:?}", a.always_patterns));
            }
        }
        prop_assert!(failures.is_empty(), "{}", failures.join("\n"));
    }
}
