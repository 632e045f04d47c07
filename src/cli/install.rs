//! `khaelor-perm install | uninstall | doctor <host>`: wiring the hook into an agent
//! host's settings, taking it out, and checking that a host is wired and answers.
//!
//! Owns the I/O: which file (`--user`, the default, or `--project DIR`), the backup
//! (the file's previous bytes under the state directory's `install-backups/`), the
//! atomic write, what is printed, and doctor's checks. The edits themselves are
//! `crate::hosts::wiring`. Exit statuses: 0 done (doctor: every check holds), 1 doctor
//! found a failing check, 2 usage or a file that cannot be edited.

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};

use super::print_out;
use crate::hosts::{Host, wiring};
use crate::presentation::messages::terminal_safe;

/// The host versions the end-to-end tests pin (`tests/setup/hosts.sh`).
pub const PINNED: &[(Host, &str, &str)] = &[
    (Host::Claude, "claude", "2.1.332"),
    (Host::Codex, "codex", "0.171.0"),
    (Host::Gemini, "gemini", "0.61.0"),
    (Host::Opencode, "opencode", "1.18.33"),
    (Host::Qwen, "qwen", "0.24.4"),
    (Host::Copilot, "copilot", "1.0.102"),
    (Host::Droid, "droid", "0.215.0"),
    (Host::Cline, "cline", "3.0.65"),
];

#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:\n  khaelor-perm install claude\n  \
khaelor-perm install claude --project . --dry-run\n  \
khaelor-perm uninstall claude")]
pub struct InstallArgs {
    #[command(flatten)]
    pub target: Target,
    /// The hook denies what would ask (for headless runs: nobody answers).
    #[arg(long, conflicts_with = "interactive")]
    pub non_interactive: bool,
    /// The hook answers an ask as an ask, for a host whose default is to deny it
    /// (Gemini CLI's TUI: its dialog then asks, "Allow … for all future sessions"
    /// included; a headless `gemini -p` then ends the turn on an ask, silently).
    #[arg(long)]
    pub interactive: bool,
    /// The hook asks a running service instead of deciding in process (a service on
    /// loopback without `--token-file` answers hooks without a token).
    #[arg(long, value_name = "URL")]
    pub url: Option<String>,
    /// The service's bearer token file (with `--url`), when it was started with one.
    #[arg(long, value_name = "FILE", requires = "url")]
    pub token_file: Option<PathBuf>,
    /// With `--url`: an ask waits up to SECS for a person's answer in the panel
    /// (`hook --wait`); the host's own timeout for the pre-tool hook is set 10 s longer,
    /// so it never kills the hook first.
    #[arg(long, value_name = "SECS", requires = "url", conflicts_with = "non_interactive",
        value_parser = clap::value_parser!(u64).range(1..=crate::http::hooks::MAX_WAIT_SECS))]
    pub wait: Option<u64>,
}

/// Seconds the host's hook timeout is set above `--wait`: twice the margin the hook
/// keeps before it (`hosts::WAIT_MARGIN_SECS`).
const WAIT_HEADROOM_SECS: u64 = 2 * crate::hosts::WAIT_MARGIN_SECS;

#[derive(Debug, clap::Args)]
pub struct UninstallArgs {
    #[command(flatten)]
    pub target: Target,
}

/// Which host's file `install` writes and `uninstall` restores, and how.
#[derive(Debug, clap::Args)]
pub struct Target {
    /// The agent host.
    #[arg(value_enum)]
    pub host: Host,
    /// This project's file only (Claude Code: `DIR/.claude/settings.local.json`; Gemini
    /// CLI: `DIR/.gemini/settings.json`; Codex CLI: `DIR/.codex/config.toml`; OpenCode:
    /// `DIR/.opencode/plugin/khaelor-perm.js`; Qwen Code: `DIR/.qwen/settings.json`;
    /// GitHub Copilot CLI: `DIR/.github/hooks/khaelor-perm.json`; Factory Droid:
    /// `DIR/.factory/settings.json`; Cline CLI: `DIR/.cline/plugins/khaelor-perm.js`).
    #[arg(long, value_name = "DIR", conflicts_with = "user")]
    pub project: Option<PathBuf>,
    /// The user's file, for every project (the default: `~/.claude/settings.json`,
    /// `~/.gemini/settings.json`, `$CODEX_HOME/config.toml`,
    /// `~/.config/opencode/plugin/khaelor-perm.js`, `$QWEN_HOME/settings.json`,
    /// `$COPILOT_HOME/hooks/khaelor-perm.json`, `~/.factory/settings.json`,
    /// `~/.cline/plugins/khaelor-perm.js`).
    #[arg(long)]
    pub user: bool,
    /// Print what would change; write nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Where backups go [default: as `serve`].
    #[arg(long, env = "KHAELOR_PERM_STATE_DIR", value_name = "DIR")]
    pub state_dir: Option<PathBuf>,
}

#[derive(Debug, clap::Args)]
#[command(
    after_help = "Exit status: 0 every check holds, 1 a check failed (each says how to fix it)."
)]
pub struct DoctorArgs {
    /// The host to check.
    #[arg(long, value_enum, default_value = "claude")]
    pub host: Host,
    /// The project to check [default: the current directory].
    #[arg(long, value_name = "DIR")]
    pub root: Option<PathBuf>,
    /// The state directory the hook writes [default: as `serve`].
    #[arg(long, env = "KHAELOR_PERM_STATE_DIR", value_name = "DIR")]
    pub state_dir: Option<PathBuf>,
}

fn home() -> Result<PathBuf, String> {
    std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from)
        .ok_or_else(|| "`HOME` is not set".to_string())
}

fn absolute(dir: &Path) -> Result<PathBuf, String> {
    std::fs::canonicalize(dir).map_err(|e| format!("`{}`: {e}", dir.display()))
}

fn fail(msg: &str) -> ExitCode {
    eprintln!("error: {}", terminal_safe(msg));
    ExitCode::from(2)
}

/// The settings file of `host` at the chosen level. Its directory is resolved when it
/// exists: Codex names its trust of a hook by the resolved path of the hook's file.
fn target(host: Host, project: Option<&Path>) -> Result<PathBuf, String> {
    let project = project.map(absolute).transpose()?;
    let file =
        wiring::settings_file(host, project.as_deref(), &home()?).map_err(|e| e.to_string())?;
    Ok(
        match (
            file.parent().and_then(|d| d.canonicalize().ok()),
            file.file_name(),
        ) {
            (Some(dir), Some(name)) => dir.join(name),
            _ => file,
        },
    )
}

/// The file's text, `""` when it does not exist; refuses what is not a regular file.
fn read_text(file: &Path) -> Result<Option<String>, String> {
    crate::policy::config::read_config_text(file).map_err(|e| format!("`{}`: {e}", file.display()))
}

/// Writes `text` (or removes the file for `None`), keeping the previous bytes as a
/// backup in the state directory.
fn write(
    file: &Path,
    before: Option<&str>,
    text: Option<&str>,
    state: Option<&Path>,
) -> Result<(), String> {
    if let (Some(old), Some(state)) = (before, state) {
        let dir = state.join("install-backups");
        std::fs::create_dir_all(&dir).map_err(|e| format!("`{}`: {e}", dir.display()))?;
        let stamp = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or_default();
        let name: String = file
            .display()
            .to_string()
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '.' {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        let backup = dir.join(format!("{name}.{stamp}"));
        std::fs::write(&backup, old).map_err(|e| format!("`{}`: {e}", backup.display()))?;
    }
    match text {
        Some(t) => {
            let dir = file
                .parent()
                .ok_or_else(|| format!("`{}` has no directory", file.display()))?;
            std::fs::create_dir_all(dir).map_err(|e| format!("`{}`: {e}", dir.display()))?;
            crate::session::grants::blocking_write_atomic(file, dir, t).map_err(|e| e.to_string())
        }
        None => match std::fs::remove_file(file) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(format!("`{}`: {e}", file.display())),
        },
    }
}

fn state_dir(given: Option<&Path>) -> Option<PathBuf> {
    given
        .map(Path::to_path_buf)
        .or_else(super::serve::default_state_dir)
}

pub fn install(args: InstallArgs) -> ExitCode {
    match blocking_install(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => fail(&e),
    }
}

fn blocking_install(args: &InstallArgs) -> Result<(), String> {
    let file = target(args.target.host, args.target.project.as_deref())?;
    let bin = std::env::current_exe().map_err(|e| format!("cannot find this binary: {e}"))?;
    let mut flags: Vec<String> = Vec::new();
    if args.non_interactive {
        flags.push("--non-interactive".to_string());
    }
    if args.interactive {
        flags.push("--interactive".to_string());
    }
    if let Some(url) = &args.url {
        flags.extend(["--url".to_string(), url.clone()]);
    }
    if let Some(tf) = &args.token_file {
        flags.extend([
            "--token-file".to_string(),
            absolute(tf)?.display().to_string(),
        ]);
    }
    // Cline CLI gives a plugin hook 3 s, which nothing in its settings raises: a hook
    // waiting for a person would be cut off and its call blocked.
    if args.target.host == Host::Cline && args.wait.is_some() {
        return Err("`install cline --wait` cannot work: Cline CLI gives our plugin 3 s to answer, so a hook waiting for a person is cut off (and its call blocked); install without `--wait`, and approve asks in Cline's own prompt (`--interactive`)".to_string());
    }
    // The host's timeout for the pre-tool hook, above the wait (OpenCode runs the
    // plugin in process, with no limit to raise).
    let host_timeout = args
        .wait
        .filter(|_| args.target.host != Host::Opencode)
        .map(|w| w + WAIT_HEADROOM_SECS);
    if let Some(w) = args.wait {
        flags.extend(["--wait".to_string(), w.to_string()]);
    }
    if let Some(t) = host_timeout {
        flags.extend(["--host-timeout".to_string(), t.to_string()]);
    }
    let command = wiring::hook_command(&bin, args.target.host, &flags);
    let before = read_text(&file)?;
    let shown = file.display().to_string();
    let edit = match args.target.host {
        // The plugin picks `--interactive` or `--non-interactive` itself
        // (`KHAELOR_PERM_INTERACTIVE`); non-interactive is its default.
        Host::Opencode => wiring::opencode::FILE.install(
            &shown,
            before.as_deref().unwrap_or(""),
            &bin.display().to_string(),
            &flags
                .iter()
                .filter(|f| *f != "--non-interactive" && *f != "--interactive")
                .cloned()
                .collect::<Vec<_>>(),
        ),
        // The plugin passes every flag on, `--interactive` included.
        Host::Cline => wiring::cline::FILE.install(
            &shown,
            before.as_deref().unwrap_or(""),
            &bin.display().to_string(),
            &flags,
        ),
        host => wiring::install_timed(
            host,
            &shown,
            before.as_deref().unwrap_or(""),
            &command,
            host_timeout,
        ),
    }
    .map_err(|e| e.to_string())?;
    let mut out = String::new();
    if edit.changes.is_empty() {
        out.push_str(&format!("{shown}: already wired, nothing changed\n"));
    } else {
        for c in &edit.changes {
            out.push_str(&format!("{shown}: {c}\n"));
        }
        if args.target.dry_run {
            out.push_str("dry run: nothing was written\n");
        } else {
            write(
                &file,
                before.as_deref(),
                edit.text.as_deref(),
                state_dir(args.target.state_dir.as_deref()).as_deref(),
            )?;
        }
    }
    out.push_str(&next_steps(args.target.host, args.target.project.is_some()));
    out.push_str(&format!(
        "next: `khaelor-perm doctor --host {}` checks the wiring and a live decision\n",
        args.target.host
    ));
    print_out(&terminal_safe(&out));
    Ok(())
}

/// What the host must still do before the hook runs.
fn next_steps(host: Host, project: bool) -> String {
    match host {
        Host::Codex => {
            let mut s = String::from(
                "next: Codex runs a new or changed hook only once you have reviewed it: start `codex` and answer \"Trust all and continue\" when it says \"Hooks need review\" (or type `/hooks`, and trust the two khaelor-perm hooks, PreToolUse and PostToolUse); until then Codex skips them without a word\n",
            );
            if project {
                s.push_str(
                    "next: Codex reads a project's `.codex/config.toml` only in a project it trusts (it asks when you first start `codex` there)\n",
                );
            }
            s.push_str(
                "next: `codex exec` has nobody to answer a prompt: install with `--non-interactive` for it, so an ask is a deny\n",
            );
            s
        }
        Host::Opencode => "next: OpenCode loads the plugin when it starts; nobody answers an ask in `opencode run`, so the plugin denies it unless KHAELOR_PERM_INTERACTIVE=1 (then OpenCode's own `permission` setting decides)\n".to_string(),
        Host::Qwen => {
            let mut s = String::from(
                "next: Qwen Code asks its own approval before the hook runs: a headless `qwen -p` in the `default` approval mode refuses shell and edit calls before khaelor-perm sees them; with `--approval-mode yolo` (or `auto-edit`) the hook is what decides, and an ask is a deny there (install with `--non-interactive` to get khaelor-perm's own message for it)\n",
            );
            if project {
                s.push_str(
                    "next: with Qwen's folder trust on (`security.folderTrust.enabled`), it reads a project's `.qwen/settings.json` only once you trust the folder\n",
                );
            }
            s
        }
        Host::Copilot => {
            let mut s = String::from(
                "next: GitHub Copilot CLI reads the hook file when a session starts; khaelor-perm's allow runs a call without Copilot's own prompt, its deny blocks it, and its ask is Copilot's prompt in the TUI and a deny in `copilot -p` (install with `--non-interactive` to get khaelor-perm's own message for it)\n",
            );
            if project {
                s.push_str(
                    "next: Copilot runs a repository's `.github/hooks/` only in a folder you trusted (it asks when you first start `copilot` there)\n",
                );
            }
            s
        }
        Host::Droid => "next: Factory Droid reads its settings when a session starts; khaelor-perm's allow runs a call even past Droid's autonomy level and its deny blocks it, but an ask in `droid exec` goes to Droid's own autonomy check (which weighs the risk the model declared), so the hook denies asks unless installed with `--interactive`\n".to_string(),
        Host::Cline => {
            let mut s = String::from(
                "next: Cline CLI loads the plugin when a session starts; khaelor-perm's allow leaves the call to Cline's own approval setting, its deny skips the call (the model reads why), and its ask is a deny unless installed with `--interactive` (then Cline's approval prompt asks in the TUI, and a headless `cline \"task\"` refuses the call)\n",
            );
            if project {
                s.push_str(
                    "next: Cline loads a project's `.cline/plugins/` without asking: the project's plugins run with yours\n",
                );
            }
            s
        }
        Host::Claude | Host::Gemini => String::new(),
    }
}

pub fn uninstall(args: UninstallArgs) -> ExitCode {
    let run = || -> Result<(), String> {
        let file = target(args.target.host, args.target.project.as_deref())?;
        let shown = file.display().to_string();
        let Some(before) = read_text(&file)? else {
            print_out(&terminal_safe(&format!(
                "{shown}: not there, nothing to remove\n"
            )));
            return Ok(());
        };
        let edit =
            wiring::uninstall(args.target.host, &shown, &before).map_err(|e| e.to_string())?;
        let mut out = String::new();
        if edit.changes.is_empty() {
            out.push_str(&format!("{shown}: no khaelor-perm hook, nothing changed\n"));
        } else {
            for c in &edit.changes {
                out.push_str(&format!("{shown}: {c}\n"));
            }
            if edit.text.is_none() {
                out.push_str(&format!("{shown}: nothing else was in it, removed\n"));
            }
            if args.target.dry_run {
                out.push_str("dry run: nothing was written\n");
            } else {
                write(
                    &file,
                    Some(&before),
                    edit.text.as_deref(),
                    state_dir(args.target.state_dir.as_deref()).as_deref(),
                )?;
            }
        }
        print_out(&terminal_safe(&out));
        Ok(())
    };
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => fail(&e),
    }
}

/// One doctor check: what, whether it holds, and how to fix it when not.
struct Check {
    name: String,
    ok: bool,
    detail: String,
}

pub fn doctor(args: DoctorArgs) -> ExitCode {
    let checks = run_checks(&args);
    let mut out = String::new();
    for c in &checks {
        out.push_str(&format!(
            "{} {}: {}\n",
            if c.ok { "ok  " } else { "FAIL" },
            c.name,
            c.detail
        ));
    }
    let failed = checks.iter().filter(|c| !c.ok).count();
    if failed == 0 {
        out.push_str("every check holds\n");
    } else {
        out.push_str(&format!("{failed} check(s) failed\n"));
    }
    print_out(&terminal_safe(&out));
    if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

fn run_checks(args: &DoctorArgs) -> Vec<Check> {
    let host = args.host;
    let mut checks = Vec::new();
    let mut check = |name: &str, r: Result<String, String>| {
        let (ok, detail) = match r {
            Ok(d) => (true, d),
            Err(d) => (false, d),
        };
        checks.push(Check {
            name: name.to_string(),
            ok,
            detail,
        });
    };
    // The host's binary and version.
    let (_, bin_name, pinned) = PINNED
        .iter()
        .find(|(h, _, _)| *h == host)
        .copied()
        .unwrap_or((host, host.as_str(), ""));
    check("host binary", host_version(bin_name, pinned));
    // The wiring: present, pointing at this binary.
    let root = match &args.root {
        Some(r) => absolute(r),
        None => std::env::current_dir().map_err(|e| e.to_string()),
    };
    let root = match root {
        Ok(r) => r,
        Err(e) => {
            check("project", Err(format!("{e}; pass `--root DIR`")));
            return checks;
        }
    };
    let wired = wired_command(host, &root);
    let command = wired.as_ref().ok().cloned();
    check("hook wiring", wired.map(|c| format!("`{c}`")));
    // Codex runs a hook only once the person has trusted it: ask Codex itself.
    if host == Host::Codex && command.is_some() {
        check("codex hook trust", codex_hook_trust(bin_name, &root));
    }
    // Qwen Code skips every hook when any settings file it reads says
    // `disableAllHooks`, a project's own file included.
    if host == Host::Qwen {
        check("qwen hooks enabled", qwen_hooks_enabled(&root));
    }
    // The project config's trust state.
    check(
        "project config",
        project_trust(&root, args.state_dir.as_deref()),
    );
    // The state directory.
    check("state directory", state_writable(args.state_dir.as_deref()));
    // A live decision through the wired hook: a benign allow and a floor deny.
    if let Some(cmd) = command {
        check("live allow", live(&cmd, host, &root, "git status", "allow"));
        check(
            "live floor deny",
            live(&cmd, host, &root, "rm -rf /", "deny"),
        );
    } else {
        check(
            "live decision",
            Err(format!(
                "no hook to run; run `khaelor-perm install {host}` first"
            )),
        );
    }
    checks
}

fn host_version(bin: &str, pinned: &str) -> Result<String, String> {
    let out = Command::new(bin)
        .arg("--version")
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run `{bin}`: {e}; install the host or put it on PATH"))?;
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    let version = text
        .split_whitespace()
        .find(|w| w.chars().next().is_some_and(|c| c.is_ascii_digit()))
        .unwrap_or_default()
        // Copilot CLI ends its sentence with the version: `… CLI 1.0.102.`
        .trim_end_matches('.')
        .to_string();
    if version == pinned {
        Ok(format!("`{bin}` {version}, the version the tests pin"))
    } else {
        Err(format!(
            "`{bin}` reports `{}`; khaelor-perm is tested with {pinned}: install that version (`npm install -g` the host at {pinned}) or check the hook contract of yours",
            text.trim()
        ))
    }
}

/// The hook command wired for `host` (user file or project file), if it runs this
/// binary.
fn wired_command(host: Host, root: &Path) -> Result<String, String> {
    let home = home()?;
    let this = std::env::current_exe()
        .ok()
        .and_then(|p| std::fs::canonicalize(p).ok());
    let mut found = Vec::new();
    for project in [Some(root), None] {
        let Ok(file) = wiring::settings_file(host, project, &home) else {
            return Err(format!(
                "`install {host}` is not supported yet: wire it by hand (README)"
            ));
        };
        let Ok(Some(text)) = read_text(&file) else {
            continue;
        };
        let list = wiring::installed(host, &file.display().to_string(), &text)
            .map_err(|e| e.to_string())?;
        found.extend(list.into_iter().map(|(_, c)| (file.clone(), c)));
    }
    // Claude also reads the project's shared file.
    if host == Host::Claude
        && let Ok(Some(text)) = read_text(&root.join(".claude/settings.json"))
        && let Ok(list) = wiring::installed(host, "settings.json", &text)
    {
        found.extend(
            list.into_iter()
                .map(|(_, c)| (root.join(".claude/settings.json"), c)),
        );
    }
    let Some((file, cmd)) = found.first().cloned() else {
        return Err(format!(
            "no khaelor-perm hook is wired; run `khaelor-perm install {host}`"
        ));
    };
    let program = std::fs::canonicalize(wiring::command_program(&cmd)).ok();
    if program.is_some() && program == this {
        Ok(cmd)
    } else {
        Err(format!(
            "the hook in {} runs `{}`, not this binary; run `khaelor-perm install {host}` again",
            file.display(),
            wiring::command_program(&cmd)
        ))
    }
}

/// Longest `codex app-server` may take to list its hooks.
const CODEX_LIST_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(20);

/// Whether Codex trusts every khaelor-perm hook it sees for `root`, asked through its
/// own `codex app-server` (`hooks/list`, which reports each hook's `trustStatus` as
/// Codex computes it: `trusted`, `untrusted`, `modified` or `managed`). Nothing is
/// written; the hash is Codex's, never recomputed here.
fn codex_hook_trust(bin: &str, root: &Path) -> Result<String, String> {
    use std::io::{BufRead, Write};
    let fix = "start `codex`, type `/hooks`, and trust the khaelor-perm hooks";
    let mut child = Command::new(bin)
        .arg("app-server")
        .current_dir(root)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("cannot run `{bin} app-server`: {e}"))?;
    let requests = [
        serde_json::json!({ "id": 1, "method": "initialize",
            "params": { "clientInfo": { "name": "khaelor-perm-doctor", "version": env!("CARGO_PKG_VERSION") } } }),
        serde_json::json!({ "method": "initialized" }),
        serde_json::json!({ "id": 2, "method": "hooks/list", "params": { "cwds": [root] } }),
    ];
    let mut stdin = child.stdin.take();
    if let Some(w) = stdin.as_mut() {
        for r in &requests {
            let _ = writeln!(w, "{r}");
        }
        let _ = w.flush();
    }
    let (tx, rx) = std::sync::mpsc::channel();
    if let Some(out) = child.stdout.take() {
        std::thread::spawn(move || {
            for line in std::io::BufReader::new(out).lines() {
                let Ok(line) = line else { break };
                let Ok(v) = serde_json::from_str::<serde_json::Value>(&line) else {
                    continue;
                };
                if v.get("id").and_then(serde_json::Value::as_i64) == Some(2) {
                    let _ = tx.send(v);
                    break;
                }
            }
        });
    }
    let answer = rx.recv_timeout(CODEX_LIST_TIMEOUT);
    drop(stdin);
    let _ = child.kill();
    let _ = child.wait();
    let answer = answer
        .map_err(|_| format!("`{bin} app-server` did not list its hooks; check by hand: {fix}"))?;
    let hooks: Vec<&serde_json::Value> = answer
        .pointer("/result/data")
        .and_then(serde_json::Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|d| d.get("hooks").and_then(serde_json::Value::as_array))
        .flatten()
        .filter(|h| {
            h.get("command")
                .and_then(serde_json::Value::as_str)
                .is_some_and(|c| wiring::is_ours(c, Host::Codex))
        })
        .collect();
    if hooks.is_empty() {
        return Err(format!(
            "Codex lists no khaelor-perm hook for {} (a project's `.codex/config.toml` counts only in a project Codex trusts); run `khaelor-perm install codex`",
            root.display()
        ));
    }
    let not_trusted: Vec<String> = hooks
        .iter()
        .filter_map(|h| {
            let status = h
                .get("trustStatus")
                .and_then(serde_json::Value::as_str)
                .unwrap_or("unknown");
            (!matches!(status, "trusted" | "managed")).then(|| {
                format!(
                    "{} is {status}",
                    h.get("eventName")
                        .and_then(serde_json::Value::as_str)
                        .unwrap_or("a hook")
                )
            })
        })
        .collect();
    if not_trusted.is_empty() {
        Ok(format!(
            "Codex trusts all {} khaelor-perm hook(s)",
            hooks.len()
        ))
    } else {
        Err(format!(
            "Codex skips untrusted hooks without a word: {}; {fix}",
            not_trusted.join(", ")
        ))
    }
}

/// Whether a Qwen Code settings file for `root` turns every hook off: the user's
/// (`$QWEN_HOME` or `~/.qwen`) and the project's `.qwen/settings.json`. Qwen 0.24.4
/// honours `disableAllHooks: true` from the project's file too (seen in a run: the
/// user's deny hook never ran), so a repository can ship it.
fn qwen_hooks_enabled(root: &Path) -> Result<String, String> {
    let home = home()?;
    let mut off = Vec::new();
    for project in [Some(root), None] {
        let Ok(file) = wiring::settings_file(Host::Qwen, project, &home) else {
            continue;
        };
        let Ok(Some(text)) = read_text(&file) else {
            continue;
        };
        let value: Option<serde_json::Value> =
            jsonc_parser::parse_to_serde_value(&text, &crate::policy::config::jsonc_options())
                .map_err(|e| format!("`{}`: {e}; Qwen may not read it either", file.display()))?;
        if value
            .as_ref()
            .and_then(|v| v.get("disableAllHooks"))
            .and_then(serde_json::Value::as_bool)
            == Some(true)
        {
            off.push(file.display().to_string());
        }
    }
    if off.is_empty() {
        Ok("no settings file turns hooks off".to_string())
    } else {
        Err(format!(
            "{} sets `disableAllHooks: true`, so Qwen Code runs no hook at all, khaelor-perm's included; remove it (and turn on `security.folderTrust`, so a repository's settings load only once you trust it)",
            off.join(", ")
        ))
    }
}

fn project_trust(root: &Path, state: Option<&Path>) -> Result<String, String> {
    let file = crate::policy::config::project_config_path(root);
    if !file.exists() {
        return Ok("no project config".to_string());
    }
    let store = state_dir(state).map(|s| crate::policy::trust::TrustStore::new(&s));
    let policy = crate::policy::config::load_policy_trusted(
        root,
        Path::new("/nonexistent"),
        None,
        store.as_ref(),
    );
    if policy.ignored().is_empty() {
        Ok(format!("{} applies in full", file.display()))
    } else {
        Err(format!(
            "{}'s allow rules are ignored until you review it and run `khaelor-perm trust {}`",
            file.display(),
            root.display()
        ))
    }
}

fn state_writable(state: Option<&Path>) -> Result<String, String> {
    let dir = state_dir(state).ok_or("no state directory: set KHAELOR_PERM_STATE_DIR or HOME")?;
    std::fs::create_dir_all(&dir)
        .map_err(|e| format!("`{}`: {e}; make it writable", dir.display()))?;
    let probe = dir.join(format!(".doctor-{}", std::process::id()));
    std::fs::write(&probe, b"ok")
        .map_err(|e| format!("`{}`: {e}; make it writable", dir.display()))?;
    let _ = std::fs::remove_file(&probe);
    Ok(format!("{} is writable", dir.display()))
}

/// Runs this binary's hook, with the interactivity the wired command chose, on a shell
/// call and checks the host-visible answer. The wired text itself is never run: a
/// settings file the repository ships could append anything to it.
fn live(command: &str, host: Host, root: &Path, shell: &str, want: &str) -> Result<String, String> {
    let this = std::env::current_exe().map_err(|e| format!("cannot find this binary: {e}"))?;
    let mut flags: Vec<&str> = command
        .split_whitespace()
        .filter(|w| matches!(*w, "--interactive" | "--non-interactive"))
        .collect();
    // Codex hears an allow and an ask alike (nothing printed): without a human, an
    // ask is a deny, so nothing printed means allowed.
    if host == Host::Codex {
        flags = vec!["--non-interactive"];
    }
    let input = match host {
        Host::Claude => serde_json::json!({
            "session_id": "khaelor-perm-doctor", "cwd": root, "hook_event_name": "PreToolUse",
            "permission_mode": "default", "tool_name": "Bash", "tool_input": { "command": shell },
        }),
        Host::Droid => serde_json::json!({
            "session_id": "khaelor-perm-doctor", "cwd": root, "hook_event_name": "PreToolUse",
            "permission_mode": "auto-low", "tool_name": "Execute",
            "tool_input": { "command": shell, "summary": "doctor", "riskLevel": "low", "riskLevelReason": "doctor" },
        }),
        Host::Qwen => serde_json::json!({
            "session_id": "khaelor-perm-doctor", "cwd": root, "hook_event_name": "PreToolUse",
            "permission_mode": "default", "tool_name": "run_shell_command",
            "tool_input": { "command": shell }, "tool_use_id": "toolu_doctor",
        }),
        Host::Codex => serde_json::json!({
            "session_id": "khaelor-perm-doctor", "cwd": root, "hook_event_name": "PreToolUse",
            "tool_name": "exec_command", "tool_input": { "cmd": shell },
        }),
        Host::Opencode => serde_json::json!({
            "tool": "bash", "sessionID": "khaelor-perm-doctor", "callID": "doctor",
            "args": { "command": shell }, "cwd": root, "root": root,
        }),
        Host::Gemini => serde_json::json!({
            "session_id": "khaelor-perm-doctor", "cwd": root, "hook_event_name": "BeforeTool",
            "tool_name": "run_shell_command", "tool_input": { "command": shell },
        }),
        Host::Cline => serde_json::json!({
            "hookName": "tool_call", "taskId": "khaelor-perm-doctor", "cwd": root,
            "workspaceRoots": [root],
            "tool_call": { "id": "doctor", "name": "run_commands", "input": { "commands": [shell] } },
        }),
        Host::Copilot => serde_json::json!({
            "sessionId": "khaelor-perm-doctor", "timestamp": 0, "cwd": root,
            "toolName": "bash", "toolArgs": { "command": shell, "description": "doctor" },
        }),
    };
    let mut child = Command::new(this)
        .arg("hook")
        .arg(host.as_str())
        .args(flags)
        .current_dir(root)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("cannot run the hook: {e}"))?;
    if let Some(mut stdin) = child.stdin.take() {
        use std::io::Write;
        let _ = stdin.write_all(input.to_string().as_bytes());
    }
    let out = child
        .wait_with_output()
        .map_err(|e| format!("the hook failed: {e}"))?;
    // Codex hears only a deny: an allow (or an ask it leaves to its own approval) is
    // nothing on stdout.
    if host == Host::Codex && out.stdout.iter().all(u8::is_ascii_whitespace) {
        return if want == "allow" {
            Ok(format!("`{shell}` -> allow (nothing printed)"))
        } else {
            Err(format!(
                "`{shell}` -> not denied, expected {want}; check the hook's stderr by running it by hand"
            ))
        };
    }
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).map_err(|_| {
        format!(
            "the hook printed no JSON: {}",
            String::from_utf8_lossy(&out.stdout)
        )
    })?;
    let got = v
        .pointer("/hookSpecificOutput/permissionDecision")
        .and_then(serde_json::Value::as_str)
        .or_else(|| v.get("decision").and_then(serde_json::Value::as_str))
        .or_else(|| {
            v.get("permissionDecision")
                .and_then(serde_json::Value::as_str)
        })
        .unwrap_or("none")
        .to_string();
    if got == want {
        Ok(format!("`{shell}` -> {got}"))
    } else {
        Err(format!(
            "`{shell}` -> {got}, expected {want}; check the hook's stderr by running it by hand"
        ))
    }
}
