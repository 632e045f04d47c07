//! Bad input never panics or overflows the stack: empty and whitespace-only commands,
//! NUL bytes, a 1 MiB command, 10,000 nested `$( )`, unbalanced quotes, deep nesting of
//! every construct. Each gets an analysis that is at most "ask"-shaped (a fallback or
//! an obfuscated class) or, for empty input, no requests.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use std::path::Path;

use khaelor_perm::analysis::{analyze, analyze_lexer};
use khaelor_perm::model::vocab::{AnalysisContext, CommandClass, EngineKind, FallbackReason};

fn ctx(dir: &tempfile::TempDir) -> AnalysisContext {
    AnalysisContext::new(dir.path(), None, Path::new("/home/tester")).unwrap()
}

#[test]
fn empty_and_whitespace_commands_ask_for_nothing() {
    let d = tempfile::tempdir().unwrap();
    let c = ctx(&d);
    for cmd in ["", " ", "\t\n  \n", "# only a comment"] {
        for a in [analyze(cmd, &c), analyze_lexer(cmd, &c)] {
            assert!(a.always_patterns.is_empty(), "{cmd:?}: {a:#?}");
            assert!(a.hardline.is_none(), "{cmd:?}");
        }
    }
}

#[test]
fn nul_bytes_fall_back_and_stay_unreadable() {
    let d = tempfile::tempdir().unwrap();
    let a = analyze("ls\0 -la", &ctx(&d));
    assert_eq!(a.engine, EngineKind::Lexer);
    assert_eq!(a.class, CommandClass::Obfuscated);
    assert!(a.always_patterns.is_empty());
    assert!(a.fallback.is_some());
}

#[test]
fn a_one_mebibyte_command_falls_back_as_too_large() {
    let d = tempfile::tempdir().unwrap();
    let cmd = format!("echo {}", "a".repeat(1 << 20));
    let a = analyze(&cmd, &ctx(&d));
    assert_eq!(a.engine, EngineKind::Lexer);
    assert_eq!(
        a.fallback.as_ref().map(|f| f.reason),
        Some(FallbackReason::TooLarge)
    );
    assert!(a.always_patterns.is_empty());
    let _ = analyze_lexer(&cmd, &ctx(&d));
}

#[test]
fn ten_thousand_nested_substitutions_do_not_overflow() {
    let d = tempfile::tempdir().unwrap();
    let cmd = format!("echo {}x{}", "$(".repeat(10_000), ")".repeat(10_000));
    let a = analyze(&cmd, &ctx(&d));
    assert_eq!(a.class, CommandClass::Obfuscated);
    assert!(a.always_patterns.is_empty());
    let l = analyze_lexer(&cmd, &ctx(&d));
    assert_eq!(l.class, CommandClass::Obfuscated);
}

#[test]
fn deep_nesting_of_every_construct_is_bounded() {
    let d = tempfile::tempdir().unwrap();
    let c = ctx(&d);
    let shapes = [
        format!("{}ls{}", "(".repeat(5_000), ")".repeat(5_000)),
        format!("{}ls{}", "{ ".repeat(3_000), "; }".repeat(3_000)),
        format!(
            "{}ls{}",
            "if true; then ".repeat(2_000),
            "; fi".repeat(2_000)
        ),
        format!("echo {}x{}", "\"$(echo ".repeat(3_000), ")\"".repeat(3_000)),
        format!("echo {}x{}", "${a:-".repeat(5_000), "}".repeat(5_000)),
        format!("echo {}", "`".repeat(10_001)),
    ];
    for cmd in &shapes {
        let a = analyze(cmd, &c);
        assert_ne!(a.class, CommandClass::Simple, "{}", &cmd[..40]);
        assert!(a.always_patterns.is_empty());
    }
}

#[test]
fn unbalanced_quotes_fall_back_to_the_lexer() {
    let d = tempfile::tempdir().unwrap();
    let c = ctx(&d);
    for cmd in [
        "echo \"unterminated",
        "echo 'open",
        "ls )",
        "if then fi",
        "echo $(",
        "cat <<",
    ] {
        let a = analyze(cmd, &c);
        assert_eq!(a.engine, EngineKind::Lexer, "{cmd}: {a:#?}");
        assert_eq!(a.class, CommandClass::Obfuscated, "{cmd}");
        assert_eq!(
            a.fallback.as_ref().map(|f| f.reason),
            Some(FallbackReason::ParseError),
            "{cmd}"
        );
        assert!(a.always_patterns.is_empty(), "{cmd}");
        assert!(
            a.requests.iter().all(|r| r.always_patterns.is_empty()),
            "{cmd}"
        );
        assert!(
            a.risk_notes
                .iter()
                .any(|n| n.contains("could not fully read")),
            "{cmd}"
        );
    }
}

/// tree-sitter-bash#337: a non-ASCII code point after `{` made the grammar's scanner
/// read out of bounds and crash the process. Every such input must now parse safely.
#[test]
fn non_ascii_input_cannot_crash_the_parser() {
    let d = tempfile::tempdir().unwrap();
    let c = ctx(&d);
    for cmd in [
        "{\u{31860}",
        "{ \u{31860}",
        "echo {\u{2013}1}",
        "{\u{10FFFF}",
        "ls é && cat ünï.txt",
        "echo '€' > ñ.txt",
    ] {
        let a = analyze(cmd, &c);
        let _ = analyze_lexer(cmd, &c);
        let _ = khaelor_perm::analysis::ast::parse(cmd);
        assert!(a.hardline.is_none());
    }
    let a = analyze("cat ünï.txt > ñ.txt", &c);
    assert_eq!(a.engine, EngineKind::Ast, "{a:#?}");
    let write = a
        .requests
        .iter()
        .find(|r| r.capability.as_str() == "file.write.project")
        .unwrap();
    assert!(write.subject.ends_with("/ñ.txt"), "{}", write.subject);
}
