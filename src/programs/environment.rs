//! Environment variables that change what a command runs: where programs are found,
//! what they load, which code they run at start or later. An assignment prefix of one of
//! these (`PATH=/tmp/x make`, `LD_PRELOAD=/tmp/x.so ls`) is a request of its own, which
//! no rule written for the command (`make *`, `ls *`) covers.
//!
//! Owns only the table, each entry with the reason it is there.

/// Exact names, with why each changes what runs.
const NAMES: &[(&str, &str)] = &[
    ("PATH", "decides which program each command name runs"),
    (
        "BASH_ENV",
        "is a file bash runs before a non-interactive script",
    ),
    ("ENV", "is a file sh runs at start"),
    ("SHELLOPTS", "sets shell options of child shells"),
    ("BASHOPTS", "sets shell options of child shells"),
    ("PROMPT_COMMAND", "is code the shell runs"),
    ("PS4", "is expanded, with substitutions, by traced shells"),
    ("IFS", "changes how child shells split words"),
    ("CDPATH", "changes where `cd` goes in scripts"),
    ("GLOBIGNORE", "changes what globs match in child shells"),
    ("PAGER", "is a program git, man and others run"),
    ("MANPAGER", "is a program man runs"),
    ("GIT_PAGER", "is a program git runs"),
    ("EDITOR", "is a program git and others run"),
    ("VISUAL", "is a program git and others run"),
    ("BROWSER", "is a program some tools run"),
    ("LESSOPEN", "is a program less runs on every file"),
    ("LESSCLOSE", "is a program less runs on every file"),
    ("SSH_ASKPASS", "is a program ssh runs"),
    ("SUDO_ASKPASS", "is a program sudo runs"),
    ("PYTHONPATH", "decides which Python modules load"),
    ("PYTHONSTARTUP", "is a file Python runs"),
    ("PYTHONHOME", "decides which Python library loads"),
    ("PERL5LIB", "decides which Perl modules load"),
    ("PERL5OPT", "adds options (and code) to every perl"),
    ("PERLLIB", "decides which Perl modules load"),
    ("RUBYLIB", "decides which Ruby libraries load"),
    ("RUBYOPT", "adds options (and code) to every ruby"),
    ("NODE_OPTIONS", "adds options (`--require`) to every node"),
    ("NODE_PATH", "decides which Node modules load"),
    ("JAVA_TOOL_OPTIONS", "adds options (agents) to every JVM"),
    ("_JAVA_OPTIONS", "adds options (agents) to every JVM"),
    ("CLASSPATH", "decides which Java classes load"),
    ("RUSTC_WRAPPER", "is a program cargo runs around rustc"),
    ("RUSTC", "is the compiler cargo runs"),
    (
        "CARGO_BUILD_RUSTC_WRAPPER",
        "is a program cargo runs around rustc",
    ),
    ("CC", "is the compiler builds run"),
    ("CXX", "is the compiler builds run"),
    ("MAKEFLAGS", "adds options to make"),
    (
        "XDG_CONFIG_HOME",
        "moves the configs (git's among them) programs read",
    ),
    ("HOME", "moves every dotfile programs read and run"),
    ("ZDOTDIR", "moves the files zsh runs at start"),
    ("INPUTRC", "changes readline's bindings"),
];

/// Prefixes of whole families, with why.
const PREFIXES: &[(&str, &str)] = &[
    ("LD_", "changes what the dynamic loader loads into programs"),
    (
        "DYLD_",
        "changes what the dynamic loader loads into programs",
    ),
    (
        "GIT_",
        "changes what git runs and which repository it acts on",
    ),
    ("BASH_FUNC_", "defines functions in child bash shells"),
    ("npm_config_", "changes what npm runs"),
    ("NPM_CONFIG_", "changes what npm runs"),
];

/// Why assigning `name` changes what a command runs, or `None`.
pub fn changes_what_runs(name: &str) -> Option<&'static str> {
    NAMES
        .iter()
        .find(|(n, _)| *n == name)
        .or_else(|| PREFIXES.iter().find(|(p, _)| name.starts_with(p)))
        .map(|(_, why)| *why)
}

/// The variable name of an assignment word (`NAME=v`, `NAME+=v`, `NAME[i]=v`).
pub fn assigned_name(word: &str) -> &str {
    let lhs = word.split_once('=').map_or(word, |(l, _)| l);
    let lhs = lhs.strip_suffix('+').unwrap_or(lhs);
    lhs.split_once('[').map_or(lhs, |(n, _)| n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_families() {
        assert!(changes_what_runs(assigned_name("PATH=/tmp")).is_some());
        assert!(changes_what_runs(assigned_name("LD_PRELOAD=/x.so")).is_some());
        assert!(changes_what_runs(assigned_name("GIT_SSH_COMMAND=x")).is_some());
        assert!(changes_what_runs(assigned_name("PATH+=:/x")).is_some());
        assert!(changes_what_runs(assigned_name("lsblk=1")).is_none());
        assert!(changes_what_runs(assigned_name("RUST_LOG=debug")).is_none());
    }
}
