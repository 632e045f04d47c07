//! Gemini CLI policy TOML → our rules: `[[rule]]` tables with `toolName`,
//! `commandPrefix`, `commandRegex`, `decision` (`allow`, `ask_user`, `deny`) and
//! `priority`.
//!
//! Gemini picks the highest-priority matching rule; our order is last match wins, so
//! rules are sorted by priority ascending (a missing priority is 0). At equal priority
//! the seed-less tie is broken towards the stricter decision (deny, then ask, then
//! allow last-placed), then file order. `commandPrefix` is a word-boundary prefix (the
//! bare command matches too). `commandRegex` translates only when it is a literal
//! (optionally `^`-anchored, optionally ending in `.*`): it becomes a plain prefix.
//! Anything else (`argsPattern`, other regexes, `mcpName`) cannot be expressed: an
//! allow is left out (the call keeps asking), a deny or ask fails the import.
//!
//! Conditions Gemini checks and we have no counterpart for: a rule limited to approval
//! `modes` stands for Gemini's `default` mode (the one where it asks, which our rules
//! stand for): an allow counts when its modes include `default`, as every "Allow …
//! for all future sessions" saved in that mode does (`modes = ["default", "autoEdit",
//! "yolo"]`), and is left out otherwise. A rule limited by `interactive`, `subagent`
//! or `toolAnnotations` applies only sometimes: allows are left out, asks and denies
//! kept (stricter). `allowRedirection` changes nothing here: a redirection is judged
//! as its own write, by our rules, whatever the command's allow says.

use std::path::Path;

use toml_edit::{Item, Table, Value};

use super::model::{
    Import, ImportContext, ImportError, SourcePos, command_prefix, line_of, position_of,
};
use crate::policy::rules::{Action, MatchDialect};

struct GRule {
    priority: i64,
    action: Action,
    tools: Vec<String>,
    prefixes: Vec<String>,
    regex: Option<String>,
    unsupported: Option<String>,
    /// Why the rule applies only sometimes (`modes` without `default`, `interactive`,
    /// `subagent`, `toolAnnotations`): an allow is then left out.
    conditional: Option<String>,
    from: SourcePos,
    original: String,
}

fn capabilities(tool: &str) -> Option<&'static [&'static str]> {
    Some(match tool {
        "run_shell_command" => &["process.execute"],
        "write_file" | "replace" | "edit" => &["file.write.*"],
        "read_file" | "read_many_files" | "glob" | "search_file_content" | "list_directory" => {
            &["file.read"]
        }
        "web_fetch" => &["network.access"],
        "*" => &["*"],
        _ => return None,
    })
}

fn strings(v: &Item) -> Option<Vec<String>> {
    match v {
        Item::Value(Value::String(s)) => Some(vec![s.value().clone()]),
        Item::Value(Value::Array(a)) => a.iter().map(|x| x.as_str().map(str::to_string)).collect(),
        _ => None,
    }
}

fn syntax(text: &str, file: &str, at: usize, message: impl Into<String>) -> ImportError {
    let (line, column) = position_of(text, at);
    ImportError::Syntax {
        file: file.to_string(),
        line,
        column,
        message: message.into(),
    }
}

fn rule(text: &str, file: &str, t: &Table) -> Result<GRule, ImportError> {
    let at = t.span().map_or(0, |s| s.start);
    let from = SourcePos {
        file: file.to_string(),
        line: line_of(text, at),
    };
    let mut r = GRule {
        priority: 0,
        action: Action::Ask,
        tools: vec!["*".to_string()],
        prefixes: Vec::new(),
        regex: None,
        unsupported: None,
        conditional: None,
        from,
        original: String::new(),
    };
    let mut decision = None;
    for (k, v) in t.iter() {
        let vat = v.span().map_or(at, |s| s.start);
        match k {
            "toolName" => {
                r.tools = strings(v).ok_or_else(|| {
                    syntax(
                        text,
                        file,
                        vat,
                        "`toolName` must be a string or an array of strings",
                    )
                })?
            }
            "commandPrefix" => {
                r.prefixes = strings(v).ok_or_else(|| {
                    syntax(
                        text,
                        file,
                        vat,
                        "`commandPrefix` must be a string or an array of strings",
                    )
                })?
            }
            "commandRegex" => {
                r.regex = Some(
                    v.as_str()
                        .ok_or_else(|| syntax(text, file, vat, "`commandRegex` must be a string"))?
                        .to_string(),
                )
            }
            "argsPattern" | "mcpName" => {
                r.unsupported = Some(format!("`{k}` has no counterpart in khaelor-perm's rules"))
            }
            "modes" => {
                let modes = strings(v).ok_or_else(|| {
                    syntax(text, file, vat, "`modes` must be an array of strings")
                })?;
                if !modes.iter().any(|m| m == "default") {
                    r.conditional = Some(format!(
                        "applies only in the approval modes {modes:?}, not in `default`; left out so the call keeps asking"
                    ));
                }
            }
            "interactive" | "subagent" | "toolAnnotations" => {
                r.conditional = Some(format!(
                    "applies only where `{k}` holds; left out so the call keeps asking"
                ));
            }
            // Our reading judges a redirection as a write of its own.
            "allowRedirection" | "allow_redirection" => {}
            "decision" => {
                let d = v
                    .as_str()
                    .ok_or_else(|| syntax(text, file, vat, "`decision` must be a string"))?;
                decision = Some(match d {
                    "allow" => Action::Allow,
                    "ask_user" | "ask" => Action::Ask,
                    "deny" => Action::Deny,
                    other => {
                        return Err(syntax(
                            text,
                            file,
                            vat,
                            format!(
                                "unknown decision `{other}`, expected `allow`, `ask_user` or `deny`"
                            ),
                        ));
                    }
                });
            }
            "priority" => {
                // Gemini's own "Allow always" writes a fractional priority (its tier
                // plus a fraction, `4.95`): kept in thousandths so the order holds.
                r.priority = match (v.as_integer(), v.as_float()) {
                    (Some(i), _) => i.saturating_mul(1000),
                    (None, Some(f)) if f.is_finite() && f.abs() < 1e12 => {
                        #[expect(
                            clippy::cast_possible_truncation,
                            reason = "bounded above; thousandths are all the order needs"
                        )]
                        let milli = (f * 1000.0).round() as i64;
                        milli
                    }
                    _ => {
                        return Err(syntax(text, file, vat, "`priority` must be a number"));
                    }
                }
            }
            "denyMessage" | "deny_message" | "description" | "name" => {}
            other => {
                return Err(syntax(
                    text,
                    file,
                    vat,
                    format!("unknown field `{other}` in a policy rule"),
                ));
            }
        }
    }
    r.action =
        decision.ok_or_else(|| syntax(text, file, at, "rule is missing the field `decision`"))?;
    r.original = format!(
        "toolName={:?}{}{} decision={} priority={}",
        r.tools,
        if r.prefixes.is_empty() {
            String::new()
        } else {
            format!(" commandPrefix={:?}", r.prefixes)
        },
        r.regex
            .as_ref()
            .map(|x| format!(" commandRegex={x:?}"))
            .unwrap_or_default(),
        r.action,
        r.priority as f64 / 1000.0
    );
    Ok(r)
}

/// A regex Gemini matches after `"command":"` (anchored at the command's start, open
/// at its end) → our wildcard pattern, when it is literal text joined by `.*`,
/// optionally `^`-anchored and optionally closed by `"` (the end of the command, as
/// our export writes it). Anything else (classes, groups, alternatives) is `None`.
fn literal_regex(re: &str) -> Option<String> {
    let body = re.strip_prefix('^').unwrap_or(re);
    let mut out = String::new();
    let mut closed = false;
    let mut chars = body.chars().peekable();
    while let Some(c) = chars.next() {
        if closed {
            return None;
        }
        match c {
            '\\' => match chars.next() {
                // A literal `*` would read as our wildcard.
                Some('*') => return None,
                Some(e) if !e.is_ascii_alphanumeric() => out.push(e),
                _ => return None,
            },
            '.' if chars.peek() == Some(&'*') => {
                chars.next();
                out.push('*');
            }
            '"' => closed = true,
            '.' | '*' | '+' | '?' | '(' | ')' | '[' | ']' | '{' | '}' | '|' | '^' | '$' => {
                return None;
            }
            other => out.push(other),
        }
    }
    if out.is_empty() {
        return None;
    }
    if !closed && !out.ends_with('*') {
        out.push('*');
    }
    Some(out)
}

pub fn import(files: &[(&Path, &str)], _ctx: &ImportContext) -> Result<Import, ImportError> {
    let mut all: Vec<GRule> = Vec::new();
    for (path, text) in files {
        let file = path.display().to_string();
        let doc = toml_edit::Document::parse(*text).map_err(|e| {
            syntax(
                text,
                &file,
                e.span().map_or(0, |s| s.start),
                crate::presentation::messages::lower_first(e.message()),
            )
        })?;
        for (k, item) in doc.iter() {
            if k != "rule" {
                let at = item.span().map_or(0, |s| s.start);
                return Err(syntax(
                    text,
                    &file,
                    at,
                    format!("unexpected `{k}`, a policy file holds `[[rule]]` tables"),
                ));
            }
            let Some(aot) = item.as_array_of_tables() else {
                return Err(syntax(
                    text,
                    &file,
                    item.span().map_or(0, |s| s.start),
                    "`rule` must be written as `[[rule]]` tables",
                ));
            };
            for t in aot.iter() {
                all.push(rule(text, &file, t)?);
            }
        }
    }
    // Lowest priority first; at equal priority allow, ask, deny (stricter placed later).
    all.sort_by_key(|r| (r.priority, r.action));
    let mut out = Import::default();
    if let Some(first) = files.first() {
        // Gemini CLI asks before writes unless a rule allows them; our defaults allow
        // project writes, so its default is imported where it is stricter.
        let from = SourcePos {
            file: first.0.display().to_string(),
            line: 1,
        };
        let r = out.push(
            "file.write.*",
            "*",
            MatchDialect::Wildcard,
            Action::Ask,
            &from,
            "(Gemini CLI default: writes ask)",
        );
        r.note = Some("Gemini CLI asks before file writes no rule allows".to_string());
    }
    for r in &all {
        if let Some(why) = &r.conditional
            && r.action == Action::Allow
        {
            out.skip(&r.from, &r.original, why.clone());
            continue;
        }
        let lost = |reason: String| ImportError::DenyLost {
            from: r.from.clone(),
            original: r.original.clone(),
            reason,
        };
        if let Some(why) = &r.unsupported {
            if r.action == Action::Allow {
                out.skip(&r.from, &r.original, why.clone());
                continue;
            }
            return Err(lost(why.clone()));
        }
        let mut patterns: Vec<(String, MatchDialect)> = Vec::new();
        if let Some(re) = &r.regex {
            match literal_regex(re) {
                Some(p) => patterns.push((p, MatchDialect::Wildcard)),
                None if r.action == Action::Allow => {
                    out.skip(
                        &r.from,
                        &r.original,
                        format!(
                            "the regex `{re}` is not a literal prefix; the command keeps asking"
                        ),
                    );
                    continue;
                }
                None => return Err(lost(format!("the regex `{re}` is not a literal prefix"))),
            }
        }
        for p in &r.prefixes {
            patterns.extend(command_prefix(p));
        }
        let command_scoped = !patterns.is_empty();
        if !command_scoped {
            patterns.push(("*".to_string(), MatchDialect::Wildcard));
        }
        for tool in &r.tools {
            let Some(caps) = capabilities(tool) else {
                out.skip(&r.from, &format!("{tool}: {}", r.original), "a tool khaelor-perm does not map: it refuses to decide an unknown tool, so it is never allowed here (at least as strict)");
                continue;
            };
            for cap in caps {
                // A command condition on a non-shell tool never matches in Gemini.
                if command_scoped && *cap != "process.execute" && *cap != "*" {
                    continue;
                }
                for (p, d) in &patterns {
                    if command_scoped || *cap == "process.execute" {
                        out.push_command(p, *d, r.action, &r.from, &r.original);
                    } else {
                        out.push(cap, p, *d, r.action, &r.from, &r.original);
                    }
                }
            }
        }
    }
    Ok(out)
}
