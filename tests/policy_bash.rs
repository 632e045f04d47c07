//! Bash decisions end to end (tool mapping -> analysis -> rules -> decision), table
//! fixtures/policy_bash.jsonl, run twice: under the defaults, and with a project config
//! that allows everything (fixtures/configs/allow_all.json), where the hardline floor,
//! obfuscation and self-protection must still hold. Needs the bash engines from main.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod common;

use khaelor_perm::model::vocab::AnalysisContext;
use khaelor_perm::policy::config::Policy;
use khaelor_perm::policy::decide::decide;
use khaelor_perm::policy::rules::Action;
use khaelor_perm::presentation::messages::HARDLINE_NOTE;
use khaelor_perm::tools::map_call;
use serde::Deserialize;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Case {
    command: String,
    decision: Action,
    allow_all: Action,
    /// Under the `strict` preset (today's defaults), when it differs from `decision`
    /// (the `recommended` default): verified read-only commands ask there.
    #[serde(default)]
    strict: Option<Action>,
    #[serde(default)]
    hardline: bool,
    /// The kinds of typed reasons on the call's requests under allow-all, as a set.
    #[serde(default)]
    allow_all_reasons: Option<Vec<String>>,
}

fn run(allow_all: bool) {
    run_preset(allow_all, false);
}

fn run_preset(allow_all: bool, strict: bool) {
    let w = common::world(allow_all, &[".git/hooks", "src"]);
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
    let table: Vec<(usize, Case)> = common::load_table("policy_bash.jsonl");
    assert!(table.len() >= 60, "the table has {} commands", table.len());
    let mut failures = Vec::new();
    for (line, case) in &table {
        let want = if allow_all {
            case.allow_all
        } else if strict {
            case.strict.unwrap_or(case.decision)
        } else {
            case.decision
        };
        let input = serde_json::json!({ "command": case.command });
        let outcome = std::panic::catch_unwind(|| {
            let call = map_call("bash", &input, &ctx).map_err(|e| e.to_string())?;
            Ok::<_, String>(decide(&policy, &[], &call, &ctx, true))
        });
        let d = match outcome {
            Ok(Ok(d)) => d,
            Ok(Err(e)) => {
                failures.push(format!("line {line} `{}`: mapping error {e}", case.command));
                continue;
            }
            Err(_) => {
                failures.push(format!(
                    "line {line} `{}`: panicked (engine not landed?)",
                    case.command
                ));
                continue;
            }
        };
        if d.decision != want {
            let reqs: Vec<String> = d
                .requests
                .iter()
                .map(|r| {
                    format!(
                        "{} {} {:?} -> {} by {}",
                        r.decision,
                        r.request.capability,
                        r.request.subject,
                        r.decision,
                        r.rule
                            .as_ref()
                            .map_or("no rule".to_string(), |x| x.describe())
                    )
                })
                .collect();
            failures.push(format!(
                "line {line} `{}`: expected {want}, got {}\n      {}",
                case.command,
                d.decision,
                reqs.join("\n      ")
            ));
            continue;
        }
        if case.hardline {
            let ok = d.hardline.is_some()
                && d.message
                    .as_deref()
                    .is_some_and(|m| m.contains(HARDLINE_NOTE));
            if !ok {
                failures.push(format!(
                    "line {line} `{}`: denied but not by the hardline floor: {:?}",
                    case.command, d.message
                ));
            }
        }
        if let Some(want) = case.allow_all_reasons.as_ref().filter(|_| allow_all) {
            let mut got: Vec<String> = d
                .requests
                .iter()
                .flat_map(|r| r.reasons.iter())
                .filter_map(|r| serde_json::to_value(r).ok())
                .filter_map(|v| v.get("kind").and_then(|k| k.as_str()).map(String::from))
                .collect();
            got.sort();
            got.dedup();
            let mut want = want.clone();
            want.sort();
            if got != want {
                failures.push(format!(
                    "line {line} `{}`: reasons {got:?}, expected {want:?}",
                    case.command
                ));
            }
        }
        if d.decision == Action::Ask && d.panel.is_none() {
            failures.push(format!(
                "line {line} `{}`: an ask without a panel",
                case.command
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} commands failed ({}):\n{}",
        failures.len(),
        table.len(),
        if allow_all {
            "allow-all project config"
        } else if strict {
            "strict preset"
        } else {
            "defaults (recommended preset)"
        },
        failures.join("\n")
    );
}

#[test]
fn bash_decisions_under_the_defaults() {
    run(false);
}

#[test]
fn bash_decisions_under_the_strict_preset() {
    run_preset(false, true);
}

#[test]
fn bash_decisions_with_a_project_rule_allowing_everything() {
    run(true);
}
