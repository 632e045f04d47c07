//! GitHub Copilot CLI's hook file: Copilot loads every `*.json` in its user hooks
//! directory (`~/.copilot/hooks/`, `$COPILOT_HOME/hooks/`) and, in a folder the person
//! trusted, in the repository's `.github/hooks/`, and runs the hooks of all of them
//! (the most restrictive answer wins: checked on 1.0.102, our deny and our ask beat
//! another file's allow). Install writes a file of our own, `khaelor-perm.json`, with
//! the `preToolUse` hook (and its `timeoutSec` for a waiting hook) and the
//! `postToolUse` one; uninstall removes it. A file at that path with any hook that is
//! not ours is refused, never overwritten.

use serde_json::{Value, json};

use super::{Edit, WiringError, is_ours, shape};
use crate::hosts::Host;

/// The name of our hook file.
pub const HOOK_FILE: &str = "khaelor-perm.json";

/// The events of our file: the first is the pre-tool hook.
pub const EVENTS: [&str; 2] = ["preToolUse", "postToolUse"];

/// Our file for `command`, the pre-tool hook with `timeoutSec` when given.
pub fn file_text(command: &str, pre_tool_timeout: Option<u64>) -> String {
    let mut pre = json!({ "type": "command", "bash": command });
    if let (Some(secs), Some(o)) = (pre_tool_timeout, pre.as_object_mut()) {
        o.insert("timeoutSec".to_string(), json!(secs));
    }
    let v = json!({
        "version": 1,
        "hooks": {
            "preToolUse": [pre],
            "postToolUse": [{ "type": "command", "bash": command }],
        }
    });
    let mut out = serde_json::to_string_pretty(&v).unwrap_or_default();
    out.push('\n');
    out
}

/// (event, command) of every hook in `text`, if the file is ours: JSON with a `hooks`
/// object whose every entry runs `khaelor-perm hook copilot`.
fn entries(file: &str, text: &str) -> Result<Vec<(String, String)>, WiringError> {
    let v: Value = serde_json::from_str(text).map_err(|e| WiringError::Malformed {
        file: file.to_string(),
        line: e.line(),
        column: e.column(),
        message: e.to_string(),
    })?;
    let hooks = v.get("hooks").and_then(Value::as_object).ok_or_else(|| {
        shape(
            file,
            "not khaelor-perm's Copilot hook file (no `hooks` object)",
        )
    })?;
    let mut out = Vec::new();
    for (event, list) in hooks {
        let list = list
            .as_array()
            .ok_or_else(|| shape(file, &format!("`hooks.{event}` is not an array")))?;
        for h in list {
            let cmd = h.get("bash").and_then(Value::as_str).unwrap_or_default();
            if !is_ours(cmd, Host::Copilot) {
                return Err(shape(
                    file,
                    &format!("`hooks.{event}` holds a hook that is not khaelor-perm's"),
                ));
            }
            out.push((event.clone(), cmd.to_string()));
        }
    }
    Ok(out)
}

/// Our hook commands in `text` (for doctor); nothing for an absent file.
pub fn installed(file: &str, text: &str) -> Result<Vec<(String, String)>, WiringError> {
    if text.trim().is_empty() {
        return Ok(Vec::new());
    }
    entries(file, text)
}

pub fn install(
    file: &str,
    text: &str,
    command: &str,
    pre_tool_timeout: Option<u64>,
) -> Result<Edit, WiringError> {
    let want = file_text(command, pre_tool_timeout);
    if text == want {
        return Ok(Edit {
            text: Some(want),
            changes: Vec::new(),
        });
    }
    let change = if text.trim().is_empty() {
        format!("wrote the khaelor-perm hooks (preToolUse, postToolUse), running `{command}`")
    } else {
        entries(file, text)?;
        format!("replaced the old khaelor-perm hooks, now running `{command}`")
    };
    Ok(Edit {
        text: Some(want),
        changes: vec![change],
    })
}

pub fn uninstall(file: &str, text: &str) -> Result<Edit, WiringError> {
    if text.trim().is_empty() {
        return Ok(Edit {
            text: Some(text.to_string()),
            changes: Vec::new(),
        });
    }
    entries(file, text)?;
    Ok(Edit {
        text: None,
        changes: vec!["removed the khaelor-perm hook file".to_string()],
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const CMD: &str = "/usr/local/bin/khaelor-perm hook copilot";

    #[test]
    fn install_is_idempotent_and_refuses_a_foreign_file() {
        let i = install("f", "", CMD, None).unwrap();
        let t = i.text.unwrap();
        let v: Value = serde_json::from_str(&t).unwrap();
        assert_eq!(v["version"], 1);
        assert_eq!(v["hooks"]["preToolUse"][0]["type"], "command");
        assert_eq!(v["hooks"]["preToolUse"][0]["bash"], CMD);
        assert_eq!(v["hooks"]["postToolUse"][0]["bash"], CMD);
        assert!(v["hooks"]["preToolUse"][0].get("timeoutSec").is_none());
        assert!(install("f", &t, CMD, None).unwrap().changes.is_empty());
        assert_eq!(
            installed("f", &t).unwrap(),
            vec![
                ("preToolUse".to_string(), CMD.to_string()),
                ("postToolUse".to_string(), CMD.to_string())
            ]
        );
        // Another binary or a wait replaces our own file.
        let w = install(
            "f",
            &t,
            "/opt/khaelor-perm hook copilot --url http://x",
            Some(40),
        )
        .unwrap();
        let v: Value = serde_json::from_str(w.text.as_deref().unwrap()).unwrap();
        assert_eq!(v["hooks"]["preToolUse"][0]["timeoutSec"], 40);
        assert!(v["hooks"]["postToolUse"][0].get("timeoutSec").is_none());
        // A file with someone else's hook is neither overwritten nor removed.
        let foreign =
            r#"{"version":1,"hooks":{"preToolUse":[{"type":"command","bash":"./audit.sh"}]}}"#;
        assert!(install("f", foreign, CMD, None).is_err());
        assert!(uninstall("f", foreign).is_err());
        assert!(install("f", "{ not json", CMD, None).is_err());
        assert_eq!(uninstall("f", &t).unwrap().text, None);
        assert!(uninstall("f", "").unwrap().changes.is_empty());
    }
}
