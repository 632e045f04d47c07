//! Property tests of the evaluator against a naive reference model (seed §4.3, §9):
//! last match wins, both fields must match, unmatched asks, layer order, the managed
//! ceiling, normalization keeping source order, no configuration allows a hardline
//! command, and a broken config never allows.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use std::path::PathBuf;

use khaelor_perm::model::vocab::{
    AnalysisContext, Capability, CapabilityRequest, HardlineHit, collapse_whitespace,
};
use khaelor_perm::policy::config::{ParsedConfig, Policy, parse_config};
use khaelor_perm::policy::decide::decide;
use khaelor_perm::policy::rules::{
    Action, PermissionRule, RuleSet, RuleSource, Wildcard, default_rules,
};
use khaelor_perm::presentation::messages::HARDLINE_NOTE;
use khaelor_perm::tools::MappedCall;
use proptest::prelude::*;

/// The textbook definition: `*` matches any run of characters, everything else itself.
fn wild(p: &str, s: &str) -> bool {
    let p: Vec<char> = p.chars().collect();
    let s: Vec<char> = s.chars().collect();
    let mut dp = vec![vec![false; s.len() + 1]; p.len() + 1];
    dp[0][0] = true;
    for i in 1..=p.len() {
        if p[i - 1] == '*' {
            dp[i][0] = dp[i - 1][0];
        }
        for j in 1..=s.len() {
            dp[i][j] = if p[i - 1] == '*' {
                dp[i - 1][j] || dp[i][j - 1]
            } else {
                p[i - 1] == s[j - 1] && dp[i - 1][j - 1]
            };
        }
    }
    dp[p.len()][s.len()]
}

/// Seed §4.3 literally: `rules.findLast(both match)`, ask when none.
fn reference(rules: &[PermissionRule], cap: Capability, subject: &str) -> (Action, Option<usize>) {
    let norm = |x: &str| {
        if cap.has_command_subject() {
            collapse_whitespace(x)
        } else {
            x.to_string()
        }
    };
    // A rule with a verdict condition (a preset's) never matches a request without one.
    let found = rules.iter().enumerate().rev().find(|(_, r)| {
        r.when.is_none()
            && wild(&r.capability, cap.as_str())
            && wild(&norm(&r.pattern), &norm(subject))
    });
    match found {
        Some((i, r)) => (r.action, Some(i)),
        None => (Action::Ask, None),
    }
}

fn cap_pattern() -> impl Strategy<Value = String> {
    prop::sample::select(vec![
        "*",
        "file.*",
        "file.read",
        "file.write.*",
        "file.write.project",
        "process.*",
        "process.execute",
        "network.access",
        "git.modify",
        "*Project",
        "*.access",
        "*e*",
        "nomatch",
    ])
    .prop_map(str::to_string)
}

fn action() -> impl Strategy<Value = Action> {
    prop::sample::select(vec![Action::Allow, Action::Ask, Action::Deny])
}

fn capability() -> impl Strategy<Value = Capability> {
    prop::sample::select(Capability::ALL.to_vec())
}

fn rule(source: RuleSource) -> impl Strategy<Value = PermissionRule> {
    (cap_pattern(), "[ab/ *]{0,6}", action())
        .prop_map(move |(c, p, a)| PermissionRule::new(c, p, a, source))
}

fn rules(source: RuleSource, max: usize) -> impl Strategy<Value = Vec<PermissionRule>> {
    prop::collection::vec(rule(source), 0..max)
}

fn subject() -> impl Strategy<Value = String> {
    "[ab/ ]{0,8}"
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn compiled_wildcards_agree_with_the_definition(p in "[ab/ *]{0,8}", s in "[ab/ ]{0,10}") {
        prop_assert_eq!(Wildcard::new(&p).is_match(&s), wild(&p, &s));
    }

    #[test]
    fn coverage_implies_every_match(a in "[ab*]{0,5}", b in "[ab*]{0,5}", s in "[ab]{0,7}") {
        if Wildcard::new(&a).covers(&Wildcard::new(&b)) && wild(&b, &s) {
            prop_assert!(wild(&a, &s), "{a} covers {b} but misses {s}");
        }
    }

    #[test]
    fn last_match_wins_like_the_reference(rs in rules(RuleSource::Project, 12), cap in capability(), s in subject()) {
        let set = RuleSet::new(rs.clone());
        let (want_action, want_index) = reference(&rs, cap, &s);
        prop_assert_eq!(set.find(cap, &s), want_index);
        let ev = set.evaluate(cap, &s);
        prop_assert_eq!(ev.action, want_action);
        // Unmatched asks, and asks with no rule.
        if want_index.is_none() {
            prop_assert!(ev.rule.is_none());
        }
    }

    #[test]
    fn reordering_changes_only_what_the_reference_says(mut rs in rules(RuleSource::User, 8), cap in capability(), s in subject(), seed in any::<u64>()) {
        // Rotate the rules: the decision follows whichever matching rule is now last.
        let n = rs.len().max(1);
        rs.rotate_left((seed as usize) % n);
        let set = RuleSet::new(rs.clone());
        prop_assert_eq!(set.evaluate(cap, &s).action, reference(&rs, cap, &s).0);
    }

    #[test]
    fn a_rule_decides_only_when_both_fields_match(r in rule(RuleSource::Project), cap in capability(), s in subject()) {
        let set = RuleSet::new(vec![r.clone()]);
        let both = wild(&r.capability, cap.as_str())
            && (if cap.has_command_subject() { wild(&collapse_whitespace(&r.pattern), &collapse_whitespace(&s)) } else { wild(&r.pattern, &s) });
        prop_assert_eq!(set.matched(cap, &s).is_some(), both);
    }

    #[test]
    fn layers_concatenate_defaults_user_project_session(
        user in rules(RuleSource::User, 6),
        project in rules(RuleSource::Project, 6),
        session in rules(RuleSource::Session, 4),
        cap in capability(),
        s in subject(),
    ) {
        let policy = Policy::builder()
            .layer(RuleSource::User, ParsedConfig { rules: user.clone(), errors: vec![] })
            .layer(RuleSource::Project, ParsedConfig { rules: project.clone(), errors: vec![] })
            .build();
        let mut all = default_rules();
        // The default preset's rules come right after the defaults.
        all.extend(khaelor_perm::policy::presets::Preset::Recommended.rules());
        all.extend(user);
        all.extend(project);
        prop_assert_eq!(policy.rules(), &all[..]);
        all.extend(session.clone());
        let session_set = RuleSet::new(session);
        let got = policy.evaluate(Some(&session_set), cap, &s);
        let (want, idx) = reference(&all, cap, &s);
        prop_assert_eq!(got.action, want);
        prop_assert_eq!(got.rule, idx.map(|i| &all[i]));
    }

    #[test]
    fn managed_deny_and_ask_are_a_ceiling(
        managed in rules(RuleSource::Managed, 5),
        project in rules(RuleSource::Project, 6),
        session in rules(RuleSource::Session, 4),
        cap in capability(),
        s in subject(),
    ) {
        let policy = Policy::builder()
            .layer(RuleSource::Managed, ParsedConfig { rules: managed.clone(), errors: vec![] })
            .layer(RuleSource::Project, ParsedConfig { rules: project.clone(), errors: vec![] })
            .build();
        let mut all = default_rules();
        all.extend(managed.clone());
        all.extend(project);
        all.extend(session.clone());
        let got = policy.evaluate(Some(&RuleSet::new(session)), cap, &s).action;
        let (layered, _) = reference(&all, cap, &s);
        let ceiling = match reference(&managed, cap, &s) {
            (a, Some(_)) => a,
            (_, None) => Action::Allow,
        };
        prop_assert_eq!(got, layered.max(ceiling));
    }

    #[test]
    fn no_configuration_allows_a_hardline_command(
        user in rules(RuleSource::User, 6),
        project in rules(RuleSource::Project, 6),
        session in rules(RuleSource::Session, 4),
        interactive in any::<bool>(),
        allow_all in any::<bool>(),
    ) {
        let (_tmp, ctx) = context();
        let mut project = project;
        if allow_all {
            project.push(PermissionRule::new("*", "*", Action::Allow, RuleSource::Project));
        }
        let mut session = session;
        session.push(PermissionRule::new("*", "*", Action::Allow, RuleSource::Session));
        let policy = Policy::builder()
            .layer(RuleSource::User, ParsedConfig { rules: user, errors: vec![] })
            .layer(RuleSource::Project, ParsedConfig { rules: project, errors: vec![] })
            .build();
        let call = hardline_call();
        let d = decide(&policy, &session, &call, &ctx, interactive);
        prop_assert_eq!(d.decision, Action::Deny);
        prop_assert!(d.message.as_deref().unwrap_or_default().contains(HARDLINE_NOTE));
        prop_assert!(d.always_patterns.is_empty());
    }

    #[test]
    fn a_broken_config_never_allows(project in rules(RuleSource::Project, 6), cap in capability(), s in subject()) {
        let (_tmp, ctx) = context();
        // The same rules, written to a file with a syntax error at the end.
        let body: Vec<String> = project
            .iter()
            .map(|r| serde_json::json!({"capability": r.capability, "pattern": r.pattern, "action": r.action}).to_string())
            .collect();
        let text = format!("{{\"permissions\": {{\"rules\": [{}, {{\"capability\": \"*\", \"action\": \"allow\"}}]}}", body.join(","));
        let policy = Policy::builder().text(RuleSource::Project, "p.json", &text).build();
        prop_assert!(!policy.errors().is_empty());
        let call = one_request_call(cap, &s);
        let d = decide(&policy, &[], &call, &ctx, true);
        prop_assert!(d.decision != Action::Allow, "{:?}", d.requests);
    }

    #[test]
    fn normalization_keeps_source_order(doc in config_doc()) {
        let (text, expected) = doc;
        let parsed = parse_config(&text, "gen.json", RuleSource::Project);
        prop_assert!(parsed.errors.is_empty(), "{:?}\n{}", parsed.errors, text);
        let got: Vec<(String, String, Action)> =
            parsed.rules.iter().map(|r| (r.capability.clone(), r.pattern.clone(), r.action)).collect();
        prop_assert_eq!(got, expected, "{}", text);
    }
}

type Expanded = Vec<(String, String, Action)>;

#[derive(Debug, Clone)]
enum Entry {
    Short(Action),
    Nested(Vec<(String, Action)>),
}

/// A config text with shorthand, nested and `rules` forms in random key order (the
/// `rules` key anywhere among them), comments and trailing commas, and the rule list
/// the seed says it expands to: keys in source order, then `rules`.
fn config_doc() -> impl Strategy<Value = (String, Expanded)> {
    let keys = Just(vec![
        "file.read",
        "file.write.*",
        "process.execute",
        "network.access",
        "git.modify",
        "*",
        "process.*",
    ])
    .prop_shuffle()
    .prop_flat_map(|ks| (0..=ks.len()).prop_map(move |n| ks[..n].to_vec()));
    let entry = prop_oneof![
        action().prop_map(Entry::Short),
        prop::collection::vec(("[ab *]{1,5}", action()), 1..4).prop_map(Entry::Nested),
    ];
    (
        keys,
        prop::collection::vec(entry, 7),
        prop::collection::vec((cap_pattern(), "[ab *]{1,5}", action()), 0..4),
        any::<prop::sample::Index>(),
        any::<bool>(),
    )
        .prop_filter(
            "rules need a capability that exists",
            |(_, _, rules, _, _)| rules.iter().all(|(c, _, _)| c != "nomatch"),
        )
        .prop_map(|(keys, entries, rules, rules_at, trailing)| {
            let mut props: Vec<String> = Vec::new();
            let mut expanded: Expanded = Vec::new();
            for (k, e) in keys.iter().zip(entries) {
                let key = serde_json::to_string(k).unwrap();
                match e {
                    Entry::Short(a) => {
                        props.push(format!("{key}: \"{a}\""));
                        expanded.push((k.to_string(), "*".into(), a));
                    }
                    Entry::Nested(pairs) => {
                        let mut seen = std::collections::HashSet::new();
                        let mut inner = Vec::new();
                        for (p, a) in pairs {
                            if seen.insert(p.clone()) {
                                inner.push(format!(
                                    "{}: \"{a}\" // {a}\n",
                                    serde_json::to_string(&p).unwrap()
                                ));
                                expanded.push((k.to_string(), p, a));
                            }
                        }
                        props.push(format!("{key}: {{ {} }}", inner.join(", ")));
                    }
                }
            }
            let rule_objs: Vec<String> = rules
                .iter()
                .map(|(c, p, a)| {
                    serde_json::json!({"capability": c, "pattern": p, "action": a}).to_string()
                })
                .collect();
            for (c, p, a) in rules {
                expanded.push((c, p, a));
            }
            let at = rules_at.index(props.len() + 1);
            props.insert(
                at,
                format!("/* explicit */ \"rules\": [{}]", rule_objs.join(",\n")),
            );
            let comma = if trailing { "," } else { "" };
            let text = format!(
                "// generated\n{{\n  \"permissions\": {{\n    {}{comma}\n  }}{comma}\n}}\n",
                props.join(",\n    ")
            );
            (text, expanded)
        })
}

fn context() -> (tempfile::TempDir, AnalysisContext) {
    let tmp = tempfile::tempdir().unwrap();
    let base: PathBuf = std::fs::canonicalize(tmp.path()).unwrap();
    std::fs::create_dir_all(base.join("proj")).unwrap();
    std::fs::create_dir_all(base.join("home")).unwrap();
    let ctx = AnalysisContext::new(&base.join("proj"), None, &base.join("home")).unwrap();
    (tmp, ctx)
}

fn hardline_call() -> MappedCall {
    MappedCall {
        tool: "bash".into(),
        requests: vec![
            CapabilityRequest::new(Capability::ProcessExecute, "ls", "Run ls"),
            CapabilityRequest::new(Capability::ProcessExecute, "rm -rf /", "Run rm -rf /"),
        ],
        analysis: None,
        hardline: Some(HardlineHit {
            rule: "rm -rf /".into(),
            rendering: "rm -rf /".into(),
        }),
        cwd: "/".into(),
        command: Some("ls; rm -rf /".into()),
    }
}

fn one_request_call(cap: Capability, subject: &str) -> MappedCall {
    MappedCall {
        tool: "read".into(),
        requests: vec![CapabilityRequest::new(
            cap,
            subject,
            format!("Use {subject}"),
        )],
        analysis: None,
        hardline: None,
        cwd: "/".into(),
        command: None,
    }
}
