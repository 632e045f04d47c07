//! Whole-call decisions without the bash engines: combination, self-protection, explicit
//! asks, non-interactive, grants, deny shaping the tool list, messages word for word,
//! and the panel box against fixtures/panel_*.txt. Bash-shaped calls are built by hand
//! with the requests the analysis would produce.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod common;

use std::path::PathBuf;

use khaelor_perm::model::vocab::{AnalysisContext, Capability, CapabilityRequest, HardlineHit};
use khaelor_perm::policy::config::Policy;
use khaelor_perm::policy::decide::{
    CallDecision, GrantError, available_tools, decide, grant_rules,
};
use khaelor_perm::policy::rules::{Action, PermissionRule, RuleSource};
use khaelor_perm::presentation::messages::{
    self, NON_INTERACTIVE_MESSAGE, Panel, SELF_PROTECTION_NOTE, panel_keys, render_panel_box,
    user_deny_message,
};
use khaelor_perm::tools::{KNOWN_TOOLS, MappedCall, map_call};
use pretty_assertions::assert_eq;
use serde_json::json;

struct World {
    _tmp: tempfile::TempDir,
    base: PathBuf,
    root: PathBuf,
    home: PathBuf,
}

impl World {
    /// Project at `~/dev/project`, like the seed's panel.
    fn new() -> World {
        let tmp = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(tmp.path()).unwrap();
        let home = base.join("home");
        let root = home.join("dev/project");
        std::fs::create_dir_all(root.join(".git/hooks")).unwrap();
        std::fs::create_dir_all(home.join(".khaelor")).unwrap();
        World {
            _tmp: tmp,
            base,
            root,
            home,
        }
    }

    fn ctx(&self) -> AnalysisContext {
        AnalysisContext::new(&self.root, None, &self.home).unwrap()
    }

    fn project(&self, text: &str) {
        std::fs::create_dir_all(self.root.join(".khaelor")).unwrap();
        std::fs::write(self.root.join(".khaelor/config.json"), text).unwrap();
    }

    fn user(&self, text: &str) {
        std::fs::write(self.home.join(".khaelor/config.json"), text).unwrap();
    }

    fn policy(&self) -> Policy {
        let p = common::load_trusted_policy(&self.root, &self.home, None);
        assert!(p.errors().is_empty(), "{:?}", p.errors());
        p
    }

    fn tool(&self, policy: &Policy, tool: &str, input: serde_json::Value) -> CallDecision {
        let ctx = self.ctx();
        let call = map_call(tool, &input, &ctx).unwrap();
        decide(policy, &[], &call, &ctx, true)
    }
}

const ALLOW_ALL: &str =
    r#"{"permissions": {"rules": [{"capability": "*", "pattern": "*", "action": "allow"}]}}"#;

fn req(cap: Capability, subject: &str, always: &[&str]) -> CapabilityRequest {
    let mut r = CapabilityRequest::new(cap, subject, format!("Run {subject}"));
    r.always_patterns = always.iter().map(|s| s.to_string()).collect();
    r
}

/// A bash call as the analysis would map it.
fn bash_call(command: &str, requests: Vec<CapabilityRequest>) -> MappedCall {
    MappedCall {
        tool: "bash".into(),
        requests,
        analysis: None,
        hardline: None,
        cwd: "/".into(),
        command: Some(command.into()),
    }
}

// ---- combination (seed §4.4)

#[test]
fn deny_beats_ask_beats_allow_and_the_deny_is_named() {
    let w = World::new();
    w.project(r#"{"permissions": {"process.execute": {"rm -rf *": "deny"}}}"#);
    let policy = w.policy();
    let ctx = w.ctx();
    let all = bash_call(
        "git status && npm install && rm -rf build",
        vec![
            req(Capability::ProcessExecute, "git status", &[]),
            req(
                Capability::ProcessExecute,
                "npm install",
                &["npm install *"],
            ),
            req(Capability::ProcessExecute, "rm -rf build", &["rm -rf *"]),
        ],
    );
    let d = decide(&policy, &[], &all, &ctx, true);
    assert_eq!(d.decision, Action::Deny);
    let each: Vec<Action> = d.requests.iter().map(|r| r.decision).collect();
    assert_eq!(each, vec![Action::Allow, Action::Ask, Action::Deny]);
    assert!(d.message.as_deref().unwrap().contains("\"rm -rf build\""));
    assert!(d.panel.is_none());
    assert!(d.always_patterns.is_empty());

    let ask = bash_call(
        "git status && npm install",
        vec![
            req(Capability::ProcessExecute, "git status", &[]),
            req(
                Capability::ProcessExecute,
                "npm install",
                &["npm install *"],
            ),
        ],
    );
    let d = decide(&policy, &[], &ask, &ctx, true);
    assert_eq!(d.decision, Action::Ask);
    assert!(d.message.is_none());
    let panel = d.panel.unwrap();
    assert_eq!(panel.details.len(), 2, "one panel lists every request");
    assert_eq!(
        panel.details[0].rule.as_ref().unwrap().pattern,
        "git status"
    );

    let allow = bash_call(
        "git status; git diff",
        vec![
            req(Capability::ProcessExecute, "git status", &[]),
            req(Capability::ProcessExecute, "git diff", &[]),
        ],
    );
    let d = decide(&policy, &[], &allow, &ctx, true);
    assert_eq!(d.decision, Action::Allow);
    assert!(d.panel.is_none() && d.message.is_none());
}

#[test]
fn every_request_carries_its_rule_with_source_and_position() {
    let w = World::new();
    w.project("{\n  \"permissions\": {\n    \"network.access\": { \"https://docs.rs/*\": \"allow\" }\n  }\n}\n");
    let d = w.tool(
        &w.policy(),
        "webfetch",
        json!({"url": "https://docs.rs/serde"}),
    );
    assert_eq!(d.decision, Action::Allow);
    let rule = d.requests[0].rule.as_ref().unwrap();
    assert_eq!(rule.source, RuleSource::Project);
    let o = rule.origin.as_ref().unwrap();
    assert_eq!((o.line, o.column), (3, 25));
    let v = serde_json::to_value(&d).unwrap();
    assert_eq!(v["requests"][0]["capability"], "network.access");
    assert_eq!(v["requests"][0]["decision"], "allow");
    assert_eq!(v["requests"][0]["rule"]["source"], "project");
    assert_eq!(v["requests"][0]["rule"]["origin"]["line"], 3);
}

// ---- self-protection (item 10)

#[test]
fn writes_to_khaelor_config_always_ask_without_an_always_pattern() {
    let w = World::new();
    for config in [None, Some(ALLOW_ALL)] {
        if let Some(c) = config {
            w.project(c);
        }
        let policy = w.policy();
        for path in [
            ".khaelor/config.json",
            ".khaelor/new.json",
            "~/.khaelor/config.json",
            "sub/../.khaelor/x",
        ] {
            let d = w.tool(&policy, "write", json!({"path": path, "content": "{}"}));
            assert_eq!(d.decision, Action::Ask, "{path} under {config:?}");
            assert!(d.always_patterns.is_empty(), "{path}");
            assert!(
                d.panel
                    .as_ref()
                    .unwrap()
                    .risk_notes
                    .iter()
                    .any(|n| n == SELF_PROTECTION_NOTE),
                "{path}"
            );
        }
        let d = w.tool(&policy, "apply_patch", json!({"patch": "*** Begin Patch\n*** Add File: .khaelor/config.json\n+{}\n*** End Patch\n"}));
        assert_eq!(d.decision, Action::Ask);
        let d = w.tool(
            &policy,
            "edit",
            json!({"path": ".khaelor/config.json", "oldString": "ask", "newString": "allow"}),
        );
        assert_eq!(d.decision, Action::Ask);
    }
}

#[test]
fn a_symlink_into_khaelor_is_still_protected() {
    let w = World::new();
    w.project(ALLOW_ALL);
    std::os::unix::fs::symlink(w.root.join(".khaelor"), w.root.join("cfg")).unwrap();
    let d = w.tool(
        &w.policy(),
        "write",
        json!({"path": "cfg/config.json", "content": "{}"}),
    );
    assert_eq!(d.decision, Action::Ask);
}

#[test]
fn bash_writes_and_commands_naming_khaelor_are_protected() {
    let w = World::new();
    w.project(ALLOW_ALL);
    let policy = w.policy();
    let ctx = w.ctx();
    let target = w.root.join(".khaelor/config.json").display().to_string();
    // `echo x > .khaelor/config.json` as the AST engine maps it.
    let redirect = bash_call(
        "echo x > .khaelor/config.json",
        vec![
            req(Capability::ProcessExecute, "echo x", &["echo *"]),
            req(Capability::FileWriteProject, &target, &[&target]),
        ],
    );
    let d = decide(&policy, &[], &redirect, &ctx, true);
    assert_eq!(d.decision, Action::Ask);
    assert!(d.always_patterns.is_empty());
    assert_eq!(
        d.requests[1].rule.as_ref().unwrap().source,
        RuleSource::Builtin
    );
    // A command that only names the directory (the analysis saw no write).
    let named = bash_call(
        "rm -rf .khaelor",
        vec![req(
            Capability::ProcessExecute,
            "rm -rf .khaelor",
            &["rm *"],
        )],
    );
    let d = decide(&policy, &[], &named, &ctx, true);
    assert_eq!(d.decision, Action::Ask);
    assert!(d.always_patterns.is_empty());
    // A user-config write through `tee`.
    let user = w.home.join(".khaelor/config.json").display().to_string();
    let tee = bash_call(
        "tee x",
        vec![
            req(Capability::ProcessExecute, "tee x", &[]),
            req(Capability::FileWriteOutsideProject, &user, &[]),
        ],
    );
    assert_eq!(decide(&policy, &[], &tee, &ctx, true).decision, Action::Ask);
}

#[test]
fn the_managed_file_is_protected_too() {
    let w = World::new();
    let managed = w.base.join("managed.json");
    std::fs::write(&managed, "{}").unwrap();
    w.project(ALLOW_ALL);
    let policy = common::load_trusted_policy(&w.root, &w.home, Some(&managed));
    let ctx = w.ctx();
    let call = map_call(
        "write",
        &json!({"path": managed.display().to_string(), "content": "{}"}),
        &ctx,
    )
    .unwrap();
    assert_eq!(
        decide(&policy, &[], &call, &ctx, true).decision,
        Action::Ask
    );
}

#[test]
fn git_hooks_and_config_ask_under_the_defaults() {
    let w = World::new();
    let policy = w.policy();
    for path in [".git/hooks/pre-commit", ".git/config"] {
        let d = w.tool(&policy, "write", json!({"path": path, "content": "x"}));
        assert_eq!(d.decision, Action::Ask, "{path}");
        assert_eq!(
            d.requests[0].rule.as_ref().unwrap().source,
            RuleSource::Default
        );
    }
    // The never-quiet table covers all of `.git/` (this asserted Allow before); the
    // neighbour that stays free is a file merely named like git's.
    assert_eq!(
        w.tool(
            &policy,
            "write",
            json!({"path": ".git/HEAD.bak", "content": "x"})
        )
        .decision,
        Action::Ask
    );
    assert_eq!(
        w.tool(
            &policy,
            "write",
            json!({"path": ".gitignore", "content": "x"})
        )
        .decision,
        Action::Allow
    );
    assert_eq!(
        w.tool(
            &policy,
            "write",
            json!({"path": "src/main.rs", "content": "x"})
        )
        .decision,
        Action::Allow
    );
}

// ---- explicit asks stay asks (item 11)

#[test]
fn an_ask_from_a_config_file_offers_no_always_unless_it_says_so() {
    let w = World::new();
    let url = json!({"url": "https://example.com/a"});
    // The default network ask offers the URL and its origin.
    let d = w.tool(&w.policy(), "webfetch", url.clone());
    assert_eq!(
        d.always_patterns,
        vec!["https://example.com/a", "https://example.com/*"]
    );
    assert_eq!(
        d.panel.as_ref().unwrap().keys[1].label,
        "Always allow \"https://example.com/a\" in this project"
    );

    w.user(r#"{"permissions": {"network.access": {"https://example.com/*": "ask"}}}"#);
    let d = w.tool(&w.policy(), "webfetch", url.clone());
    assert_eq!(d.decision, Action::Ask);
    assert!(d.always_patterns.is_empty());
    let keys: Vec<String> = d.panel.unwrap().keys.into_iter().map(|k| k.key).collect();
    assert_eq!(keys, vec!["Enter", "Esc", "Tab"]);

    w.user(r#"{"permissions": {"rules": [{"capability": "network.access", "pattern": "https://example.com/*", "action": "ask", "allowAlways": true}]}}"#);
    let d = w.tool(&w.policy(), "webfetch", url);
    assert_eq!(
        d.always_patterns,
        vec!["https://example.com/a", "https://example.com/*"]
    );
}

// ---- non-interactive (seed §5.2)

#[test]
fn non_interactive_turns_every_ask_into_a_deny() {
    let w = World::new();
    let policy = w.policy();
    let ctx = w.ctx();
    let call = map_call("webfetch", &json!({"url": "https://example.com"}), &ctx).unwrap();
    let d = decide(&policy, &[], &call, &ctx, false);
    assert_eq!(d.decision, Action::Deny);
    assert_eq!(
        d.message.as_deref(),
        Some("KHAELOR is running non-interactively; interactive approval is unavailable.")
    );
    assert_eq!(d.requests[0].decision, Action::Deny);
    assert!(d.panel.is_none() && d.always_patterns.is_empty());
    let read = map_call("read", &json!({"path": "README.md"}), &ctx).unwrap();
    let d = decide(&policy, &[], &read, &ctx, false);
    assert_eq!(d.decision, Action::Allow);
    assert!(d.message.is_none());
}

// ---- grants

#[test]
fn grant_rules_persist_the_chosen_pattern_per_asking_request() {
    let w = World::new();
    let policy = w.policy();
    let ctx = w.ctx();
    let call = bash_call(
        "curl https://x.dev",
        vec![
            req(
                Capability::ProcessExecute,
                "curl https://x.dev",
                &["curl *"],
            ),
            req(
                Capability::NetworkAccess,
                "curl https://x.dev",
                &["curl https://x.dev"],
            ),
        ],
    );
    let d = decide(&policy, &[], &call, &ctx, true);
    assert_eq!(d.always_patterns, vec!["curl *", "curl https://x.dev"]);
    let rules = grant_rules(&d, "curl *").unwrap();
    assert_eq!(
        rules,
        vec![
            PermissionRule::new(
                "process.execute",
                "curl *",
                Action::Allow,
                RuleSource::Project
            ),
            PermissionRule::new(
                "network.access",
                "curl https://x.dev",
                Action::Allow,
                RuleSource::Project
            ),
        ]
    );
    // Applied as session rules, the same call is now allowed.
    assert_eq!(
        decide(&policy, &rules, &call, &ctx, true).decision,
        Action::Allow
    );
    assert_eq!(
        grant_rules(&d, "*"),
        Err(GrantError::NotOffered("*".into()))
    );

    let allowed = decide(
        &policy,
        &[],
        &bash_call(
            "git status",
            vec![req(
                Capability::ProcessExecute,
                "git status",
                &["git status"],
            )],
        ),
        &ctx,
        true,
    );
    assert_eq!(
        grant_rules(&allowed, "git status"),
        Err(GrantError::NotAsking)
    );

    // One asking request without a pattern: the call offers none.
    let compound = bash_call(
        "npm i && curl x",
        vec![
            req(Capability::ProcessExecute, "npm i", &["npm i"]),
            req(Capability::NetworkAccess, "curl x", &[]),
        ],
    );
    let d = decide(&policy, &[], &compound, &ctx, true);
    assert!(d.always_patterns.is_empty());
    assert_eq!(grant_rules(&d, "npm i"), Err(GrantError::NothingOffered));
}

// ---- deny shapes the tool list (seed §7.2)

#[test]
fn deny_for_everything_removes_tools_partial_denies_keep_them() {
    let mut tools: Vec<String> = KNOWN_TOOLS.iter().map(|s| s.to_string()).collect();
    tools.push("todo_write".into());
    let without = |gone: &[&str]| -> Vec<String> {
        tools
            .iter()
            .filter(|t| !gone.contains(&t.as_str()))
            .cloned()
            .collect()
    };
    let cases: &[(&str, &[&str])] = &[
        ("{}", &[]),
        (
            r#"{"permissions": {"file.write.*": "deny"}}"#,
            &["write", "edit", "apply_patch"],
        ),
        (r#"{"permissions": {"file.write.project": "deny"}}"#, &[]),
        (
            r#"{"permissions": {"file.write.*": {"/etc/*": "deny"}}}"#,
            &[],
        ),
        (
            r#"{"permissions": {"file.write.*": "deny", "file.write.outsideProject": {"/tmp/*": "ask"}}}"#,
            &[],
        ),
        (
            r#"{"permissions": {"file.write.project": "deny", "file.write.outsideProject": {"*": "deny"}}}"#,
            &["write", "edit", "apply_patch"],
        ),
        (
            r#"{"permissions": {"process.execute": "deny"}}"#,
            &["bash", "process_start"],
        ),
        (
            r#"{"permissions": {"process.background": "deny"}}"#,
            &["process_start", "process_stdin"],
        ),
        (
            r#"{"permissions": {"file.read": "deny"}}"#,
            &["read", "glob", "grep", "list"],
        ),
        (r#"{"permissions": {"*": "deny"}}"#, KNOWN_TOOLS),
        (
            r#"{"permissions": {"*": "deny", "network.access": {"https://docs.rs/*": "allow"}}}"#,
            &[
                "read",
                "glob",
                "grep",
                "list",
                "write",
                "edit",
                "apply_patch",
                "bash",
                "process_start",
                "process_stdin",
                "mcp",
            ],
        ),
    ];
    for (config, gone) in cases {
        let w = World::new();
        w.project(config);
        assert_eq!(
            available_tools(&w.policy(), &tools),
            without(gone),
            "{config}"
        );
    }
}

#[test]
fn a_managed_deny_removes_a_tool_whatever_later_layers_say() {
    let w = World::new();
    let managed = w.base.join("managed.json");
    std::fs::write(&managed, r#"{"permissions": {"network.access": "deny"}}"#).unwrap();
    w.project(r#"{"permissions": {"network.access": "allow"}}"#);
    let policy = common::load_trusted_policy(&w.root, &w.home, Some(&managed));
    assert_eq!(
        available_tools(&policy, &["webfetch".to_string(), "read".to_string()]),
        vec!["read".to_string()]
    );
}

// ---- typed reasons

#[test]
fn caps_carry_typed_reasons() {
    use khaelor_perm::model::vocab::Reason;
    let w = World::new();
    let call = bash_call(
        "npm install",
        vec![req(
            Capability::ProcessExecute,
            "npm install",
            &["npm install *"],
        )],
    );
    // An ask nobody can answer is a deny, and says so per request.
    let d = decide(&w.policy(), &[], &call, &w.ctx(), false);
    assert_eq!(d.decision, Action::Deny);
    assert!(
        d.requests
            .iter()
            .all(|r| r.reasons == vec![Reason::NonInteractive])
    );
    // A rule that decides alone leaves no reason behind.
    w.project(r#"{"permissions": {"process.execute": {"npm install": "allow"}}}"#);
    let d = decide(&w.policy(), &[], &call, &w.ctx(), true);
    assert_eq!(d.decision, Action::Allow);
    assert!(d.requests.iter().all(|r| r.reasons.is_empty()));
    // A broken config caps that allow, and the request says why.
    w.user("{ broken");
    let policy = common::load_trusted_policy(&w.root, &w.home, None);
    assert!(!policy.errors().is_empty());
    let d = decide(&policy, &[], &call, &w.ctx(), true);
    assert_eq!(d.decision, Action::Ask);
    assert!(
        d.requests
            .iter()
            .any(|r| r.reasons.contains(&Reason::BrokenConfig))
    );
}

// ---- messages word for word (seed §5.4)

#[test]
fn policy_deny_message_matches_the_seed() {
    let w = World::new();
    w.project(r#"{"permissions": {"process.execute": {"rm -rf *": "deny"}}}"#);
    let call = bash_call(
        "rm -rf build",
        vec![req(
            Capability::ProcessExecute,
            "rm -rf build",
            &["rm -rf *"],
        )],
    );
    let d = decide(&w.policy(), &[], &call, &w.ctx(), true);
    assert_eq!(
        d.message.as_deref(),
        Some(
            "Permission denied by policy: process.execute for \"rm -rf build\" is denied in this project (rule: process.execute / \"rm -rf *\", source: project). Do not retry this command or attempt an equivalent workaround. Choose a different approach, or ask the user to adjust permissions."
        )
    );
}

#[test]
fn user_deny_messages_match_the_seed() {
    let w = World::new();
    let call = bash_call(
        "npm install",
        vec![req(
            Capability::ProcessExecute,
            "npm install",
            &["npm install *"],
        )],
    );
    let d = decide(&w.policy(), &[], &call, &w.ctx(), true);
    assert_eq!(
        user_deny_message(&d.summary, None),
        "The user declined to allow: npm install. Continue without it, or propose an alternative."
    );
    assert_eq!(
        user_deny_message(&d.summary, Some("use pnpm in this repo")),
        "The user declined to allow: npm install — reason: \"use pnpm in this repo\". Adapt your approach accordingly."
    );
    // Blank feedback is no feedback; a multi-line reason becomes one line.
    assert_eq!(
        user_deny_message(&d.summary, Some("  \n ")),
        user_deny_message(&d.summary, None)
    );
    assert!(
        user_deny_message(&d.summary, Some("use pnpm\nnot npm"))
            .contains("reason: \"use pnpm not npm\"")
    );
    let write = w.tool(
        &w.policy(),
        "write",
        json!({"path": "../x.txt", "content": "x"}),
    );
    assert_eq!(
        user_deny_message(&write.summary, None),
        "The user declined to allow: write ~/dev/x.txt. Continue without it, or propose an alternative."
    );
}

#[test]
fn hardline_message_uses_the_seed_note() {
    let w = World::new();
    w.project(ALLOW_ALL);
    let mut call = bash_call(
        "git status && rm -rf /",
        vec![
            req(Capability::ProcessExecute, "git status", &[]),
            req(Capability::ProcessExecute, "rm -rf /", &[]),
        ],
    );
    call.hardline = Some(HardlineHit {
        rule: "rm -rf /".into(),
        rendering: "rm -rf /".into(),
    });
    let d = decide(&w.policy(), &[], &call, &w.ctx(), true);
    assert_eq!(d.decision, Action::Deny);
    assert_eq!(
        d.requests[0].decision,
        Action::Allow,
        "only the offending part carries the hardline"
    );
    assert_eq!(
        d.requests[1].rule.as_ref().unwrap().source,
        RuleSource::Hardline
    );
    assert_eq!(
        d.message.as_deref(),
        Some(
            "Permission denied by policy: process.execute for \"rm -rf /\" is denied in this project (rule: hardline / \"rm -rf /\", source: hardline). Blocked by KHAELOR's built-in safety floor — this cannot be allowed by configuration. Do not retry this command or attempt an equivalent workaround. Choose a different approach."
        )
    );
    assert!(d.risk_notes.contains(&messages::HARDLINE_NOTE.to_string()));
}

#[test]
fn non_interactive_message_is_the_seeds() {
    assert_eq!(
        NON_INTERACTIVE_MESSAGE,
        "KHAELOR is running non-interactively; interactive approval is unavailable."
    );
}

// ---- the panel (seed §6.1)

fn fixture_text(name: &str) -> String {
    std::fs::read_to_string(common::fixtures_dir().join(name)).unwrap()
}

#[test]
fn the_seed_panel_renders_as_the_seed_box() {
    let w = World::new();
    let mut r = req(
        Capability::ProcessExecute,
        "npm install",
        &["npm install *"],
    );
    r.risk_notes
        .push("Installs packages (writes node_modules, lockfile)".into());
    let mut call = bash_call("npm install", vec![r]);
    call.cwd = w.root.display().to_string();
    let d = decide(&w.policy(), &[], &call, &w.ctx(), true);
    let panel = d.panel.unwrap();
    assert_eq!(panel.verb, "Run");
    assert_eq!(panel.badge, "process.execute");
    assert_eq!(panel.working_directory, "~/dev/project");
    assert_eq!(
        render_panel_box(&panel),
        fixture_text("panel_npm_install.txt")
    );
}

#[test]
fn a_write_panel_shows_the_diff() {
    let panel = Panel {
        title: "KHAELOR requests permission".into(),
        verb: "Write".into(),
        badge: "file.write.outsideProject".into(),
        subject: "~/notes/todo.md".into(),
        working_directory: "~/dev/project".into(),
        parts: vec![],
        diff: Some("--- a/~/notes/todo.md\n+++ b/~/notes/todo.md\n@@ -1 +1,2 @@\n - old item\n+- new item\n".into()),
        risk_notes: vec!["Writes outside the project: /home/u/notes/todo.md".into()],
        always_patterns: vec![],
        keys: panel_keys(&[]),
        details: vec![],
    };
    assert_eq!(
        render_panel_box(&panel),
        fixture_text("panel_write_diff.txt")
    );
}

#[test]
fn long_text_wraps_and_terminal_escapes_are_inert() {
    let pattern = "docker compose run --rm web bundle exec rake db:migrate *".to_string();
    let panel = Panel {
        title: "KHAELOR requests permission".into(),
        verb: "Run".into(),
        badge: "process.execute".into(),
        subject: "npm run build -- --config=very/long/path/to/some/config/file.json && npm test && echo \u{1b}[31mdone\u{202e}".into(),
        working_directory: "/srv/build".into(),
        parts: vec![
            "npm run build -- --config=very/long/path/to/some/config/file.json".into(),
            "npm test".into(),
            "echo \u{1b}[31mdone\u{202e}".into(),
        ],
        diff: None,
        risk_notes: vec![
            "Compound command: every part is checked separately.".into(),
            "A very long risk note that has to wrap onto a second line because it is longer than the box.".into(),
        ],
        always_patterns: vec![pattern.clone()],
        keys: panel_keys(&[pattern]),
        details: vec![],
    };
    let text = render_panel_box(&panel);
    assert!(!text.contains('\u{1b}') && !text.contains('\u{202e}'));
    assert_eq!(text, fixture_text("panel_compound_wrapped.txt"));
    assert!(
        text.lines()
            .all(|l| l.chars().count() == messages::BOX_WIDTH),
        "every line is the box width"
    );
}

#[test]
fn write_panels_carry_the_diff_from_the_mapping() {
    let w = World::new();
    std::fs::write(w.base.join("notes.md"), "- old item\n").unwrap();
    let path = w.base.join("notes.md").display().to_string();
    let d = w.tool(
        &w.policy(),
        "write",
        json!({"path": path, "content": "- old item\n- new item\n"}),
    );
    assert_eq!(d.decision, Action::Ask);
    let panel = d.panel.unwrap();
    assert_eq!(
        (panel.verb.as_str(), panel.badge.as_str()),
        ("Write", "file.write.outsideProject")
    );
    let diff = panel.diff.unwrap();
    assert!(diff.lines().any(|l| l == "+- new item"), "{diff}");
    assert!(diff.lines().any(|l| l == " - old item"), "{diff}");
    assert_eq!(d.always_patterns, vec![path]);
}

/// A recursive read of a directory holding more entries than a walk looks at asks, with
/// the walk's reason and no always pattern: whether `decide` walks it (`grep -r`) or a
/// name-filtered `find` walk met the bound in the analysis first (and is not walked
/// again). The same `find` over a small project reads just the file it matches.
#[test]
fn a_walk_over_its_bound_asks_with_its_reason() {
    let w = World::new();
    let many = w.root.join("many");
    std::fs::create_dir_all(&many).unwrap();
    for i in 0..=khaelor_perm::model::vocab::MAX_WALK_ENTRIES {
        std::fs::write(many.join(format!("f{i}.txt")), "").unwrap();
    }
    std::fs::write(w.root.join("a.py"), "x\n").unwrap();
    let policy = w.policy();
    let find = "find . -name '*.py' -type f -exec cat {} +";
    for command in ["grep -r x .", find] {
        let d = w.tool(&policy, "bash", json!({ "command": command }));
        assert_eq!(d.decision, Action::Ask, "{command}");
        assert!(d.always_patterns.is_empty(), "{command}");
        assert!(
            d.requests.iter().any(|r| r
                .reasons
                .contains(&khaelor_perm::model::vocab::Reason::WalkBound)),
            "{command}: {:?}",
            d.requests
        );
    }
    // The analysis' own walk marked the read, so `decide` did not walk it again.
    let d = w.tool(&policy, "bash", json!({ "command": find }));
    assert!(
        d.requests.iter().any(|r| r
            .request
            .directory_read
            .as_ref()
            .is_some_and(|x| x.over_bound)),
        "{:?}",
        d.requests
    );
    std::fs::remove_dir_all(&many).unwrap();
    let d = w.tool(&policy, "bash", json!({ "command": find }));
    assert_eq!(d.decision, Action::Allow, "{:?}", d.requests);
}
