//! `khaelor-perm compare` from the outside: exit statuses, stdin, `--limit`, lines that
//! are not UTF-8, the JSON document and the text tables, against the real binary.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use std::io::Write;
use std::process::{Command, Output, Stdio};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_khaelor-perm"))
}

fn run(args: &[&str], stdin: &[u8]) -> Output {
    let mut child = bin()
        .arg("compare")
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The binary may exit (usage error) before reading: a closed pipe is fine here.
    let _ = child.stdin.take().unwrap().write_all(stdin);
    child.wait_with_output().unwrap()
}

const COMMANDS: &[u8] = b"# a comment\ncat a > out.txt\n\nsudo curl http://example.com\n\xff\xfe bad\ngit status\ncat .env\n";

#[test]
fn json_report_from_stdin_counts_and_groups() {
    let root = tempfile::tempdir().unwrap();
    let root_s = root.path().to_str().unwrap();
    let out = run(
        &["--json", "--root", root_s, "--home", "/home/t", "-"],
        COMMANDS,
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["commands"], 4);
    assert_eq!(v["sources"][0]["source"], "<stdin>");
    assert_eq!(v["sources"][0]["invalidUtf8"], serde_json::json!([5]));
    assert_eq!(v["sources"][0]["skipped"], 2);
    assert_eq!(v["home"], "/home/t");
    let canon = std::fs::canonicalize(root.path()).unwrap();
    assert_eq!(v["root"], canon.to_str().unwrap());
    // cat a > out.txt: the lexer asks for `out.txt` as a command, the AST allows.
    assert_eq!(v["astMorePermissive"], 1);
    assert_eq!(v["morePermissive"][0]["command"], "cat a > out.txt");
    let reasons: Vec<&str> = v["groups"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["reason"].as_str().unwrap())
        .collect();
    for want in [
        "redirect-is-write",
        "wrapper-unwrapped",
        "read-of-secret-file",
    ] {
        assert!(reasons.contains(&want), "{want} missing from {reasons:?}");
    }
    // Rows AST, columns lexer: the decision table sums to the command count.
    let total: u64 = v["decisions"]["counts"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|r| r.as_array().unwrap())
        .map(|n| n.as_u64().unwrap())
        .sum();
    assert_eq!(total, 4);
    assert_eq!(v["timings"].as_array().unwrap().len(), 3);
}

#[test]
fn text_report_has_the_tables_and_limit_applies() {
    let root = tempfile::tempdir().unwrap();
    let root_s = root.path().to_str().unwrap();
    let out = run(&["--limit", "2", "--root", root_s, "-"], COMMANDS);
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.starts_with("khaelor-perm compare: 2 commands"),
        "{text}"
    );
    for want in [
        "Classes (rows: AST, columns: lexer)",
        "Decisions under the default policy",
        "network.access",
        "always patterns",
        "Time per command",
        "tree-sitter parse",
        "== redirect-is-write",
    ] {
        assert!(text.contains(want), "missing `{want}` in\n{text}");
    }
}

#[test]
fn markdown_report_names_date_machine_and_command() {
    let root = tempfile::tempdir().unwrap();
    let root_s = root.path().to_str().unwrap();
    let out = run(
        &["--markdown", "--root", root_s, "--home", "/home/t", "-"],
        COMMANDS,
    );
    assert_eq!(out.status.code(), Some(0));
    let md = String::from_utf8(out.stdout).unwrap();
    assert!(md.starts_with("# Benchmarks"), "{md}");
    for want in [
        "UTC",
        "- CPU:",
        "- cores available (nproc):",
        "- memory:",
        "cargo run --release -- compare --markdown",
        "| AST \\ lexer |",
    ] {
        assert!(md.contains(want), "missing `{want}`");
    }
}

#[test]
fn usage_errors_exit_2() {
    let missing = run(&["/nonexistent/commands.txt"], b"");
    assert_eq!(missing.status.code(), Some(2));
    let err = String::from_utf8_lossy(&missing.stderr);
    assert!(
        err.contains("cannot read `/nonexistent/commands.txt`"),
        "{err}"
    );
    let relative = run(&["--root", "relative/dir", "-"], b"ls\n");
    assert_eq!(relative.status.code(), Some(2));
    let none = run(&[], b"");
    assert_eq!(none.status.code(), Some(2));
    let twice = run(&["-", "-"], b"ls\n");
    assert_eq!(twice.status.code(), Some(2));
    let both = run(&["--json", "--markdown", "-"], b"ls\n");
    assert_eq!(both.status.code(), Some(2));
}
