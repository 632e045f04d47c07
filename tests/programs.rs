//! The program table end to end: `fixtures/programs.jsonl`
//! through the public API (bash tool mapping -> analysis -> decide), under the defaults,
//! under an allow-everything project config, and under a row's own project rules (a
//! grant of the host command, `git push *`, must not cover an option that runs another
//! program). Configs are real files in a temp project; nothing is mocked.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod common;

use std::path::{Path, PathBuf};

use khaelor_perm::analysis;
use khaelor_perm::model::vocab::AnalysisContext;
use khaelor_perm::policy::decide::decide;
use khaelor_perm::policy::rules::Action;
use khaelor_perm::presentation::messages::HARDLINE_NOTE;
use khaelor_perm::tools::map_call;
use serde::Deserialize;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Case {
    command: String,
    decision: Action,
    allow_all: Action,
    /// Under the `strict` preset (set by the project config) when it differs from
    /// `decision` (the `recommended` default).
    #[serde(default)]
    strict: Option<Action>,
    #[serde(default)]
    hardline: bool,
    #[serde(default)]
    no_always: bool,
    #[serde(default)]
    always: bool,
    #[serde(default)]
    rules: Vec<(String, String, String)>,
    #[serde(default)]
    with_rules: Option<Action>,
    /// Why the floor on the lexer's rendering alone misses this row (the AST engine's
    /// re-parse of the code string catches it).
    #[serde(default)]
    floor_gap: Option<String>,
}

struct World {
    _tmp: tempfile::TempDir,
    root: PathBuf,
    home: PathBuf,
}

/// A project with `src/` and `a.txt`, a separate home, and (when given) a project
/// config file with that text.
fn world(config: Option<&str>) -> World {
    let tmp = tempfile::tempdir().unwrap();
    let base = std::fs::canonicalize(tmp.path()).unwrap();
    let root = base.join("proj");
    let home = base.join("home");
    std::fs::create_dir_all(root.join(".git/hooks")).unwrap();
    std::fs::create_dir_all(root.join("src")).unwrap();
    std::fs::write(root.join("a.txt"), "a\n").unwrap();
    std::fs::create_dir_all(&home).unwrap();
    if let Some(text) = config {
        std::fs::create_dir_all(root.join(".khaelor")).unwrap();
        std::fs::write(root.join(".khaelor/config.json"), text).unwrap();
    }
    World {
        _tmp: tmp,
        root,
        home,
    }
}

fn rules_config(rules: &[(String, String, String)]) -> String {
    let rules: Vec<serde_json::Value> = rules
        .iter()
        .map(|(c, p, a)| serde_json::json!({ "capability": c, "pattern": p, "action": a }))
        .collect();
    serde_json::json!({ "permissions": { "rules": rules } }).to_string()
}

/// The decision for one command in one world, with a description of the requests for
/// a failure message.
fn decide_in(w: &World, command: &str) -> Result<(Action, bool, String), String> {
    // A project file here is the user's own: trusted.
    let policy = common::load_trusted_policy(&w.root, &w.home, None);
    if !policy.errors().is_empty() {
        return Err(format!("config errors: {:?}", policy.errors()));
    }
    let ctx = AnalysisContext::new(&w.root, None, &w.home).map_err(|e| e.to_string())?;
    let input = serde_json::json!({ "command": command });
    let call = map_call("bash", &input, &ctx).map_err(|e| e.to_string())?;
    let d = decide(&policy, &[], &call, &ctx, true);
    let floored = d.hardline.is_some()
        && d.message
            .as_deref()
            .is_some_and(|m| m.contains(HARDLINE_NOTE));
    Ok((d.decision, floored, common::requests_shown(&d)))
}

fn table() -> Vec<(usize, Case)> {
    let table: Vec<(usize, Case)> = common::load_table("programs.jsonl");
    assert!(table.len() >= 80, "the table has {} commands", table.len());
    table
}

fn check(
    failures: &mut Vec<String>,
    line: usize,
    case: &Case,
    world: &World,
    want: Action,
    what: &str,
) {
    match decide_in(world, &case.command) {
        Ok((got, floored, reqs)) => {
            if got != want {
                failures.push(format!(
                    "line {line} `{}` ({what}): expected {want}, got {got}\n      {reqs}",
                    case.command
                ));
            }
            if case.hardline && !floored {
                failures.push(format!(
                    "line {line} `{}` ({what}): not denied by the floor",
                    case.command
                ));
            }
        }
        Err(e) => failures.push(format!("line {line} `{}` ({what}): {e}", case.command)),
    }
}

#[test]
fn decisions_under_the_defaults_and_allow_all() {
    let defaults = world(None);
    let allow_all_text =
        std::fs::read_to_string(common::fixtures_dir().join("configs/allow_all.json")).unwrap();
    let allow_all = world(Some(&allow_all_text));
    let strict = world(Some(r#"{ "permissions": { "preset": "strict" } }"#));
    let mut failures = Vec::new();
    let table = table();
    for (line, case) in &table {
        check(
            &mut failures,
            *line,
            case,
            &strict,
            case.strict.unwrap_or(case.decision),
            "strict",
        );
        check(
            &mut failures,
            *line,
            case,
            &defaults,
            case.decision,
            "defaults",
        );
        check(
            &mut failures,
            *line,
            case,
            &allow_all,
            case.allow_all,
            "allow-all",
        );
    }
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn a_grant_of_the_host_command_does_not_cover_what_its_options_run() {
    let mut failures = Vec::new();
    let mut rows = 0;
    for (line, case) in &table() {
        let Some(want) = case.with_rules else {
            assert!(
                case.rules.is_empty(),
                "line {line}: rules without withRules"
            );
            continue;
        };
        rows += 1;
        let w = world(Some(&rules_config(&case.rules)));
        check(&mut failures, *line, case, &w, want, "with rules");
    }
    assert!(rows >= 20, "only {rows} rows with rules");
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn always_patterns_never_hold_a_literal_wildcard_or_cover_opaque_commands() {
    let w = world(None);
    let ctx = AnalysisContext::new(&w.root, None, &w.home).unwrap();
    let mut failures = Vec::new();
    for (line, case) in &table() {
        let a = analysis::analyze(&case.command, &ctx);
        let patterns: Vec<&String> = a
            .always_patterns
            .iter()
            .chain(a.requests.iter().flat_map(|r| r.always_patterns.iter()))
            .collect();
        if case.no_always && !patterns.is_empty() {
            failures.push(format!(
                "line {line} `{}`: offers {patterns:?}",
                case.command
            ));
        }
        if case.always && patterns.is_empty() {
            failures.push(format!(
                "line {line} `{}`: offers no always pattern",
                case.command
            ));
        }
        // Whatever the row: a pattern for a subject holding a literal `*` would cover
        // more than the subject.
        for r in &a.requests {
            if r.subject.contains('*')
                && !r.capability.has_command_subject()
                && !r.always_patterns.is_empty()
            {
                failures.push(format!(
                    "line {line} `{}`: `{}` offered {:?}",
                    case.command, r.subject, r.always_patterns
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn the_table_knows_every_program_the_fixture_wraps() {
    // Every wrapper this list names has an entry whose examples are tested in the
    // library (`programs::unwrap::tests`); here: each is looked up by name and by path.
    for name in [
        "chroot",
        "unshare",
        "flock",
        "busybox",
        "strace",
        "ltrace",
        "fakeroot",
        "setpriv",
        "sg",
        "script",
        "systemd-run",
        "firejail",
        "bwrap",
        "runuser",
        "su",
        "doas",
        "pkexec",
        "nsenter",
        "ip",
        "catchsegv",
        "valgrind",
        "gdb",
        "torsocks",
        "proxychains",
        "time",
        "nohup",
        "xargs",
        "parallel",
        "sudo",
        "env",
        "timeout",
        "nice",
    ] {
        assert!(
            khaelor_perm::programs::lookup(name).is_some(),
            "`{name}` is not in the table"
        );
        let by_path = Path::new("/usr/bin").join(name);
        assert!(khaelor_perm::programs::lookup(&by_path.to_string_lossy()).is_some());
    }
}

#[test]
fn the_floor_on_the_lexer_rendering_finds_the_same_commands() {
    // The floor also runs on the lexer's rendering of the raw text (the only one left
    // when the AST engine falls back); through the same table it must find the same
    // inner commands and code strings, except where a row records a known gap.
    let w = world(None);
    let ctx = AnalysisContext::new(&w.root, None, &w.home).unwrap();
    let mut failures = Vec::new();
    for (line, case) in &table() {
        if !case.hardline {
            continue;
        }
        let hit = khaelor_perm::analysis::lexer::floor(&case.command, &ctx).is_some();
        match (&case.floor_gap, hit) {
            (None, false) => failures.push(format!(
                "line {line} `{}`: the lexer rendering misses it",
                case.command
            )),
            (Some(_), true) => failures.push(format!(
                "line {line} `{}`: recorded as a gap but found: drop floorGap",
                case.command
            )),
            _ => {}
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
