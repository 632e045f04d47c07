//! A thin re-export of the program table (`crate::programs`) under its old name, for
//! the modules that still import `commands::…` (the lexer's request mapping, the
//! comparison report, the floor's shared imports). The knowledge lives in `programs`;
//! nothing is defined here but name lists derived from that table.

use std::sync::LazyLock;

pub use crate::programs::git::{git_dir_options, git_subcommand, is_git_modify};
pub use crate::programs::{
    FS_VERBS, NETWORK_COMMANDS, basename, fs_verb_arguments, is_assignment, is_network_command,
    is_shell,
};

/// The names of the table's shells.
pub static SHELLS: LazyLock<Vec<&'static str>> = LazyLock::new(|| {
    crate::programs::shells::PROGRAMS
        .iter()
        .flat_map(|p| p.names.iter().copied())
        .collect()
});

/// The names of every program the table knows to run another command or code: wrappers,
/// shells, programs that hand their operands to a shell (`watch`), opaque runners.
pub static WRAPPERS: LazyLock<Vec<&'static str>> = LazyLock::new(|| {
    crate::programs::all()
        .filter(|p| {
            matches!(
                p.role,
                crate::programs::Role::Wrapper { .. } | crate::programs::Role::CodeOperands { .. }
            )
        })
        .flat_map(|p| p.names.iter().copied())
        .collect()
});
