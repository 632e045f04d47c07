//! The V1 lexer's reading lowered into the shell IR (`shell::ir::Plan`), so the floor
//! reads both engines the same way and does no lexing of its own.
//!
//! Owns what the lexer's flat tokens say about structure, as bash would run it: the
//! words of each simple command (reserved words such as `{` or `then` left out,
//! leading assignments apart), output-redirection targets, here-documents with the
//! command they feed, function definitions and `&`. Text the lexer cannot read gets a
//! last-resort reading (whitespace words split at operator characters, read once with
//! quotes removed and once with quotes as boundaries): the floor may find danger in it,
//! and the plan is marked opaque, so it never proves anything safe.
//!
//! The lexer engine's own requests and classes stay V1's (seed §3, `analysis::lexer`);
//! this lowering serves the consumers that run on the IR.

use crate::shell::ir::{
    Cwd, Function, InlineInput, Opacity, Plan, Redirect, RedirectKind, SimpleCommand, Word,
};
use crate::shell::lexer::{LexError, Tokens};

/// Words that open or close compound commands: the lexer leaves them in a command's
/// words (`if rm …`, `{ rm …`), bash does not run them.
const RESERVED: &[&str] = &[
    "{", "}", "(", ")", "!", "if", "then", "else", "elif", "fi", "do", "done", "while", "until",
    "coproc", "time",
];

/// The `if`/loop/`case` constructs open at a command, as its leading reserved words
/// open and close them: whether the command runs only on a condition (in a branch,
/// a loop body, a `case` item, or after `then`/`do`/`else`/`elif` on its own line).
#[derive(Default)]
struct Constructs {
    /// One entry per open construct: whether its body has started.
    open: Vec<bool>,
}

impl Constructs {
    fn read(&mut self, words: &[String]) -> bool {
        let mut conditional = false;
        for w in words {
            match w.as_str() {
                "if" | "while" | "until" | "for" | "select" => self.open.push(false),
                "case" => self.open.push(true),
                "then" | "do" | "else" | "elif" => {
                    conditional = true;
                    if let Some(body) = self.open.last_mut() {
                        *body = true;
                    }
                }
                "fi" | "done" | "esac" => {
                    self.open.pop();
                }
                "{" | "}" | "(" | ")" | "!" | "coproc" | "time" => {}
                _ => break,
            }
        }
        conditional || self.open.iter().any(|body| *body)
    }
}

/// The plan of `text`, as the lexer read it (`lexed` is `lexer::lex(text)`, taken by
/// value so its words move into the plan), every command in `cwd` (the lexer does not
/// follow `cd`).
pub(crate) fn lower(text: &str, lexed: Result<Tokens, LexError>, cwd: &Cwd) -> Plan {
    match lexed {
        Ok(tokens) => lower_tokens(text, tokens, cwd),
        Err(e) => last_resort(text, cwd, &e),
    }
}

/// `lower` for a text the caller has not lexed.
pub(crate) fn lower_text(text: &str, cwd: &Cwd) -> Plan {
    lower(text, crate::shell::lexer::lex(text), cwd)
}

fn word(text: String, start: usize) -> Word {
    Word {
        // The lexer keeps a substitution's source text in its word; its quoting is gone,
        // so any glob or brace character counts.
        dynamic: text.contains(['$', '`']),
        pattern: text.contains(['*', '?', '[', '{']),
        braces: false,
        text,
        start,
    }
}

fn lower_tokens(text: &str, tokens: Tokens, cwd: &Cwd) -> Plan {
    let mut plan = Plan::default();
    // Word starts are positions in the spliced text, as the lexer read it.
    let spliced = crate::shell::source::splice(text).unwrap_or(std::borrow::Cow::Borrowed(text));
    let (functions, names) = functions(&spliced, &tokens);
    plan.functions = functions;
    // A here-document belongs to the command whose words ended at its `<<`; matched
    // before the words move into the plan.
    let mut taken = vec![false; tokens.commands.len()];
    let mut inline: Vec<(Option<usize>, Redirect)> = Vec::with_capacity(tokens.heredocs.len());
    for h in tokens.heredocs {
        let owner = tokens.commands.iter().enumerate().position(|(i, c)| {
            !h.owner.is_empty() && c.words == h.owner && !taken.get(i).copied().unwrap_or(true)
        });
        if let Some(t) = owner.and_then(|i| taken.get_mut(i)) {
            *t = true;
        }
        let dynamic = h.body.contains(['$', '`', '\\']);
        let input = InlineInput {
            text: h.body,
            dynamic,
        };
        let redirect = Redirect {
            kind: RedirectKind::Inline,
            target: None,
            input: Some(input),
        };
        inline.push((owner, redirect));
    }
    let background = tokens.operators.iter().any(|o| o == "&");
    let mut constructs = Constructs::default();
    for (i, c) in tokens.commands.into_iter().enumerate() {
        let forks = matches!(c.op_after.as_deref(), Some("|" | "|&" | "&"))
            || matches!(c.op_before.as_deref(), Some("|" | "|&"));
        let conditional =
            constructs.read(&c.words) || matches!(c.op_before.as_deref(), Some("&&" | "||"));
        let mut all = c.words;
        let mut starts = c.starts;
        starts.resize(all.len(), 0);
        if c.after_write_redirect
            && let (Some(t), Some(at)) = (all.first(), starts.first())
        {
            plan.loose_redirects.push((
                Redirect {
                    kind: RedirectKind::Write,
                    target: Some(word(t.clone(), *at)),
                    input: None,
                },
                cwd.clone(),
            ));
        }
        let mut skip = all
            .iter()
            .take_while(|w| RESERVED.contains(&w.as_str()))
            .count();
        // `function f {` is a definition header: what follows its `{` runs (in the body).
        if all.get(skip).is_some_and(|w| w.as_str() == "function")
            && starts.get(skip + 1).is_some_and(|at| names.contains(at))
        {
            skip += 2 + all
                .get(skip + 2..)
                .unwrap_or_default()
                .iter()
                .take_while(|w| matches!(w.as_str(), "{" | "()" | "(" | ")"))
                .count();
        }
        // `f() {` reads to the lexer as a command `f`: a definition, not a call.
        let defines = starts.get(skip).is_some_and(|at| names.contains(at));
        let kept = if skip >= all.len() || defines {
            None
        } else {
            let rest: Vec<String> = all.drain(skip..).collect();
            let rest_starts = starts.get(skip..).unwrap_or_default();
            let text = crate::shell::join_collapsed(&rest);
            let n = rest
                .iter()
                .take_while(|w| crate::programs::is_assignment(w))
                .count();
            let mut lowered: Vec<Word> = rest
                .into_iter()
                .zip(rest_starts.iter().copied())
                .map(|(w, at)| word(w, at))
                .collect();
            let words = lowered.split_off(n.min(lowered.len()));
            plan.commands.push(SimpleCommand {
                assignments: lowered,
                words,
                redirects: Vec::new(),
                text,
                cwd: cwd.clone(),
                heredoc: false,
                forks,
                conditional,
                start: 0,
                piped_from: None,
            });
            plan.commands.len().checked_sub(1)
        };
        for (_, r) in inline.iter_mut().filter(|(owner, _)| *owner == Some(i)) {
            let r = std::mem::replace(
                r,
                Redirect {
                    kind: RedirectKind::Inline,
                    target: None,
                    input: None,
                },
            );
            match kept.and_then(|k| plan.commands.get_mut(k)) {
                Some(cmd) => {
                    cmd.heredoc = true;
                    cmd.redirects.push(r);
                }
                None => plan.loose_redirects.push((r, cwd.clone())),
            }
        }
    }
    for (owner, r) in inline {
        if owner.is_none() {
            plan.loose_redirects.push((r, cwd.clone()));
        }
    }
    plan.statements = plan.commands.len();
    plan.background = background;
    if tokens.has_substitution {
        plan.obfuscated(Opacity::Substitution("substitution"));
    }
    plan
}

/// Function definitions in the code of `text` (quotes, comments and here-document
/// bodies blanked): `name() {` or `function name [()] {`, up to the matching `}`; and
/// where each name starts (the lexer reads it as a command word).
fn functions(text: &str, tokens: &Tokens) -> (Vec<Function>, Vec<usize>) {
    if !(text.contains('{') && (text.contains('(') || text.contains("function"))) {
        return (Vec::new(), Vec::new());
    }
    let mut code = blank_quotes_and_comments(text);
    for h in tokens.heredocs.iter().filter(|h| !h.body.is_empty()) {
        if let Some(at) = code.find(h.body.as_str()) {
            code.replace_range(at..at + h.body.len(), &"_".repeat(h.body.len()));
        }
    }
    let t = code_tokens(&code);
    let mut out = Vec::new();
    let mut names = Vec::new();
    let mut k = 0;
    while k < t.len() {
        if let Some((name, name_at, open)) = definition_at(&t, k) {
            let mut depth = 0usize;
            let mut close = code.len();
            for &(at, tok) in t.iter().skip(open) {
                match tok {
                    "{" => depth += 1,
                    "}" => {
                        depth = depth.saturating_sub(1);
                        if depth == 0 {
                            close = at + 1;
                            break;
                        }
                    }
                    _ => {}
                }
            }
            let body_start = t.get(open).map_or(close, |(at, _)| *at);
            out.push(Function {
                name: name.to_string(),
                body: body_start..close,
            });
            names.push(name_at);
        }
        k += 1;
    }
    (out, names)
}

/// `[function] name [( )] {` at token `k`: the name, where it starts, and the index of
/// the `{` token.
fn definition_at<'t>(t: &[(usize, &'t str)], k: usize) -> Option<(&'t str, usize, usize)> {
    let is_name = |s: &str| {
        s.len() <= 64 && !matches!(s, "(" | ")" | "{" | "}" | "|" | "&" | ";" | "function")
    };
    let tok = |i: usize| t.get(i).map(|(_, s)| *s);
    let (name_i, keyword) = match tok(k) {
        Some("function") => (k + 1, true),
        _ => (k, false),
    };
    let &(name_at, name) = t.get(name_i)?;
    if !is_name(name) {
        return None;
    }
    // The name must start a command: after nothing, a separator, a group, or a
    // reserved word that a command may follow (bash runs `! f(){ …; }; f` and
    // `time -p f(){ …; }; f` as definitions; tree-sitter cannot parse them, so this
    // reading is the floor's only one).
    let starts_command = |i: usize| match tok(i) {
        Some(";" | "&" | "|" | "(" | ")" | "{" | "}" | "\n") => true,
        Some("!" | "time" | "then" | "do" | "else" | "elif" | "if" | "while" | "until") => true,
        Some("-p") => i > 0 && tok(i - 1) == Some("time"),
        _ => false,
    };
    if !keyword && k > 0 && !starts_command(k - 1) {
        return None;
    }
    let mut i = name_i + 1;
    if tok(i) == Some("(") && tok(i + 1) == Some(")") {
        i += 2;
    } else if !keyword {
        return None;
    }
    (tok(i) == Some("{")).then_some((name, name_at, i))
}

/// Tokens of blanked code with their byte positions: shell metacharacters one by one
/// (newlines included, as separators), other runs of non-space characters as names.
fn code_tokens(text: &str) -> Vec<(usize, &str)> {
    let mut out = Vec::new();
    let mut start: Option<usize> = None;
    for (i, c) in text.char_indices() {
        let meta = matches!(
            c,
            '(' | ')' | '{' | '}' | '|' | '&' | ';' | '\'' | '"' | '`' | '\n'
        );
        if meta || c.is_whitespace() {
            if let Some(s) = start.take()
                && let Some(w) = text.get(s..i)
            {
                out.push((s, w));
            }
            if meta && let Some(m) = text.get(i..i + c.len_utf8()) {
                out.push((i, m));
            }
        } else if start.is_none() {
            start = Some(i);
        }
    }
    if let Some(s) = start
        && let Some(w) = text.get(s..)
    {
        out.push((s, w));
    }
    out
}

/// The text with the insides of quotes (`'…'`, `"…"`, `$'…'`) and comments replaced by
/// `_` (byte for byte, so positions hold), so only what bash reads as code is looked
/// at. Escaped characters are blanked too: `\(` is a word character, not an operator.
fn blank_quotes_and_comments(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    let mut prev_blank = true;
    let blank = |out: &mut String, c: char| {
        for _ in 0..c.len_utf8() {
            out.push('_');
        }
    };
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                blank(&mut out, c);
                if let Some(n) = chars.next() {
                    blank(&mut out, n);
                }
            }
            '\'' => {
                blank(&mut out, c);
                for n in chars.by_ref() {
                    blank(&mut out, n);
                    if n == '\'' {
                        break;
                    }
                }
            }
            '"' => {
                blank(&mut out, c);
                while let Some(n) = chars.next() {
                    blank(&mut out, n);
                    match n {
                        '\\' => {
                            if let Some(e) = chars.next() {
                                blank(&mut out, e);
                            }
                        }
                        '"' => break,
                        _ => {}
                    }
                }
            }
            '#' if prev_blank => {
                blank(&mut out, c);
                for n in chars.by_ref() {
                    if n == '\n' {
                        out.push('\n');
                        break;
                    }
                    blank(&mut out, n);
                }
            }
            c => out.push(c),
        }
        prev_blank = out
            .chars()
            .last()
            .is_none_or(|l| l.is_whitespace() || matches!(l, ';' | '&' | '|' | '(' | ')'));
    }
    out
}

/// The reading of text the lexer could not tokenize: whitespace words, split into
/// commands at operator characters, once with quotes removed and once with quotes as
/// command boundaries (an unbalanced quote leaves no reliable quoting). Both readings
/// go into one plan: the floor may hit on either.
fn last_resort(text: &str, cwd: &Cwd, e: &LexError) -> Plan {
    let mut plan = Plan::default();
    for quotes_split in [false, true] {
        let mut cmds: Vec<Vec<Word>> = Vec::new();
        let mut cmd: Vec<Word> = Vec::new();
        let mut current = String::new();
        let mut start = 0usize;
        let mut redirect_next = false;
        let end_word = |current: &mut String,
                        start: usize,
                        cmd: &mut Vec<Word>,
                        redirect_next: &mut bool,
                        plan: &mut Plan| {
            if !current.is_empty() {
                let w = word(std::mem::take(current), start);
                if *redirect_next {
                    plan.loose_redirects.push((
                        Redirect {
                            kind: RedirectKind::Write,
                            target: Some(w.clone()),
                            input: None,
                        },
                        cwd.clone(),
                    ));
                    *redirect_next = false;
                }
                cmd.push(w);
            }
        };
        for (i, ch) in text.char_indices() {
            if current.is_empty() {
                start = i;
            }
            match ch {
                ';' | '&' | '|' | '(' | ')' | '{' | '}' | '`' | '\n' => {
                    end_word(&mut current, start, &mut cmd, &mut redirect_next, &mut plan);
                    cmds.push(std::mem::take(&mut cmd));
                }
                '\'' | '"' if quotes_split => {
                    end_word(&mut current, start, &mut cmd, &mut redirect_next, &mut plan);
                    cmds.push(std::mem::take(&mut cmd));
                }
                '\'' | '"' | '\\' => {}
                '>' => {
                    end_word(&mut current, start, &mut cmd, &mut redirect_next, &mut plan);
                    redirect_next = true;
                }
                '<' => end_word(&mut current, start, &mut cmd, &mut redirect_next, &mut plan),
                c if c.is_whitespace() => {
                    end_word(&mut current, start, &mut cmd, &mut redirect_next, &mut plan);
                }
                c => current.push(c),
            }
        }
        end_word(&mut current, start, &mut cmd, &mut redirect_next, &mut plan);
        cmds.push(cmd);
        let names = functions(text, &Tokens::default()).1;
        for words in cmds.into_iter().filter(|c| !c.is_empty()) {
            if words.first().is_some_and(|w| names.contains(&w.start)) {
                continue;
            }
            let texts: Vec<String> = words.iter().map(|w| w.text.clone()).collect();
            plan.commands.push(SimpleCommand {
                assignments: Vec::new(),
                words,
                redirects: Vec::new(),
                text: crate::shell::join_collapsed(&texts),
                cwd: cwd.clone(),
                heredoc: false,
                // Text the lexer cannot read: every command may fork, none is
                // known to be conditional (the floor's fork-bomb shape stays reachable).
                forks: true,
                conditional: false,
                start: 0,
                piped_from: None,
            });
        }
    }
    // A fork bomb is still one, whatever the lexer tripped over later in the text.
    plan.functions = functions(text, &Tokens::default()).0;
    plan.background = text.contains('&');
    plan.obfuscated(Opacity::Other(format!(
        "could not be read by the lexer ({e})"
    )));
    plan
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn plan(text: &str) -> Plan {
        lower_text(text, &Cwd::Known(PathBuf::from("/p")))
    }

    fn commands(p: &Plan) -> Vec<Vec<String>> {
        p.commands
            .iter()
            .map(|c| c.words.iter().map(|w| w.text.clone()).collect())
            .collect()
    }

    #[test]
    fn reserved_words_and_definitions_are_not_commands() {
        let p = plan(":(){ :|:& };:");
        assert_eq!(commands(&p), vec![vec![":"], vec![":"], vec![":"]]);
        assert_eq!(p.functions.len(), 1);
        assert!(p.background);
        let p = plan("function f { f|f& }\nf");
        assert_eq!(commands(&p), vec![vec!["f"], vec!["f"], vec!["f"]]);
        let p = plan("if true; then rm x; fi");
        assert_eq!(commands(&p), vec![vec!["true"], vec!["rm", "x"]]);
    }

    #[test]
    fn heredoc_feeds_its_owner() {
        let p = plan("bash <<EOF\nrm -rf /\nEOF");
        let c = p.commands.first().map(|c| (c.heredoc, c.redirects.len()));
        assert_eq!(c, Some((true, 1)));
    }

    #[test]
    fn quoted_bombs_define_nothing() {
        assert!(
            plan("echo ':(){ :|:& };:' >> notes.md")
                .functions
                .is_empty()
        );
        assert!(plan("ls # :(){ :|:& };:").functions.is_empty());
        // After a reserved word a command may follow, a definition is one.
        for code in [
            "! :(){ :|:& };:",
            "time -p f(){ f|f& };f",
            "if true; then f(){ f; }; fi",
        ] {
            assert_eq!(plan(code).functions.len(), 1, "{code}");
        }
    }

    #[test]
    fn unlexable_text_still_has_commands() {
        let p = plan("rm -rf / 'x");
        assert!(commands(&p).contains(&vec!["rm".to_string(), "-rf".into(), "/".into()]));
        assert!(!p.obfuscated.is_empty());
    }
}
