//! The sandbox profile of a project: which paths inside it stay read-only (the rows of
//! `policy::protected` found there), which secrets are masked (every path the read
//! rules do not allow, found in the project, in HOME and where an absolute read rule
//! points, and every target of a symlink in the project that is such a path), and the
//! network.
//!
//! Owns finding those paths; it reads the file system (bounded walks) but decides
//! nothing: the read rules and the protected table are the policy's.

use std::path::{Path, PathBuf};

use crate::model::contain::{ProfileName, SandboxProfile};
use crate::model::vocab::Capability;
use crate::policy::config::Policy;
use crate::policy::rules::Action;

/// The most entries a walk of the project reads; a larger project cannot be searched
/// for what must stay read-only, so it is not contained (it asks).
pub const MAX_PROJECT_ENTRIES: usize = 50_000;
/// The most entries the walk of HOME reads looking for secrets.
pub const MAX_HOME_ENTRIES: usize = 50_000;
/// How deep below HOME secrets are looked for (`~/a/b/c/key.pem` is found).
pub const HOME_DEPTH: usize = 4;

/// Directories of the project whose contents are tools' output or downloads, not the
/// project's own files: not walked for protected paths (the build writes there).
const PROJECT_SKIP: &[&str] = &["node_modules", "target"];

/// Directories under HOME that hold tool caches and toolchains, not credentials: not
/// walked (a credential store inside them is named by an exact rule and checked
/// directly, `~/.cargo/credentials.toml`).
const HOME_SKIP: &[&str] = &[
    ".cache",
    ".rustup",
    ".cargo",
    ".npm",
    ".nvm",
    ".pyenv",
    ".rbenv",
    ".gradle",
    ".m2",
    ".vscode-server",
    ".local",
    "node_modules",
    "target",
    ".git",
    "go",
];

/// Why a profile could not be made.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProfileError {
    #[error(
        "the project has more than {MAX_PROJECT_ENTRIES} entries, more than the sandbox searches for protected paths"
    )]
    ProjectTooLarge,
    #[error(
        "HOME has more than {MAX_HOME_ENTRIES} entries, more than the sandbox searches for secrets"
    )]
    HomeTooLarge,
    #[error("cannot read the project `{0}`")]
    Unreadable(String),
}

/// The profile for a command in `root`, with `home` as HOME, under `policy`'s read
/// rules.
pub fn build(
    root: &Path,
    home: &Path,
    policy: &Policy,
    name: ProfileName,
) -> Result<SandboxProfile, ProfileError> {
    let root = std::fs::canonicalize(root)
        .map_err(|_| ProfileError::Unreadable(root.display().to_string()))?;
    let mut read_only: Vec<PathBuf> = Vec::new();
    let mut masked: Vec<PathBuf> = Vec::new();
    let mut links: Vec<PathBuf> = Vec::new();
    walk_project(&root, policy, &mut read_only, &mut masked, &mut links)?;
    walk_home(home, &root, policy, &mut masked)?;
    absolute_rules(policy, &root, home, &mut masked);
    let text = |v: Vec<PathBuf>| -> Vec<String> {
        let mut v: Vec<String> = v.iter().map(|p| p.display().to_string()).collect();
        v.sort();
        v.dedup();
        v
    };
    Ok(SandboxProfile {
        name,
        root: root.display().to_string(),
        writable: vec![root.display().to_string(), "/tmp".to_string()],
        read_only: text(read_only),
        masked: text(masked),
        masked_links: text(links),
        network: name.network(),
    })
}

/// Whether the read rules keep `path` from being read silently. A directory is
/// judged as the read of what it holds (`~/.ssh/`), as a listing of it is.
fn secret(policy: &Policy, path: &Path, dir: bool) -> bool {
    let mut s = path.display().to_string();
    if dir {
        s.push('/');
    }
    policy.evaluate(None, Capability::FileRead, &s).action != Action::Allow
}

/// Reads the project: protected rows (read-only, not entered), secrets (masked), and
/// symlinks whose targets are secrets (the target masked, wherever it is).
fn walk_project(
    root: &Path,
    policy: &Policy,
    read_only: &mut Vec<PathBuf>,
    masked: &mut Vec<PathBuf>,
    links: &mut Vec<PathBuf>,
) -> Result<(), ProfileError> {
    let mut stack = vec![root.to_path_buf()];
    let mut seen = 0usize;
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in entries.flatten() {
            seen += 1;
            if seen > MAX_PROJECT_ENTRIES {
                return Err(ProfileError::ProjectTooLarge);
            }
            let path = e.path();
            let Ok(ft) = e.file_type() else { continue };
            if ft.is_symlink() {
                if let Ok(target) = std::fs::canonicalize(&path) {
                    let is_dir = target.is_dir();
                    if secret(policy, &target, is_dir) || secret(policy, &path, is_dir) {
                        masked.push(target);
                        links.push(path.clone());
                    }
                    if crate::policy::protected::in_table(&path) {
                        // A protected name that is a link: the link itself cannot be
                        // replaced once its target is bound over it.
                        read_only.push(path.clone());
                    }
                }
                continue;
            }
            if crate::policy::protected::in_table(&path)
                || (ft.is_dir() && crate::policy::protected::is_git_shaped(&path))
            {
                read_only.push(path);
                continue;
            }
            if secret(policy, &path, ft.is_dir()) {
                masked.push(path);
                continue;
            }
            let name = e.file_name();
            if ft.is_dir() && !PROJECT_SKIP.iter().any(|s| name == *s) {
                stack.push(path);
            }
        }
    }
    Ok(())
}

/// Reads HOME (not the project, walked already) to `HOME_DEPTH`: credential stores and
/// secret-shaped files are masked.
fn walk_home(
    home: &Path,
    root: &Path,
    policy: &Policy,
    masked: &mut Vec<PathBuf>,
) -> Result<(), ProfileError> {
    let Ok(home) = std::fs::canonicalize(home) else {
        return Ok(());
    };
    if crate::model::paths::is_inside(&home, root) {
        return Ok(());
    }
    let mut stack = vec![(home.clone(), 0usize)];
    let mut seen = 0usize;
    while let Some((dir, depth)) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in entries.flatten() {
            seen += 1;
            if seen > MAX_HOME_ENTRIES {
                return Err(ProfileError::HomeTooLarge);
            }
            let path = e.path();
            if path == root {
                continue;
            }
            let Ok(ft) = e.file_type() else { continue };
            if ft.is_symlink() {
                if let Ok(target) = std::fs::canonicalize(&path)
                    && secret(policy, &target, target.is_dir())
                {
                    masked.push(target);
                }
                continue;
            }
            if secret(policy, &path, ft.is_dir()) {
                masked.push(path);
                continue;
            }
            let name = e.file_name();
            let skip = depth == 0 && HOME_SKIP.iter().any(|s| name == *s);
            if ft.is_dir() && !skip && depth + 1 < HOME_DEPTH {
                stack.push((path, depth + 1));
            }
        }
    }
    // The exact credential files inside the skipped tool directories.
    for rel in [
        ".cargo/credentials",
        ".cargo/credentials.toml",
        ".local/share/keyrings",
    ] {
        let p = home.join(rel);
        if p.exists() && secret(policy, &p, p.is_dir()) {
            masked.push(p);
        }
    }
    Ok(())
}

/// Read rules written for absolute places (`/etc/shadow*`): the entries of the
/// directory their fixed prefix names that the rules do not allow. `/proc` and `/dev`
/// are the sandbox's own (a process table and devices of its own), so they are left.
fn absolute_rules(policy: &Policy, root: &Path, home: &Path, masked: &mut Vec<PathBuf>) {
    let mut dirs: Vec<PathBuf> = Vec::new();
    for r in policy.rules() {
        if r.action == Action::Allow
            || !r.pattern.starts_with('/')
            || !crate::policy::rules::Wildcard::new(&r.capability).is_match("file.read")
        {
            continue;
        }
        let fixed = r.pattern.split('*').next().unwrap_or_default();
        let dir = if fixed.ends_with('/') {
            PathBuf::from(fixed)
        } else {
            Path::new(fixed)
                .parent()
                .map(Path::to_path_buf)
                .unwrap_or_default()
        };
        if dir.starts_with("/proc")
            || dir.starts_with("/dev")
            || dir.starts_with("/tmp")
            || crate::model::paths::is_inside(&dir, root)
            || crate::model::paths::is_inside(&dir, home)
            || dirs.contains(&dir)
        {
            continue;
        }
        dirs.push(dir);
    }
    for dir in dirs {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in entries.flatten().take(MAX_HOME_ENTRIES) {
            let path = e.path();
            let is_dir = e.file_type().is_ok_and(|t| t.is_dir());
            if secret(policy, &path, is_dir) {
                masked.push(path);
            }
        }
    }
}
