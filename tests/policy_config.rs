//! Config files for real (temp dirs): errors name file, line and column; a broken layer
//! never widens anything; the managed layer; rule examples; shadowed rules.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod common;

use std::path::{Path, PathBuf};

use khaelor_perm::model::vocab::{AnalysisContext, Capability, CapabilityRequest};
use khaelor_perm::policy::config::{ConfigError, Policy, config_files, parse_config};
use khaelor_perm::policy::decide::decide;
use khaelor_perm::policy::rules::{Action, RuleSource};
use khaelor_perm::tools::{MappedCall, map_call};
use pretty_assertions::assert_eq;

struct World {
    _tmp: tempfile::TempDir,
    base: PathBuf,
    root: PathBuf,
    home: PathBuf,
}

impl World {
    fn new() -> World {
        let tmp = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(tmp.path()).unwrap();
        let root = base.join("proj");
        let home = base.join("home");
        std::fs::create_dir_all(root.join(".khaelor")).unwrap();
        std::fs::create_dir_all(home.join(".khaelor")).unwrap();
        World {
            _tmp: tmp,
            base,
            root,
            home,
        }
    }

    fn project(&self, fixture: &str) -> PathBuf {
        let to = self.root.join(".khaelor/config.json");
        std::fs::copy(common::fixtures_dir().join("configs").join(fixture), &to).unwrap();
        to
    }

    fn project_text(&self, text: &str) -> PathBuf {
        let to = self.root.join(".khaelor/config.json");
        std::fs::write(&to, text).unwrap();
        to
    }

    fn user_text(&self, text: &str) -> PathBuf {
        let to = self.home.join(".khaelor/config.json");
        std::fs::write(&to, text).unwrap();
        to
    }

    fn managed(&self, fixture: &str) -> PathBuf {
        let to = self.base.join("managed.json");
        std::fs::copy(common::fixtures_dir().join("configs").join(fixture), &to).unwrap();
        to
    }

    fn ctx(&self) -> AnalysisContext {
        AnalysisContext::new(&self.root, None, &self.home).unwrap()
    }

    fn policy(&self, managed: Option<&Path>) -> Policy {
        common::load_trusted_policy(&self.root, &self.home, managed)
    }
}

/// A hand-made call standing in for the analysis of a one-part command.
fn exec_call(command: &str) -> MappedCall {
    MappedCall {
        tool: "bash".into(),
        requests: vec![CapabilityRequest::new(
            Capability::ProcessExecute,
            command,
            format!("Run {command}"),
        )],
        analysis: None,
        hardline: None,
        cwd: "/".into(),
        command: Some(command.into()),
    }
}

fn err(file: &Path, line: usize, column: usize, message: &str) -> ConfigError {
    ConfigError {
        file: file.display().to_string(),
        line,
        column,
        message: message.into(),
    }
}

fn read_decision(w: &World, policy: &Policy, path: &str) -> Action {
    let call = map_call("read", &serde_json::json!({ "path": path }), &w.ctx()).unwrap();
    decide(policy, &[], &call, &w.ctx(), true).decision
}

#[test]
fn syntax_error_names_file_and_position_and_caps_everything_at_ask() {
    let w = World::new();
    let file = w.project("syntax_error.json");
    let policy = w.policy(None);
    assert_eq!(policy.errors(), &[err(&file, 4, 25, "expected comma")]);
    assert_eq!(
        policy.errors()[0].to_string(),
        format!("{}:4:25: expected comma", file.display())
    );
    // Nothing of the broken file is used, and the defaults' allows become asks.
    assert!(
        policy
            .rules()
            .iter()
            .all(|r| matches!(r.source, RuleSource::Default | RuleSource::Preset))
    );
    let call = map_call("read", &serde_json::json!({"path": "README.md"}), &w.ctx()).unwrap();
    let d = decide(&policy, &[], &call, &w.ctx(), true);
    assert_eq!(d.decision, Action::Ask);
    assert!(d.always_patterns.is_empty());
    let note = d
        .risk_notes
        .iter()
        .find(|n| n.contains(&file.display().to_string()))
        .expect("a note naming the file");
    assert!(note.contains("line 4, column 25"), "{note}");
    assert!(d.panel.unwrap().risk_notes.contains(note));
}

#[test]
fn unknown_action_keeps_only_the_files_deny_rules() {
    let w = World::new();
    let file = w.project("unknown_action.json");
    let policy = w.policy(None);
    assert_eq!(
        policy.errors(),
        &[err(
            &file,
            6,
            12,
            "unknown action `alow`, expected `allow`, `contain`, `ask` or `deny`"
        )]
    );
    let kept: Vec<_> = policy
        .rules()
        .iter()
        .filter(|r| r.source == RuleSource::Project)
        .collect();
    assert_eq!(kept.len(), 1);
    assert_eq!(
        (kept[0].pattern.as_str(), kept[0].action),
        ("npm publish *", Action::Deny)
    );
    let ctx = w.ctx();
    assert_eq!(
        decide(&policy, &[], &exec_call("npm publish --tag x"), &ctx, true).decision,
        Action::Deny
    );
    // `git status` is allowed by the defaults, capped to ask while the file is broken.
    assert_eq!(
        decide(&policy, &[], &exec_call("git status"), &ctx, true).decision,
        Action::Ask
    );
}

#[test]
fn wrong_types_and_unknown_fields_are_errors_with_positions() {
    let w = World::new();
    let file = w.project("wrong_types.json");
    let policy = w.policy(None);
    assert_eq!(
        policy.errors(),
        &[
            err(
                &file,
                3,
                18,
                "`file.read` must be an action or an object of subject pattern to action, found a boolean"
            ),
            err(&file, 5, 7, "a rule must be an object, found a number"),
            err(
                &file,
                6,
                60,
                "unknown field `patern` in rule, expected `capability`, `pattern`, `action`, `match`, `allowAlways`, `expires` or `examples`"
            ),
            err(
                &file,
                7,
                23,
                "`capability` must be a string, found a number"
            ),
        ]
    );
    assert_eq!(read_decision(&w, &policy, "README.md"), Action::Ask);
}

#[test]
fn a_broken_user_file_caps_the_project_too() {
    let w = World::new();
    let user = w.user_text("{ \"permissions\": { \"file.raed\": \"allow\" } }");
    w.project_text("{ \"permissions\": { \"file.read\": \"allow\" } }");
    let policy = w.policy(None);
    assert_eq!(policy.errors().len(), 1);
    assert_eq!(policy.errors()[0].file, user.display().to_string());
    assert!(
        policy.errors()[0]
            .message
            .starts_with("capability `file.raed` names no capability"),
        "{}",
        policy.errors()[0]
    );
    assert_eq!(read_decision(&w, &policy, "README.md"), Action::Ask);
}

#[test]
fn duplicate_keys_and_loose_json5_are_errors() {
    let cases = [
        (
            "{\"permissions\": {\"file.read\": \"allow\", \"file.read\": \"deny\"}}",
            "duplicate key `file.read`",
        ),
        (
            "{\"permissions\": {file_read: \"allow\"}}",
            "expected string for object property",
        ),
        (
            "{\"permissions\": {'file.read': 'allow'}}",
            "single-quoted strings are not allowed",
        ),
        (
            "{\"permissions\": []}",
            "`permissions` must be an object, found an array",
        ),
        ("[1]", "config must be a JSON object"),
        (
            "{\"permissions\": {\"rules\": [{\"action\": \"allow\"}]}}",
            "rule is missing the field `capability`",
        ),
        (
            "{\"permissions\": {\"rules\": [{\"capability\": \"*\", \"pattern\": \"\", \"action\": \"allow\"}]}}",
            "empty subject pattern",
        ),
    ];
    for (text, want) in cases {
        let p = parse_config(text, "t.json", RuleSource::Project);
        assert!(
            p.errors.iter().any(|e| e.message == want),
            "{text}: {:?}",
            p.errors
        );
    }
}

#[test]
fn missing_and_empty_files_are_no_layer_but_a_missing_managed_file_is_an_error() {
    let w = World::new();
    assert!(w.policy(None).errors().is_empty());
    w.project_text("");
    w.user_text("// only a comment\n{ \"model\": \"x\" }");
    let policy = w.policy(None);
    assert!(policy.errors().is_empty(), "{:?}", policy.errors());
    assert!(
        policy
            .rules()
            .iter()
            .all(|r| matches!(r.source, RuleSource::Default | RuleSource::Preset))
    );
    let missing = w.base.join("nope.json");
    let policy = w.policy(Some(&missing));
    assert_eq!(policy.errors().len(), 1);
    assert_eq!(policy.errors()[0].file, missing.display().to_string());
    assert_eq!(read_decision(&w, &policy, "README.md"), Action::Ask);
}

#[test]
fn config_files_lists_what_load_policy_reads() {
    let files = config_files(Path::new("/p"), Path::new("/h"), Some(Path::new("/m.json")));
    assert_eq!(
        files,
        vec![
            PathBuf::from("/h/.khaelor/config.json"),
            PathBuf::from("/p/.khaelor/config.json"),
            PathBuf::from("/m.json")
        ]
    );
}

#[test]
fn an_expired_rule_is_skipped_and_a_bad_expiry_is_an_error() {
    let w = World::new();
    // One allow that expired yesterday-ish (a date long past), one that holds until
    // far in the future, and a later expired deny that must not shadow the live allow.
    w.project_text(
        r#"{ "permissions": { "rules": [
  { "capability": "process.execute", "pattern": "npm test", "action": "allow", "expires": "2001-02-03" },
  { "capability": "process.execute", "pattern": "make *", "action": "allow", "expires": "2999-12-31T23:00:00+01:00" },
  { "capability": "process.execute", "pattern": "make *", "action": "deny", "expires": "2001-02-03T04:05:06Z" }
] } }"#,
    );
    let policy = w.policy(None);
    assert_eq!(policy.errors(), &[]);
    let ctx = w.ctx();
    let npm = decide(&policy, &[], &exec_call("npm test"), &ctx, true);
    assert_eq!(
        npm.decision,
        Action::Ask,
        "an expired allow no longer allows"
    );
    let make = decide(&policy, &[], &exec_call("make build"), &ctx, true);
    assert_eq!(make.decision, Action::Allow, "the expired deny is skipped");
    let rule = make.requests[0].rule.clone().unwrap();
    assert_eq!(rule.expires.unwrap().as_str(), "2999-12-31T23:00:00+01:00");

    let file = w.project_text(
        r#"{ "permissions": { "rules": [
  { "capability": "process.execute", "pattern": "npm test", "action": "allow", "expires": "next week" }
] } }"#,
    );
    let policy = w.policy(None);
    assert_eq!(
        policy.errors(),
        &[err(
            &file,
            2,
            91,
            "`expires` must be a date (`2027-01-31`) or an RFC 3339 time with an offset (`2027-01-31T18:00:00Z`), found `next week`"
        )]
    );
    assert_eq!(
        decide(&policy, &[], &exec_call("npm test"), &ctx, true).decision,
        Action::Ask
    );
}

#[test]
fn a_date_expiry_holds_through_that_day_utc() {
    let day: khaelor_perm::policy::rules::Expiry = "2027-01-31".parse().unwrap();
    let end = "2027-02-01T00:00:00Z"
        .parse::<khaelor_perm::policy::rules::Expiry>()
        .unwrap();
    assert_eq!(day.at(), end.at());
    assert!(!day.passed(end.at() - 1));
    assert!(day.passed(end.at()));
    for bad in [
        "2027-02-30",
        "2027-1-31",
        "2027-01-31T10:00:00",
        "",
        "tomorrow",
    ] {
        assert!(
            bad.parse::<khaelor_perm::policy::rules::Expiry>().is_err(),
            "{bad}"
        );
    }
}

#[test]
fn project_rules_come_after_user_rules() {
    let w = World::new();
    w.user_text(
        r#"{ "permissions": { "process.execute": { "npm test": "allow", "make *": "deny" } } }"#,
    );
    w.project_text(
        r#"{ "permissions": { "process.execute": { "npm test": "deny", "make *": "allow" } } }"#,
    );
    let policy = w.policy(None);
    let ctx = w.ctx();
    assert_eq!(
        decide(&policy, &[], &exec_call("npm test"), &ctx, true).decision,
        Action::Deny
    );
    assert_eq!(
        decide(&policy, &[], &exec_call("make build"), &ctx, true).decision,
        Action::Allow
    );
    let d = decide(&policy, &[], &exec_call("npm test"), &ctx, true);
    let rule = d.requests[0].rule.clone().unwrap();
    assert_eq!(rule.source, RuleSource::Project);
    let origin = rule.origin.unwrap();
    assert_eq!((origin.line, origin.column), (1, 41));
    assert!(origin.file.ends_with("proj/.khaelor/config.json"));
}

#[test]
fn managed_deny_and_ask_cannot_be_loosened() {
    let w = World::new();
    let managed = w.managed("managed.json");
    w.user_text(r#"{ "permissions": { "network.access": "allow" } }"#);
    w.project_text(
        r#"{ "permissions": {
            "process.execute": { "npm publish *": "allow" },
            "network.access": { "https://docs.rs/*": "deny" },
            "file.read": "allow"
        } }"#,
    );
    let policy = w.policy(Some(&managed));
    assert!(policy.errors().is_empty(), "{:?}", policy.errors());
    let ctx = w.ctx();
    // deny: no later allow lifts it, session grants included.
    let session = vec![khaelor_perm::policy::rules::PermissionRule::new(
        "*",
        "*",
        Action::Allow,
        RuleSource::Session,
    )];
    let d = decide(
        &policy,
        &session,
        &exec_call("npm publish --access public"),
        &ctx,
        true,
    );
    assert_eq!(d.decision, Action::Deny);
    assert_eq!(
        d.requests[0].rule.as_ref().unwrap().source,
        RuleSource::Managed
    );
    // ask: the user's allow-all network rule does not loosen it, and no "always" is offered.
    let fetch = map_call(
        "webfetch",
        &serde_json::json!({"url": "https://example.com/x"}),
        &ctx,
    )
    .unwrap();
    let d = decide(&policy, &[], &fetch, &ctx, true);
    assert_eq!(d.decision, Action::Ask);
    assert!(d.always_patterns.is_empty());
    // allow is a baseline: the project's deny on docs.rs still wins.
    let docs = map_call(
        "webfetch",
        &serde_json::json!({"url": "https://docs.rs/serde"}),
        &ctx,
    )
    .unwrap();
    assert_eq!(
        decide(&policy, &[], &docs, &ctx, true).decision,
        Action::Deny
    );
    // a managed ask with allowAlways still offers nothing: a grant could not loosen it.
    let key = map_call("read", &serde_json::json!({"path": "server.key"}), &ctx).unwrap();
    let d = decide(&policy, &[], &key, &ctx, true);
    assert_eq!(d.decision, Action::Ask);
    assert!(d.always_patterns.is_empty());
}

#[test]
fn managed_rules_are_listed_after_the_defaults() {
    let w = World::new();
    let managed = w.managed("managed.json");
    w.project_text(r#"{ "permissions": { "file.read": "allow" } }"#);
    let policy = w.policy(Some(&managed));
    let sources: Vec<RuleSource> = policy.rules().iter().map(|r| r.source).collect();
    let first_managed = sources
        .iter()
        .position(|s| *s == RuleSource::Managed)
        .unwrap();
    let last_default = sources
        .iter()
        .rposition(|s| *s == RuleSource::Default)
        .unwrap();
    let first_project = sources
        .iter()
        .position(|s| *s == RuleSource::Project)
        .unwrap();
    assert!(
        last_default < first_managed && first_managed < first_project,
        "{sources:?}"
    );
}

#[test]
fn rule_examples_are_checked_at_load() {
    let w = World::new();
    let file = w.project("failing_example.json");
    let policy = w.policy(None);
    assert_eq!(
        policy.errors(),
        &[err(
            &file,
            14,
            33,
            "example `git push` should match the pattern `git push *` but does not"
        )]
    );
    let ok = parse_config(
        r#"{"permissions": {"rules": [{"capability": "file.read", "pattern": "*.env", "action": "ask",
            "examples": {"match": ["/p/.env"], "notMatch": ["/p/.env.example", "/p/env"]}}]}}"#,
        "ok.json",
        RuleSource::Project,
    );
    assert!(ok.errors.is_empty(), "{:?}", ok.errors);
    let bad = parse_config(
        r#"{"permissions": {"rules": [{"capability": "file.read", "pattern": "*.env", "action": "ask",
            "examples": {"notMatch": ["/p/.env"]}}]}}"#,
        "bad.json",
        RuleSource::Project,
    );
    assert_eq!(bad.errors.len(), 1);
    assert_eq!(
        bad.errors[0].message,
        "example `/p/.env` should not match the pattern `*.env` but does"
    );
    assert_eq!((bad.errors[0].line, bad.errors[0].column), (2, 39));
}

#[test]
fn shadowed_rules_are_reported() {
    let w = World::new();
    w.project("shadowed.json");
    let policy = w.policy(None);
    assert!(policy.errors().is_empty());
    let got: Vec<(String, String)> = policy
        .shadowed()
        .iter()
        .map(|s| (s.rule.pattern.clone(), s.by.pattern.clone()))
        .collect();
    assert_eq!(
        got,
        vec![
            ("npm test".to_string(), "*".to_string()),
            ("git push *".to_string(), "*".to_string()),
            ("/tmp/a/*".to_string(), "/tmp/*".to_string()),
        ]
    );
}

#[test]
fn a_default_overridden_by_config_is_not_reported_as_shadowed() {
    let w = World::new();
    w.project_text(r#"{ "permissions": { "process.execute": "allow" } }"#);
    assert!(w.policy(None).shadowed().is_empty());
}
