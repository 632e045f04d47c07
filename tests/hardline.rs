//! Hardline floor goldens (seed §4.2) from `fixtures/hardline.jsonl`, run through both
//! engines (`analyze_lexer` and the AST engine's `analyze`): a hit must fire on each,
//! a non-hit must fire on neither, and a hit leaves no "always" pattern anywhere.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod common;

use std::path::Path;

use khaelor_perm::analysis;
use khaelor_perm::floor::{self, HARDLINE_RISK_NOTE};
use khaelor_perm::model::vocab::{Analysis, AnalysisContext};
use serde::Deserialize;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Case {
    command: String,
    hit: bool,
    #[serde(default)]
    rule: Option<String>,
    /// The AST engine's rule where it differs: it reads `$HOME` as the home it holds
    /// when nothing in the command can set it, so `rm -rf $HOME` is `rm -rf ~` there.
    #[serde(default, rename = "astRule")]
    ast_rule: Option<String>,
}

fn ctx() -> (tempfile::TempDir, AnalysisContext) {
    let dir = tempfile::tempdir().unwrap();
    let ctx = AnalysisContext::new(dir.path(), None, Path::new("/home/tester")).unwrap();
    (dir, ctx)
}

fn verdict(engine: &str, a: &Analysis, case: &Case) -> Vec<String> {
    let mut out = Vec::new();
    match (&a.hardline, case.hit) {
        (Some(h), true) => {
            let want = match engine {
                "ast" => case.ast_rule.as_ref().or(case.rule.as_ref()),
                _ => case.rule.as_ref(),
            };
            if let Some(rule) = want
                && &h.rule != rule
            {
                out.push(format!("{engine}: rule {:?}, want {rule:?}", h.rule));
            }
            if !a.always_patterns.is_empty()
                || a.requests.iter().any(|r| !r.always_patterns.is_empty())
            {
                out.push(format!("{engine}: a hit still offers always patterns"));
            }
            if !a.risk_notes.iter().any(|n| n == HARDLINE_RISK_NOTE) {
                out.push(format!("{engine}: the floor's risk note is missing"));
            }
        }
        (None, false) => {}
        (got, _) => out.push(format!("{engine}: hardline {got:?}, want hit={}", case.hit)),
    }
    out
}

#[test]
fn hardline_table_on_both_engines() {
    let (_dir, ctx) = ctx();
    let cases = common::load_table::<Case>("hardline.jsonl");
    assert!(cases.len() >= 60, "the table lost cases");
    assert!(cases.iter().any(|(_, c)| c.hit) && cases.iter().any(|(_, c)| !c.hit));
    let mut failures = Vec::new();
    for (line, case) in &cases {
        let lexer = analysis::analyze_lexer(&case.command, &ctx);
        let ast = analysis::analyze(&case.command, &ctx);
        for problem in verdict("lexer", &lexer, case)
            .into_iter()
            .chain(verdict("ast", &ast, case))
        {
            failures.push(format!("line {line}: {:?}: {problem}", case.command));
        }
    }
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn the_floor_on_the_lexer_reading_agrees_with_the_table() {
    // The floor on the lexer's IR alone (what the AST engine also consults, and all
    // that is left when it falls back).
    let (_dir, ctx) = ctx();
    let mut failures = Vec::new();
    for (line, case) in common::load_table::<Case>("hardline.jsonl") {
        let got = analysis::lexer::floor(&case.command, &ctx);
        if got.is_some() != case.hit {
            failures.push(format!(
                "line {line}: {:?}: the lexer's floor {got:?}",
                case.command
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn rendering_is_de_obfuscated() {
    let (_dir, ctx) = ctx();
    let words = |s: &str| -> Vec<String> { s.split(' ').map(String::from).collect() };
    assert_eq!(floor::render(&words("rm -rf \"//.\""), &ctx), "rm -rf /");
    assert_eq!(
        floor::render(&words("rm -rf $HOME/"), &ctx),
        "rm -rf /home/tester"
    );
    assert_eq!(
        floor::render(&words("rm  -rf ~/a/../*"), &ctx),
        "rm -rf /home/tester/*"
    );
    let hit = analysis::lexer::floor("sudo rm -fr //", &ctx).unwrap();
    assert_eq!(hit.rule, "rm -rf /");
    assert_eq!(hit.rendering, "rm -fr /");
}

#[test]
fn fork_bomb_shapes_on_both_readings() {
    // The fork bomb is a called function whose body calls itself unconditionally in a
    // pipeline or in the background: every call forks more calls that stay alive. Both
    // engines lower function definitions, pipelines, `&` and conditions into the IR
    // the floor reads.
    let (_dir, ctx) = ctx();
    for (text, bomb) in [
        (":(){ :|:& };:", true),
        (":(){:|:&};:", true),
        ("bomb() { bomb | bomb & }; bomb", true),
        ("function f { f|f& }\nf", true),
        // Runs itself in the background once per call: an endless spawner, denied too.
        ("f(){ f|g& };f", true),
        // A pipeline stage is a forked subshell that waits for the next level's: an
        // endless chain of live processes.
        ("f(){ f|g; };f", true),
        ("f(){ while f|f; do :; done; };f", true),
        // Recursion that forks nothing ends at bash's limits; a conditional one can end.
        (
            "fib(){ [ $1 -lt 2 ] && return; fib $(($1-1)); fib $(($1-2)); }; fib 5",
            false,
        ),
        ("f(){ f; f; };f", false),
        (
            "walk(){ for d in \"$1\"/*/; do walk \"$d\" & done; wait; }; walk .",
            false,
        ),
        ("f(){ [ $1 -gt 0 ] && f $(($1-1)) & };f 3", false),
        ("f(){ if [ -d x ]; then f|f& fi; };f", false),
        ("f(){ g|g& };f", false),
        ("echo '{ a | b & }'", false),
        // Data, not code: quoted, escaped or commented.
        ("echo ':(){ :|:& };:' >> notes.md", false),
        ("git commit -m \":(){ :|:& };:\"", false),
        ("ls # :(){ :|:& };:", false),
    ] {
        let lexer = analysis::lexer::floor(text, &ctx).is_some();
        let ast = analysis::analyze(text, &ctx).hardline.is_some();
        assert_eq!((lexer, ast), (bomb, bomb), "{text}");
    }
}

#[test]
fn redirect_targets() {
    let (_dir, ctx) = ctx();
    for t in [
        "/dev/sda",
        "/dev/sdb1",
        "/dev/nvme0n1p2",
        "/dev/hda",
        "/dev/vda",
        "/dev/xvda",
        "/dev/mmcblk0",
        "/dev/disk3",
        "/dev//sda",
    ] {
        assert!(floor::check_redirect_target(t, &ctx).is_some(), "{t}");
    }
    for t in [
        "/dev/null",
        "/dev/stderr",
        "/dev/tty",
        "sda",
        "./dev/sda",
        "/tmp/sda",
        "$X",
    ] {
        assert!(floor::check_redirect_target(t, &ctx).is_none(), "{t}");
    }
}
