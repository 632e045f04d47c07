//! `rules export`: nothing exported is wider than we decide (every exported
//! allow is an allow of our real `check`), what cannot be expressed is listed, and the
//! expressible subset round-trips: exporting to a host format and importing it back
//! into a fresh project gives the same decisions.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const CONFIG: &str = r#"{
  "permissions": {
    "rules": [
      { "capability": "process.execute", "pattern": "npm test", "action": "allow" },
      { "capability": "process.execute", "pattern": "make lint", "action": "allow" },
      { "capability": "process.execute", "pattern": "cargo build *", "action": "allow" },
      { "capability": "process.execute", "pattern": "cat .env", "action": "allow" },
      { "capability": "process.execute", "pattern": "npm test > out.txt", "action": "allow" },
      { "capability": "process.execute", "pattern": "make deploy", "action": "allow" },
      { "capability": "process.execute", "pattern": "make deploy", "action": "deny" },
      { "capability": "process.execute", "pattern": "git push *", "action": "ask" },
      { "capability": "process.execute", "pattern": "rm -rf *", "action": "deny" },
      { "capability": "process.execute", "pattern": "terraform * -auto-approve", "action": "deny" },
      { "capability": "file.read", "pattern": "/srv/*", "action": "deny" }
    ]
  }
}"#;

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_khaelor-perm"))
}

fn text(o: &Output) -> String {
    format!(
        "status {:?}\nstdout:\n{}\nstderr:\n{}",
        o.status.code(),
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

struct World {
    _dir: tempfile::TempDir,
    base: PathBuf,
    home: PathBuf,
}

fn world() -> World {
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().canonicalize().unwrap();
    let home = base.join("home");
    std::fs::create_dir_all(&home).unwrap();
    World {
        _dir: dir,
        base,
        home,
    }
}

/// A project with its config, trusted by the user, so its allows apply.
fn project(w: &World, name: &str, config: Option<&str>) -> PathBuf {
    let p = w.base.join(name);
    std::fs::create_dir_all(p.join(".khaelor")).unwrap();
    if let Some(c) = config {
        std::fs::write(p.join(".khaelor/config.json"), c).unwrap();
        trust(w, &p);
    }
    p
}

fn state(w: &World) -> PathBuf {
    w.base.join("state")
}

fn trust(w: &World, root: &Path) {
    let o = bin()
        .arg("trust")
        .arg(root)
        .arg("--state-dir")
        .arg(state(w))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
}

fn export(w: &World, root: &Path, to: &str) -> serde_json::Value {
    let o = bin()
        .args(["rules", "export", "--json", "--to", to])
        .arg("--state-dir")
        .arg(state(w))
        .arg("--root")
        .arg(root)
        .arg("--home")
        .arg(&w.home)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    serde_json::from_slice(&o.stdout).unwrap()
}

fn decide(w: &World, root: &Path, command: &str) -> String {
    let input = serde_json::json!({ "command": command }).to_string();
    let o = bin()
        .args(["check", "--json", "--tool", "bash", "--input", &input])
        .arg("--state-dir")
        .arg(state(w))
        .arg("--root")
        .arg(root)
        .arg("--home")
        .arg(&w.home)
        .output()
        .unwrap();
    let v: serde_json::Value =
        serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", text(&o)));
    v["decision"].as_str().unwrap().to_string()
}

/// A command the rule's pattern matches (each `*` read as one word).
fn sample(pattern: &str) -> String {
    pattern.replace('*', "x")
}

#[test]
fn every_exported_allow_is_an_allow_of_ours_and_the_rest_is_listed() {
    let w = world();
    let root = project(&w, "a", Some(CONFIG));
    for to in ["claude", "gemini", "opencode"] {
        let e = export(&w, &root, to);
        let allows: Vec<&serde_json::Value> = e["exported"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|x| x["rule"]["action"] == "allow")
            .collect();
        let exported: Vec<&str> = allows
            .iter()
            .map(|x| x["rule"]["pattern"].as_str().unwrap())
            .collect();
        // The defaults' exact allows export too; pattern allows do not.
        assert_eq!(
            exported,
            vec![
                "git status",
                "git diff",
                "git log",
                "git show",
                "git branch",
                "ls",
                "pwd",
                "npm test",
                "make lint"
            ],
            "{to}: {e:#}"
        );
        for a in &allows {
            let cmd = a["rule"]["pattern"].as_str().unwrap();
            assert_eq!(
                decide(&w, &root, cmd),
                "allow",
                "{to}: exported allow `{cmd}`"
            );
        }
        let not: Vec<(String, String)> = e["notExported"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| {
                (
                    x["rule"]["pattern"].as_str().unwrap().to_string(),
                    x["reason"].as_str().unwrap().to_string(),
                )
            })
            .collect();
        let reason = |p: &str| {
            not.iter()
                .find(|(q, _)| q == p)
                .map(|(_, r)| r.clone())
                .unwrap_or_else(|| panic!("{to}: `{p}` should be listed as not exported"))
        };
        assert!(reason("cargo build *").contains("only exact commands"));
        assert!(
            reason("cat .env").contains("not allow"),
            "the analysis asks for the .env read"
        );
        assert!(reason("npm test > out.txt").contains("shell syntax"));
        assert!(reason("/srv/*").contains("only shell-command rules"));
        assert!(
            not.iter()
                .any(|(p, r)| p == "make deploy" && r.contains("not allow")),
            "a later deny overrides the allow"
        );
        // The output itself asks for unlisted commands or leaves the host's ask default.
        let t = e["text"].as_str().unwrap();
        match to {
            "claude" => {
                assert!(t.contains("\"Bash(npm test)\"") && t.contains("\"Bash(rm -rf *)\""))
            }
            "gemini" => assert!(t.contains("decision = \"ask_user\"\npriority = 1\n")),
            _ => assert!(t.contains("\"*\": \"ask\"")),
        }
    }
}

#[test]
fn the_expressible_subset_round_trips() {
    let w = world();
    let a = project(&w, "a", Some(CONFIG));
    for (to, file) in [
        ("claude", "settings.json"),
        ("gemini", "policy.toml"),
        ("opencode", "opencode.json"),
    ] {
        let e = export(&w, &a, to);
        let src = w.base.join(format!("{to}-{file}"));
        std::fs::write(&src, e["text"].as_str().unwrap()).unwrap();
        let b = project(&w, &format!("b-{to}"), None);
        let o = bin()
            .args(["rules", "import", "--from", to])
            .arg(&src)
            .arg("--project")
            .arg(&b)
            .arg("--home")
            .arg(&w.home)
            .output()
            .unwrap();
        assert!(o.status.success(), "{to}: {}", text(&o));
        // The user reviews and trusts the imported file, as the import says.
        trust(&w, &b);
        let mut checked = 0;
        for x in e["exported"].as_array().unwrap() {
            let cmd = sample(x["rule"]["pattern"].as_str().unwrap());
            let (da, db) = (decide(&w, &a, &cmd), decide(&w, &b, &cmd));
            assert_eq!(
                da, db,
                "{to}: `{cmd}` decides {da} here but {db} after the round trip"
            );
            checked += 1;
        }
        assert!(checked >= 5, "{to}: {e:#}");
    }
}

#[test]
fn a_broken_config_exports_nothing() {
    let w = world();
    let root = project(
        &w,
        "a",
        Some("{ \"permissions\": { \"process.execute\": \"sometimes\" } }"),
    );
    let o = bin()
        .args(["rules", "export", "--to", "claude"])
        .arg("--root")
        .arg(&root)
        .arg("--home")
        .arg(&w.home)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(o.stdout.is_empty());
    assert!(String::from_utf8_lossy(&o.stderr).contains("the configuration is broken"));
}
