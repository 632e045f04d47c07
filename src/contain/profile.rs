//! The sandbox profile of a project: which paths inside it stay read-only (the rows of
//! `policy::protected` found there), which secrets are masked (every path the read
//! rules do not allow, found in the project, in HOME and where an absolute read rule
//! points, and every target of a symlink in the project that is such a path; and
//! KHAELOR's state directory, whose panel token answers prompts), and the network.
//!
//! Owns finding those paths; it reads the file system (bounded walks) but decides
//! nothing: the read rules and the protected table are the policy's.
//!
//! The walks record what they read (`Trace`: each directory listed, with its
//! identity and change times taken before the listing; each symlink followed, with its
//! target; each path looked up by name), so `cache` can keep a profile between calls
//! and use it again only while every one of them is as it was.

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
pub(crate) const PROJECT_SKIP: &[&str] = &["node_modules", "target"];

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

/// What a profile was made from: every directory whose listing was read, every
/// symlink whose target was taken, every path looked up by name. The profile stays
/// right while each of them is as recorded (`Trace::holds`).
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Trace {
    /// Directories listed, with their identity and times as they were before the
    /// listing (an entry added or removed changes both times; `ctime` cannot be set
    /// back by a program).
    pub dirs: Vec<(String, Stamp)>,
    /// Symlinks followed: the link, and its target with whether it was a directory
    /// (`None`: it led nowhere).
    pub links: Vec<(String, Option<(String, bool)>)>,
    /// Paths looked up by name: whether each existed and was a directory.
    pub probes: Vec<(String, Option<bool>)>,
    /// A directory changed so recently that a change in the same clock tick would not
    /// show in its times: this trace cannot vouch for the profile later.
    pub racy: bool,
}

/// A directory's identity and change times.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Stamp {
    pub dev: u64,
    pub ino: u64,
    pub mtime: (i64, i64),
    pub ctime: (i64, i64),
}

/// A directory changed less than this many seconds before it was listed is racy (file
/// systems keep times in coarse ticks, some in two-second ones).
const RACY_SECS: i64 = 3;

impl Stamp {
    /// The stamp of the directory (or file) at `path` now.
    pub fn of(path: &Path) -> Option<Stamp> {
        use std::os::unix::fs::MetadataExt;
        let m = std::fs::metadata(path).ok()?;
        Some(Stamp {
            dev: m.dev(),
            ino: m.ino(),
            mtime: (m.mtime(), m.mtime_nsec()),
            ctime: (m.ctime(), m.ctime_nsec()),
        })
    }
}

impl Trace {
    /// Records `dir` before its listing is read.
    fn dir(&mut self, dir: &Path) {
        match Stamp::of(dir) {
            Some(s) => {
                let now = std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map(|d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
                    .unwrap_or(0);
                if now.saturating_sub(s.mtime.0.max(s.ctime.0)) < RACY_SECS {
                    self.racy = true;
                }
                self.dirs.push((dir.display().to_string(), s));
            }
            // A directory that cannot be read now may be readable later.
            None => self.racy = true,
        }
    }

    fn link(&mut self, link: &Path, target: Option<&Path>) {
        self.links.push((
            link.display().to_string(),
            target.map(|t| (t.display().to_string(), t.is_dir())),
        ));
    }

    fn probe(&mut self, path: &Path) -> Option<bool> {
        let found = std::fs::metadata(path).ok().map(|m| m.is_dir());
        self.probes.push((path.display().to_string(), found));
        found
    }

    /// Whether everything the profile was made from is as recorded.
    pub fn holds(&self) -> bool {
        !self.racy
            && self
                .dirs
                .iter()
                .all(|(p, s)| Stamp::of(Path::new(p)).as_ref() == Some(s))
            && self
                .links
                .iter()
                .all(|(l, t)| match (resolve(Path::new(l)), t) {
                    (None, None) => true,
                    (Some((n, dir)), Some((t, d))) => n.as_path() == Path::new(t) && dir == *d,
                    _ => false,
                })
            && self
                .probes
                .iter()
                .all(|(p, found)| std::fs::metadata(p).ok().map(|m| m.is_dir()) == *found)
    }
}

/// Where `link` leads now, as `std::fs::canonicalize` names it, and whether that is a
/// directory; `None` when it leads nowhere. The kernel follows the whole path in one
/// `open` (`O_PATH`: nothing is read, a FIFO or a device is not opened) and
/// `/proc/self/fd` names what it reached, which is the path `canonicalize` gives for
/// the same state: it reads each component as a link in turn, and a trace holds tens
/// of links (HOME's dotfiles), each checked on every contained call. Whatever this
/// cannot name plainly (no `/proc`, a path that failed to open, one deleted meanwhile)
/// is left to `canonicalize` itself.
fn resolve(link: &Path) -> Option<(PathBuf, bool)> {
    let slow = || {
        std::fs::canonicalize(link).ok().map(|t| {
            let dir = t.is_dir();
            (t, dir)
        })
    };
    let quick = || -> Option<(PathBuf, bool)> {
        use std::os::fd::AsRawFd;
        use std::os::unix::fs::OpenOptionsExt;
        let f = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_PATH)
            .open(link)
            .ok()?;
        let named = std::fs::read_link(format!("/proc/self/fd/{}", f.as_raw_fd())).ok()?;
        let plain = named.is_absolute()
            && !named
                .as_os_str()
                .as_encoded_bytes()
                .ends_with(b" (deleted)");
        let dir = f.metadata().ok()?.is_dir();
        plain.then_some((named, dir))
    };
    quick().or_else(slow)
}

/// The profile for a command in `root`, with `home` as HOME, under `policy`'s read
/// rules.
pub fn build(
    root: &Path,
    home: &Path,
    policy: &Policy,
    name: ProfileName,
) -> Result<SandboxProfile, ProfileError> {
    build_traced(root, home, policy, name).map(|(p, _)| p)
}

/// `build`, with what the profile was made from.
pub fn build_traced(
    root: &Path,
    home: &Path,
    policy: &Policy,
    name: ProfileName,
) -> Result<(SandboxProfile, Trace), ProfileError> {
    let root = std::fs::canonicalize(root)
        .map_err(|_| ProfileError::Unreadable(root.display().to_string()))?;
    let mut trace = Trace::default();
    let mut read_only: Vec<PathBuf> = Vec::new();
    let mut masked: Vec<PathBuf> = Vec::new();
    let mut links: Vec<PathBuf> = Vec::new();
    walk_project(
        &root,
        policy,
        &mut trace,
        &mut read_only,
        &mut masked,
        &mut links,
    )?;
    walk_home(home, &root, policy, &mut trace, &mut masked)?;
    absolute_rules(policy, &root, home, &mut trace, &mut masked);
    state_dirs(policy, &root, home, &mut trace, &mut masked);
    let text = |v: Vec<PathBuf>| -> Vec<String> {
        let mut v: Vec<String> = v.iter().map(|p| p.display().to_string()).collect();
        v.sort();
        v.dedup();
        v
    };
    let profile = SandboxProfile {
        name,
        root: root.display().to_string(),
        writable: if name.project_writable() {
            vec![root.display().to_string(), "/tmp".to_string()]
        } else {
            vec!["/tmp".to_string()]
        },
        read_only: text(read_only),
        masked: text(masked),
        masked_links: text(links),
        network: name.network(),
    };
    Ok((profile, trace))
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

/// A socket or a named pipe: a way to a process outside, since a read-only mount stops
/// neither `connect` nor a write into a pipe. Covered like a secret. The sockets the
/// kernel lists with their paths are covered for every run (`sockets`); this finds
/// the pipes, and the sockets bound by a path relative to their process's directory.
fn special(ft: &std::fs::FileType) -> bool {
    use std::os::unix::fs::FileTypeExt;
    ft.is_socket() || ft.is_fifo()
}

/// Reads the project: protected rows (read-only, not entered), secrets (masked), and
/// symlinks whose targets are secrets (the target masked, wherever it is).
fn walk_project(
    root: &Path,
    policy: &Policy,
    trace: &mut Trace,
    read_only: &mut Vec<PathBuf>,
    masked: &mut Vec<PathBuf>,
    links: &mut Vec<PathBuf>,
) -> Result<(), ProfileError> {
    let mut stack = vec![root.to_path_buf()];
    let mut seen = 0usize;
    while let Some(dir) = stack.pop() {
        trace.dir(&dir);
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
                let target = std::fs::canonicalize(&path).ok();
                trace.link(&path, target.as_deref());
                if let Some(target) = target {
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
            if crate::policy::protected::in_table(&path) {
                read_only.push(path);
                continue;
            }
            if ft.is_dir() && crate::policy::protected::is_git_shaped(&path) {
                // Its shape is in its entries: recorded, so a change is seen.
                trace.dir(&path);
                read_only.push(path);
                continue;
            }
            if special(&ft) || secret(policy, &path, ft.is_dir()) {
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

/// Reads HOME (not the project, walked already) to `HOME_DEPTH`: credential stores,
/// secret-shaped files, sockets and named pipes are masked.
fn walk_home(
    home: &Path,
    root: &Path,
    policy: &Policy,
    trace: &mut Trace,
    masked: &mut Vec<PathBuf>,
) -> Result<(), ProfileError> {
    let canonical = std::fs::canonicalize(home).ok();
    trace.link(home, canonical.as_deref());
    let Some(home) = canonical else {
        return Ok(());
    };
    if crate::model::paths::is_inside(&home, root) {
        return Ok(());
    }
    let mut stack = vec![(home.clone(), 0usize)];
    let mut seen = 0usize;
    while let Some((dir, depth)) = stack.pop() {
        trace.dir(&dir);
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
                let target = std::fs::canonicalize(&path).ok();
                trace.link(&path, target.as_deref());
                if let Some(target) = target
                    && secret(policy, &target, target.is_dir())
                {
                    masked.push(target);
                }
                continue;
            }
            if special(&ft) || secret(policy, &path, ft.is_dir()) {
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
        if let Some(is_dir) = trace.probe(&p)
            && secret(policy, &p, is_dir)
        {
            masked.push(p);
        }
    }
    Ok(())
}

/// KHAELOR's state directories, masked whole: the panel token that answers prompts,
/// the session logs holding what waits for an answer, the trust records. They belong
/// to the person; a contained command reads none of them, wherever the state lives
/// (the trust store's parent, which is the service's `--state-dir`; the default place
/// for this process; the default place under HOME). A state directory holding the
/// project is not masked whole (the project would vanish): its entries are.
fn state_dirs(
    policy: &Policy,
    root: &Path,
    home: &Path,
    trace: &mut Trace,
    masked: &mut Vec<PathBuf>,
) {
    let mut dirs: Vec<PathBuf> = vec![home.join(".local").join("state").join("khaelor-perm")];
    dirs.extend(
        policy
            .trust_dir()
            .and_then(Path::parent)
            .map(Path::to_path_buf),
    );
    dirs.extend(crate::policy::trust::default_state_dir());
    for dir in dirs {
        if trace.probe(&dir) != Some(true) {
            continue;
        }
        if !crate::model::paths::is_inside(root, &dir) {
            masked.push(dir);
            continue;
        }
        for name in [crate::policy::trust::PANEL_TOKEN_FILE, "sessions", "trust"] {
            let p = dir.join(name);
            if trace.probe(&p).is_some() && !crate::model::paths::is_inside(root, &p) {
                masked.push(p);
            }
        }
    }
}

/// Read rules written for absolute places (`/etc/shadow*`): the entries of the
/// directory their fixed prefix names that the rules do not allow. `/proc` and `/dev`
/// are the sandbox's own (a process table and devices of its own), so they are left.
fn absolute_rules(
    policy: &Policy,
    root: &Path,
    home: &Path,
    trace: &mut Trace,
    masked: &mut Vec<PathBuf>,
) {
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
        trace.dir(&dir);
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    /// What `canonicalize` says of `p`, as `resolve` answers.
    fn canonical(p: &Path) -> Option<(PathBuf, bool)> {
        std::fs::canonicalize(p).ok().map(|t| {
            let dir = t.is_dir();
            (t, dir)
        })
    }

    #[test]
    fn resolve_names_what_canonicalize_names() {
        let tmp = tempfile::tempdir().unwrap();
        let t = tmp.path();
        std::fs::create_dir_all(t.join("real/sub")).unwrap();
        std::fs::write(t.join("real/sub/f"), "x").unwrap();
        std::fs::write(t.join("real/name with spaces (deleted)"), "x").unwrap();
        symlink("real", t.join("dirlink")).unwrap();
        symlink("dirlink/sub/f", t.join("through")).unwrap();
        symlink(t.join("real/sub"), t.join("abs")).unwrap();
        symlink("through", t.join("chain")).unwrap();
        symlink("../real/sub/../sub/f", t.join("real/dots")).unwrap();
        symlink("real/name with spaces (deleted)", t.join("odd")).unwrap();
        symlink("nowhere", t.join("dangling")).unwrap();
        symlink("loop2", t.join("loop1")).unwrap();
        symlink("loop1", t.join("loop2")).unwrap();
        symlink("real/sub/f/under", t.join("notdir")).unwrap();
        std::process::Command::new("mkfifo")
            .arg(t.join("fifo"))
            .status()
            .unwrap();
        symlink("fifo", t.join("tofifo")).unwrap();
        for name in [
            "real",
            "real/sub/f",
            "dirlink",
            "through",
            "abs",
            "chain",
            "real/dots",
            "odd",
            "dangling",
            "loop1",
            "notdir",
            "tofifo",
        ] {
            let p = t.join(name);
            assert_eq!(resolve(&p), canonical(&p), "{name}");
        }
        assert!(resolve(&t.join("dangling")).is_none());
        assert_eq!(
            resolve(&t.join("chain")),
            Some((std::fs::canonicalize(t).unwrap().join("real/sub/f"), false))
        );
        assert!(resolve(&t.join("abs")).is_some_and(|(_, dir)| dir));
    }

    #[test]
    fn a_link_retargeted_further_along_its_path_breaks_the_trace() {
        let tmp = tempfile::tempdir().unwrap();
        let t = std::fs::canonicalize(tmp.path()).unwrap();
        std::fs::create_dir_all(t.join("a")).unwrap();
        std::fs::create_dir_all(t.join("b")).unwrap();
        std::fs::write(t.join("a/f"), "x").unwrap();
        std::fs::write(t.join("b/f"), "x").unwrap();
        // `hop` lies outside every directory the trace lists: only the link's own
        // check can see it change.
        symlink(t.join("a"), t.join("hop")).unwrap();
        let link = t.join("link");
        symlink(t.join("hop/f"), &link).unwrap();
        let mut trace = Trace::default();
        trace.link(&link, std::fs::canonicalize(&link).ok().as_deref());
        assert!(trace.holds());
        std::fs::remove_file(t.join("hop")).unwrap();
        symlink(t.join("b"), t.join("hop")).unwrap();
        assert!(!trace.holds(), "a link now leading elsewhere was trusted");
        std::fs::remove_file(t.join("hop")).unwrap();
        assert!(!trace.holds(), "a link now leading nowhere was trusted");
        symlink(t.join("a"), t.join("hop")).unwrap();
        assert!(trace.holds());
        std::fs::remove_file(t.join("a/f")).unwrap();
        std::fs::create_dir(t.join("a/f")).unwrap();
        assert!(!trace.holds(), "a file turned directory was trusted");
    }
}
