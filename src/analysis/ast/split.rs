//! Split before parsing: tree-sitter-bash is superlinear in pipeline stages
//! (GLR work: 2 stages parse in a few µs, 3 in tens, 8 in hundreds), while each stage
//! alone parses in about a microsecond. Where a scan of the text *proves* where the
//! top-level separators are, each part is parsed and walked alone and the parts' plans
//! are put together exactly as the walk of the whole tree would have built them.
//!
//! The proof is deliberately narrow; anything it does not cover keeps the whole-text
//! parse:
//! - separators are `|`, `&&`, `||`, `;` and newline, outside single or double quotes;
//! - nothing else bash could read as structure: no backtick, `(`, `)`, `#`, `!`, lone
//!   `&`, `|&`, `;;`, `;&`, `>|`, `<<`, `<(`, `>(`, no `$` but a simple expansion
//!   (`$NAME`, `${NAME}`, `$1`, `$@`, …), a backslash only as an escape of the next byte
//!   (never a separator then), and no unterminated quote;
//! - no word that is a reserved word or moves the cwd or wraps one that does (`if`,
//!   `{`, `time`, `cd`, `pushd`, `command`, …), judged on the word with quotes and
//!   escapes removed;
//! - a redirect only in the first part of a statement (tree-sitter hangs a redirect of
//!   a later stage on the whole pipeline or list before it, which the walk reads as a
//!   late redirect; alone, the part would bind it to its command);
//! - no empty part (except after a final `;` or newline).
//!
//! Each part must then parse without error and pass the same checks as a whole text
//! (skipped escapes, misread constructs) and walk without error; if any part does not,
//! the whole text is parsed as before. `tests/split_parse.rs` checks over the corpora
//! that the split analysis is the whole-text analysis, field for field.

use std::ops::Range;

use super::walk::{self, Cwd, Limits, Plan};
use super::{AstError, MAX_DEPTH, MAX_NODES};
use crate::model::vocab::AnalysisContext;

/// One statement: parts joined by `&&`/`||` (left to right), each part a pipeline of
/// one or more stages.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Statement {
    /// The list operators, in source order.
    pub ops: Vec<&'static str>,
    /// The pipelines between them, each a list of stage ranges in the text.
    pub pipelines: Vec<Vec<Range<usize>>>,
}

/// Words after which the split proof gives up: reserved words (the grammar reads
/// structure from them), and builtins that move the cwd or run one that does (the walk
/// threads the cwd from one command to the next).
const REFUSED_WORDS: &[&str] = &[
    "if", "then", "else", "elif", "fi", "do", "done", "case", "esac", "while", "until", "for",
    "in", "select", "function", "time", "coproc", "[[", "]]", "cd", "chdir", "pushd", "popd",
    "builtin", "command", "{", "}",
];

/// The length of the simple expansion at `b[i]` (a `$`): `$NAME`, `${NAME}`, `$1`,
/// `$@`, `$*`, `$#`, `$?`, `$$`, `$-`. `None` for anything else (`$(`, `$((`, `${x:-y}`,
/// `$'…'`, `$"…"`), which the proof does not cover.
fn simple_expansion(b: &[u8], i: usize) -> Option<usize> {
    let name = |from: usize| {
        let first = *b.get(from)?;
        if !(first.is_ascii_alphabetic() || first == b'_') {
            return None;
        }
        Some(
            b.get(from..)?
                .iter()
                .take_while(|c| c.is_ascii_alphanumeric() || **c == b'_')
                .count(),
        )
    };
    match *b.get(i + 1)? {
        b'{' => {
            let n = name(i + 2)?;
            (b.get(i + 2 + n) == Some(&b'}')).then_some(n + 3)
        }
        c if c.is_ascii_digit() || matches!(c, b'@' | b'*' | b'#' | b'?' | b'$' | b'-') => Some(2),
        _ => Some(1 + name(i + 1)?),
    }
}

/// Fewer parts than this are parsed whole: the grammar's superlinear cost starts at
/// three stages, and below that one parse of the whole text costs less than a parse of
/// each part (over the corpus commands with one separator, 674 M instructions split in
/// two against 583 M whole). Two parts that are both plain commands are split all the
/// same: neither is parsed (`git status && git diff`, `ls -la | head`).
const MIN_PARTS: usize = 3;

/// The statements of `src` when the scan proves its top-level separators, else `None`.
pub(crate) fn split(src: &str) -> Option<Vec<Statement>> {
    let b = src.as_bytes();
    // Every separator holds one of these bytes, so a text with none is one part (most
    // commands).
    if !b.iter().any(|c| matches!(c, b'|' | b'&' | b';' | b'\n')) {
        return None;
    }
    let mut statements: Vec<Statement> = Vec::new();
    let mut cur = Statement {
        ops: Vec::new(),
        pipelines: vec![Vec::new()],
    };
    let mut start = 0usize;
    let mut i = 0usize;
    // Whether the current part holds a redirect, a non-blank byte; the current word's
    // value with quotes removed.
    let mut redirect = false;
    let mut word = String::new();
    let mut parts = 0usize;

    // Closes the part [start, end): checks it and records it as a stage.
    let close_part = |cur: &mut Statement,
                      start: usize,
                      end: usize,
                      redirect: bool,
                      parts: &mut usize|
     -> Option<()> {
        let text = src.get(start..end)?;
        if text.trim_matches([' ', '\t']).is_empty() {
            return None;
        }
        let first_of_statement =
            cur.ops.is_empty() && cur.pipelines.first().is_some_and(Vec::is_empty);
        if redirect && !first_of_statement {
            return None;
        }
        cur.pipelines.last_mut()?.push(start..end);
        *parts += 1;
        Some(())
    };
    let end_word = |word: &mut String| -> Option<()> {
        if REFUSED_WORDS.contains(&word.as_str()) {
            return None;
        }
        word.clear();
        Some(())
    };

    while let Some(&c) = b.get(i) {
        match c {
            b'\'' => {
                let close = b.get(i + 1..)?.iter().position(|&x| x == b'\'')?;
                word.push_str(src.get(i + 1..i + 1 + close)?);
                i += close + 2;
                continue;
            }
            b'"' => {
                // To the closing quote; `\"` and `\\` are escapes, `$` only a simple
                // expansion, no backtick.
                let mut j = i + 1;
                loop {
                    match *b.get(j)? {
                        b'"' => break,
                        b'\\' => {
                            word.push(char::from(*b.get(j + 1)?));
                            j += 2;
                        }
                        b'$' => {
                            word.push('$');
                            j += simple_expansion(b, j)?;
                        }
                        b'`' => return None,
                        x => {
                            word.push(char::from(x));
                            j += 1;
                        }
                    }
                }
                i = j + 1;
                continue;
            }
            b'\\' => {
                // An escaped byte is part of the word, never a separator or a quote.
                word.push(char::from(*b.get(i + 1)?));
                i += 2;
                continue;
            }
            b'$' => {
                word.push('$');
                i += simple_expansion(b, i)?;
                continue;
            }
            b'`' | b'(' | b')' | b'#' | b'!' => return None,
            b' ' | b'\t' => end_word(&mut word)?,
            b'<' | b'>' => {
                end_word(&mut word)?;
                if matches!(b.get(i + 1), Some(b'<' | b'(' | b'|')) {
                    return None;
                }
                redirect = true;
                // `>&2`, `<&0`, `>&-`: the `&` belongs to the redirect.
                if b.get(i + 1) == Some(&b'&') {
                    i += 1;
                }
            }
            b'&' if b.get(i + 1) == Some(&b'>') => {
                // `&>file`, `&>>file`.
                end_word(&mut word)?;
                redirect = true;
            }
            b'&' | b'|' | b';' | b'\n' => {
                end_word(&mut word)?;
                let next = b.get(i + 1).copied();
                let (op, len): (&'static str, usize) = match (c, next) {
                    (b'&', Some(b'&')) => ("&&", 2),
                    (b'&', _) => return None,
                    (b'|', Some(b'|')) => ("||", 2),
                    (b'|', Some(b'&')) => return None,
                    (b'|', _) => ("|", 1),
                    (b';', Some(b';' | b'&')) => return None,
                    (b';', _) => (";", 1),
                    _ => ("\n", 1),
                };
                close_part(&mut cur, start, i, redirect, &mut parts)?;
                redirect = false;
                match op {
                    "|" => {}
                    "&&" | "||" => {
                        cur.ops.push(op);
                        cur.pipelines.push(Vec::new());
                    }
                    _ => {
                        // After a pipeline ended by a newline the grammar may join the
                        // next line to the last stage (see `misread_construct`): the
                        // whole text is parsed, and that check sends it to the lexer.
                        if op == "\n" && cur.pipelines.iter().any(|p| p.len() > 1) {
                            return None;
                        }
                        statements.push(std::mem::replace(
                            &mut cur,
                            Statement {
                                ops: Vec::new(),
                                pipelines: vec![Vec::new()],
                            },
                        ));
                    }
                }
                i += len;
                start = i;
                continue;
            }
            _ => {
                word.push(char::from(c));
            }
        }
        i += 1;
    }
    end_word(&mut word)?;
    let rest = src.get(start..)?;
    if rest.trim_matches([' ', '\t']).is_empty() {
        // Only a statement that ended with `;` or newline may end in nothing.
        if !(cur.ops.is_empty() && cur.pipelines.first().is_some_and(Vec::is_empty)) {
            return None;
        }
        if statements.is_empty() {
            return None;
        }
    } else {
        close_part(&mut cur, start, src.len(), redirect, &mut parts)?;
        statements.push(cur);
    }
    // A statement mixing `|` with `&&`/`||` is split too: the grammar's GLR picks
    // shapes there that vary with the stage count (`a | b | c && d` is read as
    // `pipeline(a, list(pipeline(b, c), d))`), but the walk visits the commands in
    // source order whatever the shape, no part moves the cwd, and the compound note
    // names the operators in a fixed order.
    let plain = |r: &Range<usize>| {
        src.get(r.clone())
            .is_some_and(|t| super::plain::read(t).is_some())
    };
    let enough = parts >= MIN_PARTS
        || (parts == 2
            && statements
                .iter()
                .flat_map(|s| &s.pipelines)
                .flatten()
                .all(plain));
    enough.then_some(statements)
}

/// The plan of `src` from its parts parsed alone, built as the walk of the whole tree
/// builds it; `None` when a part does not parse or walk cleanly (the caller then parses
/// the whole text).
/// `top`: the command the host's shell runs, where `$HOME` and `$PWD` may hold the
/// context's values (judged on the whole text, as the whole walk judges it).
pub(crate) fn plan_parts(
    statements: &[Statement],
    src: &str,
    ctx: &AnalysisContext,
    cwd: &Cwd,
    top: bool,
) -> Option<Plan> {
    let context_variables = top && walk::context_variables_hold(src);
    let mut plan = Plan::default();
    for s in statements {
        // The list `a && b || c` is `list(list(a, b), c)`: the walk notes the outer
        // operator first.
        for op in s.ops.iter().rev() {
            plan.compound(op);
        }
        for pipeline in &s.pipelines {
            if pipeline.len() > 1 {
                plan.compound("|");
            }
            for range in pipeline {
                let part = part_plan(src, range.clone(), ctx, cwd, context_variables).ok()?;
                merge(&mut plan, part, range.start);
            }
        }
    }
    Some(plan)
}

/// One part parsed, checked and walked alone.
fn part_plan(
    src: &str,
    range: Range<usize>,
    ctx: &AnalysisContext,
    cwd: &Cwd,
    context_variables: bool,
) -> Result<Plan, AstError> {
    let text = src
        .get(range)
        .ok_or_else(|| AstError::Analyzer("split off a character".into()))?;
    let syntax = super::read_tree(text)?;
    let root = syntax.root();
    if root.has_error()
        || super::skipped_backslash(root, text).is_some()
        || super::misread_construct(root, text).is_some()
    {
        return Err(AstError::Parse("part".into()));
    }
    walk::walk(
        root,
        text,
        ctx,
        cwd.clone(),
        Limits {
            max_depth: MAX_DEPTH,
            max_nodes: MAX_NODES,
        },
        context_variables,
    )
}

/// Adds a part's plan, its byte offsets moved to where the part starts.
fn merge(plan: &mut Plan, part: Plan, offset: usize) {
    let Plan {
        mut commands,
        mut loose_redirects,
        statements,
        compound,
        obfuscated,
        background,
        unknown_cwd_after,
        functions,
        mut code,
        // Parts are evaluated only as a whole text (`plan` parses whole whatever the
        // evaluator has work on), so a part carries no evaluation of its own.
        evaluated: _,
    } = part;
    for c in &mut commands {
        for w in c.assignments.iter_mut().chain(c.words.iter_mut()) {
            w.start += offset;
        }
        for r in &mut c.redirects {
            if let Some(t) = &mut r.target {
                t.start += offset;
            }
        }
    }
    for (r, _) in &mut loose_redirects {
        if let Some(t) = &mut r.target {
            t.start += offset;
        }
    }
    plan.commands.append(&mut commands);
    plan.loose_redirects.append(&mut loose_redirects);
    plan.statements += statements;
    for c in compound {
        plan.compound(c);
    }
    for o in obfuscated {
        plan.obfuscated(o);
    }
    plan.background |= background;
    if plan.unknown_cwd_after.is_none() {
        plan.unknown_cwd_after = unknown_cwd_after;
    }
    plan.functions.extend(functions.into_iter().map(|mut f| {
        f.body = f.body.start + offset..f.body.end + offset;
        f
    }));
    plan.code.append(&mut code);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A statement as (its list operators, its pipelines' stage texts).
    type Shape = (Vec<&'static str>, Vec<Vec<String>>);

    fn shape(src: &str) -> Option<Vec<Shape>> {
        split(src).map(|ss| {
            ss.into_iter()
                .map(|s| {
                    let p = s
                        .pipelines
                        .iter()
                        .map(|p| p.iter().map(|r| src[r.clone()].to_string()).collect())
                        .collect();
                    (s.ops, p)
                })
                .collect()
        })
    }

    #[test]
    fn proven_separators_split() {
        assert_eq!(
            shape("a | b | c; b && c || d\nf"),
            Some(vec![
                (
                    vec![],
                    vec![vec!["a ".to_string(), " b ".to_string(), " c".to_string()]]
                ),
                (
                    vec!["&&", "||"],
                    vec![
                        vec![" b ".to_string()],
                        vec![" c ".to_string()],
                        vec![" d".to_string()]
                    ]
                ),
                (vec![], vec![vec!["f".to_string()]]),
            ])
        );
        assert!(split("a | b && c").is_some());
        assert!(split("a 2>&1 | grep 'x | y' | sort -u > out.txt").is_none());
        assert!(split("cargo build 2>&1 | tail -20 && git diff --stat").is_some());
        assert!(split("a; b; c;").is_some());
        assert!(split("a; b $x;").is_none(), "two parts are parsed whole");
        assert!(split("a 2>&1 | b").is_none(), "two parts are parsed whole");
        assert!(split("a; b;").is_some(), "unless both are plain");
        assert!(split("git status && git diff --stat").is_some());
        assert!(
            split("find . -exec grep -l x {} \\; | xargs -I{} echo \"$HOME/{}\" ${X} | wc -l")
                .is_some()
        );
        assert_eq!(
            shape("echo a\\|b | c | d").map(|s| s.len()),
            Some(1),
            "an escaped `|` is no separator"
        );
    }

    #[test]
    fn anything_unproven_is_whole() {
        // Each text has parts enough to be split (`z | ` first), but for what it holds.
        for src in [
            "ls",
            "z | a | $(b)",
            "z | a | $((1))",
            "z | a | ${x:-y}",
            "z | a | $'x'",
            "z | a | \"$(b)\"",
            "z | a | `b`",
            "z | a | b\\",
            "z | a | (b)",
            "z | a | { b; }",
            "z | c\\d x && ls",
            "z | a | \"c\"d x",
            "z | a & b",
            "z | a |& b",
            "z | a | b # c",
            "z | a | ! b",
            "z | a |",
            "z | | a",
            "z | a && && b",
            "z | a ;; b",
            "z | a | 'b",
            "z | cd x && ls",
            "z | c'd' x && ls",
            "z | pushd x; popd",
            "z | time a | b",
            "z | if a; then b; fi",
            "z | a <<EOF | b",
            "z | a | b <(c)",
            "z | a | b > out",
            "z | a && b 2>/dev/null",
            "z | a >| f; b",
            "z | a |\nb",
            "a | b | c\nd && e",
        ] {
            assert_eq!(split(src), None, "{src:?}");
        }
    }
}
