//! Running one command inside the sandbox: the bubblewrap command line a profile makes,
//! the process (exit status, stdout and stdin passed through, stderr passed through and
//! read for the sandbox's refusals), and what is checked after it (protected entries
//! it created anywhere in the project, where none existed: removed, and a removal that
//! fails is reported).
//!
//! The layout: the whole file system read-only (`--ro-bind / /`), the project bound
//! read-write, the protected paths in it bound read-only again over it, each secret
//! covered (an empty tmpfs over a directory, `/dev/null` over a file), `/tmp` and
//! `/run` private tmpfs (no sockets of the host's services; one bound anywhere else is
//! covered too, `sockets`), `/dev` (with its `shm`)
//! and `/proc` the sandbox's own, every namespace unshared (user, pid, ipc, uts, cgroup; the network
//! unless the profile keeps it), all capabilities dropped, no new privileges (setuid
//! programs do not raise anything), a new session (no `TIOCSTI` into the terminal),
//! and the whole process tree killed when the command ends or its parent dies.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use super::profile::{self, Trace};
use crate::model::contain::SandboxProfile;

/// Where bubblewrap is looked for (Debian's package installs it here).
pub const BWRAP_PATHS: &[&str] = &["/usr/bin/bwrap", "/bin/bwrap", "/usr/local/bin/bwrap"];

/// The environment variables a contained command does not get: an agent socket that
/// signs for the user, and variables named like credentials.
fn secret_env(name: &str) -> bool {
    let up = name.to_ascii_uppercase();
    up == "SSH_AUTH_SOCK"
        || up == "GPG_AGENT_INFO"
        || crate::programs::environment::credential_variable(name)
}

/// Finds bubblewrap.
pub fn bwrap() -> Option<PathBuf> {
    BWRAP_PATHS.iter().map(PathBuf::from).find(|p| p.is_file())
}

/// The namespaces and the session every sandbox gets, the probe's included: the probe
/// must fail where a real run would.
pub(super) const ISOLATION: &[&str] = &[
    "--die-with-parent",
    "--new-session",
    "--unshare-user",
    "--unshare-pid",
    "--unshare-ipc",
    "--unshare-uts",
    "--unshare-cgroup-try",
];

/// The bubblewrap arguments (without the program) that run `argv` in `cwd` under
/// `profile`. `close_fds`: descriptors above 2 that this process inherited, which the
/// sandbox must not inherit (a descriptor opened on a secret outside is a way in):
/// a shell inside closes them before the command starts. `covered`: what is bound
/// over which path for this run, found afresh each time: `/dev/null` over the host's
/// unix sockets the sandbox would still see (`sockets::reachable`), and over files
/// whose text holds a credential or a copy of one without it (`held::covered`).
pub fn bwrap_args(
    profile: &SandboxProfile,
    cwd: &Path,
    argv: &[String],
    close_fds: &[u32],
    covered: &[(String, String)],
) -> Vec<String> {
    let mut a: Vec<String> = Vec::new();
    let mut push = |xs: &[&str]| a.extend(xs.iter().map(|s| s.to_string()));
    push(ISOLATION);
    if !profile.network {
        push(&["--unshare-net"]);
    }
    push(&["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]);
    push(&["--tmpfs", "/tmp"]);
    if Path::new("/run").is_dir() && !is_symlink(Path::new("/run")) {
        push(&["--tmpfs", "/run"]);
    }
    if Path::new("/var/run").is_dir() && !is_symlink(Path::new("/var/run")) {
        push(&["--tmpfs", "/var/run"]);
    }
    // The project, bound again over the private `/tmp` where it lives there: writable
    // unless the profile keeps it read-only.
    let bind = if profile.writable.contains(&profile.root) {
        "--bind"
    } else {
        "--ro-bind"
    };
    push(&[bind, &profile.root, &profile.root]);
    // Under a read-only project the protected paths in it are read-only already: the
    // project's bind is, with every mount below it, and whatever a protected link
    // leads to outside it lies in the read-only root or a private tmpfs. Binding each
    // again would change nothing but cost bubblewrap a mount apiece.
    if bind == "--bind" {
        for p in &profile.read_only {
            push(&["--ro-bind", p, p]);
        }
    }
    let masked = outermost(&profile.masked);
    for p in &masked {
        let path = Path::new(p);
        // A secret inside the private /tmp or the sandbox's own /proc and /dev is not
        // the host's (unless the project itself lives there).
        let private = ["/tmp", "/proc", "/dev"]
            .iter()
            .any(|d| path.starts_with(d));
        if private && !path.starts_with(&profile.root) {
            continue;
        }
        match std::fs::metadata(path) {
            Ok(m) if m.is_dir() => push(&["--tmpfs", p, "--remount-ro", p]),
            Ok(_) => push(&["--ro-bind", "/dev/null", p]),
            Err(_) => {}
        }
    }
    // The host's sockets bound where the sandbox still sees them (a read-only mount
    // does not stop a connection), and files holding a credential. One inside a
    // covered secret is gone with it, and a file could not be bound there (ssh's
    // control sockets in `~/.ssh`).
    for (with, p) in covered {
        if !masked.iter().any(|m| Path::new(p).starts_with(m)) {
            push(&["--ro-bind", with, p]);
        }
    }
    push(&["--cap-drop", "ALL", "--chdir"]);
    a.push(cwd.display().to_string());
    for (k, _) in std::env::vars_os() {
        if let Some(k) = k.to_str()
            && secret_env(k)
        {
            a.push("--unsetenv".to_string());
            a.push(k.to_string());
        }
    }
    // uv locks its cache in HOME before anything (`uv run` fails at once where it is
    // read-only) and the cache must stay read-only: wheels planted there would run
    // outside later. Without a cache it uses a temporary one in the private /tmp.
    a.push("--setenv".to_string());
    a.push("UV_NO_CACHE".to_string());
    a.push("1".to_string());
    a.push("--setenv".to_string());
    a.push("KHAELOR_CONTAINED".to_string());
    a.push(profile.name.as_str().to_string());
    a.push("--".to_string());
    if close_fds.is_empty() {
        a.extend(argv.iter().cloned());
        return a;
    }
    // Closing them takes a shell; a command that is a shell line already (what a
    // rewritten call runs) closes them itself, so no second shell starts.
    let close = format!(
        "exec {}",
        close_fds
            .iter()
            .map(|fd| format!("{fd}>&-"))
            .collect::<Vec<_>>()
            .join(" ")
    );
    match argv {
        [sh, c, line] if (sh == "bash" || sh == "/bin/bash") && c == "-c" => {
            a.extend([sh.clone(), c.clone(), format!("{close}\n{line}")]);
        }
        _ => {
            a.extend(["/bin/bash".to_string(), "-c".to_string()]);
            a.push(format!("{close}; exec \"$@\""));
            a.push("khaelor-contain".to_string());
            a.extend(argv.iter().cloned());
        }
    }
    a
}

fn is_symlink(p: &Path) -> bool {
    std::fs::symlink_metadata(p).is_ok_and(|m| m.file_type().is_symlink())
}

/// The masked paths with those inside another masked directory dropped (the outer
/// one hides them already).
fn outermost(paths: &[String]) -> Vec<String> {
    let mut v: Vec<&String> = paths.iter().collect();
    v.sort();
    let mut out: Vec<String> = Vec::new();
    for p in v {
        let inside = out
            .iter()
            .any(|o| Path::new(p).starts_with(o) && Path::new(o).is_dir());
        if !inside {
            out.push(p.clone());
        }
    }
    out
}

/// The descriptors above 2 this process holds that it did not open itself (the
/// directory listing's own descriptor is closed again when the listing ends, so it
/// is excluded by checking each one after the listing).
pub fn inherited_fds() -> Vec<u32> {
    let listed: Vec<u32> = match std::fs::read_dir("/proc/self/fd") {
        Ok(rd) => rd
            .flatten()
            .filter_map(|e| e.file_name().to_str().and_then(|s| s.parse::<u32>().ok()))
            .filter(|n| *n > 2)
            .collect(),
        Err(_) => Vec::new(),
    };
    listed
        .into_iter()
        .filter(|n| Path::new(&format!("/proc/self/fd/{n}")).exists())
        .collect()
}

/// What a contained run ended with.
#[derive(Debug)]
pub struct Outcome {
    /// The command's exit status (128 + signal when a signal ended it).
    pub status: i32,
    /// The command's stderr, as it was passed through (for the refusal message).
    pub stderr_tail: String,
    /// Protected entries the command created where none existed; they were removed.
    pub removed: Vec<PathBuf>,
    /// Protected entries the command created that could not be removed, with why
    /// (they are still there: the person must remove them).
    pub not_removed: Vec<(PathBuf, String)>,
    /// Part of the project could not be searched for created protected entries
    /// (more entries than the search reads).
    pub unchecked: bool,
}

/// Runs `argv` in `cwd` inside the sandbox `profile` describes; `trace` is what the
/// profile was made from (`profile::Trace`), against which created protected entries
/// are found afterwards.
pub fn run(
    bwrap: &Path,
    profile: &SandboxProfile,
    trace: &Trace,
    home: &Path,
    cwd: &Path,
    argv: &[String],
) -> std::io::Result<Outcome> {
    let sockets =
        super::sockets::reachable(Path::new(&profile.root)).map_err(std::io::Error::other)?;
    // Kept until the command ends: its copies are what the sandbox binds.
    let held = super::held::covered(Path::new(&profile.root), home);
    let mut covered: Vec<(String, String)> = sockets
        .into_iter()
        .map(|p| ("/dev/null".to_string(), p))
        .collect();
    covered.extend(held.covers.iter().cloned());
    let args = bwrap_args(profile, cwd, argv, &inherited_fds(), &covered);
    if profile.network {
        super::scope::keep_from_host_abstract_sockets().map_err(std::io::Error::other)?;
    }
    let mut child = Command::new(bwrap)
        .args(&args)
        .stdin(Stdio::inherit())
        .stdout(Stdio::inherit())
        .stderr(Stdio::piped())
        .spawn()?;
    let mut tail = String::new();
    if let Some(mut err) = child.stderr.take() {
        let mut buf = [0u8; 8192];
        let mut out = std::io::stderr();
        let mut kept: Vec<u8> = Vec::new();
        loop {
            match err.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => {
                    let chunk = buf.get(..n).unwrap_or_default();
                    let _ = out.write_all(chunk);
                    let _ = out.flush();
                    kept.extend_from_slice(chunk);
                    if kept.len() > 64 * 1024 {
                        let cut = kept.len() - 64 * 1024;
                        kept.drain(..cut);
                    }
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(_) => break,
            }
        }
        tail = String::from_utf8_lossy(&kept).into_owned();
    }
    let status = child.wait()?;
    let code = match status.code() {
        Some(c) => c,
        None => {
            use std::os::unix::process::ExitStatusExt;
            128 + status.signal().unwrap_or(0)
        }
    };
    let created = created_protected(profile, trace);
    let mut removed = Vec::new();
    let mut not_removed = Vec::new();
    for p in created.paths {
        let gone = if std::fs::symlink_metadata(&p).is_ok_and(|m| m.is_dir()) {
            std::fs::remove_dir_all(&p)
        } else {
            std::fs::remove_file(&p)
        };
        match gone {
            Ok(()) => removed.push(p),
            Err(e) => not_removed.push((p, e.to_string())),
        }
    }
    Ok(Outcome {
        status: code,
        stderr_tail: tail,
        removed,
        not_removed,
        unchecked: created.unchecked,
    })
}

/// What `created_protected` found.
#[derive(Debug, Default)]
struct Created {
    paths: Vec<PathBuf>,
    unchecked: bool,
}

/// The protected entries (`.envrc`, `.git`, `.husky/`, `.github/workflows`, a
/// git-shaped directory, …) in the project that were not there when the profile was
/// made: a bind cannot make a missing name read-only, so whatever the command created
/// is found here. Only directories whose identity or times changed since the trace
/// (an entry added, removed or renamed changes them) are listed again, and every
/// directory in them that is new is searched whole; a racy trace cannot tell, so then
/// the whole project is. The tool and download directories the profile walk skips are
/// skipped here too.
fn created_protected(profile: &SandboxProfile, trace: &Trace) -> Created {
    let root = Path::new(&profile.root);
    let known: std::collections::HashMap<&str, &profile::Stamp> = trace
        .dirs
        .iter()
        .filter(|(p, _)| crate::model::paths::is_inside(Path::new(p), root))
        .map(|(p, s)| (p.as_str(), s))
        .collect();
    let protected: std::collections::HashSet<&str> =
        profile.read_only.iter().map(String::as_str).collect();
    let mut out = Created::default();
    // Directories to list: changed known ones, and (below them) new ones.
    let mut stack: Vec<PathBuf> = if trace.racy {
        vec![root.to_path_buf()]
    } else {
        known
            .iter()
            .filter(|(p, s)| profile::Stamp::of(Path::new(p)).as_ref() != Some(**s))
            .map(|(p, _)| PathBuf::from(p))
            .collect()
    };
    let mut listed: std::collections::HashSet<PathBuf> = std::collections::HashSet::new();
    let mut seen = 0usize;
    while let Some(dir) = stack.pop() {
        if !listed.insert(dir.clone()) {
            continue;
        }
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in entries.flatten() {
            seen += 1;
            if seen > profile::MAX_PROJECT_ENTRIES {
                out.unchecked = true;
                return out;
            }
            let path = e.path();
            let Ok(ft) = e.file_type() else { continue };
            let shown = path.display().to_string();
            let is_protected = crate::policy::protected::in_table(&path)
                || (ft.is_dir() && crate::policy::protected::is_git_shaped(&path));
            if is_protected {
                if !protected.contains(shown.as_str()) {
                    out.paths.push(path);
                }
                continue;
            }
            let name = e.file_name();
            let skip = profile::PROJECT_SKIP.iter().any(|s| name == *s);
            // A directory the trace knows and that did not change holds nothing new.
            let unchanged = known
                .get(shown.as_str())
                .is_some_and(|s| profile::Stamp::of(&path).as_ref() == Some(*s));
            if ft.is_dir() && !skip && (trace.racy || !unchanged) {
                stack.push(path);
            }
        }
    }
    out
}

/// The words in a command's error output that a sandbox refusal produces.
const REFUSALS: &[&str] = &[
    "Read-only file system",
    "Permission denied",
    "Operation not permitted",
    "Network is unreachable",
    "Could not resolve host",
    "Temporary failure in name resolution",
    "Name or service not known",
    "getaddrinfo",
    "Connection refused",
    "EROFS",
    "EACCES",
    "EPERM",
    "ENETUNREACH",
    "ECONNREFUSED",
    "EAI_AGAIN",
];

/// The message for the model after a contained command, when it failed in a way the
/// sandbox may have caused, or when it created protected entries (removed): what the
/// sandbox holds, and how to ask for more. `None`: nothing to say.
pub fn refusal_message(profile: &SandboxProfile, outcome: &Outcome) -> Option<String> {
    let mut out = String::new();
    for (p, why) in &outcome.not_removed {
        out.push_str(&format!(
            "khaelor-perm: this command created `{}`, a protected path (git state and hooks, hook managers, CI and KHAELOR configuration), and the sandbox could not remove it ({why}): it is still there. Tell the user to look at it and remove it before running git or the tools that read it.\n",
            p.display()
        ));
    }
    if outcome.unchecked {
        out.push_str(&format!(
            "khaelor-perm: the project has more than {} entries, more than the sandbox searches after a command: protected paths this command may have created (git state and hooks, hook managers, CI configuration) were not looked for. Tell the user.\n",
            profile::MAX_PROJECT_ENTRIES
        ));
    }
    for p in &outcome.removed {
        out.push_str(&format!(
            "khaelor-perm: the sandbox removed `{}`, which this command created: writes to protected paths (git state and hooks, hook managers, CI and KHAELOR configuration) always ask.\n",
            p.display()
        ));
    }
    let root = Path::new(&profile.root);
    let masked_hit = profile
        .masked
        .iter()
        .any(|m| outcome.stderr_tail.contains(m.as_str()))
        || profile.masked_links.iter().any(|l| {
            let rel = Path::new(l)
                .strip_prefix(root)
                .map(|r| r.display().to_string())
                .unwrap_or_default();
            outcome.stderr_tail.contains(l.as_str())
                || (!rel.is_empty() && outcome.stderr_tail.contains(rel.as_str()))
        });
    let lower = outcome.stderr_tail.to_ascii_lowercase();
    let refused = REFUSALS
        .iter()
        .any(|w| lower.contains(&w.to_ascii_lowercase()));
    if outcome.status != 0 && (refused || masked_hit) {
        out.push_str(&format!(
            "khaelor-perm: this command ran in KHAELOR's sandbox (profile `{}`, policy: contain): {}, secrets are masked (unreadable or empty), {}. If the command needs more than that, do not try to get around the sandbox: tell the user what it needs and why, and ask them to run it outside the sandbox or to allow it with a rule.\n",
            profile.name.as_str(),
            if profile.writable.contains(&profile.root) {
                format!(
                    "it may write only inside {} and /tmp, protected paths there are read-only",
                    profile.root
                )
            } else {
                format!(
                    "it may write only inside /tmp: the project {} is read-only (code written on the command line may compute and print, not change the project)",
                    profile.root
                )
            },
            if profile.network {
                "and it has the network"
            } else {
                "and there is no network (loopback only)"
            }
        ));
    }
    (!out.is_empty()).then_some(out)
}
