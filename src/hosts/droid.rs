//! Factory Droid's PreToolUse hook: its tool table; its input and output are Claude
//! Code's, so both are read and written with the shared functions.
//!
//! Input (checked on Droid 0.215.0 with a hook that logs its stdin): `session_id`,
//! `transcript_path`, `cwd`, `permission_mode` (`auto-high` in a `droid exec --auto
//! high` run), `hook_event_name`, `tool_name`, `tool_input`. There is no id of the
//! call: its `PostToolUse` is the same object plus `tool_response`. The project root
//! is `FACTORY_PROJECT_DIR` (read by the caller), else `cwd`.
//!
//! Output, exit 0: Claude Code's `hookSpecificOutput` (`claude::render`). A deny
//! blocks the tool and the model reads `Error: <reason>`; an allow runs it even where
//! Droid's own autonomy level would have stopped it. An ask is **not** a question in
//! `droid exec`: the call goes to Droid's own autonomy check, which weighs the risk
//! level the model itself declared (`riskLevel: "low"` ran under the default autonomy),
//! so the hook is non-interactive by default (`Host::interactive_by_default`) and an
//! ask is our deny. Exit 2 blocks with stderr as the reason; exit 1 and stdout that is
//! not JSON let the tool run, which is why every failure of ours is rendered as a deny.
//! `updatedInput` was not checked: no sandbox runner (`runner_for`), so a call we
//! would contain asks (denies, headless) instead.

use serde_json::{Map, Value};

use super::{HookCall, HookError, Host, Mapped, Rendered, pick};
use crate::policy::decide::CallDecision;

/// Droid tools with no local effect: its plan, the tool-schema search, a skill's
/// text, the result of a task it started, and leaving its spec mode.
pub const NO_EFFECT_TOOLS: &[&str] = &[
    "TodoWrite",
    "ToolSearch",
    "Skill",
    "TaskOutput",
    "ExitSpecMode",
];

pub fn parse(obj: &Map<String, Value>) -> Result<HookCall, HookError> {
    super::parse_common(Host::Droid, obj, map)
}

/// Droid's tool name and input to ours (the tool schemas 0.215.0 sends the model).
pub fn map(name: &str, input: &Value) -> Mapped {
    if NO_EFFECT_TOOLS.contains(&name) {
        return Mapped::NoEffect;
    }
    let tool = super::to_tool;
    match name {
        // `summary`, `riskLevel` and `riskLevelReason` are the model's own words about
        // the command: not read.
        "Execute" => tool(
            "bash",
            pick(
                input,
                &[("command", "command"), ("background", "fireAndForget")],
            ),
        ),
        "Read" => tool("read", pick(input, &[("path", "file_path")])),
        "LS" => tool("list", pick(input, &[("path", "directory_path")])),
        "Create" => tool(
            "write",
            pick(input, &[("path", "file_path"), ("content", "content")]),
        ),
        "Edit" => tool(
            "edit",
            pick(
                input,
                &[
                    ("path", "file_path"),
                    ("oldString", "old_str"),
                    ("newString", "new_str"),
                    ("replaceAll", "change_all"),
                ],
            ),
        ),
        "Grep" => tool(
            "grep",
            pick(input, &[("pattern", "pattern"), ("path", "path")]),
        ),
        "Glob" => glob(input),
        "FetchUrl" => tool("webfetch", pick(input, &[("url", "url")])),
        "WebSearch" => Mapped::Unjudged {
            reason: "`WebSearch` sends a query to the web search provider; no rule covers it yet"
                .to_string(),
        },
        // Whether a sub-agent's own calls reach this hook was not checked.
        "Task" => Mapped::Unjudged {
            reason: "`Task` starts a sub-agent; khaelor-perm has not checked that its calls come through this hook".to_string(),
        },
        other => Mapped::Unjudged {
            reason: format!("khaelor-perm does not know the Factory Droid tool `{other}`"),
        },
    }
}

/// `Glob`: `patterns` is a list and `folder` the directory; we judge one pattern per
/// call, so a list of more asks.
fn glob(input: &Value) -> Mapped {
    let pattern = match input.get("patterns") {
        Some(Value::String(p)) => p.clone(),
        Some(Value::Array(a)) if a.len() == 1 => match a.first() {
            Some(Value::String(p)) => p.clone(),
            _ => {
                return Mapped::Unjudged {
                    reason: "`Glob` names a pattern that is not a string".to_string(),
                };
            }
        },
        _ => {
            return Mapped::Unjudged {
                reason: "`Glob` gives several patterns (or none) in one call; khaelor-perm judges one per call".to_string(),
            };
        }
    };
    let mut picked = match pick(input, &[("path", "folder")]) {
        Ok(v) => v,
        Err(refused) => return refused,
    };
    if let Some(o) = picked.as_object_mut() {
        o.insert("pattern".to_string(), Value::String(pattern));
    }
    Mapped::Tool {
        tool: "glob",
        input: picked,
    }
}

/// Droid's answer for `d`: Claude Code's form, which Droid reads the same way. A
/// contained call asks.
pub fn render(d: &CallDecision) -> Rendered {
    super::claude::render(d)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reads_what_droid_sends() {
        let raw = br#"{"session_id":"a78fd5df-95f8-463f-969c-c07b85e102eb","transcript_path":"/h/.factory/sessions/p/a.jsonl","cwd":"/p","permission_mode":"auto-high","hook_event_name":"PreToolUse","tool_name":"Execute","tool_input":{"summary":"Write the marker file now","command":"echo hi > /p/m","riskLevelReason":"x","riskLevel":"low"}}"#;
        let call = super::super::parse(Host::Droid, raw).unwrap();
        assert_eq!(call.session_id, "a78fd5df-95f8-463f-969c-c07b85e102eb");
        assert!(call.call_id.starts_with("droid-"), "{}", call.call_id);
        assert_eq!(call.permission_mode.as_deref(), Some("auto-high"));
        assert_eq!(
            call.mapped,
            Mapped::Tool {
                tool: "bash",
                input: json!({"command": "echo hi > /p/m"})
            }
        );
    }
}
