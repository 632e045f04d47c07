//! Claude Code's PreToolUse hook: its input, its tool table, its output.
//!
//! Input: `session_id`, `cwd`, `permission_mode`, `hook_event_name`, `tool_name`,
//! `tool_input`, `tool_use_id`; the project root is `CLAUDE_PROJECT_DIR` (read by the
//! caller), else `cwd`. Output, exit 0: `{"hookSpecificOutput":{"hookEventName":
//! "PreToolUse","permissionDecision":"allow|ask|deny","permissionDecisionReason":"…"}}`;
//! the reason of a deny reaches the model, that of an ask the user's prompt. Any other
//! failure lets the tool run, which is why every error is rendered as a deny. A
//! contained call is `allow` with `updatedInput`, the Bash input whose command runs
//! through `khaelor-perm exec --contain` (checked on Claude Code 2.1.332: the answer's
//! `updatedInput` replaces the tool input after the tool's schema accepts it).

use serde_json::{Map, Value};

use super::{HookCall, HookError, Host, Mapped, Rendered, mcp, pick, split_double_underscore};
use crate::policy::decide::CallDecision;
use crate::policy::rules::Action;

/// Claude Code tools with no local effect: they plan, ask the user, or start a
/// sub-agent whose own tool calls come through this hook again.
pub const NO_EFFECT_TOOLS: &[&str] = &[
    "TodoWrite",
    "TodoRead",
    "Task",
    "Agent",
    "AskUserQuestion",
    "ExitPlanMode",
    "EnterPlanMode",
    "BashOutput",
    "TaskOutput",
];

pub fn parse(obj: &Map<String, Value>) -> Result<HookCall, HookError> {
    super::parse_common(Host::Claude, obj, map)
}

/// Claude Code's tool name and input to ours.
pub fn map(name: &str, input: &Value) -> Mapped {
    if let Some((server, tool)) = split_double_underscore(name) {
        return mcp(server, tool, input);
    }
    if NO_EFFECT_TOOLS.contains(&name) {
        return Mapped::NoEffect;
    }
    let tool = super::to_tool;
    match name {
        "Bash" => tool(
            "bash",
            pick(
                input,
                &[("command", "command"), ("background", "run_in_background")],
            ),
        ),
        "Read" => tool("read", pick(input, &[("path", "file_path")])),
        "Write" => tool(
            "write",
            pick(input, &[("path", "file_path"), ("content", "content")]),
        ),
        "Edit" => tool(
            "edit",
            pick(
                input,
                &[
                    ("path", "file_path"),
                    ("oldString", "old_string"),
                    ("newString", "new_string"),
                    ("replaceAll", "replace_all"),
                ],
            ),
        ),
        // Several edits of one file: the decision rests on the path; the panel shows the
        // first edit's diff (the others are listed by Claude Code itself).
        "MultiEdit" => {
            let first = input
                .get("edits")
                .and_then(Value::as_array)
                .and_then(|a| a.first())
                .cloned()
                .unwrap_or(Value::Null);
            let mut v = match pick(
                &first,
                &[
                    ("oldString", "old_string"),
                    ("newString", "new_string"),
                    ("replaceAll", "replace_all"),
                ],
            ) {
                Ok(v) => v,
                Err(refused) => return refused,
            };
            if let (Some(o), Some(p)) = (v.as_object_mut(), input.get("file_path")) {
                o.insert("path".into(), p.clone());
            }
            tool("edit", Ok(v))
        }
        // A notebook cell: a write of the notebook file (the diff shows the new cell).
        "NotebookEdit" => {
            let mut v = match pick(
                input,
                &[("path", "notebook_path"), ("content", "new_source")],
            ) {
                Ok(v) => v,
                Err(refused) => return refused,
            };
            if let Some(o) = v.as_object_mut() {
                o.entry("content")
                    .or_insert_with(|| Value::String(String::new()));
            }
            tool("write", Ok(v))
        }
        "Glob" => tool(
            "glob",
            pick(input, &[("pattern", "pattern"), ("path", "path")]),
        ),
        "Grep" => tool(
            "grep",
            pick(input, &[("pattern", "pattern"), ("path", "path")]),
        ),
        "LS" => tool("list", pick(input, &[("path", "path")])),
        "WebFetch" => tool("webfetch", pick(input, &[("url", "url")])),
        "WebSearch" => Mapped::Unjudged {
            reason: "`WebSearch` sends a query to the web search provider; no rule covers it yet"
                .to_string(),
        },
        other => Mapped::Unjudged {
            reason: format!("khaelor-perm does not know the Claude Code tool `{other}`"),
        },
    }
}

/// Claude Code's PreToolUse answer for `d`.
pub fn render(d: &CallDecision) -> Rendered {
    let (decision, reason) = match d.decision {
        Action::Allow => ("allow", super::allow_text(d)),
        // Without the tool input to rewrite (`render_contained` has it), asking is the
        // safe answer.
        Action::Contain | Action::Ask => ("ask", super::ask_text(d)),
        Action::Deny => ("deny", super::deny_text(d)),
    };
    Rendered {
        stdout: format!("{}\n", hook_specific(decision, &reason)),
        exit: 0,
    }
}

/// Claude Code's answer for a contained call: allow, with `updatedInput` the Bash
/// input whose `command` is the rewritten one (every other field kept: Claude Code
/// replaces the whole input with it). Anything else renders as `render` does.
pub fn render_contained(d: &CallDecision, input: &Value) -> Rendered {
    match super::contained_input(d, input) {
        Some(updated) => allow_with_updated_input(d, updated),
        None => render(d),
    }
}

/// `permissionDecision: "allow"` with `updatedInput`, the shape Claude Code and Codex
/// share for a call whose input the hook replaces.
pub(crate) fn allow_with_updated_input(d: &CallDecision, updated: Value) -> Rendered {
    let mut v = hook_specific("allow", &super::contain_text(d));
    if let Some(h) = v
        .get_mut("hookSpecificOutput")
        .and_then(Value::as_object_mut)
    {
        h.insert("updatedInput".to_string(), updated);
    }
    Rendered {
        stdout: format!("{v}\n"),
        exit: 0,
    }
}

/// `{"hookSpecificOutput": …}`, the shape Claude Code and Codex share.
pub(crate) fn hook_specific(decision: &str, reason: &str) -> Value {
    serde_json::json!({
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": decision,
            "permissionDecisionReason": reason,
        }
    })
}

// ---- Claude Code's own dialog (the host grants layer, `super::grants`) ----
//
// Claude's dialog for a hook's explicit `ask` offers only "Yes / No"; with no decision
// from the hook, Claude asks with its own dialog, which offers "Yes, and don't ask
// again for: npm test *" and writes that rule into `.claude/settings.local.json`, a
// file `grants` reads back as a policy layer (translated, never widened). So an ask our
// own panel would let the person answer with "always" is handed to that dialog, and
// every other ask stays an explicit `ask`.

/// Whether our ask `d` may be left to Claude Code's own dialog: only when Claude will
/// certainly ask itself and its "don't ask again" can grant no more than our "always"
/// would. All of these must hold:
/// - an interactive ask (it has a panel) of the `Bash` tool in Claude's `default`
///   permission mode (the other modes skip or refuse prompts, so Claude might run it);
/// - our panel offers "always" (`always_patterns`), and every request that asks is a
///   command request asked by our defaults or the preset, with no cap on it (no
///   secret, protected write, unreadable command, broken config);
/// - no allow rule of Claude's own, trusted by us or not, matches the command or any
///   of its parts (else Claude would run what we ask: then the explicit `ask` is what
///   stops it), Claude's rules were read into `policy` at all, and every file of
///   Claude's could be read.
pub fn leave_to_native_dialog(
    call: &HookCall,
    d: &CallDecision,
    policy: &crate::policy::config::Policy,
) -> bool {
    use crate::model::vocab::Capability;
    use crate::policy::rules::RuleSource;
    if d.decision != Action::Ask || d.panel.is_none() || d.always_patterns.is_empty() {
        return false;
    }
    if call.host_tool != "Bash" || call.permission_mode.as_deref() != Some("default") {
        return false;
    }
    if d.hardline.is_some()
        || !d.config_errors.is_empty()
        || !policy.host_rules_read()
        || policy.host_rules_incomplete()
    {
        return false;
    }
    let asks_plainly = d
        .requests
        .iter()
        .filter(|r| r.decision == Action::Ask)
        .all(|r| {
            r.request.capability.has_command_subject()
                && r.reasons.is_empty()
                && !r.request.always_patterns.is_empty()
                && r.rule.as_ref().is_none_or(|rule| {
                    matches!(rule.source, RuleSource::Default | RuleSource::Preset)
                })
        });
    if !asks_plainly {
        return false;
    }
    let whole = call
        .input
        .get("command")
        .and_then(Value::as_str)
        .map(crate::model::vocab::collapse_whitespace)
        .unwrap_or_default();
    let host_allows_part = d.requests.iter().any(|r| {
        policy
            .host_allows(r.request.capability, &r.request.subject)
            .is_some()
    });
    let host_allows_whole = Capability::ALL
        .iter()
        .filter(|c| c.has_command_subject())
        .any(|c| policy.host_allows(*c, &whole).is_some());
    !host_allows_part && !host_allows_whole
}

/// What Claude Code is told when its own dialog answers: no decision, and our reasons
/// as the hook's `systemMessage` (the one text of a hook Claude shows the person when
/// the hook gives no decision).
pub fn render_native_dialog(d: &CallDecision) -> Rendered {
    let v = serde_json::json!({ "systemMessage": super::ask_text(d) });
    Rendered {
        stdout: format!("{v}\n"),
        exit: 0,
    }
}
