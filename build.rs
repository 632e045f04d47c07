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
//!
//! It also writes `$OUT_DIR/packs.rs`: the domain packs (`src/programs/packs/*.json`),
//! each with the names of the programs it reads. The analysis parses a pack only when a
//! command names one of its programs; the list says which without parsing at run
//! time (a hook process decides one command, and parsing every pack cost it more than
//! its analysis). A pack that is not valid JSON, has no `programs` object, or a JSON
//! file left out of the list fails the build.

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
    if let Err(e) = packs_index() {
        // Fails the build with this message.
        println!("cargo::error={e}");
    }
}

/// The domain packs, in the order the analysis reads them.
const PACKS: [&str; 6] = [
    "databases",
    "kubernetes",
    "containers",
    "cloud",
    "infrastructure",
    "git",
];

/// Writes `FILES`: per pack its name, its text (embedded) and its program names.
fn packs_index() -> Result<(), String> {
    let manifest = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_default());
    let dir = manifest.join("src").join("programs").join("packs");
    println!("cargo:rerun-if-changed={}", dir.display());
    let listed: Vec<String> = PACKS.iter().map(|n| format!("{n}.json")).collect();
    let mut present: Vec<String> = std::fs::read_dir(&dir)
        .map_err(|e| format!("cannot list {}: {e}", dir.display()))?
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".json"))
        .collect();
    present.sort();
    if let Some(name) = present.iter().find(|n| !listed.contains(n)) {
        return Err(format!(
            "{name} in {} is not in build.rs's PACKS: add it there (the order is the packs' order)",
            dir.display()
        ));
    }
    let mut out = format!(
        "/// The pack files: name, text (embedded at build time), and the names of the\n\
         /// programs its `programs` object reads (written by build.rs).\n\
         const FILES: [(&str, &str, &[&str]); {}] = [\n",
        PACKS.len()
    );
    for name in PACKS {
        let path = dir.join(format!("{name}.json"));
        println!("cargo:rerun-if-changed={}", path.display());
        let text = std::fs::read_to_string(&path)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        let doc: serde_json::Value = serde_json::from_str(&text)
            .map_err(|e| format!("{} is not JSON: {e}", path.display()))?;
        let programs = doc
            .get("programs")
            .and_then(|p| p.as_object())
            .ok_or_else(|| format!("{} has no `programs` object", path.display()))?;
        let names: Vec<String> = programs.keys().map(|k| format!("{k:?}")).collect();
        out.push_str(&format!(
            "    ({name:?}, include_str!({:?}), &[{}]),\n",
            path.display().to_string(),
            names.join(", ")
        ));
    }
    out.push_str("];\n");
    let target = PathBuf::from(std::env::var_os("OUT_DIR").unwrap_or_default()).join("packs.rs");
    std::fs::write(&target, out).map_err(|e| format!("cannot write {}: {e}", target.display()))
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
