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

use serde::Serialize;

use super::{Exec, Observed};
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
