//! The static partial evaluator, end to end: each category's attack is read
//! (floor hit, risk note saying where the value came from) and its harmless look-alike
//! keeps its decision (fixtures/evaluator.jsonl); over a set of obfuscated floor
//! actions (fixtures/evaluator_floor.jsonl) the floor denies at least 90% and every one
//! is at least ask, under the defaults and under a project that allows everything.
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
    category: u8,
    command: String,
    decision: Action,
    hardline: bool,
    #[serde(default)]
    note: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct FloorCase {
    command: String,
}

fn decide_one(command: &str, policy: &Policy, ctx: &AnalysisContext) -> (Action, bool) {
    let call = map_call("bash", &serde_json::json!({ "command": command }), ctx).unwrap();
    let d = decide(policy, &[], &call, ctx, true);
    (d.decision, d.hardline.is_some())
}

#[test]
fn every_category_reads_the_attack_and_keeps_the_look_alike() {
    let w = common::world(false, &["src"]);
    let policy = common::load_trusted_policy(&w.root, &w.home, None);
    let ctx = AnalysisContext::new(&w.root, None, &w.home).unwrap();
    let table: Vec<(usize, Case)> = common::load_table("evaluator.jsonl");
    let cats: std::collections::BTreeSet<u8> = table.iter().map(|(_, c)| c.category).collect();
    assert_eq!(
        cats.into_iter().collect::<Vec<_>>(),
        (1..=10).collect::<Vec<u8>>()
    );
    let mut failures = Vec::new();
    for (line, case) in &table {
        let tag = format!(
            "line {line} (category {}) {:?}",
            case.category, case.command
        );
        let (decision, hit) = decide_one(&case.command, &policy, &ctx);
        if decision != case.decision || hit != case.hardline {
            failures.push(format!(
                "{tag}: expected {} (hardline {}), got {decision} (hardline {hit})",
                case.decision, case.hardline
            ));
        }
        if let Some(note) = &case.note {
            let a = analyze(&case.command, &ctx);
            if !a.risk_notes.iter().any(|n| n.contains(note.as_str())) {
                failures.push(format!(
                    "{tag}: no risk note with {note:?}: {:?}",
                    a.risk_notes
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

fn floor_share(allow_all: bool) {
    let w = common::world(allow_all, &["src"]);
    let policy = common::load_trusted_policy(&w.root, &w.home, None);
    let ctx = AnalysisContext::new(&w.root, None, &w.home).unwrap();
    let table: Vec<(usize, FloorCase)> = common::load_table("evaluator_floor.jsonl");
    assert!(table.len() >= 50, "the floor set has {} rows", table.len());
    let mut denied = 0usize;
    let mut not_denied = Vec::new();
    for (line, case) in &table {
        let (decision, hit) = decide_one(&case.command, &policy, &ctx);
        assert_ne!(
            decision,
            Action::Allow,
            "line {line} {:?} is allowed (allow-all project: {allow_all})",
            case.command
        );
        if decision == Action::Deny && hit {
            denied += 1;
        } else {
            not_denied.push(format!("line {line} {:?}: {decision}", case.command));
        }
    }
    let share = denied * 100 / table.len();
    assert!(
        denied * 10 >= table.len() * 9,
        "the floor denies {denied} of {} ({share}%); not denied:\n{}",
        table.len(),
        not_denied.join("\n")
    );
}

#[test]
fn the_floor_denies_nine_in_ten_obfuscated_floor_actions_under_the_defaults() {
    floor_share(false);
}

#[test]
fn the_floor_denies_nine_in_ten_obfuscated_floor_actions_under_allow_all() {
    floor_share(true);
}
