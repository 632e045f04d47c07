//! The rule engine's pattern dialects: the golden table
//! `fixtures/interop/dialects.jsonl` (seed 003 globs, seed 004 prefixes, seed 000
//! wildcards), properties of each dialect, the config's `match` field with its errors
//! and provenance, and `alwaysScope: exact` through a real `check` on a real project.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod common;

use std::path::Path;
use std::process::Command;

use khaelor_perm::model::vocab::Capability;
use khaelor_perm::policy::config::{AlwaysScope, parse_config, parse_config_with_settings};
use khaelor_perm::policy::rules::{Action, MatchDialect, PermissionRule, RuleSet, RuleSource};
use proptest::prelude::*;
use serde::Deserialize;

#[derive(Debug, Deserialize)]
struct Case {
    id: String,
    #[serde(rename = "match")]
    dialect: MatchDialect,
    pattern: String,
    subject: String,
    #[serde(default)]
    root: Option<String>,
    want: bool,
}

fn matches(
    dialect: MatchDialect,
    cap: Capability,
    pattern: &str,
    root: Option<&Path>,
    s: &str,
) -> bool {
    let rule = PermissionRule::new(cap.as_str(), pattern, Action::Deny, RuleSource::Project)
        .with_dialect(dialect);
    RuleSet::with_root(vec![rule], root)
        .matched(cap, s)
        .is_some()
}

#[test]
fn golden_table_per_dialect() {
    let cases: Vec<(usize, Case)> = common::load_table("interop/dialects.jsonl");
    assert!(cases.len() >= 30);
    let mut failures = Vec::new();
    for (line, c) in &cases {
        // Globs are for paths; prefixes are seed 004's command patterns.
        let cap = match c.dialect {
            MatchDialect::Prefix => Capability::ProcessExecute,
            _ => Capability::FileRead,
        };
        let got = matches(
            c.dialect,
            cap,
            &c.pattern,
            c.root.as_deref().map(Path::new),
            &c.subject,
        );
        if got != c.want {
            failures.push(format!(
                "line {line} {}: {} `{}` vs `{}`: got {got}, want {}",
                c.id,
                c.dialect.as_str(),
                c.pattern,
                c.subject,
                c.want
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

fn segment() -> impl Strategy<Value = String> {
    "[a-z0-9_.-]{1,6}".prop_filter("not a dot segment", |s| s != "." && s != "..")
}

proptest! {
    /// Seed 003: `*` stays within one segment, `/**` matches the base and everything below.
    #[test]
    fn glob_star_is_one_segment_and_dstar_is_any_depth(segs in prop::collection::vec(segment(), 0..5)) {
        let path = if segs.is_empty() { "/ws".to_string() } else { format!("/ws/{}", segs.join("/")) };
        let one = matches(MatchDialect::Glob, Capability::FileRead, "/ws/*", None, &path);
        prop_assert_eq!(one, segs.len() == 1);
        prop_assert!(matches(MatchDialect::Glob, Capability::FileRead, "/ws/**", None, &path));
        // The wildcard dialect's `*` spans `/` (seed 000), unlike the glob's.
        prop_assert_eq!(matches(MatchDialect::Wildcard, Capability::FileRead, "/ws/*", None, &path), !segs.is_empty());
    }

    /// `..` in a target never escapes a rule: matching a path equals matching its
    /// lexically normalised form.
    #[test]
    fn glob_targets_are_normalised(segs in prop::collection::vec(prop_oneof![segment(), Just("..".to_string())], 1..7)) {
        let raw = format!("/ws/{}", segs.join("/"));
        let clean = khaelor_perm::model::paths::clean(Path::new(&raw)).display().to_string();
        for pattern in ["/ws/**", "/ws/*", "/**", "/etc/*"] {
            prop_assert_eq!(
                matches(MatchDialect::Glob, Capability::FileRead, pattern, None, &raw),
                matches(MatchDialect::Glob, Capability::FileRead, pattern, None, &clean),
                "{} on {}", pattern, raw
            );
        }
    }

    /// Seed 004 against a reference model: a `*`-suffixed pattern is a literal prefix
    /// (inner `*` literal), `*` alone any subject, anything else exact; command
    /// subjects and patterns compared with collapsed whitespace.
    #[test]
    fn prefix_is_prefix_or_exact(p in "[ab *]{0,8}", s in "[ab *]{0,10}") {
        let collapse = khaelor_perm::model::vocab::collapse_whitespace;
        let (pc, sc) = (collapse(&p), collapse(&s));
        let want = if pc.is_empty() || pc == "*" {
            true
        } else if let Some(pre) = pc.strip_suffix('*') {
            sc.starts_with(pre)
        } else {
            pc == sc
        };
        prop_assert_eq!(matches(MatchDialect::Prefix, Capability::ProcessExecute, &p, None, &s), want);
    }
}

#[test]
fn config_match_field_is_parsed_validated_and_keeps_provenance() {
    let text = r#"{
  "permissions": {
    "rules": [
      { "capability": "file.write.*", "pattern": "out/**", "match": "glob", "action": "allow",
        "examples": { "match": ["out/a/b"], "notMatch": ["src/a"] } },
      { "capability": "process.execute", "pattern": "go test *", "match": "prefix", "action": "allow" },
      { "capability": "process.execute", "pattern": "x/**", "match": "glob", "action": "deny" },
      { "capability": "file.read", "pattern": "*", "match": "regex", "action": "deny" },
    ],
    "alwaysScope": "exact",
  },
}"#;
    let (p, settings) = parse_config_with_settings(text, "c.json", RuleSource::Project);
    let got: Vec<(String, MatchDialect, usize)> = p
        .rules
        .iter()
        .map(|r| {
            (
                r.pattern.clone(),
                r.dialect,
                r.origin.as_ref().unwrap().line,
            )
        })
        .collect();
    assert_eq!(
        got,
        vec![
            ("out/**".to_string(), MatchDialect::Glob, 4),
            ("go test *".to_string(), MatchDialect::Prefix, 6)
        ]
    );
    assert_eq!(settings.always_scope, Some(AlwaysScope::Exact));
    let errors: Vec<String> = p.errors.iter().map(ToString::to_string).collect();
    assert_eq!(
        errors,
        vec![
            "c.json:7:70: `match: glob` reads paths, but `process.execute` names a command capability; use the default wildcard or `prefix`".to_string(),
            "c.json:8:61: unknown match dialect `regex`, expected `wildcard`, `glob` or `prefix`".to_string(),
        ]
    );
    let bad = parse_config(
        r#"{"permissions": {"alwaysScope": "wide"}}"#,
        "c.json",
        RuleSource::Project,
    );
    assert_eq!(
        bad.errors.first().map(ToString::to_string).as_deref(),
        Some("c.json:1:33: `alwaysScope` must be `\"exact\"` or `\"pattern\"`, found `wide`")
    );
}

#[test]
fn rules_listing_names_the_dialect() {
    let r = PermissionRule::new("file.read", "src/**", Action::Allow, RuleSource::Project)
        .with_dialect(MatchDialect::Glob);
    assert_eq!(r.describe(), "file.read / glob \"src/**\" (project)");
    let json = serde_json::to_value(&r).unwrap();
    assert_eq!(json["match"], "glob");
    let plain = PermissionRule::new("file.read", "*", Action::Allow, RuleSource::Project);
    assert!(serde_json::to_value(&plain).unwrap().get("match").is_none());
}

fn project_with_config(config: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join(".khaelor")).unwrap();
    std::fs::write(dir.path().join(".khaelor/config.json"), config).unwrap();
    dir
}

fn check_json(root: &Path, home: &Path, tool: &str, input: &str) -> serde_json::Value {
    let root = root.canonicalize().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_khaelor-perm"))
        .args(["check", "--json", "--tool", tool, "--input", input])
        .arg("--root")
        .arg(&root)
        .arg("--home")
        .arg(home)
        .output()
        .unwrap();
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stdout)))
}

#[test]
fn relative_globs_are_anchored_at_the_project_through_check() {
    let home = tempfile::tempdir().unwrap();
    let proj = project_with_config(
        r#"{ "permissions": { "rules": [
            { "capability": "file.write.*", "pattern": "docs/**", "match": "glob", "action": "deny" }
        ] } }"#,
    );
    let d = check_json(
        proj.path(),
        home.path(),
        "write",
        r#"{"path":"docs/a/b.md","content":"x"}"#,
    );
    assert_eq!(d["decision"], "deny", "{d:#}");
    let d = check_json(
        proj.path(),
        home.path(),
        "write",
        r#"{"path":"docs","content":"x"}"#,
    );
    assert_eq!(
        d["decision"], "deny",
        "the base of a trailing /** is matched: {d:#}"
    );
    let d = check_json(
        proj.path(),
        home.path(),
        "write",
        r#"{"path":"src/docs/a.md","content":"x"}"#,
    );
    assert_eq!(d["decision"], "allow", "{d:#}");
    let d = check_json(
        proj.path(),
        home.path(),
        "write",
        r#"{"path":"src/../docs/x.md","content":"x"}"#,
    );
    assert_eq!(d["decision"], "deny", "`..` cannot escape the rule: {d:#}");
}

#[test]
fn always_scope_exact_offers_only_the_subject() {
    let home = tempfile::tempdir().unwrap();
    let plain = project_with_config(r#"{ "permissions": {} }"#);
    let d = check_json(
        plain.path(),
        home.path(),
        "bash",
        r#"{"command":"git push origin feature/foo"}"#,
    );
    assert_eq!(
        d["alwaysPatterns"],
        serde_json::json!(["git push *"]),
        "{d:#}"
    );

    let exact = project_with_config(r#"{ "permissions": { "alwaysScope": "exact" } }"#);
    let d = check_json(
        exact.path(),
        home.path(),
        "bash",
        r#"{"command":"git push origin feature/foo"}"#,
    );
    assert_eq!(d["decision"], "ask");
    assert_eq!(
        d["alwaysPatterns"],
        serde_json::json!(["git push origin feature/foo"]),
        "{d:#}"
    );
    // A subject with a `*` would become a wildcard rule: nothing is offered.
    let d = check_json(exact.path(), home.path(), "bash", r#"{"command":"rm a*"}"#);
    assert_eq!(d["alwaysPatterns"], serde_json::json!([]), "{d:#}");
    // The user file can narrow it for every project.
    std::fs::create_dir_all(home.path().join(".khaelor")).unwrap();
    std::fs::write(
        home.path().join(".khaelor/config.json"),
        r#"{ "permissions": { "alwaysScope": "exact" } }"#,
    )
    .unwrap();
    let d = check_json(
        plain.path(),
        home.path(),
        "bash",
        r#"{"command":"npm install left-pad"}"#,
    );
    assert_eq!(
        d["alwaysPatterns"],
        serde_json::json!(["npm install left-pad"]),
        "{d:#}"
    );
}
