//! The one program table: per program, declaratively, its option grammar, what its
//! operands are (read, written, run, code, an inner command), which options run, read,
//! write or change directory (each with a reason), and tested examples.
//!
//! Everyone who needs to know what a program does with its words asks here: the AST
//! effects, the hardline floor, the V1 lexer's smuggling check and the arity table.
//! `describe` reads one program's words; `unwrap` looks through wrappers to the command
//! that really runs and extracts code strings. Works on words that are already unquoted;
//! knows nothing of bash syntax, requests or rules.

pub mod awk_program;
pub mod builds;
pub mod builtins;
pub mod composed;
pub mod description;
pub mod edits;
pub mod environment;
pub mod git;
pub mod git_discovery;
pub mod git_history;
pub mod git_readonly;
pub mod languages;
pub mod options;
pub mod packs;
pub mod readonly;
pub mod search_path;
pub mod sed_script;
pub mod shells;
pub mod startup;
pub mod tools;
pub mod unwrap;
pub mod verified;
pub mod wrappers;

pub use options::{Abbrev, Arg, Does, Grammar, Opt, Value};
pub use tools::{FS_VERBS, NETWORK_COMMANDS, fs_verb_arguments, is_network_command};
pub use unwrap::{CodeArg, Description, code_text, describe, innermost};

/// What kind of program an entry describes, which decides how its operands are read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// Runs code given as a string, or a script, or stdin (`sh`, `bash`, …).
    Shell,
    /// Runs the command formed by its operands after `skip` positional words
    /// (`timeout 5 cmd`, `chroot DIR cmd`).
    Wrapper { skip: usize },
    /// Hands its operands to `sh -c` as one string (`watch a b`, `sg GROUP a b`).
    CodeOperands { skip: usize },
    /// git: global options, then a subcommand with its own grammar.
    Git,
    /// A program whose operands are data (files it reads or writes: see `tools`).
    Tool,
    /// Runs code we cannot read (`gdb`'s command language, `source FILE`).
    Opaque(&'static str),
}

/// A tested example of what the table says about one command line.
#[derive(Debug, Clone, Copy)]
pub struct Example {
    pub command: &'static str,
    /// The inner command, as its words joined by spaces.
    pub inner: Option<&'static str>,
    /// The code string run by a shell.
    pub code: Option<&'static str>,
    /// The words cannot be read (unknown option, code we cannot see).
    pub opaque: bool,
    /// At least one option makes it run another program.
    pub runs: bool,
    pub reads: &'static [&'static str],
    pub writes: &'static [&'static str],
}

impl Example {
    pub const fn new(command: &'static str) -> Self {
        Example {
            command,
            inner: None,
            code: None,
            opaque: false,
            runs: false,
            reads: &[],
            writes: &[],
        }
    }

    pub const fn inner(mut self, inner: &'static str) -> Self {
        self.inner = Some(inner);
        self
    }

    pub const fn code(mut self, code: &'static str) -> Self {
        self.code = Some(code);
        self
    }

    pub const fn opaque(mut self) -> Self {
        self.opaque = true;
        self
    }

    pub const fn runs(mut self) -> Self {
        self.runs = true;
        self
    }

    pub const fn reads(mut self, r: &'static [&'static str]) -> Self {
        self.reads = r;
        self
    }

    pub const fn writes(mut self, w: &'static [&'static str]) -> Self {
        self.writes = w;
        self
    }
}

/// One entry of the table.
#[derive(Debug, Clone, Copy)]
pub struct Program {
    /// The names it is invoked by (compared with the basename of the command word).
    pub names: &'static [&'static str],
    pub grammar: Grammar,
    pub role: Role,
    pub examples: &'static [Example],
}

/// Every program the table describes, from each family's own list.
pub fn all() -> impl Iterator<Item = &'static Program> {
    shells::PROGRAMS
        .iter()
        .chain(wrappers::PROGRAMS)
        .chain(git::PROGRAMS)
        .chain(tools::PROGRAMS)
        .chain(builtins::PROGRAMS)
        .chain(languages::PROGRAMS)
}

/// The entry for a command word (by basename), if the table has one.
pub fn lookup(word: &str) -> Option<&'static Program> {
    BY_NAME.get(basename(word)).copied()
}

/// Every name of the table to its entry, the first entry naming it winning, as a
/// scan of `all()` would find it. The analysis asks for several names per command,
/// and the table has hundreds of entries.
static BY_NAME: std::sync::LazyLock<std::collections::HashMap<&'static str, &'static Program>> =
    std::sync::LazyLock::new(|| {
        // Sized up front: growing it rehashes every name several times, which a hook
        // process (one command, one lookup table) pays on each call.
        let names = all().map(|p| p.names.len()).sum();
        let mut map = std::collections::HashMap::with_capacity(names);
        for p in all() {
            for name in p.names {
                map.entry(*name).or_insert(p);
            }
        }
        map
    });

/// Whether a command word names a program that runs another command or code by its
/// role: a shell, a wrapper, a program handing its operands to a shell, an opaque
/// runner, `eval`/`trap`/`source`.
pub fn is_runner_name(word: &str) -> bool {
    matches!(basename(word), "eval" | "trap" | "source" | ".")
        || lookup(word).is_some_and(|p| {
            matches!(
                p.role,
                Role::Shell | Role::Wrapper { .. } | Role::CodeOperands { .. } | Role::Opaque(_)
            )
        })
}

/// Whether these words run another command or code (such commands never get a broad
/// always pattern). `ip` is a wrapper only in its `netns exec` form; `uv run`,
/// `poetry run`, `bundle exec`… run a command of the project's, judged by that command.
pub fn runs_other_programs(words: &[&str]) -> bool {
    let Some(first) = words.first() else {
        return false;
    };
    if basename(first) == "ip" {
        return describe(words).inner.is_some();
    }
    if wrappers::runs_in_subcommand(basename(first)) {
        // `uv run pytest -q`, `bundle exec rake`: like a project tool, unless what runs
        // is itself a runner (`uv run bash -c …`) or the words cannot be read.
        let d = describe(words);
        return !d.opaque.is_empty()
            || d.stdin_code
            || !d.code.is_empty()
            || d.inner
                .is_some_and(|i| runs_other_programs(words.get(i..).unwrap_or_default()));
    }
    is_runner_name(first)
}

/// Whether `name` (a basename) is a shell.
pub fn is_shell(name: &str) -> bool {
    let name = basename(name);
    shells::PROGRAMS.iter().any(|p| p.names.contains(&name))
}

/// Whether a command word is a wrapper (it runs the command formed by its operands).
pub fn is_wrapper(word: &str) -> bool {
    lookup(word).is_some_and(|p| matches!(p.role, Role::Wrapper { .. }))
}

/// Every name of a shell in the table (`sh`, `bash`, `zsh`, ...).
pub static SHELLS: std::sync::LazyLock<Vec<&'static str>> = std::sync::LazyLock::new(|| {
    shells::PROGRAMS
        .iter()
        .flat_map(|p| p.names.iter().copied())
        .collect()
});

/// Every name of a program the table knows runs another command or code it is handed
/// (wrappers and code-operand programs).
pub static WRAPPERS: std::sync::LazyLock<Vec<&'static str>> = std::sync::LazyLock::new(|| {
    all()
        .filter(|p| matches!(p.role, Role::Wrapper { .. } | Role::CodeOperands { .. }))
        .flat_map(|p| p.names.iter().copied())
        .collect()
});

/// Whether a file holds a credential in its text that a reader of it would print: a
/// git configuration with a token (`git_discovery::credential_config`), a shell's
/// startup file that writes a key out (`startup::assigns_credential`).
pub fn holds_credential(path: &std::path::Path, home: &std::path::Path) -> bool {
    git_discovery::credential_config(path, home) || startup::assigns_credential(path)
}

/// The most of a file's text a credential check reads (`text_holds`).
pub const MAX_CHECKED_TEXT: u64 = 1 << 20;

/// Whether the text of the file at `path` satisfies `holds`, read as
/// `paths::read_small_file` reads (a regular file, at most `MAX_CHECKED_TEXT` bytes, never
/// a pipe or a device that would stall the decision). Nothing there, or a file the
/// reader could not read either, holds nothing; anything else that cannot be read whole
/// (a pipe, a device, a larger file) is taken to hold a credential.
pub(crate) fn text_holds(path: &std::path::Path, holds: impl Fn(&str) -> bool) -> bool {
    match crate::model::paths::read_small_file(path, MAX_CHECKED_TEXT) {
        Ok(Some(bytes)) => holds(&String::from_utf8_lossy(&bytes)),
        Ok(None) => false,
        Err(e) => e.kind() != std::io::ErrorKind::PermissionDenied,
    }
}

/// The last path component of a command word, so `/usr/bin/curl` is recognized as
/// `curl` where that only adds scrutiny (network, git, wrappers, the floor). Allow
/// rules still see the word as written.
pub fn basename(word: &str) -> &str {
    // A byte scan: words are short, and the analysis asks this of nearly every one.
    match word.bytes().rposition(|b| b == b'/') {
        Some(i) => word.get(i + 1..).unwrap_or_default(),
        None => word,
    }
}

/// Whether a word is a variable assignment bash would take before a command word:
/// `NAME=v`, `NAME+=v`, `NAME[i]=v`.
pub fn is_assignment(word: &str) -> bool {
    let Some((lhs, _)) = word.split_once('=') else {
        return false;
    };
    let lhs = lhs.strip_suffix('+').unwrap_or(lhs);
    let name = match lhs.split_once('[') {
        Some((name, index)) if index.ends_with(']') => name,
        Some(_) => return false,
        None => lhs,
    };
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_has_one_entry() {
        let mut seen: Vec<&str> = Vec::new();
        for p in all() {
            for n in p.names {
                assert!(!seen.contains(n), "`{n}` is in the table twice");
                seen.push(n);
            }
        }
    }
}
