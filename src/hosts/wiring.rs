//! Wiring `khaelor-perm hook <host>` into a host's own settings file, and taking it out
//! again: pure edits of the file's text (JSON with comments, edited through
//! `jsonc-parser`'s CST, so comments, key order and layout stay), for `install`,
//! `uninstall` and `doctor` (`cli/install.rs`, which does the I/O).
//!
//! What is ours: a hook entry whose command runs a program named `khaelor-perm` with
//! `hook <host>`. Install adds one group per event (`{"matcher": …, "hooks": [{"type":
//! "command", "command": …}]}`) or changes nothing when exactly that command is there;
//! uninstall removes our entries, then a group, event list or `hooks` object that only
//! they made non-empty, so a file install created or changed reads as before.
//!
//! Hosts: Claude Code, Qwen Code and Factory Droid (`hooks.PreToolUse`, matcher `*`)
//! and Gemini CLI
//! (`hooks.BeforeTool`, matcher `.*`) here; Codex CLI's `config.toml` (TOML, and the
//! review Codex requires before it runs a new hook) in `codex`; OpenCode's plugin file
//! in `opencode`; GitHub Copilot CLI's hook file of our own in `copilot`.

pub mod cline;
pub mod codex;
pub mod copilot;
pub mod opencode;
pub mod plugin_file;

use std::path::{Path, PathBuf};

use jsonc_parser::cst::{CstInputValue, CstObject, CstRootNode};

use super::Host;

/// Why a settings file cannot be edited (nothing is written).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WiringError {
    #[error("{file}:{line}:{column}: {message}; fix the file by hand, nothing was changed")]
    Malformed {
        file: String,
        line: usize,
        column: usize,
        message: String,
    },
    #[error("{file}: {message}; fix the file by hand, nothing was changed")]
    Shape { file: String, message: String },
    #[error("`install {0}` is not supported yet: wire the hook by hand (see the README)")]
    Unsupported(Host),
}

/// Where `install` writes for `host`: the user's file, or the project's.
pub fn settings_file(
    host: Host,
    project: Option<&Path>,
    home: &Path,
) -> Result<PathBuf, WiringError> {
    match (host, project) {
        // The project's personal file: the hook command names this machine's binary.
        (Host::Claude, Some(p)) => Ok(p.join(".claude").join("settings.local.json")),
        (Host::Claude, None) => Ok(home.join(".claude").join("settings.json")),
        (Host::Gemini, Some(p)) => Ok(p.join(".gemini").join("settings.json")),
        (Host::Gemini, None) => Ok(home.join(".gemini").join("settings.json")),
        // Codex loads a project's `.codex/` layer only once it trusts the project.
        (Host::Codex, Some(p)) => Ok(p.join(".codex").join("config.toml")),
        (Host::Codex, None) => Ok(std::env::var_os("CODEX_HOME")
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
            .unwrap_or_else(|| home.join(".codex"))
            .join("config.toml")),
        (Host::Opencode, Some(p)) => Ok(p.join(".opencode").join("plugin").join(PLUGIN_FILE)),
        (Host::Opencode, None) => Ok(std::env::var_os("XDG_CONFIG_HOME")
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
            .unwrap_or_else(|| home.join(".config"))
            .join("opencode")
            .join("plugin")
            .join(PLUGIN_FILE)),
        // Qwen Code loads a project's `.qwen/settings.json` only in a folder it trusts
        // when its folder trust is on (it is off by default). `QWEN_HOME` moves the
        // user's directory.
        (Host::Qwen, Some(p)) => Ok(p.join(".qwen").join("settings.json")),
        (Host::Qwen, None) => Ok(std::env::var_os("QWEN_HOME")
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
            .unwrap_or_else(|| home.join(".qwen"))
            .join("settings.json")),
        // Copilot reads a repository's `.github/hooks/` only in a folder the person
        // trusted; `COPILOT_HOME` moves the user's directory.
        (Host::Copilot, Some(p)) => Ok(p.join(".github").join("hooks").join(copilot::HOOK_FILE)),
        // Droid runs a project's `.factory/settings.json` hooks with no trust prompt.
        (Host::Droid, Some(p)) => Ok(p.join(".factory").join("settings.json")),
        (Host::Droid, None) => Ok(home.join(".factory").join("settings.json")),
        // Cline loads a project's `.cline/plugins/` with no trust prompt; `CLINE_DIR`
        // moves the user's `~/.cline`.
        (Host::Cline, Some(p)) => Ok(p.join(".cline").join("plugins").join(PLUGIN_FILE)),
        (Host::Cline, None) => Ok(std::env::var_os("CLINE_DIR")
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
            .unwrap_or_else(|| home.join(".cline"))
            .join("plugins")
            .join(PLUGIN_FILE)),
        (Host::Copilot, None) => Ok(std::env::var_os("COPILOT_HOME")
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
            .unwrap_or_else(|| home.join(".copilot"))
            .join("hooks")
            .join(copilot::HOOK_FILE)),
    }
}

/// The name of our OpenCode and Cline CLI plugin files.
pub const PLUGIN_FILE: &str = "khaelor-perm.js";

/// The hook events `install` wires for `host`, each with the matcher for every tool.
pub fn events(host: Host) -> &'static [(&'static str, &'static str)] {
    match host {
        // After the call: what ran (`PostToolUse`, `PostToolUseFailure`), what Claude
        // refused (`PermissionDenied`), and the end of the turn (`Stop`: a call still
        // waiting for the person never ran), so the log says who approved what.
        Host::Claude => &[
            ("PreToolUse", "*"),
            ("PostToolUse", "*"),
            ("PostToolUseFailure", "*"),
            ("PermissionDenied", "*"),
            ("Stop", ""),
        ],
        // After the call: what ran (`AfterTool`), so the log says who approved it.
        Host::Gemini => &[("BeforeTool", ".*"), ("AfterTool", ".*")],
        // Codex: `codex::EVENTS` (TOML groups without a matcher); OpenCode: the plugin.
        Host::Codex => &[("PreToolUse", ""), ("PostToolUse", "")],
        Host::Opencode | Host::Cline => &[],
        // After the call: what ran, failed or not (`PostToolUse`, `PostToolUseFailure`,
        // both with the `tool_use_id` of the `PreToolUse`), so the log says who
        // approved what.
        Host::Qwen => &[
            ("PreToolUse", "*"),
            ("PostToolUse", "*"),
            ("PostToolUseFailure", "*"),
        ],
        // Copilot: `copilot::EVENTS`, in a file of our own.
        Host::Copilot => &[],
        // After the call: what ran (`PostToolUse`, named by tool and input).
        Host::Droid => &[("PreToolUse", "*"), ("PostToolUse", "*")],
    }
}

/// The hook command: this binary, `hook <host>`, and the flags given.
pub fn hook_command(bin: &Path, host: Host, flags: &[String]) -> String {
    let mut words = vec![shell_quote(&bin.display().to_string()), "hook".to_string()];
    words.push(host.as_str().to_string());
    words.extend(flags.iter().map(|f| shell_quote(f)));
    words.join(" ")
}

/// A word as `sh` reads it back: bare when it is only safe characters, else in single
/// quotes.
fn shell_quote(s: &str) -> String {
    let safe = !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:@%+,".contains(c));
    if safe {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

/// Whether `command` is a `khaelor-perm hook <host>` command (ours, whatever binary
/// path and flags).
pub fn is_ours(command: &str, host: Host) -> bool {
    let prog = command_program(command);
    let c = command.trim_start();
    let rest = if c.starts_with('\'') {
        c.get(prog.len() + 2..).unwrap_or_default()
    } else {
        c.get(prog.len()..).unwrap_or_default()
    };
    let mut words = rest.split_whitespace();
    let named = Path::new(&prog)
        .file_name()
        .is_some_and(|n| n == "khaelor-perm");
    named && words.next() == Some("hook") && words.next() == Some(host.as_str())
}

/// The program of an installed hook command (its first word, unquoted).
pub fn command_program(command: &str) -> String {
    let c = command.trim_start();
    if let Some(rest) = c.strip_prefix('\'') {
        rest.split('\'').next().unwrap_or_default().to_string()
    } else {
        c.split_whitespace().next().unwrap_or_default().to_string()
    }
}

/// What an edit did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Edit {
    /// The new text (`None`: the file should not exist, uninstall emptied what install
    /// created).
    pub text: Option<String>,
    /// One line per change, for the person.
    pub changes: Vec<String>,
}

fn parse(file: &str, text: &str) -> Result<CstRootNode, WiringError> {
    let source = if text.trim().is_empty() { "{}\n" } else { text };
    // The same checks as the loader: an object at the top, and the loader's dialect.
    let value: serde_json::Value =
        jsonc_parser::parse_to_serde_value(source, &crate::policy::config::jsonc_options())
            .map_err(|e| WiringError::Malformed {
                file: file.to_string(),
                line: e.line_display(),
                column: e.column_display(),
                message: crate::presentation::messages::lower_first(&e.kind().to_string()),
            })?;
    if !value.is_object() {
        return Err(shape(file, "the settings are not a JSON object"));
    }
    if let Some(h) = value.get("hooks")
        && !h.is_object()
    {
        return Err(shape(file, "`hooks` is not an object"));
    }
    CstRootNode::parse(source, &crate::policy::config::jsonc_options()).map_err(|e| {
        WiringError::Malformed {
            file: file.to_string(),
            line: e.line_display(),
            column: e.column_display(),
            message: crate::presentation::messages::lower_first(&e.kind().to_string()),
        }
    })
}

pub(crate) fn shape(file: &str, message: &str) -> WiringError {
    WiringError::Shape {
        file: file.to_string(),
        message: message.to_string(),
    }
}

/// The commands of our hook entries under `hooks.<event>`.
pub fn installed(host: Host, file: &str, text: &str) -> Result<Vec<(String, String)>, WiringError> {
    match host {
        Host::Codex => return codex::installed(file, text),
        Host::Opencode => return opencode::FILE.installed(file, text),
        Host::Cline => return cline::FILE.installed(file, text),
        Host::Copilot => return copilot::installed(file, text),
        Host::Claude | Host::Gemini | Host::Qwen | Host::Droid => {}
    }
    let root = parse(file, text)?;
    let mut out = Vec::new();
    let Some(hooks) = root.object_value().and_then(|o| o.object_value("hooks")) else {
        return Ok(out);
    };
    for (event, _) in events(host) {
        for (_, cmd) in our_entries(&hooks, event, host) {
            out.push((event.to_string(), cmd));
        }
    }
    Ok(out)
}

/// (group index, command) of our entries under `hooks.<event>`.
fn our_entries(hooks: &CstObject, event: &str, host: Host) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let Some(groups) = hooks.array_value(event) else {
        return out;
    };
    for (gi, g) in groups.elements().iter().enumerate() {
        let Some(inner) = g.as_object().and_then(|o| o.array_value("hooks")) else {
            continue;
        };
        for h in inner.elements() {
            let cmd = h
                .as_object()
                .and_then(|o| o.get("command"))
                .and_then(|p| p.value())
                .and_then(|v| v.as_string_lit())
                .and_then(|s| s.decoded_value().ok());
            if let Some(c) = cmd
                && is_ours(&c, host)
            {
                out.push((gi, c));
            }
        }
    }
    out
}

/// Adds our hook `command` for every event of `host` to the settings `text` (`""`
/// for a file that does not exist). Unchanged text when exactly this command is wired
/// already; an entry of ours with another command (another binary, other flags) is
/// replaced.
/// OpenCode has no command to wire: `opencode::FILE.install` writes its plugin.
pub fn install(host: Host, file: &str, text: &str, command: &str) -> Result<Edit, WiringError> {
    install_timed(host, file, text, command, None)
}

/// The value of a hook's `timeout` key for `secs` seconds, in `host`'s unit: seconds
/// for Claude Code, Codex, Qwen Code and Copilot CLI (`timeoutSec`), milliseconds for
/// Gemini CLI.
pub fn timeout_value(host: Host, secs: u64) -> u64 {
    match host {
        Host::Gemini => secs.saturating_mul(1000),
        Host::Claude
        | Host::Codex
        | Host::Qwen
        | Host::Opencode
        | Host::Copilot
        | Host::Droid
        | Host::Cline => secs,
    }
}

/// `install`, with the pre-tool hook (the first event) given a `timeout` of
/// `pre_tool_timeout` seconds, for a hook that waits for a person (`install --wait`):
/// the host would otherwise kill it at its own default (`hosts::default_hook_timeout`).
pub fn install_timed(
    host: Host,
    file: &str,
    text: &str,
    command: &str,
    pre_tool_timeout: Option<u64>,
) -> Result<Edit, WiringError> {
    match host {
        Host::Codex => return codex::install(file, text, command, pre_tool_timeout),
        Host::Opencode | Host::Cline => return Err(WiringError::Unsupported(host)),
        Host::Copilot => return copilot::install(file, text, command, pre_tool_timeout),
        Host::Claude | Host::Gemini | Host::Qwen | Host::Droid => {}
    }
    let root = parse(file, text)?;
    let top = root.object_value_or_set();
    let mut changes = Vec::new();
    for (i, (event, matcher)) in events(host).iter().enumerate() {
        let existing = top
            .object_value("hooks")
            .map(|h| our_entries(&h, event, host))
            .unwrap_or_default();
        if existing.len() == 1 && existing.iter().all(|(_, c)| c == command) {
            continue;
        }
        let mut handler = vec![
            (
                "type".to_string(),
                CstInputValue::String("command".to_string()),
            ),
            (
                "command".to_string(),
                CstInputValue::String(command.to_string()),
            ),
        ];
        if let Some(secs) = pre_tool_timeout.filter(|_| i == 0) {
            handler.push((
                "timeout".to_string(),
                CstInputValue::Number(timeout_value(host, secs).to_string()),
            ));
        }
        if !existing.is_empty() {
            remove_ours(&top, event, host);
            changes.push(format!("replaced the old hook in `hooks.{event}`"));
        }
        let hooks = top
            .object_value_or_create("hooks")
            .ok_or_else(|| shape(file, "`hooks` is not an object"))?;
        let groups = hooks
            .array_value_or_create(event)
            .ok_or_else(|| shape(file, &format!("`hooks.{event}` is not an array")))?;
        groups.ensure_multiline();
        groups.append(CstInputValue::Object(vec![
            (
                "matcher".to_string(),
                CstInputValue::String(matcher.to_string()),
            ),
            (
                "hooks".to_string(),
                CstInputValue::Array(vec![CstInputValue::Object(handler)]),
            ),
        ]));
        changes.push(format!("added `{command}` to `hooks.{event}`"));
    }
    if changes.is_empty() {
        return Ok(Edit {
            text: Some(text.to_string()),
            changes,
        });
    }
    let mut out = root.to_string();
    // A new file ends with a newline; an existing one keeps its own ending, so
    // uninstall gives back its exact bytes.
    if !out.ends_with('\n') && (text.trim().is_empty() || text.ends_with('\n')) {
        out.push('\n');
    }
    Ok(Edit {
        text: Some(out),
        changes,
    })
}

/// Removes our entries under `hooks.<event>`, and what only they filled.
fn remove_ours(top: &CstObject, event: &str, host: Host) -> usize {
    let Some(hooks) = top.object_value("hooks") else {
        return 0;
    };
    let Some(groups) = hooks.array_value(event) else {
        return 0;
    };
    let mut removed = 0;
    for g in groups.elements() {
        let Some(inner) = g.as_object().and_then(|o| o.array_value("hooks")) else {
            continue;
        };
        for h in inner.elements() {
            let ours = h
                .as_object()
                .and_then(|o| o.get("command"))
                .and_then(|p| p.value())
                .and_then(|v| v.as_string_lit())
                .and_then(|s| s.decoded_value().ok())
                .is_some_and(|c| is_ours(&c, host));
            if ours {
                h.remove();
                removed += 1;
            }
        }
        if inner.elements().is_empty() {
            g.remove();
        }
    }
    if groups.elements().is_empty()
        && let Some(p) = hooks.get(event)
    {
        p.remove();
    }
    if hooks.properties().is_empty()
        && let Some(p) = top.get("hooks")
    {
        p.remove();
    }
    removed
}

/// Takes our hooks out of the settings `text`. When nothing is left but an empty
/// object, the file is to be removed (`text: None`): install created it.
pub fn uninstall(host: Host, file: &str, text: &str) -> Result<Edit, WiringError> {
    match host {
        Host::Codex => return codex::uninstall(file, text),
        Host::Opencode => return opencode::FILE.uninstall(file, text),
        Host::Cline => return cline::FILE.uninstall(file, text),
        Host::Copilot => return copilot::uninstall(file, text),
        Host::Claude | Host::Gemini | Host::Qwen | Host::Droid => {}
    }
    if text.trim().is_empty() {
        return Ok(Edit {
            text: Some(text.to_string()),
            changes: Vec::new(),
        });
    }
    let root = parse(file, text)?;
    let Some(top) = root.object_value() else {
        return Ok(Edit {
            text: Some(text.to_string()),
            changes: Vec::new(),
        });
    };
    let mut changes = Vec::new();
    for (event, _) in events(host) {
        let n = remove_ours(&top, event, host);
        if n > 0 {
            changes.push(format!("removed {n} hook(s) from `hooks.{event}`"));
        }
    }
    if changes.is_empty() {
        return Ok(Edit {
            text: Some(text.to_string()),
            changes,
        });
    }
    let out = root.to_string();
    let empty = out
        .chars()
        .filter(|c| !c.is_whitespace())
        .collect::<String>()
        == "{}";
    Ok(Edit {
        text: (!empty).then_some(out),
        changes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const CMD: &str = "/usr/local/bin/khaelor-perm hook claude";

    #[test]
    fn a_waiting_hook_gets_a_pre_tool_timeout_in_the_hosts_unit() {
        let claude = install_timed(Host::Claude, "s.json", "", CMD, Some(130)).unwrap();
        let v: serde_json::Value = serde_json::from_str(claude.text.as_deref().unwrap()).unwrap();
        assert_eq!(v["hooks"]["PreToolUse"][0]["hooks"][0]["timeout"], 130);
        // Only the pre-tool hook waits.
        assert!(
            v["hooks"]["PostToolUse"][0]["hooks"][0]
                .get("timeout")
                .is_none()
        );
        let gemini = install_timed(Host::Gemini, "s.json", "", "g", Some(130)).unwrap();
        let v: serde_json::Value = serde_json::from_str(gemini.text.as_deref().unwrap()).unwrap();
        assert_eq!(v["hooks"]["BeforeTool"][0]["hooks"][0]["timeout"], 130_000);
        assert!(
            v["hooks"]["AfterTool"][0]["hooks"][0]
                .get("timeout")
                .is_none()
        );
        let codex = install_timed(Host::Codex, "c.toml", "", "x", Some(130)).unwrap();
        let doc: toml_edit::DocumentMut = codex.text.as_deref().unwrap().parse().unwrap();
        let pre = &doc["hooks"]["PreToolUse"][0]["hooks"][0];
        assert_eq!(pre["timeout"].as_integer(), Some(130));
        assert!(
            doc["hooks"]["PostToolUse"][0]["hooks"][0]
                .get("timeout")
                .is_none()
        );
        // Without a wait nothing is added.
        let plain = install(Host::Claude, "s.json", "", CMD).unwrap();
        assert!(!plain.text.unwrap().contains("timeout"));
    }

    #[test]
    fn install_then_uninstall_gives_back_the_same_bytes() {
        let texts = [
            "",
            "{}\n",
            "{\n  // mine\n  \"model\": \"x\",\n  \"permissions\": { \"allow\": [\"Bash(ls)\"] }\n}\n",
            "{\n  \"hooks\": {\n    \"PreToolUse\": [\n      { \"matcher\": \"Bash\", \"hooks\": [ { \"type\": \"command\", \"command\": \"other\" } ] }\n    ]\n  }\n}\n",
            // (An event list that was there but empty is removed with our entry: the
            // one case where the bytes differ, and what they say does not.)
            "{\n  \"hooks\": {\n    \"Notification\": []\n  },\n  \"z\": 1\n}\n",
            "{\n  \"a\": 1\n}",
        ];
        for t in texts {
            let i = install(Host::Claude, "f", t, CMD).unwrap();
            let installed_text = i.text.clone().unwrap();
            assert!(installed_text.contains(CMD), "{installed_text}");
            // Idempotent.
            let again = install(Host::Claude, "f", &installed_text, CMD).unwrap();
            assert!(again.changes.is_empty());
            assert_eq!(again.text.as_deref(), Some(installed_text.as_str()));
            let u = uninstall(Host::Claude, "f", &installed_text).unwrap();
            match u.text {
                Some(back) => assert_eq!(back, t, "after:\n{installed_text}"),
                None => assert!(t.trim().is_empty() || t.trim() == "{}", "{t}"),
            }
        }
    }

    #[test]
    fn refuses_what_it_cannot_read_and_replaces_an_old_command() {
        assert!(matches!(
            install(Host::Claude, "f", "{ \"a\": ", CMD),
            Err(WiringError::Malformed { .. })
        ));
        assert!(matches!(
            install(Host::Claude, "f", "{ \"hooks\": [] }", CMD),
            Err(WiringError::Shape { .. })
        ));
        let old = install(Host::Claude, "f", "", "/old/khaelor-perm hook claude").unwrap();
        let new = install(Host::Claude, "f", old.text.as_deref().unwrap(), CMD).unwrap();
        let t = new.text.unwrap();
        assert!(t.contains(CMD) && !t.contains("/old/"), "{t}");
        assert!(is_ours("'/a b/khaelor-perm' hook claude --x", Host::Claude));
        assert!(!is_ours("/bin/khaelor-perm hook codex", Host::Claude));
        assert!(!is_ours("/bin/not-khaelor-perm hook claude", Host::Claude));
        assert_eq!(
            command_program("'/a b/khaelor-perm' hook claude"),
            "/a b/khaelor-perm"
        );
    }
}
