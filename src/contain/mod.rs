//! The fourth answer's sandbox: `contain` runs a command without a prompt inside a
//! sandbox the kernel enforces (bubblewrap over unprivileged user namespaces), where it
//! can write only inside the project (protected paths read-only), cannot read what the
//! read rules keep from it (masked), has no network unless the rules grant it, gets a
//! private `/tmp`, and takes its whole process tree with it when it ends.
//!
//! Owns the probe (`available`), the profile (`profile`, kept between calls by
//! `cache`), the rewritten command a host
//! runs instead of the original (`rewrite`), running it (`run`, for `khaelor-perm exec
//! --contain`), and the `policy::decide::Sandbox` the hosts, the HTTP API and the CLI
//! hand to `decide_with`. Sits above `policy` (it reads the rules and the protected
//! table) and below `cli`, `http` and `hosts`; `policy` never imports it.
//!
//! Linux only. Where bubblewrap is missing or the kernel refuses user namespaces, the
//! probe says why and a contained call asks (`NotContained::Unavailable`).

pub mod cache;
mod held;
pub mod profile;
pub mod run;
mod scope;
mod sockets;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;

use crate::model::contain::{Containment, NotContained, ProfileName};
use crate::model::vocab::AnalysisContext;
use crate::policy::config::Policy;
use crate::tools::MappedCall;

/// Why this machine cannot build the sandbox.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Unavailable {
    #[error("bubblewrap is not installed (looked in {})", run::BWRAP_PATHS.join(", "))]
    NoBubblewrap,
    #[error("bubblewrap cannot start a sandbox here (user namespaces refused?): {0}")]
    Refused(String),
    #[error("the sandbox is built for Linux only")]
    NotLinux,
}

/// Whether `khaelor-perm exec --contain` can run here: bubblewrap is installed and
/// starts an empty sandbox with every namespace this module uses. Probed once per
/// process (a few milliseconds).
pub fn available() -> Result<PathBuf, Unavailable> {
    static PROBE: OnceLock<Result<PathBuf, Unavailable>> = OnceLock::new();
    PROBE.get_or_init(probe).clone()
}

fn probe() -> Result<PathBuf, Unavailable> {
    if !cfg!(target_os = "linux") {
        return Err(Unavailable::NotLinux);
    }
    let bwrap = run::bwrap().ok_or(Unavailable::NoBubblewrap)?;
    let out = Command::new(&bwrap)
        .args(run::ISOLATION)
        .args([
            "--unshare-net",
            "--ro-bind",
            "/",
            "/",
            "--dev",
            "/dev",
            "--proc",
            "/proc",
            "--tmpfs",
            "/tmp",
            "--cap-drop",
            "ALL",
            "--",
            "/bin/true",
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .output()
        .map_err(|e| Unavailable::Refused(e.to_string()))?;
    if out.status.success() {
        Ok(bwrap)
    } else {
        let err = String::from_utf8_lossy(&out.stderr);
        Err(Unavailable::Refused(
            err.lines()
                .next()
                .unwrap_or("no message")
                .trim()
                .to_string(),
        ))
    }
}

/// The command a host runs instead of `command`: `EXE exec --contain --profile P --root
/// ROOT -- bash -c COMMAND`, as argv and as one shell line.
pub fn rewrite(
    exe: &Path,
    profile: ProfileName,
    root: &Path,
    command: &str,
) -> (Vec<String>, String) {
    let argv: Vec<String> = vec![
        exe.display().to_string(),
        "exec".to_string(),
        "--contain".to_string(),
        "--profile".to_string(),
        profile.as_str().to_string(),
        "--root".to_string(),
        root.display().to_string(),
        "--".to_string(),
        "bash".to_string(),
        "-c".to_string(),
        command.to_string(),
    ];
    let line = argv
        .iter()
        .map(|a| shell_quote(a))
        .collect::<Vec<_>>()
        .join(" ");
    (argv, line)
}

/// `a` as one shell word: bare when it holds only safe characters, else in single
/// quotes with each `'` written `'\''`.
pub fn shell_quote(a: &str) -> String {
    let safe = !a.is_empty()
        && a.chars().all(|c| {
            c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '/' | ':' | '=' | '+' | ',')
        });
    if safe {
        a.to_string()
    } else {
        format!("'{}'", a.replace('\'', r"'\''"))
    }
}

/// The sandbox `decide_with` builds contained calls with: bubblewrap on this machine,
/// the rewritten command naming `exe` (this program).
#[derive(Debug, Clone)]
pub struct Bubblewrap {
    pub exe: PathBuf,
}

impl Bubblewrap {
    /// This program as the runner of rewritten commands; `None` when its path cannot
    /// be known (then nothing is contained).
    pub fn current() -> Option<Bubblewrap> {
        std::env::current_exe().ok().map(|exe| Bubblewrap { exe })
    }
}

impl crate::policy::decide::Sandbox for Bubblewrap {
    fn contain(
        &self,
        call: &MappedCall,
        ctx: &AnalysisContext,
        policy: &Policy,
        name: ProfileName,
    ) -> Result<Containment, NotContained> {
        available().map_err(|e| NotContained::Unavailable {
            detail: e.to_string(),
        })?;
        if name == ProfileName::ProjectNetwork {
            scope::available().map_err(|detail| NotContained::Unavailable { detail })?;
        }
        let command = call.command.as_deref().ok_or(NotContained::NotACommand)?;
        let cache = cache::dir(ctx.home(), ctx.root());
        let (profile, _) = cache::build(ctx.root(), ctx.home(), policy, name, cache.as_deref())
            .map_err(|e| NotContained::Unavailable {
                detail: e.to_string(),
            })?;
        let (argv, line) = rewrite(&self.exe, name, ctx.root(), command);
        Ok(Containment {
            profile,
            argv,
            command: line,
        })
    }
}

/// The runner for hosts and callers that can run a rewritten command.
pub fn runner() -> Option<Bubblewrap> {
    Bubblewrap::current()
}
