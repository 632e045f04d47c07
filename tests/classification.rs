//! The golden classification table (`fixtures/classification.jsonl`): for each command,
//! the class the AST engine and the V1 lexer must give, the fallback the AST engine
//! must take on input it cannot read, and the refusal rule (seed §3.3): a compound or
//! obfuscated command never carries an "always" pattern, in either engine.
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
use khaelor_perm::model::vocab::{
    Analysis, AnalysisContext, CommandClass, EngineKind, FallbackReason,
};
use serde::Deserialize;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Case {
    command: String,
    ast: CommandClass,
    lexer: CommandClass,
    /// The tree-sitter node kind the case exercises (for the reader and the coverage check).
    node: String,
    /// Set when the AST engine must fall back to the lexer.
    #[serde(default)]
    fallback: Option<FallbackReason>,
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

/// Classification does not depend on the filesystem, but the context needs a real root.
fn context(dir: &tempfile::TempDir) -> AnalysisContext {
    AnalysisContext::new(dir.path(), None, dir.path()).unwrap()
}

/// The refusal rule (seed §3.3): nothing the analyzer could not fully read, and nothing
/// with more than one command, may offer an "always" pattern, at any level.
fn refusal_rule_violation(a: &Analysis) -> Option<String> {
    if a.class == CommandClass::Simple {
        return None;
    }
    if !a.always_patterns.is_empty() {
        return Some(format!(
            "{} command offers always patterns {:?}",
            a.class.as_str(),
            a.always_patterns
        ));
    }
    a.requests
        .iter()
        .find(|r| !r.always_patterns.is_empty())
        .map(|r| {
            format!(
                "{} command has a `{}` request offering always patterns {:?}",
                a.class.as_str(),
                r.capability,
                r.always_patterns
            )
        })
}

#[test]
fn classification_table() {
    let cases = common::load_table::<Case>("classification.jsonl");
    assert!(
        cases.len() >= 90,
        "only {} classification cases",
        cases.len()
    );
    let dir = tempfile::tempdir().unwrap();
    let ctx = context(&dir);
    let mut failures = Vec::new();
    for (line, case) in &cases {
        let (ast, lexer) = match (
            guarded(|| analyze(&case.command, &ctx)),
            guarded(|| analyze_lexer(&case.command, &ctx)),
        ) {
            (Ok(a), Ok(l)) => (a, l),
            (a, l) => {
                failures.push(format!(
                    "fixtures/classification.jsonl:{line}: `{}`: an engine panicked (ast: {:?}, lexer: {:?})\n",
                    case.command.escape_debug(),
                    a.err(),
                    l.err()
                ));
                continue;
            }
        };
        let mut problems = Vec::new();
        if ast.class != case.ast {
            problems.push(format!(
                "ast class is {}, want {}",
                ast.class.as_str(),
                case.ast.as_str()
            ));
        }
        match case.fallback {
            Some(reason) => {
                if case.ast != CommandClass::Obfuscated {
                    problems
                        .push("the fixture is wrong: a fallback is always obfuscated".to_string());
                }
                match &ast.fallback {
                    Some(f) if f.reason == reason => {}
                    other => problems.push(format!(
                        "ast fallback is {:?}, want {}",
                        other.as_ref().map(|f| f.reason.as_str()),
                        reason.as_str()
                    )),
                }
                if ast.engine != EngineKind::Lexer {
                    problems.push(format!(
                        "ast fell back but engine is {}",
                        ast.engine.as_str()
                    ));
                }
            }
            None => {
                if let Some(f) = &ast.fallback {
                    problems.push(format!(
                        "ast fell back ({}: {}) but must not",
                        f.reason.as_str(),
                        f.detail
                    ));
                }
                if ast.engine != EngineKind::Ast {
                    problems.push(format!("ast engine is {}, want ast", ast.engine.as_str()));
                }
            }
        }
        if lexer.class != case.lexer {
            problems.push(format!(
                "lexer class is {}, want {}",
                lexer.class.as_str(),
                case.lexer.as_str()
            ));
        }
        if lexer.engine != EngineKind::Lexer {
            problems.push(format!("lexer engine is {}", lexer.engine.as_str()));
        }
        for (name, a) in [("ast", &ast), ("lexer", &lexer)] {
            if let Some(v) = refusal_rule_violation(a) {
                problems.push(format!("{name}: {v}"));
            }
        }
        if !problems.is_empty() {
            failures.push(format!(
                "fixtures/classification.jsonl:{line}: `{}` ({})\n  - {}\nast analysis: {ast:#?}\nlexer analysis: {lexer:#?}\n",
                case.command.escape_debug(),
                case.node,
                problems.join("\n  - ")
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} classification cases failed:\n\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}

/// Every node kind the deliverable lists is exercised by at least one case, so a kind
/// cannot silently drop out of the table.
#[test]
fn table_covers_the_walker_node_kinds() {
    let cases = common::load_table::<Case>("classification.jsonl");
    let kinds = [
        "command",
        "pipeline",
        "list",
        "subshell",
        "compound_statement",
        "redirected_statement",
        "file_redirect",
        "heredoc_redirect",
        "herestring_redirect",
        "if_statement",
        "elif_clause",
        "else_clause",
        "while_statement",
        "for_statement",
        "c_style_for_statement",
        "case_statement",
        "function_definition",
        "negated_command",
        "variable_assignment",
        "variable_assignments",
        "declaration_command",
        "unset_command",
        "test_command",
        "command_substitution",
        "process_substitution",
        "expansion",
        "simple_expansion",
        "arithmetic_expansion",
        "string",
        "raw_string",
        "ansi_c_string",
        "concatenation",
        "brace_expression",
        "comment",
        "heredoc_body",
        "backticks",
        "line continuation",
        "ERROR",
        "MISSING",
    ];
    let missing: Vec<&str> = kinds
        .iter()
        .copied()
        .filter(|k| !cases.iter().any(|(_, c)| c.node.contains(k)))
        .collect();
    assert!(
        missing.is_empty(),
        "no classification case exercises {missing:?}"
    );
    for class in [
        CommandClass::Simple,
        CommandClass::Compound,
        CommandClass::Obfuscated,
    ] {
        assert!(
            cases.iter().any(|(_, c)| c.ast == class),
            "no ast case is {}",
            class.as_str()
        );
        assert!(
            cases.iter().any(|(_, c)| c.lexer == class),
            "no lexer case is {}",
            class.as_str()
        );
    }
    assert!(
        cases.iter().any(|(_, c)| c.ast != c.lexer),
        "the table must show where the engines differ (redirects, heredocs, sh -c)"
    );
}
