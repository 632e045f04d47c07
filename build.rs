//! Build script: the commit the binary is built from, for `khaelor-perm --version`.
//!
//! Sets `KHAELOR_PERM_COMMIT` for the crate to `<short hash> <commit date>` (e.g.
//! `56f23f3 2026-12-05`), taken from, in order:
//!
//! 1. the environment variable `KHAELOR_PERM_COMMIT` at build time (the container build
//!    passes it as a build argument: its context has no `.git`);
//! 2. `git`, when this package's directory is the top of a git work tree (a clone, a
//!    worktree, or cargo's own checkout for `cargo install --git`);
//! 3. otherwise `unknown commit` — a build from a source archive, or without `git`
//!    installed, still succeeds.
//!
//! The git check asks for the work tree's top and compares it with this package's
//! directory, so a copy of the sources inside some other repository never reports that
//! repository's commit. Cargo reruns this script when HEAD or the branch it points to
//! moves.

use std::path::{Path, PathBuf};
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-env-changed=KHAELOR_PERM_COMMIT");
    println!("cargo:rerun-if-changed=build.rs");
    let commit = std::env::var("KHAELOR_PERM_COMMIT")
        .ok()
        .map(|c| c.trim().to_string())
        .filter(|c| !c.is_empty())
        .or_else(from_git)
        .unwrap_or_else(|| "unknown commit".to_string());
    println!("cargo:rustc-env=KHAELOR_PERM_COMMIT={commit}");
}

/// `<short hash> <date>` from git, with rerun triggers on HEAD and its branch, or `None`
/// when this directory is not the top of a git work tree or git is not there.
fn from_git() -> Option<String> {
    let dir = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR")?);
    let top = git(&dir, &["rev-parse", "--show-toplevel"])?;
    if !same_dir(Path::new(&top), &dir) {
        return None;
    }
    // HEAD, the branch it names and packed refs: any of them moving changes the commit.
    for path in [
        git(&dir, &["rev-parse", "--git-path", "HEAD"]),
        git(&dir, &["symbolic-ref", "-q", "HEAD"])
            .and_then(|r| git(&dir, &["rev-parse", "--git-path", &r])),
        git(&dir, &["rev-parse", "--git-path", "packed-refs"]),
    ]
    .into_iter()
    .flatten()
    {
        let p = if Path::new(&path).is_absolute() {
            PathBuf::from(&path)
        } else {
            dir.join(&path)
        };
        // A trigger on a path that does not exist would rerun the script on every build.
        if p.exists() {
            println!("cargo:rerun-if-changed={}", p.display());
        }
    }
    git(&dir, &["log", "-1", "--format=%h %cs"])
}

fn git(dir: &Path, args: &[&str]) -> Option<String> {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    let s = String::from_utf8(out.stdout).ok()?.trim().to_string();
    (!s.is_empty()).then_some(s)
}

fn same_dir(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}
