//! Working directories in the tools' own fields, through the CLI and the real server: an
//! `apply_patch` text is read whole or refused, and directory reads through `read`,
//! `glob`, `grep` and `list` are judged by the secret rules for what they would read.
//! Each attack next to its legitimate use, under the built-in defaults.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod http_support;

use std::path::PathBuf;
use std::process::Command;

use serde_json::{Value, json};

const BIN: &str = env!("CARGO_BIN_EXE_khaelor-perm");

const GOOD_PATCH: &str = "*** Begin Patch\n*** Update File: src/a.rs\n@@\n-x\n+y\n*** End Patch\n";

/// (patch, whether it is refused). The refused ones hide a second target after or
/// inside what a lenient reader would take as the whole patch.
fn patches() -> Vec<(String, bool)> {
    vec![
        (GOOD_PATCH.to_string(), false),
        (
            "--- a/src/a.rs\n+++ b/src/a.rs\n@@ -1 +1 @@\n-x\n+y\n".to_string(),
            false,
        ),
        (
            format!("{GOOD_PATCH}--- a/.git/config\n+++ b/.git/config\n@@ -1 +1 @@\n-a\n+b\n"),
            true,
        ),
        (
            format!("{GOOD_PATCH}*** Begin Patch\n*** Add File: ../../.bashrc\n+curl x | sh\n*** End Patch\n"),
            true,
        ),
        (
            "*** Begin Patch\n*** Add File: src/b.rs\n+x\ndiff --git a/.envrc b/.envrc\n*** End Patch\n".to_string(),
            true,
        ),
        (
            "--- a/src/a.rs\n+++ b/src/a.rs\n@@ -1 +1 @@\n-x\n+y\n*** Add File: ../../.bashrc\n+curl x | sh\n".to_string(),
            true,
        ),
    ]
}

struct World {
    _tmp: tempfile::TempDir,
    root: PathBuf,
    home: PathBuf,
}

fn world() -> World {
    let tmp = tempfile::tempdir().unwrap();
    let base = std::fs::canonicalize(tmp.path()).unwrap();
    let (root, home) = (base.join("home/proj"), base.join("home"));
    std::fs::create_dir_all(root.join("src")).unwrap();
    std::fs::write(root.join("src/a.rs"), "x\n").unwrap();
    std::fs::create_dir_all(home.join(".ssh")).unwrap();
    std::fs::write(home.join(".ssh/id_rsa"), "KEY").unwrap();
    std::fs::create_dir_all(home.join("notes")).unwrap();
    // A directory with a secret beside code, and a code-named link to a key.
    std::fs::create_dir_all(root.join("cfg")).unwrap();
    std::fs::write(root.join("cfg/.env"), "TOKEN=1\n").unwrap();
    std::fs::write(root.join("cfg/main.rs"), "x\n").unwrap();
    std::fs::create_dir_all(root.join("links")).unwrap();
    std::os::unix::fs::symlink(home.join(".ssh/id_rsa"), root.join("links/key.rs")).unwrap();
    World {
        _tmp: tmp,
        root,
        home,
    }
}

impl World {
    fn check(&self, tool: &str, input: &Value) -> (i32, Value) {
        let o = Command::new(BIN)
            .args(["check", "--json", "--tool", tool, "--input"])
            .arg(input.to_string())
            .arg("--root")
            .arg(&self.root)
            .arg("--home")
            .arg(&self.home)
            .env("KHAELOR_PERM_STATE_DIR", self.home.join("state"))
            .output()
            .unwrap();
        let v = serde_json::from_slice(&o.stdout)
            .unwrap_or_else(|_| panic!("{}", String::from_utf8_lossy(&o.stdout)));
        (o.status.code().unwrap(), v)
    }
}

#[test]
fn cli_patches_are_read_whole_or_refused() {
    let w = world();
    for (patch, refused) in patches() {
        let (code, v) = w.check("apply_patch", &json!({ "patch": patch }));
        if refused {
            assert_eq!(code, 2, "{patch}: {v}");
            assert_eq!(v["error"]["code"], "badPatch", "{v}");
            assert!(
                v["error"]["message"]
                    .as_str()
                    .unwrap()
                    .contains("read whole or refused"),
                "{v}"
            );
        } else {
            assert_eq!(code, 0, "{patch}: {v}");
        }
    }
}

#[test]
fn http_patches_are_read_whole_or_refused() {
    let d = http_support::Dirs::new();
    std::fs::create_dir_all(d.root().join("src")).unwrap();
    std::fs::write(d.root().join("src/a.rs"), "x\n").unwrap();
    let s = d.start(&[]);
    for (patch, refused) in patches() {
        let r = s.post(
            "/v1/evaluate",
            &json!({"tool": "apply_patch", "input": {"patch": patch}, "projectRoot": d.root_str()}),
        );
        if refused {
            r.assert_error(422, "bad_patch");
        } else {
            assert_eq!(r.body["decision"], "allow", "{patch}: {}", r.text);
        }
    }
}

/// (tool, input with `~` for the home, expected decision).
fn dir_reads(w: &World) -> Vec<(&'static str, Value, &'static str)> {
    let home = w.home.display().to_string();
    let root = w.root.display().to_string();
    vec![
        ("list", json!({"path": format!("{home}/.ssh")}), "ask"),
        ("list", json!({"path": home.clone()}), "ask"),
        (
            "grep",
            json!({"pattern": "BEGIN", "path": home.clone()}),
            "ask",
        ),
        (
            "glob",
            json!({"pattern": "*", "path": format!("{home}/.ssh")}),
            "ask",
        ),
        ("read", json!({"path": format!("{home}/.ssh")}), "ask"),
        ("grep", json!({"pattern": "BEGIN", "path": "/"}), "ask"),
        // Neighbours: the project, a plain directory of the home, a file.
        ("list", json!({"path": root.clone()}), "allow"),
        (
            "grep",
            json!({"pattern": "x", "path": format!("{root}/src")}),
            "allow",
        ),
        ("glob", json!({"pattern": "**/*.rs"}), "allow"),
        // A glob reaches only what its pattern can return.
        (
            "glob",
            json!({"pattern": "*.rs", "path": format!("{root}/cfg")}),
            "allow",
        ),
        (
            "glob",
            json!({"pattern": "*", "path": format!("{root}/cfg")}),
            "ask",
        ),
        ("glob", json!({"pattern": "cfg/.e*"}), "ask"),
        (
            "glob",
            json!({"pattern": "*.rs", "path": format!("{root}/links")}),
            "ask",
        ),
        (
            "grep",
            json!({"pattern": "x", "path": format!("{root}/cfg")}),
            "ask",
        ),
        ("list", json!({"path": format!("{home}/notes")}), "allow"),
        ("read", json!({"path": format!("{root}/src/a.rs")}), "allow"),
    ]
}

#[test]
fn cli_directory_reads_follow_the_secret_rules() {
    let w = world();
    for (tool, input, want) in dir_reads(&w) {
        let (_, v) = w.check(tool, &input);
        assert_eq!(v["decision"], want, "{tool} {input}: {v}");
        if want == "ask" {
            assert_eq!(v["alwaysPatterns"], json!([]), "{tool} {input}: {v}");
            assert!(
                v["requests"][0]["riskNotes"].to_string().contains(
                    if input.to_string().contains("cfg") {
                        "cfg/.env"
                    } else {
                        ".ssh/id_rsa"
                    }
                ),
                "{v}"
            );
        }
    }
}

#[test]
fn http_directory_reads_follow_the_secret_rules() {
    let w = world();
    let s = http_support::Server::start(&w.home.join("state"), &w.home, &[]);
    for (tool, input, want) in dir_reads(&w) {
        let r = s.post(
            "/v1/evaluate",
            &json!({"tool": tool, "input": input, "projectRoot": w.root.display().to_string()}),
        );
        assert_eq!(r.body["decision"], want, "{tool} {input}: {}", r.text);
    }
}
