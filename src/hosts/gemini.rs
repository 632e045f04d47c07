//! Gemini CLI's BeforeTool hook: its input, its tool table, its output.
//!
//! Input: `session_id`, `cwd`, `hook_event_name`, `tool_name`, `tool_input`; MCP tools
//! are `mcp_<server>_<tool>`. Output: `{"decision":"deny","reason":"…"}` blocks and the
//! reason reaches the model; `{"decision":"allow"}` never overrides Gemini's own policy;
//! `{"decision":"ask"}` forces a confirmation and hangs a headless run, so the hook
//! answers ask only when told the session is interactive (`Host::interactive_by_default`).
//! A contained call is `{"decision":"allow"}` with `hookSpecificOutput.tool_input`, the
//! whole tool input with `command` rewritten: Gemini CLI 0.61.0 builds the tool again
//! from it before its own policy check (`evaluateBeforeToolHook`, then `checkPolicy`
//! on the rewritten command), so its own rules and prompts still apply.

use serde_json::{Map, Value};

use super::{HookCall, HookError, Host, Mapped, Rendered, mcp, pick};
use crate::policy::decide::CallDecision;
use crate::policy::rules::Action;

/// Gemini CLI tools with no local effect.
pub const NO_EFFECT_TOOLS: &[&str] = &["write_todos", "ask_user", "activate_skill"];

pub fn parse(obj: &Map<String, Value>) -> Result<HookCall, HookError> {
    super::parse_common(Host::Gemini, obj, map)
}

/// Gemini CLI's tool name and input to ours.
pub fn map(name: &str, input: &Value) -> Mapped {
    if let Some(rest) = name.strip_prefix("mcp_") {
        // `mcp_<server>_<tool>` cannot say where a server name with `_` ends; the first
        // `_` is taken, so rules for such servers name the split this makes.
        if let Some((server, tool)) = rest.split_once('_')
            && !server.is_empty()
            && !tool.is_empty()
        {
            return mcp(server, tool, input);
        }
    }
    if NO_EFFECT_TOOLS.contains(&name) {
        return Mapped::NoEffect;
    }
    let tool = super::to_tool;
    match name {
        "run_shell_command" => tool(
            "bash",
            pick(
                input,
                &[("command", "command"), ("cwd", "dir_path"), ("cwd", "directory"), ("background", "is_background")],
            ),
        ),
        "read_file" => tool("read", pick(input, &[("path", "file_path"), ("path", "absolute_path")])),
        "write_file" => tool(
            "write",
            pick(input, &[("path", "file_path"), ("content", "content")]),
        ),
        "replace" => tool(
            "edit",
            pick(
                input,
                &[
                    ("path", "file_path"),
                    ("oldString", "old_string"),
                    ("newString", "new_string"),
                ],
            ),
        ),
        "glob" => tool(
            "glob",
            pick(input, &[("pattern", "pattern"), ("path", "dir_path"), ("path", "path")]),
        ),
        "grep_search" | "search_file_content" => tool(
            "grep",
            pick(input, &[("pattern", "pattern"), ("path", "dir_path"), ("path", "path")]),
        ),
        "list_directory" => tool("list", pick(input, &[("path", "dir_path"), ("path", "path")])),
        "web_fetch" => web_fetch(input),
        // Many paths and globs in one call: no single subject to decide on.
        "read_many_files" => Mapped::Unjudged {
            reason: "`read_many_files` reads many paths in one call; khaelor-perm judges one path per call".to_string(),
        },
        other => Mapped::Unjudged {
            reason: format!("khaelor-perm does not know the Gemini CLI tool `{other}`"),
        },
    }
}

/// `web_fetch` takes a prompt with the URLs in it: exactly one URL is a fetch of it;
/// none or several cannot be one subject.
fn web_fetch(input: &Value) -> Mapped {
    let prompt = input
        .get("prompt")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let urls: Vec<&str> = prompt
        .split_whitespace()
        .filter(|w| w.starts_with("http://") || w.starts_with("https://"))
        .collect();
    match urls.as_slice() {
        [one] => Mapped::Tool {
            tool: "webfetch",
            input: serde_json::json!({ "url": one.trim_end_matches(['.', ',', ')', '"', '\'']) }),
        },
        _ => Mapped::Unjudged {
            reason: format!(
                "`web_fetch` names {} URLs; khaelor-perm judges one URL per call",
                urls.len()
            ),
        },
    }
}

/// Gemini CLI's answer for `d`. An ask also carries our reasons as `systemMessage`:
/// Gemini CLI 0.61.0 shows a BeforeTool hook's `systemMessage` in the confirmation
/// dialog its `ask` forces (`resolveConfirmation`), and never shows the `reason` there.
pub fn render(d: &CallDecision) -> Rendered {
    let stdout = match d.decision {
        Action::Ask | Action::Contain => {
            let v = serde_json::json!({
                "decision": "ask",
                "reason": super::ask_text(d),
                "systemMessage": super::ask_text(d),
            });
            format!("{v}\n")
        }
        Action::Allow | Action::Deny => super::decision_reason_json(d),
    };
    Rendered { stdout, exit: 0 }
}

/// Gemini CLI's answer for a contained call: allow, with `hookSpecificOutput.tool_input`
/// the tool input whose `command` is the rewritten one (Gemini rebuilds the tool from
/// this object alone, so every other field is kept). Anything else as `render`.
pub fn render_contained(d: &CallDecision, input: &Value) -> Rendered {
    let Some(updated) = super::contained_input(d, input) else {
        return render(d);
    };
    let v = serde_json::json!({
        "decision": "allow",
        "reason": super::contain_text(d),
        "hookSpecificOutput": {
            "hookEventName": "BeforeTool",
            "tool_input": updated,
        },
    });
    Rendered {
        stdout: format!("{v}\n"),
        exit: 0,
    }
}
