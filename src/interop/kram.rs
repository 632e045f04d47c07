//! Kram (seed 004) → our rules: `permissions.json` (`default`, `rules` of `{tool,
//! pattern, decision}`) and `.kram/permission_grants.json` (exact "always" grants).
//!
//! Kram picks the most specific matching rule, ties going to the later one; grants are
//! appended after the policy's rules. Our order is last match wins, so the rules are
//! sorted by specificity, least specific first, stably (equal specificity keeps file
//! order, so the later still wins). Specificity, where the seed is silent: the subject
//! pattern first (any < prefix < exact, a longer prefix more specific), then the tool
//! (a `*`-suffixed tool glob < an exact tool name). Patterns keep seed 004's prefix
//! dialect. An empty `default` is allow, as in Kram; the default becomes a first
//! `*`/`*` rule. Importing grants also sets `alwaysScope: exact`, Kram's behaviour.

use std::path::Path;

use super::json::{self, Node};
use super::model::{Import, ImportContext, ImportError, SourcePos, line_of};
use crate::policy::rules::{Action, MatchDialect};

struct KramRule {
    tool: String,
    pattern: String,
    action: Action,
    from: SourcePos,
    original: String,
}

fn specificity(r: &KramRule) -> (u8, usize, u8, usize) {
    let (prank, plen) = if r.pattern.is_empty() || r.pattern == "*" {
        (0, 0)
    } else if let Some(p) = r.pattern.strip_suffix('*') {
        (1, p.len())
    } else {
        (2, r.pattern.len())
    };
    let (trank, tlen) = match r.tool.strip_suffix('*') {
        Some(t) => (0, t.len()),
        None => (1, r.tool.len()),
    };
    (prank, plen, trank, tlen)
}

/// The capability a Kram tool's subject is decided under, and whether it is a path.
fn capability(tool: &str) -> Option<(&'static str, bool)> {
    Some(match tool {
        "bash" | "shell" => ("process.execute", false),
        "read_file" | "read" | "list_dir" | "grep" | "glob" => ("file.read", true),
        "write_file" | "edit_file" | "create_file" | "delete_file" | "write" | "edit" => {
            ("file.write.*", true)
        }
        "web_fetch" | "fetch" => ("network.access", false),
        _ => return None,
    })
}

pub fn import(files: &[(&Path, &str)], ctx: &ImportContext) -> Result<Import, ImportError> {
    let mut out = Import::default();
    let mut policy: Vec<KramRule> = Vec::new();
    let mut grants: Vec<KramRule> = Vec::new();
    let mut default: Option<(Action, SourcePos, String)> = None;
    for (path, text) in files {
        let file = path.display().to_string();
        let root = json::parse(text, &file, false)?;
        let grant_list = match &root {
            Node::Arr(..) => Some(&root),
            Node::Obj(..) if root.get("rules").is_none() && root.get("default").is_none() => {
                root.get("grants")
            }
            _ => None,
        };
        if let Some(list) = grant_list {
            out.always_scope_exact = true;
            let Node::Arr(items, _) = list else {
                return Err(json::shape(
                    text,
                    &file,
                    list.offset(),
                    "`grants` must be an array",
                ));
            };
            for g in items {
                grants.push(entry(text, &file, g, true)?);
            }
            continue;
        }
        if let Some(d) = root.get("default") {
            let Some(s) = d.as_str() else {
                return Err(json::shape(
                    text,
                    &file,
                    d.offset(),
                    format!("`default` must be a string, found {}", d.kind()),
                ));
            };
            let a = if s.is_empty() {
                Action::Allow
            } else {
                Action::parse_seed(s)
                    .map_err(|e| json::shape(text, &file, d.offset(), e.to_string()))?
            };
            default = Some((
                a,
                SourcePos {
                    file: file.clone(),
                    line: line_of(text, d.offset()),
                },
                format!("\"default\": \"{s}\""),
            ));
        } else if default.is_none() {
            default = Some((
                Action::Allow,
                SourcePos {
                    file: file.clone(),
                    line: 1,
                },
                "no `default` (Kram: allow)".to_string(),
            ));
        }
        if let Some(rules) = root.get("rules") {
            let Node::Arr(items, _) = rules else {
                return Err(json::shape(
                    text,
                    &file,
                    rules.offset(),
                    "`rules` must be an array",
                ));
            };
            for r in items {
                policy.push(entry(text, &file, r, false)?);
            }
        }
    }
    if let Some((a, from, original)) = default {
        let r = out.push("*", "*", MatchDialect::Wildcard, a, &from, &original);
        r.note = Some("Kram's decision when no rule matches".to_string());
    }
    policy.extend(grants);
    // Stable: equal specificity keeps order, so the later rule (or a grant) still wins.
    policy.sort_by_key(specificity);
    for r in &policy {
        match capability(&r.tool) {
            Some((cap, is_path)) => {
                let pattern = if r.pattern.is_empty() { "*".to_string() } else if is_path && !r.pattern.starts_with('/') && r.pattern != "*" {
                    super::model::anchor(&r.pattern, &ctx.project, &ctx.home)
                } else {
                    r.pattern.clone()
                };
                if cap == "process.execute" {
                    out.push_command(&pattern, MatchDialect::Prefix, r.action, &r.from, &r.original);
                } else {
                    out.push(cap, &pattern, MatchDialect::Prefix, r.action, &r.from, &r.original);
                }
            }
            None if r.tool == "*" => {
                out.push("*", if r.pattern.is_empty() { "*" } else { &r.pattern }, MatchDialect::Prefix, r.action, &r.from, &r.original);
            }
            None => out.skip(&r.from, &r.original, "a tool khaelor-perm does not map: it refuses to decide an unknown tool, so it is never allowed here (at least as strict)"),
        }
    }
    Ok(out)
}

fn entry(text: &str, file: &str, n: &Node, grant: bool) -> Result<KramRule, ImportError> {
    let field = |k: &str| -> Result<Option<String>, ImportError> {
        match n.get(k) {
            None => Ok(None),
            Some(Node::Str(s, _)) => Ok(Some(s.clone())),
            Some(v) => Err(json::shape(
                text,
                file,
                v.offset(),
                format!("`{k}` must be a string, found {}", v.kind()),
            )),
        }
    };
    if !matches!(n, Node::Obj(..)) {
        return Err(json::shape(
            text,
            file,
            n.offset(),
            format!("a rule must be an object, found {}", n.kind()),
        ));
    }
    let tool = field("tool")?
        .ok_or_else(|| json::shape(text, file, n.offset(), "rule is missing the field `tool`"))?;
    let pattern = field("pattern")?.unwrap_or_default();
    let action = if grant {
        Action::Allow
    } else {
        let d = field("decision")?.ok_or_else(|| {
            json::shape(
                text,
                file,
                n.offset(),
                "rule is missing the field `decision`",
            )
        })?;
        Action::parse_seed(&d).map_err(|e| json::shape(text, file, n.offset(), e.to_string()))?
    };
    let original = if grant {
        format!("grant {tool} \"{pattern}\"")
    } else {
        format!("{tool} \"{pattern}\" {action}")
    };
    Ok(KramRule {
        tool,
        pattern,
        action,
        from: SourcePos {
            file: file.to_string(),
            line: line_of(text, n.offset()),
        },
        original,
    })
}
