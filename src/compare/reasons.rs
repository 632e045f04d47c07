//! The named reasons for a disagreement between the engines, in the documented order
//! the classifier (`classify`) tries them, with their one-sentence descriptions.
//!
//! Owns the names and their order, not the attribution (`classify`) and not the
//! reviewed list of the reasons that may make the AST more permissive
//! (`fixtures/compare_reasons.jsonl`, read by the gate test).

use serde::Serialize;

/// A named reason for a disagreement, in the order the classifier tries them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(into = "&'static str")]
pub enum Reason {
    HardlineLexerOnly,
    HardlineAstOnly,
    ParseErrorFallback,
    LexerReadError,
    CommentIgnored,
    ReadOfSecretFile,
    ReadOfUnknownPath,
    SourcedFile,
    ShCInnerParsed,
    SubstitutionInnerAnalyzed,
    WrapperUnwrapped,
    AssignmentPrefix,
    ControlStructure,
    CdTracked,
    RedirectIsWrite,
    RedirectIsRead,
    RedirectToFdOrDevice,
    Heredoc,
    RedirectInSubject,
    BackgroundJob,
    DynamicCommandName,
    ArrayAssignment,
    TrailingSeparator,
    VerifiedReadOnly,
    VerifiedEdit,
    ContextVariable,
    QuotedOperatorNotCode,
    QuotedSubstitutionMarker,
    FlagRunsProgram,
    FsVerbOperands,
    WriteDetected,
    ReadDetected,
    Unexplained,
}

impl From<Reason> for &'static str {
    fn from(r: Reason) -> Self {
        r.name()
    }
}

impl Reason {
    /// The documented order: the first reason that accounts for a difference gets it.
    pub const ORDER: &'static [Reason] = &[
        Reason::HardlineLexerOnly,
        Reason::HardlineAstOnly,
        Reason::ParseErrorFallback,
        Reason::LexerReadError,
        Reason::CommentIgnored,
        Reason::ReadOfSecretFile,
        Reason::ReadOfUnknownPath,
        Reason::SourcedFile,
        Reason::ShCInnerParsed,
        Reason::SubstitutionInnerAnalyzed,
        Reason::WrapperUnwrapped,
        Reason::AssignmentPrefix,
        Reason::ControlStructure,
        Reason::CdTracked,
        Reason::RedirectIsWrite,
        Reason::RedirectIsRead,
        Reason::RedirectToFdOrDevice,
        Reason::Heredoc,
        Reason::RedirectInSubject,
        Reason::BackgroundJob,
        Reason::DynamicCommandName,
        Reason::ArrayAssignment,
        Reason::TrailingSeparator,
        // Before the quoted-marker reasons: where the AST verified the command, that is
        // why it allows (`echo "<(x)"` prints a literal string).
        Reason::VerifiedReadOnly,
        Reason::VerifiedEdit,
        Reason::ContextVariable,
        Reason::QuotedOperatorNotCode,
        Reason::QuotedSubstitutionMarker,
        Reason::FlagRunsProgram,
        Reason::FsVerbOperands,
        Reason::WriteDetected,
        Reason::ReadDetected,
        Reason::Unexplained,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Reason::HardlineLexerOnly => "hardline-lexer-only",
            Reason::HardlineAstOnly => "hardline-ast-only",
            Reason::ParseErrorFallback => "parse-error-fallback",
            Reason::LexerReadError => "lexer-read-error",
            Reason::CommentIgnored => "comment-ignored",
            Reason::ReadOfSecretFile => "read-of-secret-file",
            Reason::ReadOfUnknownPath => "read-of-unknown-path",
            Reason::ShCInnerParsed => "sh-c-inner-parsed",
            Reason::SourcedFile => "sourced-file",
            Reason::SubstitutionInnerAnalyzed => "substitution-inner-analyzed",
            Reason::WrapperUnwrapped => "wrapper-unwrapped",
            Reason::AssignmentPrefix => "assignment-prefix",
            Reason::ControlStructure => "control-structure",
            Reason::CdTracked => "cd-tracked",
            Reason::RedirectIsWrite => "redirect-is-write",
            Reason::RedirectIsRead => "redirect-is-read",
            Reason::RedirectToFdOrDevice => "redirect-to-fd-or-device",
            Reason::Heredoc => "heredoc-or-herestring",
            Reason::RedirectInSubject => "redirect-in-subject",
            Reason::BackgroundJob => "background-job",
            Reason::DynamicCommandName => "dynamic-command-name",
            Reason::ArrayAssignment => "array-assignment",
            Reason::TrailingSeparator => "trailing-separator",
            Reason::QuotedOperatorNotCode => "quoted-operator-not-code",
            Reason::QuotedSubstitutionMarker => "quoted-substitution-marker",
            Reason::FlagRunsProgram => "flag-runs-program",
            Reason::FsVerbOperands => "fs-verb-operands",
            Reason::WriteDetected => "write-detected",
            Reason::ReadDetected => "read-detected",
            Reason::VerifiedReadOnly => "verified-read-only",
            Reason::VerifiedEdit => "verified-edit",
            Reason::ContextVariable => "context-variable",
            Reason::Unexplained => "unexplained",
        }
    }

    /// One sentence: what the AST engine does here that the V1 lexer does not.
    pub fn description(self) -> &'static str {
        match self {
            Reason::HardlineLexerOnly => {
                "the lexer's hardline floor fires and the AST's does not (never acceptable)"
            }
            Reason::HardlineAstOnly => {
                "the AST's hardline floor fires (through a wrapper, a code string, a redirect) where the lexer's does not"
            }
            Reason::ParseErrorFallback => {
                "tree-sitter could not read the command; the AST engine used the lexer's analysis and marked it obfuscated"
            }
            Reason::LexerReadError => {
                "the lexer could not tokenize a command bash (and tree-sitter) reads without error"
            }
            Reason::CommentIgnored => {
                "the text after an unquoted `#` is a comment; the lexer reads it as words and operators"
            }
            Reason::ReadOfSecretFile => {
                "the AST counts a read of a secret-shaped file (`.env`, `*.pem`, `~/.ssh/*`), which asks"
            }
            Reason::ShCInnerParsed => {
                "code passed as a string (`sh -c`, `bash -c`, `eval`, `watch`, `su -c`) is parsed again by the AST and its commands counted"
            }
            Reason::ReadOfUnknownPath => {
                "the AST counts a read whose path is only known when the command runs (`$FILE`, a substitution), which asks"
            }
            Reason::SourcedFile => {
                "`source`/`.` runs a file's commands in the shell; the AST marks the command obfuscated"
            }
            Reason::SubstitutionInnerAnalyzed => {
                "the commands inside `$( )`, backticks, `<( )`, `>( )` are analyzed by the AST; the lexer only flags them"
            }
            Reason::WrapperUnwrapped => {
                "the AST looks through wrappers (`sudo`, `env`, `xargs`, `find -exec`, `timeout`, …) at the command they run"
            }
            Reason::AssignmentPrefix => {
                "leading `NAME=value` assignments are skipped by the AST; the lexer takes the assignment as the command word"
            }
            Reason::ControlStructure => {
                "`if`/`for`/`while`/`case`/`{ }` keywords are syntax for the AST; the lexer runs them as commands and misses the commands after them"
            }
            Reason::CdTracked => {
                "the AST follows `cd`/`pushd` so later relative paths resolve against the new directory"
            }
            Reason::RedirectIsWrite => {
                "an output redirection is a write of its target for the AST; for the lexer it is an operator and the target a command"
            }
            Reason::RedirectIsRead => {
                "an input redirection is a read of its source for the AST; for the lexer the source is a command"
            }
            Reason::RedirectToFdOrDevice => {
                "`2>&1`, `>&2`, `> /dev/null` touch no file for the AST; for the lexer they are operators and commands"
            }
            Reason::Heredoc => {
                "a heredoc delimiter or here-string is input for the AST; for the lexer it is a command"
            }
            Reason::RedirectInSubject => {
                "the AST's `process.execute` subject keeps the redirections (`cat > f`), so a rule like `cat *` matches where the lexer's bare `cat` does not"
            }
            Reason::BackgroundJob => {
                "a `&` inside the command starts a background job, which the AST reports as `process.background`"
            }
            Reason::DynamicCommandName => {
                "a command name that is not a literal word (`$X`, a glob) makes the command obfuscated for the AST"
            }
            Reason::ArrayAssignment => {
                "`name=(a b)` is an array assignment for the AST; the lexer reads its parentheses as operators"
            }
            Reason::TrailingSeparator => {
                "a `;` ending the command separates nothing; the lexer counts it as an operator (compound)"
            }
            Reason::QuotedSubstitutionMarker => {
                "the lexer flags a substitution marker that bash does not expand there (`<(`/`>(` inside double quotes)"
            }
            Reason::QuotedOperatorNotCode => {
                "the lexer's smuggling rule fires on a quoted operator that no shell reads (an `xargs` argument, a program text)"
            }
            Reason::FlagRunsProgram => {
                "a flag makes the command run another program (`git difftool`, `--ext-diff`, `rg --pre`); the AST asks for it"
            }
            Reason::FsVerbOperands => {
                "the AST knows which operands of `cp`/`ln`/`install` are only read; the lexer counts every operand as written"
            }
            Reason::WriteDetected => {
                "the AST counts writes the lexer does not: inside the project, and by commands beyond V1's filesystem verbs"
            }
            Reason::ReadDetected => {
                "the AST counts the files read by commands that read named files (`cat`, `grep`, …); V1 counts no reads"
            }
            Reason::VerifiedReadOnly => {
                "the AST verified the command read-only, which the recommended preset allows; the lexer verifies nothing"
            }
            Reason::VerifiedEdit => {
                "the AST proved the command an in-project edit (each write judged as the write tool's), which the recommended preset allows; the lexer verifies nothing"
            }
            Reason::ContextVariable => {
                "the AST reads `$HOME` and `$PWD` as the context's values where nothing in the command can set them, and verified the command so read; the lexer asks for any `$`"
            }
            Reason::Unexplained => "no reason accounts for at least one of the differences",
        }
    }

    /// The position of a reason name in `ORDER` (unknown names last).
    pub fn order_of(name: &str) -> usize {
        Self::ORDER
            .iter()
            .position(|r| r.name() == name)
            .unwrap_or(usize::MAX)
    }

    pub fn from_name(name: &str) -> Option<Reason> {
        Self::ORDER.iter().copied().find(|r| r.name() == name)
    }
}
