//! The verified read-only programs, end to end (fixtures/readonly.jsonl).
//! Each row goes through the bash tool mapping and the AST analysis: its
//! `process.execute` request carries `verified = readOnly` exactly when the row says
//! so, and a verified row is allowed under the `recommended` default and asks under
//! `strict` unless a seed default allows it by name. Every program the table knows has
//! a safe row and (those with options) an unsafe one.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod common;

use std::collections::BTreeSet;

use khaelor_perm::model::vocab::{AnalysisContext, Capability};
use khaelor_perm::policy::decide::decide;
use khaelor_perm::policy::presets::Preset;
use khaelor_perm::policy::rules::{Action, RuleSource};
use khaelor_perm::tools::map_call;
use serde::Deserialize;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Case {
    program: String,
    command: String,
    verified: bool,
}

#[test]
fn verified_programs_safe_and_unsafe_options() {
    let tmp = tempfile::tempdir().unwrap();
    let base = std::fs::canonicalize(tmp.path()).unwrap();
    let root = base.join("proj");
    let home = base.join("home");
    std::fs::create_dir_all(root.join("src")).unwrap();
    std::fs::create_dir_all(&home).unwrap();
    for f in ["a.txt", "b.txt", "src/a.rs", "a.yaml"] {
        std::fs::write(root.join(f), "a: 1\n").unwrap();
    }
    std::fs::write(root.join("package.json"), "{\"name\":\"x\"}").unwrap();
    let ctx = AnalysisContext::new(&root, None, &home).unwrap();
    let recommended = common::load_trusted_policy(&root, &home, None);
    assert_eq!(recommended.preset(), Preset::Recommended);
    let strict = common::load_trusted_policy_preset(&root, &home, Preset::Strict);
    let table: Vec<(usize, Case)> = common::load_table("readonly.jsonl");
    let mut failures = Vec::new();
    let mut safe: BTreeSet<String> = BTreeSet::new();
    let mut unsafe_: BTreeSet<String> = BTreeSet::new();
    for (line, case) in &table {
        if case.verified {
            safe.insert(case.program.clone());
        } else {
            unsafe_.insert(case.program.clone());
        }
        let call = map_call(
            "bash",
            &serde_json::json!({ "command": case.command }),
            &ctx,
        )
        .unwrap_or_else(|e| panic!("line {line}: {e}"));
        let marked = call
            .requests
            .iter()
            .filter(|r| r.capability == Capability::ProcessExecute)
            .all(|r| r.verdict == Some(khaelor_perm::model::vocab::Verdict::ReadOnly));
        if marked != case.verified {
            failures.push(format!(
                "line {line} `{}`: verified {marked}, want {}",
                case.command, case.verified
            ));
            continue;
        }
        let d = decide(&recommended, &[], &call, &ctx, true);
        if case.verified && d.decision != Action::Allow {
            failures.push(format!(
                "line {line} `{}`: verified but {} under recommended: {:?}",
                case.command,
                d.decision,
                d.requests
                    .iter()
                    .map(|r| (r.decision, r.request.subject.clone()))
                    .collect::<Vec<_>>()
            ));
        }
        // Under strict, no preset rule decides anything.
        let s = decide(&strict, &[], &call, &ctx, true);
        if s.requests.iter().any(|r| {
            r.rule
                .as_ref()
                .is_some_and(|x| x.source == RuleSource::Preset)
        }) {
            failures.push(format!(
                "line {line} `{}`: a preset rule under strict",
                case.command
            ));
        }
        if !case.verified
            && d.requests.iter().any(|r| {
                r.rule
                    .as_ref()
                    .is_some_and(|x| x.source == RuleSource::Preset)
            })
        {
            failures.push(format!(
                "line {line} `{}`: not verified but allowed by the preset",
                case.command
            ));
        }
    }
    let no_options = ["echo", "true", "false", ":", "test"];
    for name in khaelor_perm::programs::readonly::names() {
        if !safe.contains(name) {
            failures.push(format!("`{name}` has no safe row"));
        }
        if !no_options.contains(&name) && !unsafe_.contains(name) {
            failures.push(format!("`{name}` has no unsafe row"));
        }
    }
    assert!(unsafe_.contains("environment"));
    assert!(table.len() >= 200, "only {} rows", table.len());
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
