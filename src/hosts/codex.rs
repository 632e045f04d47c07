//! Codex CLI's PreToolUse hook: its input, its tool table, its output.
//!
//! Input as Claude Code's plus `turn_id` and `model`; `Bash` and `apply_patch` both
//! carry `tool_input.command` (for `apply_patch` the raw patch text); MCP tools are
//! `mcp__<server>__<tool>`. Codex honours deny (`hookSpecificOutput` with
//! `permissionDecision: "deny"`, and its output schema rejects unknown fields) and
//! `permissionDecision: "allow"` only together with `updatedInput`, which replaces the
//! tool input (checked on Codex 0.171.0, `codex-rs/hooks/src/engine/output_parser.rs`:
//! a bare "allow" or an "ask" is reported as a failed hook and the tool runs). So a
//! contained call is that allow with the rewritten command; allow prints nothing, an
//! ask prints nothing (Codex's own approval applies) unless the hook was told nobody
//! can answer, which turns the ask into a deny before it gets here. The rewritten
//! command still passes Codex's own approval and sandbox.

use serde_json::{Map, Value};

use super::{HookCall, HookError, Host, Mapped, Rendered, mcp, pick, split_double_underscore};
use crate::policy::decide::CallDecision;
use crate::policy::rules::Action;

/// Codex tools with no local effect.
pub const NO_EFFECT_TOOLS: &[&str] = &["update_plan", "view_image_placeholder"];

pub fn parse(obj: &Map<String, Value>) -> Result<HookCall, HookError> {
    super::parse_common(Host::Codex, obj, map)
}

/// Codex's tool name and input to ours.
pub fn map(name: &str, input: &Value) -> Mapped {
    if let Some((server, tool)) = split_double_underscore(name) {
        return mcp(server, tool, input);
    }
    if NO_EFFECT_TOOLS.contains(&name) {
        return Mapped::NoEffect;
    }
    let tool = super::to_tool;
    match name {
        // `workdir` is where Codex runs the command when the model names one. The
        // field Codex executes comes first: `cmd` for `exec_command`, `command` for the
        // others; an input carrying both with different values is refused (`pick`).
        "Bash" | "shell" | "exec_command" | "local_shell" => {
            let keys: &[(&str, &str)] = if name == "exec_command" {
                &[
                    ("command", "cmd"),
                    ("command", "command"),
                    ("cwd", "workdir"),
                ]
            } else {
                &[
                    ("command", "command"),
                    ("command", "cmd"),
                    ("cwd", "workdir"),
                ]
            };
            let mut v = match pick(input, keys) {
                Ok(v) => v,
                Err(refused) => return refused,
            };
            // Older shapes give the command as argv; joined, it is read like a line.
            if let Some(o) = v.as_object_mut()
                && let Some(Value::Array(argv)) = o.get("command").cloned()
            {
                let words: Vec<String> = argv
                    .iter()
                    .map(|w| {
                        w.as_str()
                            .map(str::to_string)
                            .unwrap_or_else(|| w.to_string())
                    })
                    .collect();
                o.insert(
                    "command".into(),
                    Value::String(crate::shell::join_command(&words)),
                );
            }
            tool("bash", Ok(v))
        }
        "apply_patch" => tool(
            "apply_patch",
            pick(
                input,
                &[("patch", "command"), ("patch", "patch"), ("patch", "input")],
            ),
        ),
        other => Mapped::Unjudged {
            reason: format!("khaelor-perm does not know the Codex tool `{other}`"),
        },
    }
}

/// Codex's answer for `d`: the deny form, or nothing.
pub fn render(d: &CallDecision) -> Rendered {
    match d.decision {
        Action::Deny => Rendered {
            stdout: format!(
                "{}\n",
                super::claude::hook_specific("deny", &super::deny_text(d))
            ),
            exit: 0,
        },
        // A contained call without the input to rewrite (`render_contained` has it):
        // saying nothing leaves Codex's own approval and sandbox.
        Action::Allow | Action::Contain | Action::Ask => Rendered {
            stdout: String::new(),
            exit: 0,
        },
    }
}

/// Codex's answer for a contained call: `permissionDecision: "allow"` with
/// `updatedInput`, the tool input whose `command` is the rewritten one (Codex puts it
/// in the shell tool's command argument and keeps the others, `workdir` among them).
/// Anything else renders as `render` does.
pub fn render_contained(d: &CallDecision, input: &Value) -> Rendered {
    match super::contained_input(d, input) {
        Some(updated) => super::claude::allow_with_updated_input(d, updated),
        None => render(d),
    }
}
