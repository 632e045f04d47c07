//! OpenCode through our plugin (`hosts/opencode/khaelor-perm.js`): OpenCode has no
//! deciding hook, so the plugin's `tool.execute.before(input, output)` pipes
//! `{"tool", "sessionID", "callID", "args", "cwd", "root"}` to `khaelor-perm hook
//! opencode` and throws on a deny (the message becomes the tool result), and on an ask
//! unless a human is attached. Output: `{"decision":"allow|ask|deny","reason":"…"}`.

use serde_json::{Map, Value};

use super::{HookCall, HookError, Host, Mapped, Rendered, pick, str_field};
use crate::policy::decide::CallDecision;

/// OpenCode tools with no local effect.
pub const NO_EFFECT_TOOLS: &[&str] = &["todowrite", "todoread", "task", "question", "skill"];

pub fn parse(obj: &Map<String, Value>) -> Result<HookCall, HookError> {
    let tool = str_field(obj, "tool").ok_or(HookError::Missing("tool"))?;
    let input = obj
        .get("args")
        .cloned()
        .unwrap_or(Value::Object(Map::new()));
    Ok(HookCall {
        host: Host::Opencode,
        session_id: super::session_id(Host::Opencode, str_field(obj, "sessionID")),
        call_id: super::call_id(Host::Opencode, str_field(obj, "callID")),
        turn_id: None,
        cwd: str_field(obj, "cwd").map(str::to_string),
        project_root: str_field(obj, "root").map(str::to_string),
        host_tool: tool.to_string(),
        permission_mode: None,
        mapped: map(tool, &input),
        input,
    })
}

/// OpenCode's tool name and arguments to ours.
pub fn map(name: &str, input: &Value) -> Mapped {
    if NO_EFFECT_TOOLS.contains(&name) {
        return Mapped::NoEffect;
    }
    let tool = super::to_tool;
    match name {
        "bash" => tool(
            "bash",
            pick(input, &[("command", "command"), ("cwd", "workdir")]),
        ),
        "read" => tool("read", pick(input, &[("path", "filePath")])),
        "write" => tool(
            "write",
            pick(input, &[("path", "filePath"), ("content", "content")]),
        ),
        "edit" => tool(
            "edit",
            pick(
                input,
                &[
                    ("path", "filePath"),
                    ("oldString", "oldString"),
                    ("newString", "newString"),
                    ("replaceAll", "replaceAll"),
                ],
            ),
        ),
        "glob" => tool(
            "glob",
            pick(input, &[("pattern", "pattern"), ("path", "path")]),
        ),
        "grep" => tool(
            "grep",
            pick(input, &[("pattern", "pattern"), ("path", "path")]),
        ),
        "list" => tool("list", pick(input, &[("path", "path")])),
        "patch" | "apply_patch" => tool("apply_patch", pick(input, &[("patch", "patchText")])),
        "webfetch" => tool("webfetch", pick(input, &[("url", "url")])),
        // OpenCode names MCP tools `<server>_<tool>`, which cannot be told from a
        // built-in tool by name alone: they ask as unknown tools (the book: docs/src/hosts/opencode.md).
        other => Mapped::Unjudged {
            reason: format!("khaelor-perm does not know the OpenCode tool `{other}`"),
        },
    }
}

/// The answer the plugin reads.
/// The plugin's answer for a contained call: `{"decision":"contain","command":…}`; the
/// plugin puts the command in the tool's `args.command`. Anything else as `render`.
pub fn render_contained(d: &CallDecision) -> Rendered {
    match (&d.decision, &d.containment) {
        (crate::policy::rules::Action::Contain, Some(c)) => {
            let v = serde_json::json!({
                "decision": "contain",
                "command": c.command,
                "reason": super::contain_text(d),
            });
            Rendered {
                stdout: format!("{v}\n"),
                exit: 0,
            }
        }
        _ => render(d),
    }
}

pub fn render(d: &CallDecision) -> Rendered {
    Rendered {
        stdout: super::decision_reason_json(d),
        exit: 0,
    }
}
