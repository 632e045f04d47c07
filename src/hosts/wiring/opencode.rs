//! OpenCode's plugin file: OpenCode has no hook command to wire, it loads every
//! plugin file in `.opencode/plugin/` (the project's) or `~/.config/opencode/plugin/`
//! (the user's, `$XDG_CONFIG_HOME` moves it). Install writes our plugin
//! (`opencode-plugin.js`) there with this binary and the install flags filled in its
//! `INSTALLED` line; uninstall removes the file (`plugin_file`).

use super::plugin_file::PluginFile;
use crate::hosts::Host;

/// The plugin as shipped (its `INSTALLED` line empty: the binary on PATH).
pub const PLUGIN: &str = include_str!("../opencode-plugin.js");

/// The plugin file: `installed` (for doctor), `install` and `uninstall`.
pub const FILE: PluginFile = PluginFile {
    host: Host::Opencode,
    plugin: PLUGIN,
    marker: "// khaelor-perm for OpenCode.",
};

#[cfg(test)]
mod tests {
    #[test]
    fn install_is_idempotent_and_refuses_a_foreign_file() {
        super::FILE.check_install_uninstall();
    }
}
