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
        .env_remove("CODEX_HOME")
        .env_remove("XDG_CONFIG_HOME")
        .env_remove("QWEN_HOME")
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
        ("qwen", ".qwen/settings.json"),
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
    // Codex's TOML: a syntax error names its line; an inline `hooks` is not edited.
    let file = home.join(".codex/config.toml");
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    for bad in [
        "model = \"x\"\nmodel_provider = \n",
        "hooks = { PreToolUse = [] }\n",
    ] {
        std::fs::write(&file, bad).unwrap();
        let o = run(&home, &["install", "codex"]);
        assert_eq!(o.status.code(), Some(2), "{bad}: {}", text(&o));
        assert!(text(&o).contains("nothing was changed"), "{}", text(&o));
        assert_eq!(std::fs::read_to_string(&file).unwrap(), bad);
    }
    std::fs::write(&file, "model = \"x\"\nmodel_provider = \n").unwrap();
    let t = text(&run(&home, &["install", "codex"]));
    assert!(t.contains("config.toml:2:"), "{t}");
    // OpenCode: a plugin file of the same name that is not ours is never overwritten.
    let plugin = home.join(".config/opencode/plugin/khaelor-perm.js");
    std::fs::create_dir_all(plugin.parent().unwrap()).unwrap();
    std::fs::write(&plugin, "export const Mine = async () => ({});\n").unwrap();
    let o = run(&home, &["install", "opencode"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let o = run(&home, &["uninstall", "opencode"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert_eq!(
        std::fs::read_to_string(&plugin).unwrap(),
        "export const Mine = async () => ({});\n"
    );
}

#[test]
fn codex_and_opencode_install_idempotent_and_uninstall_restores_the_bytes() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().canonicalize().unwrap();
    let file = home.join(".codex/config.toml");
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    let before = "# kept\nzeta = 1\nmodel = \"m\" # why\n\n[model_providers.e2e]\nname = \"e2e\"\n";
    std::fs::write(&file, before).unwrap();
    let o = run(
        &home,
        &["install", "codex", "--dry-run", "--non-interactive"],
    );
    assert!(text(&o).contains("dry run"), "{}", text(&o));
    assert_eq!(std::fs::read_to_string(&file).unwrap(), before);
    let o = run(&home, &["install", "codex", "--non-interactive"]);
    assert!(o.status.success(), "{}", text(&o));
    // The step Codex still needs, exactly.
    assert!(
        text(&o).contains("type `/hooks`, and trust"),
        "{}",
        text(&o)
    );
    let installed = std::fs::read_to_string(&file).unwrap();
    assert!(
        installed.starts_with(before)
            && installed.contains("[[hooks.PreToolUse]]")
            && installed.contains("[[hooks.PostToolUse.hooks]]")
            && installed.contains("khaelor-perm hook codex --non-interactive"),
        "{installed}"
    );
    let o = run(&home, &["install", "codex", "--non-interactive"]);
    assert!(text(&o).contains("nothing changed"), "{}", text(&o));
    assert_eq!(std::fs::read_to_string(&file).unwrap(), installed);
    // Other flags: the old hooks are replaced, not doubled.
    let o = run(&home, &["install", "codex"]);
    assert!(text(&o).contains("replaced"), "{}", text(&o));
    let replaced = std::fs::read_to_string(&file).unwrap();
    assert_eq!(replaced.matches("khaelor-perm").count(), 2, "{replaced}");
    assert!(run(&home, &["uninstall", "codex"]).status.success());
    assert_eq!(std::fs::read_to_string(&file).unwrap(), before);

    // OpenCode: the plugin file, running this binary; gone again after uninstall.
    let proj = home.join("proj");
    std::fs::create_dir_all(&proj).unwrap();
    let p = proj.to_str().unwrap();
    let plugin = proj.join(".opencode/plugin/khaelor-perm.js");
    let o = run(&home, &["install", "opencode", "--project", p]);
    assert!(o.status.success(), "{}", text(&o));
    let written = std::fs::read_to_string(&plugin).unwrap();
    assert!(written.contains(&format!("\"bin\":\"{BIN}\"")), "{written}");
    let o = run(&home, &["install", "opencode", "--project", p]);
    assert!(text(&o).contains("nothing changed"), "{}", text(&o));
    assert!(
        run(&home, &["uninstall", "opencode", "--project", p])
            .status
            .success()
    );
    assert!(!plugin.exists());
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

/// Qwen Code: the three events wired in the project's `.qwen/settings.json` (a file
/// install created is removed by uninstall), `QWEN_HOME` moving the user's file, and
/// doctor's live decisions through the hook in Qwen's input form.
#[test]
fn qwen_install_wires_its_events_and_doctor_decides_live() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().canonicalize().unwrap();
    let proj = home.join("proj");
    std::fs::create_dir_all(&proj).unwrap();
    let p = proj.to_str().unwrap();
    let o = run(&home, &["install", "qwen", "--project", p]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("folder trust"), "{}", text(&o));
    let file = proj.join(".qwen/settings.json");
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    for event in ["PreToolUse", "PostToolUse", "PostToolUseFailure"] {
        let groups = v["hooks"][event].as_array().unwrap();
        assert_eq!(groups.len(), 1, "{v}");
        assert_eq!(groups[0]["matcher"], "*", "{v}");
        let cmd = groups[0]["hooks"][0]["command"].as_str().unwrap();
        assert!(cmd.ends_with("khaelor-perm hook qwen"), "{cmd}");
    }
    let o = run(&home, &["doctor", "--host", "qwen", "--root", p]);
    let t = text(&o);
    for line in [
        "ok   hook wiring",
        "ok   live allow: `git status` -> allow",
        "ok   live floor deny: `rm -rf /` -> deny",
    ] {
        assert!(t.contains(line), "{line}\n{t}");
    }
    assert!(t.contains("ok   qwen hooks enabled"), "{t}");
    // A repository's own settings can turn every hook off: doctor says so.
    let wired = std::fs::read_to_string(&file).unwrap();
    let off = wired.replacen('{', "{\n  \"disableAllHooks\": true,", 1);
    std::fs::write(&file, &off).unwrap();
    let o = run(&home, &["doctor", "--host", "qwen", "--root", p]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(
        text(&o).contains("FAIL qwen hooks enabled") && text(&o).contains("disableAllHooks"),
        "{}",
        text(&o)
    );
    std::fs::write(&file, &wired).unwrap();
    assert!(
        run(&home, &["uninstall", "qwen", "--project", p])
            .status
            .success()
    );
    assert!(!file.exists(), "uninstall removes the file install created");

    let qwen_home = home.join("qwen-home");
    let o = Command::new(BIN)
        .args(["install", "qwen", "--user"])
        .env("HOME", &home)
        .env("QWEN_HOME", &qwen_home)
        .env("KHAELOR_PERM_STATE_DIR", home.join("state"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    assert!(qwen_home.join("settings.json").exists());
    assert!(!home.join(".qwen/settings.json").exists());
}
