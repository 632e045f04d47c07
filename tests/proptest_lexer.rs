//! Properties of the lexer engine over arbitrary input: it never panics, a hardline hit
//! never carries an "always" pattern, compound and obfuscated commands never do either,
//! and every suggested pattern matches the command it was made from (seed §3.3: never
//! more general than what was read).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use std::path::Path;
use std::sync::OnceLock;

use khaelor_perm::analysis::arity;
use khaelor_perm::model::vocab::{AnalysisContext, Capability, CommandClass, collapse_whitespace};
use khaelor_perm::shell::lexer;
use proptest::prelude::*;

/// A project that lives as long as the test binary (the context must outlive cases).
fn ctx() -> &'static AnalysisContext {
    static CTX: OnceLock<(tempfile::TempDir, AnalysisContext)> = OnceLock::new();
    &CTX.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("scripts")).unwrap();
        let ctx = AnalysisContext::new(dir.path(), None, Path::new("/home/tester")).unwrap();
        (dir, ctx)
    })
    .1
}

/// The seed's wildcard: `*` matches any run of characters; no `*` means exact.
fn wildcard(pattern: &str, subject: &str) -> bool {
    let parts: Vec<&str> = pattern.split('*').collect();
    if parts.len() == 1 {
        return pattern == subject;
    }
    let (first, last) = (parts[0], parts[parts.len() - 1]);
    if !subject.starts_with(first)
        || !subject.ends_with(last)
        || subject.len() < first.len() + last.len()
    {
        return false;
    }
    let mut rest = &subject[first.len()..subject.len() - last.len()];
    for mid in &parts[1..parts.len() - 1] {
        match rest.find(mid) {
            Some(i) => rest = &rest[i + mid.len()..],
            None => return false,
        }
    }
    true
}

/// Shell-ish fragments: commands the tables know, floor material, quotes, operators,
/// substitutions and escapes, glued together without separators half of the time.
fn shellish() -> impl Strategy<Value = String> {
    let token = prop_oneof![
        Just("git"),
        Just("push"),
        Just("-f"),
        Just("origin"),
        Just("main"),
        Just("npm"),
        Just("run"),
        Just("dev"),
        Just("rm"),
        Just("-rf"),
        Just("/"),
        Just("~"),
        Just("$HOME"),
        Just("sudo"),
        Just("bash"),
        Just("-c"),
        Just("eval"),
        Just("python"),
        Just("-e"),
        Just("./scripts/build.sh"),
        Just("curl"),
        Just("*"),
        Just("''"),
        Just("'"),
        Just("\""),
        Just("\\"),
        Just("$("),
        Just(")"),
        Just("("),
        Just("`"),
        Just("${"),
        Just("}"),
        Just("{"),
        Just("$'\\x2f'"),
        Just("&&"),
        Just("||"),
        Just(";"),
        Just("|"),
        Just("&"),
        Just(">"),
        Just("2>&1"),
        Just("<("),
        Just("\n"),
        Just(" "),
        Just("\t"),
        Just("#"),
        Just("="),
        Just("FOO=1"),
        Just(":(){ :|:& };:"),
        Just("mkfs"),
        Just("dd"),
        Just("of=/dev/sda"),
        Just("\u{0}"),
        Just("é"),
    ];
    let piece = prop_oneof![
        4 => token.prop_map(String::from),
        1 => "[a-z./-]{1,6}",
    ];
    (prop::collection::vec(piece, 0..24), any::<bool>()).prop_map(|(pieces, spaced)| {
        if spaced {
            pieces.join(" ")
        } else {
            pieces.concat()
        }
    })
}

fn check_analysis(command: &str) -> Result<(), TestCaseError> {
    let a = khaelor_perm::analysis::lexer::analyze(command, ctx());
    let patterns_anywhere =
        !a.always_patterns.is_empty() || a.requests.iter().any(|r| !r.always_patterns.is_empty());
    if a.hardline.is_some() {
        prop_assert!(!patterns_anywhere, "hardline hit with patterns: {a:?}");
    }
    if a.class != CommandClass::Simple {
        prop_assert!(!patterns_anywhere, "{:?} with patterns: {a:?}", a.class);
    }
    if a.class == CommandClass::Obfuscated {
        prop_assert!(
            a.requests
                .iter()
                .any(|r| r.capability == Capability::ProcessExecute
                    && r.subject == collapse_whitespace(command)),
            "obfuscated without a whole-command request: {a:?}"
        );
    }
    for r in a
        .requests
        .iter()
        .filter(|r| r.capability == Capability::ProcessExecute)
    {
        for p in &r.always_patterns {
            prop_assert!(
                wildcard(p, &r.subject),
                "{p:?} does not match {:?}",
                r.subject
            );
        }
    }
    if !command.trim().is_empty() && a.hardline.is_none() {
        prop_assert!(
            !a.requests.is_empty(),
            "a non-empty command with no request: {a:?}"
        );
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1024))]

    #[test]
    fn analyze_holds_on_shellish_input(command in shellish()) {
        check_analysis(&command)?;
    }

    #[test]
    fn analyze_holds_on_arbitrary_strings(command in any::<String>()) {
        check_analysis(&command)?;
    }

    #[test]
    fn tokenize_then_analyze_agree_on_failure(command in shellish()) {
        if lexer::tokenize(&command).is_err() {
            prop_assert_eq!(khaelor_perm::analysis::lexer::analyze(&command, ctx()).class, CommandClass::Obfuscated);
        }
    }

    #[test]
    fn arity_patterns_match_their_command(
        words in prop::collection::vec(
            prop_oneof![
                3 => "[a-z]{1,5}",
                1 => "-[a-z]{1,3}",
                1 => Just("*".to_string()),
                1 => Just("".to_string()),
                1 => Just("a  b".to_string()),
                1 => Just(" ".to_string()),
                1 => prop::sample::select(vec!["git", "npm", "run", "docker", "compose", "gh", "./scripts/x.sh", "python", "-c", "exec", "node"]).prop_map(String::from),
            ],
            0..8,
        )
    ) {
        let patterns = arity::suggest(&words, Some(ctx().cwd()), ctx());
        let subject = collapse_whitespace(&words.join(" "));
        prop_assert!(patterns.len() <= 1);
        for p in &patterns {
            prop_assert!(wildcard(p, &subject), "{p:?} does not match {subject:?} ({words:?})");
            // A pattern never widens a prefix word: its words before ` *` are the
            // command's own first words.
            let fixed: Vec<&str> = p.trim_end_matches(" *").split(' ').collect();
            prop_assert_eq!(&fixed[..], &subject.split(' ').collect::<Vec<_>>()[..fixed.len()]);
        }
    }
}
