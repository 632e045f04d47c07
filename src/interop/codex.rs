//! Codex `.rules` (execpolicy, Starlark) → our rules. A purpose-built reader for the
//! `prefix_rule(...)` subset; anything else in the file fails the import loudly.
//!
//! Accepted: `#` comments, blank lines, and calls `prefix_rule(pattern = [...],
//! decision = "...", justification = "...", match = [...], not_match = [...])` with
//! keyword arguments only; values are string literals (`"…"` or `'…'`, the usual
//! backslash escapes) and lists of them, a `pattern` element may itself be a list of
//! alternatives. `decision` defaults to `allow`; `prompt` is ask, `forbidden` deny.
//!
//! Codex takes the strictest decision among matching rules; our order is last match
//! wins, so allows come first, then prompts, then forbiddens. A pattern is a
//! token-wise prefix: the bare tokens and the tokens followed by more arguments.
//! `match` / `not_match` examples become our rule `examples` (checked again by our
//! loader) and are checked against the translation here: a failing example fails the
//! import.

use std::path::Path;

use super::model::{
    Import, ImportContext, ImportError, SourcePos, command_prefix, line_of, position_of,
};
use crate::policy::rules::{Action, example_matches};

/// Most alternatives one pattern may expand to.
const MAX_EXPANSIONS: usize = 64;

#[derive(Debug, Clone)]
enum Val {
    Str(String),
    List(Vec<Val>),
}

struct Reader<'a> {
    text: &'a str,
    file: &'a str,
    pos: usize,
}

impl Reader<'_> {
    fn err(&self, at: usize, message: impl Into<String>) -> ImportError {
        let (line, column) = position_of(self.text, at);
        ImportError::Syntax {
            file: self.file.to_string(),
            line,
            column,
            message: message.into(),
        }
    }

    fn peek(&self) -> Option<char> {
        self.text.get(self.pos..).and_then(|s| s.chars().next())
    }

    fn skip_ws(&mut self) {
        while let Some(c) = self.peek() {
            if c.is_whitespace() {
                self.pos += c.len_utf8();
            } else if c == '#' {
                while let Some(c) = self.peek() {
                    if c == '\n' {
                        break;
                    }
                    self.pos += c.len_utf8();
                }
            } else {
                break;
            }
        }
    }

    fn eat(&mut self, c: char) -> bool {
        self.skip_ws();
        if self.peek() == Some(c) {
            self.pos += c.len_utf8();
            true
        } else {
            false
        }
    }

    fn ident(&mut self) -> Option<String> {
        self.skip_ws();
        let start = self.pos;
        while let Some(c) = self.peek() {
            if c.is_ascii_alphanumeric() || c == '_' {
                self.pos += 1;
            } else {
                break;
            }
        }
        (self.pos > start).then(|| self.text.get(start..self.pos).unwrap_or("").to_string())
    }

    fn string(&mut self) -> Result<String, ImportError> {
        let start = self.pos;
        let Some(q) = self.peek().filter(|c| *c == '"' || *c == '\'') else {
            return Err(self.err(start, "expected a string literal"));
        };
        self.pos += 1;
        let mut out = String::new();
        loop {
            let Some(c) = self.peek() else {
                return Err(self.err(start, "unterminated string"));
            };
            self.pos += c.len_utf8();
            match c {
                '\n' => return Err(self.err(start, "unterminated string")),
                '\\' => {
                    let Some(e) = self.peek() else {
                        return Err(self.err(start, "unterminated string"));
                    };
                    self.pos += e.len_utf8();
                    out.push(match e {
                        'n' => '\n',
                        't' => '\t',
                        '\\' | '"' | '\'' => e,
                        other => {
                            return Err(
                                self.err(self.pos - 2, format!("unsupported escape `\\{other}`"))
                            );
                        }
                    });
                }
                c if c == q => return Ok(out),
                other => out.push(other),
            }
        }
    }

    fn value(&mut self) -> Result<Val, ImportError> {
        self.skip_ws();
        if self.eat('[') {
            let mut items = Vec::new();
            loop {
                if self.eat(']') {
                    return Ok(Val::List(items));
                }
                items.push(self.value()?);
                if !self.eat(',') {
                    if self.eat(']') {
                        return Ok(Val::List(items));
                    }
                    return Err(self.err(self.pos, "expected `,` or `]` in a list"));
                }
            }
        }
        self.string().map(Val::Str)
    }
}

struct CRule {
    tokens: Vec<Val>,
    action: Action,
    matches: Vec<String>,
    not_matches: Vec<String>,
    from: SourcePos,
    original: String,
}

fn example(v: &Val) -> Option<String> {
    match v {
        Val::Str(s) => Some(crate::model::vocab::collapse_whitespace(s)),
        Val::List(items) => items
            .iter()
            .map(|i| match i {
                Val::Str(s) => Some(s.clone()),
                Val::List(_) => None,
            })
            .collect::<Option<Vec<_>>>()
            .map(|t| t.join(" ")),
    }
}

fn parse(text: &str, file: &str) -> Result<Vec<CRule>, ImportError> {
    let mut r = Reader { text, file, pos: 0 };
    let mut out = Vec::new();
    loop {
        r.skip_ws();
        if r.pos >= text.len() {
            return Ok(out);
        }
        let start = r.pos;
        match r.ident() {
            Some(name) if name == "prefix_rule" => {}
            Some(name) => {
                return Err(r.err(
                    start,
                    format!(
                        "unsupported statement `{name}`: only `prefix_rule(...)` calls are read"
                    ),
                ));
            }
            None => return Err(r.err(start, "expected `prefix_rule(...)`")),
        }
        if !r.eat('(') {
            return Err(r.err(r.pos, "expected `(` after `prefix_rule`"));
        }
        let mut rule = CRule {
            tokens: Vec::new(),
            action: Action::Allow,
            matches: Vec::new(),
            not_matches: Vec::new(),
            from: SourcePos {
                file: file.to_string(),
                line: line_of(text, start),
            },
            original: String::new(),
        };
        let mut has_pattern = false;
        loop {
            if r.eat(')') {
                break;
            }
            let at = r.pos;
            let Some(key) = r.ident() else {
                return Err(r.err(at, "expected a keyword argument (`pattern = [...]`)"));
            };
            if !r.eat('=') {
                return Err(r.err(
                    r.pos,
                    format!("expected `=` after `{key}` (only keyword arguments are read)"),
                ));
            }
            let vat = r.pos;
            let v = r.value()?;
            match (key.as_str(), v) {
                ("pattern", Val::List(items)) if !items.is_empty() => {
                    rule.tokens = items;
                    has_pattern = true;
                }
                ("pattern", _) => return Err(r.err(vat, "`pattern` must be a non-empty list")),
                ("decision", Val::Str(d)) => rule.action = match d.as_str() {
                    "allow" => Action::Allow,
                    "prompt" => Action::Ask,
                    "forbidden" => Action::Deny,
                    other => return Err(r.err(
                        vat,
                        format!(
                            "unknown decision `{other}`, expected `allow`, `prompt` or `forbidden`"
                        ),
                    )),
                },
                ("justification", Val::Str(_)) => {}
                ("match" | "not_match", Val::List(items)) => {
                    for i in &items {
                        let ex = example(i).ok_or_else(|| {
                            r.err(vat, "an example must be a string or a list of strings")
                        })?;
                        if key == "match" {
                            rule.matches.push(ex)
                        } else {
                            rule.not_matches.push(ex)
                        }
                    }
                }
                (k @ ("decision" | "justification" | "match" | "not_match"), _) => {
                    return Err(r.err(vat, format!("`{k}` has the wrong type")));
                }
                (other, _) => {
                    return Err(r.err(at, format!("unknown argument `{other}` of `prefix_rule`")));
                }
            }
            if !r.eat(',') {
                if r.eat(')') {
                    break;
                }
                return Err(r.err(r.pos, "expected `,` or `)`"));
            }
        }
        if !has_pattern {
            return Err(r.err(start, "`prefix_rule` is missing `pattern`"));
        }
        rule.original = text
            .get(start..r.pos)
            .map(crate::model::vocab::collapse_whitespace)
            .unwrap_or_default();
        out.push(rule);
    }
}

/// Every token sequence a pattern with alternatives stands for.
fn expand(tokens: &[Val]) -> Option<Vec<String>> {
    let mut acc: Vec<Vec<String>> = vec![Vec::new()];
    for t in tokens {
        let alts: Vec<String> = match t {
            Val::Str(s) => vec![s.clone()],
            Val::List(items) => items
                .iter()
                .map(|i| match i {
                    Val::Str(s) => Some(s.clone()),
                    Val::List(_) => None,
                })
                .collect::<Option<Vec<_>>>()?,
        };
        let mut next = Vec::new();
        for a in &acc {
            for alt in &alts {
                let mut v = a.clone();
                v.push(alt.clone());
                next.push(v);
            }
        }
        if next.len() > MAX_EXPANSIONS {
            return None;
        }
        acc = next;
    }
    Some(acc.into_iter().map(|v| v.join(" ")).collect())
}

pub fn import(files: &[(&Path, &str)], _ctx: &ImportContext) -> Result<Import, ImportError> {
    let mut rules = Vec::new();
    for (path, text) in files {
        let file = path.display().to_string();
        rules.extend(parse(text, &file)?);
    }
    let mut out = Import::default();
    for action in [Action::Allow, Action::Ask, Action::Deny] {
        for r in rules.iter().filter(|r| r.action == action) {
            let Some(prefixes) = expand(&r.tokens) else {
                return Err(ImportError::Syntax {
                    file: r.from.file.clone(),
                    line: r.from.line,
                    column: 1,
                    message: format!(
                        "`pattern` has nested lists or expands to more than {MAX_EXPANSIONS} alternatives"
                    ),
                });
            };
            let first = out.rules.len();
            for p in &prefixes {
                for (pat, d) in command_prefix(p) {
                    out.push_command(&pat, d, r.action, &r.from, &r.original);
                }
            }
            let translated = out.rules.get(first..).unwrap_or(&[]).to_vec();
            // Each `match` example goes to the first translated rule that matches it; a
            // `not_match` example must match none of them (and is recorded on each).
            for ex in &r.matches {
                match out.rules.iter().skip(first).position(|t| {
                    t.rule.capability == "process.execute" && example_matches(&t.rule, ex)
                }) {
                    Some(i) => {
                        if let Some(t) = out.rules.get_mut(first + i) {
                            t.examples.matches.push(ex.clone());
                        }
                    }
                    None => {
                        return Err(ImportError::Syntax {
                            file: r.from.file.clone(),
                            line: r.from.line,
                            column: 1,
                            message: format!(
                                "the example `{ex}` of this rule does not match its translation"
                            ),
                        });
                    }
                }
            }
            for ex in &r.not_matches {
                if translated.iter().any(|t| example_matches(&t.rule, ex)) {
                    return Err(ImportError::Syntax {
                        file: r.from.file.clone(),
                        line: r.from.line,
                        column: 1,
                        message: format!(
                            "the example `{ex}` of this rule should not match, but its translation matches it"
                        ),
                    });
                }
                for t in out
                    .rules
                    .iter_mut()
                    .skip(first)
                    .filter(|t| t.rule.capability == "process.execute")
                {
                    t.examples.not_matches.push(ex.clone());
                }
            }
        }
    }
    Ok(out)
}
