//! Cline CLI's plugin file: Cline loads every plugin module in `.cline/plugins/` (the
//! project's) and `~/.cline/plugins/` (the user's; `CLINE_DIR` moves `~/.cline`).
//! Install writes our plugin (`cline-plugin.js`) there with this binary and the
//! install flags filled in its `INSTALLED` line; uninstall removes the file
//! (`plugin_file`). Its hook files (`.cline/hooks/PreToolUse`) are not used: they can
//! only stop the whole run (`hosts::cline`).

use super::plugin_file::PluginFile;
use crate::hosts::Host;

/// The plugin as shipped (its `INSTALLED` line empty: the binary on PATH).
pub const PLUGIN: &str = include_str!("../cline-plugin.js");

/// The plugin file: `installed` (for doctor), `install` and `uninstall`.
pub const FILE: PluginFile = PluginFile {
    host: Host::Cline,
    plugin: PLUGIN,
    marker: "// khaelor-perm for Cline CLI.",
};

#[cfg(test)]
mod tests {
    #[test]
    fn install_is_idempotent_and_refuses_a_foreign_file() {
        super::FILE.check_install_uninstall();
    }
}
