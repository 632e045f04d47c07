//! What one program's words mean (`Description`: inner command, code strings, script,
//! reads, writes, options that run something, opaque parts), where a code string is
//! (`CodeArg`) and what runs another program (`Via`).
//!
//! The program families fill a `Description` and the dispatcher (`unwrap::describe`)
//! hands one to each; both import it from here, below them, so no family reaches back
//! up to the dispatcher for its types.

use super::options::{Does, Parsed};

/// Where a code string is in the words: from byte `offset` of word `word`, and with
/// `join_rest` every later word too, joined by spaces (`eval a b`, `watch a b`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CodeArg {
    pub word: usize,
    pub offset: usize,
    pub join_rest: bool,
}

/// An option or operand that makes a program run another program.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Via {
    /// The program and option, as a user would name it (`git push --receive-pack`).
    pub what: String,
    /// Why it runs something.
    pub why: &'static str,
}

/// What one program's words mean, read by its table entry. Indices are into the words
/// given to `describe`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Description {
    /// The first word of the command this one runs (`timeout 5 rm x` -> 2).
    pub inner: Option<usize>,
    /// Code strings the program runs through a shell.
    pub code: Vec<CodeArg>,
    /// Shell code a known program runs for one of its options or from its own program
    /// text: an option's value (`tar -I CMD`, `rsync -e CMD`), a configuration value
    /// (`git -c core.pager=CMD`, `PAGER=CMD`, with git's `git credential-` prefix where
    /// git adds it), a literal command inside another language (vim's `:!cmd`, awk's
    /// `system("…")`, sed's `e`). Read like `code` (requests, floor), but it does not by
    /// itself make the command obfuscated: the program is known, and the option's own
    /// request (`runs`) already asks; code that cannot be read still makes it so.
    pub option_code: Vec<String>,
    /// The program reads shell code from stdin (a bare shell, `chroot DIR`).
    pub stdin_code: bool,
    /// The program runs a script file whose commands are not analyzed.
    pub script: Option<usize>,
    /// The working directory of what runs (`env -C DIR`, `sudo -D DIR`).
    pub chdir: Option<String>,
    pub reads: Vec<String>,
    pub writes: Vec<String>,
    /// Options that make the program run something else.
    pub runs: Vec<Via>,
    /// Why the words cannot be fully read (an unknown option of a wrapper or shell).
    pub opaque: Vec<String>,
    /// An option means no inner command runs (`command -v x`, `taskset -p`).
    pub ends: bool,
    /// The words with abbreviated long options spelled out (`rm --rec` ->
    /// `rm --recursive`), when that changed anything: the floor matches on them.
    pub canonical: Option<Vec<String>>,
}

impl Description {
    /// Records what the options found do (chdir, reads, writes, runs, code, ends);
    /// `program` names the command in what is shown (`git push`).
    pub(crate) fn apply_options(&mut self, parsed: &Parsed, words: &[&str], program: &str) {
        for f in &parsed.found {
            let shown = match (f.opt.long, f.opt.short) {
                (Some(long), _) => format!("{program} --{long}"),
                (None, Some(c)) => format!("{program} -{c}"),
                (None, None) => program.to_string(),
            };
            match (f.opt.does, &f.value) {
                (Does::Nothing, _) => {}
                (Does::Chdir, Some(v)) => self.chdir = Some(v.clone()),
                (Does::Reads, Some(v)) => self.reads.push(v.clone()),
                (Does::ReadsList, Some(v)) => {
                    self.reads.push(v.clone());
                    self.opaque.push(format!(
                        "`{shown}` reads the files listed in `{v}`, known only when it runs"
                    ));
                }
                (Does::Writes, Some(v)) => self.writes.push(v.clone()),
                (Does::Runs(why), _) => self.runs.push(Via { what: shown, why }),
                (Does::RunsCode(kind, why), value) => {
                    self.runs.push(Via { what: shown, why });
                    if let Some(v) = value
                        && let Some(code) = kind.code_start(v).and_then(|at| v.get(at..))
                    {
                        self.option_code.push(code.to_string());
                    }
                }
                (Does::Code, Some(_)) => {
                    if let Some((word, offset)) = f.value_at {
                        self.code.push(CodeArg {
                            word,
                            offset,
                            join_rest: false,
                        });
                    }
                }
                (Does::RunsFile(why), Some(v)) => {
                    self.reads.push(v.clone());
                    self.runs.push(Via { what: shown, why });
                }
                (Does::Ends, _) => self.ends = true,
                (
                    Does::Chdir
                    | Does::Reads
                    | Does::ReadsList
                    | Does::Writes
                    | Does::Code
                    | Does::RunsFile(_),
                    None,
                ) => {}
            }
        }
        self.canonicalize(parsed, words);
    }

    /// Spells out abbreviated long options found by the parser.
    fn canonicalize(&mut self, parsed: &Parsed, words: &[&str]) {
        let mut out: Vec<String> = match &self.canonical {
            Some(c) => c.clone(),
            None => words.iter().map(|w| (*w).to_string()).collect(),
        };
        let mut changed = false;
        for f in &parsed.found {
            let (Some(long), Some(word)) = (f.opt.long, words.get(f.at)) else {
                continue;
            };
            // A prefix a partial grammar reads as several options has no one spelling.
            if parsed.found.iter().filter(|g| g.at == f.at).count() > 1 {
                continue;
            }
            let Some(written) = word.strip_prefix("--") else {
                continue;
            };
            let (name, value) = match written.split_once('=') {
                Some((n, v)) => (n, Some(v)),
                None => (written, None),
            };
            if name == long {
                continue;
            }
            if let Some(slot) = out.get_mut(f.at) {
                *slot = match value {
                    Some(v) => format!("--{long}={v}"),
                    None => format!("--{long}"),
                };
                changed = true;
            }
        }
        if changed {
            self.canonical = Some(out);
        }
    }

    /// Whether the program runs code or another command in any form.
    pub fn runs_something(&self) -> bool {
        self.inner.is_some()
            || !self.code.is_empty()
            || !self.option_code.is_empty()
            || self.stdin_code
            || self.script.is_some()
            || !self.runs.is_empty()
    }
}
