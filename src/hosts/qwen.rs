//! Qwen Code's PreToolUse hook: its tool table; its input and output are Claude
//! Code's, so both are read and written with the shared functions.
//!
//! Input (checked on Qwen Code 0.24.4 with a hook that logs its stdin): `session_id`,
//! `transcript_path`, `cwd`, `hook_event_name`, `timestamp`, `permission_mode`
//! (its approval mode: `yolo` in a `--approval-mode yolo` run), `prompt_id`, `tool_name`,
//! `tool_input`, `tool_use_id` (made by Qwen per execution, the same in the
//! `PostToolUse` that follows) and `tool_call_id` (the model's). MCP tools are
//! `mcp__<server>__<tool>`. The project root is `QWEN_PROJECT_DIR` (read by the
//! caller), else `cwd`.
//!
//! Output, exit 0: Claude Code's `hookSpecificOutput` with `permissionDecision` and
//! `permissionDecisionReason` (`claude::render`). A deny blocks the tool and its
//! reason is the tool result the model reads; an ask makes the TUI ask the person
//! again, and in a headless run (`-p`, and background sub-agents) Qwen turns it into a
//! deny with the same reason; an allow lets Qwen go on. Exit 2 blocks too, any other
//! exit status or stdout that is not a JSON object lets the tool run, which is why
//! every failure of ours is rendered as a deny.
//!
//! Where Qwen differs from Claude Code, read from its code (`_executeToolCallBody`)
//! and seen in runs: the hook runs when the tool is about to execute, after Qwen's own
//! approval (its permission rules and approval mode), so an allow never skips a prompt
//! or a deny of Qwen's, and a headless run in the `default` approval mode refuses shell
//! and edit calls before the hook is asked. `updatedInput` is ignored by the PreToolUse
//! of this version (a rewritten command still ran as the original), so there is no
//! sandbox runner for Qwen (`runner_for`): a call we would contain asks instead.

use serde_json::{Map, Value};

use super::{HookCall, HookError, Host, Mapped, Rendered, mcp, pick, split_double_underscore};
use crate::policy::decide::CallDecision;

/// Qwen Code tools with no local effect: a todo list, a question to the user, the
/// plan-mode switches, and a sub-agent whose own tool calls come through this hook
/// (Qwen adds `agent_id` to them).
pub const NO_EFFECT_TOOLS: &[&str] = &[
    "todo_write",
    "ask_user_question",
    "exit_plan_mode",
    "enter_plan_mode",
    "agent",
];

pub fn parse(obj: &Map<String, Value>) -> Result<HookCall, HookError> {
    super::parse_common(Host::Qwen, obj, map)
}

/// Qwen Code's tool name and input to ours (tool ids and parameters of 0.24.4's
/// `ToolNames` and tool schemas).
pub fn map(name: &str, input: &Value) -> Mapped {
    if let Some((server, tool)) = split_double_underscore(name) {
        return mcp(server, tool, input);
    }
    if NO_EFFECT_TOOLS.contains(&name) {
        return Mapped::NoEffect;
    }
    let tool = super::to_tool;
    match name {
        // `directory` is where Qwen runs the command when the model names one.
        "run_shell_command" => tool(
            "bash",
            pick(
                input,
                &[
                    ("command", "command"),
                    ("cwd", "directory"),
                    ("background", "is_background"),
                ],
            ),
        ),
        "read_file" => tool("read", pick(input, &[("path", "file_path")])),
        "write_file" => tool(
            "write",
            pick(input, &[("path", "file_path"), ("content", "content")]),
        ),
        "edit" => tool(
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
        "glob" => tool(
            "glob",
            pick(input, &[("pattern", "pattern"), ("path", "path")]),
        ),
        "grep_search" => tool(
            "grep",
            pick(input, &[("pattern", "pattern"), ("path", "path")]),
        ),
        "list_directory" => tool("list", pick(input, &[("path", "path")])),
        "web_fetch" => tool("webfetch", pick(input, &[("url", "url")])),
        "web_search" => Mapped::Unjudged {
            reason: "`web_search` sends a query to the web search provider; no rule covers it yet"
                .to_string(),
        },
        other => Mapped::Unjudged {
            reason: format!("khaelor-perm does not know the Qwen Code tool `{other}`"),
        },
    }
}

/// Qwen Code's answer for `d`: Claude Code's form, which Qwen reads the same way. A
/// contained call asks (Qwen's PreToolUse does not take a rewritten input).
pub fn render(d: &CallDecision) -> Rendered {
    super::claude::render(d)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reads_what_qwen_sends() {
        let raw = br#"{"session_id":"07dbb5ac-bcb4-4460-a2fc-e8b692864cba","transcript_path":"/h/.qwen/projects/p/chats/x.jsonl","cwd":"/p","hook_event_name":"PreToolUse","timestamp":"2026-12-05T17:13:57.113Z","permission_mode":"yolo","prompt_id":"07dbb5ac########0","tool_name":"run_shell_command","tool_input":{"command":"echo hi > /p/m1","description":"x"},"tool_use_id":"toolu_1796490837108_3viuc72p6","tool_call_id":"call_0"}"#;
        let call = super::super::parse(Host::Qwen, raw).unwrap();
        assert_eq!(call.session_id, "07dbb5ac-bcb4-4460-a2fc-e8b692864cba");
        assert_eq!(call.call_id, "toolu_1796490837108_3viuc72p6");
        assert_eq!(call.cwd.as_deref(), Some("/p"));
        assert_eq!(call.permission_mode.as_deref(), Some("yolo"));
        assert_eq!(
            call.mapped,
            Mapped::Tool {
                tool: "bash",
                input: json!({"command": "echo hi > /p/m1"})
            }
        );
    }
}
