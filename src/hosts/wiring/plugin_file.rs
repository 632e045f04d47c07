//! A plugin file of ours that a host loads from a directory (OpenCode's
//! `.opencode/plugin/`, Cline CLI's `.cline/plugins/`): install writes the shipped
//! plugin with this binary and the install flags filled in its `INSTALLED` line;
//! uninstall removes the file. A file at that path that is not our plugin (its first
//! line is not the marker) is refused, never overwritten.

use super::{Edit, WiringError, hook_command, shape};
use crate::hosts::Host;

/// The line install fills in.
const INSTALLED_LINE: &str = "const INSTALLED = { bin: null, args: [] };";

/// One host's plugin: its text as shipped (the `INSTALLED` line empty: the binary on
/// PATH) and its first line, which marks a file as ours.
pub struct PluginFile {
    pub host: Host,
    pub plugin: &'static str,
    pub marker: &'static str,
}

impl PluginFile {
    fn foreign(&self) -> String {
        format!("not khaelor-perm's {} plugin", self.host.display_name())
    }

    /// The plugin text for `bin` and `flags` (`--url`, `--token-file`, …).
    pub fn text(&self, bin: &str, flags: &[String]) -> String {
        let installed = serde_json::json!({ "bin": bin, "args": flags });
        self.plugin.replacen(
            INSTALLED_LINE,
            &format!("const INSTALLED = {installed};"),
            1,
        )
    }

    /// The hook command an installed plugin runs (for doctor), if `text` is our plugin.
    pub fn installed(&self, file: &str, text: &str) -> Result<Vec<(String, String)>, WiringError> {
        if text.trim().is_empty() {
            return Ok(Vec::new());
        }
        if !text.starts_with(self.marker) {
            return Err(shape(file, &self.foreign()));
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
                format!("khaelor-perm hook {}", self.host),
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
            hook_command(std::path::Path::new(bin), self.host, &flags),
        )])
    }

    pub fn install(
        &self,
        file: &str,
        text: &str,
        bin: &str,
        flags: &[String],
    ) -> Result<Edit, WiringError> {
        let want = self.text(bin, flags);
        if text == want {
            return Ok(Edit {
                text: Some(want),
                changes: Vec::new(),
            });
        }
        if !text.trim().is_empty() && !text.starts_with(self.marker) {
            return Err(shape(
                file,
                &format!(
                    "a file that is not khaelor-perm's {} plugin is there",
                    self.host.display_name()
                ),
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

    pub fn uninstall(&self, file: &str, text: &str) -> Result<Edit, WiringError> {
        if !text.starts_with(self.marker) {
            if text.trim().is_empty() {
                return Ok(Edit {
                    text: Some(text.to_string()),
                    changes: Vec::new(),
                });
            }
            return Err(shape(file, &self.foreign()));
        }
        Ok(Edit {
            text: None,
            changes: vec!["removed the khaelor-perm plugin".to_string()],
        })
    }

    /// The checks every plugin file passes: install is idempotent, names the binary
    /// doctor reads back, replaces an older plugin of ours and refuses a foreign file.
    #[cfg(test)]
    pub fn check_install_uninstall(&self) {
        assert!(self.plugin.starts_with(self.marker) && self.plugin.contains(INSTALLED_LINE));
        let flags = vec!["--url".to_string(), "http://127.0.0.1:8790".to_string()];
        let t = self
            .install("f", "", "/opt/k p/khaelor-perm", &flags)
            .unwrap()
            .text
            .unwrap();
        assert!(t.contains(r#"const INSTALLED = {"bin":"/opt/k p/khaelor-perm","args":["--url","http://127.0.0.1:8790"]};"#), "{t}");
        assert!(
            self.install("f", &t, "/opt/k p/khaelor-perm", &flags)
                .unwrap()
                .changes
                .is_empty()
        );
        let cmd = &self.installed("f", &t).unwrap()[0].1;
        assert_eq!(super::command_program(cmd), "/opt/k p/khaelor-perm");
        assert!(super::is_ours(cmd, self.host));
        assert_eq!(
            self.install("f", &t, "/new/khaelor-perm", &[])
                .unwrap()
                .changes
                .len(),
            1
        );
        assert!(
            self.install("f", "export const Mine = 1;\n", "/b", &[])
                .is_err()
        );
        assert!(self.uninstall("f", "export const Mine = 1;\n").is_err());
        assert_eq!(self.uninstall("f", &t).unwrap().text, None);
    }
}
