//! Plan -> requests: what each simple command of a plan does, by its words.
//!
//! Turns the program table's reading of a command (`table::describe`: wrappers looked
//! through, code strings, options that run, read or write something, opaque parts) into
//! capability requests, and adds what only words can say here: network and git, file
//! writes (redirects, filesystem verbs, `sed -i`, `git --output`, `find -delete`), file
//! reads of read-only commands, `find -exec`. Code strings go back to the engine to be
//! parsed again. Works on words only.

use std::path::{Path, PathBuf};

mod programs;

use super::walk::{Cwd, Redirect, RedirectKind, SimpleCommand};
use crate::floor;
use crate::model::paths;
use crate::model::vocab::{AnalysisContext, Capability, CapabilityRequest, HardlineHit, Part};
use crate::programs::readonly::Verified;
use crate::programs::{self as table, Description, Role, basename};
use crate::shell::arith;
use programs::{
    READERS, cp_sources, flag_values, fs_writes, git_effects, reader_effects, sed_effects,
};

/// What the commands of one analysis add up to.
#[derive(Debug, Default)]
pub(crate) struct Effects {
    /// A command name found a file of the project on the caller's PATH
    /// (`project_program_request`): the command earns no "always".
    pub path_programs: bool,
    pub parts: Vec<Part>,
    pub requests: Vec<CapabilityRequest>,
    pub notes: Vec<String>,
    pub hardline: Option<HardlineHit>,
    /// Code strings to parse again (`sh -c '…'`, `eval '…'`), with the cwd they run in.
    pub code: Vec<(String, Cwd)>,
    /// Code a known program runs for an option, a configuration value or a variable
    /// (`tar -I CMD`, `git -c core.pager=CMD`, `PAGER=CMD git log`): parsed again like
    /// `code`, after the class is decided (the option's own request already asks).
    pub option_code: Vec<(String, Cwd)>,
    /// Code that could not be read (dynamic `-c` strings, `source FILE`, too deep).
    pub opaque: Vec<String>,
    /// Why a command's own words cannot be read (a brace bomb): the command is
    /// obfuscated, as with the plan's opacities.
    pub unreadable: Vec<String>,
    /// A wrapper was looked through, or a path word holds a literal wildcard: no always
    /// pattern at all (a `*` in a subject would become a wildcard in the offered pattern,
    /// and the rule syntax has no escape for it).
    pub wrapped: bool,
    /// Inline code or an interpreter fed from a heredoc: never more than exact patterns.
    pub inline_code: bool,
    /// An interpreter or shell whose input is redirected may read its program from
    /// there, which the command's text does not show: no always pattern at all.
    pub stdin_program: bool,
    /// A flag made a reader run or write something.
    pub escalated: bool,
    /// A reader the verified table describes whose words it could not read (an option
    /// it does not list, an abbreviation): what it reads is unknown, so no always
    /// pattern may make it silent (`egrep -r --cou x` reads every file below).
    pub unread_reader: bool,
    /// Commands of this plan may be verified: set for the top-level plan
    /// when no statement assigns a variable; never for code strings.
    pub verifying: bool,
    /// The command being read is a verified `find … -exec PROG … {} +` or `… | xargs
    /// -0 PROG …`: the command it runs is verified with it (its reads are the walk's).
    composed: bool,
    /// The last command read, when it is a verified lister of names (where it starts,
    /// what it prints, its cwd): the input of an `xargs` piped right after it.
    stage: Option<(usize, table::composed::Producer, Cwd)>,
    /// Functions the command defines: a call of one runs its body, not the program.
    pub functions: Vec<String>,
    /// Per `process.execute` subject, what every command with that text was found to
    /// be (`None`: not verified); applied to the requests by `mark_verified`.
    pub verdicts: Vec<(String, Option<crate::model::vocab::Verdict>)>,
    /// Words of the command being read that hold glob characters only inside quotes
    /// (`cat '/tmp/a*'`): literal names, whose location is known.
    pub literal: Vec<String>,
    /// The commands (by `process.execute` subject) that remove whole directories git
    /// can give back: their verdict holds only when nothing else in the plan writes,
    /// which could first move new work into the tree (`mv notes src/ && rm -rf src`).
    removals: Vec<String>,
    /// Glob operands of the command being read that were expanded against the file
    /// system for its verdict: each match is a read of its own, so the pattern itself
    /// is not read again as an unknown path.
    pub globbed: Vec<String>,
    /// Glob operands of an in-project edit expanded for its verdict: each match is a
    /// write of its own, so the pattern itself is not written again as an unknown path.
    globbed_writes: Vec<String>,
    /// The repositories git commands of this plan use, by `--git-dir`, `--work-tree`
    /// and cwd: found once for the verdict and the effects.
    git_repos: Vec<GitRepoKey>,
    /// The `process.execute` request of the command being read (the innermost one
    /// once wrappers are looked through): where a domain pack's hit goes.
    running: Option<usize>,
    /// What a here-document or here-string feeds the command being read.
    inline_input: Option<String>,
}

type GitRepoKey = (
    (Option<String>, Option<String>, Option<PathBuf>),
    programs::GitRepo,
);

impl Effects {
    fn note(&mut self, n: String) {
        if !self.notes.contains(&n) {
            self.notes.push(n);
        }
    }

    pub(crate) fn push(&mut self, r: CapabilityRequest) {
        self.push_at(r);
    }

    /// Pushes a request unless one with its capability and subject is there; returns
    /// where that request is.
    fn push_at(&mut self, r: CapabilityRequest) -> usize {
        match self
            .requests
            .iter()
            .position(|x| x.capability == r.capability && x.subject == r.subject)
        {
            Some(i) => i,
            None => {
                self.requests.push(r);
                self.requests.len() - 1
            }
        }
    }

    /// Marks the running command's request with a domain pack's hit (the most severe
    /// when one text is read twice).
    fn pack_hit(&mut self, hit: crate::model::vocab::PackHit) {
        let Some(r) = self.running.and_then(|i| self.requests.get_mut(i)) else {
            return;
        };
        if r.pack.as_ref().is_none_or(|p| p.severity < hit.severity) {
            r.pack = Some(hit);
        }
    }

    fn hardline(&mut self, hit: Option<HardlineHit>) {
        if self.hardline.is_none() {
            self.hardline = hit;
        }
    }
}

/// Devices a redirect may name without touching a file.
const HARMLESS_DEVICES: &[&str] = &[
    "/dev/null",
    "/dev/stdout",
    "/dev/stderr",
    "/dev/stdin",
    "/dev/tty",
    "/dev/zero",
];

/// Interpreters whose program can come from a heredoc or a flag.
const INTERPRETERS: &[&str] = &[
    "python",
    "python2",
    "python3",
    "node",
    "nodejs",
    "perl",
    "ruby",
    "php",
    "deno",
    "bun",
    "lua",
    "Rscript",
    "osascript",
    "sh",
    "bash",
    "zsh",
    "dash",
    "ksh",
    "fish",
    "awk",
    "gawk",
    "mawk",
    "irb",
];

/// `history -a`/`-w [FILE]` write the history file, `-r`/`-n [FILE]` read it: FILE, or
/// `$HISTFILE`, whose value (`~/.bash_history` by default) is the shell's, so only known
/// when it runs (the oracle saw `history -w` write `$HOME/.history`).
fn history_effects(words: &[String], cwd: &Cwd, ctx: &AnalysisContext, fx: &mut Effects) {
    let flags: String = words
        .iter()
        .skip(1)
        .take_while(|w| w.starts_with('-') && w.len() > 1 && *w != "--")
        .flat_map(|w| w.chars().skip(1))
        .collect();
    let file = words
        .iter()
        .skip(1)
        .find(|w| !w.starts_with('-'))
        .map(String::as_str)
        .unwrap_or("$HISTFILE");
    if flags.contains(['a', 'w']) {
        write_request(file, cwd, ctx, fx);
    }
    if flags.contains(['r', 'n']) {
        read_request(file, cwd, ctx, fx);
    }
}

/// Builtins that evaluate an array subscript in a name they are given (an assignment,
/// a variable to set or test) as arithmetic.
const ARITHMETIC_NAMES: &[&str] = &[
    "let",
    "declare",
    "typeset",
    "local",
    "export",
    "readonly",
    "printf",
    "read",
    "test",
    "[",
    "unset",
    "wait",
    "mapfile",
    "readarray",
];

/// Builtins whose operands, whatever they turn out to be, only print, compare or move
/// the shell itself: a test reads no file's content (the strings a test expands again
/// are code the walk reads on its own), `echo`/`printf` print (a redirect of theirs is
/// its own request), `cd` only changes where later parts run (which then count as
/// unknown).
const OPERANDS_INERT: &[&str] = &[
    "[[", "[", "test", "echo", "printf", "true", "false", ":", "cd", "exit", "return", "shift",
];

/// Whether `cp`/`mv`/`ln`/`install` words ask for a backup of what they replace: `-b`
/// or `-S` in a cluster of short options, `--backup[=…]`, `--suffix[=…]` (read loosely:
/// a letter inside another option's value only makes it ask).
fn makes_backup(words: &[String]) -> bool {
    words.iter().skip(1).take_while(|w| *w != "--").any(|w| {
        w.starts_with("--backup")
            || w.starts_with("--suffix")
            || (w.starts_with('-') && !w.starts_with("--") && w.contains(['b', 'S']))
    })
}

/// Whether `ln` words force (`-f`, `--force`) a link onto a name that may exist: the
/// destination operand exists now (a directory then holds the name), or it is given by
/// `-t`/`--target-directory`, or it is unknown.
fn forces_over_existing(words: &[String], cwd: &Cwd, ctx: &AnalysisContext) -> bool {
    let opts = || words.iter().skip(1).take_while(|w| *w != "--");
    let short = |w: &String| w.starts_with('-') && !w.starts_with("--");
    if !opts().any(|w| w == "--force" || (short(w) && w.contains('f'))) {
        return false;
    }
    if opts().any(|w| w.starts_with("--target-directory") || (short(w) && w.contains('t'))) {
        return true;
    }
    let Some(dest) = words.iter().skip(1).rev().find(|w| !w.starts_with('-')) else {
        return true;
    };
    resolve(dest, cwd, ctx).is_none_or(|p| std::fs::symlink_metadata(p).is_ok())
}

/// The directories `mkdir -p` (or `--parents`) would make above its operands: each
/// ancestor of an operand, below the first one that exists now, as an absolute path.
fn mkdir_parents(words: &[String], cwd: &Cwd, ctx: &AnalysisContext) -> Vec<String> {
    let parents = words.iter().skip(1).any(|w| {
        w == "--parents" || (w.starts_with('-') && !w.starts_with("--") && w.contains('p'))
    });
    let Some(dir) = cwd.path() else {
        return Vec::new();
    };
    if !parents {
        return Vec::new();
    }
    let mut out = Vec::new();
    for op in programs::operands(words, &["-m", "--mode", "--context"]) {
        let Some(written) = paths::expand_home(&op, ctx.home()) else {
            continue;
        };
        out.extend(
            table::edits::missing_parents(&dir.join(written))
                .iter()
                .map(|p| p.display().to_string()),
        );
    }
    out
}

/// The words bash passes: each operand written as a plain brace expression
/// (`mkdir -p src/{a,b}`) expanded as bash expands it (`Word::braces`); the command
/// name, and a word that would build too many, as written.
fn brace_expanded(cmd: &SimpleCommand) -> Vec<String> {
    let mut out = Vec::with_capacity(cmd.words.len());
    for (i, w) in cmd.words.iter().enumerate() {
        match (i > 0 && w.braces)
            .then(|| crate::shell::braces::expand(&w.text))
            .flatten()
        {
            Some(words) => out.extend(words),
            None => out.push(w.text.clone()),
        }
    }
    out
}

fn join(words: &[String]) -> String {
    words.join(" ")
}

/// A verdict for a command whose name bash may find as a file of the project on the
/// caller's `PATH` (`programs::search_path`): the table's verdicts are the system
/// program's, so what runs is the project's own code, contained like a script of it
/// and never allowed outright. Code on the command line stays contained as it was.
fn on_search_path(
    v: crate::model::vocab::Verdict,
    name: Option<&String>,
    cwd: Option<&Path>,
    ctx: &AnalysisContext,
) -> crate::model::vocab::Verdict {
    use crate::model::vocab::Verdict;
    match v {
        // The programs a verified one runs itself are looked up on the same PATH.
        Verdict::ReadOnly | Verdict::ProjectBuild | Verdict::ProjectWrite
            if name.is_some_and(|n| {
                std::iter::once(n.as_str())
                    .chain(table::readonly::helpers(basename(n)).iter().copied())
                    .any(|p| crate::programs::search_path::project_program(p, cwd, ctx).is_some())
            }) =>
        {
            Verdict::ProjectScript
        }
        v => v,
    }
}

/// A command whose name bash finds as a file of the project runs that file: a
/// request of its own names the file, so no rule that allows the system's program by
/// its name (the defaults' `cat *`, `git status`) covers it. It is contained like a
/// script of the project where the presets contain those, and asks elsewhere, with no
/// "always": an approval of the name must not stand for the file (and a host's own
/// dialog, which may take `cat` for a reader, is not left to answer it).
fn project_program_request(
    words: &[String],
    cwd: Option<&Path>,
    ctx: &AnalysisContext,
    fx: &mut Effects,
) {
    let Some(file) = words
        .first()
        .and_then(|n| crate::programs::search_path::project_program(n, cwd, ctx))
    else {
        return;
    };
    let mut subject = file.display().to_string();
    for w in words.iter().skip(1) {
        subject.push(' ');
        subject.push_str(w);
    }
    fx.note(format!(
        "`{}` is `{}` on this PATH, a file of the project",
        words.first().map(String::as_str).unwrap_or_default(),
        file.display()
    ));
    fx.push_at(CapabilityRequest::new(
        Capability::ProcessExecute,
        subject.clone(),
        format!("Run {subject}"),
    ));
    fx.verdicts
        .push((subject, Some(crate::model::vocab::Verdict::ProjectScript)));
    fx.path_programs = true;
}

/// Whether a write of this command lands where the caller's `PATH` finds programs in
/// the project (`programs::search_path::plants_program`): a name after it may then run
/// the file written, so no part of the command keeps its verdict.
pub(crate) fn plants_program(requests: &[CapabilityRequest], ctx: &AnalysisContext) -> bool {
    use crate::programs::search_path;
    if !ctx.search_path_reaches_project() {
        return false;
    }
    let entries = search_path::project_entries(ctx);
    if entries.dirs.is_empty() && entries.relative.is_empty() {
        return false;
    }
    requests.iter().any(|r| {
        r.capability == Capability::FileWriteProject
            && search_path::plants_program(Path::new(&r.subject), &entries, ctx)
    })
}

/// Adds everything one simple command does.
pub(crate) fn command_effects(cmd: &SimpleCommand, ctx: &AnalysisContext, fx: &mut Effects) {
    let words = brace_expanded(cmd);
    if crate::shell::braces::over_budget(&words) {
        // bash builds every word of a brace expansion before the command runs: past the
        // budget it exhausts memory (`ls {0..999999999}`). The words are never
        // expanded here either; the command is opaque, so it asks and earns no pattern.
        let why = format!(
            "builds more than {} words by brace expansion, all in memory before it runs",
            crate::shell::braces::MAX_COMMAND_WORDS
        );
        if !fx.unreadable.contains(&why) {
            fx.unreadable.push(why);
        }
    }
    fx.globbed.clear();
    fx.globbed_writes.clear();
    fx.literal = cmd
        .words
        .iter()
        .chain(cmd.redirects.iter().filter_map(|r| r.target.as_ref()))
        // The walk flags unquoted globs, not brace expressions (no node for them), so
        // a word with one stays a pattern.
        .filter(|w| !w.pattern && !w.dynamic && is_pattern(&w.text) && !has_braces(&w.text))
        .map(|w| w.text.clone())
        .collect();
    let cwd = cmd.cwd.clone();
    fx.parts.push(Part {
        words: words.clone(),
        text: cmd.text.clone(),
        cwd: cwd.path().map(|p| p.display().to_string()),
    });
    // The subject is empty only for a bare redirection (`> f`): nothing runs.
    fx.running = (!cmd.text.is_empty()).then(|| {
        let mut run = CapabilityRequest::new(
            Capability::ProcessExecute,
            cmd.text.clone(),
            format!("Run {}", cmd.text),
        );
        // An operand only known when it runs (`ls "$dir"`, `git show $REV`) may name
        // any place or be any option, which no rule written for the command's text can
        // vouch for: `ls ~/.ssh` asks, so `ls $HOME/.ssh` must too. A function of
        // the command's own takes it as `$1`, which its body, read in full, already
        // counts wherever it is used; a builtin of `OPERANDS_INERT` does nothing an
        // operand could steer.
        run.unresolved = cmd.words.iter().any(|w| w.dynamic)
            && !cmd.words.first().is_some_and(|w| {
                !w.dynamic
                    && (OPERANDS_INERT.contains(&w.text.as_str()) || fx.functions.contains(&w.text))
            });
        fx.push_at(run)
    });
    // Bash applies redirects in order: the last one to the input is what is read.
    fx.inline_input = cmd
        .redirects
        .iter()
        .rev()
        .find(|r| {
            matches!(
                r.kind,
                RedirectKind::Read | RedirectKind::ReadWrite | RedirectKind::Inline
            )
        })
        .and_then(|r| r.input.as_ref())
        .map(|i| i.text.clone());
    for r in &cmd.redirects {
        redirect_effects(r, &cwd, ctx, fx);
    }
    let program_input = stdin_program(cmd, &words, &cwd, ctx, fx);
    environment_code(cmd, &words, &cwd, fx);
    fx.hardline(floor::check(&words, ctx, &crate::analysis::lexer::Reader));
    let before = fx.stage.take();
    let verdict = if fx.verifying && !cmd.text.is_empty() {
        verdict(cmd, ctx, fx, before.as_ref())
            .map(|v| on_search_path(v, words.first(), cwd.path(), ctx))
    } else {
        None
    };
    fx.composed = verdict == Some(crate::model::vocab::Verdict::ReadOnly)
        && words.first().is_some_and(|w| w == "find" || w == "xargs");
    if verdict != Some(crate::model::vocab::Verdict::ReadOnly) {
        fx.stage = None;
    }
    if !cmd.text.is_empty() {
        fx.verdicts.push((cmd.text.clone(), verdict));
    }
    project_program_request(&words, cwd.path(), ctx, fx);
    // Code read from the input (`python3 - <<'EOF'`, `uv run python - <<'EOF'`) is held
    // like code on the command line: the program read is the one the verdict contains.
    if verdict.is_some_and(contained_only)
        && let Some(subject) = program_input
    {
        for r in fx
            .requests
            .iter_mut()
            .filter(|r| r.reads_program && r.subject == subject)
        {
            r.verdict = verdict;
        }
    }
    run_words(words, cwd, ctx, fx, 0);
}

/// Variables the command sets to a command some program runs (`GIT_SSH_COMMAND=CMD git
/// fetch`, `env PAGER=CMD git log`, `export EDITOR=CMD`, git's `--config-env`): the
/// command is read as code. The assignment's own request is `environment_request`'s.
fn environment_code(cmd: &SimpleCommand, words: &[String], cwd: &Cwd, fx: &mut Effects) {
    let refs: Vec<&str> = words.iter().map(String::as_str).collect();
    let (mut assignments, _) = table::environment::assignment_words(&refs);
    assignments.extend(cmd.assignments.iter().map(|a| a.text.as_str()));
    if assignments.is_empty() {
        return;
    }
    for code in table::environment::environment_code(&assignments, &refs) {
        fx.note(format!(
            "Sets a variable to `{code}`, a command the programs it starts run"
        ));
        fx.option_code.push((code, cwd.clone()));
    }
}

/// Whether every variable a command assigns (as a prefix or alone) is one no tool reads
/// as a program, a module, options or a path (`environment::harmless_assignment`), so
/// the command, and what runs after it, is read as it would be without them.
pub(crate) fn harmless_assignments(cmd: &SimpleCommand) -> bool {
    cmd.assignments
        .iter()
        .all(|a| !a.dynamic && table::environment::harmless_assignment(&a.text))
}

/// `harmless_assignments`, or a prefix that adds places inside the project to a
/// language's module search (`PYTHONPATH=. pytest`,
/// `environment::project_path_assignment`), which only a build or a project script may
/// carry (`verdict`).
pub(crate) fn verifiable_assignments(cmd: &SimpleCommand, ctx: &AnalysisContext) -> bool {
    cmd.assignments.iter().all(|a| {
        !a.dynamic
            && (table::environment::harmless_assignment(&a.text)
                || (!cmd.words.is_empty()
                    && table::environment::project_path_assignment(&a.text, cmd.cwd.path(), ctx)))
    })
}

/// `verdict`, for a command whose prefix adds places to a module search only when it
/// is a build or a project script: anything else may load other code from there. A
/// project script and code on the command line may carry any literal assignment
/// (`API_TOKEN_FILE=x python3 repro.py`): their verdicts are only ever contained, and
/// what a variable makes the code do happens inside the sandbox.
fn verdict(
    cmd: &SimpleCommand,
    ctx: &AnalysisContext,
    fx: &mut Effects,
    before: Option<&(usize, table::composed::Producer, Cwd)>,
) -> Option<crate::model::vocab::Verdict> {
    use crate::model::vocab::Verdict;
    if cmd.assignments.iter().any(|a| a.dynamic) {
        return None;
    }
    let v = command_verdict(cmd, ctx, fx, before)?;
    if harmless_assignments(cmd) || contained_only(v) {
        return Some(v);
    }
    (v == Verdict::ProjectBuild && verifiable_assignments(cmd, ctx)).then_some(v)
}

/// Whether a command's assignments are literal words before a program's name (not a
/// builtin's or a function's, which a shell may keep them for): they last for that
/// command alone.
pub(crate) fn program_prefix(cmd: &SimpleCommand, functions: &[String]) -> bool {
    cmd.assignments.iter().all(|a| !a.dynamic)
        && cmd.words.first().is_some_and(|w| {
            !w.dynamic
                && !crate::programs::builtins::NAMES.contains(&w.text.as_str())
                && !functions.contains(&w.text)
        })
}

/// Verdicts no preset allows outright, only contains: the code they run is unread.
pub(crate) fn contained_only(v: crate::model::vocab::Verdict) -> bool {
    matches!(
        v,
        crate::model::vocab::Verdict::ProjectScript | crate::model::vocab::Verdict::InlineCode
    )
}

/// Whether one simple command is verified read-only or, for the
/// `autonomous` preset, a project-local build/test or an in-project file operation;
/// the reads a verified command makes are added as requests. Only literal words, no
/// assignment but the harmless ones (`RUST_BACKTRACE=1 cargo test`, `CI=true npm
/// test`: `environment::harmless_assignment`, variables no tool reads as a program, a
/// module or a path), no write redirect to a file, no function of the same name.
fn command_verdict(
    cmd: &SimpleCommand,
    ctx: &AnalysisContext,
    fx: &mut Effects,
    before: Option<&(usize, table::composed::Producer, Cwd)>,
) -> Option<crate::model::vocab::Verdict> {
    use crate::model::vocab::Verdict;
    if cmd.words.is_empty() || cmd.words.iter().any(|w| w.dynamic) {
        return None;
    }
    // Glob operands are read as bash passes them: the names they match now,
    // as the program really reads them. A lone `[` or `]` is no glob (an unterminated bracket is literal to bash).
    let mut expanded: Vec<String> = Vec::new();
    let mut globbed: Vec<String> = Vec::new();
    let mut unmatched = false;
    for (i, w) in cmd.words.iter().enumerate() {
        if w.braces && i > 0 {
            // Brace expansion depends on the text alone; what it makes is read as
            // written, unless a word it makes is a glob (then as today: it asks).
            let words = crate::shell::braces::expand(&w.text)?;
            if words.iter().any(|x| is_pattern(x)) {
                return None;
            }
            expanded.extend(words);
            continue;
        }
        if !w.pattern || w.text == "[" || w.text == "]" {
            expanded.push(w.text.clone());
            continue;
        }
        if i == 0 {
            return None;
        }
        let matches = expand_glob(&w.text, &cmd.cwd, ctx)?;
        // A pattern that matches nothing now is still read as an unknown path (it
        // asks): a file it names could appear before the command runs (`cat .env*`).
        // A name that is the pattern's own text (a file `lit*` matched by `lit*`) is
        // read like any match.
        if !matches.is_empty() && !matches.contains(&w.text) {
            globbed.push(w.text.clone());
        }
        unmatched |= matches.is_empty();
        if matches.is_empty() {
            // No match: bash passes the word as it is.
            expanded.push(w.text.clone());
        } else {
            expanded.extend(matches);
        }
    }
    let writes_file = cmd.redirects.iter().any(|r| {
        matches!(r.kind, RedirectKind::Write | RedirectKind::ReadWrite)
            && r.target.as_ref().is_none_or(|t| {
                t.dynamic
                    || !(HARMLESS_DEVICES.contains(&t.text.as_str())
                        || t.text.starts_with("/dev/fd/"))
            })
    });
    let words: Vec<&str> = expanded.iter().map(String::as_str).collect();
    let name = *words.first()?;
    if fx.functions.iter().any(|f| f == name) {
        return None;
    }
    // A word bash expands as a pattern names files only when it runs: no script of
    // the project, and no edit, is vouched for through one (`cat * > file` reads a glob
    // over the project into a file).
    let patterned = cmd.words.iter().any(|w| w.pattern && !w.braces);
    // A verified reader whose output goes only to files inside the project is an edit
    // of those files (`echo hi > notes.md`, `cat > src/x.ts <<'EOF'`): its reads are
    // judged as the reader's, its writes (the redirects' requests) as any write.
    let redirect_edit = writes_file && !patterned && redirects_edit_project(cmd, ctx);
    // git runs the configuration of the repository it finds (`core.fsmonitor`,
    // `core.pager`, the textconv drivers `info/attributes` selects): read-only only when
    // it runs inside the project and the repository it will use, found as git finds it,
    // is protected (`programs::git_repository`). Its file operands are relative to
    // where `-C` moved it.
    let mut read_cwd = cmd.cwd.clone();
    let mut git_repo = None;
    if name == "git" {
        let owned: Vec<String> = words.iter().map(|w| (*w).to_string()).collect();
        for d in crate::programs::git::git_dir_options(&owned) {
            read_cwd = match resolve(d, &read_cwd, ctx) {
                Some(p) => Cwd::Known(p),
                None => Cwd::Unknown,
            };
        }
        if !read_cwd
            .path()
            .is_some_and(|p| paths::is_inside(p, ctx.root()))
        {
            return None;
        }
        match programs::git_repository(&owned, &read_cwd, ctx, fx) {
            programs::GitRepo::Unprotected(_) => return None,
            programs::GitRepo::Protected(r) => git_repo = Some(r),
            programs::GitRepo::None => {}
        }
    }
    // `LISTER | xargs -0 PROG …`: the names the lister printed, read by PROG.
    let piped = if name == "xargs" && !writes_file {
        composed_xargs(cmd, &words, before, ctx)
    } else {
        None
    };
    let verified = match piped {
        Some(v) => Some(v),
        None if name == "xargs" => None,
        None if writes_file && !redirect_edit => None,
        None => table::readonly::verify(&words),
    };
    if let Some(v) = verified {
        if writes_file && v.chdir_only {
            return None;
        }
        // A lister of names may feed an `xargs` piped right after it; its errors and
        // output may go nowhere else than `/dev/null`.
        let quiet = cmd.redirects.iter().all(|r| {
            r.kind == RedirectKind::Write
                && r.target
                    .as_ref()
                    .is_some_and(|t| !t.dynamic && t.text == "/dev/null")
        });
        if quiet && let Some(p) = table::composed::producer(&words) {
            fx.stage = Some((cmd.start, p, cmd.cwd.clone()));
        }
        if name == "git" && !git_config_reads(&words, git_repo.as_ref(), &read_cwd, ctx, fx) {
            return None;
        }
        let git_includes = if name == "git" {
            crate::programs::git_discovery::included_config_files(git_repo.as_ref(), ctx.home())
                .ok()?
        } else {
            Vec::new()
        };
        let cwd = &read_cwd;
        // `cd` changes what later commands, allowed by name (`git status`), act on: a
        // move is verified only into the project (`cd`, `cd -`, `popd` go where the
        // analysis cannot vouch for).
        if v.chdir_only {
            let target = words
                .get(1..)
                .unwrap_or_default()
                .iter()
                .find(|w| !w.starts_with('-'));
            let inside = target
                .and_then(|t| resolve(t, cwd, ctx))
                .is_some_and(|p| paths::is_inside(&p, ctx.root()));
            if !inside {
                return None;
            }
        }
        let mut checked: Vec<String> = Vec::new();
        for list in &v.checksum_lists {
            checked.extend(checksum_list(list, cwd, ctx)?);
        }
        fx.globbed = globbed;
        for r in v.reads.iter().chain(&v.checksum_lists).chain(&checked) {
            read_request(r, cwd, ctx, fx);
        }
        for f in &git_includes {
            read_request(&f.display().to_string(), cwd, ctx, fx);
        }
        let reach = crate::model::vocab::DirectoryRead {
            recursive: true,
            skips_hidden: v.skips_hidden,
            glob: None,
            follow: v.follow,
            names_only: v.names_only,
            ..Default::default()
        };
        for d in &v.recursive {
            // A walk whose files are filtered by name (`find . -name '*.py' -type f
            // -exec …`) in the project: each file it reaches now is a read of its own
            // (a symlink as what it names). Past the bounds, or from a directory
            // outside the project (`find / …`, where the walk is long and asks
            // anyway), the whole walk is judged.
            let named = (!v.name_filter.is_empty())
                .then(|| {
                    let dir = resolve(d, cwd, ctx)?;
                    if !paths::is_inside(&dir, ctx.root()) {
                        return None;
                    }
                    named_walk(&dir, &v.name_filter, v.follow)
                })
                .flatten();
            match named {
                Some(NamedWalk::Files(files)) => {
                    for f in files {
                        read_request(&f.display().to_string(), cwd, ctx, fx);
                    }
                }
                // The whole walk meets the same entries: `decide` need not walk again.
                Some(NamedWalk::OverBound) => {
                    let over = crate::model::vocab::DirectoryRead {
                        over_bound: true,
                        ..reach.clone()
                    };
                    recursive_read_request(d, &over, cwd, ctx, fx);
                }
                None => recursive_read_request(d, &reach, cwd, ctx, fx),
            }
        }
        let listing = crate::model::vocab::DirectoryRead {
            names_only: true,
            ..Default::default()
        };
        for d in &v.lists {
            recursive_read_request(d, &listing, cwd, ctx, fx);
        }
        return Some(if writes_file {
            Verdict::ProjectWrite
        } else {
            Verdict::ReadOnly
        });
    }
    if !writes_file && table::readonly::describes_reader(&words) {
        fx.unread_reader = true;
    }
    // An in-project edit by a program modelled option by option (`mkdir -p src/x`,
    // `mv a b`, `sed -i 's/a/b/' f`): every path it writes, copies from or moves is a
    // request, judged by the write, protected and secret rules.
    if !writes_file
        && (!patterned || (!unmatched && edits_through_patterns(cmd, &words, ctx)))
        && let Some(cwd) = cmd.cwd.path()
        && let Some(edit) = table::edits::edit(&words, cwd, ctx)
    {
        // Each match is written (and, copied or moved, read) on its own: the pattern
        // itself is not judged again as an unknown path.
        fx.globbed_writes.clone_from(&globbed);
        fx.globbed = globbed;
        if !edit.removed_trees.is_empty() {
            fx.removals.push(cmd.text.clone());
        }
        for w in &edit.writes {
            write_request(&w.display().to_string(), &cmd.cwd, ctx, fx);
        }
        // A symlink removed or moved away by its own name (inside the project, as
        // `edits` checked): judged as that name, so a protected one asks.
        for n in &edit.names {
            let s = n.display().to_string();
            fx.push(CapabilityRequest::new(
                Capability::FileWriteProject,
                s.clone(),
                format!("Write {s}"),
            ));
        }
        for r in &edit.reads {
            read_request(&r.display().to_string(), &cmd.cwd, ctx, fx);
        }
        let copied = crate::model::vocab::DirectoryRead {
            recursive: true,
            ..Default::default()
        };
        for d in &edit.trees {
            recursive_read_request(&d.display().to_string(), &copied, &cmd.cwd, ctx, fx);
        }
        // An empty list stores nothing (and an empty `paths` would mean the directory).
        for (d, files) in edit.listed.iter().filter(|(_, f)| !f.is_empty()) {
            let s = d.display().to_string();
            let mut r =
                CapabilityRequest::new(Capability::FileRead, s.clone(), format!("Read {s}"));
            r.directory_read = Some(crate::model::vocab::DirectoryRead {
                paths: files.iter().map(|f| f.display().to_string()).collect(),
                ..Default::default()
            });
            fx.push(r);
        }
        return Some(Verdict::ProjectWrite);
    }
    // A build or script whose output goes only to files inside the project (`python3
    // x.py > out.txt 2>&1`): the redirects are judged as any write. Not code on the
    // command line, whose sandbox keeps the project read-only.
    let build = crate::programs::builds::autonomous_verdict(
        &words,
        cmd.cwd.path(),
        ctx,
        writes_file && !redirect_edit,
        patterned,
    )
    .filter(|b| !writes_file || b.verdict != Verdict::InlineCode)?;
    // The files a build's own options name (a harness's `--logfile`, `-coverprofile`)
    // are judged like any write: inside the project, or asked for.
    for w in &build.writes {
        write_request(w, &cmd.cwd, ctx, fx);
    }
    Some(build.verdict)
}

/// `xargs` reading the names the command piped right before it printed (`find src
/// -print0 | xargs -0 wc -l`): verified as `composed::xargs` says, when nothing else
/// feeds its input (no redirect of it), the lister ran in the same directory, and a
/// lister of bare names (`rg --files -0`) walks a directory none of whose entries
/// starts with `-` now (a reader would take such a name as its option).
fn composed_xargs(
    cmd: &SimpleCommand,
    words: &[&str],
    before: Option<&(usize, table::composed::Producer, Cwd)>,
    ctx: &AnalysisContext,
) -> Option<Verified> {
    let (start, producer, cwd) = before?;
    if cmd.piped_from != Some(*start) || *cwd != cmd.cwd {
        return None;
    }
    if cmd.redirects.iter().any(|r| {
        matches!(
            r.kind,
            RedirectKind::Read | RedirectKind::ReadWrite | RedirectKind::Inline
        )
    }) {
        return None;
    }
    if producer.bare {
        for root in &producer.roots {
            let dir = resolve(root, cwd, ctx)?;
            let entries = std::fs::read_dir(&dir).ok()?;
            for (n, e) in entries.enumerate() {
                if n >= MAX_GLOB_ENTRIES {
                    return None;
                }
                if e.ok()?.file_name().to_string_lossy().starts_with('-') {
                    return None;
                }
            }
        }
    }
    table::composed::xargs(words, producer)
}

/// Whether every file a command's redirects open is one it only writes, at a literal
/// path inside the project (not the root itself): the devices that touch no file
/// aside. `<>` also reads its file, and a `~` word is the shell's to expand.
fn redirects_edit_project(cmd: &SimpleCommand, ctx: &AnalysisContext) -> bool {
    cmd.redirects.iter().all(|r| match r.kind {
        RedirectKind::Read | RedirectKind::ReadWrite => false,
        RedirectKind::Duplicate | RedirectKind::Inline => true,
        RedirectKind::Write => r.target.as_ref().is_some_and(|t| {
            if t.dynamic || t.pattern || is_pattern(&t.text) || t.text.starts_with('~') {
                return false;
            }
            if HARMLESS_DEVICES.contains(&t.text.as_str()) {
                return true;
            }
            paths::resolve_word(&t.text, cmd.cwd.path(), ctx.home())
                .is_some_and(|p| paths::is_inside(&p, ctx.root()) && p != ctx.root())
        }),
    })
}

/// The configuration files a verified `git config` reading form prints (and `git
/// remote -v`, which prints the URLs they hold), each a read that goes through the read
/// rules: the files of its scope and, where git follows them, what they include
/// (`[include] path = ~/.pypirc` prints the PyPI token). `false`: a file it reads
/// cannot be known, or holds a credential (the command is not verified).
fn git_config_reads(
    words: &[&str],
    repo: Option<&crate::programs::git_discovery::Repository>,
    cwd: &Cwd,
    ctx: &AnalysisContext,
    fx: &mut Effects,
) -> bool {
    use crate::programs::git_discovery as gd;
    use crate::programs::git_readonly::{ConfigScope, config_read, remote_prints_urls};
    let read = config_read(words)
        .or_else(|| remote_prints_urls(words).then_some((ConfigScope::All, true)));
    let Some((scope, includes)) = read else {
        return true;
    };
    let repo_config = || repo.map(|r| r.common_dir.join("config"));
    let base: Vec<PathBuf> = match scope {
        ConfigScope::All => {
            let mut b = gd::global_config_files(ctx.home());
            b.extend(repo_config());
            if let Some(r) = repo {
                let wt = r.git_dir.join("config.worktree");
                if wt.exists() {
                    b.push(wt);
                }
            }
            b
        }
        ConfigScope::System => gd::global_config_files(ctx.home())
            .into_iter()
            .take(1)
            .collect(),
        ConfigScope::Global => gd::global_config_files(ctx.home())
            .into_iter()
            .skip(1)
            .collect(),
        ConfigScope::Local => repo_config().into_iter().collect(),
        ConfigScope::Worktree => repo
            .map(|r| {
                let wt = r.git_dir.join("config.worktree");
                if wt.exists() {
                    wt
                } else {
                    r.common_dir.join("config")
                }
            })
            .into_iter()
            .collect(),
        ConfigScope::File(f) => match resolve(&f, cwd, ctx) {
            Some(p) => vec![p],
            None => return false,
        },
    };
    let files = if includes {
        match gd::with_includes(&base, ctx.home()) {
            Ok(f) => f,
            Err((read, e)) => {
                // git reads these before it stops (an include it cannot parse is
                // opened all the same); what it would read after them is unknown, so
                // no always pattern may make the command silent.
                fx.note(format!("`git config` {e}"));
                for f in read {
                    read_request(&f.display().to_string(), cwd, ctx, fx);
                }
                fx.unread_reader = true;
                return false;
            }
        }
    } else {
        base
    };
    for f in &files {
        read_request(&f.display().to_string(), cwd, ctx, fx);
    }
    // A file it prints that holds a credential (a token in a remote's URL, an
    // Authorization header), wherever an include put it: the command prints it.
    if let Some(f) = files.iter().find(|f| {
        std::fs::read(f).is_ok_and(|b| gd::holds_credential(&String::from_utf8_lossy(&b)))
    }) {
        fx.note(format!(
            "`{}` prints {}, which holds a credential (a token in a URL, an Authorization header)",
            words.join(" "),
            f.display()
        ));
        return false;
    }
    true
}

/// Whether an edit whose operands include patterns (`rm -f build/*.o`, `chmod +x
/// scripts/*.sh`, `mv charts/* web/charts/`) is read through the names they match now.
/// The matches are a superset of what bash passes (`expand_glob`: hidden names and any
/// case), so each program must do to each operand what it does to any other, whatever
/// their number: `rm`, `chmod` and `touch` act on each; `cp` and `mv` only into a
/// written destination that is a directory now (else one source renames and several
/// land inside), never with `-t` or `-T`. Other edits keep asking (`ln`'s forms, `sed
/// -i`'s script, `git add`'s own pathspecs).
fn edits_through_patterns(cmd: &SimpleCommand, words: &[&str], ctx: &AnalysisContext) -> bool {
    match words.first() {
        Some(&("rm" | "chmod" | "touch")) => true,
        Some(&("cp" | "mv")) => {
            let Some(last) = cmd.words.last() else {
                return false;
            };
            let directed = words.iter().skip(1).take_while(|w| **w != "--").any(|w| {
                w.starts_with("--target-directory")
                    || w.starts_with("--no-target-directory")
                    || (w.starts_with('-') && !w.starts_with("--") && w.contains(['t', 'T']))
            });
            !last.pattern
                && !last.braces
                && !directed
                && resolve(&last.text, &cmd.cwd, ctx).is_some_and(|d| d.is_dir())
        }
        _ => false,
    }
}

/// Largest checksum list read to learn the files `md5sum -c LIST` reads.
const MAX_CHECKSUM_LIST_BYTES: u64 = 64 * 1024;
/// Most names one checksum list may hold.
const MAX_CHECKSUM_NAMES: usize = 256;

/// The files a checksum list names (`md5sum -c LIST` reads each, relative to the cwd),
/// read now, as a glob is expanded now: none when there is no such file (the program
/// fails before reading any); `None` (not verified) when the list cannot be known — its
/// place is unknown, it is not a small regular file, or a line is not a form
/// `readonly::checksum_names` knows.
fn checksum_list(list: &str, cwd: &Cwd, ctx: &AnalysisContext) -> Option<Vec<String>> {
    let path = resolve(list, cwd, ctx)?;
    let bytes = match paths::read_small_file(&path, MAX_CHECKSUM_LIST_BYTES) {
        Ok(None) => return Some(Vec::new()),
        Ok(Some(b)) => b,
        Err(_) => return None,
    };
    let names = table::readonly::checksum_names(&String::from_utf8(bytes).ok()?)?;
    (names.len() <= MAX_CHECKSUM_NAMES).then_some(names)
}

/// Most names one glob operand may match before the command is left unverified.
const MAX_GLOB_MATCHES: usize = 256;
/// Most entries of the directory read for one glob operand.
const MAX_GLOB_ENTRIES: usize = 4096;

/// The names bash passes for a glob operand whose last component is the only pattern
/// (`src/*.rs`, `~/.ssh/id_*`, `*.txt`), read from the directory its literal part names.
/// The match is a superset of bash's under any shell option: hidden names count (as with
/// `dotglob`) and case is ignored (as with `nocaseglob`), so no name bash could pass is
/// missed. `Some(vec![])`: nothing matches, and no file has the word as its name (bash
/// then passes the word as written). `None` (the command stays unverified): a pattern
/// in a directory part, `**`, an extglob or brace form, a backslash, an unknown
/// directory, a match that would read as an option, or more than the bounds.
fn expand_glob(word: &str, cwd: &Cwd, ctx: &AnalysisContext) -> Option<Vec<String>> {
    if word.contains(['(', '{', '\\']) || word.contains("**") {
        return None;
    }
    let (dir_part, last) = match word.rfind('/') {
        Some(i) => (word.get(..=i)?, word.get(i + 1..)?),
        None => ("", word),
    };
    if last.is_empty() || dir_part.contains(['*', '?', '[']) || !plain_classes(last) {
        return None;
    }
    let dir = match dir_part.trim_end_matches('/') {
        "" if dir_part.is_empty() => cwd.path()?.to_path_buf(),
        "" => PathBuf::from("/"),
        d => resolve(d, cwd, ctx)?,
    };
    // Compiled only once the directory has an entry to match, and kept per thread:
    // building the matcher (a case-insensitive regex) costs far more than reading a
    // directory, and agents repeat their patterns.
    let mut matcher: Option<globset::GlobMatcher> = None;
    let mut names = Vec::new();
    for (n, entry) in std::fs::read_dir(&dir).ok()?.enumerate() {
        if n >= MAX_GLOB_ENTRIES {
            return None;
        }
        let name = entry.ok()?.file_name().into_string().ok()?;
        if matcher.is_none() {
            matcher = Some(glob_matcher(last)?);
        }
        if matcher.as_ref().is_some_and(|m| m.is_match(&name)) {
            if dir_part.is_empty() && name.starts_with('-') {
                return None;
            }
            names.push(format!("{dir_part}{name}"));
            if names.len() > MAX_GLOB_MATCHES {
                return None;
            }
        }
    }
    if names.is_empty() && std::fs::symlink_metadata(dir.join(last)).is_ok() {
        // A file named like the pattern: bash passes it, and it is read.
        return None;
    }
    names.sort();
    Some(names)
}

/// Most files a name-filtered walk (`find -name PAT -type f -exec`) may reach before
/// the whole walk is judged instead. It looks at `MAX_WALK_ENTRIES` entries at most,
/// as the whole walk does.
const MAX_NAMED_WALK_FILES: usize = 256;

/// What a name-filtered walk found.
enum NamedWalk {
    /// The files it reaches, each a read of its own.
    Files(Vec<PathBuf>),
    /// More entries than `MAX_WALK_ENTRIES`: so many the whole walk meets too.
    OverBound,
}

/// The paths below `dir` whose own name matches one of `pats` (find's `-name`
/// pattern, grep's `--include` suffixes; case kept, a leading `.` matched by `*` as
/// their `fnmatch` does), as find lists them:
/// hidden directories entered, symlinks to directories entered only when it follows
/// them (each real directory once), a symlink reported by its own name (its target is
/// judged by the read). `None` past the files' bound, or when the pattern does not
/// compile or an entry cannot be read.
fn named_walk(dir: &std::path::Path, pats: &[String], follow: bool) -> Option<NamedWalk> {
    let mut set = globset::GlobSetBuilder::new();
    for pat in pats {
        set.add(
            globset::GlobBuilder::new(pat)
                .literal_separator(true)
                .backslash_escape(false)
                .build()
                .ok()?,
        );
    }
    let matcher = set.build().ok()?;
    if !dir.is_dir() {
        return Some(NamedWalk::Files(Vec::new()));
    }
    let mut out = Vec::new();
    // Without following links, the directories form a tree and each is met once; only
    // a walk through symlinked directories needs their real paths to enter each once.
    let mut entered = std::collections::HashSet::new();
    if follow {
        entered.insert(std::fs::canonicalize(dir).ok()?);
    }
    let mut stack = vec![dir.to_path_buf()];
    let mut seen = 0usize;
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries {
            let e = e.ok()?;
            seen += 1;
            if seen > crate::model::vocab::MAX_WALK_ENTRIES {
                return Some(NamedWalk::OverBound);
            }
            let path = e.path();
            let t = e.file_type().ok()?;
            let enter = t.is_dir() || (follow && t.is_symlink() && path.is_dir());
            if enter && (!follow || entered.insert(std::fs::canonicalize(&path).ok()?)) {
                stack.push(path.clone());
            }
            if matcher.is_match(e.file_name()) {
                out.push(path);
                if out.len() > MAX_NAMED_WALK_FILES {
                    return None;
                }
            }
        }
    }
    out.sort();
    Some(NamedWalk::Files(out))
}

/// Most compiled glob matchers kept per thread (then the cache starts over).
const GLOB_CACHE: usize = 256;

thread_local! {
    static GLOBS: std::cell::RefCell<std::collections::HashMap<String, globset::GlobMatcher>> =
        std::cell::RefCell::new(std::collections::HashMap::new());
}

/// The matcher of one glob operand's last component, as `expand_glob` reads it (case
/// ignored, `/` literal, no escapes). A pure function of the text, so it is memoised.
fn glob_matcher(pattern: &str) -> Option<globset::GlobMatcher> {
    let cached = GLOBS.with(|g| g.try_borrow().ok()?.get(pattern).cloned());
    if let Some(m) = cached {
        return Some(m);
    }
    let m = globset::GlobBuilder::new(pattern)
        .case_insensitive(true)
        .literal_separator(true)
        .backslash_escape(false)
        .build()
        .ok()?
        .compile_matcher();
    GLOBS.with(|g| {
        if let Ok(mut g) = g.try_borrow_mut() {
            if g.len() >= GLOB_CACHE {
                g.clear();
            }
            g.insert(pattern.to_string(), m.clone());
        }
    });
    Some(m)
}

/// Whether every bracket class of a glob is a plain set (`[ab]`, `[!a-z]`, `[^0-9_.]`):
/// POSIX classes (`[[:alpha:]]`), equivalence classes and a leading `]` are read
/// differently by globset and bash, and reading fewer names than bash would miss reads.
fn plain_classes(glob: &str) -> bool {
    let mut chars = glob.chars();
    while let Some(c) = chars.next() {
        if c == ']' {
            return false;
        }
        if c != '[' {
            continue;
        }
        let mut first = true;
        let mut closed = false;
        for d in chars.by_ref() {
            match d {
                '!' | '^' if first => {}
                ']' if !first => {
                    closed = true;
                    break;
                }
                d if d.is_ascii_alphanumeric() || matches!(d, '-' | '.' | '_') => {}
                _ => return false,
            }
            first = false;
        }
        if !closed {
            return false;
        }
    }
    true
}

/// A read of what a directory holds: its files, recursively (`grep -r x dir`, `rg x`),
/// or its names (`ls dir`, `find dir`, `tree dir`): `decide` walks what it reaches
/// (bounded, through symlinked directories where the program follows them) and judges
/// each file, or each directory listed, by the read rules.
fn recursive_read_request(
    word: &str,
    reach: &crate::model::vocab::DirectoryRead,
    cwd: &Cwd,
    ctx: &AnalysisContext,
    fx: &mut Effects,
) {
    let Some(p) = resolve(word, cwd, ctx) else {
        read_request(word, cwd, ctx, fx);
        return;
    };
    if !p.is_dir() {
        read_request(word, cwd, ctx, fx);
        return;
    }
    let s = p.display().to_string();
    let display = match (reach.names_only, reach.recursive) {
        (false, _) => format!("Search files under {s}"),
        (true, true) => format!("List files under {s}"),
        (true, false) => format!("List {s}"),
    };
    let mut r = CapabilityRequest::new(Capability::FileRead, s.clone(), display);
    r.directory_read = Some(reach.clone());
    // A plain read of the same directory (pushed earlier by the readers' hooks) says
    // less than this one: replace it.
    fx.requests
        .retain(|x| !(x.capability == Capability::FileRead && x.subject == s));
    fx.push(r);
}

impl Effects {
    /// Marks each `process.execute` request whose every command was verified (all
    /// commands with that text agree) with its verdict.
    pub(crate) fn mark_verified(&mut self) {
        use crate::model::vocab::Verdict;
        // A removal of a tree is proven on the tree as it is now: only with every other
        // command of the plan read-only.
        let others_write = !self.removals.is_empty()
            && self
                .verdicts
                .iter()
                .any(|(s, v)| !self.removals.contains(s) && *v != Some(Verdict::ReadOnly));
        for r in &mut self.requests {
            if r.capability != Capability::ProcessExecute
                || (others_write && self.removals.contains(&r.subject))
            {
                continue;
            }
            let mut found = self.verdicts.iter().filter(|(s, _)| *s == r.subject);
            let Some((_, first)) = found.next() else {
                continue;
            };
            let Some(v) = *first else { continue };
            if found.all(|(_, x)| *x == Some(v)) {
                r.verdict = Some(v);
            }
        }
    }
}

/// Redirects open files before the command runs: writes, reads, network devices.
/// An interpreter or shell whose input is redirected (`bash <<END`, `python3 - <<EOF`,
/// `sh < x.sh`, `bash <<< "…"`) may read its program from there. A rule for the
/// command alone (`bash`, whose subject leaves redirects out) must not cover whatever
/// it is fed, so the program it reads is a request of its own, and no pattern is
/// offered. A shell fed a here-document or here-string whose text is static runs that
/// text as its script: it is parsed as code like `bash -c`'s. Returns the subject of
/// the request it made.
fn stdin_program(
    cmd: &SimpleCommand,
    words: &[String],
    cwd: &Cwd,
    ctx: &AnalysisContext,
    fx: &mut Effects,
) -> Option<String> {
    let first = words.first()?;
    let name = basename(first);
    let shell = table::is_shell(name);
    let refs: Vec<&str> = words.iter().map(String::as_str).collect();
    // `make -f -`, `awk -f /dev/stdin`: the program file is the input, redirected or not.
    let from_input = table::languages::program_from_input(&refs);
    let direct = shell || INTERPRETERS.contains(&name) || from_input;
    // A runner that starts an interpreter or a shell (`uv run python`, `poetry run
    // python3`, `conda run -n env python`) hands it the same input, which is then its
    // program. Not a builtin's or a reader's word (`echo python`, `grep python3`).
    // Only a command whose input is redirected is looked at (the common case has none).
    let runner_at = if direct || cmd.redirects.is_empty() {
        None
    } else {
        refs.iter()
            .skip(1)
            .position(|w| {
                let b = basename(w);
                INTERPRETERS.contains(&b) || table::is_shell(b)
            })
            .map(|i| i + 1)
            .filter(|_| {
                !crate::programs::builtins::NAMES.contains(&name)
                    && !table::readonly::describes_reader(&refs)
            })
    };
    if !direct && runner_at.is_none() {
        return None;
    }
    // An interpreter given a script of the project (`python3 solution.py < in.txt`,
    // `python3 solution.py <<EOF`, `uv run python x.py <<EOF`) reads its program from
    // that file: the input is the script's data, and the script is judged as one
    // (`programs::builds`).
    let interpreter = refs.get(runner_at.unwrap_or(0)..).unwrap_or_default();
    if !from_input
        && cwd
            .path()
            .is_some_and(|c| crate::programs::builds::runs_project_script(interpreter, c, ctx))
    {
        return None;
    }
    // Bash applies redirects in order: the last one to the input is what is read.
    let Some(input) = cmd.redirects.iter().rev().find(|r| {
        matches!(
            r.kind,
            RedirectKind::Read | RedirectKind::ReadWrite | RedirectKind::Inline
        )
    }) else {
        if !from_input {
            return None;
        }
        fx.stdin_program = true;
        fx.inline_code = true;
        let subject = format!("{} < its input", cmd.text);
        let mut r = CapabilityRequest::new(
            Capability::ProcessExecute,
            subject.clone(),
            format!("Run {} with a program read from its input", cmd.text),
        );
        r.reads_program = true;
        fx.push(r);
        fx.note(format!(
            "`{name}` runs a program read from its input, which is not analyzed"
        ));
        return Some(subject);
    };
    let source = match (&input.kind, &input.target) {
        (RedirectKind::Read | RedirectKind::ReadWrite, Some(t)) => format!("`{}`", t.text),
        (RedirectKind::Read | RedirectKind::ReadWrite, None) => "a file".to_string(),
        _ if cmd.heredoc && input.target.is_none() && input.input.is_some() => {
            "its here-document or here-string".to_string()
        }
        _ => "its input".to_string(),
    };
    fx.stdin_program = true;
    fx.inline_code = true;
    let subject = format!("{} < {}", cmd.text, source.trim_matches('`'));
    let mut r = CapabilityRequest::new(
        Capability::ProcessExecute,
        subject.clone(),
        format!("Run {} with a program read from {source}", cmd.text),
    );
    r.reads_program = true;
    fx.push(r);
    let reads_script = shell && table::describe(&refs).stdin_code;
    match &input.input {
        Some(i) if reads_script && !i.dynamic => {
            fx.code.push((i.text.clone(), cwd.clone()));
            fx.note(format!("`{name}` runs {source} as its script"));
        }
        Some(_) if reads_script => fx.opaque.push(format!(
            "`{name}` runs {source} as its script, whose text is only known when it runs"
        )),
        _ => fx.note(format!(
            "`{name}` may run a program read from {source}, which is not analyzed"
        )),
    }
    Some(subject)
}

pub(crate) fn redirect_effects(r: &Redirect, cwd: &Cwd, ctx: &AnalysisContext, fx: &mut Effects) {
    let Some(target) = &r.target else { return };
    match r.kind {
        RedirectKind::Duplicate | RedirectKind::Inline => {}
        RedirectKind::Write | RedirectKind::Read | RedirectKind::ReadWrite => {
            let t = target.text.as_str();
            if let Some(endpoint) = crate::shell::network_endpoint(t) {
                fx.push(CapabilityRequest::new(
                    Capability::NetworkAccess,
                    endpoint.clone(),
                    format!("Connect to {endpoint}"),
                ));
                fx.note(format!(
                    "Redirects to `{t}`: bash itself connects to `{endpoint}`"
                ));
                return;
            }
            if HARMLESS_DEVICES.contains(&t) || t.starts_with("/dev/fd/") {
                return;
            }
            // `<>` both reads and writes its file.
            if matches!(r.kind, RedirectKind::Write | RedirectKind::ReadWrite) {
                fx.hardline(floor::check_redirect_target(t, ctx));
                write_request(t, cwd, ctx, fx);
            }
            if matches!(r.kind, RedirectKind::Read | RedirectKind::ReadWrite) {
                read_request(t, cwd, ctx, fx);
            }
        }
    }
}

/// The path a word names, or `None` when it is only known when the command runs: an
/// unknown cwd or variable, or a glob/brace pattern. A pattern is not resolved as a
/// literal path: `cat .env*` would otherwise be the subject `/p/.env*`, which no
/// `*.env` rule matches, and `lin*/x` would not follow the symlink bash expands into.
fn resolve(word: &str, cwd: &Cwd, ctx: &AnalysisContext) -> Option<PathBuf> {
    if is_pattern(word) {
        return None;
    }
    paths::resolve_word(word, cwd.path(), ctx.home())
}

/// As `resolve`, but a word the command quoted (`'/tmp/a*'`) is the literal name it
/// holds: only an unquoted glob or an expansion leaves the location unknown.
/// A `*` in such a name would still become a wildcard in an offered pattern (class
/// 10), so the command gets no pattern; a quoted `~` is not the home, so a word starting
/// with one stays unknown.
fn resolve_operand(
    word: &str,
    cwd: &Cwd,
    ctx: &AnalysisContext,
    fx: &mut Effects,
) -> Option<PathBuf> {
    if !word.starts_with('~') && fx.literal.iter().any(|l| l == word) {
        fx.wrapped = true;
        return paths::resolve_word(word, cwd.path(), ctx.home());
    }
    resolve(word, cwd, ctx)
}

/// Glob characters, or a brace expansion (`a{b,c}`, `{1..3}`). Quoted ones count too:
/// the words reaching here have lost their quotes, and treating them as patterns only
/// makes a path unknown, which asks.
fn is_pattern(word: &str) -> bool {
    word.contains(['*', '?', '[']) || has_braces(word)
}

/// A brace expression (`a{b,c}`, `{1..3}`).
fn has_braces(word: &str) -> bool {
    word.split_once('{')
        .is_some_and(|(_, rest)| rest.contains('}') && (rest.contains(',') || rest.contains("..")))
}

/// A write of `word`: project or outside by resolved path; unknown counts as outside.
fn write_request(word: &str, cwd: &Cwd, ctx: &AnalysisContext, fx: &mut Effects) {
    if fx.globbed_writes.iter().any(|g| g == word) {
        // Its matches were written one by one (see `verdict`).
        return;
    }
    match resolve_operand(word, cwd, ctx, fx) {
        Some(p) if paths::is_inside(&p, ctx.root()) => {
            let s = p.display().to_string();
            fx.push(CapabilityRequest::new(
                Capability::FileWriteProject,
                s.clone(),
                format!("Write {s}"),
            ));
        }
        Some(p) => {
            let s = p.display().to_string();
            fx.note(format!("Writes outside the project: {s}"));
            fx.push(CapabilityRequest::new(
                Capability::FileWriteOutsideProject,
                s.clone(),
                format!("Write {s}"),
            ));
        }
        None => unresolved_request(Capability::FileWriteOutsideProject, "Write", word, fx),
    }
}

/// A read or write of `word` whose location is only known when it runs: the word as
/// written, typed `unresolved` (at most ask; `always_patterns` offers nothing for a
/// command with one, so a `*` in it never becomes a wildcard).
fn unresolved_request(capability: Capability, verb: &str, word: &str, fx: &mut Effects) {
    fx.note(format!(
        "{verb}s `{word}`, whose location cannot be known before it runs"
    ));
    fx.push(CapabilityRequest::unresolved(
        capability,
        word,
        format!("{verb} {word}"),
    ));
}

fn read_request(word: &str, cwd: &Cwd, ctx: &AnalysisContext, fx: &mut Effects) {
    if fx.globbed.iter().any(|g| g == word) {
        // Its matches were read one by one (see `verdict`).
        return;
    }
    match resolve_operand(word, cwd, ctx, fx) {
        Some(p) => {
            let s = p.display().to_string();
            fx.push(CapabilityRequest::new(
                Capability::FileRead,
                s.clone(),
                format!("Read {s}"),
            ));
        }
        None => unresolved_request(Capability::FileRead, "Read", word, fx),
    }
}

/// An extra `process.execute` for a program a flag makes the command run, typed by its
/// `via` (its subject names the route, so allow rules written for the reader, `git
/// diff*`, do not cover it, and no pattern is offered for it).
fn escalation(what: &str, text: &str, fx: &mut Effects) {
    fx.escalated = true;
    fx.note(format!("`{what}` makes this command run another program"));
    fx.push(CapabilityRequest::via(
        what,
        text,
        format!("Run a program through {what}"),
    ));
}

/// Turns the table's description of one program's words into requests: reads, writes,
/// options that run something (each its own request), code strings to parse again,
/// shells reading stdin or a script, and opaque parts.
fn apply_description(
    name: &str,
    d: &Description,
    words: &[&str],
    cwd: &Cwd,
    ctx: &AnalysisContext,
    fx: &mut Effects,
) {
    let text = words.join(" ");
    for w in &d.writes {
        write_request(w, cwd, ctx, fx);
    }
    for r in &d.reads {
        read_request(r, cwd, ctx, fx);
    }
    for via in &d.runs {
        fx.note(format!("`{}` {}", via.what, via.why));
        escalation(&via.what, &text, fx);
    }
    for c in &d.code {
        fx.code.push((table::code_text(c, words), cwd.clone()));
    }
    for t in &d.option_code {
        fx.option_code.push((t.clone(), cwd.clone()));
    }
    if let Some(i) = d.script {
        fx.inline_code = true;
        let script = words.get(i).copied().unwrap_or_default();
        fx.note(format!(
            "`{name}` runs the script `{script}`, whose commands are not analyzed"
        ));
    }
    if d.stdin_code {
        fx.inline_code = true;
        if let Some(r) = fx.running.and_then(|i| fx.requests.get_mut(i)) {
            r.reads_program = true;
        }
        fx.note(format!(
            "`{name}` starts a shell that reads commands from its input"
        ));
    }
    for o in &d.opaque {
        if !fx.opaque.contains(o) {
            fx.opaque.push(o.clone());
        }
    }
    if let Some(canonical) = &d.canonical {
        fx.hardline(floor::check(
            canonical,
            ctx,
            &crate::analysis::lexer::Reader,
        ));
    }
}

/// What a word list does once wrappers are looked through. `depth` bounds nesting of
/// wrappers inside `find -exec` and `xargs`.
fn run_words(words: Vec<String>, cwd: Cwd, ctx: &AnalysisContext, fx: &mut Effects, depth: usize) {
    let mut cur = words;
    let mut cwd = cwd;
    let mut layers = 0;
    while let Some(first) = cur.first() {
        let name = basename(first).to_string();
        let wrapper = table::lookup(first)
            .is_some_and(|p| matches!(p.role, Role::Wrapper { .. } | Role::CodeOperands { .. }));
        if !wrapper || layers >= table::unwrap::MAX_LAYERS {
            break;
        }
        let refs: Vec<&str> = cur.iter().map(String::as_str).collect();
        let d = table::describe(&refs);
        // A wrapper that runs nothing here (`uv sync`, `bundle install`: not their
        // `run`/`exec`; `nohup` alone) is a command like any other.
        if d.inner.is_none()
            && d.code.is_empty()
            && d.option_code.is_empty()
            && d.opaque.is_empty()
            && !d.stdin_code
            && d.script.is_none()
            && d.runs.is_empty()
        {
            break;
        }
        layers += 1;
        // A project's command run by its tool (`uv run pytest`, `bundle exec rake`) is
        // judged by that command for its pattern (`arity`); other wrappers get none.
        if !table::wrappers::runs_in_subcommand(&name) {
            fx.wrapped = true;
        }
        let start = cwd.clone();
        if let Some(dir) = &d.chdir {
            cwd = match resolve(dir, &cwd, ctx) {
                Some(p) => Cwd::Known(p),
                None => Cwd::Unknown,
            };
        }
        // The wrapper opens its own files (`time -o F`) where it starts; its code
        // string runs where it moved to (`env -C DIR -S CODE`).
        let mut here = d.clone();
        here.code.clear();
        here.option_code.clear();
        apply_description(&name, &here, &refs, &start, ctx, fx);
        let code_only = Description {
            code: d.code.clone(),
            option_code: d.option_code.clone(),
            ..Description::default()
        };
        apply_description(&name, &code_only, &refs, &cwd, ctx, fx);
        let Some(inner) = d.inner.and_then(|k| cur.get(k..)).map(<[String]>::to_vec) else {
            return;
        };
        if inner.is_empty() {
            return;
        }
        fx.note(format!(
            "Runs `{}` through `{name}`",
            basename(inner.first().map(String::as_str).unwrap_or(""))
        ));
        let text = join(&inner);
        fx.parts.push(Part {
            words: inner.clone(),
            text: text.clone(),
            cwd: cwd.path().map(|p| p.display().to_string()),
        });
        fx.running = Some(fx.push_at(CapabilityRequest::new(
            Capability::ProcessExecute,
            text.clone(),
            format!("Run {text}"),
        )));
        // A build run through `timeout` (`timeout 60 pytest`): verdicted as the build;
        // the wrapper's own request carries the same verdict only when the whole
        // command is one (`programs::builds`), so this one never decides alone.
        project_program_request(&inner, cwd.path(), ctx, fx);
        if let Some(v) = crate::programs::builds::wrapped_verdict(&name, &inner, cwd.path(), ctx) {
            let v = on_search_path(v, inner.first(), cwd.path(), ctx);
            fx.verdicts.push((text.clone(), Some(v)));
        }
        if fx.composed && layers == 1 && name == "xargs" {
            // The reader a verified `… | xargs -0 PROG` runs: verified with it.
            let v = on_search_path(
                crate::model::vocab::Verdict::ReadOnly,
                inner.first(),
                cwd.path(),
                ctx,
            );
            fx.verdicts.push((text.clone(), Some(v)));
        }
        // The floor resolves the inner command's paths where it runs (`env -C / rm -rf .`).
        let moved = cwd.path().map(|p| ctx.with_cwd(p.to_path_buf()));
        fx.hardline(floor::check(
            &inner,
            moved.as_ref().unwrap_or(ctx),
            &crate::analysis::lexer::Reader,
        ));
        cur = inner;
    }
    inner_effects(&cur, &cwd, ctx, fx, depth);
}

/// Effects of the innermost command.
fn inner_effects(
    words: &[String],
    cwd: &Cwd,
    ctx: &AnalysisContext,
    fx: &mut Effects,
    depth: usize,
) {
    let Some(first) = words.first() else { return };
    let name = basename(first);
    let text = join(words);
    let refs: Vec<&str> = words.iter().map(String::as_str).collect();
    let d = table::describe(&refs);
    if let Some(hit) = table::packs::classify(&refs, fx.inline_input.as_deref()) {
        fx.pack_hit(hit);
    }

    if ARITHMETIC_NAMES.contains(&name) {
        // `test -v 'a[$(id)]'`, `let`, `declare`, `printf -v`, `read`: bash evaluates an
        // array subscript in these names as arithmetic, which runs its substitutions,
        // quoted or not (checked in bash). The text is only known when it runs; the
        // substitutions are read as code, so the floor sees them too.
        for w in words.iter().skip(1).filter(|w| arith::runs_in_subscript(w)) {
            fx.opaque.push(format!(
                "`{name}` evaluates the subscript of `{w}`, which runs a command substitution"
            ));
            for code in arith::substitutions(w) {
                fx.code.push((code, cwd.clone()));
            }
        }
    }
    if name == "history" {
        history_effects(words, cwd, ctx, fx);
    }
    if name == "eval" {
        let code = words.get(1..).map(join).unwrap_or_default();
        if code.contains('$') || code.contains('`') {
            fx.opaque.push(format!(
                "`eval` of `{code}`, whose text is only known when it runs"
            ));
        }
    }
    // Code strings, scripts, options that run, read or write something: the table.
    apply_description(name, &d, &refs, cwd, ctx, fx);
    if table::is_shell(name) && d.code.is_empty() && !d.stdin_code && d.script.is_none() {
        fx.inline_code = true;
    }
    // A command the program runs in turn (`git bisect run make`).
    if let Some(inner) = d.inner.and_then(|k| words.get(k..))
        && !inner.is_empty()
        && depth < 4
    {
        let inner = inner.to_vec();
        let itext = join(&inner);
        fx.wrapped = true;
        fx.note(format!("`{name}` runs `{itext}`"));
        fx.parts.push(Part {
            words: inner.clone(),
            text: itext.clone(),
            cwd: cwd.path().map(|p| p.display().to_string()),
        });
        fx.push(CapabilityRequest::new(
            Capability::ProcessExecute,
            itext.clone(),
            format!("Run {itext}"),
        ));
        fx.hardline(floor::check(&inner, ctx, &crate::analysis::lexer::Reader));
        run_words(inner, cwd.clone(), ctx, fx, depth + 1);
    }

    // Inline code and programs: no always pattern broader than exact.
    if matches!(
        name,
        "python"
            | "python2"
            | "python3"
            | "node"
            | "nodejs"
            | "perl"
            | "ruby"
            | "php"
            | "deno"
            | "bun"
            | "lua"
    ) && words.iter().skip(1).any(|w| {
        matches!(
            w.as_str(),
            "-c" | "-e" | "-E" | "-r" | "--eval" | "-p" | "--print" | "eval"
        )
    }) {
        fx.inline_code = true;
        fx.note(format!("`{name}` runs inline code from its arguments"));
    }

    if table::is_network_command(words) {
        fx.push(CapabilityRequest::new(
            Capability::NetworkAccess,
            text.clone(),
            format!("Network access: {text}"),
        ));
    }
    if name == "git" {
        git_effects(words, &text, cwd, ctx, fx);
    }
    // Containers that get the host, clusters (`crate::analysis::containers`).
    let c = crate::analysis::containers::effects(words, cwd.path(), ctx);
    c.notes.into_iter().for_each(|n| fx.note(n));
    c.requests.into_iter().for_each(|r| fx.push(r));
    if table::FS_VERBS.contains(&name) {
        for w in fs_writes(name, words) {
            write_request(&w, cwd, ctx, fx);
        }
        // A backup (`-b`, `--backup`, `-S SUFFIX`) is one more file, named by a suffix
        // the environment may choose (`SIMPLE_BACKUP_SUFFIX`, `VERSION_CONTROL`): the
        // program oracle saw `mv -b src/main.rs data.json` make `data.json~`. Its place
        // is only known when it runs.
        if matches!(name, "cp" | "mv" | "ln" | "install") && makes_backup(words) {
            unresolved_request(
                Capability::FileWriteOutsideProject,
                "Write",
                &format!("a backup made by `{}`", join(words)),
                fx,
            );
        }
        // `ln -f` over an existing name links under a temporary name beside it, then
        // renames it over (the program oracle saw `ln --force .env b.txt` make one).
        if name == "ln" && forces_over_existing(words, cwd, ctx) {
            unresolved_request(
                Capability::FileWriteOutsideProject,
                "Write",
                &format!("a temporary name made by `{}`", join(words)),
                fx,
            );
        }
        // `mkdir -p` also makes every missing directory above its operands (the program
        // oracle saw `mkdir -m 700 -p src/x/y` make `src/x`, unreported).
        if name == "mkdir" {
            for w in mkdir_parents(words, cwd, ctx) {
                write_request(&w, cwd, ctx, fx);
            }
        }
        // What is copied, moved or hard-linked is read: its content is then reachable
        // under the new name, which no secret rule names (`mv .env notes.txt`). A
        // symbolic link is not: a read through it resolves to the file it names.
        let symbolic = name == "ln"
            && words.iter().skip(1).any(|w| {
                w == "--symbolic" || (w.starts_with('-') && !w.starts_with("--") && w.contains('s'))
            });
        if matches!(name, "cp" | "install" | "mv" | "ln") && !symbolic {
            // A directory moved, or copied whole, takes everything below it along:
            // each file is read, through the links `cp -L` follows (the program oracle
            // saw `mv notes /tmp/x` carry a link to `~/.cargo/credentials.toml` out,
            // and `cp -rL` copies what it names).
            let tree = crate::model::vocab::DirectoryRead {
                recursive: true,
                follow: name == "cp"
                    && words.iter().skip(1).any(|w| {
                        w == "--dereference"
                            || (w.starts_with('-') && !w.starts_with("--") && w.contains('L'))
                    }),
                ..Default::default()
            };
            let whole = name == "mv" || (name == "cp" && copies_recursively(words));
            for r in cp_sources(words) {
                if whole {
                    recursive_read_request(&r, &tree, cwd, ctx, fx);
                } else {
                    read_request(&r, cwd, ctx, fx);
                }
            }
        }
    }
    match name {
        "sed" => sed_effects(words, &text, cwd, ctx, fx),
        "find" => find_effects(words, cwd, ctx, fx, depth),
        "curl" => {
            for v in flag_values(words, &["-o", "--output"]) {
                write_request(&v, cwd, ctx, fx);
            }
        }
        "wget" => {
            for v in flag_values(
                words,
                &[
                    "-O",
                    "--output-document",
                    "-P",
                    "--directory-prefix",
                    "-o",
                    "--output-file",
                ],
            ) {
                write_request(&v, cwd, ctx, fx);
            }
        }
        "shred" | "unlink" => {
            for w in words.iter().skip(1).filter(|w| !w.starts_with('-')) {
                write_request(w, cwd, ctx, fx);
            }
        }
        _ => {}
    }
    if let Some((_, value_flags, pattern_first)) = READERS.iter().find(|(n, _, _)| *n == name) {
        reader_effects(
            name,
            words,
            value_flags,
            *pattern_first,
            &text,
            cwd,
            ctx,
            fx,
        );
    }
}

/// Whether a `cp` copies directories whole (`-r`, `-R`, `-a`, `--recursive`,
/// `--archive`, in a cluster too).
fn copies_recursively(words: &[String]) -> bool {
    words.iter().skip(1).take_while(|w| *w != "--").any(|w| {
        matches!(w.as_str(), "--recursive" | "--archive")
            || (w.starts_with('-')
                && !w.starts_with("--")
                && w.chars().skip(1).any(|c| matches!(c, 'r' | 'R' | 'a')))
    })
}

/// `find DIR… -exec CMD {} ;`: the command runs (with `{}` standing for what was found
/// under DIR); `-delete` writes DIR; `-fprint FILE` writes FILE.
fn find_effects(
    words: &[String],
    cwd: &Cwd,
    ctx: &AnalysisContext,
    fx: &mut Effects,
    depth: usize,
) {
    let mut starts: Vec<String> = words
        .iter()
        .skip(1)
        .take_while(|w| !w.starts_with('-') && *w != "(" && *w != "!" && *w != "\\(")
        .cloned()
        .collect();
    if starts.is_empty() {
        starts.push(".".to_string());
    }
    let mut i = 1;
    while let Some(w) = words.get(i) {
        match w.as_str() {
            "-delete" => {
                fx.escalated = true;
                for s in &starts {
                    write_request(s, cwd, ctx, fx);
                }
            }
            "-fprint" | "-fprint0" | "-fprintf" | "-fls" => {
                fx.escalated = true;
                if let Some(f) = words.get(i + 1) {
                    write_request(f, cwd, ctx, fx);
                }
            }
            "-exec" | "-execdir" | "-ok" | "-okdir" => {
                fx.escalated = true;
                let inner: Vec<String> = words
                    .iter()
                    .skip(i + 1)
                    .take_while(|x| *x != ";" && *x != "+" && *x != "\\;")
                    .cloned()
                    .collect();
                i += inner.len();
                if depth < 4 && !inner.is_empty() {
                    for s in &starts {
                        let with_dir: Vec<String> = inner
                            .iter()
                            .map(|x| if x == "{}" { s.clone() } else { x.clone() })
                            .collect();
                        let text = join(&with_dir);
                        fx.note(format!("`find {w}` runs `{}`", join(&inner)));
                        fx.parts.push(Part {
                            words: with_dir.clone(),
                            text: text.clone(),
                            cwd: cwd.path().map(|p| p.display().to_string()),
                        });
                        fx.push(CapabilityRequest::new(
                            Capability::ProcessExecute,
                            text.clone(),
                            format!("Run {text}"),
                        ));
                        if fx.composed && w == "-exec" {
                            fx.verdicts
                                .push((text.clone(), Some(crate::model::vocab::Verdict::ReadOnly)));
                        }
                        fx.hardline(floor::check(
                            &with_dir,
                            ctx,
                            &crate::analysis::lexer::Reader,
                        ));
                        fx.wrapped = true;
                        run_words(with_dir, cwd.clone(), ctx, fx, depth + 1);
                    }
                }
            }
            _ => {}
        }
        i += 1;
    }
}
