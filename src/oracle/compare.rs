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
//! The strict check (`strict`, issue 9) holds bash to the static evaluator's code on its
//! own, opaque or not: see `strict` for what "agrees" means. A disagreement is a failure
//! of its own kind in the report.

use serde::Serialize;

use super::{Exec, Observed, RunStatus};
use crate::analysis::ast::{EvaluatedCode, EvaluatedCommand};
use crate::config::Policy;
use crate::decide::decide;
use crate::rules::Action;
use crate::vocab::{Analysis, AnalysisContext, Capability, CommandClass, Part};

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
}

impl Reason {
    pub fn as_str(self) -> &'static str {
        match self {
            Reason::ProgramNotReported => "programNotReported",
            Reason::ArgumentsDiffer => "argumentsDiffer",
            Reason::SearchedNotReported => "searchedNotReported",
            Reason::WriteNotReported => "writeNotReported",
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

/// How an executed argv relates to the parts.
fn exec_finding(exec: &Exec, parts: &[Part]) -> Option<Reason> {
    let (program, args) = exec.argv.split_first()?;
    let program = basename(program);
    let mut same_program = false;
    for p in parts {
        let Some((w0, rest)) = command_words(p).split_first() else {
            continue;
        };
        if dynamic(w0) || basename(w0) == program {
            same_program = true;
            if args_match(rest, args) {
                return None;
            }
        }
    }
    Some(if same_program {
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
        let clean = |s: &str| crate::paths::clean(std::path::Path::new(s));
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

/// Bash's builtins and keywords (bash 5.2, `compgen -b -k`): they never reach `execve`,
/// so the strict check expects no executed argv for them.
const BUILTINS: &[&str] = &[
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

/// Why bash's run and the evaluator's code disagree (the strict check, issue 9).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum StrictReason {
    /// An evaluated command that must have run (literal words, external program,
    /// straight code that bash entered, the command ran to its end) was not executed.
    NotExecuted,
    /// Bash executed a program the evaluated code names, with arguments no evaluated
    /// command of that program has.
    ExecutedDifferently,
}

impl StrictReason {
    pub fn as_str(self) -> &'static str {
        match self {
            StrictReason::NotExecuted => "evaluatedNotExecuted",
            StrictReason::ExecutedDifferently => "executedNotEvaluated",
        }
    }
}

/// One disagreement of the strict check.
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
}

/// Whether `c`'s program is external: a literal name that is no builtin, keyword,
/// function or alias of the code.
fn external<'a>(c: &'a EvaluatedCommand, defines: &[String]) -> Option<&'a str> {
    let w0 = c.words.first()?;
    if !c.literal.first().copied().unwrap_or(false)
        || BUILTINS.contains(&w0.as_str())
        || defines.iter().any(|d| d == w0)
    {
        return None;
    }
    Some(basename(w0))
}

/// The commands of `code` the strict check holds bash to: literal words, external
/// program (`defines`: every function and alias the evaluated code defines).
fn checked<'a>(code: &'a EvaluatedCode, defines: &[String]) -> Vec<&'a EvaluatedCommand> {
    code.commands
        .iter()
        .filter(|c| external(c, defines).is_some() && c.literal.iter().all(|l| *l))
        .collect()
}

/// Whether an evaluated command stands for `argv`: the program by basename, a literal
/// word equal to one argument, an unknown word for any number of them.
fn evaluated_matches(c: &EvaluatedCommand, argv: &[String]) -> bool {
    let (Some(w0), Some((p, args))) = (c.words.first(), argv.split_first()) else {
        return false;
    };
    if basename(w0) != basename(p) {
        return false;
    }
    let words: Vec<String> = c
        .words
        .iter()
        .zip(&c.literal)
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

/// The strict check (issue 9's done criterion): what bash executed against the code the
/// static evaluator computed. Precisely:
/// - An evaluated command is *checked* when its program word is a literal, external
///   name (no builtin or keyword, no function or alias the code defines) and all its
///   words are literals.
/// - A code entry is *entered* when it runs with its parent (the command's residual, or
///   the residual of code that was entered) and its parent was entered (the command
///   itself always is); code fed to a shell, function, `xargs`, interpreter, or a name
///   a glob may stand for, is entered when bash executed at least one of its checked
///   commands exactly (the sandbox has only bash: `base64`, `python3`, `xargs` fail, so
///   what they would feed never runs).
/// - `NotExecuted`: bash ran the command to its end, a code entry was entered and is
///   straight (no `&&`, `||`, `&`, `if`, loop, `case`, function definition: each of its
///   commands runs), and one of its checked commands was not executed (same basename,
///   same arguments exactly).
/// - `ExecutedDifferently`: bash executed an argv whose program some checked evaluated
///   command names, and no evaluated command of that program (an unknown word standing
///   for any run of arguments) has its arguments. Holds on time-outs too: an executed
///   argv is a fact.
pub fn strict(codes: &[EvaluatedCode], observed: &Observed) -> StrictVerdict {
    let executed = |c: &EvaluatedCommand| {
        observed
            .executed
            .iter()
            .any(|e| evaluated_matches(c, &e.argv))
    };
    // Every name any code defines: a function defined in the residual is called from
    // code fed elsewhere.
    let defines: Vec<String> = codes.iter().flat_map(|c| c.defines.clone()).collect();
    let mut entered: Vec<bool> = Vec::with_capacity(codes.len());
    let mut v = StrictVerdict::default();
    let push = |v: &mut StrictVerdict, f: StrictFinding| {
        if !v.findings.contains(&f) {
            v.findings.push(f);
        }
    };
    for code in codes {
        let mine = checked(code, &defines);
        let seen = mine.iter().filter(|c| executed(c)).count();
        let parent_entered = code
            .parent
            .is_none_or(|p| entered.get(p).copied().unwrap_or(false));
        let is_entered = if code.runs_with_parent {
            parent_entered
        } else {
            seen > 0
        };
        entered.push(is_entered);
        v.confirmed += seen;
        if is_entered && code.straight && observed.status == RunStatus::Ran {
            for c in mine.iter().filter(|c| !executed(c)) {
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
    let named: Vec<&str> = codes
        .iter()
        .flat_map(|code| checked(code, &defines))
        .filter_map(|c| external(c, &defines))
        .collect();
    for e in &observed.executed {
        let Some(p) = e.argv.first().map(|a| basename(a)) else {
            continue;
        };
        if !named.contains(&p) {
            continue;
        }
        let any = codes
            .iter()
            .flat_map(|code| &code.commands)
            .any(|c| evaluated_matches(c, &e.argv));
        if !any {
            push(
                &mut v,
                StrictFinding {
                    reason: StrictReason::ExecutedDifferently,
                    what: show_argv(&e.argv),
                },
            );
        }
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
        };
        assert_eq!(exec_finding(&exec, std::slice::from_ref(&part)), None);
        let other = Exec {
            argv: words(&["id"]),
            via: super::super::ExecVia::NotFound,
        };
        assert_eq!(
            exec_finding(&other, std::slice::from_ref(&part)),
            Some(Reason::ProgramNotReported)
        );
        let args = Exec {
            argv: words(&["ls", "/"]),
            via: super::super::ExecVia::NotFound,
        };
        assert_eq!(exec_finding(&args, &[part]), Some(Reason::ArgumentsDiffer));
    }

    fn observed(execs: &[&[&str]], writes: &[&str]) -> Observed {
        Observed {
            status: super::super::RunStatus::Ran,
            executed: execs
                .iter()
                .map(|a| Exec {
                    argv: words(a),
                    via: super::super::ExecVia::NotFound,
                })
                .collect(),
            searched: Vec::new(),
            writes: writes.iter().map(|w| w.to_string()).collect(),
        }
    }

    fn code(parent: Option<usize>, with_parent: bool, cmds: &[&[&str]]) -> EvaluatedCode {
        EvaluatedCode {
            code: String::new(),
            parent,
            runs_with_parent: with_parent,
            straight: true,
            commands: cmds
                .iter()
                .map(|c| EvaluatedCommand {
                    words: words(c),
                    literal: c.iter().map(|w| !w.starts_with('$')).collect(),
                })
                .collect(),
            defines: Vec::new(),
        }
    }

    /// The strict rule: a wrong value, a missing execution and a fed code that never ran.
    #[test]
    fn strict_check_holds_bash_to_the_evaluated_code() {
        let reasons = |codes: &[EvaluatedCode], o: &Observed| {
            strict(codes, o)
                .findings
                .iter()
                .map(|f| f.reason)
                .collect::<Vec<_>>()
        };
        // The residual `rm -rf /` ran as computed: agrees and is confirmed.
        let top = code(None, true, &[&["rm", "-rf", "/"]]);
        let v = strict(
            std::slice::from_ref(&top),
            &observed(&[&["rm", "-rf", "/"]], &[]),
        );
        assert!(v.findings.is_empty() && v.confirmed == 1, "{v:?}");
        // The evaluator said `rm -rf /`, bash ran `rX -rf /`: not executed.
        assert_eq!(
            reasons(
                std::slice::from_ref(&top),
                &observed(&[&["rX", "-rf", "/"]], &[])
            ),
            vec![StrictReason::NotExecuted]
        );
        // Bash ran `rm` with other arguments: both directions disagree.
        assert_eq!(
            reasons(
                std::slice::from_ref(&top),
                &observed(&[&["rm", "-rf", "/x"]], &[])
            ),
            vec![StrictReason::NotExecuted, StrictReason::ExecutedDifferently]
        );
        // Cut by the time limit: a missing execution is no evidence, a wrong one is.
        let mut cut = observed(&[], &[]);
        cut.status = RunStatus::TimedOut;
        assert!(reasons(std::slice::from_ref(&top), &cut).is_empty());
        cut.executed = observed(&[&["rm", "/x"]], &[]).executed;
        assert_eq!(
            reasons(std::slice::from_ref(&top), &cut),
            vec![StrictReason::ExecutedDifferently]
        );
        // Builtins never reach execve; unknown words match any run of arguments.
        let b = code(None, true, &[&["echo", "hi"], &["ls", "$d", "-l"]]);
        assert!(reasons(&[b], &observed(&[&["ls", "a", "b", "-l"]], &[])).is_empty());
        // Code fed to `base64 -d | bash`: the sandbox has no base64, so the fed code is
        // not entered; once one of its commands ran, all of a straight code must.
        let top = code(None, true, &[&["base64", "-d"], &["bash"]]);
        let fed = code(Some(0), false, &[&["shutdown", "-h", "now"], &["id"]]);
        let codes = [top, fed];
        assert!(
            reasons(&codes, &observed(&[&["base64", "-d"], &["bash"]], &[])).is_empty(),
            "not entered"
        );
        assert_eq!(
            reasons(
                &codes,
                &observed(
                    &[&["base64", "-d"], &["bash"], &["shutdown", "-h", "now"]],
                    &[]
                )
            ),
            vec![StrictReason::NotExecuted]
        );
        // A conditional code (`a && b`) holds no command to having run.
        let mut cond = code(None, true, &[&["a"], &["b"]]);
        cond.straight = false;
        assert!(reasons(&[cond], &observed(&[&["a"]], &[])).is_empty());
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
