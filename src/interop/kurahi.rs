//! Kurahi (seed 003) → our rules: `agents.defaults.permissions` plus one agent's list
//! (`--agent ID`) of `read:` / `write:` / `exec:` globs from `kolo.json5`.
//!
//! Seed 003: inert until a rule exists (even a malformed one); then write and exec are
//! denied unless a rule grants them, read stays allowed. So an active list becomes a
//! deny of `file.write.*`, `process.execute` and `process.background` on `*`, followed
//! by one allow per grant: `write:` as a path glob (relative patterns anchored at the
//! project, Kurahi's workspace), `exec:` as our wildcard (its `*` spans spaces, as
//! ours), `exec:process:*` as `process.background`. `read:` rules grant what is
//! already allowed and only report. Every target of a patch must match: our
//! `apply_patch` already needs every file's request to pass.

use std::path::Path;

use super::json::{self, Node};
use super::model::{Import, ImportContext, ImportError, SourcePos, line_of};
use crate::policy::rules::{Action, MatchDialect};

pub fn import(
    files: &[(&Path, &str)],
    ctx: &ImportContext,
    agent: Option<&str>,
) -> Result<Import, ImportError> {
    let mut out = Import::default();
    let mut grants: Vec<(String, SourcePos)> = Vec::new();
    let mut first: Option<SourcePos> = None;
    let mut agent_found = agent.is_none();
    for (path, text) in files {
        let file = path.display().to_string();
        let root = json::parse(text, &file, true)?;
        let Some(agents) = root.get("agents") else {
            continue;
        };
        let mut lists: Vec<&Node> = Vec::new();
        if let Some(p) = agents.get("defaults").and_then(|d| d.get("permissions")) {
            lists.push(p);
        }
        if let Some(Node::Arr(entries, _)) = agents.get("list") {
            for e in entries {
                let id = e.get("id").and_then(Node::as_str);
                match (agent, id, e.get("permissions")) {
                    (Some(want), Some(id), Some(p)) if want == id => {
                        agent_found = true;
                        lists.push(p);
                    }
                    (Some(want), Some(id), None) if want == id => agent_found = true,
                    (None, Some(id), Some(p)) => {
                        let from = SourcePos {
                            file: file.clone(),
                            line: line_of(text, p.offset()),
                        };
                        out.skip(&from, &format!("agents.list[id={id}].permissions"), "per-agent list not imported: pass `--agent ID` to import the defaults plus that agent's list");
                    }
                    _ => {}
                }
            }
        }
        for list in lists {
            let Node::Arr(items, _) = list else {
                return Err(json::shape(
                    text,
                    &file,
                    list.offset(),
                    format!(
                        "`permissions` must be an array of strings, found {}",
                        list.kind()
                    ),
                ));
            };
            for item in items {
                let from = SourcePos {
                    file: file.clone(),
                    line: line_of(text, item.offset()),
                };
                first.get_or_insert_with(|| from.clone());
                match item.as_str() {
                    Some(s) => grants.push((s.to_string(), from)),
                    None => out.skip(&from, item.kind(), "malformed rule (not a string): skipped, as Kurahi does; it still activates the guard"),
                }
            }
        }
    }
    if !agent_found {
        return Err(ImportError::Read {
            file: files
                .first()
                .map(|f| f.0.display().to_string())
                .unwrap_or_default(),
            message: format!(
                "no agent with id `{}` in `agents.list`",
                agent.unwrap_or_default()
            ),
        });
    }
    let Some(first) = first else {
        // Inert: no rule anywhere, nothing changes.
        return Ok(out);
    };
    for cap in ["file.write.*", "process.execute", "process.background"] {
        let r = out.push(
            cap,
            "*",
            MatchDialect::Wildcard,
            Action::Deny,
            &first,
            "(permission globs active)",
        );
        r.note = Some(
            "seed 003: once any rule exists, write and exec are denied unless a rule grants them"
                .to_string(),
        );
    }
    for (s, from) in grants {
        let Some((class, pattern)) = s.split_once(':') else {
            out.skip(&from, &s, "malformed rule (no `class:`): skipped, as Kurahi does; it still activates the guard");
            continue;
        };
        if pattern.is_empty() {
            out.skip(
                &from,
                &s,
                "malformed rule (empty pattern): skipped, as Kurahi does",
            );
            continue;
        }
        match class {
            "read" => out.skip(&from, &s, "reads are allowed by default in Kurahi; our read rules (the defaults ask for secrets such as `.env`) stay in force"),
            "write" => {
                let p = super::model::anchor(pattern, &ctx.project, &ctx.home);
                out.push("file.write.*", &p, MatchDialect::Glob, Action::Allow, &from, &s);
            }
            "exec" => match pattern.strip_prefix("process:") {
                Some("*") => {
                    out.push("process.background", "*", MatchDialect::Wildcard, Action::Allow, &from, &s);
                }
                Some(_) => out.skip(&from, &s, "only `exec:process:*` translates (our background capability has no per-action target); the process tool stays denied"),
                None => {
                    out.push_command(&crate::model::vocab::collapse_whitespace(pattern), MatchDialect::Wildcard, Action::Allow, &from, &s);
                }
            },
            other => out.skip(&from, &s, format!("unknown class `{other}`: skipped, as Kurahi does; it still activates the guard")),
        }
    }
    Ok(out)
}
