//! Globs read as the program really reads them: a glob operand of a verified
//! read-only command is expanded against the file system and each match is judged by
//! the read rules (fixtures/globs.jsonl), through the CLI under the built-in defaults.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use serde::Deserialize;
use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_khaelor-perm");

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Case {
    command: String,
    decision: String,
    #[serde(default)]
    reads: Option<Vec<String>>,
    #[serde(default)]
    writes: Option<Vec<String>>,
}

fn world() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let base = std::fs::canonicalize(tmp.path()).unwrap();
    let (root, home) = (base.join("proj"), base.join("home"));
    for d in ["src", "cfg", "links", "lit"] {
        std::fs::create_dir_all(root.join(d)).unwrap();
    }
    std::fs::create_dir_all(home.join(".ssh")).unwrap();
    std::fs::write(home.join(".ssh/id_rsa"), "KEY").unwrap();
    for f in [
        "src/a.rs",
        "src/b.rs",
        "cfg/.env",
        "cfg/main.rs",
        "lit/lit*",
    ] {
        std::fs::write(root.join(f), "x\n").unwrap();
    }
    std::os::unix::fs::symlink(home.join(".ssh/id_rsa"), root.join("links/key.rs")).unwrap();
    (tmp, root, home)
}

fn relative(subject: &str, root: &Path, home: &Path) -> String {
    let p = Path::new(subject);
    if let Ok(r) = p.strip_prefix(root) {
        return r.display().to_string();
    }
    if let Ok(r) = p.strip_prefix(home) {
        return format!("~/{}", r.display());
    }
    subject.to_string()
}

#[test]
fn glob_operands_are_read_as_bash_passes_them() {
    let (_tmp, root, home) = world();
    let text = std::fs::read_to_string(common::fixtures_dir().join("globs.jsonl")).unwrap();
    let mut failures = Vec::new();
    let mut rows = 0;
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with("//") {
            continue;
        }
        rows += 1;
        let case: Case = serde_json::from_str(line).unwrap();
        let o = Command::new(BIN)
            .args(["check", "--json", "--root"])
            .arg(&root)
            .arg("--home")
            .arg(&home)
            .env("KHAELOR_PERM_STATE_DIR", home.join("state"))
            .arg("--")
            .arg(&case.command)
            .current_dir(&root)
            .output()
            .unwrap();
        let v: Value = serde_json::from_slice(&o.stdout).unwrap();
        if v["decision"] != case.decision.as_str() {
            failures.push(format!("line {}: {}: {v}", i + 1, case.command));
            continue;
        }
        for (want, what) in [(&case.reads, "read"), (&case.writes, "write")] {
            let Some(want) = want else { continue };
            let mut got: Vec<String> = v["requests"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|r| {
                    r["capability"]
                        .as_str()
                        .is_some_and(|c| c.starts_with(&format!("file.{what}")))
                })
                .map(|r| relative(r["subject"].as_str().unwrap(), &root, &home))
                .collect();
            got.sort();
            if &got != want {
                failures.push(format!("line {}: {}: {what}s {got:?}", i + 1, case.command));
            }
        }
    }
    assert!(rows >= 10, "the table has its rows");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
