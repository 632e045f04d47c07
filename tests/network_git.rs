//! The golden network/git table (`fixtures/network_git.jsonl`): whether each engine's
//! analysis of a command carries a `network.access` and a `git.modify` request (seed
//! §3.4; DESIGN.md § Analysis for what the AST engine sees through).
//!
//! Owns only these checks; it must not touch the engines. The table is data: add cases
//! to the fixture, not here.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod common;

use khaelor_perm::analysis::{analyze, analyze_lexer};
use khaelor_perm::model::vocab::{Analysis, AnalysisContext, Capability};
use serde::Deserialize;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Case {
    command: String,
    network: bool,
    git: bool,
    lexer_network: bool,
    lexer_git: bool,
    /// The `host:port` a bash network device (`/dev/tcp/HOST/PORT`) connects to: the
    /// subject of a network request on each engine that carries one.
    #[serde(default)]
    endpoint: Option<String>,
}

fn names_endpoint(a: &Analysis, endpoint: &str) -> bool {
    a.requests
        .iter()
        .any(|r| r.capability == Capability::NetworkAccess && r.subject == endpoint)
}

/// Runs an engine, turning a panic into a failure of this case so one panicking case
/// does not hide the rest of the table (the analyzer must never panic: seed §7.4).
fn guarded(f: impl FnOnce() -> Analysis + std::panic::UnwindSafe) -> Result<Analysis, String> {
    std::panic::catch_unwind(f).map_err(|e| {
        e.downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| e.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "non-string panic".to_string())
    })
}

fn carries(a: &Analysis, capability: Capability) -> bool {
    a.requests.iter().any(|r| r.capability == capability)
}

#[test]
fn network_and_git_table() {
    let cases = common::load_table::<Case>("network_git.jsonl");
    assert!(cases.len() >= 45, "only {} network/git cases", cases.len());
    let dir = tempfile::tempdir().unwrap();
    let ctx = AnalysisContext::new(dir.path(), None, dir.path()).unwrap();
    let mut failures = Vec::new();
    for (line, case) in &cases {
        let (ast, lexer) = match (
            guarded(|| analyze(&case.command, &ctx)),
            guarded(|| analyze_lexer(&case.command, &ctx)),
        ) {
            (Ok(a), Ok(l)) => (a, l),
            (a, l) => {
                failures.push(format!(
                    "fixtures/network_git.jsonl:{line}: `{}`: an engine panicked (ast: {:?}, lexer: {:?})\n",
                    case.command.escape_debug(),
                    a.err(),
                    l.err()
                ));
                continue;
            }
        };
        let checks = [
            (
                "ast network.access",
                carries(&ast, Capability::NetworkAccess),
                case.network,
            ),
            (
                "ast git.modify",
                carries(&ast, Capability::GitModify),
                case.git,
            ),
            (
                "lexer network.access",
                carries(&lexer, Capability::NetworkAccess),
                case.lexer_network,
            ),
            (
                "lexer git.modify",
                carries(&lexer, Capability::GitModify),
                case.lexer_git,
            ),
        ];
        let mut problems: Vec<String> = checks
            .iter()
            .filter(|(_, got, want)| got != want)
            .map(|(what, got, want)| format!("{what}: got {got}, want {want}"))
            .collect();
        if let Some(endpoint) = &case.endpoint {
            for (engine, a, carries) in [
                ("ast", &ast, case.network),
                ("lexer", &lexer, case.lexer_network),
            ] {
                if carries && !names_endpoint(a, endpoint) {
                    problems.push(format!("{engine}: no network.access naming `{endpoint}`"));
                }
            }
        }
        if !problems.is_empty() {
            failures.push(format!(
                "fixtures/network_git.jsonl:{line}: `{}`\n  - {}\nast analysis: {ast:#?}\nlexer analysis: {lexer:#?}\n",
                case.command.escape_debug(),
                problems.join("\n  - ")
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} network/git cases failed:\n\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}

/// A fixture column: its name and how to read it from a case.
type Column = (&'static str, fn(&Case) -> bool);

/// The table must hold both answers for every column, or a column could pass by
/// always saying the same thing.
#[test]
fn table_has_both_answers_in_every_column() {
    let cases = common::load_table::<Case>("network_git.jsonl");
    let columns: [Column; 4] = [
        ("network", |c| c.network),
        ("git", |c| c.git),
        ("lexerNetwork", |c| c.lexer_network),
        ("lexerGit", |c| c.lexer_git),
    ];
    for (name, get) in columns {
        assert!(cases.iter().any(|(_, c)| get(c)), "no case has {name} true");
        assert!(
            cases.iter().any(|(_, c)| !get(c)),
            "no case has {name} false"
        );
    }
}
