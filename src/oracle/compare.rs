//! The property: what bash did (`Observed`) against what the analysis said and what the
//! default policy decided.
//!
//! Owns the matching rules and the violation reasons; nothing here runs anything.
//!
//! Matching, precisely:
//! - A part's words are taken without leading assignments (`NAME=value`). Its program is
//!   the basename of its first word; an executed argv's program is the basename of
//!   `argv[0]`.
//! - An executed argv is *reported* when some part has the same program and the same
//!   arguments, where a part word is *static* unless it holds a character that expands
//!   (`$ \` * ? [ { ~`). A static word must equal exactly one argument; a dynamic word
//!   may stand for any number of arguments (a glob, a brace, an unquoted expansion).
//!   A part whose program word is dynamic matches any program.
//! - Builtins and functions never reach `execve`; a program run inside `$( )`, `<( )`,
//!   a pipeline or a function body is executed like any other and must be a part too.
//! - A name bash only searched for on PATH (`exec name`, `command -v name`, or a shell
//!   whose not-found handler was removed) is reported when any part holds it as a word.
//! - A file opened for writing is reported when the analysis has a `file.write.*`
//!   request whose subject is the same resolved path.
//! - An analysis is *opaque* when its class is obfuscated or it fell back to the lexer.
//!
//! A command violates the property when something bash did is not reported and the
//! analysis is not opaque-and-held (opaque, not allowed, no always pattern). A violation
//! is *hard* (the done criterion) when the default policy allowed the call or offered an
//! always pattern; otherwise it is a softer disagreement.
//!
//! The strict check (`strict`) holds bash to the static evaluator's code on its
//! own, opaque or not, on the run in the sandbox layout that holds the evaluator's pure
//! producers: see `strict` for what "agrees" means and `StrictExclusion` for what it
//! does not hold a command to. A disagreement is a failure of its own kind in the
//! report.

use serde::Serialize;

use super::{Exec, Observed, RunStatus};
use crate::analysis::ast::{Entry, EvaluatedCode, EvaluatedCommand, Feed};
use crate::model::vocab::{Analysis, AnalysisContext, Capability, CommandClass, Part};
use crate::policy::config::Policy;
use crate::policy::decide::decide;
use crate::policy::rules::Action;

/// Why something bash did is not in the analysis.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Reason {
    /// Bash executed a program no part names.
    ProgramNotReported,
    /// A part names the program, but no part has its static arguments.
    ArgumentsDiffer,
    /// Bash looked a name up on PATH that no part holds.
    SearchedNotReported,
    /// Bash opened a file for writing that no write request names.
    WriteNotReported,
    /// Parts have the program and its arguments, but each in another directory than
    /// the one bash ran it in (a `cd` the analysis took as done had failed).
    CwdDiffers,
}

impl Reason {
    pub fn as_str(self) -> &'static str {
        match self {
            Reason::ProgramNotReported => "programNotReported",
            Reason::ArgumentsDiffer => "argumentsDiffer",
            Reason::SearchedNotReported => "searchedNotReported",
            Reason::WriteNotReported => "writeNotReported",
            Reason::CwdDiffers => "cwdDiffers",
        }
    }
}

/// One thing bash did that the analysis does not report.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Finding {
    pub reason: Reason,
    /// What bash did: the argv joined by spaces (each argument in `{:?}` form when it
    /// holds whitespace or control bytes), the searched name, or the written path.
    pub did: String,
}

/// The analysis' side, in the few facts a report needs.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Said {
    pub class: CommandClass,
    pub fallback: bool,
    pub decision: Action,
    /// The call-level always patterns the default policy offers.
    pub always_patterns: Vec<String>,
    /// Each part's text.
    pub parts: Vec<String>,
    /// The subjects of the write requests.
    pub writes: Vec<String>,
}

impl Said {
    pub fn opaque(&self) -> bool {
        self.class == CommandClass::Obfuscated || self.fallback
    }
}

/// The verdict on one command.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Verdict {
    pub findings: Vec<Finding>,
    pub said: Said,
    /// Findings exist and the policy allowed or offered an always pattern.
    pub hard: bool,
    /// Findings exist but the analysis is opaque and held (not allowed, no pattern).
    pub covered_by_opacity: bool,
}

impl Verdict {
    /// A violation of the property (hard or soft).
    pub fn violates(&self) -> bool {
        !self.findings.is_empty() && !self.covered_by_opacity
    }
}

/// Whether a part word expands (so stands for any number of arguments).
fn dynamic(word: &str) -> bool {
    word.contains(['$', '`', '*', '?', '[', '{', '~'])
}

fn is_assignment(word: &str) -> bool {
    word.split_once('=').is_some_and(|(name, _)| {
        let mut chars = name.chars();
        chars
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
            // `a[1]=x` is an assignment too.
            || name.contains('[') && !name.starts_with('[')
    })
}

fn basename(word: &str) -> &str {
    word.rsplit('/').next().unwrap_or(word)
}

/// A part's words without its leading assignments.
fn command_words(part: &Part) -> &[String] {
    let skip = part.words.iter().take_while(|w| is_assignment(w)).count();
    part.words.get(skip..).unwrap_or(&[])
}

/// Whether `words` (a part's static/dynamic words) can stand for `args`.
fn args_match(words: &[String], args: &[String]) -> bool {
    // ok[i][j]: words[i..] matches args[j..].
    let (n, m) = (words.len(), args.len());
    let mut ok = vec![vec![false; m + 1]; n + 1];
    if let Some(row) = ok.get_mut(n)
        && let Some(cell) = row.get_mut(m)
    {
        *cell = true;
    }
    for i in (0..n).rev() {
        for j in (0..=m).rev() {
            let Some(w) = words.get(i) else { continue };
            let v = if dynamic(w) {
                // Any number of arguments, none included.
                (j..=m).any(|k| ok.get(i + 1).and_then(|r| r.get(k)).copied() == Some(true))
            } else {
                args.get(j) == Some(w)
                    && ok.get(i + 1).and_then(|r| r.get(j + 1)).copied() == Some(true)
            };
            if let Some(cell) = ok.get_mut(i).and_then(|r| r.get_mut(j)) {
                *cell = v;
            }
        }
    }
    ok.first().and_then(|r| r.first()).copied() == Some(true)
}

/// Whether a part said to run in `said` (`None`: unknown) stands for a run in `ran`
/// (`None`: the trace does not know). Both are taken physically, through the
/// links the host's world holds at those paths (the sandbox binds the same world at
/// the same paths), so `cd link` matches where the link leads.
fn same_cwd(said: Option<&str>, ran: Option<&str>) -> bool {
    let (Some(said), Some(ran)) = (said, ran) else {
        return true;
    };
    let real = |p: &str| crate::model::paths::resolve_existing_prefix(std::path::Path::new(p));
    real(said) == real(ran)
}

/// How an executed argv relates to the parts.
fn exec_finding(exec: &Exec, parts: &[Part]) -> Option<Reason> {
    let (program, args) = exec.argv.split_first()?;
    let program = basename(program);
    let mut same_program = false;
    let mut same_args = false;
    for p in parts {
        let Some((w0, rest)) = command_words(p).split_first() else {
            continue;
        };
        if dynamic(w0) || basename(w0) == program {
            same_program = true;
            if args_match(rest, args) {
                same_args = true;
                if same_cwd(p.cwd.as_deref(), exec.cwd.as_deref()) {
                    return None;
                }
            }
        }
    }
    Some(if same_args {
        Reason::CwdDiffers
    } else if same_program {
        Reason::ArgumentsDiffer
    } else {
        Reason::ProgramNotReported
    })
}

/// `argv` as one line: plain arguments as they are, others in `{:?}` form.
pub fn show_argv(argv: &[String]) -> String {
    argv.iter()
        .map(|a| {
            if a.is_empty() || a.chars().any(|c| c.is_whitespace() || c.is_control()) {
                format!("{a:?}")
            } else {
                a.clone()
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Judges one command: the analysis is taken as given, the decision is computed the way
/// `compare` computes it (`tools::bash_call`, then `decide` under `policy`,
/// interactive).
pub fn judge(
    command: &str,
    analysis: Analysis,
    observed: &Observed,
    ctx: &AnalysisContext,
    policy: &Policy,
) -> Verdict {
    let call = crate::tools::bash_call(command, analysis, ctx, false);
    let decided = decide(policy, &[], &call, ctx, true);
    let analysis = call.analysis.as_ref();
    let parts: &[Part] = analysis.map(|a| a.parts.as_slice()).unwrap_or(&[]);
    let writes: Vec<String> = call
        .requests
        .iter()
        .filter(|r| {
            matches!(
                r.capability,
                Capability::FileWriteProject | Capability::FileWriteOutsideProject
            )
        })
        .map(|r| r.subject.clone())
        .collect();
    let said = Said {
        class: analysis.map_or(CommandClass::Obfuscated, |a| a.class),
        fallback: analysis.is_none_or(|a| a.fallback.is_some()),
        decision: decided.decision,
        always_patterns: decided.always_patterns.clone(),
        parts: parts.iter().map(|p| p.text.clone()).collect(),
        writes: writes.clone(),
    };

    let mut findings: Vec<Finding> = Vec::new();
    let mut push = |f: Finding| {
        if !findings.contains(&f) {
            findings.push(f);
        }
    };
    for e in &observed.executed {
        if let Some(reason) = exec_finding(e, parts) {
            push(Finding {
                reason,
                did: show_argv(&e.argv),
            });
        }
    }
    for name in &observed.searched {
        let handled = observed
            .executed
            .iter()
            .any(|e| e.argv.first().is_some_and(|a| basename(a) == name));
        let held = parts
            .iter()
            .any(|p| p.words.iter().any(|w| w == name || dynamic(w)));
        if !handled && !held {
            push(Finding {
                reason: Reason::SearchedNotReported,
                did: name.clone(),
            });
        }
    }
    for w in &observed.writes {
        let clean = |s: &str| crate::model::paths::clean(std::path::Path::new(s));
        if !writes.iter().any(|s| clean(s) == clean(w)) {
            push(Finding {
                reason: Reason::WriteNotReported,
                did: w.clone(),
            });
        }
    }
    let permissive = said.decision == Action::Allow || !said.always_patterns.is_empty();
    let covered_by_opacity = said.opaque() && !permissive;
    Verdict {
        hard: !findings.is_empty() && permissive,
        covered_by_opacity: !findings.is_empty() && covered_by_opacity,
        findings,
        said,
    }
}

/// Why bash's run and the evaluator's code disagree (the strict check).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum StrictReason {
    /// An evaluated command that must have run (see `strict`) was not executed.
    #[serde(rename = "evaluatedNotExecuted")]
    NotExecuted,
    /// Bash executed an argv no evaluated command stands for (and it is not a producer
    /// the analysis reports as a part), in evaluated code that shows everything it
    /// can run.
    ExecutedNotEvaluated,
    /// Code the evaluator wrote (a residual, a called body) is rejected by `bash -n`
    /// while the command itself is not.
    #[serde(rename = "evaluatedNotBash")]
    NotBash,
}

impl StrictReason {
    pub fn as_str(self) -> &'static str {
        match self {
            StrictReason::NotExecuted => "evaluatedNotExecuted",
            StrictReason::ExecutedNotEvaluated => "executedNotEvaluated",
            StrictReason::NotBash => "evaluatedNotBash",
        }
    }
}

/// Why the strict check held a command to less than everything (typed, counted and
/// shown in the report; none of them is a disagreement).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum StrictExclusion {
    /// Cut by the wall clock: a command not executed is no evidence.
    TimedOut,
    /// `bash -n` rejects the text (the grammar read something bash does not, such as
    /// `;;` outside a `case`): bash runs nothing after the error, so a command not
    /// executed is no evidence.
    BashSyntaxError,
    /// A piece of the evaluated code does not parse (for the engine, or for `bash -n`),
    /// the grammar skipped a word of it, or it is nested deeper than the analysis
    /// reads: what it runs is unknown, so executions are not held to it.
    #[serde(rename = "unreadPiece")]
    Unread,
    /// The evaluated code itself runs code it does not show (a command name or a code
    /// word only known when it runs, a shell reading input the evaluator did not
    /// compute): an execution no evaluated command stands for may come from there.
    OpenCode,
}

impl StrictExclusion {
    pub fn as_str(self) -> &'static str {
        match self {
            StrictExclusion::TimedOut => "timedOut",
            StrictExclusion::BashSyntaxError => "bashSyntaxError",
            StrictExclusion::Unread => "unreadPiece",
            StrictExclusion::OpenCode => "openCode",
        }
    }
}

/// One disagreement of the strict check, or why part of it did not apply.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StrictFinding {
    pub reason: StrictReason,
    /// The evaluated command (not executed) or the executed argv (not evaluated).
    pub what: String,
}

/// The strict check's verdict on one evaluated command.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StrictVerdict {
    pub findings: Vec<StrictFinding>,
    /// Evaluated commands bash was seen to execute exactly (0: nothing confirmed, e.g.
    /// everything was fed to a program the sandbox does not have).
    pub confirmed: usize,
    /// What the check did not hold the command to, each with the detail (the piece
    /// that is unread, why the code is open).
    pub exclusions: Vec<(StrictExclusion, String)>,
}

/// Bash's own prefixes that run the rest of the words as the command (`time -p`,
/// `command`, `exec` without options, `builtin` of one of those): bash executes what
/// follows them. `time` is a keyword only at the start of a pipeline (`X=1 time pwd`
/// and `a | time pwd` run the program `time`).
fn run_words(c: &EvaluatedCommand) -> (&[String], &[bool]) {
    let mut words: &[String] = &c.words;
    let mut literal: &[bool] = &c.literal;
    let mut first = !c.prefixed && !c.piped;
    loop {
        let keyword = std::mem::replace(&mut first, false);
        let skip = match words {
            [t, p, ..] if keyword && t == "time" && p == "-p" => 2,
            [t, next, ..] if keyword && t == "time" && !next.starts_with('-') => 1,
            [t, p, next, ..] if t == "command" && p == "-p" && !next.starts_with('-') => 2,
            [t, next, ..] if (t == "command" || t == "exec") && !next.starts_with('-') => 1,
            [b, next, ..] if b == "builtin" && matches!(next.as_str(), "command" | "exec") => 1,
            _ => 0,
        };
        if skip == 0 || !literal.iter().take(skip).all(|l| *l) {
            return (words, literal);
        }
        words = words.get(skip..).unwrap_or(&[]);
        literal = literal.get(skip..).unwrap_or(&[]);
    }
}

/// Whether `c`'s program is external: a literal name that is no builtin, keyword,
/// function or alias of the code.
fn external<'a>(c: &'a EvaluatedCommand, defines: &[String]) -> Option<&'a str> {
    let (words, literal) = run_words(c);
    let w0 = words.first()?;
    if !literal.first().copied().unwrap_or(false)
        || crate::programs::builtins::NAMES.contains(&w0.as_str())
        || defines.iter().any(|d| d == w0)
    {
        return None;
    }
    Some(basename(w0))
}

/// Whether bash runs `c` whenever its piece runs: a checked command whose redirects
/// cannot fail and whose words cannot end the shell.
fn certain(c: &EvaluatedCommand, defines: &[String]) -> bool {
    external(c, defines).is_some()
        && c.literal.iter().all(|l| *l)
        && !c.redirect_may_fail
        && !c.may_abort
}

/// Whether an evaluated command stands for `argv`: the program by basename, a literal
/// word equal to one argument, an unknown word for any number of them.
fn evaluated_matches(c: &EvaluatedCommand, argv: &[String]) -> bool {
    let (words, literal) = run_words(c);
    let (Some(w0), Some((p, args))) = (words.first(), argv.split_first()) else {
        return false;
    };
    if basename(w0) != basename(p) {
        return false;
    }
    let words: Vec<String> = words
        .iter()
        .zip(literal)
        .skip(1)
        .map(|(w, lit)| {
            if *lit {
                w.clone()
            } else {
                // Unknown: stands for any run of arguments, like a dynamic part word.
                "$?".to_string()
            }
        })
        .collect();
    literal_args_match(&words, args)
}

/// `args_match`, where only the marker `$?` is dynamic: an evaluated literal word may
/// hold `$` or `*` as plain characters and must then equal an argument exactly.
fn literal_args_match(words: &[String], args: &[String]) -> bool {
    match words.split_first() {
        None => args.is_empty(),
        Some((w, rest)) if w == "$?" => {
            (0..=args.len()).any(|k| literal_args_match(rest, args.get(k..).unwrap_or(&[])))
        }
        Some((w, rest)) => args
            .split_first()
            .is_some_and(|(a, more)| a == w && literal_args_match(rest, more)),
    }
}

/// Whether an executed argv is one of the pure producers the strict check's sandbox
/// holds (`sandbox::PRODUCERS`), run as itself.
fn producer(argv: &[String]) -> bool {
    argv.first()
        .is_some_and(|p| super::sandbox::PRODUCERS.contains(&basename(p)))
}

/// Commands that may end the shell (or the rest of the piece) before the commands
/// after them run: `exit`, `exec` of a command, `return`, a `trap`, `eval`/`source`
/// (their code runs in this shell), `set -e`/`-u`/`-o` (in the sandbox every program
/// fails or is missing, so `errexit` stops at the first one); and `coproc`, whose
/// command runs in the background, where the shell may end first (the grammar reads
/// `coproc NAME { …; }` as a command, not as `&`).
fn stops(c: &EvaluatedCommand) -> bool {
    // `builtin exit`, `command exec x`: the builtin itself.
    let words = {
        let mut w: &[String] = &c.words;
        while let [p, rest @ ..] = w
            && matches!(p.as_str(), "builtin" | "command")
            && rest.first().is_some_and(|n| !n.starts_with('-'))
        {
            w = rest;
        }
        w
    };
    let Some((w0, args)) = words.split_first() else {
        return false;
    };
    matches!(
        w0.as_str(),
        "exit"
            | "return"
            | "logout"
            | "trap"
            | "eval"
            | "source"
            | "."
            | "kill"
            | "suspend"
            | "coproc"
    ) || (w0 == "exec" && !args.is_empty())
        || (w0 == "set" && args.iter().any(|a| stopping_option(a)))
}

/// A shell option that makes a shell stop at a failure or an unset variable (`-e`,
/// `-u`, `-o errexit`, combined as `-eu`); `-o` is taken as either.
fn stopping_option(a: &str) -> bool {
    (a.starts_with('-') || a.starts_with('+'))
        && a != "--"
        && a.chars().skip(1).any(|c| matches!(c, 'e' | 'u' | 'o'))
}

/// How a shell command (`bash`, `sh`, …; `source` and `.` with `sourcing`) gets its
/// code, from its words after the name: bash's options, `-o`/`+o`/`-O`/`+O` and
/// `--rcfile`/`--init-file` taking an argument.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ShellInput {
    /// `-c`: a code string (the analysis reads it as one).
    String,
    /// Its standard input (`bash`, `bash -s`, `source /dev/stdin`).
    Stdin,
    /// A script: a file, or a `<( )` whose text the evaluator may have computed.
    Script,
}

fn shell_input(args: &[String], sourcing: bool) -> (ShellInput, bool) {
    let mut stopping = false;
    let mut i = 0;
    while let Some(a) = args.get(i) {
        if sourcing {
            break;
        }
        if a == "--" {
            i += 1;
            break;
        }
        if matches!(a.as_str(), "--rcfile" | "--init-file") {
            i += 2;
            continue;
        }
        if a.starts_with("--") {
            i += 1;
            continue;
        }
        if !(a.starts_with('-') || a.starts_with('+')) || a.len() < 2 {
            break;
        }
        let flags: Vec<char> = a.chars().skip(1).collect();
        if flags.contains(&'c') {
            return (ShellInput::String, stopping || stopping_option(a));
        }
        stopping |= flags.iter().any(|c| matches!(c, 'e' | 'u'));
        // `-o NAME` / `-O NAME`: the name is the next word (`-o errexit` stops).
        let takes = flags.iter().filter(|c| matches!(c, 'o' | 'O')).count();
        if flags.contains(&'o') {
            stopping |= args
                .get(i + 1)
                .is_some_and(|n| matches!(n.as_str(), "errexit" | "nounset"));
        }
        i += 1 + takes;
    }
    let input = match args.get(i) {
        None => {
            if sourcing {
                ShellInput::Script
            } else {
                ShellInput::Stdin
            }
        }
        Some(o) if matches!(o.as_str(), "/dev/stdin" | "/proc/self/fd/0" | "-") => {
            ShellInput::Stdin
        }
        Some(_) => ShellInput::Script,
    };
    (input, stopping)
}

/// A shell started with a stopping option (`bash -e`, `sh -o errexit`): code fed to it
/// is not straight.
fn stopping_shell(c: &EvaluatedCommand) -> bool {
    let (words, _) = run_words(c);
    words.split_first().is_some_and(|(w0, args)| {
        crate::programs::is_shell(basename(w0)) && shell_input(args, false).1
    })
}

/// Whether a piece may run code it does not show (the strict check cannot account for
/// every execution then), and why.
fn open(code: &EvaluatedCode, codes: &[EvaluatedCode], index: usize) -> Option<String> {
    // Builtins and the sandbox's programs that run a word as code.
    const CODE_RUNNERS: &[&str] = &[
        "eval",
        "source",
        ".",
        "exec",
        "command",
        "builtin",
        "time",
        "coproc",
        "trap",
        "alias",
        "sed",
        "mapfile",
        "readarray",
    ];
    // Code fed to a shell of this piece that the evaluator computed (of the piece,
    // or of the piece it is the residual of).
    let fed: usize = codes
        .iter()
        .filter(|c| {
            c.entry == Entry::Fed(Feed::Shell)
                && (c.parent == Some(index)
                    || (code.entry == Entry::Fed(Feed::Residual) && c.parent == code.parent))
        })
        .count();
    let mut reading = 0;
    for c in &code.commands {
        let (words, literal) = run_words(c);
        let Some(w0) = words.first() else { continue };
        if !literal.first().copied().unwrap_or(false) {
            return Some(format!(
                "the command name `{w0}` is only known when it runs"
            ));
        }
        if let Some((w, _)) = words
            .iter()
            .zip(literal)
            .find(|(w, lit)| !**lit && w.contains('\n'))
        {
            return Some(format!(
                "`{}` holds a line break, where bash may end the command",
                w.escape_debug()
            ));
        }
        if let Some(w) = words.iter().find(|w| w.contains("${") && w.contains('`')) {
            return Some(format!(
                "`{w}` holds a backtick inside `${{…}}`, which the grammar does not read as a command"
            ));
        }
        let name = basename(w0);
        let shell = crate::programs::is_shell(name);
        let sourcing = name == "source" || name == ".";
        // A `<( )` a shell runs as its script is computed code (a fed piece), not an
        // unknown word.
        let script_subst = |w: &String| (shell || sourcing) && w.starts_with("<(");
        if (shell || CODE_RUNNERS.contains(&name))
            && let Some((w, _)) = words
                .iter()
                .zip(literal)
                .skip(1)
                .find(|(w, lit)| !**lit && !script_subst(w))
        {
            return Some(format!("`{name}` gets `{w}`, only known when it runs"));
        }
        if shell || sourcing {
            let (input, _) = shell_input(words.get(1..).unwrap_or(&[]), sourcing);
            let reads = match input {
                ShellInput::String => false,
                ShellInput::Stdin => !c.static_input,
                ShellInput::Script => true,
            };
            if reads {
                reading += 1;
            }
        }
    }
    (reading > fed).then(|| {
        "a shell or `source` runs input or a script the evaluator did not compute".to_string()
    })
}

/// Why the evaluated code may run something it does not show: each piece that may run
/// (not fed to a program the sandbox lacks) and is unread, or is open (`open`; a
/// piece whose residual is a piece too is judged by that residual). Empty when the
/// evaluated code names every program it can run, so that every execution must be
/// accounted for by it.
pub fn unaccountable(codes: &[EvaluatedCode]) -> Vec<(StrictExclusion, String)> {
    let superseded = |i: usize| {
        codes
            .iter()
            .any(|c| c.entry == Entry::Fed(Feed::Residual) && c.parent == Some(i))
    };
    let mut out = Vec::new();
    for (i, code) in codes.iter().enumerate() {
        if code.entry == Entry::Fed(Feed::Program) {
            continue;
        }
        if let Some(why) = &code.unread {
            out.push((
                StrictExclusion::Unread,
                format!("{}: {why}", show_argv(std::slice::from_ref(&code.code))),
            ));
        } else if !superseded(i)
            && let Some(why) = open(code, codes, i)
        {
            out.push((StrictExclusion::OpenCode, why));
        }
    }
    out
}

/// The strict check (the static evaluator is sound only if it passes): what bash executed, in the sandbox
/// layout that holds the evaluator's pure producers (`Sandbox::run_with_producers`),
/// against the code the static evaluator computed (`evaluated_code`) and the
/// analysis' parts. Precisely:
/// - An evaluated command is *checked* when its program word (after bash's own
///   `time`, `command`, `exec`) is a literal, external name (no builtin or keyword, no
///   function or alias the code defines) and all its words are literals. It is
///   *certain* when also no redirect of it may fail and no word may end the shell
///   (`EvaluatedCommand::redirect_may_fail`, `may_abort`).
/// - A piece is *straight* when every command of it runs whenever it does: no `&&`,
///   `||`, `&`, `if`, loop, `case` or function definition, no compound redirect that
///   may fail, and no command that may stop the shell (`stops`).
/// - A piece is *entered* when it must have run: the first piece (the command as it
///   runs) always; its residual whenever it was; code it fed to a shell or to
///   `source`, or a function or alias it called, when it was entered, is straight, and
///   all its checked commands are certain (so the feeding one ran). Any other piece
///   (fed to `xargs`, an interpreter, a glob's names, a code string) needs a program
///   the sandbox may lack: it is entered when bash executed one of its checked
///   commands that no earlier piece also stands for.
/// - A piece `bash -n` rejects (`parsed`, per piece) is unread; if the evaluator wrote
///   it (`written`) while bash parses the command, that is `NotBash`.
/// - `NotExecuted`: bash ran the command to its end (and `bash -n` accepts it), a
///   piece was entered and is
///   straight, and one of its certain commands was not executed (same basename, same
///   arguments exactly). Code fed to a shell given `-e`, `-u` or `-o` is not straight.
/// - `ExecutedNotEvaluated`: bash executed an argv that no evaluated command stands
///   for (an unknown word standing for any run of arguments), that is not a producer
///   the analysis reports as a part (a `$(cat <<'EOF' …)` the evaluator replaced by its
///   value no longer names `cat`, but bash still runs it), while no piece that may run
///   is unread or open (`open`). Holds on time-outs too: an executed argv is a fact.
pub fn strict(
    codes: &[EvaluatedCode],
    observed: &Observed,
    parts: &[Part],
    parsed: &[Option<bool>],
) -> StrictVerdict {
    let mut v = StrictVerdict::default();
    // What bash does not parse is not run: code fed on from a producer may be any
    // text (an unread piece), but code the evaluator wrote must parse whenever the
    // command does.
    let mut pieces: Vec<EvaluatedCode> = codes.to_vec();
    for (piece, parsed) in pieces.iter_mut().zip(parsed) {
        if *parsed != Some(false) || piece.unread.is_some() {
            continue;
        }
        if piece.written && !observed.syntax_error {
            v.findings.push(StrictFinding {
                reason: StrictReason::NotBash,
                what: show_argv(std::slice::from_ref(&piece.code)),
            });
        }
        piece.unread = Some("bash -n rejects it".to_string());
    }
    let codes: &[EvaluatedCode] = &pieces;
    let executed = |c: &EvaluatedCommand| {
        observed
            .executed
            .iter()
            .any(|e| evaluated_matches(c, &e.argv))
    };
    // Every name any code defines: a function defined in the residual is called from
    // code fed elsewhere.
    let defines: Vec<String> = codes.iter().flat_map(|c| c.defines.clone()).collect();
    // A process substitution runs in the background: bash need not have started its
    // command when the rest ends, so a piece holding one is not straight.
    let straight = |code: &EvaluatedCode| {
        code.straight
            && !code.code.contains("<(")
            && !code.code.contains(">(")
            && code.unread.is_none()
            && !code.loose_redirect_may_fail
            && !code.commands.iter().any(stops)
    };
    let mut entered: Vec<bool> = Vec::with_capacity(codes.len());
    // Whether a piece or one of its parents runs something in the background: code
    // fed from there may be cut anywhere when the command ends.
    let mut behind: Vec<bool> = Vec::with_capacity(codes.len());
    let push = |v: &mut StrictVerdict, f: StrictFinding| {
        if !v.findings.contains(&f) {
            v.findings.push(f);
        }
    };
    let ran = observed.status == RunStatus::Ran && !observed.syntax_error;
    if observed.status != RunStatus::Ran {
        v.exclusions.push((
            StrictExclusion::TimedOut,
            "not held to having run".to_string(),
        ));
    }
    if observed.syntax_error {
        v.exclusions.push((
            StrictExclusion::BashSyntaxError,
            "bash -n rejects the text; not held to having run".to_string(),
        ));
    }
    for (i, code) in codes.iter().enumerate() {
        let checked: Vec<&EvaluatedCommand> = code
            .commands
            .iter()
            .filter(|c| external(c, &defines).is_some() && c.literal.iter().all(|l| *l))
            .collect();
        let seen = checked.iter().filter(|c| executed(c)).count();
        // Evidence that the piece ran: an execution of one of its commands that no
        // earlier piece (its parents, the command itself) also stands for (`echo … |
        // bash` runs `bash` whether or not a code string naming `bash` ever ran).
        let earlier = codes.get(..i).unwrap_or_default();
        let own = observed.executed.iter().any(|e| {
            checked.iter().any(|c| evaluated_matches(c, &e.argv))
                && !earlier
                    .iter()
                    .flat_map(|p| &p.commands)
                    .any(|c| evaluated_matches(c, &e.argv))
        });
        let parent = code
            .parent
            .and_then(|p| Some((*entered.get(p)?, codes.get(p)?)));
        // The sandbox holds `bash` and `sh` only: code fed to `zsh`, `dash`, `ash`…
        // does not run there.
        let feeds = |p: &EvaluatedCode| {
            straight(p)
                && p.commands
                    .iter()
                    .filter(|c| external(c, &defines).is_some())
                    .all(|c| certain(c, &defines))
                && p.commands.iter().all(|c| {
                    external(c, &defines).is_none_or(|name| {
                        !crate::programs::is_shell(name) || matches!(name, "bash" | "sh")
                    })
                })
        };
        let structural = match (code.entry, parent) {
            (Entry::Command, _) => true,
            (Entry::Fed(Feed::Residual), Some((entered, _))) => entered,
            (Entry::Fed(Feed::Shell | Feed::Call), Some((entered, p))) => entered && feeds(p),
            _ => false,
        };
        // A shell given `-e`/`-u`/`-o` stops at the first failure, and in the sandbox
        // everything but bash and the producers fails.
        let stopped_feeder = matches!(code.entry, Entry::Fed(Feed::Shell) | Entry::CodeString)
            && parent.is_some_and(|(_, p)| p.commands.iter().any(stopping_shell));
        let background = code.background
            || code
                .parent
                .is_some_and(|p| behind.get(p).copied().unwrap_or(true));
        behind.push(background);
        let is_entered = structural || own;
        entered.push(is_entered);
        v.confirmed += seen;
        if is_entered && straight(code) && !stopped_feeder && !background && ran {
            for c in checked
                .iter()
                .filter(|c| certain(c, &defines) && !executed(c))
            {
                push(
                    &mut v,
                    StrictFinding {
                        reason: StrictReason::NotExecuted,
                        what: show_argv(&c.words),
                    },
                );
            }
        }
    }
    let open = unaccountable(codes);
    if !open.is_empty() {
        v.exclusions.extend(open);
        return v;
    }
    for e in &observed.executed {
        let evaluated = codes
            .iter()
            .flat_map(|code| &code.commands)
            .any(|c| evaluated_matches(c, &e.argv));
        if evaluated || producer(&e.argv) && exec_finding(e, parts).is_none() {
            continue;
        }
        push(
            &mut v,
            StrictFinding {
                reason: StrictReason::ExecutedNotEvaluated,
                what: show_argv(&e.argv),
            },
        );
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(ws: &[&str]) -> Vec<String> {
        ws.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn static_words_match_exactly_and_dynamic_words_match_any_run() {
        assert!(args_match(&words(&["-la"]), &words(&["-la"])));
        assert!(!args_match(&words(&["-la"]), &words(&["-l"])));
        assert!(!args_match(&words(&[]), &words(&["x"])));
        assert!(args_match(&words(&["*.txt"]), &words(&["a.txt", "b.txt"])));
        assert!(args_match(&words(&["$X", "b"]), &words(&["b"])));
        assert!(!args_match(&words(&["$X", "b"]), &words(&["a", "c"])));
    }

    #[test]
    fn assignments_are_not_the_program() {
        let part = Part {
            words: words(&["A=1", "ls", "-la"]),
            text: "A=1 ls -la".into(),
            cwd: None,
        };
        let exec = Exec {
            argv: words(&["ls", "-la"]),
            via: super::super::ExecVia::NotFound,
            cwd: None,
        };
        assert_eq!(exec_finding(&exec, std::slice::from_ref(&part)), None);
        let other = Exec {
            argv: words(&["id"]),
            via: super::super::ExecVia::NotFound,
            cwd: None,
        };
        assert_eq!(
            exec_finding(&other, std::slice::from_ref(&part)),
            Some(Reason::ProgramNotReported)
        );
        let args = Exec {
            argv: words(&["ls", "/"]),
            via: super::super::ExecVia::NotFound,
            cwd: None,
        };
        assert_eq!(exec_finding(&args, &[part]), Some(Reason::ArgumentsDiffer));
    }

    #[test]
    fn a_part_stands_for_a_run_in_its_own_directory_only() {
        let root = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(root.path()).unwrap();
        std::fs::create_dir(root.join("docs")).unwrap();
        std::os::unix::fs::symlink(root.join("docs"), root.join("link")).unwrap();
        let at = |cwd: Option<&std::path::Path>| Part {
            words: words(&["grep", "-r", "k", "."]),
            text: "grep -r k .".into(),
            cwd: cwd.map(|c| c.display().to_string()),
        };
        let ran = |cwd: &std::path::Path| Exec {
            argv: words(&["grep", "-r", "k", "."]),
            via: super::super::ExecVia::NotFound,
            cwd: Some(cwd.display().to_string()),
        };
        // `cd docs; grep -r k .` with `docs` missing when it ran: grep ran in the root.
        assert_eq!(
            exec_finding(&ran(&root), &[at(Some(&root.join("docs")))]),
            Some(Reason::CwdDiffers)
        );
        assert_eq!(
            exec_finding(&ran(&root.join("docs")), &[at(Some(&root.join("docs")))]),
            None
        );
        // Through a link, as bash names the directory.
        assert_eq!(
            exec_finding(&ran(&root.join("link")), &[at(Some(&root.join("docs")))]),
            None
        );
        // A part whose cwd is unknown stands for any directory.
        assert_eq!(exec_finding(&ran(&root), &[at(None)]), None);
        // A trace that does not know the directory judges arguments only.
        let unknown = Exec {
            cwd: None,
            ..ran(&root)
        };
        assert_eq!(
            exec_finding(&unknown, &[at(Some(&root.join("docs")))]),
            None
        );
    }

    fn observed(execs: &[&[&str]], writes: &[&str]) -> Observed {
        Observed {
            status: super::super::RunStatus::Ran,
            executed: execs
                .iter()
                .map(|a| Exec {
                    argv: words(a),
                    via: super::super::ExecVia::NotFound,
                    cwd: None,
                })
                .collect(),
            searched: Vec::new(),
            writes: writes.iter().map(|w| w.to_string()).collect(),
            syntax_error: false,
            parsed: None,
        }
    }

    fn command(words_: &[&str]) -> EvaluatedCommand {
        EvaluatedCommand {
            words: words(words_),
            literal: words_.iter().map(|w| !w.starts_with('$')).collect(),
            redirect_may_fail: false,
            may_abort: false,
            static_input: false,
            prefixed: false,
            piped: false,
        }
    }

    fn code(parent: Option<usize>, entry: Entry, cmds: &[&[&str]]) -> EvaluatedCode {
        EvaluatedCode {
            code: String::new(),
            parent,
            entry,
            written: false,
            straight: true,
            commands: cmds.iter().map(|c| command(c)).collect(),
            defines: Vec::new(),
            loose_redirect_may_fail: false,
            background: false,
            unread: None,
        }
    }

    /// The reasons of the findings, each once, in order.
    fn reasons(codes: &[EvaluatedCode], o: &Observed, parts: &[Part]) -> Vec<StrictReason> {
        let mut r: Vec<StrictReason> = strict(codes, o, parts, &[])
            .findings
            .iter()
            .map(|f| f.reason)
            .collect();
        r.dedup();
        r
    }

    fn part(ws: &[&str]) -> Part {
        Part {
            words: words(ws),
            text: ws.join(" "),
            cwd: None,
        }
    }

    /// The strict rule: a wrong value, a missing execution, an execution no evaluated
    /// command stands for, time-outs and commands bash may skip.
    #[test]
    fn strict_check_holds_bash_to_the_evaluated_code() {
        // The residual `rm -rf /` ran as computed: agrees and is confirmed.
        let top = code(None, Entry::Command, &[&["rm", "-rf", "/"]]);
        let one = std::slice::from_ref(&top);
        let v = strict(one, &observed(&[&["rm", "-rf", "/"]], &[]), &[], &[]);
        assert!(v.findings.is_empty() && v.confirmed == 1, "{v:?}");
        // The evaluator said `rm -rf /`, bash ran `rX -rf /`: both directions disagree.
        assert_eq!(
            reasons(one, &observed(&[&["rX", "-rf", "/"]], &[]), &[]),
            vec![
                StrictReason::NotExecuted,
                StrictReason::ExecutedNotEvaluated
            ]
        );
        // Bash ran `rm` with other arguments: the same.
        assert_eq!(
            reasons(one, &observed(&[&["rm", "-rf", "/x"]], &[]), &[]),
            vec![
                StrictReason::NotExecuted,
                StrictReason::ExecutedNotEvaluated
            ]
        );
        // Cut by the time limit: a missing execution is no evidence, a wrong one is.
        let mut cut = observed(&[], &[]);
        cut.status = RunStatus::TimedOut;
        let v = strict(one, &cut, &[], &[]);
        assert!(v.findings.is_empty(), "{v:?}");
        assert_eq!(v.exclusions[0].0, StrictExclusion::TimedOut);
        // A text bash rejects runs nothing after the error: no evidence either.
        let mut rejected = observed(&[], &[]);
        rejected.syntax_error = true;
        let v = strict(one, &rejected, &[], &[]);
        assert!(v.findings.is_empty(), "{v:?}");
        assert_eq!(v.exclusions[0].0, StrictExclusion::BashSyntaxError);
        cut.executed = observed(&[&["rm", "/x"]], &[]).executed;
        assert_eq!(
            reasons(one, &cut, &[]),
            vec![StrictReason::ExecutedNotEvaluated]
        );
        // Builtins never reach execve; unknown words match any run of arguments.
        let b = code(
            None,
            Entry::Command,
            &[&["echo", "hi"], &["ls", "$d", "-l"]],
        );
        assert!(reasons(&[b], &observed(&[&["ls", "a", "b", "-l"]], &[]), &[]).is_empty());
        // `time` and `command` are bash's: the program is what follows.
        let t = code(None, Entry::Command, &[&["time", "-p", "git", "diff"]]);
        assert!(reasons(&[t], &observed(&[&["git", "diff"]], &[]), &[]).is_empty());
        // After an assignment `time` is the program.
        let mut t = code(None, Entry::Command, &[&["time", "pwd"]]);
        t.commands[0].prefixed = true;
        assert!(reasons(&[t], &observed(&[&["time", "pwd"]], &[]), &[]).is_empty());
        // So it is in a later stage of a pipeline (`a | time eval x` runs the program
        // `time`), where the keyword reading stands for nothing bash ran.
        let mut t = code(None, Entry::Command, &[&["time", "ls"]]);
        t.commands[0].piped = true;
        assert!(reasons(&[t.clone()], &observed(&[&["time", "ls"]], &[]), &[]).is_empty());
        t.commands[0].piped = false;
        assert_eq!(
            reasons(&[t], &observed(&[&["time", "ls"]], &[]), &[]),
            vec![
                StrictReason::NotExecuted,
                StrictReason::ExecutedNotEvaluated
            ]
        );
        // `builtin command git diff` runs `git`.
        let b = code(
            None,
            Entry::Command,
            &[&["builtin", "command", "git", "diff"]],
        );
        assert!(reasons(&[b], &observed(&[&["git", "diff"]], &[]), &[]).is_empty());
        // A process substitution may not have run when the rest ended.
        let mut ps = code(
            None,
            Entry::Command,
            &[&["git", "x", "/dev/fd/63"], &["curl"]],
        );
        ps.code = "git x <(curl)".to_string();
        assert!(reasons(&[ps], &observed(&[&["git", "x", "/dev/fd/63"]], &[]), &[]).is_empty());
    }

    /// Code fed to a shell must run when the feeding command did; a producer the
    /// residual no longer names is excused only where the analysis reports it.
    #[test]
    fn fed_code_and_producers() {
        // `echo … | base64 -d | bash`, the evaluator computed `shutdown -h now; id`.
        let top = code(None, Entry::Command, &[&["base64", "-d"], &["bash"]]);
        let fed = code(
            Some(0),
            Entry::Fed(Feed::Shell),
            &[&["shutdown", "-h", "now"], &["id"]],
        );
        let codes = [top.clone(), fed.clone()];
        let ran = &[
            &["base64", "-d"][..],
            &["bash"],
            &["shutdown", "-h", "now"],
            &["id"],
        ];
        assert!(reasons(&codes, &observed(ran, &[]), &[]).is_empty());
        // Bash ran what base64 really printed, and it is not what was computed.
        let wrong = &[&["base64", "-d"][..], &["bash"], &["whoami"]];
        assert_eq!(
            reasons(&codes, &observed(wrong, &[]), &[]),
            vec![
                StrictReason::NotExecuted,
                StrictReason::ExecutedNotEvaluated
            ]
        );
        // Fed to a shell the sandbox lacks (`… | zsh`), the code does not run there; fed
        // to `sh`, it does.
        let zsh = code(None, Entry::Command, &[&["base64", "-d"], &["zsh"]]);
        let ran_zsh = &[&["base64", "-d"][..], &["zsh"]];
        assert!(reasons(&[zsh, fed.clone()], &observed(ran_zsh, &[]), &[]).is_empty());
        let sh = code(None, Entry::Command, &[&["base64", "-d"], &["sh"]]);
        let ran_sh = &[&["base64", "-d"][..], &["sh"]];
        assert_eq!(
            reasons(&[sh, fed.clone()], &observed(ran_sh, &[]), &[]),
            vec![StrictReason::NotExecuted]
        );
        // A feeding command whose redirect may fail does not enter the fed code.
        let mut failing = top.clone();
        failing.commands[1].redirect_may_fail = true;
        let codes_f = [failing, fed.clone()];
        let v = strict(&codes_f, &observed(&[&["base64", "-d"]], &[]), &[], &[]);
        assert!(v.findings.is_empty(), "{v:?}");
        // Code fed to `bash -e` stops at the first failure: only what ran is held.
        let errexit = code(None, Entry::Command, &[&["base64", "-d"], &["bash", "-e"]]);
        let codes_e = [errexit, fed.clone()];
        let first = &[
            &["base64", "-d"][..],
            &["bash", "-e"],
            &["shutdown", "-h", "now"],
        ];
        assert!(reasons(&codes_e, &observed(first, &[]), &[]).is_empty());
        // What may stop the shell, or runs in the background, ends straight code.
        let bg = code(None, Entry::Command, &[&["coproc", "{", "a"], &["b"]]);
        assert!(reasons(&[bg], &observed(&[], &[]), &[]).is_empty());
        assert!(stops(&command(&["exec", "id"])) && !stops(&command(&["exec"])));
        assert!(stops(&command(&["set", "-eu"])) && !stops(&command(&["set", "-x"])));
        // Code fed from a background job may be cut when the command ends.
        let mut bg_top = code(None, Entry::Command, &[&["bash"]]);
        bg_top.background = true;
        bg_top.straight = false;
        let bg_fed = code(Some(0), Entry::Fed(Feed::Shell), &[&["wc", "-l"], &["id"]]);
        let first = &[&["bash"][..], &["wc", "-l"]];
        assert!(reasons(&[bg_top, bg_fed], &observed(first, &[]), &[]).is_empty());
        // A code string given to `bash -e -c` stops at the first failure too.
        let e = code(None, Entry::Command, &[&["bash", "-e", "-c", "x"]]);
        let s = code(
            Some(0),
            Entry::CodeString,
            &[&["head", "-5"], &["wc", "-l"]],
        );
        let ran = &[&["bash", "-e", "-c", "x"][..], &["head", "-5"]];
        assert!(reasons(&[e, s], &observed(ran, &[]), &[]).is_empty());
        // A conditional code (`a && b`) holds no command to having run.
        let mut cond = code(None, Entry::Command, &[&["a"], &["b"]]);
        cond.straight = false;
        assert!(reasons(&[cond], &observed(&[&["a"]], &[]), &[]).is_empty());
        // `x=$(cat <<'EOF' … EOF); $x`: the residual is `x=…; id`, bash also ran `cat`.
        let residual = code(None, Entry::Command, &[&["id"]]);
        let with_cat = observed(&[&["cat"], &["id"]], &[]);
        let r = std::slice::from_ref(&residual);
        assert_eq!(
            reasons(r, &with_cat, &[]),
            vec![StrictReason::ExecutedNotEvaluated],
            "a producer no part reports"
        );
        assert!(reasons(r, &with_cat, &[part(&["cat"]), part(&["$x"])]).is_empty());
        // Only producers are excused so: a part does not excuse another program.
        let with_ls = observed(&[&["ls"], &["id"]], &[]);
        assert_eq!(
            reasons(r, &with_ls, &[part(&["ls"])]),
            vec![StrictReason::ExecutedNotEvaluated]
        );
    }

    /// Which texts bash parses, and evidence that a piece ran.
    #[test]
    fn bash_parses_what_the_evaluator_wrote() {
        let mut top = code(None, Entry::Command, &[&["id"]]);
        top.written = true;
        let ran = observed(&[&["id"]], &[]);
        // A residual bash rejects while the command parses: the evaluator wrote it wrong.
        assert_eq!(
            strict(std::slice::from_ref(&top), &ran, &[], &[Some(false)])
                .findings
                .iter()
                .map(|f| f.reason)
                .collect::<Vec<_>>(),
            vec![StrictReason::NotBash]
        );
        // Fed text bash rejects is not run: unread, no disagreement.
        let fed = code(Some(0), Entry::Fed(Feed::Shell), &[&["busybox", "{", "x"]]);
        let codes = [code(None, Entry::Command, &[&["bash"]]), fed];
        let v = strict(
            &codes,
            &observed(&[&["bash"]], &[]),
            &[],
            &[Some(true), Some(false)],
        );
        assert!(v.findings.is_empty(), "{v:?}");
        assert_eq!(v.exclusions[0].0, StrictExclusion::Unread);
        // `echo '… bash …' | bash`: the outer `bash` ran, which is no evidence that a
        // code string naming `bash` (given to a program the sandbox lacks) ran too.
        let mut outer = code(None, Entry::Command, &[&["dash", "-c", "x"], &["bash"]]);
        outer.straight = false;
        let string = code(Some(0), Entry::CodeString, &[&["echo", "y"], &["bash"]]);
        let inner = code(Some(1), Entry::Fed(Feed::Shell), &[&["head", "-5"]]);
        let ran = observed(&[&["bash"], &["dash", "-c", "x"]], &[]);
        assert!(reasons(&[outer, string, inner], &ran, &[]).is_empty());
    }

    /// What stops the accounting of executions, typed: unread pieces and open code.
    #[test]
    fn exclusions_are_typed() {
        let top = code(None, Entry::Command, &[&["bash"]]);
        let mut unread = code(Some(0), Entry::Fed(Feed::Shell), &[]);
        unread.unread = Some("syntax error".to_string());
        let v = strict(
            &[top.clone(), unread],
            &observed(&[&["bash"], &["ls"]], &[]),
            &[],
            &[],
        );
        assert!(v.findings.is_empty(), "{v:?}");
        assert_eq!(v.exclusions[0].0, StrictExclusion::Unread);
        // `cat f | bash`: bash reads input the evaluator did not compute.
        let v = strict(
            std::slice::from_ref(&top),
            &observed(&[&["bash"], &["ls"]], &[]),
            &[],
            &[],
        );
        assert!(v.findings.is_empty(), "{v:?}");
        assert_eq!(v.exclusions[0].0, StrictExclusion::OpenCode);
        // A command name only known when it runs.
        let name = code(None, Entry::Command, &[&["$c", "x"]]);
        let v = strict(&[name], &observed(&[&["ls"]], &[]), &[], &[]);
        assert_eq!(v.exclusions[0].0, StrictExclusion::OpenCode);
        // An unknown word across a line break (`[[\<CR><LF> -n $(x) ]]`: bash ends
        // the command at the break and runs `-n`).
        let broken = code(None, Entry::Command, &[&["[[", "$\r\n -n", "]]"]]);
        let v = strict(&[broken], &observed(&[&["-n", "]]"]], &[]), &[], &[]);
        assert!(v.findings.is_empty(), "{v:?}");
        assert_eq!(v.exclusions[0].0, StrictExclusion::OpenCode);
        // Options that take an argument do not hide `-c`.
        assert_eq!(
            shell_input(&words(&["-O", "nullglob", "-c", "x"]), false).0,
            ShellInput::String
        );
        assert_eq!(
            shell_input(&words(&["-e"]), false),
            (ShellInput::Stdin, true)
        );
        assert_eq!(
            shell_input(&words(&["-o", "errexit", "s.sh"]), false),
            (ShellInput::Script, true)
        );
    }

    /// The verdict's kinds, on analyses whose shape no soundness fix changes.
    #[test]
    fn judge_sorts_findings_into_hard_soft_and_held() {
        let root = tempfile::tempdir().unwrap();
        let ctx = AnalysisContext::new(root.path(), None, root.path()).unwrap();
        let policy = Policy::builder().build();
        let j = |cmd: &str, o: &Observed| {
            judge(cmd, crate::analysis::analyze(cmd, &ctx), o, &ctx, &policy)
        };
        // What the analysis reports, bash did: nothing to say.
        let v = j("ls -la", &observed(&[&["ls", "-la"]], &[]));
        assert!(v.findings.is_empty() && !v.violates(), "{v:?}");
        // An allowed command under which bash ran something else: hard.
        let v = j("ls -la", &observed(&[&["ls", "-la"], &["id"]], &[]));
        assert_eq!(v.findings.len(), 1);
        assert_eq!(v.findings[0].reason, Reason::ProgramNotReported);
        assert!(v.hard && v.violates());
        // A write the analysis does not have, on an allowed command: hard.
        let out = root.path().join("out").display().to_string();
        let v = j("ls -la", &observed(&[&["ls", "-la"]], &[&out]));
        assert_eq!(v.findings[0].reason, Reason::WriteNotReported);
        assert!(v.hard);
        // The same write reported by the analysis: agreed.
        let cmd = "ls -la > out";
        let v = j(cmd, &observed(&[&["ls", "-la"]], &[&out]));
        assert!(v.findings.is_empty(), "{v:?}");
        // An opaque analysis that asks with no pattern holds whatever ran.
        let v = j(
            "echo \"$(whoami)\"",
            &observed(&[&["whoami"], &["id"]], &[]),
        );
        assert!(
            v.said.opaque() && v.covered_by_opacity && !v.violates(),
            "{v:?}"
        );
    }
}
