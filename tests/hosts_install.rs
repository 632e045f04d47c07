//! `khaelor-perm install | uninstall | doctor` on real files: idempotent, comments and
//! order kept, byte-identical after uninstall, a file it cannot parse refused and left
//! alone, `--dry-run` writing nothing, and doctor failing (with the fix) when the
//! wiring is missing or runs another binary.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use std::path::Path;
use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_khaelor-perm");

fn run(home: &Path, args: &[&str]) -> Output {
    Command::new(BIN)
        .args(args)
        .env("HOME", home)
        .env("KHAELOR_PERM_STATE_DIR", home.join("state"))
        .output()
        .unwrap()
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

#[test]
fn install_is_idempotent_keeps_comments_and_uninstall_restores_the_bytes() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().canonicalize().unwrap();
    for (host, rel) in [
        ("claude", ".claude/settings.json"),
        ("gemini", ".gemini/settings.json"),
    ] {
        let file = home.join(rel);
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        let before = "{\n  // kept\n  \"zeta\": 1,\n  \"alpha\": { \"x\": [1, 2] },\n}\n";
        std::fs::write(&file, before).unwrap();
        let o = run(&home, &["install", host, "--dry-run"]);
        assert!(o.status.success(), "{}", text(&o));
        assert!(text(&o).contains("dry run"), "{}", text(&o));
        assert_eq!(std::fs::read_to_string(&file).unwrap(), before);

        let o = run(&home, &["install", host]);
        assert!(o.status.success(), "{}", text(&o));
        let installed = std::fs::read_to_string(&file).unwrap();
        assert!(
            installed.contains("// kept")
                && installed.contains(&format!("khaelor-perm hook {host}")),
            "{installed}"
        );
        assert!(installed.find("zeta").unwrap() < installed.find("alpha").unwrap());
        let o = run(&home, &["install", host]);
        assert!(text(&o).contains("nothing changed"), "{}", text(&o));
        assert_eq!(std::fs::read_to_string(&file).unwrap(), installed);

        let o = run(&home, &["uninstall", host]);
        assert!(o.status.success(), "{}", text(&o));
        assert_eq!(std::fs::read_to_string(&file).unwrap(), before);
    }
    // A file install created is gone again after uninstall.
    let o = run(&home, &["install", "claude", "--project"]);
    assert!(!o.status.success(), "--project needs a directory");
    let proj = home.join("proj");
    std::fs::create_dir_all(&proj).unwrap();
    let p = proj.to_str().unwrap();
    assert!(
        run(&home, &["install", "claude", "--project", p])
            .status
            .success()
    );
    assert!(proj.join(".claude/settings.local.json").exists());
    assert!(
        run(&home, &["uninstall", "claude", "--project", p])
            .status
            .success()
    );
    assert!(!proj.join(".claude/settings.local.json").exists());
}

#[test]
fn install_refuses_a_file_it_cannot_parse_and_leaves_it_alone() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().canonicalize().unwrap();
    let file = home.join(".claude/settings.json");
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    for bad in ["{ \"hooks\": ", "[1, 2]", "{ \"hooks\": [] }"] {
        std::fs::write(&file, bad).unwrap();
        let o = run(&home, &["install", "claude"]);
        assert_eq!(o.status.code(), Some(2), "{bad}: {}", text(&o));
        assert!(text(&o).contains("nothing was changed"), "{}", text(&o));
        assert_eq!(std::fs::read_to_string(&file).unwrap(), bad);
    }
    let o = run(&home, &["install", "codex"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).contains("not supported yet"), "{}", text(&o));
}

#[test]
fn doctor_fails_with_the_fix_when_the_hook_is_missing_or_runs_another_binary() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().canonicalize().unwrap();
    let proj = home.join("proj");
    std::fs::create_dir_all(&proj).unwrap();
    let p = proj.to_str().unwrap();
    let o = run(&home, &["doctor", "--host", "claude", "--root", p]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(
        text(&o).contains("run `khaelor-perm install claude`"),
        "{}",
        text(&o)
    );
    let file = home.join(".claude/settings.json");
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(
        &file,
        r#"{"hooks":{"PreToolUse":[{"matcher":"*","hooks":[{"type":"command","command":"/old/khaelor-perm hook claude"}]}]}}"#,
    )
    .unwrap();
    let o = run(&home, &["doctor", "--host", "claude", "--root", p]);
    assert_eq!(o.status.code(), Some(1));
    assert!(text(&o).contains("not this binary"), "{}", text(&o));
    // Wired to this binary: the wiring, the state dir and both live decisions hold (the
    // host binary check depends on the machine's PATH, so only the rest is pinned).
    assert!(run(&home, &["install", "claude"]).status.success());
    let o = run(&home, &["doctor", "--host", "claude", "--root", p]);
    let t = text(&o);
    for line in [
        "ok   hook wiring",
        "ok   state directory",
        "ok   live allow: `git status` -> allow",
        "ok   live floor deny: `rm -rf /` -> deny",
    ] {
        assert!(t.contains(line), "{line}\n{t}");
    }
}
