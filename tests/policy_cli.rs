//! The `check` and `rules` subcommands, run as the real binary: exit statuses, text and
//! JSON output, usage errors.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod common;

use std::path::PathBuf;
use std::process::{Command, Output};

struct World {
    _tmp: tempfile::TempDir,
    root: PathBuf,
    home: PathBuf,
}

fn world() -> World {
    let tmp = tempfile::tempdir().unwrap();
    let base = std::fs::canonicalize(tmp.path()).unwrap();
    let root = base.join("proj");
    let home = base.join("home");
    std::fs::create_dir_all(root.join(".khaelor")).unwrap();
    std::fs::create_dir_all(&home).unwrap();
    World {
        _tmp: tmp,
        root,
        home,
    }
}

/// Runs the binary with `--root`/`--home` right after the subcommand (before any `--`).
fn bin(w: &World, args: &[&str]) -> Output {
    let (sub, rest) = args.split_first().unwrap();
    Command::new(env!("CARGO_BIN_EXE_khaelor-perm"))
        .arg(sub)
        .arg("--root")
        .arg(&w.root)
        .arg("--home")
        .arg(&w.home)
        .args(rest)
        .env("KHAELOR_PERM_STATE_DIR", w.root.with_file_name("state"))
        .output()
        .unwrap()
}

/// Trusts the project config as it is now (project allows apply only to
/// trusted content), in the same state dir `bin` uses.
fn trust(w: &World) {
    let o = Command::new(env!("CARGO_BIN_EXE_khaelor-perm"))
        .arg("trust")
        .arg(&w.root)
        .env("KHAELOR_PERM_STATE_DIR", w.root.with_file_name("state"))
        .output()
        .unwrap();
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[test]
fn check_exit_status_follows_the_decision() {
    let w = world();
    let allow = bin(
        &w,
        &[
            "check",
            "--tool",
            "read",
            "--input",
            r#"{"path":"README.md"}"#,
        ],
    );
    assert_eq!(allow.status.code(), Some(0), "{allow:?}");
    assert!(stdout(&allow).starts_with("allow\n"));

    let ask = bin(
        &w,
        &[
            "check",
            "--tool",
            "write",
            "--input",
            r#"{"path":"../x.txt","content":"hi\n"}"#,
        ],
    );
    assert_eq!(ask.status.code(), Some(3), "{ask:?}");
    let text = stdout(&ask);
    assert!(text.starts_with("ask\n"), "{text}");
    assert!(text.contains("╭─ KHAELOR requests permission"), "{text}");
    assert!(
        text.contains("rule: file.write.outsideProject / \"*\" (default)"),
        "{text}"
    );

    let deny = bin(
        &w,
        &[
            "check",
            "--non-interactive",
            "--tool",
            "webfetch",
            "--input",
            r#"{"url":"https://x.dev"}"#,
        ],
    );
    assert_eq!(deny.status.code(), Some(4), "{deny:?}");
    assert!(
        stdout(&deny)
            .contains("KHAELOR is running non-interactively; interactive approval is unavailable.")
    );
}

#[test]
fn check_json_prints_the_decision() {
    let w = world();
    std::fs::write(
        w.root.join(".khaelor/config.json"),
        r#"{"permissions": {"network.access": {"https://docs.rs/*": "deny"}}}"#,
    )
    .unwrap();
    let o = bin(
        &w,
        &[
            "check",
            "--json",
            "--tool",
            "webfetch",
            "--input",
            r#"{"url":"https://docs.rs/x"}"#,
        ],
    );
    assert_eq!(o.status.code(), Some(4), "{o:?}");
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["decision"], "deny");
    assert_eq!(v["requests"][0]["decision"], "deny");
    assert_eq!(v["requests"][0]["rule"]["source"], "project");
    assert_eq!(v["requests"][0]["rule"]["origin"]["line"], 1);
    assert!(
        v["message"]
            .as_str()
            .unwrap()
            .starts_with("Permission denied by policy: network.access for \"https://docs.rs/x\"")
    );
    assert_eq!(v["alwaysPatterns"], serde_json::json!([]));

    let ask = bin(
        &w,
        &[
            "check",
            "--json",
            "--tool",
            "webfetch",
            "--input",
            r#"{"url":"https://example.com/a"}"#,
        ],
    );
    assert_eq!(ask.status.code(), Some(3));
    let v: serde_json::Value = serde_json::from_slice(&ask.stdout).unwrap();
    assert_eq!(v["panel"]["verb"], "Fetch");
    assert_eq!(v["alwaysPatterns"][1], "https://example.com/*");
}

#[test]
fn usage_and_input_errors_exit_2() {
    let w = world();
    let cases: &[&[&str]] = &[
        &["check", "--tool", "teleport", "--input", "{}"],
        &["check", "--tool", "read", "--input", "{not json"],
        &["check", "--tool", "read", "--input", "{}"],
        &["check"],
        &["check", "--tool", "read", "--input", "{}", "--", "ls"],
    ];
    for args in cases {
        let o = bin(&w, args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {o:?}");
        assert!(
            String::from_utf8_lossy(&o.stderr).starts_with("error: "),
            "{args:?}: {o:?}"
        );
    }
    let o = bin(
        &w,
        &["check", "--json", "--tool", "teleport", "--input", "{}"],
    );
    assert_eq!(o.status.code(), Some(2));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["error"]["code"], "unknownTool");
}

#[test]
fn a_relative_or_missing_root_is_a_clear_error() {
    for root in ["relative/dir", "/definitely/not/here"] {
        let o = Command::new(env!("CARGO_BIN_EXE_khaelor-perm"))
            .args([
                "check",
                "--root",
                root,
                "--home",
                "/tmp",
                "--tool",
                "read",
                "--input",
                r#"{"path":"a"}"#,
            ])
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(2), "{root}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains(&format!("`{root}`")), "{err}");
    }
}

#[test]
fn rules_lists_in_order_and_reports_problems() {
    let w = world();
    let o = bin(&w, &["rules"]);
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    let text = stdout(&o);
    assert!(
        text.starts_with("Preset: recommended (from default)"),
        "{text}"
    );
    let first_rule = text
        .lines()
        .skip_while(|l| !l.starts_with("Effective rules"))
        .nth(1)
        .unwrap();
    assert!(first_rule.contains("allow  file.read"), "{text}");

    std::fs::copy(
        common::fixtures_dir().join("configs/shadowed.json"),
        w.root.join(".khaelor/config.json"),
    )
    .unwrap();
    trust(&w);
    let o = bin(&w, &["rules"]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "shadowed rules fail only with --check"
    );
    assert!(!stdout(&o).contains("Shadowed rules:"));
    let o = bin(&w, &["rules", "--check"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stdout(&o).contains("Shadowed rules:"));
    let o = bin(&w, &["rules", "--check", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["shadowed"].as_array().unwrap().len(), 3);
    // The first project rule comes right after the built-in defaults.
    let first_project = khaelor_perm::policy::rules::default_rules().len()
        + khaelor_perm::policy::presets::Preset::Recommended
            .rules()
            .len();
    assert_eq!(v["rules"][first_project]["origin"]["line"], 4);

    std::fs::copy(
        common::fixtures_dir().join("configs/syntax_error.json"),
        w.root.join(".khaelor/config.json"),
    )
    .unwrap();
    let o = bin(&w, &["rules"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stdout(&o).contains("config.json:4:25: expected comma"),
        "{}",
        stdout(&o)
    );
}

#[test]
fn rules_names_project_directories_on_path() {
    let w = world();
    let venv = w.root.join(".venv/bin");
    std::fs::create_dir_all(&venv).unwrap();
    let with_path = |path: &str| {
        let out = Command::new(env!("CARGO_BIN_EXE_khaelor-perm"))
            .args(["rules", "--root"])
            .arg(&w.root)
            .arg("--home")
            .arg(&w.home)
            .env("KHAELOR_PERM_STATE_DIR", w.root.with_file_name("state"))
            .env("PATH", path)
            .output()
            .unwrap();
        stdout(&out)
    };
    let text = with_path(&format!("{}:/usr/bin:/bin", venv.display()));
    let line = text
        .lines()
        .find(|l| l.starts_with("PATH: "))
        .unwrap_or_default();
    assert!(line.contains(&format!("`{}`", venv.display())), "{text}");
    assert!(!line.contains("relative"), "{text}");
    let text = with_path(".:/usr/bin:/bin");
    assert!(text.contains("PATH: relative entries"), "{text}");
    let text = with_path("/usr/bin:/bin");
    assert!(!text.contains("PATH: "), "nothing to say: {text}");
}

#[test]
fn rules_marks_rules_that_expire_and_check_skips_the_expired() {
    let w = world();
    std::fs::write(
        w.root.join(".khaelor/config.json"),
        r#"{ "permissions": { "rules": [
  { "capability": "process.execute", "pattern": "make deploy", "action": "allow", "expires": "2001-01-01" },
  { "capability": "process.execute", "pattern": "make docs", "action": "allow", "expires": "2999-01-01" }
] } }"#,
    )
    .unwrap();
    trust(&w);
    let text = stdout(&bin(&w, &["rules"]));
    assert!(
        text.lines()
            .any(|l| l.contains("\"make deploy\"") && l.ends_with("(expired 2001-01-01: skipped)")),
        "{text}"
    );
    assert!(
        text.lines()
            .any(|l| l.contains("\"make docs\"") && l.ends_with("(expires 2999-01-01)")),
        "{text}"
    );
    assert_eq!(
        bin(&w, &["check", "--", "make deploy"]).status.code(),
        Some(3)
    );
    assert_eq!(
        bin(&w, &["check", "--", "make docs"]).status.code(),
        Some(0)
    );
}

/// Needs the bash engines from main.
#[test]
fn check_shorthand_runs_bash() {
    let w = world();
    let o = bin(&w, &["check", "--", "git status"]);
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    let o = bin(
        &w,
        &[
            "check", "--json", "--", "git", "status", "&&", "rm", "-rf", "build",
        ],
    );
    // The joined words are quoted: `&&` is a literal argument, one git command.
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["summary"], "git status '&&' rm -rf build");
}
