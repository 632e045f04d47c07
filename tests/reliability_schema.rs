//! Schemathesis (PyPI, pinned by `tests/setup/schemathesis.sh`) against the
//! live server and its own `/openapi.yaml`, with every check including positive data
//! acceptance: 0 failures.
//!
//! The server runs on loopback with a temp state dir, home and project. Hooks
//! (`tests/schemathesis/khaelor_hooks.py`) point most schema-valid project roots at that
//! project, so the cases reach analysis and the session flow instead of stopping at a
//! 404 for a directory that does not exist. Bounded by `--max-examples` and a fixed
//! seed. Without Schemathesis the test fails with a message naming its setup script.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod http_support;

use std::path::PathBuf;
use std::process::Command;
use std::time::Instant;

use http_support::Dirs;

/// Cases per operation and phase; about 2,500 cases in all, well under two minutes on
/// two loaded cores.
const MAX_EXAMPLES: &str = "30";
/// Fixed, so a failure in CI replays (`st replay` or the same command).
const SEED: &str = "15015015";

fn schemathesis() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("KHAELOR_SCHEMATHESIS") {
        return Some(PathBuf::from(p));
    }
    let dir = match std::env::var_os("KHAELOR_SCHEMATHESIS_DIR") {
        Some(d) => PathBuf::from(d),
        None => PathBuf::from(std::env::var_os("HOME")?).join(".cache/khaelor-perm/schemathesis"),
    };
    let bin = dir.join("bin/schemathesis");
    bin.is_file().then_some(bin)
}

/// `N generated, M passed` (or `…, K found …`) from the summary.
fn counts(out: &str) -> Option<(u64, u64)> {
    let line = out.lines().find(|l| l.contains(" generated, "))?;
    let mut words = line.split_whitespace();
    let generated = words.next()?.parse().ok()?;
    let rest: Vec<&str> = words.collect();
    let passed = rest
        .windows(2)
        .find(|w| w[1].starts_with("passed"))
        .and_then(|w| w[0].parse().ok())
        .unwrap_or(0);
    Some((generated, passed))
}

#[test]
fn schemathesis_finds_no_failure() {
    // Like every tool a test needs (tests/setup/README.md): missing is a failure that
    // names its setup script, never a silent pass.
    let st = schemathesis().unwrap_or_else(|| {
        panic!(
            "schemathesis is not installed: run `bash tests/setup/schemathesis.sh` (the README's test command `bash tests/run.sh` does)"
        )
    });
    let d = Dirs::new();
    std::fs::create_dir_all(d.root().join("src")).unwrap();
    std::fs::write(d.root().join("src/main.rs"), "fn main() {}\n").unwrap();
    d.write_config(
        r#"{
  // rules for the generated calls to meet
  "permissions": {"rules": [
    {"capability": "process.execute", "pattern": "git status", "action": "allow"},
    {"capability": "network.access", "pattern": "*", "action": "deny"}
  ]}
}
"#,
    );
    let s = d.start(&[]);
    let work = tempfile::tempdir().unwrap();
    let hooks = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/schemathesis");
    let start = Instant::now();
    // The person's panel token: answering and listing pending calls need it.
    let auth: Vec<String> = s
        .token
        .iter()
        .flat_map(|t| ["--header".to_string(), format!("Authorization: Bearer {t}")])
        .collect();
    let out = Command::new(&st)
        .current_dir(work.path())
        .env("PYTHONPATH", hooks)
        .env("SCHEMATHESIS_HOOKS", "khaelor_hooks")
        .env("KHAELOR_PROJECT", d.root_str())
        .env("NO_COLOR", "1")
        .args([
            "run",
            &format!("{}/openapi.yaml", s.base),
            "--checks",
            "all",
            "--max-examples",
            MAX_EXAMPLES,
            "--seed",
            SEED,
            "--generation-database",
            "none",
            "--request-timeout",
            "20",
            "--no-color",
        ])
        .args(&auth)
        .output()
        .expect("run schemathesis");
    let took = start.elapsed();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let (generated, passed) =
        counts(&text).unwrap_or_else(|| panic!("no summary from schemathesis:\n{text}"));
    eprintln!(
        "schemathesis: {generated} cases generated, {passed} passed, {} failed, in {:.1} s",
        generated - passed.min(generated),
        took.as_secs_f64()
    );
    assert!(
        out.status.success() && passed == generated,
        "schemathesis found failures (exit {:?}):\n{text}",
        out.status.code()
    );
    assert!(
        generated >= 1000,
        "only {generated} cases ran: the run did not test the API\n{text}"
    );
    // Every operation was reached, not skipped (e.g. for a schema it cannot read).
    let field = |name: &str| {
        text.lines()
            .find_map(|l| l.trim().strip_prefix(name))
            .map(|v| v.trim().to_string())
            .unwrap_or_else(|| panic!("no `{name}` in the summary:\n{text}"))
    };
    let selected = field("Selected:");
    let total = selected.split('/').next_back().unwrap_or_default();
    assert_eq!(field("Tested:"), total, "operations not tested:\n{text}");
}
