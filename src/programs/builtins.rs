//! Bash builtins whose options run code, a command or a file (each checked in bash 5.2
//! with a harmless marker): `mapfile -C CALLBACK` and `compgen -C CMD` evaluate code,
//! `compgen -W LIST` expands its word list (substitutions run), `compgen -F FUNC` calls a
//! function, `enable -f FILE` loads a shared object into the shell, `hash -p FILE NAME`
//! makes later `NAME` commands run FILE, and `fc` without `-l` runs commands from the
//! history list (`history -s CMD; fc -s` runs CMD), which is opaque.
//!
//! `declare`, `typeset`, `local` and `readonly` parse an operand shaped `NAME=(…)` as a
//! compound array assignment when the variable is (or is declared) an array, which
//! expands its inside again, substitutions included: `declare -a 'a=($(id))'` runs `id`
//! although the grammar reads a quoted string. The operand is read as that assignment.
//! (`export` does not: checked with an array declared first.)
//!
//! `complete -C/-F` and `bind -x` only register code for interactive completion and key
//! presses, which a `bash -c` never reaches: they are not listed.

use super::description::{CodeArg, Description};
use super::options::{Arg, Does, Grammar, Opt, parse, s};
use super::{Abbrev, Example, Program, Role, basename};

/// Bash's builtins and keywords (bash 5.2, `compgen -b -k`): bash runs them itself,
/// never looking them up on `PATH` and never reaching `execve` (the bash oracle expects
/// no executed argv for them; `search_path` looks up no file for them).
pub const NAMES: &[&str] = &[
    ".",
    ":",
    "[",
    "[[",
    "]]",
    "alias",
    "bg",
    "bind",
    "break",
    "builtin",
    "caller",
    "case",
    "cd",
    "command",
    "compgen",
    "complete",
    "compopt",
    "continue",
    "coproc",
    "declare",
    "dirs",
    "disown",
    "do",
    "done",
    "echo",
    "elif",
    "else",
    "enable",
    "esac",
    "eval",
    "exec",
    "exit",
    "export",
    "false",
    "fc",
    "fg",
    "fi",
    "for",
    "function",
    "getopts",
    "hash",
    "help",
    "history",
    "if",
    "in",
    "jobs",
    "kill",
    "let",
    "local",
    "logout",
    "mapfile",
    "popd",
    "printf",
    "pushd",
    "pwd",
    "read",
    "readarray",
    "readonly",
    "return",
    "select",
    "set",
    "shift",
    "shopt",
    "source",
    "suspend",
    "test",
    "then",
    "time",
    "times",
    "trap",
    "true",
    "type",
    "typeset",
    "ulimit",
    "umask",
    "unalias",
    "unset",
    "until",
    "wait",
    "while",
    "{",
    "}",
    "!",
];

const N: Arg = Arg::No;
const V: Arg = Arg::Required;
const NO: Does = Does::Nothing;

const MAPFILE: &[Opt] = &[
    s('d', V, NO),
    s('n', V, NO),
    s('O', V, NO),
    s('s', V, NO),
    s('t', N, NO),
    s('u', V, NO),
    s('C', V, Does::Code),
    s('c', V, NO),
];

const COMPGEN: &[Opt] = &[
    s('a', N, NO),
    s('b', N, NO),
    s('c', N, NO),
    s('d', N, NO),
    s('e', N, NO),
    s('f', N, NO),
    s('g', N, NO),
    s('j', N, NO),
    s('k', N, NO),
    s('s', N, NO),
    s('u', N, NO),
    s('v', N, NO),
    s('o', V, NO),
    s('A', V, NO),
    s('G', V, NO),
    // Expanded like words (`compgen -W '$(id)'` runs `id`): see `describe`.
    s('W', V, NO),
    s(
        'F',
        V,
        Does::Runs("calls the shell function to generate completions"),
    ),
    s('C', V, Does::Code),
    s('X', V, NO),
    s('P', V, NO),
    s('S', V, NO),
    s('V', V, NO),
];

const ENABLE: &[Opt] = &[
    s('a', N, NO),
    s('d', N, NO),
    s('n', N, NO),
    s('p', N, NO),
    s('s', N, NO),
    s(
        'f',
        V,
        Does::RunsFile("loads the shared object into the shell, which runs its code"),
    ),
];

const HASH: &[Opt] = &[
    s('d', N, NO),
    s('l', N, NO),
    s('r', N, NO),
    s('t', N, NO),
    s(
        'p',
        V,
        Does::Runs("makes later commands of the given names run the file"),
    ),
];

const FC: &[Opt] = &[
    s('e', V, NO),
    s('l', N, NO),
    s('n', N, NO),
    s('r', N, NO),
    s('s', N, NO),
];

const DECLARE: &[Opt] = &[
    s('a', N, NO),
    s('A', N, NO),
    s('f', N, NO),
    s('F', N, NO),
    s('g', N, NO),
    s('i', N, NO),
    s('I', N, NO),
    s('l', N, NO),
    s('n', N, NO),
    s('p', N, NO),
    s('r', N, NO),
    s('t', N, NO),
    s('u', N, NO),
    s('x', N, NO),
];

/// Builtins take no long options and stop at their first operand (`internal_getopt`).
const fn builtin(
    names: &'static [&'static str],
    opts: &'static [Opt],
    examples: &'static [Example],
) -> Program {
    Program {
        names,
        grammar: Grammar::wrapper(opts, Abbrev::None),
        role: Role::Tool,
        examples,
    }
}

pub const PROGRAMS: &[Program] = &[
    builtin(
        &["mapfile", "readarray"],
        MAPFILE,
        &[
            Example::new("mapfile -C id -c 1 a").code("id"),
            Example::new("readarray -t -C id a").code("id"),
            Example::new("mapfile -t lines"),
        ],
    ),
    builtin(
        &["compgen"],
        COMPGEN,
        &[
            Example::new("compgen -C id x").code("id"),
            Example::new("compgen -W $(id) x").code("$(id)"),
            Example::new("compgen -F f x").runs(),
            Example::new("compgen -W a_b -- a"),
            Example::new("compgen -c ls"),
        ],
    ),
    builtin(
        &["enable"],
        ENABLE,
        &[
            Example::new("enable -f /tmp/x.so x")
                .runs()
                .reads(&["/tmp/x.so"]),
            Example::new("enable -n echo"),
        ],
    ),
    builtin(
        &["hash"],
        HASH,
        &[
            Example::new("hash -p /bin/sh ls").runs(),
            Example::new("hash -r"),
        ],
    ),
    builtin(
        &["declare", "typeset", "local", "readonly"],
        DECLARE,
        &[
            Example::new("declare -a a=($(id))").code("a=($(id))"),
            Example::new("local -a x a+=(`id`)").code("a+=(`id`)"),
            Example::new("readonly -A m=([k]=$(id))").code("m=([k]=$(id))"),
            Example::new("declare -a a=(1)").code("a=(1)"),
            Example::new("declare -r x=1"),
            Example::new("declare x=$(id)"),
        ],
    ),
    builtin(
        &["fc"],
        FC,
        &[
            Example::new("fc -s").opaque(),
            Example::new("fc -e vi 3").opaque(),
            Example::new("fc -l"),
            Example::new("fc -ln -5"),
        ],
    ),
];

/// Whether `p` is one of this family's entries (by its names: a `const` table has no
/// address of its own to compare).
pub fn owns(p: &Program) -> bool {
    PROGRAMS.iter().any(|b| b.names == p.names)
}

/// Reads a builtin's words by its entry, plus what data cannot say: `compgen -W`'s list
/// is code when it holds a command substitution (it is expanded like words, so only a
/// substitution runs anything), and `fc` runs history commands unless it lists them.
pub fn describe(p: &'static Program, words: &[&str], d: &mut Description) {
    let name = basename(words.first().copied().unwrap_or_default());
    let parsed = parse(&p.grammar, words, 1);
    d.apply_options(&parsed, words, name);
    if name == "compgen" {
        for f in parsed.found.iter().filter(|f| f.opt.short == Some('W')) {
            if let (Some(v), Some((word, offset))) = (&f.value, f.value_at)
                && (v.contains("$(") || v.contains('`'))
            {
                d.code.push(CodeArg {
                    word,
                    offset,
                    join_rest: false,
                });
            }
        }
    }
    // Whether the variable is an array is only known when it runs (an earlier `declare
    // -a`, a nameref), so every operand of that shape is read as the assignment bash may
    // parse it as; a plain string value holds nothing more than the grammar saw.
    if p.names.contains(&"declare") {
        for (word, w) in words.iter().enumerate().skip(1) {
            if is_compound_assignment(w) {
                d.code.push(CodeArg {
                    word,
                    offset: 0,
                    join_rest: false,
                });
            }
        }
    }
    // Which commands the history list holds is only known when it runs (`history -s`
    // adds any text): like `eval` of an unknown string, opaque.
    if name == "fc" && !parsed.has_short('l') {
        d.opaque.push(
            "`fc` runs commands from the history list (after an editor, with -e)".to_string(),
        );
    }
}

/// `NAME=(…`, `NAME+=(…`, `NAME[SUB]=(…`: an operand `declare` may parse as a compound
/// array assignment. The closing parenthesis is not required: without it bash reports a
/// syntax error, and reading the text as code then fails closed.
fn is_compound_assignment(word: &str) -> bool {
    let Some((lhs, value)) = word.split_once('=') else {
        return false;
    };
    let lhs = lhs.strip_suffix('+').unwrap_or(lhs);
    let name = lhs.split_once('[').map_or(lhs, |(n, _)| n);
    value.starts_with('(')
        && name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}
