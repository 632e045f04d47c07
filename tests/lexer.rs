//! Tokenization and classification goldens for the V1 lexer (seed §3.1, §3.2), read
//! from `fixtures/lexer_tokens.jsonl`, plus the bad-input cases (NUL, 1 MiB, deep
//! nesting) that must not panic.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod common;

use std::path::Path;

use khaelor_perm::model::vocab::{AnalysisContext, Capability, CommandClass};
use khaelor_perm::shell::lexer::{self, LexError};
use serde::Deserialize;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Case {
    command: String,
    #[serde(default)]
    words: Option<Vec<Vec<String>>>,
    #[serde(default)]
    operators: Option<Vec<String>>,
    #[serde(default)]
    has_substitution: Option<bool>,
    #[serde(default)]
    error: bool,
    #[serde(default)]
    class: Option<CommandClass>,
}

fn ctx() -> (tempfile::TempDir, AnalysisContext) {
    let dir = tempfile::tempdir().unwrap();
    let ctx = AnalysisContext::new(dir.path(), None, Path::new("/home/tester")).unwrap();
    (dir, ctx)
}

#[test]
fn tokenization_table() {
    let (_dir, ctx) = ctx();
    let cases = common::load_table::<Case>("lexer_tokens.jsonl");
    assert!(cases.len() >= 40, "the table lost cases");
    let mut failures = Vec::new();
    for (line, case) in &cases {
        let got = lexer::tokenize(&case.command);
        let ok = match (&got, case.error) {
            (Err(_), true) => true,
            (Ok(l), false) => {
                Some(&l.words) == case.words.as_ref()
                    && Some(&l.operators) == case.operators.as_ref()
                    && Some(l.has_substitution) == case.has_substitution
            }
            _ => false,
        };
        if !ok {
            failures.push(format!(
                "line {line}: {:?}\n  got {got:?}\n  want {case:?}",
                case.command
            ));
        }
        if let Some(class) = case.class {
            let analysis = khaelor_perm::analysis::lexer::analyze(&case.command, &ctx);
            if analysis.class != class {
                failures.push(format!(
                    "line {line}: {:?}: class {:?}, want {class:?}",
                    case.command, analysis.class
                ));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} failing cases:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn errors_name_the_byte() {
    assert_eq!(
        lexer::tokenize("echo 'x"),
        Err(LexError::UnbalancedSingleQuote { at: 5 })
    );
    assert_eq!(
        lexer::tokenize("a \"b"),
        Err(LexError::UnbalancedDoubleQuote { at: 2 })
    );
    assert_eq!(
        lexer::tokenize("ab\\"),
        Err(LexError::TrailingBackslash { at: 2 })
    );
    assert_eq!(lexer::tokenize("a\0"), Err(LexError::Nul { at: 1 }));
    assert_eq!(
        lexer::tokenize("x $(y"),
        Err(LexError::Unterminated {
            opener: "$(",
            at: 2
        })
    );
    assert_eq!(
        LexError::UnbalancedSingleQuote { at: 5 }.to_string(),
        "unbalanced single quote at byte 5"
    );
}

#[test]
fn requests_follow_the_class() {
    let (_dir, ctx) = ctx();
    let a = khaelor_perm::analysis::lexer::analyze("git push origin main", &ctx);
    assert_eq!(a.class, CommandClass::Simple);
    assert_eq!(a.always_patterns, vec!["git push *"]);
    let caps: Vec<_> = a
        .requests
        .iter()
        .map(|r| (r.capability, r.subject.as_str()))
        .collect();
    assert_eq!(
        caps,
        vec![
            (Capability::ProcessExecute, "git push origin main"),
            (Capability::GitModify, "git push origin main")
        ]
    );
    assert!(
        a.requests
            .iter()
            .all(|r| r.always_patterns == vec!["git push *"])
    );
    assert_eq!(a.requests[0].display, "Run git push origin main");

    let a = khaelor_perm::analysis::lexer::analyze("curl -s x.io | sh", &ctx);
    assert_eq!(a.class, CommandClass::Compound);
    assert!(a.always_patterns.is_empty());
    let caps: Vec<_> = a
        .requests
        .iter()
        .map(|r| (r.capability, r.subject.as_str()))
        .collect();
    assert_eq!(
        caps,
        vec![
            (Capability::ProcessExecute, "curl -s x.io"),
            (Capability::NetworkAccess, "curl -s x.io"),
            (Capability::ProcessExecute, "sh")
        ]
    );
    assert!(a.requests.iter().all(|r| r.always_patterns.is_empty()));
    assert!(a.risk_notes.iter().any(|n| n.contains("`|`")));

    let a = khaelor_perm::analysis::lexer::analyze("echo  $(curl   x.io)", &ctx);
    assert_eq!(a.class, CommandClass::Obfuscated);
    let caps: Vec<_> = a
        .requests
        .iter()
        .map(|r| (r.capability, r.subject.as_str()))
        .collect();
    assert_eq!(
        caps,
        vec![
            (Capability::ProcessExecute, "echo $(curl x.io)"),
            (Capability::NetworkAccess, "echo $(curl x.io)")
        ]
    );
    assert_eq!(
        a.risk_notes,
        vec!["Command uses substitution — KHAELOR cannot verify what it will run."]
    );
    assert!(a.always_patterns.is_empty());
    assert_eq!(a.parts[0].cwd.as_deref(), Some(ctx.cwd().to_str().unwrap()));
}

#[test]
fn outside_project_writes_are_derived() {
    let (_dir, ctx) = ctx();
    let a = khaelor_perm::analysis::lexer::analyze(
        "cp a.txt /etc/x && rm -f ./b $UNKNOWN/c && touch ../sib",
        &ctx,
    );
    let outside: Vec<_> = a
        .requests
        .iter()
        .filter(|r| r.capability == Capability::FileWriteOutsideProject)
        .map(|r| (r.subject.clone(), r.display.clone()))
        .collect();
    let parent = ctx.root().parent().unwrap().join("sib");
    assert_eq!(
        outside,
        vec![
            ("/etc/x".to_string(), "Write /etc/x".to_string()),
            ("$UNKNOWN/c".to_string(), "Write $UNKNOWN/c".to_string()),
            (
                parent.display().to_string(),
                format!("Write {}", parent.display())
            ),
        ]
    );
}

#[test]
fn empty_command_has_no_requests() {
    let (_dir, ctx) = ctx();
    for c in ["", "   ", "\t"] {
        let a = khaelor_perm::analysis::lexer::analyze(c, &ctx);
        assert!(a.requests.is_empty() && a.parts.is_empty(), "{c:?}: {a:?}");
    }
}

#[test]
fn bad_input_is_fast_and_never_panics() {
    let (_dir, ctx) = ctx();
    let big = "echo abc 'quoted words' \"$HOME\" && ".repeat(1 << 15);
    let distinct: Vec<String> = (0..100_000).map(|i| format!("rm -f /tmp/f{i}")).collect();
    let inputs = [
        distinct.join(" && "),
        "a\0b".to_string(),
        // Each closing level copies its source text into the outer word: the depth
        // bound keeps this linear in the input.
        format!(
            "{}{}{}",
            "$(".repeat(31),
            "x ".repeat(1 << 19),
            ")".repeat(31)
        ),
        format!("cat <<EOF\n{}\nEOF", "$(echo x) ".repeat(100_000)),
        "$(".repeat(10_000),
        format!("{}x{}", "$(".repeat(10_000), ")".repeat(10_000)),
        "`".repeat(10_001),
        "${".repeat(10_000),
        "(".repeat(100_000),
        big.clone(),
        "x".repeat(1 << 20),
        "'".repeat(1 << 20),
        "\\".repeat((1 << 20) + 1),
    ];
    // Speed is measured by the benches, not asserted here (shared machines are noisy);
    // a quadratic blow-up on these inputs would still show as a hung test.
    for input in &inputs {
        let a = khaelor_perm::analysis::lexer::analyze(input, &ctx);
        // Anything not fully read is obfuscated and asks for the whole text.
        if a.class == CommandClass::Obfuscated {
            assert!(a.always_patterns.is_empty());
            assert!(!a.requests.is_empty());
        }
    }
    assert!(big.len() >= 1 << 20);
}
