//! The attack classes where a naive reading of bash differs from bash's, end to end, both directions (fixtures/soundness.jsonl): the
//! command bash would turn into something else, and the harmless look-alike that must
//! stay allowed or off the floor. Each row is decided under the defaults and under a
//! project config that allows everything; the programs bash runs must be parts of the
//! analysis; where a row says so, no always pattern is offered.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod common;

use khaelor_perm::analysis::analyze;
use khaelor_perm::model::vocab::AnalysisContext;
use khaelor_perm::policy::config::Policy;
use khaelor_perm::policy::decide::decide;
use khaelor_perm::policy::rules::Action;
use khaelor_perm::tools::map_call;
use serde::Deserialize;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Case {
    class: u8,
    command: String,
    decision: Action,
    allow_all: Action,
    /// Under the `strict` preset when it differs from `decision` (the `recommended`
    /// default, where verified read-only commands run without asking).
    #[serde(default)]
    strict: Option<Action>,
    #[serde(default)]
    hardline: bool,
    #[serde(default)]
    runs: Vec<String>,
    #[serde(default)]
    no_always: bool,
}

fn basename(w: &str) -> &str {
    w.rsplit('/').next().unwrap_or(w)
}

fn run(allow_all: bool) {
    run_preset(allow_all, false);
}

fn run_preset(allow_all: bool, strict: bool) {
    let w = common::world(allow_all, &["src", "build"]);
    // The allow-all project file is the user's own here: trusted.
    let policy: Policy = if strict {
        common::load_trusted_policy_preset(
            &w.root,
            &w.home,
            khaelor_perm::policy::presets::Preset::Strict,
        )
    } else {
        common::load_trusted_policy(&w.root, &w.home, None)
    };
    assert!(policy.errors().is_empty(), "{:?}", policy.errors());
    let ctx = AnalysisContext::new(&w.root, None, &w.home).unwrap();
    let table: Vec<(usize, Case)> = common::load_table("soundness.jsonl");
    let classes: std::collections::BTreeSet<u8> = table.iter().map(|(_, c)| c.class).collect();
    assert_eq!(
        classes.into_iter().collect::<Vec<_>>(),
        vec![1, 2, 3, 5, 6, 11, 12, 13, 14, 15],
        "every class this table owns has rows"
    );
    let mut failures = Vec::new();
    for (line, case) in &table {
        let want = if allow_all {
            case.allow_all
        } else if strict {
            case.strict.unwrap_or(case.decision)
        } else {
            case.decision
        };
        let call = map_call(
            "bash",
            &serde_json::json!({ "command": case.command }),
            &ctx,
        )
        .unwrap_or_else(|e| panic!("line {line}: {e}"));
        let d = decide(&policy, &[], &call, &ctx, true);
        let tag = format!("line {line} (class {}) {:?}", case.class, case.command);
        if d.decision != want {
            failures.push(format!(
                "{tag}: expected {want}, got {}\n      {}",
                d.decision,
                common::requests_shown(&d)
            ));
        }
        if case.hardline != d.hardline.is_some() {
            failures.push(format!("{tag}: hardline {:?}", d.hardline));
        }
        let a = analyze(&case.command, &ctx);
        for prog in &case.runs {
            let found = a
                .parts
                .iter()
                .any(|p| p.words.first().is_some_and(|w| basename(w) == prog));
            if !found {
                failures.push(format!(
                    "{tag}: bash runs `{prog}`, the analysis has no such part: {:?}",
                    a.parts.iter().map(|p| &p.words).collect::<Vec<_>>()
                ));
            }
        }
        if case.no_always {
            let offered = !a.always_patterns.is_empty()
                || a.requests.iter().any(|r| !r.always_patterns.is_empty())
                || !d.always_patterns.is_empty();
            if offered {
                failures.push(format!(
                    "{tag}: offers an always pattern: {:?}",
                    d.always_patterns
                ));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} rows failed ({}):\n{}",
        failures.len(),
        table.len(),
        if allow_all {
            "allow-all"
        } else if strict {
            "strict"
        } else {
            "defaults"
        },
        failures.join("\n")
    );
}

#[test]
fn attack_classes_under_the_defaults() {
    run(false);
}

#[test]
fn attack_classes_under_the_strict_preset() {
    run_preset(false, true);
}

#[test]
fn attack_classes_with_a_project_rule_allowing_everything() {
    run(true);
}
