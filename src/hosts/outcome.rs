//! What a host's post-call event says about a call we answered `ask`: it ran (the
//! person approved it in the host), the host refused it, or the turn ended with it
//! still waiting. The one reading every path shares: the one-shot `hook` records it in
//! the local log, the service's `POST /v1/hooks/{host}` in the session it holds.
//!
//! Events: Claude Code, Codex and Qwen Code `PostToolUse` (Claude's and Qwen's
//! `PostToolUseFailure`: it ran and failed), Gemini CLI `AfterTool`, GitHub Copilot
//! CLI `postToolUse` and Factory Droid `PostToolUse` (named by tool and input, as
//! Gemini's), OpenCode's `tool.execute.after` (our plugin's
//! `event`), our Cline CLI plugin's `afterTool` (`hookName: tool_result`), Claude's
//! `PermissionDenied`, and Claude's `Stop`. Only a call still pending
//! is resolved; anything else (a call we allowed, an unknown id) leaves no event.

use serde_json::Value;

use super::{Host, session_id};
use crate::session::{ApprovedBy, DeniedBy, EventKind, valid_id};

/// A post-call event of a host, read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// The call ran (Claude Code and Codex `PostToolUse`, Claude `PostToolUseFailure`,
    /// OpenCode's `tool.execute.after`).
    Ran { session: String, call: String },
    /// A call ran that the host names only by its tool and input (Gemini CLI's
    /// `AfterTool` carries no id of the call): see `outcome_events`.
    RanUnnamed {
        session: String,
        tool: String,
        input: Value,
    },
    /// The host refused the call (Claude Code's `PermissionDenied`).
    Refused { session: String, call: String },
    /// The turn ended (Claude Code's `Stop`): a call still waiting never ran.
    TurnEnded { session: String },
}

impl Outcome {
    /// The session (a valid log id) the event belongs to.
    pub fn session(&self) -> &str {
        match self {
            Outcome::Ran { session, .. }
            | Outcome::RanUnnamed { session, .. }
            | Outcome::Refused { session, .. }
            | Outcome::TurnEnded { session } => session,
        }
    }
}

/// The post-call event in a hook input of `host`, if it is one (`hook_event_name`;
/// OpenCode's plugin sends `event`). `None` for a pre-call input, or one that names no
/// valid call id where the host sends one.
pub fn post_call_event(host: Host, raw: &[u8]) -> Option<Outcome> {
    // Too large to be read is `hosts::parse`'s to refuse.
    if raw.len() > super::MAX_HOOK_INPUT_BYTES {
        return None;
    }
    let v: Value = serde_json::from_slice(raw).ok()?;
    let session = hosts_session(host, &v);
    match host {
        // Qwen Code's `PostToolUse` carries the `tool_use_id` of its `PreToolUse`.
        Host::Claude | Host::Codex | Host::Qwen => {}
        Host::Gemini => {
            return (v.get("hook_event_name")?.as_str()? == "AfterTool").then(|| {
                Outcome::RanUnnamed {
                    session,
                    tool: v
                        .get("tool_name")
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_string(),
                    input: v
                        .get("tool_input")
                        .cloned()
                        .unwrap_or_else(|| serde_json::json!({})),
                }
            });
        }
        // Factory Droid's `PostToolUse` names no call either.
        Host::Droid => {
            return (v.get("hook_event_name")?.as_str()? == "PostToolUse").then(|| {
                Outcome::RanUnnamed {
                    session,
                    tool: v
                        .get("tool_name")
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_string(),
                    input: v
                        .get("tool_input")
                        .cloned()
                        .unwrap_or_else(|| serde_json::json!({})),
                }
            });
        }
        // Copilot CLI's `postToolUse` is its pre-tool input plus `toolResult`, with no
        // id of the call.
        Host::Copilot => {
            let obj = v.as_object()?;
            return super::copilot::is_post_tool_use(&v).then(|| Outcome::RanUnnamed {
                session,
                tool: super::str_field(obj, "toolName")
                    .unwrap_or_default()
                    .to_string(),
                input: super::copilot::tool_args(obj),
            });
        }
        // Our Cline plugin's `afterTool` sends the call's id.
        Host::Cline => {
            if !super::cline::is_tool_result(&v) {
                return None;
            }
            return Some(Outcome::Ran {
                session,
                call: v
                    .get("tool_call")?
                    .get("id")
                    .and_then(Value::as_str)
                    .filter(|s| valid_id(s))?
                    .to_string(),
            });
        }
        Host::Opencode => {
            if v.get("event")?.as_str()? != "tool.execute.after" {
                return None;
            }
            return Some(Outcome::Ran {
                session,
                call: v
                    .get("callID")
                    .and_then(Value::as_str)
                    .filter(|s| valid_id(s))?
                    .to_string(),
            });
        }
    }
    let event = v.get("hook_event_name")?.as_str()?;
    let call = || {
        v.get("tool_use_id")
            .and_then(Value::as_str)
            .filter(|s| valid_id(s))
            .map(str::to_string)
    };
    match event {
        "PostToolUse" | "PostToolUseFailure" => Some(Outcome::Ran {
            session,
            call: call()?,
        }),
        "PermissionDenied" => Some(Outcome::Refused {
            session,
            call: call()?,
        }),
        "Stop" if host == Host::Claude => Some(Outcome::TurnEnded { session }),
        _ => None,
    }
}

fn hosts_session(host: Host, v: &Value) -> String {
    let key = match host {
        Host::Opencode => "sessionID",
        Host::Copilot => "sessionId",
        Host::Cline => "taskId",
        _ => "session_id",
    };
    session_id(host, v.get(key).and_then(Value::as_str))
}

/// Whether a recorded call's input (`{"hostTool", "hostInput"}`, as `hosts::events`
/// records it) is exactly `tool` with `input`.
pub fn same_host_call(recorded: &Value, tool: &str, input: &Value) -> bool {
    recorded.get("hostTool").and_then(Value::as_str) == Some(tool)
        && recorded.get("hostInput") == Some(input)
}

/// The events `outcome` leaves in its session, whose calls still waiting for an answer
/// are `pending` (oldest first). `unnamed(tool, input)` finds the call a `RanUnnamed`
/// event is about: the oldest pending call whose host tool and input are exactly those
/// (only a call identical in session, tool and input can be taken for the one that ran,
/// so whichever of two identical pending calls is marked, the log says the same thing,
/// and oldest first keeps one event per run); it is asked only when a call is pending.
pub fn outcome_events<E>(
    host: Host,
    outcome: &Outcome,
    pending: &[String],
    unnamed: impl FnOnce(&str, &Value) -> Result<Option<String>, E>,
) -> Result<Vec<EventKind>, E> {
    let is_pending = |c: &str| pending.iter().any(|p| p == c);
    let refused = |call: &str, why: &str| {
        vec![
            EventKind::PermissionDenied {
                call_id: call.to_string(),
                by: DeniedBy::Host,
                decisions: None,
                feedback: Some(why.to_string()),
                denied_with: None,
            },
            EventKind::ToolFailed {
                call_id: call.to_string(),
                message: format!("The user declined this call in {host}."),
            },
        ]
    };
    let approved = |call: &str| EventKind::ToolApproved {
        call_id: call.to_string(),
        by: ApprovedBy::Host,
        decisions: Value::Array(Vec::new()),
        resolved_by: None,
        contained: None,
    };
    Ok(match outcome {
        Outcome::Ran { call, .. } if is_pending(call) => vec![approved(call)],
        Outcome::RanUnnamed { tool, input, .. } if !pending.is_empty() => unnamed(tool, input)?
            .filter(|c| is_pending(c))
            .map(|c| vec![approved(&c)])
            .unwrap_or_default(),
        Outcome::Refused { call, .. } if is_pending(call) => {
            refused(call, "the host refused the call")
        }
        Outcome::TurnEnded { .. } => pending
            .iter()
            .flat_map(|c| refused(c, "the turn ended and the call never ran"))
            .collect(),
        _ => Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(host: Host, v: Value) -> Option<Outcome> {
        post_call_event(host, v.to_string().as_bytes())
    }

    #[test]
    fn each_hosts_post_call_event_is_read() {
        let ran = |s: &str, c: &str| {
            Some(Outcome::Ran {
                session: s.to_string(),
                call: c.to_string(),
            })
        };
        assert_eq!(
            read(
                Host::Claude,
                serde_json::json!({"hook_event_name": "PostToolUse", "session_id": "s", "tool_use_id": "t1"})
            ),
            ran("s", "t1")
        );
        assert_eq!(
            read(
                Host::Codex,
                serde_json::json!({"hook_event_name": "PostToolUse", "session_id": "s", "tool_use_id": "t2"})
            ),
            ran("s", "t2")
        );
        assert_eq!(
            read(
                Host::Qwen,
                serde_json::json!({"hook_event_name": "PostToolUseFailure", "session_id": "q", "tool_use_id": "toolu_1"})
            ),
            ran("q", "toolu_1")
        );
        assert_eq!(
            read(
                Host::Opencode,
                serde_json::json!({"event": "tool.execute.after", "sessionID": "o", "callID": "c"})
            ),
            ran("o", "c")
        );
        assert_eq!(
            read(
                Host::Claude,
                serde_json::json!({"hook_event_name": "PermissionDenied", "session_id": "s", "tool_use_id": "t1"})
            ),
            Some(Outcome::Refused {
                session: "s".into(),
                call: "t1".into()
            })
        );
        assert_eq!(
            read(
                Host::Gemini,
                serde_json::json!({"hook_event_name": "AfterTool", "session_id": "g",
                    "tool_name": "run_shell_command", "tool_input": {"command": "ls"}})
            ),
            Some(Outcome::RanUnnamed {
                session: "g".into(),
                tool: "run_shell_command".into(),
                input: serde_json::json!({"command": "ls"})
            })
        );
        assert_eq!(
            read(
                Host::Copilot,
                serde_json::json!({"sessionId": "c", "timestamp": 1, "cwd": "/p", "toolName": "bash",
                    "toolArgs": {"command": "ls", "description": "x"},
                    "toolResult": {"resultType": "success", "textResultForLlm": ""}})
            ),
            Some(Outcome::RanUnnamed {
                session: "c".into(),
                tool: "bash".into(),
                input: serde_json::json!({"command": "ls", "description": "x"})
            })
        );
        assert_eq!(
            read(
                Host::Droid,
                serde_json::json!({"hook_event_name": "PostToolUse", "session_id": "d",
                    "tool_name": "Execute", "tool_input": {"command": "ls"}, "tool_response": "ok"})
            ),
            Some(Outcome::RanUnnamed {
                session: "d".into(),
                tool: "Execute".into(),
                input: serde_json::json!({"command": "ls"})
            })
        );
        // Copilot's pre-tool input is not an outcome.
        assert_eq!(
            read(
                Host::Copilot,
                serde_json::json!({"sessionId": "c", "toolName": "bash", "toolArgs": {"command": "ls"}})
            ),
            None
        );
        // Pre-call events, Codex's `Stop`, and an id that is no log id are not outcomes.
        for (host, v) in [
            (
                Host::Claude,
                serde_json::json!({"hook_event_name": "PreToolUse", "session_id": "s", "tool_use_id": "t"}),
            ),
            (
                Host::Codex,
                serde_json::json!({"hook_event_name": "Stop", "session_id": "s"}),
            ),
            (
                Host::Gemini,
                serde_json::json!({"hook_event_name": "BeforeTool", "session_id": "s"}),
            ),
            (
                Host::Claude,
                serde_json::json!({"hook_event_name": "PostToolUse", "session_id": "s", "tool_use_id": "../x"}),
            ),
        ] {
            assert_eq!(read(host, v.clone()), None, "{v}");
        }
    }

    #[test]
    fn only_pending_calls_are_resolved() {
        let pending = vec!["a".to_string(), "b".to_string()];
        let none = |_: &str, _: &Value| Ok::<_, ()>(None);
        let ran = |c: &str| Outcome::Ran {
            session: "s".into(),
            call: c.into(),
        };
        assert_eq!(
            outcome_events(Host::Claude, &ran("a"), &pending, none)
                .unwrap()
                .len(),
            1
        );
        assert!(
            outcome_events(Host::Claude, &ran("z"), &pending, none)
                .unwrap()
                .is_empty()
        );
        let ended = Outcome::TurnEnded {
            session: "s".into(),
        };
        // Each pending call: denied by the host, and failed.
        assert_eq!(
            outcome_events(Host::Claude, &ended, &pending, none)
                .unwrap()
                .len(),
            4
        );
        // An unnamed run resolves only what the lookup names, and only if pending.
        let unnamed = Outcome::RanUnnamed {
            session: "s".into(),
            tool: "t".into(),
            input: Value::Null,
        };
        let names = |c: &'static str| move |_: &str, _: &Value| Ok::<_, ()>(Some(c.to_string()));
        assert_eq!(
            outcome_events(Host::Gemini, &unnamed, &pending, names("b"))
                .unwrap()
                .len(),
            1
        );
        assert!(
            outcome_events(Host::Gemini, &unnamed, &pending, names("q"))
                .unwrap()
                .is_empty()
        );
        assert!(
            outcome_events(Host::Gemini, &unnamed, &[], names("b"))
                .unwrap()
                .is_empty()
        );
    }
}
