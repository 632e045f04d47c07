//! What the binary says about itself: `--version` with the commit it was built from
//! (build.rs), shell completions (`completions`) and man pages (`man`), generated from
//! the clap definitions. Each is checked against the real command line: every
//! subcommand `--help` lists must appear in the completions and the man page, and a
//! subcommand's own flags in its page.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use std::io::Write;
use std::process::{Command, Output, Stdio};

fn bin(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_khaelor-perm"))
        .args(args)
        .output()
        .unwrap()
}

fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).unwrap()
}

/// The subcommands `--help` lists (the lines under "Commands:"), without `help`.
fn subcommands() -> Vec<String> {
    let help = stdout(&bin(&["--help"]));
    let mut out = Vec::new();
    let mut inside = false;
    for line in help.lines() {
        if line.starts_with("Commands:") {
            inside = true;
            continue;
        }
        if inside {
            let Some(name) = line
                .strip_prefix("  ")
                .and_then(|l| l.split_whitespace().next())
            else {
                break;
            };
            if name != "help" {
                out.push(name.to_string());
            }
        }
    }
    assert!(
        out.len() >= 10,
        "too few subcommands read from --help: {out:?}"
    );
    out
}

#[test]
fn version_names_the_package_and_the_commit() {
    let o = bin(&["--version"]);
    assert!(o.status.success());
    let v = stdout(&o);
    let expected_start = format!("khaelor-perm {} (", env!("CARGO_PKG_VERSION"));
    assert!(
        v.starts_with(&expected_start) && v.trim_end().ends_with(')'),
        "{v}"
    );
    let commit = &v.trim_end()[expected_start.len()..v.trim_end().len() - 1];
    // The same answer build.rs gets: the checkout's HEAD when this is one, else the
    // build-time variable, else "unknown commit".
    let root = env!("CARGO_MANIFEST_DIR");
    let top = Command::new("git")
        .args(["-C", root, "rev-parse", "--show-toplevel"])
        .output();
    let in_checkout = top.as_ref().is_ok_and(|t| {
        t.status.success()
            && std::path::Path::new(String::from_utf8_lossy(&t.stdout).trim())
                .canonicalize()
                .ok()
                == std::path::Path::new(root).canonicalize().ok()
    });
    let set = std::env::var("KHAELOR_PERM_COMMIT").unwrap_or_default();
    if !set.trim().is_empty() {
        assert_eq!(commit, set.trim());
    } else if in_checkout {
        let head = Command::new("git")
            .args(["-C", root, "log", "-1", "--format=%h %cs"])
            .output()
            .unwrap();
        assert_eq!(commit, String::from_utf8_lossy(&head.stdout).trim(), "{v}");
    } else {
        assert_eq!(commit, "unknown commit");
    }
}

#[test]
fn completions_name_every_subcommand_in_every_shell() {
    let subs = subcommands();
    for shell in ["bash", "zsh", "fish"] {
        let o = bin(&["completions", shell]);
        assert!(
            o.status.success(),
            "{shell}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let script = stdout(&o);
        for s in &subs {
            assert!(
                script.contains(s.as_str()),
                "{shell} completion lacks `{s}`"
            );
        }
        // A flag of a subcommand, not only the names.
        assert!(
            script.contains("non-interactive"),
            "{shell} completion lacks hook's flags"
        );
    }
    let o = bin(&["completions", "tcsh"]);
    assert_eq!(
        o.status.code(),
        Some(2),
        "an unknown shell is a usage error"
    );
}

#[test]
fn bash_completion_is_valid_bash_and_completes_subcommands() {
    let script = stdout(&bin(&["completions", "bash"]));
    // Source it and ask for the completions of `khaelor-perm ch`, as bash would.
    let program = format!(
        "{script}\nCOMP_WORDS=(khaelor-perm ch); COMP_CWORD=1; COMP_LINE='khaelor-perm ch'; \
         COMP_POINT=${{#COMP_LINE}}; _khaelor__perm khaelor-perm ch khaelor-perm; \
         printf '%s\\n' \"${{COMPREPLY[@]}}\""
    );
    let mut child = Command::new("bash")
        .arg("--norc")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(program.as_bytes())
        .unwrap();
    let o = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success() && err.trim().is_empty(), "bash: {err}");
    let words: Vec<String> = stdout(&o).lines().map(str::to_string).collect();
    assert_eq!(words, vec!["check".to_string()], "completions of `ch`");
}

#[test]
fn man_page_lists_every_subcommand_and_each_page_its_flags() {
    let subs = subcommands();
    let o = bin(&["man"]);
    assert!(o.status.success());
    let page = stdout(&o);
    assert!(
        page.contains(".TH khaelor-perm 1"),
        "{}",
        &page[..page.len().min(300)]
    );
    for s in &subs {
        assert!(
            page.contains(&format!("khaelor\\-perm\\-{}", s.replace('-', "\\-"))),
            "man page lacks `{s}`"
        );
    }
    let check = stdout(&bin(&["man", "check"]));
    assert!(check.contains(".TH khaelor-perm-check 1"));
    for flag in [
        "\\-\\-preset",
        "\\-\\-non\\-interactive",
        "\\-\\-managed\\-config",
    ] {
        assert!(check.contains(flag), "check's page lacks {flag}");
    }
    let o = bin(&["man", "no-such-command"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("no subcommand"));
}

#[test]
fn man_page_renders_without_warnings() {
    // groff is how man displays the page; without it the roff text is still checked
    // above, so a missing groff is reported rather than passed over silently.
    let Ok(probe) = Command::new("groff").arg("--version").output() else {
        panic!("groff is missing: `bash tests/setup/man.sh` installs it (groff-base)");
    };
    assert!(probe.status.success());
    for args in [vec!["man"], vec!["man", "serve"]] {
        let page = bin(&args).stdout;
        let mut child = Command::new("groff")
            .args(["-man", "-Tutf8", "-ww", "-z"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        child.stdin.take().unwrap().write_all(&page).unwrap();
        let o = child.wait_with_output().unwrap();
        assert!(o.status.success());
        let warnings = String::from_utf8_lossy(&o.stderr);
        assert!(
            warnings.trim().is_empty(),
            "groff warns on {args:?}:\n{warnings}"
        );
    }
}
