//! OpenCode `opencode.json` → our rules: the `permission` value (one action for
//! everything, or per permission an action or an object of pattern → action).
//!
//! OpenCode evaluates in source order with the last match winning, as we do, and its
//! `*` spans anything, `/` included, as ours: keys and patterns translate in order. A
//! `?` (one character) has no counterpart: in an allow the rule is left out (the call
//! keeps asking), in an ask or deny it becomes `*` (wider, so stricter). A bash pattern
//! ending in ` *` also matches the bare command. Path patterns are relative to the
//! project unless they start with `/`, `~` or `*`.

use std::path::Path;

use super::json::{self, Node};
use super::model::{Import, ImportContext, ImportError, SourcePos, anchor, line_of};
use crate::policy::rules::{Action, MatchDialect};

pub fn import(files: &[(&Path, &str)], ctx: &ImportContext) -> Result<Import, ImportError> {
    let mut out = Import::default();
    for (path, text) in files {
        let file = path.display().to_string();
        let root = json::parse(text, &file, false)?;
        if let Some(tools) = root.get("tools") {
            let from = SourcePos {
                file: file.clone(),
                line: line_of(text, tools.offset()),
            };
            out.skip(&from, "tools", "the legacy tool switches decide which tools exist, not what they may do; deny the tool's capability instead");
        }
        let Some(perm) = root.get("permission") else {
            continue;
        };
        let from = SourcePos {
            file: file.clone(),
            line: line_of(text, perm.offset()),
        };
        match perm {
            Node::Str(s, _) => {
                let a = action(text, &file, perm, s)?;
                out.push(
                    "*",
                    "*",
                    MatchDialect::Wildcard,
                    a,
                    &from,
                    &format!("\"permission\": \"{s}\""),
                );
            }
            Node::Obj(props, _) => {
                for (key, key_at, value) in props {
                    permission(&mut out, text, &file, key, *key_at, value, ctx)?;
                }
                // OpenCode needs both `edit` and `external_directory` to pass for a
                // write outside the project: its edit asks and denies are repeated
                // last for outside writes, so no external_directory allow outranks them.
                let outside: Vec<_> = out
                    .rules
                    .iter()
                    .filter(|r| {
                        r.rule.capability == "file.write.*" && r.rule.action != Action::Allow
                    })
                    .cloned()
                    .collect();
                for mut r in outside {
                    r.rule.capability = "file.write.outsideProject".to_string();
                    r.note = Some("repeated last: an outside write needs `edit` and `external_directory` to pass".to_string());
                    out.rules.push(r);
                }
            }
            other => {
                return Err(json::shape(
                    text,
                    &file,
                    other.offset(),
                    format!(
                        "`permission` must be an action or an object, found {}",
                        other.kind()
                    ),
                ));
            }
        }
    }
    Ok(out)
}

fn action(text: &str, file: &str, at: &Node, s: &str) -> Result<Action, ImportError> {
    Action::parse_seed(s).map_err(|e| json::shape(text, file, at.offset(), e.to_string()))
}

/// The capabilities a permission key governs, and how its patterns are read.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Command,
    Path(&'static str),
    External,
    Url,
    Search,
    All,
}

fn kind(key: &str) -> Option<Kind> {
    Some(match key {
        "bash" => Kind::Command,
        "edit" => Kind::Path("file.write.*"),
        "read" => Kind::Path("file.read"),
        "external_directory" => Kind::External,
        "webfetch" => Kind::Url,
        "glob" | "grep" | "list" => Kind::Search,
        "*" => Kind::All,
        _ => return None,
    })
}

fn permission(
    out: &mut Import,
    text: &str,
    file: &str,
    key: &str,
    key_at: usize,
    value: &Node,
    ctx: &ImportContext,
) -> Result<(), ImportError> {
    let from = SourcePos {
        file: file.to_string(),
        line: line_of(text, key_at),
    };
    let Some(k) = kind(key) else {
        out.skip(&from, key, "a permission for a tool khaelor-perm does not map: it refuses to decide an unknown tool, so it is never allowed here (at least as strict)");
        return Ok(());
    };
    let entries: Vec<(String, Action, SourcePos)> = match value {
        Node::Str(s, _) => vec![("*".to_string(), action(text, file, value, s)?, from.clone())],
        Node::Obj(props, _) => {
            let mut v = Vec::new();
            for (pat, at, val) in props {
                let Some(s) = val.as_str() else {
                    return Err(json::shape(
                        text,
                        file,
                        val.offset(),
                        format!("expected an action, found {}", val.kind()),
                    ));
                };
                v.push((
                    pat.clone(),
                    action(text, file, val, s)?,
                    SourcePos {
                        file: file.to_string(),
                        line: line_of(text, *at),
                    },
                ));
            }
            v
        }
        other => {
            return Err(json::shape(
                text,
                file,
                other.offset(),
                format!(
                    "`{key}` must be an action or an object of pattern to action, found {}",
                    other.kind()
                ),
            ));
        }
    };
    for (pattern, a, from) in entries {
        let original = format!("\"{key}\": {{\"{pattern}\": \"{a}\"}}");
        let (pattern, widened) = if pattern.contains('?') {
            if a == Action::Allow {
                out.skip(
                    &from,
                    &original,
                    "`?` (exactly one character) has no counterpart; the call keeps asking",
                );
                continue;
            }
            (pattern.replace('?', "*"), true)
        } else {
            (pattern, false)
        };
        let note = widened.then(|| "`?` widened to `*` (stricter)".to_string());
        let any = pattern == "*";
        let push = |out: &mut Import, cap: &str, p: &str| {
            let r = out.push(cap, p, MatchDialect::Wildcard, a, &from, &original);
            r.note.clone_from(&note);
        };
        match k {
            Kind::All => push(out, "*", &pattern),
            Kind::Command => {
                let p = crate::model::vocab::collapse_whitespace(&pattern);
                let mut pats = vec![p.clone()];
                if let Some(bare) = p.strip_suffix(" *")
                    && !bare.contains('*')
                {
                    pats.push(bare.to_string());
                }
                for q in pats {
                    for cap in super::model::COMMAND_CAPABILITIES {
                        push(out, cap, &q);
                    }
                }
            }
            Kind::Path(cap) => {
                let p = if any || pattern.starts_with('*') {
                    pattern.clone()
                } else {
                    anchor(&pattern, &ctx.project, &ctx.home)
                };
                // An edit allow covers the project only: outside, `external_directory`
                // must allow too (it asks by default, as our defaults do).
                let cap = if cap == "file.write.*" && a == Action::Allow {
                    "file.write.project"
                } else {
                    cap
                };
                push(out, cap, &p);
            }
            Kind::External => {
                let p = if any {
                    pattern.clone()
                } else {
                    anchor(&pattern, &ctx.project, &ctx.home)
                };
                push(out, "file.write.outsideProject", &p);
                if a != Action::Allow && !any {
                    // OpenCode gates reads outside the project here too; our reads are
                    // one capability, so a deny or ask on a directory covers its reads.
                    push(out, "file.read", &p);
                }
            }
            Kind::Url => {
                if any {
                    push(out, "network.access", "http://*");
                    push(out, "network.access", "https://*");
                } else {
                    push(out, "network.access", &pattern);
                }
            }
            Kind::Search => {
                if a == Action::Allow {
                    out.skip(
                        &from,
                        &original,
                        "searching is reading: `read` and our `file.read` decide it",
                    );
                } else {
                    let r = out.push(
                        "file.read",
                        "*",
                        MatchDialect::Wildcard,
                        a,
                        &from,
                        &original,
                    );
                    r.note = Some(
                        "our `file.read` covers read, glob, grep and list together (stricter)"
                            .to_string(),
                    );
                }
            }
        }
    }
    Ok(())
}
