//! Environment variables that change what a command runs: where programs are found,
//! what they load, which code they run at start or later. An assignment prefix of one of
//! these (`PATH=/tmp/x make`, `LD_PRELOAD=/tmp/x.so ls`) is a request of its own, which
//! no rule written for the command (`make *`, `ls *`) covers.
//!
//! Owns only the tables, each entry with the reason it is there, and which variables
//! hold a command (`GIT_SSH_COMMAND`, `PAGER`): their values are read as code.

use super::options::Value;

/// Whether a variable is named like a credential: `AWS_*`, or holding `TOKEN`,
/// `SECRET`, `PASSWORD`, `PASSWD`, `CREDENTIAL`, `API_KEY`, `APIKEY` or `PRIVATE_KEY`
/// in any case. The sandbox does not pass such variables on; a startup file that writes
/// one out is a secret (`startup`).
pub fn credential_variable(name: &str) -> bool {
    let up = name.to_ascii_uppercase();
    up.starts_with("AWS_")
        || [
            "TOKEN",
            "SECRET",
            "PASSWORD",
            "PASSWD",
            "CREDENTIAL",
            "API_KEY",
            "APIKEY",
            "PRIVATE_KEY",
        ]
        .iter()
        .any(|w| up.contains(w))
}

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
    ("SYSTEMD_PAGER", "is a program systemctl and journalctl run"),
    ("SYSTEMD_EDITOR", "is a program `systemctl edit` runs"),
    ("FCEDIT", "is the editor bash's `fc` runs"),
    ("RSYNC_RSH", "is the remote shell rsync runs"),
    ("CVS_RSH", "is the remote shell cvs runs"),
    ("KUBE_EDITOR", "is the editor `kubectl edit` runs"),
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

/// Variables whose value is a command some program runs (a subset of `NAMES` and the
/// `GIT_` family): what kind of command text it is, and who runs it. Checked with
/// markers where a program here runs it (git 2.47, man-db): git runs its pagers,
/// editors and `GIT_SSH_COMMAND` with `sh -c`, and `GIT_SSH` as a program.
const CODE_VARS: &[(&str, Value, &str)] = &[
    (
        "GIT_SSH_COMMAND",
        Value::Shell,
        "git runs it to reach ssh remotes",
    ),
    ("GIT_PAGER", Value::Shell, "git pipes its output through it"),
    // man-db splits `PAGER` into words itself; git gives it to `sh -c`.
    (
        "PAGER",
        Value::Shell,
        "git, man and others pipe their output through it",
    ),
    ("MANPAGER", Value::Words, "man pipes pages through it"),
    ("GIT_EDITOR", Value::Shell, "git starts it for messages"),
    (
        "GIT_SEQUENCE_EDITOR",
        Value::Shell,
        "`git rebase -i` starts it on its todo list",
    ),
    (
        "EDITOR",
        Value::Shell,
        "git and others start it to edit files",
    ),
    (
        "VISUAL",
        Value::Shell,
        "git and others start it to edit files",
    ),
    (
        "GIT_EXTERNAL_DIFF",
        Value::Shell,
        "git runs it instead of its diff",
    ),
    (
        "PROMPT_COMMAND",
        Value::Shell,
        "an interactive bash runs it before each prompt",
    ),
    (
        "LESSOPEN",
        Value::Shell,
        "less runs it through a shell on every file",
    ),
    (
        "LESSCLOSE",
        Value::Shell,
        "less runs it through a shell after every file",
    ),
    (
        "SYSTEMD_PAGER",
        Value::Shell,
        "systemctl and journalctl pipe their output through it",
    ),
    (
        "SYSTEMD_EDITOR",
        Value::Shell,
        "`systemctl edit` starts it on unit files",
    ),
    ("FCEDIT", Value::Shell, "bash's `fc` runs it on the history"),
    (
        "RSYNC_RSH",
        Value::Words,
        "rsync runs it as its remote shell",
    ),
    ("KUBE_EDITOR", Value::Shell, "`kubectl edit` starts it"),
];

/// Variables whose value bash expands when it starts, substitutions included, to find
/// the file it runs first: `BASH_ENV` (every non-interactive bash) and `ENV` (sh and
/// bash in posix mode, interactive). `BASH_ENV='$(cmd)' bash -c true` runs `cmd`
/// (checked in bash 5.2).
const EXPANDED_VARS: &[&str] = &["BASH_ENV", "ENV"];

/// The shell code assigning `value` to `name` hands to the programs that read it:
/// `None` for other variables and for a bare program name.
pub fn code_value(name: &str, value: &str) -> Option<String> {
    if EXPANDED_VARS.contains(&name) {
        // Read as a word of a command that runs nothing itself, so only what its
        // expansion runs is found.
        return (value.contains("$(") || value.contains('`')).then(|| format!(": {value}"));
    }
    let (_, kind, _) = CODE_VARS.iter().find(|(n, _, _)| *n == name)?;
    // `LESSOPEN='|cmd %s'` pipes the command's output; `||` also for empty output.
    let value = if name == "LESSOPEN" {
        value.trim_start_matches('|')
    } else {
        value
    };
    let start = kind.code_start(value)?;
    value.get(start..).map(str::to_string)
}

/// Shell code the environment of one command hands on: `assignments` are its
/// assignment words (prefixes, and those a wrapper sets: `env X=v cmd`, `export X=v`),
/// `words` the command it runs, in which git's `--config-env=KEY=VAR` takes KEY's value
/// from VAR, and `GIT_CONFIG_KEY_n`/`GIT_CONFIG_VALUE_n` pairs set configuration.
pub fn environment_code(assignments: &[&str], words: &[&str]) -> Vec<String> {
    let split = |a: &&str| -> Option<(String, String)> {
        let (lhs, value) = a.split_once('=')?;
        (!lhs.ends_with('+')).then(|| (assigned_name(a).to_string(), value.to_string()))
    };
    let pairs: Vec<(String, String)> = assignments.iter().filter_map(split).collect();
    let value_of = |name: &str| {
        pairs
            .iter()
            .rev()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    };
    let mut out: Vec<String> = pairs.iter().filter_map(|(n, v)| code_value(n, v)).collect();
    for (n, key) in &pairs {
        let Some(index) = n.strip_prefix("GIT_CONFIG_KEY_") else {
            continue;
        };
        if let Some(value) = value_of(&format!("GIT_CONFIG_VALUE_{index}"))
            && let Some(code) = super::git::config_code(key, value)
        {
            out.push(code);
        }
    }
    let (_, git) = assignment_words(words);
    for (_, key, var) in super::git::config_env(words.get(git..).unwrap_or_default()) {
        if let Some(code) = value_of(&var).and_then(|v| super::git::config_code(&key, v)) {
            out.push(code);
        }
    }
    out
}

/// The assignment words a command sets for what it runs, and the index of the command
/// that really runs: leading assignments, those a wrapper sets (`env A=1 cmd`, `sudo
/// A=1 cmd`), and the arguments of `export`/`declare`/`typeset`/`local`/`readonly`
/// (which set variables of the shell, exported or already in the environment). Other
/// words holding `=` are data (`echo PAGER=x`).
pub fn assignment_words<'w>(words: &[&'w str]) -> (Vec<&'w str>, usize) {
    let mut out = Vec::new();
    let mut i = 0;
    let mut sets_environment = true;
    let mut layers = 0;
    while let Some(&w) = words.get(i) {
        if super::is_assignment(w) {
            if sets_environment {
                out.push(w);
            }
            i += 1;
            continue;
        }
        let name = super::basename(w);
        if matches!(
            name,
            "export" | "declare" | "typeset" | "local" | "readonly"
        ) {
            let rest = words.get(i + 1..).unwrap_or_default();
            out.extend(rest.iter().copied().filter(|w| super::is_assignment(w)));
            break;
        }
        let here = words.get(i..).unwrap_or_default();
        let d = super::describe(here);
        let next = match d.inner {
            Some(k) if k > 0 && layers < super::unwrap::MAX_LAYERS => i + k,
            _ => break,
        };
        sets_environment = matches!(name, "env" | "sudo" | "doas");
        if sets_environment {
            let between = words.get(i + 1..next).unwrap_or_default();
            out.extend(between.iter().copied().filter(|w| super::is_assignment(w)));
        }
        layers += 1;
        i = next;
    }
    (out, i)
}

/// Why assigning `name` changes what a command runs, or `None`.
pub fn changes_what_runs(name: &str) -> Option<&'static str> {
    NAMES
        .iter()
        .find(|(n, _)| *n == name)
        .or_else(|| PREFIXES.iter().find(|(p, _)| name.starts_with(p)))
        .map(|(_, why)| *why)
}

/// Why the assignment word `word` may change what a command does, or `None` for one of
/// `HARMLESS` set to a plain value. A variable neither list names is not known to be
/// harmless: programs and the C library read variables as paths (`TZ=/path`,
/// `NLSPATH`, `HOSTALIASES`), options or modules (`GCONV_PATH`), so it counts.
pub fn assignment_risk(word: &str) -> Option<&'static str> {
    let name = assigned_name(word);
    if let Some(why) = changes_what_runs(name) {
        return Some(why);
    }
    if harmless_assignment(word) {
        return None;
    }
    Some(if HARMLESS.iter().any(|(n, _)| *n == name) {
        "has a value that is not a plain name or switch (a path, a quote, an expansion)"
    } else {
        "is not known to be only a switch or a name (a program may read it as a path, options or code)"
    })
}

/// Variables a command may be prefixed with and still be read as the same command
/// (`RUST_BACKTRACE=1 cargo test`, `CI=true npm test`, `LC_ALL=C sort f`): each is read
/// by the tools that see it only as a switch or a name (of a locale, a zone, a log
/// level), never as a program, a module, a plugin, options or a path. Checked under
/// strace (cargo 1.9x, npm 10, pytest 8): none of these makes the tool start or open
/// anything it did not otherwise; `RUSTC_WRAPPER`, `RUSTFLAGS=-Clinker=`,
/// `CARGO_TARGET_<T>_RUNNER`, `NODE_OPTIONS=--require=`, `npm_config_script_shell`,
/// `PYTEST_ADDOPTS=-p`, `PYTEST_PLUGINS` and `PYTHONWARNINGS=ignore::mod.X` (which
/// imports `mod`) all did, so none of them is here. The project's own code may read
/// any of these, as it may read anything: a build is contained for that reason.
const HARMLESS: &[(&str, &str)] = &[
    (
        "CI",
        "tells tools they run unattended (no watch mode, no prompt)",
    ),
    ("NODE_ENV", "names the mode a Node project runs in"),
    ("FORCE_COLOR", "switches colored output"),
    ("NO_COLOR", "switches colored output off"),
    ("CLICOLOR", "switches colored output"),
    ("CLICOLOR_FORCE", "switches colored output"),
    ("COLUMNS", "is the terminal width"),
    ("LINES", "is the terminal height"),
    ("DEBUG", "names the `debug` module's namespaces to log"),
    ("TZ", "names the time zone"),
    ("LANG", "names the locale"),
    ("LANGUAGE", "names the languages of messages"),
    ("LC_ALL", "names the locale"),
    ("LC_CTYPE", "names the locale of characters"),
    ("LC_COLLATE", "names the locale of sorting"),
    ("LC_MESSAGES", "names the locale of messages"),
    ("LC_NUMERIC", "names the locale of numbers"),
    ("LC_TIME", "names the locale of dates"),
    ("RUST_BACKTRACE", "switches Rust's backtraces on panic"),
    ("RUST_LIB_BACKTRACE", "switches Rust's captured backtraces"),
    ("RUST_LOG", "is the log filter of the program's own logger"),
    (
        "RUST_TEST_THREADS",
        "is the number of threads libtest runs tests on",
    ),
    ("RUST_TEST_NOCAPTURE", "switches libtest's output capture"),
    ("CARGO_TERM_COLOR", "switches cargo's colored output"),
    ("CARGO_TERM_VERBOSE", "switches cargo's verbose output"),
    ("CARGO_TERM_QUIET", "switches cargo's quiet output"),
    ("CARGO_INCREMENTAL", "switches incremental compilation"),
    ("CARGO_BUILD_JOBS", "is the number of jobs cargo runs"),
    ("PYTHONUNBUFFERED", "switches Python's output buffering"),
    (
        "PYTHONDONTWRITEBYTECODE",
        "switches Python's `.pyc` writing off",
    ),
    ("PYTHONHASHSEED", "is the seed of Python's string hashing"),
    ("PYTHONFAULTHANDLER", "switches Python's fault handler"),
    ("PYTHONUTF8", "switches Python's UTF-8 mode"),
];

/// Whether an assignment word is one of `HARMLESS` set to a plain value: `NAME=value`
/// (no `+=`, no subscript), the value of letters, digits and `_ . , : = + @ * -` only.
/// No slash (a `TZ` or a locale name with one is a path the C library opens), no `~`
/// (bash expands it after `=` and `:`), no quote, space or expansion left in it.
pub fn harmless_assignment(word: &str) -> bool {
    let Some((name, value)) = word.split_once('=') else {
        return false;
    };
    HARMLESS.iter().any(|(n, _)| *n == name)
        && value.chars().all(|c| {
            c.is_ascii_alphanumeric()
                || matches!(c, '_' | '.' | ',' | ':' | '=' | '+' | '@' | '*' | '-')
        })
}

/// Variables that add places to a language's module search, set before a build or a
/// script of the project (`PYTHONPATH=. pytest`, `cd pkg && PYTHONPATH=src python -m
/// pytest`): where every place is inside the project, what they load is the project's
/// own code, which the build runs anyway. Anywhere else they load code from there.
const PROJECT_PATHS: &[&str] = &["PYTHONPATH", "NODE_PATH"];

/// Whether an assignment word is one of `PROJECT_PATHS` whose every `:`-separated place
/// is a plain path (no `~`, quote, space or expansion; not empty, which Python reads
/// as the working directory) that resolves, symlinks followed, inside the project.
/// Only a build or a project script may carry one (`effects::verdict`).
pub fn project_path_assignment(
    word: &str,
    cwd: Option<&std::path::Path>,
    ctx: &crate::model::vocab::AnalysisContext,
) -> bool {
    let Some((name, value)) = word.split_once('=') else {
        return false;
    };
    PROJECT_PATHS.contains(&name)
        && value.split(':').all(|place| {
            !place.is_empty()
                && !place.starts_with('~')
                && place.chars().all(|c| {
                    c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '/' | '-' | '+' | '@')
                })
                && crate::model::paths::resolve_word(place, cwd, ctx.home())
                    .is_some_and(|p| crate::model::paths::is_inside(&p, ctx.root()))
        })
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
    fn values_that_are_commands() {
        let code = |a: &[&str], w: &str| {
            let words: Vec<&str> = w.split_whitespace().collect();
            environment_code(a, &words)
        };
        assert_eq!(code(&["GIT_SSH_COMMAND=x y"], "git fetch"), vec!["x y"]);
        assert!(code(&["GIT_SSH_COMMAND=ssh"], "git fetch").is_empty());
        assert!(code(&["GIT_SSH=x y"], "git fetch").is_empty());
        assert_eq!(code(&["LESSOPEN=|x %s"], "less f"), vec!["x %s"]);
        assert_eq!(
            code(&["X=x y"], "git --config-env=core.pager=X log"),
            vec!["x y"]
        );
        assert!(code(&["X=x y"], "git --config-env=user.name=X log").is_empty());
        assert_eq!(
            code(
                &[
                    "GIT_CONFIG_COUNT=1",
                    "GIT_CONFIG_KEY_0=core.pager",
                    "GIT_CONFIG_VALUE_0=x;y"
                ],
                "git log"
            ),
            vec!["x;y"]
        );
        let words: Vec<&str> = "env A=1 PAGER=x sudo B=2 git log"
            .split_whitespace()
            .collect();
        assert_eq!(assignment_words(&words), (vec!["A=1", "PAGER=x", "B=2"], 5));
        let words: Vec<&str> = "echo PAGER=x".split_whitespace().collect();
        assert!(assignment_words(&words).0.is_empty());
        assert_eq!(
            code(&["X=x y"], "sudo git --config-env=core.pager=X log"),
            vec!["x y"]
        );
    }

    #[test]
    fn names_and_families() {
        assert!(changes_what_runs(assigned_name("PATH=/tmp")).is_some());
        assert!(changes_what_runs(assigned_name("LD_PRELOAD=/x.so")).is_some());
        assert!(changes_what_runs(assigned_name("GIT_SSH_COMMAND=x")).is_some());
        assert!(changes_what_runs(assigned_name("PATH+=:/x")).is_some());
        assert!(changes_what_runs(assigned_name("lsblk=1")).is_none());
        assert!(changes_what_runs(assigned_name("RUST_LOG=debug")).is_none());
    }

    #[test]
    fn harmless_prefixes() {
        for ok in [
            "RUST_BACKTRACE=1",
            "CI=true",
            "LC_ALL=C",
            "RUST_LOG=my_crate=debug,hyper::client=info",
            "DEBUG=app:*",
            "NO_COLOR=",
        ] {
            assert!(harmless_assignment(ok), "{ok}");
        }
        for no in [
            "RUSTC_WRAPPER=/tmp/x",
            "NODE_OPTIONS=--require=x",
            "PYTEST_ADDOPTS=-p",
            "TZ=/home/u/.ssh/id_rsa",
            "LANG=../../x",
            "CI+=x",
            "CI[0]=x",
            "TZ=:~",
            "CI=$(id)",
            "CI=a b",
            "FOO=1",
            "CI",
        ] {
            assert!(!harmless_assignment(no), "{no}");
        }
    }
}
