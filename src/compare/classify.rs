//! The deterministic classifier that names why the two engines disagree on a command.
//!
//! A disagreement is split into its differences ("elements"): the class, each
//! capability only one engine found, and — when the decisions differ — each request
//! that makes the difference (a request one engine's policy does not allow and the
//! other engine does not have), or the hardline hit one engine lacks. Each element is
//! attributed to the first reason in `Reason::ORDER` that accounts for it; the
//! disagreement's reason is the earliest of those, the others are kept as `also`. A
//! disagreement with any element no reason accounts for is `unexplained`.
//!
//! The elements that make the AST more permissive are attributed strictly: a reason
//! accounts for a lexer request only when it shows where that request came from (most
//! by a counterfactual: the same command with the feature removed, e.g. the redirection
//! or the comment, read again by the lexer, no longer has that request). The other
//! elements are attributed by the presence of the feature that can produce them (a
//! wrapper's inner command naming the path, a redirection of the right kind, …). The
//! last reasons, `write-detected` and `read-detected`, take any remaining AST-only write
//! or read: the V1 lexer reports no reads and no writes inside the project at all.
//!
//! Owns the split into differences and the attribution rules; the reason names and
//! their order live in `reasons`. It labels, it never changes a decision.

use crate::programs::basename;
use std::cell::OnceCell;

use super::reasons::Reason;
use super::scan::{self, RedirectKind, Scan};
use super::{Comparer, Comparison, Direction, EngineSide};
use crate::model::vocab::{Capability, CommandClass, Part, collapse_whitespace};
use crate::shell::lexer::{self, LexError, Lexed};

/// One difference between the engines on a command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Element {
    Class,
    OnlyAst(Capability),
    OnlyLexer(Capability),
    /// A request the policy does not allow on the lexer's side that the AST lacks (the
    /// AST decides more permissively).
    LexerNotAllowed(Capability, String),
    /// A request the policy does not allow on the AST's side that the lexer lacks.
    AstNotAllowed(Capability, String),
    HardlineLost,
    HardlineGained,
    /// The decisions differ and no single request shows why.
    Decision,
}

impl Element {
    /// Whether this difference is one that makes the decisions differ.
    pub fn is_decision(&self) -> bool {
        matches!(
            self,
            Element::LexerNotAllowed(..)
                | Element::AstNotAllowed(..)
                | Element::HardlineLost
                | Element::HardlineGained
                | Element::Decision
        )
    }

    /// A short text for reports, e.g. `only ast: file.read`.
    pub fn describe(&self) -> String {
        match self {
            Element::Class => "class".to_string(),
            Element::OnlyAst(c) => format!("only ast: {c}"),
            Element::OnlyLexer(c) => format!("only lexer: {c}"),
            Element::LexerNotAllowed(c, s) => format!("lexer asks: {c} {s}"),
            Element::AstNotAllowed(c, s) => format!("ast asks: {c} {s}"),
            Element::HardlineLost => "hardline: lexer only".to_string(),
            Element::HardlineGained => "hardline: ast only".to_string(),
            Element::Decision => "decision".to_string(),
        }
    }
}

/// The classifier's verdict on one disagreement.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verdict {
    pub reason: Reason,
    /// The other reasons that account for some of the differences, in order.
    pub also: Vec<Reason>,
    /// Each difference with the reason it was attributed to (`unexplained` if none).
    pub attributions: Vec<(String, Reason)>,
    /// The reasons attributed to the differences that make the decisions differ (the
    /// requests one side's policy does not allow, a hardline hit), in order.
    pub decision_reasons: Vec<Reason>,
}

/// Shell words that are syntax, not commands, at the start of a part.
const RESERVED: &[&str] = &[
    "if", "then", "else", "elif", "fi", "case", "esac", "for", "select", "while", "until", "do",
    "done", "in", "function", "{", "}", "!", "[[", "]]", ";;", "time",
];

/// What the classifier looks at, computed once per disagreement.
struct Facts<'a> {
    c: &'a Comparison,
    comparer: &'a Comparer,
    lexed: Result<Lexed, LexError>,
    scan: Scan,
    whole: String,
    /// The lexer's reading of the command with its comment removed.
    no_comment: OnceCell<Option<EngineSide>>,
    /// … without comment, redirections and a `;` ending it (`normalized`).
    normal: OnceCell<EngineSide>,
    /// … with each kind of redirection removed, and with all of them removed.
    no_redirect: [OnceCell<Option<EngineSide>>; 5],
}

const KINDS: [RedirectKind; 4] = [
    RedirectKind::Write,
    RedirectKind::Read,
    RedirectKind::FdOrDevice,
    RedirectKind::Heredoc,
];

impl<'a> Facts<'a> {
    fn new(c: &'a Comparison, comparer: &'a Comparer) -> Self {
        Facts {
            c,
            comparer,
            lexed: lexer::tokenize(&c.command),
            scan: scan::scan(&c.command),
            whole: collapse_whitespace(&c.command),
            no_comment: OnceCell::new(),
            normal: OnceCell::new(),
            no_redirect: Default::default(),
        }
    }

    fn ast(&self) -> &EngineSide {
        &self.c.ast
    }

    fn lexer(&self) -> &EngineSide {
        &self.c.lexer
    }

    fn ast_note(&self, needle: &str) -> bool {
        self.ast()
            .analysis
            .risk_notes
            .iter()
            .any(|n| n.contains(needle))
    }

    fn without_comment(&self) -> Option<&EngineSide> {
        self.no_comment
            .get_or_init(|| {
                let at = self.scan.comment_at?;
                let text = self.c.command.get(..at)?;
                Some(self.lexer_on(text))
            })
            .as_ref()
    }

    /// The lexer's side for a counterfactual text; nothing left is no command at all (a
    /// command of redirections only runs no program).
    fn lexer_on(&self, text: &str) -> EngineSide {
        if text.trim().is_empty() {
            let mut side = self.comparer.lexer_side("true");
            side.analysis.parts.clear();
            side.analysis.requests.clear();
            side.analysis.class = CommandClass::Simple;
            side.capabilities.clear();
            side.not_allowed.clear();
            side
        } else {
            self.comparer.lexer_side(text)
        }
    }

    /// Whether the command ends with an unescaped `;` (after blanks).
    fn trailing_separator(&self) -> bool {
        strip_trailing_separator(
            self.c
                .command
                .get(..self.scan.comment_at.unwrap_or(self.c.command.len()))
                .unwrap_or_default(),
        )
        .is_some()
    }

    /// The lexer's reading of the command with its comment, its redirections and a `;`
    /// ending it removed: what is left when the syntax the lexer misreads as operators
    /// is gone.
    fn normalized(&self) -> &EngineSide {
        self.normal.get_or_init(|| {
            let cut = self.scan.comment_at.unwrap_or(self.c.command.len());
            let head = self.c.command.get(..cut).unwrap_or_default();
            let ranges = scan::ranges(self.scan.redirections.iter().filter(|r| r.end <= cut));
            // A heredoc body leaves its line's newline behind: trailing blanks go too.
            let text = scan::without(head, &ranges);
            let text = text.trim_end();
            let text = strip_trailing_separator(text).unwrap_or(text);
            self.lexer_on(text)
        })
    }

    fn has_redirect(&self, kind: RedirectKind) -> bool {
        self.scan.redirections.iter().any(|r| r.kind == kind)
    }

    /// The lexer's reading with the redirections of `kind` (or all, for `None`) cut out.
    fn without_redirects(&self, kind: Option<RedirectKind>) -> Option<&EngineSide> {
        let slot = match kind {
            None => 4,
            Some(k) => KINDS.iter().position(|x| *x == k).unwrap_or(4),
        };
        self.no_redirect
            .get(slot)?
            .get_or_init(|| {
                let ranges = scan::ranges(
                    self.scan
                        .redirections
                        .iter()
                        .filter(|r| kind.is_none_or(|k| r.kind == k)),
                );
                if ranges.is_empty() {
                    return None;
                }
                let text = scan::without(&self.c.command, &ranges);
                Some(self.lexer_on(&text))
            })
            .as_ref()
    }

    /// The AST looked through a wrapper: its note names the command run through it.
    fn wrapped(&self) -> bool {
        self.ast().analysis.risk_notes.iter().any(|n| {
            (n.starts_with("Runs `") && n.contains("` through `"))
                || (n.starts_with("`find -") && n.contains("` runs `"))
        })
    }

    /// The AST parts that a wrapper runs: parts whose first word is a later word of
    /// another part led by a wrapper (`sudo chown …` -> `chown …`, `find … -exec wc …`
    /// -> `wc …`).
    fn inner_parts(&self) -> Vec<&Part> {
        let parts = &self.ast().analysis.parts;
        parts
            .iter()
            .filter(|p| {
                let Some(first) = p.words.first() else {
                    return false;
                };
                parts.iter().any(|q| {
                    !std::ptr::eq(*p, q)
                        && q.words.len() > 1
                        && q.words.first().is_some_and(|w| {
                            let n = basename(w);
                            crate::programs::WRAPPERS.contains(&n) || n == "find"
                        })
                        && q.words.iter().skip(1).any(|w| w == first)
                })
            })
            .collect()
    }

    /// Whether an AST request with this subject comes from a command a wrapper runs: a
    /// command subject that is an inner part's text, or a path one of its words names.
    fn made_by_inner_part(&self, subject: &str, cap: Capability) -> bool {
        let ctx = self.comparer.context();
        self.inner_parts().iter().any(|p| {
            if cap.has_command_subject() {
                return p.text == subject || subject.ends_with(&p.text);
            }
            let cwd = p.cwd.as_deref().map(std::path::Path::new);
            p.words.iter().skip(1).any(|w| {
                w == subject
                    || crate::model::paths::resolve_word(w, cwd, ctx.home())
                        .is_some_and(|x| x.to_string_lossy() == subject)
            })
        })
    }

    /// An AST part that runs code given as a string: a shell with a `-c` flag, `eval`,
    /// `watch` (which hands its arguments to `sh -c`), `trap` (its action).
    fn code_string(&self) -> bool {
        self.ast().analysis.parts.iter().any(|p| {
            let Some(name) = p.words.first().map(|w| basename(w)) else {
                return false;
            };
            match name {
                shell if crate::programs::is_shell(shell) => p.words.iter().skip(1).any(|w| {
                    w.len() > 1 && w.starts_with('-') && !w.starts_with("--") && w.contains('c')
                }),
                "eval" | "watch" | "trap" => true,
                // `su user -c 'code'` / `runuser … -c 'code'`: code for the user's shell.
                "su" | "runuser" => p
                    .words
                    .iter()
                    .any(|w| w.starts_with("-c") || w.starts_with("--command")),
                _ => false,
            }
        })
    }

    /// Whether a file request's path lies under a directory the AST reached by `cd`.
    fn under_tracked_cwd(&self, subject: &str) -> bool {
        let start = self.comparer.context().cwd();
        self.ast()
            .analysis
            .parts
            .iter()
            .any(|p| match p.cwd.as_deref() {
                None => !subject.starts_with('/'),
                Some(d) => {
                    std::path::Path::new(d) != start
                        && crate::model::paths::is_inside(
                            std::path::Path::new(subject),
                            std::path::Path::new(d),
                        )
                }
            })
    }

    fn lexer_part_words(&self, subject: &str) -> Option<&Vec<String>> {
        self.lexer()
            .analysis
            .parts
            .iter()
            .find(|p| p.text == subject)
            .map(|p| &p.words)
    }

    fn lexer_keyword_part(&self) -> bool {
        self.lexer().analysis.parts.iter().any(|p| {
            p.words
                .first()
                .is_some_and(|w| RESERVED.contains(&w.as_str()))
        })
    }

    /// A lexer part that is one word of a `case` pattern: the command has a `case`
    /// part and the word is followed by `)` or `|` in the source.
    fn is_case_pattern(&self, subject: &str) -> bool {
        !subject.is_empty()
            && !subject.contains(char::is_whitespace)
            && self
                .lexer()
                .analysis
                .parts
                .iter()
                .any(|p| p.words.first().is_some_and(|w| w == "case"))
            && [")", " )", "|", " |"]
                .iter()
                .any(|end| self.c.command.contains(&format!("{subject}{end}")))
    }

    /// A lexer part that is the name of a function definition (`f() { … }`).
    fn is_function_name(&self, subject: &str) -> bool {
        !subject.is_empty()
            && !subject.contains(char::is_whitespace)
            && ["()", " ()"]
                .iter()
                .any(|end| self.c.command.contains(&format!("{subject}{end}")))
    }

    fn lexer_assignment_part(&self) -> bool {
        self.lexer().analysis.parts.iter().any(|p| {
            p.words.len() > 1
                && p.words
                    .first()
                    .is_some_and(|w| crate::programs::is_assignment(w))
        })
    }

    /// The lexer's asking part is `NAME=v … cmd args` where no assignment changes what
    /// runs, and the AST read the same `cmd args` as a part of its own: the assignments
    /// only set the program's environment, so the subject bash runs is `cmd args`.
    fn assignment_only_difference(&self, subject: &str) -> bool {
        let Some(words) = self.lexer_part_words(subject) else {
            return false;
        };
        let n = words
            .iter()
            .take_while(|w| crate::programs::is_assignment(w))
            .count();
        let (assignments, rest) = words.split_at(n.min(words.len()));
        !assignments.is_empty()
            && !rest.is_empty()
            && assignments
                .iter()
                .all(|a| crate::programs::environment::assignment_risk(a).is_none())
            && self.ast().analysis.parts.iter().any(|p| p.words == rest)
    }

    fn cd_tracked(&self) -> bool {
        let start = self.comparer.context().cwd().display().to_string();
        self.ast()
            .analysis
            .parts
            .iter()
            .any(|p| p.cwd.as_deref() != Some(start.as_str()))
    }

    fn lexer_mentions_only(&self, cap: Capability) -> bool {
        // The lexer's obfuscated reading: one request for the whole text.
        self.lexer().analysis.class == CommandClass::Obfuscated
            && self
                .lexer()
                .analysis
                .requests
                .iter()
                .filter(|r| r.capability == cap)
                .all(|r| r.subject == self.whole)
    }

    fn has_substitution(&self) -> bool {
        self.lexed.as_ref().is_ok_and(|l| l.has_substitution) || self.ast_note("uses substitution")
    }
}

fn is_file_cap(c: Capability) -> bool {
    matches!(
        c,
        Capability::FileRead | Capability::FileWriteProject | Capability::FileWriteOutsideProject
    )
}

fn is_write_cap(c: Capability) -> bool {
    matches!(
        c,
        Capability::FileWriteProject | Capability::FileWriteOutsideProject
    )
}

/// The differences between the engines on `c`.
pub fn elements(c: &Comparison) -> Vec<Element> {
    let mut out = Vec::new();
    if c.difference.class {
        out.push(Element::Class);
    }
    for cap in &c.ast.capabilities {
        if !c.lexer.capabilities.contains(cap) {
            out.push(Element::OnlyAst(*cap));
        }
    }
    for cap in &c.lexer.capabilities {
        if !c.ast.capabilities.contains(cap) {
            out.push(Element::OnlyLexer(*cap));
        }
    }
    let (ah, lh) = (
        c.ast.analysis.hardline.is_some(),
        c.lexer.analysis.hardline.is_some(),
    );
    if lh && !ah {
        out.push(Element::HardlineLost);
    } else if ah && !lh {
        out.push(Element::HardlineGained);
    } else if c.difference.decision {
        let before = out.len();
        match c.direction {
            Direction::AstMorePermissive => {
                for (cap, s) in &c.lexer.not_allowed {
                    if !c.ast.has_request(*cap, s) {
                        out.push(Element::LexerNotAllowed(*cap, s.clone()));
                    }
                }
            }
            Direction::AstStricter => {
                for (cap, s) in &c.ast.not_allowed {
                    if !c.lexer.has_request(*cap, s) {
                        out.push(Element::AstNotAllowed(*cap, s.clone()));
                    }
                }
            }
            Direction::SameDecision => {}
        }
        if out.len() == before {
            out.push(Element::Decision);
        }
    }
    out
}

/// Whether `r` accounts for the difference `e`.
fn accounts(r: Reason, e: &Element, f: &Facts<'_>) -> bool {
    use Element as E;
    let ast = f.ast();
    match r {
        Reason::HardlineLexerOnly => matches!(e, E::HardlineLost),
        Reason::HardlineAstOnly => matches!(e, E::HardlineGained),
        Reason::ParseErrorFallback => {
            ast.analysis.fallback.is_some() && !matches!(e, E::HardlineLost)
        }
        Reason::LexerReadError => {
            f.lexed.is_err()
                && ast.analysis.fallback.is_none()
                && match e {
                    E::Class | E::OnlyAst(_) | E::AstNotAllowed(..) => true,
                    E::OnlyLexer(c) => f.lexer_mentions_only(*c),
                    E::LexerNotAllowed(_, s) => *s == f.whole,
                    _ => false,
                }
        }
        Reason::CommentIgnored => {
            let Some(l) = f.without_comment() else {
                return false;
            };
            match e {
                E::Class => f.normalized().analysis.class == ast.analysis.class,
                E::OnlyLexer(c) => !l.capabilities.contains(c),
                E::LexerNotAllowed(c, s) => !l.has_request(*c, s),
                _ => false,
            }
        }
        Reason::ReadOfSecretFile => asked_read(e, f, true),
        Reason::ReadOfUnknownPath => asked_read(e, f, false),
        Reason::ShCInnerParsed => {
            f.code_string()
                && match e {
                    E::Class => ast.analysis.class == CommandClass::Obfuscated,
                    E::OnlyAst(_) | E::AstNotAllowed(..) => true,
                    E::OnlyLexer(c) => f.lexer_mentions_only(*c),
                    _ => false,
                }
        }
        Reason::SourcedFile => {
            f.ast_note("runs the file's commands")
                && matches!(e, E::Class)
                && ast.analysis.class == CommandClass::Obfuscated
        }
        Reason::SubstitutionInnerAnalyzed => {
            f.has_substitution()
                && match e {
                    E::Class => {
                        ast.analysis.class == CommandClass::Obfuscated
                            && f.ast_note("uses substitution")
                    }
                    E::OnlyAst(_) | E::AstNotAllowed(..) => true,
                    E::OnlyLexer(c) => f.lexer_mentions_only(*c),
                    _ => false,
                }
        }
        Reason::WrapperUnwrapped => {
            f.wrapped()
                && match e {
                    E::OnlyAst(c) => ast
                        .analysis
                        .requests
                        .iter()
                        .any(|r| r.capability == *c && f.made_by_inner_part(&r.subject, *c)),
                    E::AstNotAllowed(c, s) => f.made_by_inner_part(s, *c),
                    _ => false,
                }
        }
        Reason::AssignmentPrefix => match e {
            E::OnlyAst(_) | E::AstNotAllowed(..) => f.lexer_assignment_part(),
            E::LexerNotAllowed(Capability::ProcessExecute, s) => f.assignment_only_difference(s),
            _ => false,
        },
        Reason::ControlStructure => match e {
            E::Class | E::OnlyAst(_) | E::AstNotAllowed(..) => f.lexer_keyword_part(),
            E::LexerNotAllowed(Capability::ProcessExecute, s) => {
                f.lexer_part_words(s).is_some_and(|words| {
                    // The keyword runs nothing, but what follows it may: the AST must
                    // have read that command (`then rm -rf x` -> a part `rm -rf x`).
                    // Headers run nothing: `case W in P`, `for X in …`, `select …`; a
                    // `function NAME` header is followed by the body's first command.
                    let Some(first) = words.first() else {
                        return false;
                    };
                    if !RESERVED.contains(&first.as_str()) {
                        return false;
                    }
                    if matches!(first.as_str(), "case" | "for" | "select") {
                        return true;
                    }
                    let skip_name = usize::from(first == "function");
                    let rest: Vec<&String> = words
                        .iter()
                        .skip(1)
                        .skip(skip_name)
                        .skip_while(|w| RESERVED.contains(&w.as_str()))
                        .collect();
                    rest.is_empty()
                        || f.ast().analysis.parts.iter().any(|p| {
                            p.words.len() == rest.len()
                                && p.words.iter().zip(&rest).all(|(a, b)| a == *b)
                        })
                }) || f.is_case_pattern(s)
                    || f.is_function_name(s)
            }
            _ => false,
        },
        Reason::CdTracked => {
            f.cd_tracked()
                && match e {
                    E::OnlyAst(c) => {
                        is_file_cap(*c)
                            && ast
                                .analysis
                                .requests
                                .iter()
                                .any(|r| r.capability == *c && f.under_tracked_cwd(&r.subject))
                    }
                    E::AstNotAllowed(c, s) => is_file_cap(*c) && f.under_tracked_cwd(s),
                    E::OnlyLexer(c) => is_file_cap(*c),
                    _ => false,
                }
        }
        Reason::RedirectIsWrite => redirect_accounts(RedirectKind::Write, e, f),
        Reason::RedirectIsRead => redirect_accounts(RedirectKind::Read, e, f),
        Reason::RedirectToFdOrDevice => redirect_accounts(RedirectKind::FdOrDevice, e, f),
        Reason::Heredoc => redirect_accounts(RedirectKind::Heredoc, e, f),
        Reason::RedirectInSubject => match e {
            E::LexerNotAllowed(Capability::ProcessExecute, s) => {
                !f.scan.redirections.is_empty()
                    && ast.analysis.requests.iter().any(|r| {
                        r.capability == Capability::ProcessExecute
                            && !ast.has_request_not_allowed(r.capability, &r.subject)
                            && subject_without_redirects(&r.subject) == *s
                    })
            }
            _ => false,
        },
        Reason::BackgroundJob => {
            f.scan.background
                && match e {
                    E::Class | E::OnlyAst(Capability::ProcessBackground) => true,
                    E::AstNotAllowed(c, _) => *c == Capability::ProcessBackground,
                    _ => false,
                }
        }
        Reason::DynamicCommandName => {
            matches!(e, E::Class)
                && ast.analysis.class == CommandClass::Obfuscated
                && f.ast_note("is not a literal word")
        }
        Reason::ArrayAssignment => {
            matches!(e, E::Class)
                && f.lexer().analysis.parts.iter().any(|p| {
                    p.words
                        .last()
                        .is_some_and(|w| w.ends_with('=') && crate::programs::is_assignment(w))
                })
        }
        Reason::TrailingSeparator => {
            matches!(e, E::Class)
                && f.trailing_separator()
                && f.normalized().analysis.class == ast.analysis.class
        }
        Reason::QuotedSubstitutionMarker => {
            let quoted = f.lexed.as_ref().is_ok_and(|l| l.has_substitution)
                && ast.analysis.class != CommandClass::Obfuscated;
            quoted
                && match e {
                    E::Class => true,
                    E::OnlyLexer(c) => f.lexer_mentions_only(*c),
                    E::LexerNotAllowed(_, s) => *s == f.whole,
                    _ => false,
                }
        }
        Reason::QuotedOperatorNotCode => {
            let smuggling = f.lexed.as_ref().is_ok_and(|l| !l.has_substitution)
                && f.lexer().analysis.class == CommandClass::Obfuscated
                && ast.analysis.class != CommandClass::Obfuscated;
            smuggling
                && match e {
                    E::Class => true,
                    E::OnlyLexer(c) => f.lexer_mentions_only(*c),
                    E::LexerNotAllowed(_, s) => *s == f.whole,
                    _ => false,
                }
        }
        Reason::FlagRunsProgram => {
            matches!(e, E::AstNotAllowed(Capability::ProcessExecute, s)
                if f.ast().analysis.requests.iter().any(|r| r.via.is_some() && r.subject == *s))
        }
        Reason::FsVerbOperands => match e {
            E::OnlyLexer(Capability::FileWriteOutsideProject) => f
                .lexer()
                .analysis
                .requests
                .iter()
                .filter(|r| r.capability == Capability::FileWriteOutsideProject)
                .all(|r| source_operand(&r.subject, f)),
            E::LexerNotAllowed(Capability::FileWriteOutsideProject, s) => source_operand(s, f),
            _ => false,
        },
        Reason::WriteDetected => match e {
            E::OnlyAst(c) => is_write_cap(*c),
            E::AstNotAllowed(c, _) => is_write_cap(*c),
            _ => false,
        },
        Reason::ReadDetected => matches!(e, E::OnlyAst(Capability::FileRead)),
        Reason::ContextVariable => match e {
            E::LexerNotAllowed(Capability::ProcessExecute, s)
                if s.contains("$HOME") || s.contains("$PWD") =>
            {
                let home = f.comparer.context().home().display().to_string();
                let lexer = collapse_whitespace(&s.replace("$HOME", &home));
                f.ast().analysis.requests.iter().any(|r| {
                    read_only_or_edit(r) && pwd_filled(&lexer, &collapse_whitespace(&r.subject))
                })
            }
            _ => false,
        },
        Reason::VerifiedReadOnly | Reason::VerifiedEdit => {
            let edit = r == Reason::VerifiedEdit;
            let want = if edit {
                crate::model::vocab::Verdict::ProjectWrite
            } else {
                crate::model::vocab::Verdict::ReadOnly
            };
            let verified = |r: &crate::model::vocab::CapabilityRequest| {
                r.capability == Capability::ProcessExecute && r.verdict == Some(want)
            };
            let requests = &f.ast().analysis.requests;
            match e {
                // The same part, or (the lexer keeping quotes or spacing in its subject)
                // the lexer's one command when the AST read it as one verified simple
                // command.
                E::LexerNotAllowed(Capability::ProcessExecute, s) => {
                    let lexer_execs = f
                        .lexer()
                        .analysis
                        .requests
                        .iter()
                        .filter(|r| r.capability == Capability::ProcessExecute)
                        .count();
                    requests.iter().any(|r| {
                        verified(r) && collapse_whitespace(&r.subject) == collapse_whitespace(s)
                    }) || ((*s == f.whole || lexer_execs == 1)
                        && f.ast().analysis.class == CommandClass::Simple
                        && requests
                            .iter()
                            .filter(|r| r.capability == Capability::ProcessExecute)
                            .all(verified))
                }
                // Every part the lexer's policy does not allow is one the AST verified
                // (the others are allowed by the same rules in both: `ls *`).
                // An edit's parts may sit beside verified read-only ones (`echo hi | tee
                // f`, `cd sub && touch x`): for `verified-edit`, every such part is either,
                // and one is an edit.
                E::Decision => {
                    let lexer = f.lexer();
                    let mut any = false;
                    let all = requests
                        .iter()
                        .filter(|r| r.capability == Capability::ProcessExecute)
                        .filter(|r| lexer.has_request_not_allowed(r.capability, &r.subject))
                        .all(|r| {
                            any |= verified(r);
                            if edit {
                                read_only_or_edit(r)
                            } else {
                                verified(r)
                            }
                        });
                    all && any
                }
                _ => false,
            }
        }
        Reason::Unexplained => false,
    }
}

/// An AST read the policy asks for: of a resolved path (`resolved`: a secret-shaped
/// file under the defaults) or of a path only known at run time.
fn asked_read(e: &Element, f: &Facts<'_>, resolved: bool) -> bool {
    let fits = |s: &str| s.starts_with('/') == resolved;
    match e {
        Element::OnlyAst(Capability::FileRead) => f
            .ast()
            .not_allowed
            .iter()
            .any(|(c, s)| *c == Capability::FileRead && fits(s)),
        Element::AstNotAllowed(Capability::FileRead, s) => fits(s),
        _ => false,
    }
}

fn redirect_accounts(kind: RedirectKind, e: &Element, f: &Facts<'_>) -> bool {
    use Element as E;
    if !f.has_redirect(kind) {
        return false;
    }
    match e {
        E::Class => f.normalized().analysis.class == f.ast().analysis.class,
        E::OnlyLexer(c) => [Some(kind), None].into_iter().any(|k| {
            f.without_redirects(k)
                .is_some_and(|l| !l.capabilities.contains(c))
        }),
        E::LexerNotAllowed(c, s) => {
            // The lexer's request came from the redirection, and the AST recorded the
            // redirection's own effect: a write (or network device) for `>`, a read for
            // `<`. Without the second half, an AST that lost `> /etc/x` would pass here.
            let effect_recorded = match kind {
                RedirectKind::Write => f.ast().analysis.requests.iter().any(|r| {
                    is_write_cap(r.capability) || r.capability == Capability::NetworkAccess
                }),
                RedirectKind::Read => f.ast().analysis.requests.iter().any(|r| {
                    r.capability == Capability::FileRead
                        || r.capability == Capability::NetworkAccess
                }),
                RedirectKind::FdOrDevice | RedirectKind::Heredoc => true,
            };
            effect_recorded
                && f.without_redirects(Some(kind))
                    .is_some_and(|l| !l.has_request(*c, s))
        }
        E::OnlyAst(c) | E::AstNotAllowed(c, _) => match kind {
            RedirectKind::Write => {
                is_write_cap(*c) || (*c == Capability::NetworkAccess && network_device(f))
            }
            RedirectKind::Read => {
                *c == Capability::FileRead || (*c == Capability::NetworkAccess && network_device(f))
            }
            RedirectKind::FdOrDevice | RedirectKind::Heredoc => false,
        },
        _ => false,
    }
}

/// A command subject with its redirections removed, whitespace collapsed and quotes
/// left as they are.
fn subject_without_redirects(subject: &str) -> String {
    // In a part's one-line text a heredoc's body follows the rest of the line: cut
    // from the heredoc operator on.
    let scanned = scan::scan(subject);
    let cut = scanned
        .redirections
        .iter()
        .find(|r| r.operator.ends_with("<<") || r.operator.ends_with("<<-"))
        .map_or(subject.len(), |r| r.start);
    let head = subject.get(..cut).unwrap_or(subject);
    let ranges = scan::ranges(scanned.redirections.iter().filter(|r| r.end <= cut));
    collapse_whitespace(&scan::without(head, &ranges))
}

/// `text` without a `;` that ends it (after blanks), unless that `;` is escaped.
fn strip_trailing_separator(text: &str) -> Option<&str> {
    let stripped = text.trim_end().strip_suffix(';')?;
    let backslashes = stripped.len() - stripped.trim_end_matches('\\').len();
    (backslashes % 2 == 0 && !stripped.ends_with(';')).then_some(stripped)
}

fn network_device(f: &Facts<'_>) -> bool {
    f.scan
        .redirections
        .iter()
        .any(|r| r.target.starts_with("/dev/tcp/") || r.target.starts_with("/dev/udp/"))
}

/// Whether the lexer's outside write `subject` is an operand `cp`, `ln` or `install`
/// only reads (not the last operand, no `-t`), which the AST reads or links to.
fn source_operand(subject: &str, f: &Facts<'_>) -> bool {
    let ctx = f.comparer.context();
    f.lexer().analysis.parts.iter().any(|p| {
        let Some(verb) = p.words.first().map(String::as_str) else {
            return false;
        };
        if !matches!(verb, "cp" | "ln" | "install")
            || p.words
                .iter()
                .any(|w| w == "-t" || w.starts_with("--target-directory"))
        {
            return false;
        }
        let operands = crate::programs::fs_verb_arguments(&p.words);
        // `ln -s TARGET` links TARGET into the cwd: its one operand is not written.
        let sources = match operands.split_last() {
            Some((only, [])) if verb == "ln" => std::slice::from_ref(only),
            Some((_, sources)) => sources,
            None => return false,
        };
        sources.iter().any(|w| {
            let resolved = crate::model::paths::resolve_word(w, Some(ctx.cwd()), ctx.home())
                .map(|x| x.to_string_lossy().into_owned())
                .unwrap_or_else(|| w.to_string());
            resolved == subject
                && (verb == "ln" || f.ast().has_request(Capability::FileRead, subject))
        })
    })
}

/// Classifies one disagreement.
pub fn classify(c: &Comparison, comparer: &Comparer) -> Verdict {
    let facts = Facts::new(c, comparer);
    let mut found: Vec<Reason> = Vec::new();
    let mut attributions = Vec::new();
    let mut decision_reasons = Vec::new();
    let mut unexplained = false;
    for e in elements(c) {
        let r = Reason::ORDER
            .iter()
            .copied()
            .find(|r| accounts(*r, &e, &facts));
        match r {
            Some(r) => found.push(r),
            None => unexplained = true,
        }
        if e.is_decision() {
            decision_reasons.push(r.unwrap_or(Reason::Unexplained));
        }
        attributions.push((e.describe(), r.unwrap_or(Reason::Unexplained)));
    }
    found.sort();
    found.dedup();
    let reason = if unexplained || found.is_empty() {
        Reason::Unexplained
    } else {
        found.remove(0)
    };
    decision_reasons.sort();
    decision_reasons.dedup();
    Verdict {
        reason,
        also: found,
        attributions,
        decision_reasons,
    }
}

/// A `process.execute` request the AST verified read-only or proved an in-project edit.
fn read_only_or_edit(r: &crate::model::vocab::CapabilityRequest) -> bool {
    r.capability == Capability::ProcessExecute
        && matches!(
            r.verdict,
            Some(
                crate::model::vocab::Verdict::ReadOnly | crate::model::vocab::Verdict::ProjectWrite
            )
        )
}

/// Whether `ast` is `lexer` with each `$PWD` in it filled by an absolute path (a
/// directory the AST tracked there: no blank in it).
fn pwd_filled(lexer: &str, ast: &str) -> bool {
    let pieces: Vec<&str> = lexer.split("$PWD").collect();
    let Some((first, rest)) = pieces.split_first() else {
        return false;
    };
    ast.strip_prefix(first)
        .is_some_and(|after| paths_then(rest, after))
}

/// Whether `ast` is, for each piece in turn, an absolute path with no blank followed by
/// that piece, and nothing after the last.
fn paths_then(pieces: &[&str], ast: &str) -> bool {
    let Some((piece, rest)) = pieces.split_first() else {
        return ast.is_empty();
    };
    if !ast.starts_with('/') {
        return false;
    }
    let end = ast.find(char::is_whitespace).unwrap_or(ast.len());
    (1..=end).filter(|i| ast.is_char_boundary(*i)).any(|i| {
        ast.get(i..)
            .and_then(|after| after.strip_prefix(piece))
            .is_some_and(|after| paths_then(rest, after))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::vocab::AnalysisContext;

    #[test]
    fn pwd_is_filled_by_one_absolute_path_each() {
        assert!(pwd_filled("echo $PWD", "echo /tmp/p"));
        assert!(pwd_filled("ls $PWD/src $PWD", "ls /a/src /a"));
        assert!(!pwd_filled("echo $PWD", "echo tmp/p"));
        assert!(!pwd_filled("echo $PWD", "echo /tmp/p x"));
        assert!(!pwd_filled("echo $PWD x", "echo /tmp/p"));
        assert!(!pwd_filled("cat a", "cat b"));
    }

    fn comparer() -> (tempfile::TempDir, Comparer) {
        let root = tempfile::tempdir().unwrap();
        let ctx = AnalysisContext::new(root.path(), None, std::path::Path::new("/home/u")).unwrap();
        (root, Comparer::new(ctx))
    }

    #[test]
    fn reasons_follow_the_documented_order() {
        let mut sorted = Reason::ORDER.to_vec();
        sorted.sort();
        assert_eq!(sorted, Reason::ORDER.to_vec());
        for r in Reason::ORDER {
            assert_eq!(Reason::from_name(r.name()), Some(*r));
        }
    }

    #[test]
    fn known_disagreements_get_their_reason() {
        let (_root, cmp) = comparer();
        let cases = [
            (
                "cat a > out.txt",
                "redirect-is-write",
                Direction::AstMorePermissive,
            ),
            (
                "sudo curl http://x",
                "wrapper-unwrapped",
                Direction::SameDecision,
            ),
            (
                "sh -c 'git push'",
                "sh-c-inner-parsed",
                Direction::SameDecision,
            ),
            // The AST proves `mkdir out` an in-project edit, which `recommended` allows;
            // the lexer asks. The class difference is still the separator's.
            (
                "mkdir out;",
                "trailing-separator",
                Direction::AstMorePermissive,
            ),
            // `rm out` is an in-project edit too (as `mkdir out`); a recursive
            // removal is not, so both engines ask.
            ("rm -r out;", "trailing-separator", Direction::SameDecision),
            ("cat .env", "read-of-secret-file", Direction::AstStricter),
            ("x=(a b)", "array-assignment", Direction::SameDecision),
            (
                "for h in a b; do ssh $h; done",
                "control-structure",
                Direction::SameDecision,
            ),
            ("cd /tmp && rm x", "cd-tracked", Direction::SameDecision),
            (
                // (was `git difftool --staged`, which the seed's `git diff*` allowed on
                // the lexer's side; the default patterns now end at a word boundary)
                "git diff --ext-diff",
                "flag-runs-program",
                Direction::AstStricter,
            ),
            (
                "wc -l < in.txt",
                "redirect-is-read",
                Direction::AstMorePermissive,
            ),
            (
                "find / -exec rm -rf {} \\;",
                "hardline-ast-only",
                Direction::AstStricter,
            ),
        ];
        for (cmd, want, direction) in cases {
            let c = cmp.compare(cmd);
            assert_eq!(
                (c.reason.map(Reason::name), c.direction),
                (Some(want), direction),
                "{cmd}: {:?}",
                c.attributions
            );
        }
        assert_eq!(cmp.compare("git status").reason, None);
    }

    #[test]
    fn a_lexer_request_no_reason_shows_stays_unexplained() {
        // Stripping the redirection leaves the lexer's `curl` part: the redirection
        // does not account for the lexer's network request.
        let (_root, cmp) = comparer();
        let c = cmp.compare("cat a > out.txt; curl x");
        assert_eq!(c.direction, Direction::SameDecision);
        let e = Element::LexerNotAllowed(Capability::NetworkAccess, "curl x".into());
        let f = Facts::new(&c, &cmp);
        assert!(!accounts(Reason::RedirectIsWrite, &e, &f));
    }
}
