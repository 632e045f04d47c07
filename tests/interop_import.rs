//! `rules import` for every format: each realistic source file under
//! `fixtures/interop/<format>/` is imported with the real binary into a real project,
//! and every case of its decision table (`decisions.jsonl`) is decided with the real
//! `check`. A case gives the source system's decision; where ours differs it names the
//! documented reason, and ours must then be the stricter one.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde::Deserialize;

#[derive(Debug, Deserialize)]
struct Case {
    id: String,
    tool: String,
    input: serde_json::Value,
    source: String,
    #[serde(default)]
    ours: Option<String>,
    #[serde(default)]
    difference: Option<String>,
}

/// The documented reasons ours may differ, each only ever stricter.
const DIFFERENCES: &[&str] = &[
    "floor",
    "self-protection",
    "analysis",
    "defaults",
    "widened",
    "untranslated-allow",
];

fn rank(d: &str) -> u8 {
    match d {
        "allow" => 0,
        "ask" => 1,
        "deny" => 2,
        other => panic!("unknown decision `{other}`"),
    }
}

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_khaelor-perm"))
}

/// What the user does after reviewing an imported project file: trust it,
/// so its allows apply. The trust records live in the world's own state directory.
fn trust(w: &World) {
    let o = bin()
        .arg("trust")
        .arg(&w.project)
        .arg("--state-dir")
        .arg(w.home.join(".state"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
}

struct World {
    _dir: tempfile::TempDir,
    project: PathBuf,
    home: PathBuf,
}

fn world() -> World {
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().canonicalize().unwrap();
    let project = base.join("proj");
    let home = base.join("home");
    std::fs::create_dir_all(&project).unwrap();
    std::fs::create_dir_all(&home).unwrap();
    World {
        _dir: dir,
        project,
        home,
    }
}

fn fixture(format: &str, file: &str) -> PathBuf {
    common::fixtures_dir()
        .join("interop")
        .join(format)
        .join(file)
}

fn import(w: &World, format: &str, files: &[PathBuf], extra: &[&str]) -> Output {
    bin()
        .args(["rules", "import", "--from", format])
        .args(files)
        .arg("--project")
        .arg(&w.project)
        .arg("--home")
        .arg(&w.home)
        .args(extra)
        .output()
        .unwrap()
}

fn text(o: &Output) -> String {
    format!(
        "status {:?}\nstdout:\n{}\nstderr:\n{}",
        o.status.code(),
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn check(w: &World, tool: &str, input: &serde_json::Value) -> serde_json::Value {
    let input = input
        .to_string()
        .replace("{home}", &w.home.display().to_string());
    let o = bin()
        .args(["check", "--json", "--tool", tool, "--input", &input])
        .arg("--state-dir")
        .arg(w.home.join(".state"))
        .arg("--root")
        .arg(&w.project)
        .arg("--home")
        .arg(&w.home)
        .output()
        .unwrap();
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", text(&o)))
}

/// Imports the format's fixture and checks its whole decision table.
fn run_table(format: &str, files: &[&str], extra: &[&str]) {
    let w = world();
    let paths: Vec<PathBuf> = files.iter().map(|f| fixture(format, f)).collect();
    let o = import(&w, format, &paths, extra);
    assert!(o.status.success(), "{}", text(&o));
    if !extra.contains(&"--user") {
        assert!(
            String::from_utf8_lossy(&o.stderr).contains("khaelor-perm trust"),
            "the import says how to make its allows apply: {}",
            text(&o)
        );
        trust(&w);
    }
    let config = std::fs::read_to_string(w.project.join(".khaelor/config.json")).unwrap();
    // Every rule names the source file and line it came from.
    for (i, line) in config.lines().enumerate() {
        if line.trim_start().starts_with("{ \"capability\"") {
            let prev = config
                .lines()
                .take(i)
                .filter(|l| !l.trim_start().starts_with("//   note:"))
                .last()
                .unwrap_or("");
            let named = paths
                .iter()
                .any(|p| prev.contains(&format!("{}:", p.display())));
            assert!(
                named,
                "rule without provenance in {format}: {line}\n{config}"
            );
        }
    }
    let rules = bin()
        .args(["rules", "--json", "--check"])
        .arg("--root")
        .arg(&w.project)
        .arg("--home")
        .arg(&w.home)
        .output()
        .unwrap();
    let listing: serde_json::Value = serde_json::from_slice(&rules.stdout).unwrap();
    assert_eq!(
        listing["errors"],
        serde_json::json!([]),
        "{format}: the imported config loads cleanly\n{config}"
    );

    let cases: Vec<(usize, Case)> =
        common::load_table(&format!("interop/{format}/decisions.jsonl"));
    assert!(cases.len() >= 10, "{format}: a decision table needs cases");
    let mut failures = Vec::new();
    for (line, c) in &cases {
        let want = match (&c.ours, &c.difference) {
            (Some(ours), Some(why)) => {
                assert!(
                    DIFFERENCES.contains(&why.as_str()),
                    "line {line} {}: undocumented difference `{why}`",
                    c.id
                );
                assert!(
                    rank(ours) > rank(&c.source),
                    "line {line} {}: a difference must be stricter than the source",
                    c.id
                );
                ours.clone()
            }
            (None, None) => c.source.clone(),
            _ => panic!("line {line} {}: `ours` and `difference` go together", c.id),
        };
        let d = check(&w, &c.tool, &c.input);
        let got = d["decision"].as_str().unwrap_or("<none>").to_string();
        if got != want {
            failures.push(format!(
                "{format} line {line} {}: got {got}, want {want} (source: {})\n{}",
                c.id,
                c.source,
                serde_json::to_string_pretty(&d["requests"]).unwrap()
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{}\n--- config ---\n{config}",
        failures.join("\n")
    );
}

#[test]
fn claude_settings_decide_as_claude_code() {
    run_table("claude", &["settings.json"], &[]);
}

#[test]
fn opencode_permission_decides_as_opencode() {
    run_table("opencode", &["opencode.json"], &[]);
}

#[test]
fn gemini_policy_decides_as_gemini_cli() {
    run_table("gemini", &["policy.toml"], &[]);
}

#[test]
fn codex_rules_decide_as_codex() {
    run_table("codex", &["default.rules"], &[]);
}

#[test]
fn kurahi_globs_decide_as_kurahi() {
    run_table("kurahi", &["kolo.json5"], &["--agent", "builder"]);
}

#[test]
fn kram_policy_and_grants_decide_as_kram() {
    run_table(
        "kram",
        &["permissions.json", ".kram/permission_grants.json"],
        &[],
    );
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).to_string()
}

#[test]
fn untranslated_entries_are_reported_with_reasons() {
    let w = world();
    let o = import(
        &w,
        "claude",
        &[fixture("claude", "settings.json")],
        &["--dry-run"],
    );
    assert!(o.status.success(), "{}", text(&o));
    let err = stderr(&o);
    assert!(
        err.contains("mcp__github__create_pull_request: an MCP tool"),
        "{err}"
    );
    assert!(String::from_utf8_lossy(&o.stdout).contains("// Not translated:"));
    assert!(
        !w.project.join(".khaelor").exists(),
        "a dry run writes nothing"
    );
}

#[test]
fn an_untranslatable_deny_fails_loudly_and_writes_nothing() {
    let w = world();
    let src = w.project.join("deny.toml");
    std::fs::write(
        &src,
        "[[rule]]\ntoolName = \"run_shell_command\"\ncommandRegex = \"(rm|shred) .*\"\ndecision = \"deny\"\npriority = 5\n",
    )
    .unwrap();
    let o = import(&w, "gemini", std::slice::from_ref(&src), &[]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(
        stderr(&o).contains(&format!("{}:1: the deny", src.display())),
        "{}",
        text(&o)
    );
    assert!(!w.project.join(".khaelor/config.json").exists());
}

#[test]
fn an_existing_config_is_never_overwritten() {
    let w = world();
    std::fs::create_dir_all(w.project.join(".khaelor")).unwrap();
    std::fs::write(
        w.project.join(".khaelor/config.json"),
        "{ \"permissions\": {} }\n",
    )
    .unwrap();
    let o = import(&w, "codex", &[fixture("codex", "default.rules")], &[]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert_eq!(
        std::fs::read_to_string(w.project.join(".khaelor/config.json")).unwrap(),
        "{ \"permissions\": {} }\n"
    );
}

#[test]
fn bad_sources_are_errors_with_positions() {
    let w = world();
    let cases: &[(&str, &str, &str)] = &[
        (
            "codex",
            "x.rules",
            "prefix_rule(pattern = [\"git\"])\nload(\"x.star\", \"y\")\n",
        ),
        (
            "codex",
            "y.rules",
            "prefix_rule(pattern = [\"git\"], match = [\"hg status\"])\n",
        ),
        (
            "claude",
            "s.json",
            "{ \"permissions\": { \"allow\": \"Bash\" } }",
        ),
        (
            "gemini",
            "p.toml",
            "[[rule]]\ntoolName = \"run_shell_command\"\ndecision = \"maybe\"\n",
        ),
        (
            "kram",
            "k.json",
            "{ \"rules\": [ { \"tool\": \"bash\", \"decision\": \"perhaps\" } ] }",
        ),
    ];
    let wants = [
        "x.rules:2:1: unsupported statement `load`",
        "y.rules:1:1: the example `hg status` of this rule does not match its translation",
        "s.json:1:29: `permissions.allow` must be an array of strings, found a string",
        "p.toml:3:12: unknown decision `maybe`",
        "k.json:1:14: unknown action `perhaps`",
    ];
    for ((format, name, body), want) in cases.iter().zip(wants) {
        let p = w.project.join(name);
        std::fs::write(&p, body).unwrap();
        let o = import(&w, format, &[p], &["--dry-run"]);
        assert_eq!(o.status.code(), Some(2), "{format}: {}", text(&o));
        assert!(
            stderr(&o).contains(want),
            "{format}: want `{want}` in\n{}",
            text(&o)
        );
    }
}

#[test]
fn kurahi_without_rules_is_inert() {
    let w = world();
    let p = w.project.join("kolo.json5");
    std::fs::write(&p, "{ agents: { defaults: {}, list: [ { id: 'a' } ] } }").unwrap();
    let o = import(&w, "kurahi", &[p], &["--agent", "a", "--dry-run"]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(stderr(&o).contains("0 rules translated"), "{}", text(&o));
}

#[test]
fn import_into_the_user_file() {
    let w = world();
    let o = import(
        &w,
        "codex",
        &[fixture("codex", "default.rules")],
        &["--user"],
    );
    assert!(o.status.success(), "{}", text(&o));
    assert!(w.home.join(".khaelor/config.json").is_file());
    assert!(!Path::new(&w.project.join(".khaelor/config.json")).exists());
}

#[test]
fn a_project_path_with_pattern_characters_is_refused() {
    let w = world();
    let odd = w.project.join("a*b");
    std::fs::create_dir_all(&odd).unwrap();
    let o = bin()
        .args(["rules", "import", "--from", "codex"])
        .arg(fixture("codex", "default.rules"))
        .arg("--project")
        .arg(&odd)
        .arg("--home")
        .arg(&w.home)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        stderr(&o).contains("contains pattern characters"),
        "{}",
        text(&o)
    );
    assert!(!odd.join(".khaelor").exists());
}
