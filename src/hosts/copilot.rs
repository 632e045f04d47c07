//! GitHub Copilot CLI's `preToolUse` hook: its input, its tool table, its output.
//!
//! Input (checked on Copilot CLI 1.0.102 with a hook that logs its stdin):
//! `sessionId`, `timestamp` (milliseconds), `cwd`, `toolName`, `toolArgs` (the tool's
//! arguments as an object). There is no event name and no id of the call: the
//! `postToolUse` that follows a call that ran is the same object plus `toolResult`
//! (`{"resultType": "success"|…, "textResultForLlm": …}`), and a call that did not run
//! gets none. The project root is `COPILOT_PROJECT_DIR` (read by the caller), else
//! `cwd`.
//!
//! Output, exit 0: `{"permissionDecision": "allow|ask|deny",
//! "permissionDecisionReason": "…"}`. A deny blocks the tool and the model reads
//! `Denied by preToolUse hook: <reason>`; an allow runs the tool without Copilot's
//! own approval prompt (as `--allow-all-tools` would); an ask makes the TUI ask the
//! person, and in a headless run (`-p`) Copilot turns it into a deny whose text is
//! `Denied by preToolUse hook (unable to ask user for confirmation): <reason>`. No
//! output leaves the call to Copilot's own approval. Exit 1 or 2 blocks too; stdout
//! that is not JSON, and a hook that outlives its `timeoutSec` (30 s unless set), let
//! the tool run, which is why every failure of ours is rendered as a deny and a
//! waiting hook stays inside the host's timeout.
//!
//! Copilot 1.0.102 documents `modifiedArgs` for a rewritten input but it was not
//! checked here: there is no sandbox runner for Copilot (`runner_for`), so a call we
//! would contain asks instead.

use serde_json::{Map, Value};

use super::{HookCall, HookError, Host, Mapped, Rendered, pick, str_field};
use crate::policy::decide::CallDecision;
use crate::policy::rules::Action;

/// Copilot CLI tools with no local effect: reading or stopping the output of a shell
/// command it started, its own session database (its todo list), a skill's text, its
/// documentation, and sub-agents, whose own tool calls come through this hook.
pub const NO_EFFECT_TOOLS: &[&str] = &[
    "read_bash",
    "list_bash",
    "stop_bash",
    "sql",
    "skill",
    "fetch_copilot_cli_documentation",
    "task",
    "read_agent",
    "list_agents",
    "write_agent",
];

pub fn parse(obj: &Map<String, Value>) -> Result<HookCall, HookError> {
    let tool = str_field(obj, "toolName").ok_or(HookError::Missing("toolName"))?;
    let input = tool_args(obj);
    Ok(HookCall {
        host: Host::Copilot,
        session_id: super::session_id(Host::Copilot, str_field(obj, "sessionId")),
        // Copilot names no call: the log gets a fresh id.
        call_id: super::fresh_call_id(Host::Copilot),
        turn_id: None,
        cwd: str_field(obj, "cwd").map(str::to_string),
        project_root: None,
        host_tool: tool.to_string(),
        permission_mode: None,
        mapped: map(tool, &input),
        input,
    })
}

/// `toolArgs` as an object. Copilot 1.0.102 sends an object; its cloud agent's
/// documented form is a JSON string, read the same way. Anything else is kept as it
/// is, and the mapping refuses it.
pub fn tool_args(obj: &Map<String, Value>) -> Value {
    match obj.get("toolArgs") {
        None | Some(Value::Null) => Value::Object(Map::new()),
        Some(Value::String(s)) => serde_json::from_str::<Value>(s)
            .ok()
            .filter(Value::is_object)
            .unwrap_or_else(|| Value::String(s.clone())),
        Some(v) => v.clone(),
    }
}

/// Whether a hook input is Copilot's `postToolUse` (the call ran): it carries the
/// tool's result.
pub fn is_post_tool_use(v: &Value) -> bool {
    v.get("toolResult").is_some_and(Value::is_object)
}

/// Copilot CLI's tool name and arguments to ours (the tool schemas 1.0.102 sends the
/// model).
pub fn map(name: &str, input: &Value) -> Mapped {
    if NO_EFFECT_TOOLS.contains(&name) {
        return Mapped::NoEffect;
    }
    if !input.is_object() {
        return Mapped::Unjudged {
            reason: format!("the arguments of this `{name}` call are not a JSON object"),
        };
    }
    let tool = super::to_tool;
    match name {
        // Each command starts in the session's working directory (`cd` does not
        // carry over between calls).
        "bash" => tool("bash", pick(input, &[("command", "command")])),
        // `view` reads a file or lists a directory.
        "view" => tool("read", pick(input, &[("path", "path")])),
        "create" => tool(
            "write",
            pick(input, &[("path", "path"), ("content", "file_text")]),
        ),
        "edit" => tool(
            "edit",
            pick(
                input,
                &[
                    ("path", "path"),
                    ("oldString", "old_str"),
                    ("newString", "new_str"),
                ],
            ),
        ),
        "glob" => search("glob", input),
        "grep" => search("grep", input),
        "web_fetch" => tool("webfetch", pick(input, &[("url", "url")])),
        // Text typed into a running shell: a command we do not see whole.
        "write_bash" => Mapped::Unjudged {
            reason: "`write_bash` types input into a running shell command; khaelor-perm cannot read what it will do".to_string(),
        },
        "session_store_sql" => Mapped::Unjudged {
            reason: "`session_store_sql` queries the session history, by default in GitHub's cloud store; no rule covers it yet".to_string(),
        },
        other => Mapped::Unjudged {
            reason: format!("khaelor-perm does not know the GitHub Copilot CLI tool `{other}`"),
        },
    }
}

/// `glob` and `grep`: `paths` is one directory or a list of them (the cwd when
/// absent); we judge one directory per call, so a list of more asks.
fn search(ours: &'static str, input: &Value) -> Mapped {
    let mut picked = match pick(input, &[("pattern", "pattern")]) {
        Ok(v) => v,
        Err(refused) => return refused,
    };
    let path = match input.get("paths") {
        None | Some(Value::Null) => None,
        Some(Value::String(p)) => Some(p.clone()),
        Some(Value::Array(a)) if a.is_empty() => None,
        Some(Value::Array(a)) if a.len() == 1 => match a.first() {
            Some(Value::String(p)) => Some(p.clone()),
            _ => {
                return Mapped::Unjudged {
                    reason: format!("`{ours}` names a path that is not a string"),
                };
            }
        },
        Some(_) => {
            return Mapped::Unjudged {
                reason: format!(
                    "`{ours}` searches several directories in one call; khaelor-perm judges one per call"
                ),
            };
        }
    };
    if let (Some(p), Some(o)) = (path, picked.as_object_mut()) {
        o.insert("path".to_string(), Value::String(p));
    }
    Mapped::Tool {
        tool: ours,
        input: picked,
    }
}

/// Copilot's answer for `d`. A contained call asks (no rewritten input is sent).
pub fn render(d: &CallDecision) -> Rendered {
    let (decision, reason) = match d.decision {
        Action::Allow => ("allow", super::allow_text(d)),
        Action::Contain | Action::Ask => ("ask", super::ask_text(d)),
        Action::Deny => ("deny", super::deny_text(d)),
    };
    decision_json(decision, &reason)
}

/// `{"permissionDecision": …, "permissionDecisionReason": …}` on one line.
pub fn decision_json(decision: &str, reason: &str) -> Rendered {
    let v = serde_json::json!({
        "permissionDecision": decision,
        "permissionDecisionReason": reason,
    });
    Rendered {
        stdout: format!("{v}\n"),
        exit: 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reads_what_copilot_sends() {
        let raw = br#"{"sessionId":"69c49400-d138-431f-9842-a96ce656fbd8","timestamp":1796499438482,"cwd":"/p","toolName":"bash","toolArgs":{"command":"echo hi > /p/m","description":"x"}}"#;
        let call = super::super::parse(Host::Copilot, raw).unwrap();
        assert_eq!(call.session_id, "69c49400-d138-431f-9842-a96ce656fbd8");
        assert!(call.call_id.starts_with("copilot-"), "{}", call.call_id);
        assert_eq!(call.cwd.as_deref(), Some("/p"));
        assert_eq!(
            call.mapped,
            Mapped::Tool {
                tool: "bash",
                input: json!({"command": "echo hi > /p/m"})
            }
        );
        // The documented string form reads the same.
        let raw =
            br#"{"sessionId":"s","cwd":"/p","toolName":"bash","toolArgs":"{\"command\":\"ls\"}"}"#;
        let call = super::super::parse(Host::Copilot, raw).unwrap();
        assert_eq!(
            call.mapped,
            Mapped::Tool {
                tool: "bash",
                input: json!({"command": "ls"})
            }
        );
        // A string that is not an object is refused by the mapping, not run.
        let raw = br#"{"sessionId":"s","cwd":"/p","toolName":"bash","toolArgs":"rm -rf /"}"#;
        let call = super::super::parse(Host::Copilot, raw).unwrap();
        assert!(!matches!(call.mapped, Mapped::Tool { .. }), "{call:?}");
        assert!(matches!(
            super::super::parse(Host::Copilot, br#"{"sessionId":"s"}"#),
            Err(HookError::Missing("toolName"))
        ));
        let post: Value = serde_json::from_slice(br#"{"sessionId":"s","toolName":"bash","toolArgs":{},"toolResult":{"resultType":"success"}}"#).unwrap();
        assert!(is_post_tool_use(&post));
        let pre: Value =
            serde_json::from_slice(br#"{"sessionId":"s","toolName":"bash","toolArgs":{}}"#)
                .unwrap();
        assert!(!is_post_tool_use(&pre));
    }

    #[test]
    fn answers_in_copilots_form() {
        let r = decision_json("deny", "no");
        assert_eq!(r.exit, 0);
        let v: Value = serde_json::from_str(&r.stdout).unwrap();
        assert_eq!(
            v,
            json!({"permissionDecision": "deny", "permissionDecisionReason": "no"})
        );
    }
}
