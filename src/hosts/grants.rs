//! The agent hosts' own permission rules as a policy layer: what a person allowed,
//! asked or denied in the host itself (Claude Code's "Yes, and don't ask again", its
//! `settings.json` lists), read at each decision with our semantics.
//!
//! Owns which host files are read, at which level, and which of them may widen. The
//! files are read through the `rules import` translators (`crate::interop`), so a host
//! rule means here exactly what `rules import` would write; each keeps its provenance
//! (`RuleSource::Host`, named `host:<host>`, with file and line). How a host allow is
//! kept from widening past our reading is `config::host_allow_holds`; the floor,
//! protected writes, unreadable commands and a broken config still apply after it.
//!
//! Levels: a host's user files sit right after our user layer, its project files right
//! after our project layer (last match wins). Trust (as for our project config): a
//! project file the repository ships keeps its asks and denies always, and its allows
//! only once `khaelor-perm trust` has trusted its current bytes. Claude Code's
//! `.claude/settings.local.json` is the person's own file (Claude writes "don't ask
//! again" there, and it is not meant to be committed): its allows count while git says
//! the repository does not track it; tracked, or no git to ask, it is shipped. Every
//! file listed here is a protected write: the agent changing one asks.
//!
//! A host file that cannot be read or translated contributes nothing (its allows are
//! lost, which only narrows; its denies are the host's own to enforce) and a warning.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::Host;
use crate::interop::{self, Format, ImportContext, ImportedRule};
use crate::policy::config::{IgnoredAllows, Policy, PolicyBuilder, narrow_only};
use crate::policy::rules::{PermissionRule, RuleOrigin, RuleSource};
use crate::policy::trust::{TrustStatus, TrustStore};

/// Longest a `git ls-files` asking whether a host file is tracked may take.
const GIT_TIMEOUT: Duration = Duration::from_secs(2);

/// Largest `.git` file (`gitdir: <path>`) read to find a worktree's index.
const MAX_GITDIR_FILE_BYTES: u64 = 4096;

/// Where Claude Code reads its managed settings on Linux (and drop-ins beside it).
pub const CLAUDE_MANAGED_DIR: &str = "/etc/claude-code";

/// How a host file may widen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// The person's own or the administrator's (user level): its allows count.
    Own,
    /// Shipped with the project (project level): its allows need trust.
    Shipped,
    /// The host's per-person file in the project (Claude's `settings.local.json`): the
    /// person's own unless the repository tracks it.
    Local,
}

/// One host file the layer reads (it may not exist).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostFile {
    pub host: Host,
    pub path: PathBuf,
    /// `RuleSource::User` or `RuleSource::Project`: the layer it sits beside.
    pub level: RuleSource,
    pub kind: Kind,
}

/// The files `host` persists permission rules in, user level first (those that exist,
/// for the hosts that keep rules in a directory of files).
pub fn files(host: Host, root: &Path, home: &Path) -> Vec<HostFile> {
    let f = |path: PathBuf, level, kind| HostFile {
        host,
        path,
        level,
        kind,
    };
    match host {
        Host::Claude => {
            let mut v = Vec::new();
            let managed = Path::new(CLAUDE_MANAGED_DIR);
            v.push(f(
                managed.join("managed-settings.json"),
                RuleSource::User,
                Kind::Own,
            ));
            v.extend(
                json_files_in(&managed.join("managed-settings.d"))
                    .into_iter()
                    .map(|p| f(p, RuleSource::User, Kind::Own)),
            );
            v.push(f(
                home.join(".claude").join("settings.json"),
                RuleSource::User,
                Kind::Own,
            ));
            // Claude Code reads its user settings from here instead when it is set.
            if let Some(dir) = std::env::var_os("CLAUDE_CONFIG_DIR").filter(|d| !d.is_empty()) {
                v.push(f(
                    PathBuf::from(dir).join("settings.json"),
                    RuleSource::User,
                    Kind::Own,
                ));
            }
            v.push(f(
                root.join(".claude").join("settings.json"),
                RuleSource::Project,
                Kind::Shipped,
            ));
            v.push(f(
                root.join(".claude").join("settings.local.json"),
                RuleSource::Project,
                Kind::Local,
            ));
            v
        }
        // Codex: the execpolicy `.rules` files, the user's (where its "don't ask again
        // for commands that start with …" amends `default.rules`) and the project's.
        // `CODEX_HOME` moves the user's.
        Host::Codex => {
            let codex_home = std::env::var_os("CODEX_HOME")
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
                .unwrap_or_else(|| home.join(".codex"));
            let mut v: Vec<HostFile> = files_in(&codex_home.join("rules"), "rules")
                .into_iter()
                .map(|p| f(p, RuleSource::User, Kind::Own))
                .collect();
            v.extend(
                files_in(&root.join(".codex").join("rules"), "rules")
                    .into_iter()
                    .map(|p| f(p, RuleSource::Project, Kind::Shipped)),
            );
            v
        }
        // Gemini CLI: its policy TOML files, the administrator's and the user's (its
        // "Allow always" writes `~/.gemini/policies/auto-saved.toml`), then the
        // workspace's (`<project>/.gemini/policies/`, whose `auto-saved.toml` Gemini
        // writes for a workspace-scoped "Allow always").
        Host::Gemini => {
            let mut v: Vec<HostFile> = files_in(Path::new(GEMINI_SYSTEM_POLICIES), "toml")
                .into_iter()
                .map(|p| f(p, RuleSource::User, Kind::Own))
                .collect();
            v.extend(
                files_in(&home.join(".gemini").join("policies"), "toml")
                    .into_iter()
                    .map(|p| f(p, RuleSource::User, Kind::Own)),
            );
            let ws = root.join(".gemini").join("policies");
            v.extend(files_in(&ws, "toml").into_iter().map(|p| {
                let kind = if p.file_name().is_some_and(|n| n == "auto-saved.toml") {
                    Kind::Local
                } else {
                    Kind::Shipped
                };
                f(p, RuleSource::Project, kind)
            }));
            v
        }
        // OpenCode's "always" lasts for its session only and is kept in memory: there
        // is no file of grants to read.
        // Qwen Code asks its own questions before the hook runs (its approval comes
        // first, then the hook), so its "always" can never let a call past us: its
        // rules are not read, and its settings are protected writes by the table
        // (`.qwen/`).
        // GitHub Copilot CLI keeps its "approve for this session" in memory and its
        // `--allow-tool` rules on the command line: there is no file of grants to read,
        // and its hook files are protected writes by the table (`.copilot/`,
        // `.github/hooks/`).
        // Factory Droid's own allow and deny lists (`commandAllowlist`, …) were not
        // checked: not read, and its settings are protected writes (`.factory/`).
        // Cline CLI's own approval runs after our plugin on every call, so its
        // choices cannot let a call past us: not read; its plugins and hooks are
        // protected writes (`.cline/`, `.clinerules/`, `~/Documents/Cline/`).
        Host::Opencode | Host::Qwen | Host::Copilot | Host::Droid | Host::Cline => Vec::new(),
    }
}

/// The directories a host reads every rules file of: writing anything in them is a
/// protected write, a new file as much as a changed one.
fn dirs(host: Host, root: &Path, home: &Path) -> Vec<(PathBuf, RuleSource)> {
    match host {
        Host::Codex => vec![
            (
                std::env::var_os("CODEX_HOME")
                    .filter(|v| !v.is_empty())
                    .map(PathBuf::from)
                    .unwrap_or_else(|| home.join(".codex"))
                    .join("rules"),
                RuleSource::User,
            ),
            (root.join(".codex").join("rules"), RuleSource::Project),
        ],
        Host::Gemini => vec![
            (home.join(".gemini").join("policies"), RuleSource::User),
            (root.join(".gemini").join("policies"), RuleSource::Project),
        ],
        Host::Claude => vec![(
            Path::new(CLAUDE_MANAGED_DIR).join("managed-settings.d"),
            RuleSource::User,
        )],
        Host::Opencode | Host::Qwen | Host::Copilot | Host::Droid | Host::Cline => Vec::new(),
    }
}

/// Where Gemini CLI reads the administrator's policies on Linux.
pub const GEMINI_SYSTEM_POLICIES: &str = "/etc/gemini-cli/policies";

/// `*.json` files directly in `dir`, sorted by name (as drop-in directories are read).
fn json_files_in(dir: &Path) -> Vec<PathBuf> {
    files_in(dir, "json")
}

/// `*.<ext>` files directly in `dir`, sorted by name.
fn files_in(dir: &Path, ext: &str) -> Vec<PathBuf> {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut v: Vec<PathBuf> = rd
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == ext))
        .collect();
    v.sort();
    v
}

/// The host's rules-import format; `None` for a host whose rules are not read
/// (`files` lists none).
fn format_of(host: Host) -> Option<Format> {
    match host {
        Host::Claude => Some(Format::Claude),
        Host::Codex => Some(Format::Codex),
        Host::Gemini => Some(Format::Gemini),
        Host::Opencode => Some(Format::Opencode),
        Host::Qwen | Host::Copilot | Host::Droid | Host::Cline => None,
    }
}

/// What the layer read: rules per level, the files, what was left out and why.
#[derive(Debug, Default)]
pub struct HostLayer {
    pub user: Vec<PermissionRule>,
    pub project: Vec<PermissionRule>,
    /// Every file looked at, present or not (all protected from the agent's writes).
    pub files: Vec<PathBuf>,
    pub ignored: Vec<IgnoredAllows>,
    /// Every allow rule the files hold, trusted or not: the host honours them all.
    pub all_allows: Vec<PermissionRule>,
    /// Files that could not be read or translated, one sentence each.
    pub warnings: Vec<String>,
}

/// Reads `host`'s files for the project at `root`. `trusted` says whether a shipped
/// file's current bytes are trusted (the trust store's answer, `Forbidden` when the
/// managed config forbids trust).
pub fn read(
    host: Host,
    root: &Path,
    home: &Path,
    trusted: impl Fn(&Path, &[u8]) -> TrustStatus,
) -> HostLayer {
    let mut out = HostLayer::default();
    let Some(format) = format_of(host) else {
        return out;
    };
    let ctx = ImportContext {
        project: root.to_path_buf(),
        home: home.to_path_buf(),
    };
    for level in [RuleSource::User, RuleSource::Project] {
        let level_files: Vec<HostFile> = files(host, root, home)
            .into_iter()
            .filter(|f| f.level == level)
            .collect();
        out.files.extend(level_files.iter().map(|f| f.path.clone()));
        out.files.extend(
            dirs(host, root, home)
                .into_iter()
                .filter(|(_, l)| *l == level)
                .map(|(d, _)| d),
        );
        // Each file is read once; each alone first, so one broken file does not take
        // the others with it. Trust is judged on exactly the text translated.
        let mut good: Vec<(HostFile, String)> = Vec::new();
        for f in level_files {
            let Ok(meta) = std::fs::symlink_metadata(&f.path) else {
                continue;
            };
            if meta.is_dir() {
                continue;
            }
            let alone = interop::model::read_source(&f.path).and_then(|text| {
                interop::import_texts(format, &[(f.path.as_path(), &text)], &ctx, None)
                    .map(|_| text)
            });
            match alone {
                Ok(text) => good.push((f, text)),
                Err(e) => out
                    .warnings
                    .push(format!("{host}'s rules are left out: {e}")),
            }
        }
        if good.is_empty() {
            continue;
        }
        // Together, in order: the host merges its files of one level itself (Claude:
        // a deny in any file beats an allow in another), and the translator orders them.
        let sources: Vec<(&Path, &str)> = good
            .iter()
            .map(|(f, text)| (f.path.as_path(), text.as_str()))
            .collect();
        let imported = match interop::import_texts(format, &sources, &ctx, None) {
            Ok(i) => i,
            Err(e) => {
                out.warnings
                    .push(format!("{host}'s rules are left out: {e}"));
                continue;
            }
        };
        let mut rules: Vec<PermissionRule> = Vec::new();
        let mut untrusted: Vec<(String, TrustStatus, Vec<PermissionRule>)> = Vec::new();
        for (f, text) in &good {
            let file = f.path.display().to_string();
            let mine: Vec<PermissionRule> = imported
                .rules
                .iter()
                .filter(|r| r.from.file == file && !is_mode_default(r))
                .map(|r| host_rule(host, r))
                .collect();
            out.all_allows.extend(
                mine.iter()
                    .filter(|r| r.action == crate::policy::rules::Action::Allow)
                    .cloned(),
            );
            // Trust decides only what a file may widen: a file that widens nothing
            // (no allow, no ask offering "always") needs no trust store or git asked.
            let widens = mine.iter().any(|r| {
                r.action == crate::policy::rules::Action::Allow
                    || (r.action == crate::policy::rules::Action::Ask && r.allow_always)
            });
            let status = match f.kind {
                _ if !widens => TrustStatus::Trusted,
                Kind::Own => TrustStatus::Trusted,
                Kind::Local if !tracked(root, &f.path) => TrustStatus::Trusted,
                Kind::Local | Kind::Shipped => trusted(&f.path, text.as_bytes()),
            };
            if status == TrustStatus::Trusted {
                rules.extend(mine);
            } else {
                untrusted.push((file, status, mine));
            }
        }
        for (file, status, mut mine) in untrusted {
            let dropped = narrow_only(&mut mine);
            if !dropped.is_empty() {
                out.ignored.push(IgnoredAllows {
                    file,
                    status,
                    rules: dropped,
                });
            }
            rules.extend(mine);
        }
        // The translator's order (allows, asks, denies: the host's precedence in our
        // last-match order) across the level's files.
        rules.sort_by_key(|r| r.action);
        match level {
            RuleSource::Project => out.project.extend(rules),
            _ => out.user.extend(rules),
        }
    }
    out
}

/// The translator's stand-ins for a host's defaults (Claude's `defaultMode`, Gemini's
/// "writes ask"), which `rules import` writes so an imported config is as strict as the
/// host: here the host applies its own defaults itself; only its rules are a layer.
fn is_mode_default(r: &ImportedRule) -> bool {
    r.original.starts_with("defaultMode") || r.original.starts_with("(Gemini CLI default")
}

fn host_rule(host: Host, r: &ImportedRule) -> PermissionRule {
    let mut rule = r.rule.clone();
    rule.source = RuleSource::Host;
    rule.name = Some(format!("host:{host}"));
    rule.origin = Some(RuleOrigin {
        file: r.from.file.clone(),
        line: r.from.line,
        column: 1,
    });
    rule
}

/// Whether git tracks `path` in the repository around `root`; `true` when git cannot
/// say (no repository, no git, a timeout): fail closed, the file counts as shipped.
/// git runs with no pager, no optional locks and no fsmonitor, so a hostile
/// repository's config cannot make it run a program.
fn tracked(root: &Path, path: &Path) -> bool {
    let Ok(rel) = path.strip_prefix(root) else {
        return true;
    };
    let child = Command::new("git")
        .arg("-C")
        .arg(root)
        .args([
            "--no-pager",
            "--no-optional-locks",
            "-c",
            "core.fsmonitor=false",
            "ls-files",
            "--error-unmatch",
            "--",
        ])
        .arg(rel)
        .env("GIT_TERMINAL_PROMPT", "0")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn();
    let Ok(mut child) = child else { return true };
    let start = Instant::now();
    loop {
        match child.try_wait() {
            // 1: the path is not tracked; 0 tracked; 128 and the rest: cannot say.
            Ok(Some(s)) => return s.code() != Some(1),
            Ok(None) if start.elapsed() < GIT_TIMEOUT => {
                std::thread::sleep(Duration::from_millis(2));
            }
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return true;
            }
        }
    }
}

/// Adds the rules of `hosts` to a policy being built (unless a config turned them off
/// with `"hostRules": false`); returns the warnings to show.
pub fn add_to(mut b: PolicyBuilder, hosts: &[Host], home: &Path) -> (PolicyBuilder, Vec<String>) {
    let mut warnings = Vec::new();
    if b.host_rules_off() {
        return (b, warnings);
    }
    let Some(root) = b.project_root().map(Path::to_path_buf) else {
        return (b, warnings);
    };
    let forbidden = b.trust_forbidden();
    let store = b.trust_store().cloned();
    for host in hosts {
        let layer = read(*host, &root, home, |path, bytes| {
            if forbidden {
                TrustStatus::Forbidden
            } else {
                match &store {
                    Some(s) => s.status(path, bytes),
                    None => TrustStatus::Untrusted,
                }
            }
        });
        // Claude's managed settings live elsewhere off Linux, where this layer does not
        // read them: what Claude's own rules let through is then not known.
        let complete =
            layer.warnings.is_empty() && (*host != Host::Claude || cfg!(target_os = "linux"));
        warnings.extend(layer.warnings);
        b = b.host_seen(layer.all_allows, complete);
        let (user_files, project_files): (Vec<PathBuf>, Vec<PathBuf>) = layer
            .files
            .iter()
            .cloned()
            .partition(|p| !p.starts_with(&root));
        b = b
            .host_layer(RuleSource::User, layer.user, &user_files, Vec::new())
            .host_layer(
                RuleSource::Project,
                layer.project,
                &project_files,
                layer.ignored,
            );
    }
    (b, warnings)
}

/// The policy a hook call of `host` is decided by, on every path that decides one
/// (the one-shot `hook`, and the service's `POST /v1/hooks/{host}` through its cache):
/// our layers `layers`, then `host`'s own rules unless `host` is `None` (the layer
/// turned off with `--no-host-rules`) or a config turns them off (`"hostRules":
/// false`). Returns the warnings of host files left out, to show or log.
pub fn hook_policy(
    layers: PolicyBuilder,
    host: Option<Host>,
    home: &Path,
) -> (Policy, Vec<String>) {
    let hosts: Vec<Host> = host.into_iter().collect();
    let (layers, warnings) = add_to(layers, &hosts, home);
    (layers.build(), warnings)
}

/// Every path whose change can change what `read` gives for `host` at `root`, for a
/// cache keyed on file metadata (`crate::http::policy_cache`): the host's files and
/// the directories it reads every file of (a new file changes the directory), the
/// trust records of the files that need trust, and git's index and `.git` (whether
/// the repository tracks a per-person file). Listing a directory here is cheap; the
/// one file opened is a worktree's small `.git` file naming its git directory.
pub fn watched(host: Host, root: &Path, home: &Path, trust: Option<&TrustStore>) -> Vec<PathBuf> {
    let mut v = Vec::new();
    let mut needs_git = false;
    for f in files(host, root, home) {
        if f.kind != Kind::Own
            && let Some(t) = trust
        {
            v.push(t.record_path(&f.path));
        }
        needs_git |= f.kind == Kind::Local;
        v.push(f.path);
    }
    v.extend(dirs(host, root, home).into_iter().map(|(d, _)| d));
    if host == Host::Gemini {
        v.push(PathBuf::from(GEMINI_SYSTEM_POLICIES));
    }
    if needs_git {
        v.extend(git_paths(root));
    }
    v
}

/// `.git` of the nearest repository around `root` and the index it names (through a
/// worktree's `gitdir:` file); only `root`'s own `.git` when there is none, so that a
/// repository created later is seen. Whether git tracks a file changes only with them.
fn git_paths(root: &Path) -> Vec<PathBuf> {
    for dir in root.ancestors() {
        let dot_git = dir.join(".git");
        let Ok(meta) = std::fs::metadata(&dot_git) else {
            continue;
        };
        let git_dir = if meta.is_dir() {
            Some(dot_git.clone())
        } else if !meta.is_file() || meta.len() > MAX_GITDIR_FILE_BYTES {
            // A pipe or a device named `.git` must not block the cache: git itself
            // cannot use it, so there is no index to watch.
            None
        } else {
            std::fs::read_to_string(&dot_git).ok().and_then(|t| {
                t.lines()
                    .find_map(|l| l.strip_prefix("gitdir:"))
                    .map(|d| dir.join(d.trim()))
            })
        };
        let mut v = vec![dot_git];
        v.extend(git_dir.map(|g| g.join("index")));
        return v;
    }
    vec![root.join(".git")]
}
