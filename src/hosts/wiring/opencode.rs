//! OpenCode's plugin file: OpenCode has no hook command to wire, it loads every
//! plugin file in `.opencode/plugin/` (the project's) or `~/.config/opencode/plugin/`
//! (the user's, `$XDG_CONFIG_HOME` moves it). Install writes our plugin
//! (`opencode-plugin.js`) there with this binary and the install flags filled in its
//! `INSTALLED` line; uninstall removes the file. A file at that path that is not our
//! plugin is refused, never overwritten.

use super::{Edit, WiringError, hook_command, shape};
use crate::hosts::Host;

/// The plugin as shipped (its `INSTALLED` line empty: the binary on PATH).
pub const PLUGIN: &str = include_str!("../opencode-plugin.js");

/// The plugin's first line: what marks a file as ours.
const MARKER: &str = "// khaelor-perm for OpenCode.";
/// The line install fills in.
const INSTALLED_LINE: &str = "const INSTALLED = { bin: null, args: [] };";

/// The plugin text for `bin` and `flags` (`--url`, `--token-file`; the plugin chooses
/// `--interactive` or `--non-interactive` itself from `KHAELOR_PERM_INTERACTIVE`).
pub fn plugin_text(bin: &str, flags: &[String]) -> String {
    let installed = serde_json::json!({ "bin": bin, "args": flags });
    PLUGIN.replacen(
        INSTALLED_LINE,
        &format!("const INSTALLED = {installed};"),
        1,
    )
}

/// The hook command an installed plugin runs (for doctor), if `text` is our plugin.
pub fn installed(file: &str, text: &str) -> Result<Vec<(String, String)>, WiringError> {
    if text.trim().is_empty() {
        return Ok(Vec::new());
    }
    if !text.starts_with(MARKER) {
        return Err(shape(file, "not khaelor-perm's OpenCode plugin"));
    }
    let line = text
        .lines()
        .find_map(|l| l.strip_prefix("const INSTALLED = "))
        .and_then(|l| l.strip_suffix(';'))
        .ok_or_else(|| shape(file, "the plugin has no `INSTALLED` line"))?;
    // The shipped line is JavaScript (`{ bin: null, … }`): no binary recorded.
    let Ok(v) = serde_json::from_str::<serde_json::Value>(line) else {
        return Ok(vec![(
            "plugin".to_string(),
            "khaelor-perm hook opencode".to_string(),
        )]);
    };
    let bin = v
        .get("bin")
        .and_then(|b| b.as_str())
        .unwrap_or("khaelor-perm");
    let flags: Vec<String> = v
        .get("args")
        .and_then(|a| a.as_array())
        .map(|a| {
            a.iter()
                .filter_map(|x| x.as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default();
    Ok(vec![(
        "plugin".to_string(),
        hook_command(std::path::Path::new(bin), Host::Opencode, &flags),
    )])
}

pub fn install(file: &str, text: &str, bin: &str, flags: &[String]) -> Result<Edit, WiringError> {
    let want = plugin_text(bin, flags);
    if text == want {
        return Ok(Edit {
            text: Some(want),
            changes: Vec::new(),
        });
    }
    if !text.trim().is_empty() && !text.starts_with(MARKER) {
        return Err(shape(
            file,
            "a file that is not khaelor-perm's OpenCode plugin is there",
        ));
    }
    let change = if text.trim().is_empty() {
        format!("wrote the khaelor-perm plugin, running `{bin}`")
    } else {
        format!("replaced the old khaelor-perm plugin, now running `{bin}`")
    };
    Ok(Edit {
        text: Some(want),
        changes: vec![change],
    })
}

pub fn uninstall(file: &str, text: &str) -> Result<Edit, WiringError> {
    if !text.starts_with(MARKER) {
        if text.trim().is_empty() {
            return Ok(Edit {
                text: Some(text.to_string()),
                changes: Vec::new(),
            });
        }
        return Err(shape(file, "not khaelor-perm's OpenCode plugin"));
    }
    Ok(Edit {
        text: None,
        changes: vec!["removed the khaelor-perm plugin".to_string()],
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn install_is_idempotent_and_refuses_a_foreign_file() {
        assert!(PLUGIN.starts_with(MARKER) && PLUGIN.contains(INSTALLED_LINE));
        let flags = vec!["--url".to_string(), "http://127.0.0.1:8790".to_string()];
        let i = install("f", "", "/opt/k p/khaelor-perm", &flags).unwrap();
        let t = i.text.unwrap();
        assert!(t.contains(r#"const INSTALLED = {"bin":"/opt/k p/khaelor-perm","args":["--url","http://127.0.0.1:8790"]};"#), "{t}");
        assert!(
            install("f", &t, "/opt/k p/khaelor-perm", &flags)
                .unwrap()
                .changes
                .is_empty()
        );
        let cmd = &installed("f", &t).unwrap()[0].1;
        assert_eq!(super::super::command_program(cmd), "/opt/k p/khaelor-perm");
        assert!(super::super::is_ours(cmd, Host::Opencode));
        // Another binary: replaced; a foreign file: refused.
        assert_eq!(
            install("f", &t, "/new/khaelor-perm", &[])
                .unwrap()
                .changes
                .len(),
            1
        );
        assert!(install("f", "export const Mine = 1;\n", "/b", &[]).is_err());
        assert!(uninstall("f", "export const Mine = 1;\n").is_err());
        assert_eq!(uninstall("f", &t).unwrap().text, None);
    }
}
