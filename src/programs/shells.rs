//! Shells in the table: their invocation options (single-letter `set` options in `-x`
//! and `+x` form, `-o NAME`/`+o NAME`, bash's `-O NAME`/`+O NAME` and long options,
//! `--init-file F`/`--rcfile F`), and where their code comes from: the `-c` string, a
//! script file, or stdin.
//!
//! Bash reads options up to the first operand (`-` and `--` end them too); with `-c`
//! that operand is the code, otherwise a script path. An option the grammar does not
//! know makes the call opaque: it is never taken as the script path, since a shell
//! whose options we misread could be running any string.

use super::description::{CodeArg, Description};
use super::options::{Abbrev, Arg, Does, Grammar, Opt, l, parse, s, sl};
use super::{Example, Program, Role};

const RC_RUNS: Does = Does::RunsFile("the shell runs the commands of its rc file");

/// bash's invocation options (`bash --help`), plus every `set` letter. `sh` is bash on
/// some systems and dash on others: it gets the union (dash's `-I`, `-q`, `-V` too), so
/// either reading is covered; bash rejecting a dash letter only means nothing runs.
const BASH: &[Opt] = &[
    s('I', Arg::No, Does::Nothing),
    s('q', Arg::No, Does::Nothing),
    s('V', Arg::No, Does::Nothing),
    s('a', Arg::No, Does::Nothing),
    s('b', Arg::No, Does::Nothing),
    s('c', Arg::No, Does::Nothing),
    s('e', Arg::No, Does::Nothing),
    s('f', Arg::No, Does::Nothing),
    s('h', Arg::No, Does::Nothing),
    s('i', Arg::No, Does::Nothing),
    s('k', Arg::No, Does::Nothing),
    s('l', Arg::No, Does::Nothing),
    s('m', Arg::No, Does::Nothing),
    s('n', Arg::No, Does::Nothing),
    s('p', Arg::No, Does::Nothing),
    s('r', Arg::No, Does::Nothing),
    s('s', Arg::No, Does::Nothing),
    s('t', Arg::No, Does::Nothing),
    s('u', Arg::No, Does::Nothing),
    s('v', Arg::No, Does::Nothing),
    s('x', Arg::No, Does::Nothing),
    s('B', Arg::No, Does::Nothing),
    s('C', Arg::No, Does::Nothing),
    s('D', Arg::No, Does::Nothing),
    s('E', Arg::No, Does::Nothing),
    s('H', Arg::No, Does::Nothing),
    s('P', Arg::No, Does::Nothing),
    s('T', Arg::No, Does::Nothing),
    s('o', Arg::Required, Does::Nothing),
    s('O', Arg::Required, Does::Nothing),
    l("debug", Arg::No, Does::Nothing),
    l("debugger", Arg::No, Does::Nothing),
    l("dump-po-strings", Arg::No, Does::Nothing),
    l("dump-strings", Arg::No, Does::Nothing),
    l("help", Arg::No, Does::Nothing),
    l("init-file", Arg::Required, RC_RUNS),
    l("rcfile", Arg::Required, RC_RUNS),
    l("login", Arg::No, Does::Nothing),
    l("noediting", Arg::No, Does::Nothing),
    l("noprofile", Arg::No, Does::Nothing),
    l("norc", Arg::No, Does::Nothing),
    l("posix", Arg::No, Does::Nothing),
    l("pretty-print", Arg::No, Does::Nothing),
    l("restricted", Arg::No, Does::Nothing),
    l("verbose", Arg::No, Does::Nothing),
    l("version", Arg::No, Does::Nothing),
];

/// dash and busybox ash: `set` letters, `-c`, `-s`, `-l`, `-o NAME`; no long options.
const DASH: &[Opt] = &[
    s('a', Arg::No, Does::Nothing),
    s('b', Arg::No, Does::Nothing),
    s('c', Arg::No, Does::Nothing),
    s('C', Arg::No, Does::Nothing),
    s('e', Arg::No, Does::Nothing),
    s('E', Arg::No, Does::Nothing),
    s('f', Arg::No, Does::Nothing),
    s('h', Arg::No, Does::Nothing),
    s('i', Arg::No, Does::Nothing),
    s('I', Arg::No, Does::Nothing),
    s('l', Arg::No, Does::Nothing),
    s('m', Arg::No, Does::Nothing),
    s('n', Arg::No, Does::Nothing),
    s('p', Arg::No, Does::Nothing),
    s('q', Arg::No, Does::Nothing),
    s('s', Arg::No, Does::Nothing),
    s('u', Arg::No, Does::Nothing),
    s('v', Arg::No, Does::Nothing),
    s('V', Arg::No, Does::Nothing),
    s('x', Arg::No, Does::Nothing),
    s('o', Arg::Required, Does::Nothing),
];

/// ksh, mksh, yash, zsh: the common `set` letters, `-o NAME`. Their long options
/// (zsh's `--emacs`) are not listed: such a call is opaque.
const KSH: &[Opt] = &[
    s('a', Arg::No, Does::Nothing),
    s('b', Arg::No, Does::Nothing),
    s('c', Arg::No, Does::Nothing),
    s('C', Arg::No, Does::Nothing),
    s('e', Arg::No, Does::Nothing),
    s('f', Arg::No, Does::Nothing),
    s('h', Arg::No, Does::Nothing),
    s('i', Arg::No, Does::Nothing),
    s('k', Arg::No, Does::Nothing),
    s('l', Arg::No, Does::Nothing),
    s('m', Arg::No, Does::Nothing),
    s('n', Arg::No, Does::Nothing),
    s('p', Arg::No, Does::Nothing),
    s('r', Arg::No, Does::Nothing),
    s('s', Arg::No, Does::Nothing),
    s('u', Arg::No, Does::Nothing),
    s('v', Arg::No, Does::Nothing),
    s('x', Arg::No, Does::Nothing),
    s('X', Arg::No, Does::Nothing),
    s('o', Arg::Required, Does::Nothing),
];

/// fish: `-c CODE` and `-C CODE` take their code as a value (getopt_long).
const FISH: &[Opt] = &[
    sl('c', "command", Arg::Required, Does::Code),
    sl('C', "init-command", Arg::Required, Does::Code),
    sl('d', "debug", Arg::Required, Does::Nothing),
    sl('o', "debug-output", Arg::Required, Does::Writes),
    sl('f', "features", Arg::Required, Does::Nothing),
    sl('i', "interactive", Arg::No, Does::Nothing),
    sl('l', "login", Arg::No, Does::Nothing),
    sl('n', "no-execute", Arg::No, Does::Nothing),
    sl('N', "no-config", Arg::No, Does::Nothing),
    sl('p', "profile", Arg::Required, Does::Writes),
    sl('P', "private", Arg::No, Does::Nothing),
    sl('h', "help", Arg::No, Does::Nothing),
    sl('v', "version", Arg::No, Does::Nothing),
];

/// csh and tcsh (`tcsh(1)`): `-c` reads the code from the first operand, as in bash;
/// tcsh's `-D NAME=VALUE` takes a value. Their code is no bash: see `describe`.
const CSH: &[Opt] = &[
    s('b', Arg::No, Does::Nothing),
    s('c', Arg::No, Does::Nothing),
    s('d', Arg::No, Does::Nothing),
    s('e', Arg::No, Does::Nothing),
    s('f', Arg::No, Does::Nothing),
    s('F', Arg::No, Does::Nothing),
    s('i', Arg::No, Does::Nothing),
    s('l', Arg::No, Does::Nothing),
    s('m', Arg::No, Does::Nothing),
    s('n', Arg::No, Does::Nothing),
    s('q', Arg::No, Does::Nothing),
    s('s', Arg::No, Does::Nothing),
    s('t', Arg::No, Does::Nothing),
    s('v', Arg::No, Does::Nothing),
    s('V', Arg::No, Does::Nothing),
    s('x', Arg::No, Does::Nothing),
    s('X', Arg::No, Does::Nothing),
    s('D', Arg::Required, Does::Nothing),
];

/// at and batch (`at(1)`, at 3.2): they read the commands of a job from their input,
/// or the file of `-f`, and `/bin/sh` runs them later; `-l`, `-r`, `-d`, `-c` and `-V`
/// list, remove or print jobs instead. glibc's getopt: options anywhere.
const AT: &[Opt] = &[
    s('V', Arg::No, Does::Ends),
    s('q', Arg::Required, Does::Nothing),
    s(
        'f',
        Arg::Required,
        Does::RunsFile("schedules the commands of the file, which the shell runs later"),
    ),
    s('u', Arg::Required, Does::Nothing),
    s('t', Arg::Required, Does::Nothing),
    s('m', Arg::No, Does::Nothing),
    s('M', Arg::No, Does::Nothing),
    s('b', Arg::No, Does::Nothing),
    s('v', Arg::No, Does::Nothing),
    s('l', Arg::No, Does::Ends),
    s('r', Arg::No, Does::Ends),
    s('d', Arg::No, Does::Ends),
    s('c', Arg::No, Does::Ends),
];

const fn shell(
    names: &'static [&'static str],
    opts: &'static [Opt],
    ex: &'static [Example],
) -> Program {
    Program {
        names,
        grammar: Grammar::wrapper(opts, Abbrev::None).plus(),
        role: Role::Shell,
        examples: ex,
    }
}

pub const PROGRAMS: &[Program] = &[
    shell(
        &["bash", "sh", "rbash"],
        BASH,
        &[
            Example::new("bash -c x").code("x"),
            Example::new("bash +o history -c x").code("x"),
            Example::new("bash -O nullglob -c x").code("x"),
            Example::new("bash --norc --noprofile -c x").code("x"),
            Example::new("bash -oc posix x").code("x"),
            Example::new("bash --init-file F -c x")
                .code("x")
                .runs()
                .reads(&["F"]),
            Example::new("bash --weird -c x").code("x").opaque(),
            Example::new("bash -Z x").opaque(),
            Example::new("bash - -c"),
            Example::new("sh -O nullglob -c x").code("x"),
        ],
    ),
    shell(
        &["dash", "ash", "posh"],
        DASH,
        &[
            Example::new("dash -e -c x").code("x"),
            Example::new("dash -O x -c y").opaque().code("y"),
        ],
    ),
    shell(
        &["ksh", "mksh", "pdksh", "ksh93", "yash", "zsh"],
        KSH,
        &[
            Example::new("zsh -c x").code("x"),
            Example::new("zsh --emacs -c x").code("x").opaque(),
        ],
    ),
    Program {
        names: &["at", "batch"],
        grammar: Grammar::new(AT, Abbrev::None),
        role: Role::Shell,
        examples: &[
            Example::new("at now"),
            Example::new("at -f job.sh now").runs().reads(&["job.sh"]),
            Example::new("at -l"),
            Example::new("batch -Z").opaque(),
        ],
    },
    Program {
        names: &["csh", "tcsh"],
        grammar: Grammar::wrapper(CSH, Abbrev::None),
        role: Role::Shell,
        examples: &[
            Example::new("tcsh -fc x").code("x").opaque(),
            Example::new("csh -c x").code("x").opaque(),
        ],
    },
    Program {
        names: &["fish"],
        grammar: Grammar::new(FISH, Abbrev::Unique),
        role: Role::Shell,
        examples: &[Example::new("fish -c x").code("x").opaque()],
    },
];

/// What a shell invocation runs. `words[0]` is the shell.
pub fn describe(p: &'static Program, words: &[&str], d: &mut Description) {
    let name = super::basename(words.first().copied().unwrap_or_default());
    if p.names.contains(&"fish") {
        let parsed = parse(&p.grammar, words, 1);
        d.apply_options(&parsed, words, name);
        d.opaque.push(format!(
            "`{name}` code, which is not bash: KHAELOR reads it as bash but cannot verify it"
        ));
        if d.code.is_empty() && parsed.operands.is_empty() {
            d.stdin_code = true;
        }
        return;
    }
    if p.names.contains(&"at") {
        // The job's commands come from the input unless `-f` names a file; `-l` and
        // the like schedule nothing.
        let parsed = parse(&p.grammar, words, 1);
        d.apply_options(&parsed, words, name);
        for u in &parsed.unknown {
            d.opaque.push(format!(
                "`{name}` with the option `{u}`, which KHAELOR does not know"
            ));
        }
        if !d.ends && !parsed.has_short('f') {
            d.stdin_code = true;
        }
        return;
    }
    if p.names.contains(&"csh") {
        d.opaque.push(format!(
            "`{name}` code, which is not bash: KHAELOR reads it as bash but cannot verify it"
        ));
    }
    let parsed = parse(&p.grammar, words, 1);
    d.apply_options(&parsed, words, name);
    for u in &parsed.unknown {
        d.opaque.push(format!(
            "`{name}` with the option `{u}`, which KHAELOR does not know"
        ));
    }
    let mut end = parsed.end;
    // `bash - x`: a lone `-` ends the options, like `--`.
    if words.get(end) == Some(&"-") {
        end += 1;
    }
    let has_c = parsed.has_short('c');
    if !parsed.unknown.is_empty() && !has_c {
        // Options we cannot read: whether one of them took the next word as its value
        // is unknown, so the word after any later `-c` cluster is the candidate code
        // (the floor checks it; the call itself is opaque).
        let cluster_c = |w: &&str| w.starts_with('-') && !w.starts_with("--") && w.contains('c');
        if let Some(k) = words.iter().skip(1).position(cluster_c)
            && words.get(k + 2).is_some()
        {
            d.code.push(CodeArg {
                word: k + 2,
                offset: 0,
                join_rest: false,
            });
        }
        return;
    }
    match (has_c, words.get(end)) {
        (true, Some(_)) => d.code.push(CodeArg {
            word: end,
            offset: 0,
            join_rest: false,
        }),
        (true, None) => d.opaque.push(format!("`{name} -c` without a command")),
        (false, Some(_)) if parsed.has_short('s') => d.stdin_code = true,
        (false, Some(_)) => d.script = Some(end),
        (false, None) => d.stdin_code = true,
    }
}
