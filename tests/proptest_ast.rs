//! Properties of the AST engine over arbitrary input: it never panics; whenever the
//! lexer sees a substitution marker the AST engine offers no always pattern; a command
//! with a hardline hit never has always patterns; a fallback is always obfuscated.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use std::path::Path;

use khaelor_perm::analysis::{analyze, analyze_lexer};
use khaelor_perm::model::vocab::{AnalysisContext, CommandClass};
use khaelor_perm::shell::lexer;
use proptest::prelude::*;

fn ctx() -> (tempfile::TempDir, AnalysisContext) {
    let d = tempfile::tempdir().unwrap();
    let c = AnalysisContext::new(d.path(), None, Path::new("/home/tester")).unwrap();
    (d, c)
}

/// Shell-shaped input: words, quotes, operators, substitutions, redirects, wrappers.
fn shellish() -> impl Strategy<Value = String> {
    let atom = prop_oneof![
        Just("ls".to_string()),
        Just("rm".to_string()),
        Just("-rf".to_string()),
        Just("/".to_string()),
        Just("~".to_string()),
        Just("$HOME".to_string()),
        Just("sudo".to_string()),
        Just("bash -c".to_string()),
        Just("git push".to_string()),
        Just("--force".to_string()),
        Just("main".to_string()),
        Just("curl".to_string()),
        Just("$(".to_string()),
        Just(")".to_string()),
        Just("`".to_string()),
        Just("${".to_string()),
        Just("}".to_string()),
        Just("<(".to_string()),
        Just("'".to_string()),
        Just("\"".to_string()),
        Just("\\".to_string()),
        Just("&&".to_string()),
        Just("||".to_string()),
        Just(";".to_string()),
        Just("|".to_string()),
        Just("&".to_string()),
        Just(">".to_string()),
        Just(">>".to_string()),
        Just("2>&1".to_string()),
        Just("<<EOF\nx\nEOF".to_string()),
        Just("\n".to_string()),
        Just("cd ..".to_string()),
        Just("eval".to_string()),
        Just("x=1".to_string()),
        Just("{ ".to_string()),
        Just(" }".to_string()),
        Just("(".to_string()),
        Just("if".to_string()),
        Just("then".to_string()),
        Just("fi".to_string()),
        Just("*".to_string()),
        "[a-z./]{1,8}",
    ];
    prop::collection::vec(atom, 0..14).prop_map(|v| v.join(" "))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1500, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_strings_never_panic(s in "\\PC{0,200}") {
        let (_d, c) = ctx();
        let _ = analyze(&s, &c);
        let _ = analyze_lexer(&s, &c);
    }

    #[test]
    fn shellish_input_keeps_the_invariants(s in shellish()) {
        let (_d, c) = ctx();
        let a = analyze(&s, &c);
        if let Ok(lexed) = lexer::tokenize(&s)
            && lexed.has_substitution {
                prop_assert!(a.always_patterns.is_empty(), "substitution but patterns: {s:?} {:?}", a.always_patterns);
                prop_assert!(a.requests.iter().all(|r| r.always_patterns.is_empty()), "{s:?}");
            }
        if a.hardline.is_some() {
            prop_assert!(a.always_patterns.is_empty(), "hardline with patterns: {s:?}");
            prop_assert!(a.requests.iter().all(|r| r.always_patterns.is_empty()), "{s:?}");
        }
        if a.fallback.is_some() {
            prop_assert_eq!(a.class, CommandClass::Obfuscated);
            prop_assert!(a.always_patterns.is_empty());
        }
        if a.class != CommandClass::Simple {
            prop_assert!(a.always_patterns.is_empty(), "{s:?}");
        }
        let l = analyze_lexer(&s, &c);
        if l.hardline.is_some() {
            prop_assert!(a.hardline.is_some(), "lexer hardline but not AST: {s:?}");
        }
    }
}
