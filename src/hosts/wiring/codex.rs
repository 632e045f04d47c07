//! Codex CLI's hooks in its `config.toml` (`$CODEX_HOME/config.toml`, or a project's
//! `.codex/config.toml`, which Codex loads only once it trusts the project), edited
//! with `toml_edit` so the person's comments, order and layout stay.
//!
//! The contract of the pinned Codex (0.171.0, read from its `codex app-server`
//! `hooks/list` answers): inline `[[hooks.<Event>]]` groups, each with
//! `[[hooks.<Event>.hooks]]` handlers `{type = "command", command = …}`; a group with
//! no `matcher` matches every tool. Codex runs a non-managed command hook only once the
//! person has reviewed and trusted it (`/hooks` in its TUI), and keeps that trust in
//! the user's `config.toml` as `[hooks.state."<file>:<event>:<group>:<handler>"]
//! trusted_hash = "sha256:…"`, a hash of the hook's current definition: a changed
//! command is untrusted again. Install never writes trust (the review is the person's
//! to make); uninstall removes the trust entries of the hooks it removes, so a file
//! install changed reads as before.

use toml_edit::{ArrayOfTables, DocumentMut, Item, Table};

use super::{Edit, WiringError, is_ours, shape};
use crate::hosts::Host;

/// The events wired: before each call, and after it (the call ran).
pub const EVENTS: &[(&str, &str)] = &[
    ("PreToolUse", "pre_tool_use"),
    ("PostToolUse", "post_tool_use"),
];

fn parse(file: &str, text: &str) -> Result<DocumentMut, WiringError> {
    let doc: DocumentMut = text.parse().map_err(|e: toml_edit::TomlError| {
        let at = e.span().map_or(0, |s| s.start);
        let before = text.get(..at).unwrap_or(text);
        let line = before.matches('\n').count() + 1;
        let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
        WiringError::Malformed {
            file: file.to_string(),
            line,
            column,
            message: e
                .message()
                .lines()
                .next()
                .unwrap_or("not TOML")
                .trim()
                .to_string(),
        }
    })?;
    if let Some(h) = doc.get("hooks") {
        let Some(hooks) = h.as_table() else {
            return Err(shape(
                file,
                "`hooks` is not a table (an inline `hooks = {…}` is not edited)",
            ));
        };
        for (event, _) in EVENTS {
            if let Some(groups) = hooks.get(event)
                && !groups.is_array_of_tables()
            {
                return Err(shape(
                    file,
                    &format!("`hooks.{event}` is not an array of tables (`[[hooks.{event}]]`)"),
                ));
            }
        }
    }
    Ok(doc)
}

/// (group index, handler index, command) of our handlers under `hooks.<event>`.
fn ours(doc: &DocumentMut, event: &str) -> Vec<(usize, usize, String)> {
    let mut out = Vec::new();
    let Some(groups) = doc
        .get("hooks")
        .and_then(Item::as_table)
        .and_then(|h| h.get(event))
        .and_then(Item::as_array_of_tables)
    else {
        return out;
    };
    for (gi, g) in groups.iter().enumerate() {
        let Some(handlers) = g.get("hooks").and_then(Item::as_array_of_tables) else {
            continue;
        };
        for (hi, h) in handlers.iter().enumerate() {
            if let Some(c) = h.get("command").and_then(Item::as_str)
                && is_ours(c, Host::Codex)
            {
                out.push((gi, hi, c.to_string()));
            }
        }
    }
    out
}

pub fn installed(file: &str, text: &str) -> Result<Vec<(String, String)>, WiringError> {
    let doc = parse(file, text)?;
    Ok(EVENTS
        .iter()
        .flat_map(|(event, _)| {
            ours(&doc, event)
                .into_iter()
                .map(|(_, _, c)| (event.to_string(), c))
        })
        .collect())
}

/// Wires `command` for every event; the pre-tool handler gets `timeout =
/// pre_tool_timeout` (seconds, Codex's key: checked on the pinned Codex, whose
/// `hooks/list` reports it as `timeoutSec`; unset is 600).
pub fn install(
    file: &str,
    text: &str,
    command: &str,
    pre_tool_timeout: Option<u64>,
) -> Result<Edit, WiringError> {
    let mut doc = parse(file, text)?;
    let mut changes = Vec::new();
    for (i, (event, snake)) in EVENTS.iter().enumerate() {
        let existing = ours(&doc, event);
        if existing.len() == 1 && existing.iter().all(|(_, _, c)| c == command) {
            continue;
        }
        if !existing.is_empty() {
            remove_ours(&mut doc, file, event, snake);
            changes.push(format!("replaced the old hook in `hooks.{event}`"));
        }
        let hooks = doc
            .entry("hooks")
            .or_insert_with(|| {
                let mut t = Table::new();
                t.set_implicit(true);
                Item::Table(t)
            })
            .as_table_mut()
            .ok_or_else(|| shape(file, "`hooks` is not a table"))?;
        let groups = hooks
            .entry(event)
            .or_insert_with(|| Item::ArrayOfTables(ArrayOfTables::new()))
            .as_array_of_tables_mut()
            .ok_or_else(|| shape(file, &format!("`hooks.{event}` is not an array of tables")))?;
        let mut handler = Table::new();
        handler.insert("type", toml_edit::value("command"));
        handler.insert("command", toml_edit::value(command));
        if let Some(secs) = pre_tool_timeout.filter(|_| i == 0) {
            handler.insert(
                "timeout",
                toml_edit::value(i64::try_from(secs).unwrap_or(i64::MAX)),
            );
        }
        let mut handlers = ArrayOfTables::new();
        handlers.push(handler);
        // No `matcher`: the group matches every tool.
        let mut group = Table::new();
        group.insert("hooks", Item::ArrayOfTables(handlers));
        groups.push(group);
        changes.push(format!("added `{command}` to `hooks.{event}`"));
    }
    if changes.is_empty() {
        return Ok(Edit {
            text: Some(text.to_string()),
            changes,
        });
    }
    let mut out = doc.to_string();
    // A new file ends with a newline; an existing one keeps its own ending, so
    // uninstall gives back its exact bytes.
    if text.trim().is_empty() || text.ends_with('\n') {
        if !out.ends_with('\n') {
            out.push('\n');
        }
    } else {
        while out.ends_with('\n') {
            out.pop();
        }
    }
    Ok(Edit {
        text: Some(out),
        changes,
    })
}

/// Removes our handlers under `hooks.<event>` (and Codex's trust entries for them),
/// then what only they filled; returns how many handlers went.
fn remove_ours(doc: &mut DocumentMut, file: &str, event: &str, snake: &str) -> usize {
    let found = ours(doc, event);
    if found.is_empty() {
        return 0;
    }
    let Some(hooks) = doc.get_mut("hooks").and_then(Item::as_table_mut) else {
        return 0;
    };
    // Codex's trust of exactly these handlers (their key names the file and position).
    if let Some(state) = hooks.get_mut("state").and_then(Item::as_table_like_mut) {
        for (gi, hi, _) in &found {
            state.remove(&format!("{file}:{snake}:{gi}:{hi}"));
        }
        if state.is_empty() {
            hooks.remove("state");
        }
    }
    if let Some(groups) = hooks.get_mut(event).and_then(Item::as_array_of_tables_mut) {
        // Last first, so the indexes found stay right.
        for (gi, hi, _) in found.iter().rev() {
            let Some(group) = groups.get_mut(*gi) else {
                continue;
            };
            if let Some(handlers) = group
                .get_mut("hooks")
                .and_then(Item::as_array_of_tables_mut)
            {
                handlers.remove(*hi);
                if handlers.is_empty() {
                    groups.remove(*gi);
                }
            }
        }
        if groups.is_empty() {
            hooks.remove(event);
        }
    }
    // An explicit `[hooks]` header was the person's; the implicit table was ours.
    if hooks.is_empty() && hooks.is_implicit() {
        doc.remove("hooks");
    }
    found.len()
}

pub fn uninstall(file: &str, text: &str) -> Result<Edit, WiringError> {
    let mut doc = parse(file, text)?;
    let mut changes = Vec::new();
    for (event, snake) in EVENTS {
        let n = remove_ours(&mut doc, file, event, snake);
        if n > 0 {
            changes.push(format!("removed {n} hook(s) from `hooks.{event}`"));
        }
    }
    if changes.is_empty() {
        return Ok(Edit {
            text: Some(text.to_string()),
            changes,
        });
    }
    let mut out = doc.to_string();
    // The file keeps its own ending (toml_edit ends a changed document's last line).
    if !text.ends_with('\n') {
        while out.ends_with('\n') {
            out.pop();
        }
    }
    let empty = out.trim().is_empty();
    Ok(Edit {
        text: (!empty).then_some(out),
        changes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const CMD: &str = "/usr/local/bin/khaelor-perm hook codex --non-interactive";

    #[test]
    fn install_then_uninstall_gives_back_the_same_bytes() {
        let texts = [
            "",
            "# mine\nmodel = \"x\"\n",
            "model = \"x\"\n\n[model_providers.e2e]\nname = \"e2e\" # keep\n",
            "model = \"x\"",
            "[[hooks.PreToolUse]]\nmatcher = \"^Bash$\"\n[[hooks.PreToolUse.hooks]]\ntype = \"command\"\ncommand = \"other\"\n",
            "[hooks]\n\n[features]\nhooks = true\n",
        ];
        for t in texts {
            let i = install("/h/.codex/config.toml", t, CMD, None).unwrap();
            let installed_text = i.text.clone().unwrap();
            assert!(installed_text.contains(CMD), "{installed_text}");
            let found = installed("f", &installed_text).unwrap();
            assert_eq!(found.len(), 2, "{installed_text}");
            // What Codex reads back: our groups, no matcher (every tool).
            let back: DocumentMut = installed_text.parse().unwrap();
            let pre = back["hooks"]["PreToolUse"].as_array_of_tables().unwrap();
            let last = pre.iter().last().unwrap();
            assert!(last.get("matcher").is_none());
            assert_eq!(last["hooks"][0]["command"].as_str(), Some(CMD));
            let again = install("/h/.codex/config.toml", &installed_text, CMD, None).unwrap();
            assert!(again.changes.is_empty());
            assert_eq!(again.text.as_deref(), Some(installed_text.as_str()));
            let u = uninstall("/h/.codex/config.toml", &installed_text).unwrap();
            match u.text {
                Some(back) => assert_eq!(back, t, "after:\n{installed_text}"),
                None => assert!(t.trim().is_empty(), "{t}"),
            }
        }
    }

    #[test]
    fn uninstall_takes_codexs_trust_of_our_hooks_with_them() {
        let base = "model = \"x\"\n";
        let i = install("/h/config.toml", base, CMD, None)
            .unwrap()
            .text
            .unwrap();
        // What Codex's `/hooks` review appends once the person trusts the hooks.
        let trusted = format!(
            "{i}\n[hooks.state.\"/h/config.toml:pre_tool_use:0:0\"]\ntrusted_hash = \"sha256:aa\"\n\n[hooks.state.\"/h/config.toml:post_tool_use:0:0\"]\ntrusted_hash = \"sha256:bb\"\n\n[hooks.state.\"/other:pre_tool_use:0:0\"]\ntrusted_hash = \"sha256:cc\"\n"
        );
        let u = uninstall("/h/config.toml", &trusted).unwrap().text.unwrap();
        assert!(
            !u.contains(CMD) && !u.contains("sha256:aa") && !u.contains("sha256:bb"),
            "{u}"
        );
        assert!(u.contains("sha256:cc"), "another hook's trust stays: {u}");
    }

    #[test]
    fn refuses_what_it_cannot_read_or_edit() {
        assert!(matches!(
            install("f", "model = ", CMD, None),
            Err(WiringError::Malformed { line: 1, .. })
        ));
        assert!(matches!(
            install("f", "hooks = { PreToolUse = [] }\n", CMD, None),
            Err(WiringError::Shape { .. })
        ));
        assert!(matches!(
            install("f", "[hooks]\nPreToolUse = 1\n", CMD, None),
            Err(WiringError::Shape { .. })
        ));
        let old = install("f", "", "/old/khaelor-perm hook codex", None).unwrap();
        let new = install("f", old.text.as_deref().unwrap(), CMD, None).unwrap();
        let t = new.text.unwrap();
        assert!(t.contains(CMD) && !t.contains("/old/"), "{t}");
        assert_eq!(installed("f", &t).unwrap().len(), 2);
    }
}
