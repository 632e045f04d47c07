//! "Always allow" suggestion goldens (seed §3.3) from `fixtures/arity.jsonl`, and the
//! invariant that every suggested pattern matches the command it was made from.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod common;

use std::path::Path;

use khaelor_perm::analysis::arity;
use khaelor_perm::model::vocab::{AnalysisContext, collapse_whitespace};
use khaelor_perm::shell::lexer;
use serde::Deserialize;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Case {
    command: String,
    patterns: Vec<String>,
}

fn project() -> (tempfile::TempDir, AnalysisContext) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("scripts")).unwrap();
    std::fs::write(dir.path().join("scripts/build.sh"), "#!/bin/sh\n").unwrap();
    let ctx = AnalysisContext::new(dir.path(), None, Path::new("/home/tester")).unwrap();
    (dir, ctx)
}

/// The seed's wildcard: `*` matches any run of characters; no `*` means exact.
fn wildcard(pattern: &str, subject: &str) -> bool {
    let parts: Vec<&str> = pattern.split('*').collect();
    if parts.len() == 1 {
        return pattern == subject;
    }
    let (first, last) = (parts[0], parts[parts.len() - 1]);
    if !subject.starts_with(first) || subject.len() < first.len() + last.len() {
        return false;
    }
    let mut rest = &subject[first.len()..subject.len() - last.len()];
    if !subject.ends_with(last) {
        return false;
    }
    for mid in &parts[1..parts.len() - 1] {
        match rest.find(mid) {
            Some(i) => rest = &rest[i + mid.len()..],
            None => return false,
        }
    }
    true
}

#[test]
fn arity_table() {
    let (_dir, ctx) = project();
    let cases = common::load_table::<Case>("arity.jsonl");
    assert!(cases.len() >= 30, "the table lost cases");
    let mut failures = Vec::new();
    for (line, case) in &cases {
        let lexed = lexer::tokenize(&case.command)
            .unwrap_or_else(|e| panic!("line {line}: {:?} does not lex: {e}", case.command));
        assert_eq!(
            lexed.words.len(),
            1,
            "line {line}: {:?} is not one command",
            case.command
        );
        let words = &lexed.words[0];
        let got = arity::suggest(words, Some(ctx.cwd()), &ctx);
        if got != case.patterns {
            failures.push(format!(
                "line {line}: {:?}: got {got:?}, want {:?}",
                case.command, case.patterns
            ));
        }
        let subject = collapse_whitespace(&words.join(" "));
        for p in &got {
            if !wildcard(p, &subject) {
                failures.push(format!(
                    "line {line}: pattern {p:?} does not match {subject:?}"
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
fn the_lexer_engine_offers_the_same_patterns_for_simple_commands_only() {
    let (_dir, ctx) = project();
    let simple = khaelor_perm::analysis::lexer::analyze("git push origin main", &ctx);
    assert_eq!(simple.always_patterns, vec!["git push *"]);
    for compound in [
        "git push origin main && ls",
        "git push origin $(git branch --show-current)",
    ] {
        let a = khaelor_perm::analysis::lexer::analyze(compound, &ctx);
        assert!(a.always_patterns.is_empty(), "{compound}");
        assert!(
            a.requests.iter().all(|r| r.always_patterns.is_empty()),
            "{compound}"
        );
    }
}

#[test]
fn project_path_depends_on_cwd() {
    let (dir, ctx) = project();
    let words: Vec<String> = ["./build.sh", "--prod"].map(String::from).to_vec();
    let scripts = dir.path().canonicalize().unwrap().join("scripts");
    assert_eq!(
        arity::suggest(&words, Some(&scripts), &ctx),
        vec!["./build.sh *"]
    );
    // Unknown cwd: the path cannot be shown to be inside, so only the exact command.
    assert_eq!(
        arity::suggest(&words, None, &ctx),
        vec!["./build.sh --prod"]
    );
}

#[test]
fn wildcard_helper_is_the_seed_semantics() {
    assert!(wildcard("git push *", "git push origin main"));
    assert!(wildcard("ls *", "ls "));
    assert!(!wildcard("git push *", "git pushx"));
    assert!(wildcard("a*b*c", "aXbYc"));
    assert!(!wildcard("a*b*c", "aXc"));
    assert!(!wildcard("npm run dev", "npm run dev2"));
}
