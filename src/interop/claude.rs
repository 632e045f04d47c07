//! Claude Code `settings.json` → our rules: `permissions.allow` / `ask` / `deny`, each a
//! `Tool` or `Tool(specifier)` string.
//!
//! Claude checks deny, then ask, then allow, first match winning; in our last-match
//! order that is every allow, then every ask, then every deny (across all the files
//! given, as Claude merges its settings files). Bash specifiers: `cmd:*` and a single
//! trailing ` *` are word-boundary prefixes (the bare command matches too), any other
//! `*` spans anything (as ours), no `*` is exact. Read/Edit specifiers are gitignore
//! patterns: `//abs`, `~/home`, `/settings-relative` (the project), `./x` or `x` relative
//! to the project, a pattern without a `/` matching at any depth; they become globs.

use std::path::Path;

use super::json::{self, Node};
use super::model::{
    Import, ImportContext, ImportError, SourcePos, anchor, command_prefix, line_of,
};
use crate::policy::rules::{Action, MatchDialect};

struct Entry {
    action: Action,
    text: String,
    from: SourcePos,
}

pub fn import(files: &[(&Path, &str)], ctx: &ImportContext) -> Result<Import, ImportError> {
    let mut entries: Vec<Entry> = Vec::new();
    let mut out = Import::default();
    // Claude Code asks before every edit unless a rule allows it (modes aside); our
    // defaults allow project writes, so its default is imported where it is stricter.
    let mut mode: Option<(String, SourcePos)> = None;
    for (path, text) in files {
        let file = path.display().to_string();
        let root = json::parse(text, &file, false)?;
        let Some(perms) = root.get("permissions") else {
            continue;
        };
        let Node::Obj(props, _) = perms else {
            return Err(json::shape(
                text,
                &file,
                perms.offset(),
                format!("`permissions` must be an object, found {}", perms.kind()),
            ));
        };
        for (key, key_at, value) in props {
            let from = SourcePos {
                file: file.clone(),
                line: line_of(text, *key_at),
            };
            let action = match key.as_str() {
                "allow" => Action::Allow,
                "ask" => Action::Ask,
                "deny" => Action::Deny,
                "defaultMode" => {
                    mode = Some((value.as_str().unwrap_or("").to_string(), from));
                    continue;
                }
                "additionalDirectories" | "disableBypassPermissionsMode" => {
                    out.skip(&from, key, "a Claude Code mode setting, not a rule: khaelor-perm's defaults apply where no rule matches");
                    continue;
                }
                other => {
                    out.skip(&from, other, "not a Claude Code permission list");
                    continue;
                }
            };
            let Node::Arr(items, _) = value else {
                return Err(json::shape(
                    text,
                    &file,
                    value.offset(),
                    format!(
                        "`permissions.{key}` must be an array of strings, found {}",
                        value.kind()
                    ),
                ));
            };
            for item in items {
                let Some(s) = item.as_str() else {
                    return Err(json::shape(
                        text,
                        &file,
                        item.offset(),
                        format!("a rule must be a string, found {}", item.kind()),
                    ));
                };
                entries.push(Entry {
                    action,
                    text: s.to_string(),
                    from: SourcePos {
                        file: file.clone(),
                        line: line_of(text, item.offset()),
                    },
                });
            }
        }
    }
    let (mode_name, mode_from) = match mode {
        Some((m, from)) => (m, from),
        None => (
            "default".to_string(),
            SourcePos {
                file: files
                    .first()
                    .map(|f| f.0.display().to_string())
                    .unwrap_or_default(),
                line: 1,
            },
        ),
    };
    match mode_name.as_str() {
        "default" | "" | "plan" => {
            let r = out.push("file.write.*", "*", MatchDialect::Wildcard, Action::Ask, &mode_from, &format!("defaultMode: {mode_name}"));
            r.note = Some("Claude Code asks before edits no rule allows".to_string());
        }
        "acceptEdits" => out.skip(&mode_from, "defaultMode: acceptEdits", "edits in the project are allowed, as our defaults already do"),
        other => out.skip(&mode_from, &format!("defaultMode: {other}"), "a mode that skips or refuses prompts is not imported: khaelor-perm's defaults decide unmatched calls"),
    }
    for action in [Action::Allow, Action::Ask, Action::Deny] {
        for e in entries.iter().filter(|e| e.action == action) {
            translate(&mut out, e, ctx)?;
        }
    }
    Ok(out)
}

fn split_rule(s: &str) -> (&str, Option<&str>) {
    match s.find('(') {
        Some(i) if s.ends_with(')') => (s.get(..i).unwrap_or(s), s.get(i + 1..s.len() - 1)),
        _ => (s, None),
    }
}

fn translate(out: &mut Import, e: &Entry, ctx: &ImportContext) -> Result<(), ImportError> {
    let (tool, spec) = split_rule(e.text.trim());
    let spec = spec.map(str::trim).filter(|s| !s.is_empty() && *s != "*");
    let a = e.action;
    match tool {
        "Bash" => {
            for (p, d) in bash_patterns(spec) {
                out.push_command(&p, d, a, &e.from, &e.text);
            }
        }
        "Read" | "Edit" | "Write" | "MultiEdit" | "NotebookEdit" => {
            let cap = if tool == "Read" {
                "file.read"
            } else {
                "file.write.*"
            };
            match spec {
                None => {
                    out.push(cap, "*", MatchDialect::Wildcard, a, &e.from, &e.text);
                }
                Some(p) => {
                    out.push(
                        cap,
                        &path_glob(p, ctx),
                        MatchDialect::Glob,
                        a,
                        &e.from,
                        &e.text,
                    );
                }
            }
        }
        "Glob" | "Grep" | "LS" if spec.is_none() => {
            if a == Action::Deny {
                let r = out.push(
                    "file.read",
                    "*",
                    MatchDialect::Wildcard,
                    a,
                    &e.from,
                    &e.text,
                );
                r.note = Some("our `file.read` covers read, glob, grep and list together: denying one denies all reads (stricter)".to_string());
            } else {
                out.skip(
                    &e.from,
                    &e.text,
                    "searching is reading: Read rules and our `file.read` decide it",
                );
            }
        }
        "WebFetch" => match spec {
            None => {
                for p in ["http://*", "https://*"] {
                    out.push(
                        "network.access",
                        p,
                        MatchDialect::Wildcard,
                        a,
                        &e.from,
                        &e.text,
                    );
                }
            }
            Some(s) => match s.strip_prefix("domain:").map(str::trim) {
                Some(d) if !d.is_empty() && !d.contains(['*', '/', ' ']) => {
                    if a == Action::Allow {
                        for scheme in ["http", "https"] {
                            out.push(
                                "network.access",
                                &format!("{scheme}://{d}"),
                                MatchDialect::Wildcard,
                                a,
                                &e.from,
                                &e.text,
                            );
                            out.push(
                                "network.access",
                                &format!("{scheme}://{d}/*"),
                                MatchDialect::Wildcard,
                                a,
                                &e.from,
                                &e.text,
                            );
                        }
                    } else {
                        // Any mention of the host: covers ports, user info, case-preserving
                        // paths and `curl` commands too (wider, so stricter).
                        let r = out.push(
                            "network.access",
                            &format!("*{d}*"),
                            MatchDialect::Wildcard,
                            a,
                            &e.from,
                            &e.text,
                        );
                        r.note = Some(format!(
                            "widened to any subject mentioning `{d}`, so no URL form slips past it"
                        ));
                    }
                }
                _ if a == Action::Allow => out.skip(
                    &e.from,
                    &e.text,
                    "only `domain:HOST` WebFetch rules translate; the fetch keeps asking",
                ),
                _ => {
                    return Err(ImportError::DenyLost {
                        from: e.from.clone(),
                        original: e.text.clone(),
                        reason: "only `domain:HOST` WebFetch rules translate".to_string(),
                    });
                }
            },
        },
        _ => {
            let reason = if tool.starts_with("mcp__") {
                "an MCP tool: khaelor-perm maps no MCP tools and refuses to decide a tool it does not know, so it is never allowed here (at least as strict)"
            } else {
                "a tool khaelor-perm does not map: it refuses to decide an unknown tool, so it is never allowed here (at least as strict)"
            };
            out.skip(&e.from, &e.text, reason);
        }
    }
    Ok(())
}

/// Bash specifier → (pattern, dialect) list.
fn bash_patterns(spec: Option<&str>) -> Vec<(String, MatchDialect)> {
    let Some(spec) = spec else {
        return vec![("*".to_string(), MatchDialect::Wildcard)];
    };
    if let Some(prefix) = spec.strip_suffix(":*") {
        return command_prefix(prefix);
    }
    let stars = spec.matches('*').count();
    if stars == 1
        && let Some(prefix) = spec.strip_suffix(" *")
    {
        // Claude: a single trailing ` *` is optional, so the bare command matches too.
        return command_prefix(prefix);
    }
    vec![(
        crate::model::vocab::collapse_whitespace(spec),
        MatchDialect::Wildcard,
    )]
}

/// A gitignore-style Read/Edit specifier → an absolute glob.
fn path_glob(spec: &str, ctx: &ImportContext) -> String {
    let dir_only = spec.ends_with('/') && spec.len() > 1;
    let spec = spec.trim_end_matches('/');
    let g = if let Some(abs) = spec.strip_prefix("//") {
        format!("/{abs}")
    } else if spec.starts_with("~/") || spec == "~" {
        anchor(spec, &ctx.project, &ctx.home)
    } else if let Some(rel) = spec.strip_prefix('/') {
        anchor(rel, &ctx.project, &ctx.home)
    } else {
        let rel = spec.strip_prefix("./").unwrap_or(spec);
        if rel.contains('/') || spec.starts_with("./") {
            anchor(rel, &ctx.project, &ctx.home)
        } else {
            // gitignore: a name without a slash matches at any depth.
            anchor(&format!("**/{rel}"), &ctx.project, &ctx.home)
        }
    };
    if dir_only { format!("{g}/**") } else { g }
}
