//! The shell IR: what an engine read from a command, as bash will run it. Simple
//! commands (assignments, words with quotes removed and their dynamic parts flagged,
//! redirections, the effective cwd), the constructs that make the command compound or
//! obfuscated, the functions it defines and the code it passes on as strings.
//!
//! Owns only these types. The engines fill them (`ast::walk` from the tree); effects,
//! the floor, classes and arity read them. Knows nothing of what programs do.

use std::ops::Range;
use std::path::PathBuf;

/// A function the command defines (`f() { …; }`), for the floor's fork-bomb shape.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Function {
    pub name: String,
    /// The byte range of its body in the text the engine read.
    pub body: Range<usize>,
}

/// A word as bash would pass it, quotes removed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Word {
    /// The value; dynamic parts (`$X`, `$(…)`) are kept as written.
    pub text: String,
    /// Holds an expansion or substitution whose value is unknown here.
    pub dynamic: bool,
    /// Holds an unquoted glob character or a brace expression.
    pub pattern: bool,
    /// Written without quotes, escapes or expansions and holding a brace expression
    /// bash expands into several words (`src/{a,b}`): `text` is exactly what bash
    /// brace-expands, so `shell::braces` gives the words it passes.
    pub braces: bool,
    /// Byte offset in the source, to put words and assignments back in order.
    pub start: usize,
}

/// What a redirect does to its target.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RedirectKind {
    Write,
    Read,
    /// `<>`: opens the file for reading and writing (on descriptor 0 by default, so
    /// the command reads it as its input).
    ReadWrite,
    /// `>&N`, `<&N`, `>&-`: no file is opened.
    Duplicate,
    /// `<<EOF` and `<<<word`: input from the command text itself.
    Inline,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Redirect {
    pub kind: RedirectKind,
    pub target: Option<Word>,
    /// What an `Inline` redirect feeds the command: a here-document's body or a
    /// here-string's word (with the newline bash adds).
    pub input: Option<InlineInput>,
}

/// The text a here-document or here-string feeds a command's input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct InlineInput {
    pub text: String,
    /// Expansions or substitutions change the text when it runs (an unquoted
    /// delimiter with `$`, a backtick or a backslash in the body; a dynamic word).
    pub dynamic: bool,
}

/// The effective working directory at some point of the command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Cwd {
    Known(PathBuf),
    /// After `cd "$X"`, `cd -`, a cd inside a branch or loop: relative paths are unknown.
    Unknown,
}

impl Cwd {
    pub fn path(&self) -> Option<&std::path::Path> {
        match self {
            Cwd::Known(p) => Some(p),
            Cwd::Unknown => None,
        }
    }
}

/// One simple command as bash would run it.
#[derive(Debug, Clone)]
pub(crate) struct SimpleCommand {
    pub assignments: Vec<Word>,
    pub words: Vec<Word>,
    pub redirects: Vec<Redirect>,
    /// The `process.execute` subject: assignments and words as bash sees them (quotes
    /// removed), in source order, joined by single spaces. Redirections are not part of
    /// it (each is a request of its own), so neither a quote trick nor a redirect can
    /// make a command look like another to a rule.
    pub text: String,
    pub cwd: Cwd,
    pub heredoc: bool,
    /// Bash forks a process for it: a stage of a pipeline of two or more, or sent to
    /// the background (`&`), counted within the innermost function body around it.
    pub forks: bool,
    /// It runs only when something before it decides: after `&&`/`||`, in the body of
    /// an `if`, a loop or a `case`, counted within the innermost function body.
    pub conditional: bool,
    /// Where its text starts in the command (0 where the engine does not say).
    pub start: usize,
    /// Its standard input is the standard output of the pipeline stage right before
    /// it, a simple command that starts at this offset, joined by a plain `|` (`find
    /// src -print0 | xargs -0 wc -l`). `None` where the engine does not say.
    pub piped_from: Option<usize>,
}

/// Why a command cannot be read in full (its class is then obfuscated).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Opacity {
    /// A substitution or expansion whose value is only known when it runs (`$( )`,
    /// `<( )`, `$(( ))`, `${ }`, backticks in a here-document body), named.
    Substitution(&'static str),
    /// Anything else, as a reason that completes "Command …" (`has a command name,
    /// `$X`, that is not a literal word`).
    Other(String),
}

/// Everything the walk learned.
#[derive(Debug, Default)]
pub(crate) struct Plan {
    pub commands: Vec<SimpleCommand>,
    /// Redirects on compound statements (`{ a; b; } > out`), with the cwd they open in.
    pub loose_redirects: Vec<(Redirect, Cwd)>,
    /// Commands outside substitutions (more than one makes the command compound).
    pub statements: usize,
    /// Why the command is compound (operators and constructs), deduplicated.
    pub compound: Vec<&'static str>,
    /// Why the command is obfuscated, deduplicated.
    pub obfuscated: Vec<Opacity>,
    /// A `&` sent something to the background.
    pub background: bool,
    /// The `cd` that made the cwd unknown, for the risk note.
    pub unknown_cwd_after: Option<String>,
    /// Functions defined in the command, with the byte range of their bodies.
    pub functions: Vec<Function>,
    /// Code the walk found outside the tree's substitutions (backticks in a
    /// here-document body), to be parsed again with the cwd it runs in.
    pub code: Vec<(String, Cwd)>,
    /// What the static evaluator computed: code to analyse in addition.
    pub evaluated: Evaluation,
}

/// The static evaluator's findings on one plan: bash code (the command with known
/// values in place, code fed to shells) whose analysis can only add requests, floor
/// hits and notes; the notes say where each value came from.
#[derive(Debug, Default)]
pub(crate) struct Evaluation {
    /// Each piece of code, the cwd it runs in, and how it comes to run.
    pub code: Vec<(String, Cwd, Feed)>,
    pub notes: Vec<String>,
    /// The code of each command substitution replaced by its output (`$(ls > f)` by
    /// nothing): bash ran it, though the residual no longer shows it. Only the oracle's
    /// strict check reads it; the walk reads these commands where they are written.
    pub folded: Vec<String>,
}

/// How a piece of evaluated code comes to run. The analysis reads every piece alike;
/// the oracle's strict check (`analysis::ast::evaluated_code`) needs to know which
/// pieces bash must have entered when the command ran.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Feed {
    /// The command itself with known values in place: it runs whenever the command does.
    Residual,
    /// Fed to a shell or to `source`, as its input or as the script it runs: it runs
    /// when that command does (and a shell exists wherever bash does).
    Shell,
    /// The body of a function, or an alias's value, where the command calls it.
    Call,
    /// Handed to a program that must exist to run it (`xargs`, an interpreter, a
    /// script run by its path, a name a glob may stand for) or run in the background
    /// (`coproc`): it runs only if that program does.
    Program,
    /// An alias's value where the command names it without `shopt -s expand_aliases`:
    /// it runs only where the shell expands aliases (`sh`, whether dash or bash in
    /// posix mode; `set -o posix`; `POSIXLY_CORRECT`; zsh), which the code may not
    /// show. Otherwise the name runs as written.
    Mode,
}

impl Plan {
    pub(crate) fn compound(&mut self, why: &'static str) {
        if !self.compound.contains(&why) {
            self.compound.push(why);
        }
    }
    pub(crate) fn obfuscated(&mut self, why: Opacity) {
        if !self.obfuscated.contains(&why) {
            self.obfuscated.push(why);
        }
    }
}
